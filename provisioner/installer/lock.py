"""The apply lock: an OS lock (flock) on `<prefix>/.ortprov-apply.lock`, held from before anything of the target
is read until the apply is over, so that two applies never change one environment at once.

The kernel releases an flock when the last descriptor of it closes, so a killed apply never leaves a lock
behind (no stale PID can block). The lock's descriptor is handed to every installer apply runs (see
runner.run_command): a pip or uv that outlived ortprov would still hold it, and the next apply waits for it
(it is killed with ortprov, so that wait is short) or refuses with the PIDs, rather than restoring under a
running installer. The file holds `pid=N installer=M uvlock=0|1`, for that sentence and for the next apply
(whether uv's `.lock` was there before a killed apply). The holder removes the file on
release (while still holding the lock); whoever locks checks that the file it locked is still the one at the
path, and starts again otherwise.
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
except ImportError:  # Windows: no flock; apply runs unlocked there
    fcntl = None  # type: ignore[assignment]


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
            os.pwrite(self.fd, text.encode(), 0)

    def release(self) -> None:
        """Remove uv's `.lock` when this apply brought it (and no uv holds it), remove the lock file, let go."""
        if not self.uv_lock_existed:
            remove_unheld(self.path.parent / UV_LOCK)
        if self.fd is None:
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
    if fcntl is None:
        return ApplyLock(path, None, uv_lock.exists())
    deadline: float | None = None
    busy_until = time.monotonic() + busy_wait
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OrtprovError(
                f"cannot change {prefix}: cannot create {path.name} there ({exc.strerror})",
                hint="run as a user who may write to the environment (its owner)",
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                return ApplyLock(path, None, uv_lock.exists())  # no locks on this file system
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
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
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
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
