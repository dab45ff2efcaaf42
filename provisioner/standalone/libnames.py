"""The names of CUDA-family libraries: ONE table of Linux sonames and Windows DLL names, and what derives from it.

Standard library only (Python 3.8+). ortprov reads it (detect's library search, doctor's log patterns, the
wheel facts), and so do the programs that run in other interpreters or images: verify_child.py,
packages_probe.py, loader_hook.py and check_cuda_libs.py.

- `match_library(name, windows)`: ('cudnn', '9') for exactly the file a loader asks for (libcudnn.so.9,
  cudnn64_9.dll), None for anything else (libcudnn.so.9.14.0, libcudnn_ops.so.9): what detect lists.
- `library_family(name)`: 'cudnn' for any library of the family (libcudnn_ops.so.9, cudnn_ops64_9.dll).
"""

from __future__ import annotations

import re

# family, its main library's Linux soname and Windows DLL names, and whether the family has more libraries
# named after it (libcudnn_ops.so.9, libnvrtc-builtins.so.13, libnvinfer_plugin.so.10). In a name, {N} is
# the major; on Windows a {N} of three or more digits carries the minor as its last digit (cudart64_110.dll:
# CUDA 11.0 and later 11.x) and {N}{M} is a major followed by one minor digit (nvrtc64_112_0.dll: 11.2).
FAMILIES = (
    ("cuda", ("libcuda.so.{N}",), ("nvcuda.dll",), False),
    ("cudart", ("libcudart.so.{N}",), ("cudart64_{N}.dll",), False),
    ("cublas", ("libcublas.so.{N}",), ("cublas64_{N}.dll",), False),
    ("cublasLt", ("libcublasLt.so.{N}",), ("cublasLt64_{N}.dll",), False),
    ("cufft", ("libcufft.so.{N}",), ("cufft64_{N}.dll",), False),
    ("curand", ("libcurand.so.{N}",), ("curand64_{N}.dll",), False),
    ("nvrtc", ("libnvrtc.so.{N}",), ("nvrtc64_{N}{M}_0.dll",), True),
    ("cudnn", ("libcudnn.so.{N}",), ("cudnn64_{N}.dll",), True),
    ("nvinfer", ("libnvinfer.so.{N}",), ("nvinfer_{N}.dll", "nvinfer.dll"), True),
    ("nvonnxparser", ("libnvonnxparser.so.{N}",), ("nvonnxparser_{N}.dll",), False),
    ("cusparse", ("libcusparse.so.{N}",), ("cusparse64_{N}.dll",), False),
    ("cusolver", ("libcusolver.so.{N}",), ("cusolver64_{N}.dll",), False),
    ("nvjitlink", ("libnvJitLink.so.{N}",), ("nvJitLink_{N}{M}_0.dll",), True),
    ("nvml", ("libnvidia-ml.so.{N}",), ("nvml.dll",), False),
    ("cupti", ("libcupti.so.{N}",), ("cupti64_{N}.dll",), False),
    ("zlibwapi", (), ("zlibwapi.dll",), False),
)
# the families detect looks for on the loader's path (facts.LibraryHit.library)
DETECTED = ("cuda", "cudart", "cublas", "cublasLt", "cufft", "curand", "nvrtc", "cudnn", "nvinfer")
# TensorRT's families: the libraries a TensorRT provider links or opens (libnvinfer_plugin.so.10 is nvinfer's)
TENSORRT_FAMILIES = ("nvinfer", "nvonnxparser")

# any shared library file: libfoo.so, libfoo.so.1.2, foo.dll
SHARED_LIBRARY = re.compile(r"(^lib.+\.so(\.\d+)*$)|(\.dll$)", re.IGNORECASE)
# the C and C++ runtime every Linux binary links: never evidence of a CUDA problem
SYSTEM_LIBRARY = re.compile(r"^(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|libz|ld-linux[\w-]*)\.so")
# what the NVIDIA driver installs (libcuda.so.1, libnvidia-ml.so.1, ...; nvcuda.dll): never from a wheel or an image
DRIVER_PREFIXES = ("libcuda.so", "libnvidia-", "libnvcuvid", "nvcuda.dll", "nvml.dll")
# DLLs of Windows itself (the API sets, the Universal CRT of Windows 10+, kernel32 ...)
WINDOWS_SYSTEM = re.compile(
    r"^(api-ms-win-|ext-ms-win-|kernel32|kernelbase|advapi32|user32|gdi32|shell32|ole32|oleaut32|ws2_32|bcrypt|ntdll|"
    r"shlwapi|setupapi|version|psapi|dbghelp|crypt32|secur32|winmm|cfgmgr32|ucrtbase)",
    re.IGNORECASE,
)
# the Microsoft Visual C++ Redistributable: no wheel ships it, Windows does not either
MSVC_RUNTIME = re.compile(r"^(msvcp140|vcruntime140|concrt140|vcomp140)", re.IGNORECASE)


def _stem(name: str) -> str:
    """'cudart' for libcudart.so.{N} and cudart64_{N}.dll, 'nvcuda' for nvcuda.dll."""
    if name.startswith("lib"):
        name = name[3:]
    return re.split(r"\.so|\.dll|64_|_\{", name)[0]


