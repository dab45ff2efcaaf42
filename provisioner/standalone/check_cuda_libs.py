"""ortprov build-time check: every library the onnxruntime CUDA provider needs resolves in this image.

Written into the image by the ortprov Dockerfile recipe, with its siblings elf.py (the ELF reader) and
libnames.py (the CUDA library names) beside it, and run while the image is built, on a machine that may have
no GPU. It uses only the standard library (Python >= 3.8).

    check_cuda_libs.py [--tensorrt] SONAME ...     check; exit 1 and name what is missing
    check_cuda_libs.py --write-ld-conf FILE        list the NVIDIA pip-wheel library folders in FILE
    ... --plugin MODULE                            a plugin EP's package (onnxruntime_ep_nv_tensorrt_rtx): its
                                                   folder is listed too (ldconfig then makes the soname links of
                                                   what it bundles under longer names), and the check reads its
                                                   provider library instead of onnxruntime's CUDA provider

The sonames checked are those given (libraries_linked + libraries_lazy in the matrix for the planned build)
plus the DT_NEEDED entries read from the installed libonnxruntime_providers_cuda.so itself. Each is opened
with dlopen() by soname, as onnxruntime will open it (the RUNPATH of the provider first, then the search of
the loader: LD_LIBRARY_PATH, the ld.so cache, the default folders). The libraries of the NVIDIA driver
(libcuda.so.1, ...) come from the host at run time (NVIDIA Container Toolkit) and are skipped.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import site
import sys
import sysconfig

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import elf, libnames
else:  # run as a script: its folder is sys.path[0]
    import elf  # type: ignore[no-redef]
    import libnames  # type: ignore[no-redef]


def site_dirs() -> list[str]:
    """The site-packages folders of this interpreter."""
    found = []
    candidates = [sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib")]
    with contextlib.suppress(AttributeError):
        candidates += site.getsitepackages()
    for path in candidates:
        if path and os.path.isdir(path) and path not in found:
            found.append(path)
    return found


def nvidia_lib_dirs() -> list[str]:
    """Folders under site-packages holding NVIDIA (and TensorRT) shared libraries from pip wheels."""
    dirs = []
    for base in site_dirs():
        patterns = [os.path.join(base, "nvidia", "**", "lib*.so*"), os.path.join(base, "tensorrt_libs", "lib*.so*")]
        for pattern in patterns:
            for path in sorted(glob.glob(pattern, recursive=True)):
                folder = os.path.dirname(path)
                if folder not in dirs:
                    dirs.append(folder)
    return dirs


def plugin_folder(module: str) -> str | None:
    """The folder of a plugin EP's package in site-packages (not imported)."""
    for base in site_dirs():
        folder = os.path.join(base, module)
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            return folder
    return None


def plugin_library(module: str) -> str | None:
    """The provider library a plugin EP's package holds (libonnxruntime_providers_*.so), or None."""
    folder = plugin_folder(module)
    names = sorted(os.listdir(folder)) if folder else []
    found = [n for n in names if n.startswith("libonnxruntime_providers_") and n.endswith(".so")]
    return os.path.join(folder, found[0]) if folder and found else None


def elf_dynamic(path: str) -> tuple[list[str], list[str]]:
    """(DT_NEEDED names, RUNPATH and RPATH folders with $ORIGIN expanded) of an ELF shared object."""
    dynamic = elf.read_dynamic_file(path)
    origin = os.path.dirname(os.path.abspath(path))
    folders = [entry.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for entry in dynamic.runpath]
    folders += [entry.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for entry in dynamic.rpath]
    return dynamic.needed, folders


def onnxruntime_capi() -> str | None:
    """The onnxruntime/capi folder of the installed onnxruntime, or None."""
    import importlib.util

    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "capi")


def load(soname: str, search_first: list[str]) -> str | None:
    """dlopen `soname` (RUNPATH folders first, then the search of the loader); the error text, or None."""
    for folder in search_first:
        candidate = os.path.join(folder, soname)
        if os.path.exists(candidate):
            try:
                ctypes.CDLL(candidate, mode=ctypes.RTLD_GLOBAL)
                return None
            except OSError as exc:
                return str(exc)
    try:
        ctypes.CDLL(soname, mode=ctypes.RTLD_GLOBAL)
        return None
    except OSError as exc:
        return str(exc)


def check(sonames: list[str], tensorrt: bool, plugin: str | None = None) -> int:
    """Print one line per library; return the exit status."""
    problems = []
    capi = onnxruntime_capi()
    if capi is None:
        print("onnxruntime is not installed in " + sys.prefix, file=sys.stderr)
        return 1
    try:
        import onnxruntime

        version = getattr(onnxruntime, "__version__", "?")
        print(f"onnxruntime {version} imports")
    except Exception as exc:  # any failure to import is what this check exists to report
        problems.append(f"import onnxruntime failed: {exc}")
    providers = ["cuda"] + (["tensorrt"] if tensorrt else [])
    wanted = list(sonames)
    runpaths: list[str] = []
    libraries = [os.path.join(capi, f"libonnxruntime_providers_{provider}.so") for provider in providers]
    if plugin:
        libraries = [plugin_library(plugin) or os.path.join(plugin, "libonnxruntime_providers_<plugin>.so")]
        providers = [plugin]
    for index, library in enumerate(libraries):
        provider = providers[index]
        if not os.path.exists(library):
            name = os.path.basename(library)
            problems.append(
                f"{name} is missing: this onnxruntime has no {provider} provider "
                "(is the CPU package installed instead of onnxruntime-gpu?)"
            )
            continue
        try:
            needed, paths = elf_dynamic(library)
        except (OSError, ValueError) as exc:
            problems.append(f"cannot read {library}: {exc}")
            continue
        wanted += needed
        runpaths += paths + ([] if plugin else [capi])  # a plugin's library has no RUNPATH: the loader's search
    checked = 0
    for soname in dict.fromkeys(wanted):
        if libnames.is_driver_library(soname):
            print(f"skip     {soname} (from the NVIDIA driver at run time)")
            continue
        error = load(soname, runpaths)
        checked += 1
        if error is None:
            print(f"ok       {soname}")
        else:
            print(f"MISSING  {soname}: {error}")
            problems.append(f"{soname} does not resolve")
    if problems:
        print("ortprov check failed: " + "; ".join(problems), file=sys.stderr)
        folders = ", ".join(nvidia_lib_dirs()) or "none"
        print(
            f"hint: the CUDA provider would fail to load at run time; NVIDIA wheel folders found: {folders}",
            file=sys.stderr,
        )
        return 1
    print(f"ortprov check passed: {checked} libraries resolve without a GPU")
    return 0


def main(argv: list[str]) -> int:
    plugin = None
    if "--plugin" in argv and argv.index("--plugin") + 1 < len(argv):
        at = argv.index("--plugin")
        plugin, argv = argv[at + 1], argv[:at] + argv[at + 2 :]
    if argv[:1] == ["--write-ld-conf"] and len(argv) == 2:
        dirs = nvidia_lib_dirs()
        folder = plugin_folder(plugin) if plugin else None
        dirs += [folder] if folder and folder not in dirs else []
        with open(argv[1], "w") as file:
            file.write("".join(folder + "\n" for folder in dirs))
        listed = ", ".join(dirs) or "none"
        print(f"NVIDIA wheel library folders: {listed}")
        return 0
    tensorrt = "--tensorrt" in argv
    return check([arg for arg in argv if arg != "--tensorrt"], tensorrt, plugin)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
