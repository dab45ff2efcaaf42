"""Shared by the verify child: the static check (`verify --static`, and every machine without a driver): every
library the installed provider needs, resolved the way glibc's loader would (RPATH, LD_LIBRARY_PATH, RUNPATH,
the ldconfig cache, the default folders) and where `onnxruntime.preload_dlls()` would look, without loading any.

Standard library only (the ELF reader is elf.py); Python 3.8+; Linux.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import elf, libnames, verify_libraries, verify_package
else:  # run as a script: its folder is sys.path[0]
    import elf  # type: ignore[no-redef]
    import libnames  # type: ignore[no-redef]
    import verify_libraries  # type: ignore[no-redef]
    import verify_package  # type: ignore[no-redef]


def _ldconfig_cache() -> dict:
    """soname -> path from `ldconfig -p` (or the text file named by ORTPROV_VERIFY_LDCONFIG, for tests)."""
    text = ""
    fake = os.environ.get("ORTPROV_VERIFY_LDCONFIG")
    if fake:
        with open(fake, encoding="utf-8") as handle:
            text = handle.read()
    else:
        for exe in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
            try:
                text = subprocess.run([exe, "-p"], capture_output=True, text=True, timeout=10).stdout
                break
            except (OSError, subprocess.SubprocessError):
                continue
    cache = {}
    for line in text.splitlines():
        match = re.match(r"\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)", line)
        if (
            match
            and match.group(1) not in cache
            and ("x86-64" in match.group(2) or "64" in match.group(2) or os.uname().machine not in ("x86_64",))
        ):
            cache[match.group(1)] = match.group(3)
    return cache


def _default_dirs() -> list:
    override = os.environ.get("ORTPROV_VERIFY_DEFAULT_DIRS")
    if override is not None:
        return [d for d in override.split(":") if d]
    machine = os.uname().machine
    triplet = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}.get(machine, machine + "-linux-gnu")
    return [f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib64", "/usr/lib64", "/lib", "/usr/lib"]


def _expand_origin(entries: list, origin: str) -> list:
    return [e.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for e in entries]


def resolve_soname(soname: str, requester: elf.Dynamic, origin: str, cache: dict) -> tuple:
    """(path, how) the way glibc's loader finds `soname` for an object with `requester`'s RPATH/RUNPATH."""
    searches = []
    if not requester.runpath:
        searches += [(d, "rpath") for d in _expand_origin(requester.rpath, origin)]
    searches += [(d, "ld_library_path") for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    searches += [(d, "runpath") for d in _expand_origin(requester.runpath, origin)]
    for directory, how in searches:
        candidate = os.path.join(directory, soname)
        if is_elf(candidate):
            return candidate, how
    if soname in cache and is_elf(cache[soname]):
        return cache[soname], "ldconfig"
    for directory in _default_dirs():
        candidate = os.path.join(directory, soname)
        if is_elf(candidate):
            return candidate, "default_dir"
    return None, None


def is_elf(path: str) -> bool:
    """An existing ELF file (a file masked by an empty one, or a broken link, is not a library)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def _preload_candidates(site_dir: str, soname: str) -> str | None:
    """Where onnxruntime.preload_dlls() looks first: site-packages/nvidia/<pkg>/lib/<soname>."""
    nvidia = os.path.join(site_dir, "nvidia")
    if not os.path.isdir(nvidia):
        return None
    for package in sorted(os.listdir(nvidia)):
        candidate = os.path.join(nvidia, package, "lib", soname)
        if is_elf(candidate):
            return candidate
    return None


