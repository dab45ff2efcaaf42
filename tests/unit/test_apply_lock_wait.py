"""The apply lock as a dry run meets it: it waits for the holder, and says so once (tests/integration/
test_apply_faults.py runs the same with two real applies)."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from provisioner.installer.lock import LOCK_NAME, Busy, Holder, acquire

if TYPE_CHECKING:
    from pathlib import Path

pytest.importorskip("fcntl")

_HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.pwrite(fd, f"pid={os.getpid()} uvlock=0\\n".encode(), 0)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _holder(tmp_path: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(tmp_path / LOCK_NAME), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_waiting_dry_run_says_once_whom_it_waits_for(tmp_path: Path) -> None:
    proc = _holder(tmp_path, 1.0)
    told: list[Holder] = []
    started = time.monotonic()
    lock = acquire(str(tmp_path), busy_wait=30.0, on_wait=told.append)
    try:
        assert [h.pid for h in told] == [proc.pid]  # once, naming the holder
        assert time.monotonic() - started >= 0.5  # it waited for the holder to let go
    finally:
        lock.release()
        proc.wait(timeout=30)


def test_an_apply_does_not_wait_and_tells_nobody(tmp_path: Path) -> None:
    proc = _holder(tmp_path, 30.0)
    told: list[Holder] = []
    try:
        with pytest.raises(Busy):
            acquire(str(tmp_path), busy_wait=0.0, on_wait=told.append)
        assert told == []
    finally:
        proc.kill()
        proc.wait(timeout=30)
