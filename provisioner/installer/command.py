"""Run one installer command: stream its output under -v, keep it otherwise; stop it with ortprov.

Each command runs in its own session (its own process group, away from the terminal's Ctrl-C) and, on Linux,
with a parent-death signal (prctl PR_SET_PDEATHSIG through ctypes): when ortprov dies, even by SIGKILL, the
installer is killed too. `pass_fds` hands it the apply lock's descriptor (installer/lock.py), so that an
installer that outlived ortprov anyway would still hold the lock.

`SignalGuard` is how an apply takes SIGINT, SIGTERM and SIGHUP, from its lock to its release: recorded
everywhere, acted on (every child killed, `Interrupted` raised once) only where the apply may stop
(docs/transaction.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner import childproc

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import FrameType

    from provisioner.installer.events import Watch

OUTPUT_LINES_SHOWN = 25
SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class Interrupted(Exception):  # noqa: N818 - it is an event, not an error
    """ortprov received SIGINT/SIGTERM/SIGHUP."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@dataclass(frozen=True)
class CommandResult:
    """How one command ended."""

    argv: tuple[str, ...]
    returncode: int
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class SignalGuard:
    """SIGINT/SIGTERM/SIGHUP during an apply (main thread only; elsewhere it does nothing).

    Signals are recorded, never acted on, except inside `interruptible()` blocks (planning, taking the
    snapshot, running a step, verifying), where the first one stops every child process ortprov runs and
    raises Interrupted. A signal recorded outside such a block is raised when the next one opens. `held()`
    closes an interruptible block for a moment (writing the journal). At most one Interrupted per apply: a
    second Ctrl-C is recorded, never raised into the restore that the first one started."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.raised = False
        self._open = 0
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for name in SIGNALS:
                if hasattr(signal, name):
                    signum = getattr(signal, name)
                    self._saved[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        self._saved.clear()

    @property
    def first(self) -> int | None:
        """The first signal received, or None."""
        return self.received[0] if self.received else None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if self._open and not self.raised:
            self._raise(signum)

    def _raise(self, signum: int) -> None:
        self.raised = True
        stop_children()
        raise Interrupted(signum)

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """A block a signal may cut short (Interrupted); one that came before it is raised on entry."""
        if self.received and not self.raised:
            self._raise(self.received[0])
        self._open += 1
        try:
            yield
        finally:
            self._open -= 1

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Inside an interruptible block, a part that must finish: signals wait, then the first one is raised."""
        saved, self._open = self._open, 0
        try:
            yield
        finally:
            self._open = saved
        if saved and self.received and not self.raised:
            self._raise(self.received[0])


def stop_children() -> None:
    """SIGKILL every child process of ortprov, with its process group when it leads one (an installer, a
    probe, the verify child: each runs in its own session). Linux (/proc); elsewhere nothing (under wine, Windows'
    Z:\\proc is the Linux host's, whose processes are not ortprov's children)."""
    if not sys.platform.startswith("linux"):
        return
    for pid in _children():
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)


def _children() -> list[int]:
    found = []
    for task in Path("/proc/self/task").glob("*/children"):
        with contextlib.suppress(OSError, ValueError):
            found += [int(pid) for pid in task.read_text().split()]
    return found


def run_command(
    argv: list[str],
    *,
    echo: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
    on_start: Callable[[int], None] | None = None,
    watch: Callable[[int], Watch | None] | None = None,
    timeout: float | None = None,
) -> CommandResult:
    """Run argv, merging stderr into stdout; echo each line when `echo` is given, else show them to the
    status line `watch(pid)` makes (the listener's: a terminal draws one). The command dies with ortprov (see
    the module); `pass_fds` are handed to it; `on_start(pid)` runs once it has started. An exception while it
    runs (Interrupted, KeyboardInterrupt) stops it first; past `timeout` seconds it is killed (returncode
    -SIGKILL)."""
    full_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    proc = childproc.start(argv, env=full_env, stderr=childproc.STDOUT, pass_fds=pass_fds, line_buffered=True)
    lines: list[str] = []
    status = watch(proc.pid) if echo is None and watch is not None else None
    timer = threading.Timer(timeout, childproc.kill_group, (proc,)) if timeout else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        if on_start is not None:
            on_start(proc.pid)
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if echo:
                echo(line.rstrip("\n"))
            elif status:
                status.saw(line)
        returncode = proc.wait()
    except BaseException:
        childproc.stop(proc)
        raise
    finally:
        if timer is not None:
            timer.cancel()
        if status:
            status.stop()
    return CommandResult(tuple(argv), returncode, "\n".join(lines))


