"""Issue 14: no input makes ortprov print a traceback. Every command (from cli.COMMANDS), every declared option
given values it must refuse (read from the declarations in commands/options.py), host files mutated from the real
ones in tests/hosts (wrong types, binary, huge, deep nesting, missing keys, unknown schema), and stdin/stdout
states (closed, /dev/full, a terminal): each ends in at most one `error:` line, never a traceback, and bad input
exits 2.

Most cases run in this process through the same entry point as the console script (`cli.main`): a parse and a
check, milliseconds each. The stdin/stdout states need a real process and run as one (`run_ortprov`, a pty).
Nothing here reaches the network or installs anything: this machine has no NVIDIA driver, so a planning command
that gets past its checks stops with exit 3 before it acts.
"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from provisioner import cli
from provisioner.commands.options import OPTIONS, PLANNING, Declared
from tests.support.cli import REPO, cli_env, ortprov_argv, run_ortprov

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

HOSTS = REPO / "tests" / "hosts"
SEED_HOSTS = ("h100-driver580.json", "cpu-dev-machine.json")
LOG = (
    "onnxruntime ... Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: cannot open"
)
ODD = ("", "\udcff-surrogate", "x" * 4096, "/dev/null", "/proc/self/mem", "-")
# what makes each command's run cheap and local: a log for doctor, no GPU session for verify, a dead index
CONTEXT: dict[str, tuple[str, ...]] = {
    "download": ("--dest", "{tmp}/wheels"),
    "verify": ("--static",),
    "doctor": ("--log", "{tmp}/error.log"),
    "matrix update": ("--index-url", "http://127.0.0.1:9/simple/", "--retries", "0", "--timeout", "2"),
    "tune": ("{tmp}/binary",),  # its MODEL: not a model, refused before anything runs
}
# what a positional argument (tune's MODEL) must refuse
NOT_A_MODEL = ("", "{tmp}/a-folder", "{tmp}/binary", "{tmp}/error.log", "/dev/null", "{tmp}/no-such.onnx", "x" * 4096)


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case runs in a folder of its own: a relative --venv or --dest is created there, not in the repo."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a log, a file, a folder and a binary file."""
    tmp = tmp_path_factory.mktemp("fuzz")
    (tmp / "error.log").write_text(LOG + "\n", encoding="utf-8")
    (tmp / "a-file").write_text("not a folder\n", encoding="utf-8")
    (tmp / "a-folder").mkdir()
    (tmp / "binary").write_bytes(bytes(range(256)) * 64)
    return tmp


def run_in_process(*args: str, stdin_text: str = "", stdin_bytes: bytes | None = None) -> tuple[int, str, str]:
    """`ortprov ARGS` through cli.main in this process: (exit code, stdout, stderr). An exception other than
    SystemExit propagates: that is the traceback a user would have seen."""
    saved = sys.stdin, sys.stdout, sys.stderr
    streams = [
        io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors=errors)
        for data, errors in (
            (stdin_text.encode() if stdin_bytes is None else stdin_bytes, "strict"),
            (b"", "strict"),
            (b"", "backslashreplace"),
        )
    ]  # stdout strict and stderr backslashreplace, as Python's own in a UTF-8 locale
    sys.stdin, sys.stdout, sys.stderr = streams  # text over bytes, as a process's are (`.buffer` included)
    try:
        cli.main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    written = []
    for stream in streams[1:]:
        stream.flush()
        written.append(stream.buffer.getvalue().decode("utf-8", "replace"))  # type: ignore[attr-defined]
    return code, written[0], written[1]


def assert_one_error(code: int, stderr: str, bad: bool, case: str) -> None:
    """No traceback; at most one error line (exactly one, and exit 2, for bad input); no bug (exit 70)."""
    # shown with surrogates escaped: a failure report that holds one crashes an xdist worker
    case, stderr = (text.encode("utf-8", "backslashreplace").decode() for text in (case[:300], stderr[:3000]))
    assert "Traceback" not in stderr, f"{case}\n{stderr}"
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) <= 1, f"{case}\n{stderr}"
    assert code != 70, f"{case}\n{stderr}"
    if bad:
        assert (code, len(errors)) == (2, 1), f"{case}: exit {code}\n{stderr}"
    else:
        assert code in (0, 1, 2, 3), f"{case}: exit {code}\n{stderr}"
        assert code in (0, 1) or errors, f"{case}: exit {code} without an error line\n{stderr}"