def static_check(
    provider: str, ort_dir: str, ort_module: Any | None, result: dict[str, Any], lazy_by_major: dict
) -> None:
    """Resolve every library the installed provider needs, without loading any of them."""
    capi = os.path.join(ort_dir, "capi")
    lib_name = verify_package.PROVIDER_LIBS[provider][0]
    lib_path = os.path.join(capi, lib_name)
    result["static"] = {"provider_library": lib_path, "libraries": [], "elf_error": None}
    if not os.path.isfile(lib_path):
        if any(f["kind"] == "cpu-package-only" for f in result["failures"]):
            return
        gpu_name = verify_package.GPU_PROVIDERS[provider]
        result["failures"].append(
            {
                "kind": "cpu-package-only",
                "message": f"{lib_name} is not in {capi}: the installed onnxruntime has no {gpu_name}",
            }
        )
        return
    try:
        info = elf.read_dynamic_file(lib_path)
    except (OSError, ValueError) as exc:
        result["static"]["elf_error"] = str(exc)
        result["failures"].append({"kind": "provider-library-unreadable", "message": f"cannot read {lib_path}: {exc}"})
        return
    result["static"]["runpath"] = info.runpath
    result["static"]["rpath"] = info.rpath
    cache = _ldconfig_cache()
    site_dir = os.path.dirname(ort_dir)
    mapped = {os.path.basename(lib["path"]): lib["path"] for lib in verify_libraries.loaded_libraries(every=True)}
    for soname, how_needed in _wanted(info, ort_module, result, lazy_by_major):
        family = libnames.library_family(soname)
        if family is None and not soname.startswith("libonnxruntime") and libnames.is_system_library(soname):
            continue
        if soname in mapped:  # already in this process: the loader hook (or preload_dlls) loaded it
            path, how = mapped[soname], "loaded"
        else:
            path, how = resolve_soname(soname, info, capi, cache)
        entry = _library(soname, family, how_needed, path, how, _preload_candidates(site_dir, soname))
        result["static"]["libraries"].append(entry)
        failure = _failure(entry, preload_available=bool(result.get("preload", {}).get("available")))
        if failure is not None:
            result["failures"].append(failure)


def _wanted(info: elf.Dynamic, ort_module: Any | None, result: dict[str, Any], lazy_by_major: dict) -> list:
    """(soname, "linked" | "lazy"): what the provider library links, then what it opens at run time: as
    onnxruntime itself says (its private `_get_nvidia_dll_paths`), else as ortprov's matrix says for the build's
    CUDA major (`lazy_by_major`)."""
    wanted = [(name, "linked") for name in info.needed]
    lazy = []
    paths_fn = getattr(ort_module, "_get_nvidia_dll_paths", None) if ort_module is not None else None
    if callable(paths_fn):
        try:
            lazy = [p[-1] for p in paths_fn(False, True, True)]
        except Exception as exc:  # noqa: BLE001 - private API, any failure just means "unknown"
            result["warnings"].append(f"onnxruntime._get_nvidia_dll_paths failed: {exc}")
    if not lazy:
        cuda_version = result.get("ort", {}).get("build_cuda_version")
        lazy = lazy_by_major.get((cuda_version or "").split(".")[0], [])
    for name in lazy:
        if name not in info.needed:
            wanted.append((name, "lazy"))
    return wanted


def _library(
    soname: str, family: str | None, how_needed: str, path: str | None, how: str | None, preload_path: str | None
) -> dict[str, Any]:
    """One library's entry in the static report: where the loader finds it (`path`, `how`), where preload_dlls()
    would (`preload_path`), and its status."""
    if path:
        status = "ok"
    elif family == "cuda":
        status = "driver-missing"  # libcuda.so.1 comes with the driver: expected on a machine without one
    elif preload_path:
        status = "preload-only"
    else:
        status = "missing"
    return {
        "soname": soname,
        "library": family,
        "needed": how_needed,
        "path": path,
        "via": how,
        "preload_path": preload_path,
        "source": verify_libraries.classify_source(path or preload_path or ""),
        "status": status,
    }


def _failure(entry: dict[str, Any], preload_available: bool) -> dict[str, Any] | None:
    """The failure a library's entry stands for: found by nobody, or by preload_dlls() only; None when found."""
    soname, family = entry["soname"], entry["library"]
    if entry["status"] == "missing":
        return {
            "kind": "library-missing",
            "library": family or soname,
            "message": f"{soname} ({entry['needed']}) is found neither by the loader nor by onnxruntime.preload_dlls()",
        }
    if entry["status"] == "preload-only":
        helps = (
            "only onnxruntime.preload_dlls() finds it"
            if preload_available
            else ("and this onnxruntime has no preload_dlls()")
        )
        return {
            "kind": "library-not-on-path",
            "library": family or soname,
            "message": f"{soname} is at {entry['preload_path']} but a plain program's loader does not search "
            f"there ({helps}; `ortprov apply` installs the loader hook)",
        }
    return None
