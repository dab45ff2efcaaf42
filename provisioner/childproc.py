"""The one way ortprov starts a child process: the target probe, the CUDA-order query, the verify and tune
children, the installers and the loader hook's byte-compilation.

Every child leads its own process group (a timeout or a signal stops it with everything it started: a CUDA
library's helper threads, pip's build subprocesses), gets the parent-death signal (it dies with ortprov, even a
killed one; on Windows a job object does that: provisioner/winjob.py), reads nothing from ortprov's stdin unless
asked, and speaks UTF-8 (undecodable bytes replaced).
The standalone programs answer with JSON messages (provisioner/standalone/protocol.py), read back here.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from provisioner.standalone import protocol

if TYPE_CHECKING:
    from collections.abc import Callable

PR_SET_PDEATHSIG = 1
GIST_CHARS = 200  # the most of a dead child's stderr that an error line carries
# the line that names a Python error: `ModuleNotFoundError: No module named 'numpy'`, `SyntaxError: ...`, `MemoryError`
_PYTHON_ERROR = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)(?::|$)")
PIPE = subprocess.PIPE
STDOUT = subprocess.STDOUT
DEVNULL = subprocess.DEVNULL

_prctl: Any = None


@dataclass(frozen=True)
class Ended:
    """A child that ran to its end, or to its timeout (`timed_out`: then it was killed with its group)."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float

    @property
    def signal(self) -> str | None:
        """The signal that killed it (SIGSEGV, SIGKILL, ...), None when it exited."""
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    def answer(self) -> dict | None:
        """The last JSON message the child sent (provisioner/standalone/protocol.py), None when it sent none."""
        return protocol.last(self.stdout)


def stderr_gist(stderr: str) -> str:
    """The line of a child's stderr that says why it ended without an answer: a Python error's own line (the last
    one: a traceback ends with it), else the first line (a shell's, a shim's or the loader's own message, whose
    later lines are advice: `pyenv: python3.12: command not found`, then what pyenv suggests); at most GIST_CHARS
    characters; "" when it wrote nothing."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if _PYTHON_ERROR.match(line)]
    gist = errors[-1] if errors else (lines[0] if lines else "")
    return gist if len(gist) <= GIST_CHARS else gist[: GIST_CHARS - 3] + "..."


def python_env(base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment of a Python child: `base` (default: ours) speaking UTF-8, unbuffered, plus `extra`."""
    env = dict(os.environ if base is None else base)
    env.update(PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def start(
    argv: list[str],
    *,
    env: dict[str, str] | None = None,
    stdin: int = DEVNULL,
    stderr: int = PIPE,
    pass_fds: tuple[int, ...] = (),
    line_buffered: bool = False,
) -> subprocess.Popen[str]:
    """Start `argv` as a child: its own process group, the parent-death signal, text in UTF-8. OSError when it
    cannot be started."""
    process = subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=PIPE,
        stderr=stderr,
        env=env,
        text=True,
        encoding="utf-8",
        errors="replace",
        bufsize=1 if line_buffered else -1,
        pass_fds=pass_fds,
        start_new_session=os.name == "posix",
        preexec_fn=die_with_parent(),
    )
    if os.name == "nt":  # no parent-death signal there: a job object ends the children with ortprov
        from provisioner import winjob

        winjob.join(process)
    return process


def run(argv: list[str], *, timeout: float, env: dict[str, str] | None = None) -> Ended:
    """Run `argv` to its end, or kill it with its group after `timeout` seconds. OSError when it cannot start."""
    started = time.monotonic()
    process = start(argv, env=env)
    timed_out = False
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(process)
        out, err = process.communicate()
    return Ended(process.returncode, out or "", err or "", timed_out, round(time.monotonic() - started, 3))


def die_with_parent() -> Callable[[], None] | None:
    """A preexec function that makes the child get SIGKILL when ortprov dies, even by SIGKILL (Linux:
    prctl(PR_SET_PDEATHSIG) through ctypes, resolved before the fork); None elsewhere."""
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


def signal_group(process: subprocess.Popen, signum: int) -> None:
    """Send `signum` to the child's process group (the child alone on Windows); a group already gone is fine."""
    try:
        if os.name == "posix":
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
    except OSError:
        pass


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL a child and everything in its group; on Windows, or when the group is gone, the child alone."""
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is None:
            process.kill()
        else:
            killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()


def stop(process: subprocess.Popen, grace: float = 15.0) -> None:
    """Stop a running child: SIGTERM to its group, then SIGKILL after `grace` seconds; reap it."""
    if process.poll() is not None:
        return
    signal_group(process, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.wait()
