"""Shared by the verify child: the libraries mapped into this process, and where a library file comes from.

Standard library only; Python 3.8+.
"""

from __future__ import annotations

import os
import re
import sys

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import libnames
else:  # run as a script: its folder is sys.path[0]
    import libnames  # type: ignore[no-redef]


# loaded alongside a CUDA session but uninteresting as evidence
_IGNORED_NVIDIA = re.compile(r"^(libnvidia-(?!ml)|libnvdxgdmal|nvcuda64)", re.I)


def classify_source(path: str) -> str:
    """Where a library file comes from: pip|torch|cuda_toolkit|tensorrt|onnxruntime|driver|system|other."""
    norm = path.replace("\\", "/").lower()
    if "/site-packages/nvidia/" in norm or "/dist-packages/nvidia/" in norm:
        return "pip"
    if "/site-packages/torch/" in norm or "/dist-packages/torch/" in norm:
        return "torch"
    if "/site-packages/tensorrt" in norm or "/dist-packages/tensorrt" in norm:
        return "tensorrt"
    if "/site-packages/onnxruntime" in norm or "/dist-packages/onnxruntime" in norm:
        return "onnxruntime"
    if "/usr/local/cuda" in norm or "/nvidia gpu computing toolkit/cuda/" in norm or "/opt/cuda" in norm:
        return "cuda_toolkit"
    if "/usr/local/nvidia/" in norm or "/usr/lib/wsl/" in norm:
        return "driver"
    if norm.startswith(("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")) or "/windows/system32/" in norm:
        return "system"
    return "other"


def loaded_libraries(every: bool = False) -> list:
    """Every CUDA-family library mapped into this process, with where it came from (every=True: every
    shared object, with library None where it is not a CUDA one)."""
    paths = []
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and parts[5].strip().startswith("/"):
                        paths.append(parts[5].strip().replace(" (deleted)", ""))
        except OSError:
            return []
    elif sys.platform == "win32":
        paths = _windows_modules()
    seen = set()
    found = []
    for path in paths:
        if path in seen:
            continue
        seen.add(path)
        filename = os.path.basename(path)
        if _IGNORED_NVIDIA.match(filename):
            continue
        family = libnames.library_family(filename)
        if family is None and not every:
            continue
        found.append({"library": family, "filename": filename, "path": path, "source": classify_source(path)})
    return found


def _windows_modules() -> list:  # pragma: no cover - exercised on Windows only
    import ctypes
    from ctypes import wintypes

    psapi = getattr(ctypes, "WinDLL")("psapi")  # noqa: B009 - Windows only
    kernel32 = getattr(ctypes, "WinDLL")("kernel32")  # noqa: B009
    # 64-bit handles: without these declarations ctypes would pass and return 32-bit ints
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    psapi.EnumProcessModules.argtypes = [
        wintypes.HANDLE,
        ctypes.POINTER(wintypes.HMODULE),
        wintypes.DWORD,
        ctypes.POINTER(wintypes.DWORD),
    ]
    psapi.EnumProcessModules.restype = wintypes.BOOL
    psapi.GetModuleFileNameExW.argtypes = [wintypes.HANDLE, wintypes.HMODULE, wintypes.LPWSTR, wintypes.DWORD]
    psapi.GetModuleFileNameExW.restype = wintypes.DWORD
    process = kernel32.GetCurrentProcess()
    count = 1024
    while True:
        modules = (wintypes.HMODULE * count)()
        needed = wintypes.DWORD()
        first = ctypes.cast(modules, ctypes.POINTER(wintypes.HMODULE))
        if not psapi.EnumProcessModules(process, first, ctypes.sizeof(modules), ctypes.byref(needed)):
            return []
        if needed.value <= ctypes.sizeof(modules):
            break
        count = needed.value // ctypes.sizeof(wintypes.HMODULE) + 16
    result = []
    buffer = ctypes.create_unicode_buffer(1024)
    for i in range(needed.value // ctypes.sizeof(wintypes.HMODULE)):
        if psapi.GetModuleFileNameExW(process, modules[i], buffer, 1024):
            result.append(buffer.value)
    return result
