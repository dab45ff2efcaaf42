"""ortprov loader hook: a plain `import onnxruntime` finds the CUDA libraries of the NVIDIA pip wheels.

onnxruntime's CUDA provider has no RUNPATH to site-packages/nvidia/*: without a CUDA toolkit on the loader's
path, a plain program falls back to the CPU unless it calls onnxruntime.preload_dlls() or imports torch first.
`ortprov apply` installs this file as site-packages/_ortprov_loader/__init__.py (with its siblings elf.py and
libnames.py, and hook.json, beside it) and one line in site-packages/ortprov-loader.pth that imports it when
the interpreter starts.

At start-up it only puts a finder at the front of sys.meta_path: no file is read, nothing is loaded. The first
time the program imports onnxruntime, the finder steps out of sys.meta_path and prepares the libraries, then
lets the import go on as usual:
- Linux: the libraries the installed CUDA (and TensorRT) provider links (its DT_NEEDED entries) and those it
  opens later by name (hook.json, derived from ortprov's matrix for each CUDA major) are loaded from the
  wheel folders with RTLD_GLOBAL, each after the wheel libraries it needs itself. The provider and cuDNN then
  find them already loaded, as after onnxruntime.preload_dlls(). A library some other code already loaded
  is left alone, and a CPU build of onnxruntime makes the hook do nothing.
- Windows: the folders holding the wheels' DLLs go to the front of PATH (which LoadLibrary searches for the
  provider's dependencies) and to os.add_dll_directory.
- A plugin EP package (a top-level `onnxruntime_ep_*` module: NVIDIA's TensorRT-RTX EP), when the program
  imports it (Linux): its provider library links libraries its wheel bundles beside it under another file name
  (libcudart.so.13 is the file libcudart.so.13.4.36) and has no RUNPATH, so `register_execution_provider_library`
  finds them only where a CUDA toolkit happens to be on the loader path (and then loads that toolkit's runtime,
  not the one the EP was built with). The hook loads each bundled file whose SONAME the provider links, with
  RTLD_GLOBAL, unless that soname is mapped already (PLUGINS records it). It registers nothing: registering
  stays the program's call.

Standard library only, Python 3.8+. It must never break an interpreter: every failure is caught and kept in
STATUS, which `ortprov verify` and `ortprov doctor` read and report. It is always a package member (never run
as a script), and imports its siblings only when onnxruntime is imported: `from . import elf, libnames`.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

HOOK_VERSION = 1
PTH_FILE = "ortprov-loader.pth"  # in site-packages, beside this package
PACKAGE = "_ortprov_loader"  # the name this file is installed under
STATUS: "dict[str, Any]" = {
    "version": HOOK_VERSION,
    "state": "waiting",  # waiting | loaded | inert (nothing to do) | failed
    "reason": None,  # why inert
    "cuda_major": None,
    "loaded": [],  # paths loaded by the hook, in order
    "already_loaded": [],  # sonames something else had loaded before
    "not_in_wheels": [],  # sonames wanted but not in any NVIDIA wheel folder (the system may have them)
    "errors": [],  # "soname: why" for each library that failed to load
    "folders": [],
    "error": None,  # the hook itself failed
    "seconds": None,
}
PLUGINS: "dict[str, dict[str, Any]]" = {}  # plugin EP module -> {"loaded": [...], "errors": [...], ...}
PLUGIN_PREFIX = "onnxruntime_ep_"  # the top-level modules of onnxruntime's plugin EP packages
PROVIDERS = ("libonnxruntime_providers_cuda.so", "libonnxruntime_providers_tensorrt.so")
TENSORRT_PROVIDER = PROVIDERS[1]


class OnnxruntimeImportWatcher:
    """A sys.meta_path finder that finds nothing: it prepares the libraries when onnxruntime is first imported."""

    @staticmethod
    def find_spec(name: "str", path: "object" = None, target: "object" = None) -> None:
        if name == "onnxruntime" and STATUS["state"] == "waiting":
            run()
        elif name.startswith(PLUGIN_PREFIX) and "." not in name and name not in PLUGINS:
            prepare_plugin(name, sys.path)
        return None


def install() -> None:
    """Put the watcher at the front of sys.meta_path (once)."""
    if OnnxruntimeImportWatcher not in sys.meta_path:
        sys.meta_path.insert(0, OnnxruntimeImportWatcher)


def run(paths: "list[str] | None" = None) -> None:
    """Prepare the libraries once; any failure ends in STATUS, never in an exception."""
    import time

    started = time.perf_counter()
    STATUS["state"] = "running"
    try:
        if sys.platform.startswith("win"):
            prepare_windows(sys.path if paths is None else paths)
        else:
            prepare_linux(sys.path if paths is None else paths)
    except BaseException as exc:  # noqa: BLE001 - a hook must not break the program importing onnxruntime
        STATUS["state"] = "failed"
        STATUS["error"] = f"{type(exc).__name__}: {exc}"
    STATUS["seconds"] = round(time.perf_counter() - started, 4)


# ---------------------------------------------------------------- Linux


def prepare_linux(paths: "list[str]") -> None:
    import os

    package = find_package(paths, "onnxruntime")
    if package is None:
        return _inert("no onnxruntime package on sys.path")
    capi = os.path.join(package, "capi")
    providers = [os.path.join(capi, name) for name in PROVIDERS if os.path.isfile(os.path.join(capi, name))]
    if not providers:
        return _inert("the installed onnxruntime has no CUDA provider (a CPU build)")
    table = hook_table()
    index = wheel_libraries(paths, table.get("tensorrt_library_dirs"), table.get("tensorrt_folders") or [])
    if not index:
        return _inert("no NVIDIA wheel libraries in site-packages")
    STATUS["folders"] = sorted({os.path.dirname(path) for path in index.values()})
    from . import elf, libnames

    wanted = []
    for provider in providers:
        tensorrt_wheels = any(libnames.library_family(name) == "nvinfer" for name in index)
        if provider.endswith(TENSORRT_PROVIDER):
            if not tensorrt_wheels:
                continue  # TensorRT's libraries are not installed from wheels: nothing to prepare for it
            later = [n for n in table.get("tensorrt_opened_later") or [] if isinstance(n, str) and n in index]
            wanted += [n for n in [*elf.read_dynamic_file(provider).needed, *later] if n not in wanted]
            continue
        wanted += [name for name in elf.read_dynamic_file(provider).needed if name not in wanted]
    major = cuda_major(package, wanted)
    STATUS["cuda_major"] = major
    for name in opened_later(major):
        if name not in wanted:
            wanted.append(name)
    mapped = mapped_sonames()
    load_globally(load_order(wanted, index, mapped, lambda path: elf.read_dynamic_file(path).needed), STATUS)
    STATUS["already_loaded"] = sorted(name for name in wanted if name in mapped)
    STATUS["not_in_wheels"] = sorted(
        name for name in wanted if name not in index and name not in mapped and not libnames.is_driver_library(name)
    )
    STATUS["state"] = "loaded"


def _inert(reason: str) -> None:
    STATUS["state"] = "inert"
    STATUS["reason"] = reason


def find_package(paths: "list[str]", name: str) -> "str | None":
    """The folder of a top-level package as the import system would find it first on `paths`."""
    import os

    for entry in paths:
        folder = os.path.join(entry or os.getcwd(), name)
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            return folder
    return None


def wheel_libraries(
    paths: "list[str]", tensorrt_dirs: "list[str] | None" = None, tensorrt_folders: "list[str] | None" = None
) -> "dict[str, str]":
    """soname -> path of every shared library in the NVIDIA and TensorRT wheel folders (`tensorrt_dirs`, from
    ortprov's matrix: tensorrt_libs/, and tensorrt/ of TensorRT 8) and in a TensorRT folder outside
    site-packages (`tensorrt_folders`, --tensorrt-libraries DIR); the first path wins."""
    import os

    from . import libnames

    index: dict[str, str] = {}
    trt_dirs = tensorrt_dirs if tensorrt_dirs is not None else ["tensorrt_libs"]
    roots = [entry for entry in paths if entry and os.path.isdir(entry)]
    for folder in library_folders(roots, (("lib",), ("lib64",)), trt_dirs, tensorrt_folders or []):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for filename in names:
            if libnames.is_shared_library(filename):
                index.setdefault(filename, os.path.join(folder, filename))
    return index


def library_folders(
    roots: "list[str]", subs: "tuple[tuple[str, ...], ...]", tensorrt_dirs: "list[str]", tensorrt_folders: "list[str]"
) -> "list[str]":
    """The folders that may hold the wheels' libraries, in search order: under each root, nvidia/<package>/<sub>
    for each of `subs` and the TensorRT wheel folders (`tensorrt_dirs`); then a TensorRT folder outside
    site-packages (`tensorrt_folders`). Folders that do not exist are listed too: the callers look inside."""
    import os

    trt_dirs = [d for d in tensorrt_dirs if isinstance(d, str)]
    folders = []
    for root in roots:
        nvidia = os.path.join(root, "nvidia")
        if os.path.isdir(nvidia):
            for package in sorted(os.listdir(nvidia)):
                folders += [os.path.join(nvidia, package, *sub) for sub in subs]
        folders += [os.path.join(root, name) for name in trt_dirs]
    return folders + [f for f in tensorrt_folders if isinstance(f, str)]


def cuda_major(package: str, needed: "list[str]") -> "str | None":
    """The CUDA major the build was made for: its build_and_package_info.py, else its libcudart/libcublas."""
    import os
    import re

    from . import libnames

    try:
        with open(os.path.join(package, "capi", "build_and_package_info.py"), encoding="utf-8") as handle:
            found = re.search(r"^cuda_version\s*=\s*['\"](\d+)", handle.read(), re.M)
        if found:
            return found.group(1)
    except OSError:
        pass
    for name in needed:
        library = libnames.match_library(name)
        if library is not None and library[0] in ("cudart", "cublas"):
            return library[1]
    return None


def hook_table() -> "dict[str, Any]":
    """hook.json, written by ortprov from its matrix beside this file (empty when missing or unreadable)."""
    import json
    import os

    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook.json"), encoding="utf-8") as f:
            table = json.load(f)
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def opened_later(major: "str | None") -> "list[str]":
    """Sonames a build of this CUDA major may open by name (hook.json's table for that major)."""
    table = hook_table().get("sonames_by_cuda_major", {})
    if not isinstance(table, dict):
        return []
    return [name for name in table.get(str(major), []) if isinstance(name, str)]


def mapped_sonames() -> "set[str]":
    """File names of the shared objects this process has mapped (Linux /proc/self/maps)."""
    import os

    names = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                parts = line.split(None, 5)
                if len(parts) == 6 and "/" in parts[5]:
                    names.add(os.path.basename(parts[5].strip()))
    except OSError:
        pass
    return names


def load_globally(order: "list[tuple[str, str]]", status: "dict[str, Any]") -> None:
    """Load each (soname, path) with RTLD_GLOBAL, in order; the paths loaded and the errors go into `status`."""
    import ctypes
    import os

    for soname, path in order:
        try:
            ctypes.CDLL(path, mode=getattr(os, "RTLD_GLOBAL", 0x100))
            status["loaded"].append(path)
        except OSError as exc:
            status["errors"].append(f"{soname}: {exc}")


def load_order(
    wanted: "list[str]", index: "dict[str, str]", mapped: "set[str]", needed_of: "Callable[[str], list[str]]"
) -> "list[tuple[str, str]]":
    """(soname, path) to load, each after the wheel libraries it needs itself; skips what is already mapped.

    Pure: `index` is soname -> path of the wheel libraries, `needed_of(path)` their DT_NEEDED entries.
    """
    order = []
    seen = set()

    def visit(name: str, depth: int) -> None:
        if name in seen or name in mapped or name not in index or depth > 16:
            return
        seen.add(name)
        path = index[name]
        try:
            dependencies = needed_of(path)
        except (OSError, ValueError):
            dependencies = []
        for dependency in dependencies:
            visit(dependency, depth + 1)
        order.append((name, path))

    for name in wanted:
        visit(name, 0)
    return order


def prepare_plugin(module: str, paths: "list[str]") -> None:
    """Load the libraries a plugin EP's provider links that its wheel bundles under another file name (see the
    module's docstring); never raises (what failed is in PLUGINS[module])."""
    import os

    status: dict[str, Any] = {"loaded": [], "already_loaded": [], "errors": [], "library": None, "error": None}
    PLUGINS[module] = status
    if not sys.platform.startswith("linux"):
        status["error"] = "nothing to do off Linux"
        return
    try:
        folder = find_package(paths, module)
        if folder is None:
            return
        from . import elf

        names = sorted(os.listdir(folder))
        provider = next((n for n in names if "onnxruntime_providers_" in n and n.endswith(".so")), None)
        if provider is None:
            return
        status["library"] = os.path.join(folder, provider)
        needed = elf.read_dynamic_file(status["library"]).needed
        bundled: dict[str, str] = {}
        for name in names:
            path = os.path.join(folder, name)
            if name == provider or ".so" not in name or os.path.islink(path) or not os.path.isfile(path):
                continue
            try:
                soname = elf.read_dynamic_file(path).soname
            except (OSError, ValueError):
                continue
            if soname in needed and soname != name:
                bundled.setdefault(soname, path)
        mapped = mapped_sonames()
        wanted = [n for n in needed if n in bundled]
        load_globally(load_order(wanted, bundled, mapped, lambda p: elf.read_dynamic_file(p).needed), status)
        status["already_loaded"] = sorted(n for n in bundled if n in mapped)
    except BaseException as exc:  # noqa: BLE001 - a hook must not break the program importing the EP
        status["error"] = f"{type(exc).__name__}: {exc}"


# ---------------------------------------------------------------- Windows


def prepare_windows(paths: "list[str]") -> None:
    """Put the NVIDIA wheels' DLL folders, TensorRT's wheel folders (hook.json's `tensorrt_library_dirs`) and a
    TensorRT folder outside site-packages (`tensorrt_folders`) in front of the DLL search: Windows finds a
    provider's dependencies there, as it finds nothing in site-packages by itself."""
    import os

    table = hook_table()
    folders = library_folders(
        [entry or os.getcwd() for entry in paths],
        (("bin",), ("bin", "x86_64"), ("bin", "x64")),
        table.get("tensorrt_library_dirs") or ["tensorrt_libs"],
        table.get("tensorrt_folders") or [],
    )
    folders = [folder for folder in folders if _holds_dlls(folder)]
    if not folders:
        return _inert("no NVIDIA wheel DLL folders in site-packages")
    current = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join(folders + ([current] if current else []))
    for folder in folders:
        adder = getattr(os, "add_dll_directory", None)
        if adder is not None:
            adder(folder)
    STATUS["folders"] = folders
    STATUS["state"] = "loaded"


def _holds_dlls(folder: str) -> bool:
    import os

    try:
        return os.path.isdir(folder) and any(n.lower().endswith(".dll") for n in os.listdir(folder))
    except OSError:
        return False


if __name__ == PACKAGE:  # installed in site-packages (not when ortprov imports its own copy)
    install()
