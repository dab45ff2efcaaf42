"""Run one installer command: stream its output under -v, keep it otherwise, stop it cleanly when interrupted.

SIGINT, SIGTERM and SIGHUP sent to ortprov while a command runs become `Interrupted`: the child is terminated
(then killed) before the exception propagates, so the caller can restore the environment knowing that nothing
still writes to it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from provisioner.installer import progress

OUTPUT_LINES_SHOWN = 25


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


def _raise_interrupted(signum: int, frame: object) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """Inside the block, SIGINT/SIGTERM/SIGHUP raise Interrupted (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = ("SIGINT", "SIGTERM", "SIGHUP")
    saved = {}
    for name in names:
        if hasattr(signal, name):
            signum = getattr(signal, name)
            saved[signum] = signal.signal(signum, _raise_interrupted)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def signals_deferred() -> Iterator[list[int]]:
    """Inside the block (a restore), SIGINT/SIGTERM/SIGHUP are recorded, not acted on."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    saved = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signum = getattr(signal, name)
            saved[signum] = signal.signal(signum, lambda s, f: received.append(s))
    try:
        yield received
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(OSError):
        proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_command(
    argv: list[str], *, echo: Callable[[str], None] | None = None, env: dict[str, str] | None = None
) -> CommandResult:
    """Run argv, merging stderr into stdout; echo each line when `echo` is given. Raises Interrupted."""
    full_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=full_env,
        text=True,
        errors="replace",
        bufsize=1,
    )
    lines: list[str] = []
    status = progress.watch(proc.pid) if echo is None else None  # a status line on a terminal (progress.py)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if echo:
                echo(line.rstrip("\n"))
            elif status:
                status.saw(line)
        returncode = proc.wait()
    except BaseException:
        _stop(proc)
        raise
    finally:
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


def diagnose(result: CommandResult) -> str:
    """One phrase saying why the command failed."""
    if result.returncode < 0:
        with contextlib.suppress(ValueError):
            return f"the installer was killed by {signal.Signals(-result.returncode).name}"
        return f"the installer was killed by signal {-result.returncode}"
    if result.returncode in (137, 143) and not result.output.strip():
        return "the installer was killed"
    for pattern, cause in _CAUSES:
        if re.search(pattern, result.output, flags=re.IGNORECASE):
            return cause
    return f"the installer exited with status {result.returncode}"


def tail(output: str, lines: int = OUTPUT_LINES_SHOWN) -> str:
    """The last lines of an installer's output."""
    return "\n".join(output.splitlines()[-lines:])


def print_err(text: str) -> None:
    """A progress line on stderr (stdout stays clean for --json)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
