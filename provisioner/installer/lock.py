"""The apply lock: an OS lock (flock) on `<prefix>/.ortprov-apply.lock`, held from before anything of the target
is read until the apply is over, so that two applies never change one environment at once.

The kernel releases an flock when the last descriptor of it closes, so a killed apply never leaves a lock
behind (no stale PID can block). The lock's descriptor is handed to every installer apply runs (see
runner.run_command): a pip or uv that outlived ortprov would still hold it, and the next apply waits for it
(it is killed with ortprov, so that wait is short) or refuses with the PIDs, rather than restoring under a
running installer. The file holds `pid=N installer=M uvlock=0|1`, for that sentence and for the next apply
(whether uv's `.lock` was there before a killed apply). The holder removes the file on
release (while still holding the lock); whoever locks checks that the file it locked is still the one at the
path, and starts again otherwise. On Windows the lock is msvcrt's (LockFile) on one byte past the text, which stays
readable there; os.kill(pid, 0) would end a process on Windows, so `alive` asks OpenProcess instead.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from provisioner.errors import OrtprovError

if TYPE_CHECKING:
    from collections.abc import Callable

LOCK_NAME = ".ortprov-apply.lock"
DEAD_HOLDER_WAIT = 10.0  # seconds to wait for an installer whose ortprov is gone (it is being killed with it)
DRY_RUN_WAIT = 60.0  # seconds a dry run (it changes nothing) waits for a live apply or another dry run to finish
UV_LOCK = ".lock"  # uv's own lock file at the top of a venv it touches


try:
    import fcntl
except ImportError:  # Windows: no flock; msvcrt's byte-range lock instead
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt
except ImportError:  # not Windows
    msvcrt = None  # type: ignore[assignment]
_NOT_INHERITED = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOINHERIT", 0)  # Linux | Windows
# Windows locks are mandatory: the byte locked lies past the holder's text, which other processes read
_WINDOWS_LOCKED_BYTE = 1 << 20


def _try_lock(fd: int) -> None:
    """Take the lock without waiting; OSError (EAGAIN, EACCES or EDEADLK) when another process holds it."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    os.lseek(fd, _WINDOWS_LOCKED_BYTE, os.SEEK_SET)
    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError as exc:  # the CRT says EACCES (wine's: errno 0) for a byte another process has locked
        if exc.errno in (0, errno.EACCES, errno.EDEADLK):
            raise OSError(errno.EACCES, "locked by another process") from None
        raise


@dataclass(frozen=True)
class Holder:
    """Who holds a lock, as its file says: ortprov's PID and the installer it runs (None: not said)."""

    pid: int | None
    installer: int | None
    uv_lock: bool | None = None  # whether uv's `.lock` was there before that apply (None: not said)


class Busy(OrtprovError):
    """Another apply (or the installer of a killed one) holds the target."""


class ApplyLock:
    """The held lock of one target; `release()` removes the file and lets go."""

    def __init__(self, path: Path, fd: int | None, uv_lock_existed: bool) -> None:
        self.path = path
        self.fd = fd  # None: the file system has no locks (the apply runs unlocked)
        self.uv_lock_existed = uv_lock_existed
        self._write(None)

    @property
    def prefix(self) -> str:
        return str(self.path.parent)

    def note_installer(self, pid: int | None) -> None:
        """Record the installer now running (None: none)."""
        self._write(pid)

    def _write(self, installer: int | None) -> None:
        if self.fd is None:
            return
        text = f"pid={os.getpid()}" + (f" installer={installer}" if installer else "")
        text += f" uvlock={int(self.uv_lock_existed)}\n"
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)
            os.lseek(self.fd, 0, os.SEEK_SET)
            os.write(self.fd, text.encode())

    def release(self) -> None:
        """Remove uv's `.lock` when this apply brought it (and no uv holds it), remove the lock file, let go."""
        if not self.uv_lock_existed:
            remove_unheld(self.path.parent / UV_LOCK)
        if self.fd is None:
            return
        if fcntl is None:  # Windows: an open file cannot be removed; closing it lets go of the lock
            ours = _same_file(self.fd, self.path)
            os.close(self.fd)
            self.fd = None
            with contextlib.suppress(OSError):
                if ours:
                    self.path.unlink()
            return
        with contextlib.suppress(OSError):
            if _same_file(self.fd, self.path):
                self.path.unlink()
        os.close(self.fd)
        self.fd = None