# -- every command, every declared option, values it must refuse --------------------------------------------


def commands() -> Iterator[tuple[str, Any]]:
    """(`name` or `group sub`, its click command) for every command of cli.COMMANDS, registered for real."""
    import typer

    for name in cli.COMMANDS:
        command = typer.main.get_command(cli.make_app([name])).commands[name]  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None)
        if subcommands:
            yield from ((f"{name} {sub}", each) for sub, each in subcommands.items())
        else:
            yield name, command


FOLDERS = ("DIR",)  # a folder the command creates or fills: --venv, --dest, --wheelhouse
PATHS = ("PATH", "FILE", "FILE|-", "DIR|URL")  # names a file, a folder or an interpreter: not a choice


def values_for(declared: Declared) -> Iterator[tuple[str, bool]]:
    """(value, must be refused) for an option, by its declared type, placeholder and check."""
    kind = str(declared.annotation)
    if declared.annotation is bool:
        return
    if "float" in kind:
        yield from ((v, True) for v in ("abc", "-1", "0", "nan", "1e999x", "inf", "1e308", "99999999", "-inf"))
    elif "int" in kind:
        yield from ((v, True) for v in ("abc", "-5", "1.5", "9" * 5000, "99999999999"))
    elif declared.metavar in FOLDERS:
        yield from ((v, False) for v in ODD if v)
        yield from ((v, True) for v in ("", "{tmp}/a-file/below", "/proc/no-such/x", "/" + "y" * 300, "\udcff"))
    elif declared.metavar in PATHS:
        yield from ((v, False) for v in ODD if v)
        yield from ((v, True) for v in ("", "--json", "-v"))
    elif declared.check is not None:
        yield from ((v, True) for v in ("bogus-value", "", "\udcff", "1..2", "--json", "-v"))
    else:
        yield from ((v, False) for v in ODD)
        yield from ((v, True) for v in ("--json", "-q"))


def option_cases() -> Iterator[Any]:
    for name, command in commands():
        declared_by_name = {**PLANNING, **OPTIONS}
        for param in command.params:
            declared = declared_by_name.get(param.name)
            if declared is None or getattr(param, "hidden", False) or declared.argument:
                continue  # positional arguments: test_a_positional_argument_that_is_not_one
            flag = declared.flags[-1]
            if declared.annotation is bool:
                yield pytest.param(name, (f"{flag}=maybe",), True, id=f"{name} {flag}=maybe")
            if param.name == "host":
                continue  # the host-file cases below
            for index, (value, bad) in enumerate(values_for(declared)):
                yield pytest.param(name, (flag, value), bad, id=f"{name} {flag} #{index}")
        yield pytest.param(name, ("--no-such-option",), True, id=f"{name} --no-such-option")
        yield pytest.param(name, ("stray-argument",), True, id=f"{name} stray-argument")
    yield pytest.param("plna", (), True, id="a typo of a command")
    yield pytest.param("matrix bogus", (), True, id="a typo of a subcommand")


@pytest.mark.parametrize(("command", "given", "bad"), list(option_cases()))
def test_a_declared_option_with_a_bad_value(place: Path, command: str, given: tuple[str, ...], bad: bool) -> None:
    context = tuple(arg.format(tmp=place) for arg in CONTEXT.get(command, ()))
    args = (*command.split(), *context, *(arg.format(tmp=place) for arg in given))
    code, _, stderr = run_in_process(*args)
    assert_one_error(code, stderr, bad, " ".join(args))


def argument_cases() -> Iterator[Any]:
    for name, command in commands():
        declared_by_name = {**PLANNING, **OPTIONS}
        for param in command.params:
            declared = declared_by_name.get(param.name)
            if declared is not None and declared.argument:
                for index, value in enumerate(NOT_A_MODEL):
                    yield pytest.param(name, value, id=f"{name} {declared.metavar} #{index}")


@pytest.mark.parametrize(("command", "value"), list(argument_cases()))
def test_a_positional_argument_that_is_not_one(place: Path, command: str, value: str) -> None:
    code, _, stderr = run_in_process(*command.split(), value.format(tmp=place))
    assert_one_error(code, stderr, True, f"{command} {value[:80]}")


# -- host files: the real ones, mutated ---------------------------------------------------------------------


def leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, value) of every value in a JSON document, containers included (the root excepted)."""
    if path:
        yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from leaves(value, (*path, index))


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of the document with the value at `path` replaced (or, for `...`, removed)."""
    copy = json.loads(json.dumps(document))
    node = copy
    for key in path[:-1]:
        node = node[key]
    if value is ...:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return copy


def wrong_type(value: Any) -> Any:
    """A JSON value of another type than `value` (never null: null may be a field's default)."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "many"
    if isinstance(value, str):
        return {"a": 1}
    if isinstance(value, list):
        return {"a": 1}
    return [1, 2]


def host_cases() -> Iterator[Any]:
    for seed in SEED_HOSTS:
        document = json.loads((HOSTS / seed).read_text(encoding="utf-8"))
        for path, value in leaves(document):
            where = ".".join(map(str, path))
            if path != ("schema_version",):
                yield pytest.param(seed, path, wrong_type(value), True, id=f"{seed} {where}: wrong type")
                yield pytest.param(seed, path, ..., False, id=f"{seed} {where}: missing")
        for key, value, bad in (
            (("schema_version",), 99, True),
            (("schema_version",), "1", True),
            (("driver", "version"), "banana", True),
            (("python", "version"), "three", True),
            (("platform", "glibc"), "-1", True),
            (("gpus",), [{"name": "x", "compute_capability": "nine"}], True),
        ):
            yield pytest.param(seed, key, value, bad, id=f"{seed} {'.'.join(map(str, key))}={value!r}")


@pytest.mark.parametrize(("seed", "path", "value", "bad"), list(host_cases()))
def test_a_mutated_host_file(tmp_path: Path, seed: str, path: tuple[Any, ...], value: Any, bad: bool) -> None:
    document = json.loads((HOSTS / seed).read_text(encoding="utf-8"))
    file = tmp_path / "host.json"
    file.write_text(json.dumps(replaced(document, path, value)), encoding="utf-8")
    code, _, stderr = run_in_process("plan", "--host", str(file))
    assert_one_error(code, stderr, bad, f"plan --host {seed} with {path} = {value!r}")


WHOLE_FILES: dict[str, bytes] = {
    "binary": bytes(range(256)) * 16,
    "empty": b"",
    "null": b"null",
    "a list": b"[]",
    "an empty object": b"{}",
    "a number": b"42",
    "unknown schema": b'{"schema_version": 2, "something": "else"}',
    "deep nesting": b"[" * 200_000 + b"]" * 200_000,
    "deep objects": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "NaN": b'{"schema_version": NaN}',
    "UTF-16": json.dumps({"schema_version": 1}).encode("utf-16"),
    "truncated": (HOSTS / "h100-driver580.json").read_bytes()[:500],
    "huge": b'{"schema_version": 1, "label": "' + b"x" * (9 * 2**20) + b'"}',
}


@pytest.mark.parametrize("kind", list(WHOLE_FILES))
def test_a_host_file_that_is_not_one(tmp_path: Path, kind: str) -> None:
    file = tmp_path / "host.json"
    file.write_bytes(WHOLE_FILES[kind])
    code, _, stderr = run_in_process("plan", "--host", str(file))
    assert_one_error(code, stderr, True, f"plan --host ({kind})")


def test_a_host_file_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """UTF-8 with a BOM (Notepad's "UTF-8 with BOM") is UTF-8: read, not refused."""
    file = tmp_path / "host.json"
    file.write_bytes(b"\xef\xbb\xbf" + (HOSTS / "h100-driver580.json").read_bytes())
    code, stdout, stderr = run_in_process("plan", "--host", str(file))
    assert code == 0 and "onnxruntime-gpu" in stdout, stderr


@pytest.mark.parametrize("path", ["{tmp}/a-folder", "{tmp}/no-such.json", "/dev/null", "/proc/self/mem", ""])
def test_a_host_path_that_is_no_file(place: Path, path: str) -> None:
    code, _, stderr = run_in_process("plan", "--host", path.format(tmp=place))
    assert_one_error(code, stderr, True, f"plan --host {path}")


# -- stdin and stdout states: real processes ----------------------------------------------------------------

CHEAP: dict[str, tuple[str, ...]] = {
    "detect": ("detect",),
    "plan": ("plan", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12"),
    "dockerfile": ("dockerfile", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12"),
    "apply": ("apply", "--dry-run"),
    "download": ("download", "--dest", "{tmp}/wheels"),
    "verify": ("verify", "--static"),
    "doctor": ("doctor", "--log", "{tmp}/error.log"),
    "matrix show": ("matrix", "show", "--cuda", "12"),
    "matrix check": ("matrix", "check"),
    "help": ("plan", "--help"),
}
WRITES_STDOUT = {"detect", "plan", "dockerfile", "verify", "doctor", "matrix show", "matrix check", "help"}
STATES = {
    "stdout closed": {"stdout": "closed"},
    "stdout /dev/full": {"stdout": "/dev/full"},
    "stdin closed": {"stdin": "closed"},
    "stdout --json to /dev/full": {"stdout": "/dev/full", "json": True},
}


def run_with(args: list[str], stdin: str | None = None, stdout: str | None = None) -> tuple[int, str]:
    """A real `ortprov ARGS` with stdin/stdout closed or a file: (exit code, stderr)."""
    opened = []

    def stream(state: str | None, mode: str) -> Any:
        if state in (None, "closed"):
            return subprocess.DEVNULL if state is None and mode == "r" else None
        handle = open(state, mode)  # noqa: SIM115 - closed below
        opened.append(handle)
        return handle

    def close_fds() -> None:
        if stdin == "closed":
            os.close(0)
        if stdout == "closed":
            os.close(1)

    try:
        proc = subprocess.run(
            ortprov_argv(*args),
            stdin=stream(stdin, "r"),
            stdout=stream(stdout, "w") if stdout != "closed" else None,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
            cwd=os.getcwd(),
            timeout=120,
            preexec_fn=close_fds,  # noqa: PLW1509 - a closed descriptor is what the case is about
        )
    finally:
        for handle in opened:
            handle.close()
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("command", list(CHEAP))
def test_stdin_and_stdout_states(place: Path, command: str, state: str) -> None:
    setting = STATES[state]
    args = [arg.format(tmp=place) for arg in CHEAP[command]]
    if setting.get("json"):
        if command in ("help", "dockerfile"):
            pytest.skip("no --json")
        args.append("--json")
    code, stderr = run_with(args, stdin=setting.get("stdin"), stdout=setting.get("stdout"))
    if "stdout" in setting and command in WRITES_STDOUT:
        assert_one_error(code, stderr, True, f"{' '.join(args)} ({state})")
        assert "stdout" in stderr
    else:
        assert_one_error(code, stderr, False, f"{' '.join(args)} ({state})")


def test_doctor_reads_a_log_from_stdin_closed_or_empty(place: Path) -> None:
    code, stderr = run_with(["doctor", "--log", "-"], stdin="closed")
    assert_one_error(code, stderr, True, "doctor --log - (stdin closed)")
    empty = run_ortprov("doctor", "--log", "-", input_text="")
    assert_one_error(empty.returncode, empty.stderr, True, "doctor --log - (empty)")


def run_on_a_terminal(args: list[str], typed: bytes, env: dict[str, str]) -> tuple[int, str]:
    """`ortprov ARGS` with stdin, stdout and stderr a pty; `typed` is written to it: (exit code, what showed)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        ortprov_argv(*args), stdin=follower, stdout=follower, stderr=follower, env=env, cwd=os.getcwd()
    )
    os.close(follower)
    os.write(leader, typed)
    shown = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child ended and closed the pty
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    return proc.wait(timeout=30), shown.decode("utf-8", "replace")


def test_doctor_refuses_a_terminal_as_its_log(place: Path) -> None:
    """stdin a terminal: `doctor --log -` says in one line that it wants a piped log (issue 11), exit 2."""
    code, shown = run_on_a_terminal(["doctor", "--log", "-"], (LOG + "\n").encode() + b"\x04", cli_env())
    assert_one_error(code, shown, True, "doctor --log - on a terminal")
    assert "stdin is a terminal" in shown


@pytest.mark.parametrize(("env", "coloured"), [({}, True), ({"TERM": "dumb"}, False), ({"NO_COLOR": "1"}, False)])
def test_colour_on_a_terminal_only_when_wanted(env: dict[str, str], coloured: bool) -> None:
    """A terminal gets a red `error:`; TERM=dumb and NO_COLOR get none (and a pipe none: the other tests)."""
    base = {k: v for k, v in cli_env().items() if k not in ("NO_COLOR", "TERM")}
    code, shown = run_on_a_terminal(["plan", "--driver", "5x.1"], b"", {**base, "TERM": "xterm", **env})
    assert code == 2 and "Traceback" not in shown
    assert ("\x1b[" in shown) is coloured, repr(shown)
