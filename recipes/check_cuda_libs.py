"""ortprov build-time check: every library the onnxruntime CUDA provider needs resolves in this image.

Written into the image by the ortprov Dockerfile recipe and run while the image is built, on a machine that
may have no GPU. It uses only the standard library (Python >= 3.8).

    check_cuda_libs.py [--tensorrt] SONAME ...     check; exit 1 and name what is missing
    check_cuda_libs.py --write-ld-conf FILE        list the NVIDIA pip-wheel library folders in FILE

The sonames checked are those given (libraries_linked + libraries_lazy in the matrix for the planned build)
plus the DT_NEEDED entries read from the installed libonnxruntime_providers_cuda.so itself. Each is opened
with dlopen() by soname, as onnxruntime will open it (the RUNPATH of the provider first, then the search of
the loader: LD_LIBRARY_PATH, the ld.so cache, the default folders). The libraries of the NVIDIA driver
(libcuda.so.1, ...) come from the host at run time (NVIDIA Container Toolkit) and are skipped.
"""

import contextlib
import ctypes
import glob
import os
import site
import struct
import sys
import sysconfig

DRIVER_LIBS = frozenset({
    "libcuda.so", "libcuda.so.1", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1",
    "libnvcuvid.so.1", "libnvidia-encode.so.1", "libnvidia-opticalflow.so.1",
})
DT_NEEDED, DT_RPATH, DT_RUNPATH = 1, 15, 29
SHT_DYNAMIC = 6


def site_dirs():
    """The site-packages folders of this interpreter."""
    found = []
    candidates = [sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib")]
    with contextlib.suppress(AttributeError):
        candidates += site.getsitepackages()
    for path in candidates:
        if path and os.path.isdir(path) and path not in found:
            found.append(path)
    return found


def nvidia_lib_dirs():
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


def elf_dynamic(path):
    """(DT_NEEDED names, RUNPATH/RPATH folders) of a 64-bit little-endian ELF shared object."""
    with open(path, "rb") as file:
        data = file.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return [], []
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    needed, paths = [], []
    for section in sections:
        if section[1] != SHT_DYNAMIC:
            continue
        offset, size, link = section[4], section[5], section[6]
        strtab = sections[link][4]

        def string_at(index, strtab=strtab):
            end = data.index(b"\0", strtab + index)
            return data[strtab + index:end].decode("utf-8", "replace")

        for pos in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, pos)
            if tag == 0:
                break
            if tag == DT_NEEDED:
                needed.append(string_at(value))
            elif tag in (DT_RPATH, DT_RUNPATH):
                origin = os.path.dirname(os.path.abspath(path))
                for entry in string_at(value).split(":"):
                    if entry:
                        paths.append(entry.replace("$ORIGIN", origin).replace("${ORIGIN}", origin))
    return needed, paths


def onnxruntime_capi():
    """The onnxruntime/capi folder of the installed onnxruntime, or None."""
    import importlib.util

    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "capi")


def load(soname, search_first):
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


def check(sonames, tensorrt):
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
    runpaths = []
    for provider in providers:
        library = os.path.join(capi, f"libonnxruntime_providers_{provider}.so")
        if not os.path.exists(library):
            name = os.path.basename(library)
            problems.append(f"{name} is missing: this onnxruntime has no {provider} provider "
                            "(is the CPU package installed instead of onnxruntime-gpu?)")
            continue
        needed, paths = elf_dynamic(library)
        wanted += needed
        runpaths += paths + [capi]
    checked = 0
    for soname in dict.fromkeys(wanted):
        if soname in DRIVER_LIBS:
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
        print(f"hint: the CUDA provider would fail to load at run time; NVIDIA wheel folders found: {folders}",
              file=sys.stderr)
        return 1
    print(f"ortprov check passed: {checked} libraries resolve without a GPU")
    return 0


def main(argv):
    if argv[:1] == ["--write-ld-conf"] and len(argv) == 2:
        dirs = nvidia_lib_dirs()
        with open(argv[1], "w") as file:
            file.write("".join(folder + "\n" for folder in dirs))
        listed = ", ".join(dirs) or "none"
        print(f"NVIDIA wheel library folders: {listed}")
        return 0
    tensorrt = "--tensorrt" in argv
    return check([arg for arg in argv if arg != "--tensorrt"], tensorrt)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
