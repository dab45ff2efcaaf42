"""Shared by the verify child on Windows: the static check (`verify --static`, and every machine without a
driver): every DLL the installed provider imports, with those it opens at run time (cuDNN, cuFFT and the cuDNN
sub-libraries cuDNN loads itself), resolved the way the Windows loader does for onnxruntime, without loading any.

onnxruntime loads a provider with LoadLibraryExW(path, LOAD_WITH_ALTERED_SEARCH_PATH): its imports are searched
in the folder of the DLL that imports them, the program's folder, System32, the Windows folder, the current
folder, then PATH (folders given to os.add_dll_directory are not searched in that mode). ortprov's loader hook
puts the NVIDIA wheels' DLL folders at the front of PATH when onnxruntime is imported; this check asks the hook
installed in the target for those folders (its own code: `_ortprov_loader.prepare_windows`), as a plain program's
import would, without importing onnxruntime. nvcuda.dll comes with the driver: on a machine without one its
absence is expected, and said.

Standard library only (the PE reader is pe.py); Python 3.8+; Windows.
"""

from __future__ import annotations

import os
import sys
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import libnames, pe, verify_libraries, verify_package
else:  # run as a script: its folder is sys.path[0]
    import libnames  # type: ignore[no-redef]
    import pe  # type: ignore[no-redef]
    import verify_libraries  # type: ignore[no-redef]
    import verify_package  # type: ignore[no-redef]

DRIVER_DLL = "nvcuda.dll"  # the driver's CUDA library: the CUDA runtime opens it by name


def hook_folders(paths: list) -> dict[str, Any] | None:
    """What ortprov's loader hook in the target does at `import onnxruntime` (its STATUS): run for real, so PATH
    is then what a plain program's is. None where no hook is installed."""
    try:
        import _ortprov_loader
    except ImportError:
        return None
    if _ortprov_loader.STATUS.get("state") == "waiting":
        _ortprov_loader.run(paths)
    return dict(_ortprov_loader.STATUS)


