"""Child processes that must not outlive ortprov: the parent-death signal every child gets (the target probe,
the installers, the loader hook's byte-compilation, the verify child), and stopping one with its group."""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable

PR_SET_PDEATHSIG = 1

_prctl: Any = None


def die_with_parent() -> Callable[[], None] | None:
    """A preexec function that makes the child get SIGKILL when ortprov dies, even by SIGKILL (Linux:
    prctl(PR_SET_PDEATHSIG) through ctypes, resolved before the fork); None elsewhere. Give it with
    start_new_session=True: the child then also leads its own group, which kill_group stops whole."""
    global _prctl
    if not sys.platform.startswith("linux"):
        return None
    if _prctl is None:
        try:
            import ctypes

            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            _prctl = False
    if not _prctl:
        return None
    prctl, parent = _prctl, os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # ortprov died before the signal was armed
            os._exit(137)

    return arm


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL a child started with start_new_session=True and everything in its session (a CUDA library's
    helper threads or processes included); on Windows, or when the group is gone, the child alone."""
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is None:
            process.kill()
        else:
            killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
