"""Windows: every child ortprov starts is put in one job object that ends them all when ortprov's process ends
(JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), as the parent-death signal does on Linux: a killed `ortprov apply` leaves no
pip or uv changing the environment while the next apply restores it. Processes a child starts join the job too.
Never raises: where the job cannot be made or joined, the child runs as before (said by `join`'s False)."""

from __future__ import annotations

import ctypes
import os
from typing import Any

KILL_ON_JOB_CLOSE = 0x2000
EXTENDED_LIMIT_INFORMATION = 9  # JobObjectExtendedLimitInformation
_job: Any = None


class _Basic(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class _Extended(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _Basic),
        ("IoInfo", ctypes.c_uint64 * 6),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


def _kernel32() -> Any:
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.CreateJobObjectW.restype = ctypes.c_void_p
    kernel32.CreateJobObjectW.argtypes = (ctypes.c_void_p, ctypes.c_wchar_p)
    kernel32.SetInformationJobObject.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32)
    kernel32.AssignProcessToJobObject.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    return kernel32


def _the_job() -> Any:
    """The job of this ortprov process (made once; its handle closes when the process ends, ending the job)."""
    global _job
    if _job is None:
        kernel32 = _kernel32()
        job = kernel32.CreateJobObjectW(None, None)
        if not job:
            _job = False
            return _job
        info = _Extended()
        info.BasicLimitInformation.LimitFlags = KILL_ON_JOB_CLOSE
        ok = kernel32.SetInformationJobObject(job, EXTENDED_LIMIT_INFORMATION, ctypes.byref(info), ctypes.sizeof(info))
        _job = job if ok else False
    return _job


def join(process: Any) -> bool:
    """Put a started child (a subprocess.Popen) in the job; False where that is not possible (or not Windows)."""
    if os.name != "nt":
        return False
    try:
        job = _the_job()
        handle = getattr(process, "_handle", None)
        return bool(job and handle is not None and _kernel32().AssignProcessToJobObject(job, int(handle)))
    except (OSError, AttributeError, ValueError):
        return False