def acquire(
    prefix: str,
    *,
    dead_holder_wait: float = DEAD_HOLDER_WAIT,
    busy_wait: float = 0.0,
    on_wait: Callable[[Holder], None] | None = None,
) -> ApplyLock:
    """Lock the target at `prefix`. Busy when another apply holds it (after `busy_wait` seconds: 0 for an apply,
    which must not queue behind another's changes unseen; a dry run waits, since it only reads, and `on_wait` is
    told once, with the holder, when that wait starts), or when the installer of a killed apply still holds it after
    `dead_holder_wait` seconds; OrtprovError when the lock cannot be created (a folder ortprov may not write to: it
    could not change the environment either)."""
    path = Path(prefix) / LOCK_NAME
    uv_lock = Path(prefix) / UV_LOCK
    if fcntl is None and msvcrt is None:
        return ApplyLock(path, None, uv_lock.exists())
    deadline: float | None = None
    busy_until = time.monotonic() + busy_wait
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOT_INHERITED, 0o644)
        except OSError as exc:
            raise OrtprovError(
                f"cannot change {prefix}: cannot create {path.name} there ({exc.strerror})",
                hint="run as a user who may write to the environment (its owner)",
            ) from None
        try:
            _try_lock(fd)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                return ApplyLock(path, None, uv_lock.exists())  # no locks on this file system
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EDEADLK):
                raise
            holder = read_holder(path)
            if holder.pid is not None and holder.pid != os.getpid() and alive(holder.pid):
                if time.monotonic() < busy_until:
                    if on_wait is not None:
                        on_wait(holder)
                        on_wait = None
                    time.sleep(0.1)
                    continue
                raise Busy(
                    f"another `ortprov apply` (pid {holder.pid}) is changing {prefix}",
                    hint="wait for it to finish, then run again",
                ) from None
            # its ortprov is gone (or has not written its PID yet): its installer is dying with it
            deadline = deadline if deadline is not None else time.monotonic() + dead_holder_wait
            if time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            raise Busy(_dead_holder_sentence(holder, prefix), hint=_dead_holder_hint(holder)) from None
        if _same_file(fd, path):
            # a file left by a killed apply says whether uv's `.lock` was there before it (its dry runs make one)
            before = read_holder(path).uv_lock
            return ApplyLock(path, fd, uv_lock.exists() if before is None else before)
        os.close(fd)  # the holder removed the file as we locked it: lock the new one


def _dead_holder_sentence(holder: Holder, prefix: str) -> str:
    if holder.pid is None:
        return f"another process holds the apply lock of {prefix}"
    if holder.installer is not None and alive(holder.installer):
        return (
            f"an `ortprov apply` (pid {holder.pid}) was killed, but its installer (pid {holder.installer}) still "
            f"runs and holds {prefix}"
        )
    return f"the apply lock of {prefix} is still held, although the `ortprov apply` (pid {holder.pid}) is gone"


def _dead_holder_hint(holder: Holder) -> str:
    stop = f" (or stop it: kill {holder.installer})" if holder.installer is not None else ""
    return f"wait for it to end{stop}, then run again: the next apply restores the environment"


def read_holder(path: Path) -> Holder:
    """The PIDs a lock file names."""
    try:
        words = dict(w.split("=", 1) for w in path.read_text(encoding="utf-8").split() if "=" in w)
    except (OSError, ValueError):
        return Holder(None, None)

    def number(key: str) -> int | None:
        value = words.get(key, "")
        return int(value) if value.isdigit() else None

    uv = number("uvlock")
    return Holder(number("pid"), number("installer"), None if uv is None else bool(uv))


def alive(pid: int) -> bool:
    """Whether a process with this PID exists (a zombie counts as gone)."""
    if os.name == "nt":  # os.kill(pid, 0) would end the process there (TerminateProcess)
        return _windows_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    return True


def remove_unheld(path: Path) -> bool:
    """Remove a lock file nobody holds (uv's `.lock`); True when removed."""
    if fcntl is None or not path.exists():
        return False
    try:
        fd = os.open(path, os.O_RDWR | _NOT_INHERITED)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if _same_file(fd, path):
            path.unlink()
            return True
    except OSError:
        pass
    finally:
        os.close(fd)
    return False


def _same_file(fd: int, path: Path) -> bool:
    try:
        mine, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (mine.st_ino, mine.st_dev) == (there.st_ino, there.st_dev)


def _windows_alive(pid: int) -> bool:
    """Whether a Windows process with this PID is still running (OpenProcess + GetExitCodeProcess)."""
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return ctypes.get_last_error() == 5  # type: ignore[attr-defined]  # ERROR_ACCESS_DENIED: it exists, owned by another user
    try:
        code = ctypes.c_ulong()
        return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)