def search_folders(anchor: str) -> list[str]:
    """The folders the loader searches, in order: `anchor` first (the provider's folder for what it imports,
    LoadLibraryExW's LOAD_WITH_ALTERED_SEARCH_PATH; python.exe's for what is opened by name later), System32,
    the Windows folder, the current folder, then PATH."""
    windows = os.environ.get("SYSTEMROOT") or os.environ.get("WINDIR") or "C:\\Windows"
    folders = [anchor, os.path.join(windows, "System32"), windows, os.getcwd()]
    folders += [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    return folders


def find_dll(name: str, anchor: str) -> str | None:
    """Where the loader finds `name` (file names are case-insensitive on Windows); None: nowhere. A DLL this
    process has loaded already (python.exe's vcruntime140.dll) serves every later import of that name."""
    loaded = loaded_module(name)
    if loaded:
        return loaded
    for folder in search_folders(anchor):
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            return candidate
    return None


def loaded_module(name: str) -> str | None:
    """The file of the module `name` loaded in this process, None where none is (or off Windows)."""
    if sys.platform != "win32":
        return None
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.GetModuleHandleW.restype = ctypes.c_void_p
    handle = kernel32.GetModuleHandleW(ctypes.c_wchar_p(name))
    if not handle:
        return None
    buffer = ctypes.create_unicode_buffer(32768)
    kernel32.GetModuleFileNameW(ctypes.c_void_p(handle), buffer, len(buffer))
    return buffer.value or None


def imports_of(path: str) -> list[str]:
    """The DLLs a PE image imports (delay-loaded ones too: they are loaded on first use)."""
    with open(path, "rb") as handle:

        def read(offset: int, length: int) -> bytes:
            handle.seek(offset)
            return handle.read(length)

        imported, delayed = pe.read_imports(read)
    return imported + delayed


def opened_later(folders: list, build_cuda: str | None, lazy_by_major: dict) -> list[str]:
    """The DLLs a build opens by name at run time, found in the hook's folders: those of the families and majors
    the matrix lists for the build's CUDA major (`lazy_by_major`: cuDNN, cuFFT, NVRTC as Linux sonames; cuFFT's
    major is not CUDA's), with every cuDNN sub-library (cuDNN loads them itself) and zlibwapi (cuDNN 8's)."""
    wanted = set()
    for soname in lazy_by_major.get((build_cuda or "").split(".")[0], []):
        matched = libnames.match_library(soname)
        if matched is not None:
            wanted.add(matched)
    families = {family for family, _ in wanted}
    names: list[str] = []
    for folder in folders:
        try:
            files = sorted(os.listdir(folder))
        except OSError:
            continue
        for filename in files:
            family = libnames.library_family(filename)
            matched = libnames.match_library(filename, windows=True)
            sub_library = family in families and matched is None  # cudnn_ops64_9.dll, nvrtc-builtins64_130.dll
            if (family == "zlibwapi" or matched in wanted or sub_library) and filename not in names:
                names.append(filename)
    return names


def static_check_windows(provider: str, ort_dir: str, result: dict[str, Any], lazy_by_major: dict) -> None:
    """Resolve the provider DLL's whole import closure, and what it opens later, as the loader would: the NVIDIA
    DLLs the build opens by name, and the driver's nvcuda.dll, which the CUDA runtime in it opens at the first
    CUDA call."""
    capi = os.path.join(ort_dir, "capi")
    lib_name = verify_package.PROVIDER_LIBS[provider][1]
    lib_path = os.path.join(capi, lib_name)
    result["static"] = {"provider_library": lib_path, "libraries": [], "elf_error": None}
    if not os.path.isfile(lib_path):
        gpu_name = verify_package.GPU_PROVIDERS[provider]
        message = f"{lib_name} is not in {capi}: the installed onnxruntime has no {gpu_name}"
        result["failures"].append({"kind": "cpu-package-only", "message": message})
        return
    hook = hook_folders(list(sys.path))
    result["loader_hook"] = hook
    folders = list((hook or {}).get("folders") or [])
    wanted = [(name, "linked", capi) for name in _safe_imports(lib_path, result)]
    later = opened_later(folders, result["ort"].get("build_cuda_version"), lazy_by_major)
    program_dir = os.path.dirname(sys.executable)
    wanted += [(name, "lazy", program_dir) for name in [*later, DRIVER_DLL]]
    seen: set = set()
    while wanted:
        name, how_needed, anchor = wanted.pop(0)
        key = name.lower()
        if key in seen or len(seen) > 4096:
            continue
        seen.add(key)
        if libnames.is_windows_system_library(name) or key.startswith("python"):
            continue
        path = find_dll(name, anchor)
        entry = _entry(name, how_needed, path)
        result["static"]["libraries"].append(entry)
        failure = _failure(entry)
        if failure is not None:
            result["failures"].append(failure)
        if path is not None and entry["library"] != "cuda":
            wanted += [(dep, how_needed, anchor) for dep in _safe_imports(path, result)]


def _safe_imports(path: str, result: dict[str, Any]) -> list[str]:
    try:
        return imports_of(path)
    except (OSError, ValueError) as exc:
        result["warnings"].append(f"cannot read the imports of {path}: {exc}")
        return []


def _entry(name: str, how_needed: str, path: str | None) -> dict[str, Any]:
    family = libnames.library_family(name)
    if path:
        status = "ok"
    elif libnames.is_driver_library(name):
        status = "driver-missing"  # nvcuda.dll comes with the driver: expected on a machine without one
    else:
        status = "missing"
    return {
        "soname": name,
        "library": "cuda" if libnames.is_driver_library(name) and family is None else family,
        "needed": how_needed,
        "path": path,
        "via": "search" if path else None,
        "preload_path": None,
        "source": verify_libraries.classify_source(path or ""),
        "status": status,
    }


def _failure(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The failure a DLL's entry stands for: the Visual C++ runtime, or a CUDA-family DLL nobody finds."""
    if entry["status"] != "missing":
        return None
    name = entry["soname"]
    if libnames.is_msvc_runtime(name):
        return {
            "kind": "msvc-runtime-missing",
            "library": name,
            "message": f"{name} (the Microsoft Visual C++ Redistributable) is not found: the provider DLL cannot load",
        }
    return {
        "kind": "library-missing",
        "library": entry["library"] or name,
        "message": f"{name} ({entry['needed']}) is not found by the Windows loader (provider folder, System32, PATH)",
    }