# -- what went wrong, in words -------------------------------------------------------------------------

_CAUSES: tuple[tuple[str, str], ...] = (
    (
        r"do not match the hashes|hash mismatch|hashes? (?:do|does) not match",
        "a downloaded file did not match "
        "its expected hash (a corrupted download, or the index serves a different file)",
    ),
    (
        r"IncompleteRead|Connection broken|ConnectionResetError|ProtocolError|"
        r"end of file before message length|"
        r"error decoding response body|Failed to (?:download|fetch)|connection (?:closed|reset|refused)|"
        r"Max retries exceeded|timed? ?out|Network is unreachable|Name or service not known|"
        r"error sending request|Request failed",
        "the network failed during the download",
    ),
    (
        r"ResolutionImpossible|conflicting dependencies|No solution found|unsatisfiable|"
        r"Could not find a version that satisfies|No matching distribution|not found in the package registry|"
        r"no version of",
        "the requirements cannot be satisfied together (a resolver conflict, or a version the index does not have)",
    ),
    (r"No space left on device", "the disk is full"),
    (r"Permission denied", "permission denied writing to the environment"),
)


# a wheel that cannot be read (pip: zipfile's errors, "Wheel ... is invalid"; uv: "Bad CRC", "Failed to read from
# zip file", "invalid package format"): checked before the network's words (uv says "Failed to download" too)
_DAMAGED = re.compile(
    r"Bad CRC|CRC-32|CRC mismatch|BadZipFile|File is not a zip file|Wheel '[^']*' located at .* is invalid|"
    r"invalid package format|Failed to read from zip file|invalid zip|Failed to extract archive",
    re.IGNORECASE,
)
_WHEEL = re.compile(r"[\w.+-]+\.whl")


def diagnose(result: CommandResult) -> str:
    """One phrase saying why the command failed."""
    if result.returncode < 0:
        with contextlib.suppress(ValueError):
            return f"the installer was killed by {signal.Signals(-result.returncode).name}"
        return f"the installer was killed by signal {-result.returncode}"
    if result.returncode in (137, 143) and not result.output.strip():
        return "the installer was killed"
    if _DAMAGED.search(result.output):
        return damaged_wheel(result.output)
    for pattern, cause in _CAUSES:
        if re.search(pattern, result.output, flags=re.IGNORECASE):
            return cause
    return f"the installer exited with status {result.returncode}"


def damaged_wheel(output: str) -> str:
    """'the wheel NAME is corrupt: WHY', for an installer that could not read a wheel. The wheel is the one the
    output names that is damaged on disk (each local wheel it names is opened and checked), else the one it
    names last; the cause is what the archive says (a failed CRC-32 check: damaged bytes; no zip directory:
    truncated)."""
    import zipfile

    named = _WHEEL.findall(output)
    paths = [Path(word) for word in re.findall(r"(?:^|[\s'\"`(:])((?:/|\./)[^\s'\"`]+\.whl)", output, re.M)]
    for path in dict.fromkeys(paths):
        try:
            with zipfile.ZipFile(path) as archive:
                bad = archive.testzip()
            if bad is not None:
                return f"the wheel {path.name} is corrupt: its file {bad} fails its CRC-32 check (damaged bytes)"
        except zipfile.BadZipFile:
            return f"the wheel {path.name} is corrupt: it is not a complete zip archive (truncated?)"
        except (OSError, RuntimeError, ValueError, NotImplementedError):
            continue
    project = re.search(r"structure of `([^`]+)` \(v([^)]+)\) was invalid", output)
    name = named[-1] if named else (f"of {project.group(1)} {project.group(2)}" if project else "")
    if re.search(r"CRC", output):
        why = "a file in it fails its CRC-32 check (damaged bytes)"
    else:
        why = "it is not a complete zip archive (truncated?)"
    return f"the wheel {name} is corrupt: {why}" if name else f"a wheel is corrupt: {why}"


def tail(output: str, lines: int = OUTPUT_LINES_SHOWN) -> str:
    """The last lines of an installer's output."""
    return "\n".join(output.splitlines()[-lines:])
