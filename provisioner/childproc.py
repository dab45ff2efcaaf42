"""Stopping the child processes that read the host or run CUDA code (probe, verify, the CUDA driver query)."""

from __future__ import annotations

import os
import signal
import subprocess


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
