"""The target interpreter: which one, and what it is. The one resolver of every command that has a target.

detect, plan --python PATH, apply, verify and doctor find the target here: `--python` (a path, a venv folder
or a command on PATH), else the active venv ($VIRTUAL_ENV), else the active conda env ($CONDA_PREFIX), else
the interpreter running ortprov. They read it with ONE program run in it, standalone/packages_probe.py: its
paths, prefix, venv / conda / PEP 668 state, every distribution, the onnxruntime flavours, torch, the NVIDIA
wheels and the loader hook. The program's first line says hello: a target that is not a working Python (no
such file, not executable, not a program, silent, hanging, too old) is one sentence (BadInput, exit 2) from
each command, within START_TIMEOUT seconds.

The probe runs with a timeout and never imports onnxruntime or torch, so a broken CUDA install cannot hang or
crash ortprov. `start` returns at once and `TargetProbe.result()` collects, so other probes run meanwhile.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner import childproc, standalone
from provisioner.errors import BadInput
from provisioner.probe.packages import (
    FilesReport,
    PackagesReport,
    exit_reason,
    files_report,
    parse_answer,
    report_from_child,
)
from provisioner.standalone.packages_probe import HELLO
from provisioner.validate import ascii_digits
from provisioner.versions import PYTHON_VERSION

if TYPE_CHECKING:
    from collections.abc import Mapping

PROGRAM = standalone.path("packages_probe.py")
START_TIMEOUT = 5.0  # seconds a working Python takes at most to start the probe and say hello
NOT_WORKING_HINT = "pass a Python 3.8 or newer (an interpreter, a venv folder, or a command such as python3.12)"


def find_interpreter(python: str | None, env: Mapping[str, str] | None = None) -> str:
    """The target interpreter's path: --python (a path, a command on PATH, a venv folder, or a version: 3.12 is
    python3.12 on PATH, as uv reads it), else the active venv ($VIRTUAL_ENV), else the active conda env
    ($CONDA_PREFIX), else the interpreter running ortprov. BadInput when --python names nothing that could be
    one."""
    env = os.environ if env is None else env
    if python is None:
        return active_interpreter(env) or sys.executable
    from provisioner.userfiles import expand_user

    path = expand_user(python, "--python")
    try:
        path.stat()
    except FileNotFoundError:
        pass  # a command on PATH, or nothing: below
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, a loop of links, no permission
        shown = repr(python if len(python) <= 80 else python[:60] + "...")
        reason = getattr(exc, "strerror", None) or exc
        raise BadInput(f"--python {shown} cannot be read: {reason}", hint=NOT_WORKING_HINT) from None
    if path.is_dir():
        inside = interpreter_in(path)
        if inside:
            return inside
        raise BadInput(
            f"--python {python!r} is a folder without a Python interpreter", hint="pass bin/python of a venv"
        )
    if path.exists() and not path.is_file():
        raise BadInput(f"--python {python!r} is not a file (a pipe, a device or a socket)", hint=NOT_WORKING_HINT)
    if path.is_file():
        if not os.access(path, os.X_OK):
            raise BadInput(f"--python {python!r} is not executable", hint="pass the path of a Python interpreter")
        return str(path.absolute())
    found = shutil.which(python, path=env.get("PATH")) if os.sep not in python else None
    if found:
        return found
    version = PYTHON_VERSION.match(ascii_digits(python).strip())
    if version:  # `--python 3.12`: that Python, as uv finds it: python3.12 on PATH
        command = f"python{version.group(1)}.{version.group(2)}{version.group(3)}"
        found = shutil.which(command, path=env.get("PATH"))
        if found:
            return found
        raise BadInput(
            f"--python {python}: no Python {python.strip()} here ({command} is not on PATH)",
            hint="pass the interpreter's path (--python /opt/py312/bin/python); `ortprov plan --python 3.12` "
            "plans for a version without one",
        )
    raise BadInput(f"--python {python!r} does not exist", hint="pass a path such as .venv/bin/python, or python3.12")


def active_interpreter(env: Mapping[str, str] | None = None) -> str | None:
    """The interpreter of the active venv, else of the active conda env; None when neither is active."""
    env = os.environ if env is None else env
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = env.get(variable)
        candidate = interpreter_in(Path(prefix)) if prefix else None
        if candidate:
            return candidate
    return None


def interpreter_in(prefix: Path) -> str | None:
    """The Python of a venv or conda env folder (bin/python, Scripts/python.exe), None when it has none."""
    for relative in ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe"):
        candidate = prefix / relative
        if candidate.is_file():
            return str(candidate)
    return None


def start(
    python: str | None, timeout: float = 20.0, env: Mapping[str, str] | None = None, *, label: str | None = None
) -> TargetProbe:
    """Find the target (BadInput for a --python that names nothing) and start the probe in it, without waiting.
    `label` names the target in the error sentence (default: `--python VALUE`, or the path found)."""
    interpreter = find_interpreter(python, env)
    if label is None:
        label = f"--python {python!r}" if python is not None else f"the target Python {interpreter!r}"
        if python is not None and PYTHON_VERSION.match(ascii_digits(python).strip()) and not os.path.lexists(python):
            label = f"--python {python} ({interpreter}, found on PATH)"
    return TargetProbe(interpreter, timeout, label)


def inspect(
    python: str | None, timeout: float = 20.0, env: Mapping[str, str] | None = None, *, label: str | None = None
) -> PackagesReport:
    """Find the target and read it; BadInput when it is not a working Python."""
    return start(python, timeout, env, label=label).result()


def prefix_of(python: str, timeout: float = 60.0, *, label: str | None = None) -> str:
    """Where `python` installs (sys.prefix), and nothing else: what `apply` needs to take the target's lock
    before it reads what the target holds. BadInput when it is not a working Python."""
    probe = TargetProbe(python, timeout, label or f"the target Python {python!r}", ("--where",))
    answer = probe.answer(strict=True)
    prefix = answer.get("prefix") if isinstance(answer, dict) else None
    if not isinstance(prefix, str) or not prefix:
        raise BadInput(
            f"{probe.label} is not a working Python interpreter: it did not say where it installs ({answer})",
            hint=NOT_WORKING_HINT,
        )
    return prefix


def check_files(python: str, timeout: float = 60.0) -> FilesReport:
    """Every distribution of `python`'s environment (its sys.path) whose RECORD lists files that are missing
    on disk: what an install, uninstall or restore must never leave behind. Never raises."""
    return files_report(start_check_files(python, timeout).answer(strict=False))


def start_check_files(python: str, timeout: float = 60.0) -> TargetProbe:
    """`check_files`, started: its answer (`files_report(probe.answer(strict=False))`) is read later, so the check
    runs while other work does (apply's prediction, which changes nothing)."""
    return TargetProbe(python, timeout, repr(python), ("--files",))


class TargetProbe:
    """The probe running in the target interpreter; `result()` waits for it (up to the timeout)."""

    def __init__(self, python: str, timeout: float, label: str, args: tuple[str, ...] = ()) -> None:
        self.python = python
        self.timeout = timeout
        self.label = label
        self._started = time.monotonic()
        self._said_hello = False
        self._spoke = threading.Event()  # the hello line came, or stdout closed without it
        self._stdout: list[str] = []
        self._stderr: list[str] = []
        self._readers: list[threading.Thread] = []
        self._error: str | None = None
        self._process: subprocess.Popen[str] | None = None
        try:
            # its own group (a timeout kills its children too), and it dies with ortprov
            self._process = childproc.start([python, str(PROGRAM), *args], env=_child_env())
        except OSError as exc:
            self._error = exc.strerror or str(exc)
            return
        for reader in (self._read_stdout, self._read_stderr):
            thread = threading.Thread(target=reader, daemon=True)
            thread.start()
            self._readers.append(thread)

    def result(self) -> PackagesReport:
        """The target's facts. BadInput when it is not a working Python; a probe that said hello and then
        failed (crashed, timed out, wrote garbage) becomes one error line in the report instead."""
        answer = self.answer(strict=True)
        if isinstance(answer, str):
            return PackagesReport(python=None, errors=(answer,), interpreter=self.python)
        return report_from_child(answer, self.python)

    def answer(self, strict: bool) -> dict[str, Any] | str:
        """The probe's JSON answer, or one error line. strict: a target that never said hello raises BadInput
        instead of giving a line."""
        process = self._process
        if process is None:
            return self._fail(
                f"could not be started ({self._error})", f"could not start {self.python}: {self._error}", strict
            )
        first = min(START_TIMEOUT, self.timeout)
        self._spoke.wait(max(0.0, self._started + first - time.monotonic()))
        if not self._said_hello:
            if not self._spoke.is_set():  # silent: it hangs, or it is no program that answers
                self._kill()
                why = f"did not answer within {first:g} s (killed)"
            else:  # stdout closed without a hello: it is ending
                self._wait(5.0)
                why = f"gave no answer ({exit_reason(''.join(self._stderr), process.returncode)})"
            return self._fail(why, f"{self.python} {why}", strict)
        if not self._wait(self._started + self.timeout - time.monotonic()):
            return f"package probe: {self.python} did not answer within {self.timeout:g} s (killed)"
        return parse_answer("".join(self._stdout), "".join(self._stderr), process.returncode, self.python)

    def _fail(self, why: str, line: str, strict: bool) -> str:
        if strict:
            raise BadInput(f"{self.label} is not a working Python interpreter: it {why}", hint=NOT_WORKING_HINT)
        return f"package probe: {line}"

    def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            if not self._said_hello and line.rstrip("\r\n") == HELLO:
                self._said_hello = True
                self._spoke.set()
            else:
                self._stdout.append(line)
        self._spoke.set()

    def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        self._stderr.append(self._process.stderr.read())

    def _wait(self, seconds: float) -> bool:
        """Wait for the probe to end and its output to be read; kill it after `seconds` (then False)."""
        assert self._process is not None
        try:
            self._process.wait(timeout=max(0.0, seconds))
        except subprocess.TimeoutExpired:
            self._kill()
            return False
        for thread in self._readers:
            thread.join(timeout=5)  # a grandchild that keeps the pipes open is not waited for longer
        return True

    def _kill(self) -> None:
        """Kill the probe and everything it started (its own session on POSIX), then reap it."""
        assert self._process is not None
        childproc.kill_group(self._process)
        self._process.wait()
        for thread in self._readers:
            thread.join(timeout=5)


def _child_env() -> dict[str, str]:
    env = childproc.python_env()
    env.pop("PYTHONSTARTUP", None)
    return env