def _strict(template: str, windows: bool) -> str:
    """The exact-name pattern of a template: the major in group 'major'."""
    text = re.escape(template)
    text = text.replace(re.escape("{N}") + re.escape("{M}"), r"(?P<major>\d+)\d")
    if windows:
        return text.replace(re.escape("{N}"), r"(?P<major>\d+)")
    return text.replace(re.escape("{N}"), r"(?P<major>\d+)(?:\.\d+)?")  # CUDA 11's libcudart.so.11.0


def _family_pattern(linux: tuple, windows: tuple, more: bool) -> str:
    stems = sorted({_stem(name) for name in linux + windows}, key=len, reverse=True)
    return r"^(?:lib)?(?:{})(?:{})(?:64)?[._]".format("|".join(map(re.escape, stems)), r"[\w-]*?" if more else "")


_COMPILED: dict = {}


def _patterns(kind: str) -> tuple:
    """The compiled patterns of the table ('family', 'linux', 'windows'), made on first use: importing this
    module stays cheap for the programs that need no name (the probe, the hook at start-up)."""
    if not _COMPILED:
        _COMPILED["family"] = tuple(
            (family, re.compile(_family_pattern(linux, windows, more), re.I))
            for family, linux, windows, more in FAMILIES
        )
        for kind_, is_windows in (("linux", False), ("windows", True)):
            _COMPILED[kind_] = tuple(
                (family, re.compile(_strict(name, is_windows) + "$", re.I if is_windows else 0))
                for family, linux, windows, _ in FAMILIES
                if family in DETECTED
                for name in (windows if is_windows else linux)
            )
    return _COMPILED[kind]


def library_family(filename: str) -> str | None:
    """'cudnn' for libcudnn_ops.so.9, 'cublasLt' for cublasLt64_12.dll, None for anything else."""
    for family, pattern in _patterns("family"):
        if pattern.match(filename):
            return family
    return None


def complete_fragment(fragment: str) -> tuple[str, str] | None:
    """(family, whole name) for the end of a library's name whose start a garbled paste ate ("Lt64_12.dll" ->
    cublasLt, cublasLt64_12.dll): the one family whose name, with the fragment's major, ends with it; None when
    none or several do ("64_12.dll")."""
    hit = re.search(r"(\d{1,3})(?:_0)?\.dll$|\.so\.(\d{1,3})$", fragment, re.IGNORECASE)
    if hit is None or len(fragment) < 8:
        return None
    number = hit.group(1) or hit.group(2)
    found = []
    for family, linux, windows, _ in FAMILIES:
        for template in (*linux, *windows):
            name = template.replace("{N}{M}", number).replace("{N}", number)
            if name.lower().endswith(fragment.lower()) and name.lower() != fragment.lower():
                found.append((family, name))
    return found[0] if len(found) == 1 else None


def match_library(filename: str, windows: bool = False) -> tuple[str, str | None] | None:
    """('cudnn', '9') for libcudnn.so.9 or cudnn64_9.dll: the name a loader asks for, of a family detect lists;
    None for anything else (a fully versioned file, a dev symlink, another library of the family)."""
    for family, pattern in _patterns("windows" if windows else "linux"):
        found = pattern.match(filename)
        if found:
            major = found.groupdict().get("major")
            if windows and major is not None and len(major) >= 3:
                major = major[:-1]  # cudart64_110.dll: CUDA 11
            return family, major
    return None


def soname_of(filename: str) -> tuple[str, str] | None:
    """('cublasLt', '12') for libcublasLt.so.12, of any family of the table (libnvJitLink.so.13 too): the
    soname a Linux loader asks for; None for anything else."""
    for family, linux, _, _ in FAMILIES:
        for template in linux:
            found = re.match(_strict(template, False) + "$", filename)
            if found:
                return family, found.group("major")
    return None


def linux_soname(family: str, major: str) -> str | None:
    """'libcudnn.so.9' for ('cudnn', '9'): the family's main library; None for a family without one."""
    for name, linux, _, _ in FAMILIES:
        if name == family and linux:
            return linux[0].replace("{N}", major)
    return None


def library_filename(family: str, major: str, windows: bool) -> str | None:
    """The file a loader asks for: 'cudnn64_9.dll' (Windows) or 'libcudnn.so.9' for ('cudnn', '9'); None for a
    family without one, or whose Windows name carries a minor too (nvrtc64_130_0.dll)."""
    if not windows:
        return linux_soname(family, major)
    for name, _, dlls, _ in FAMILIES:
        if name == family and dlls and "{M}" not in dlls[0]:
            return dlls[0].replace("{N}", major)
    return None


def is_shared_library(filename: str) -> bool:
    """libfoo.so, libfoo.so.1.2 or foo.dll."""
    return bool(SHARED_LIBRARY.search(filename))


def is_system_library(filename: str) -> bool:
    """libc.so.6, libstdc++.so.6, ld-linux-x86-64.so.2 and the like."""
    return bool(SYSTEM_LIBRARY.match(filename))


def is_driver_library(filename: str) -> bool:
    """libcuda.so.1 (nvcuda.dll) and the other libraries that come with the NVIDIA driver."""
    return filename.lower().startswith(DRIVER_PREFIXES)


def is_windows_system_library(filename: str) -> bool:
    """KERNEL32.dll, api-ms-win-crt-runtime-l1-1-0.dll and the like: part of Windows."""
    return bool(WINDOWS_SYSTEM.match(filename))


def is_msvc_runtime(filename: str) -> bool:
    """MSVCP140.dll, VCRUNTIME140_1.dll ...: the Visual C++ Redistributable."""
    return bool(MSVC_RUNTIME.match(filename))
