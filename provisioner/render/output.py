"""The one output path of the CLI: a command's result on stdout (text or JSON), errors, notes and progress on
stderr, colour only when wanted.

A command returns a result object (`Result`: its text, its JSON data, its exit code); `show` prints it. An
OrtprovError becomes `show_error`: one `error:` line and a `hint:` on stderr, and with --json the error object
of docs/json.md on stdout. Nothing here computes anything: the renderers next to this module turn data into
text, and this module writes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any, Protocol

from provisioner.render.style import style

if TYPE_CHECKING:
    from provisioner.errors import OrtprovError


class Result(Protocol):
    """What a command returns: rendered by `show`."""

    @property
    def exit_code(self) -> int:
        """0 ok, 1 a check found problems (docs: README's exit codes)."""
        ...

    def text(self) -> str:
        """What stdout shows without --json ("" shows nothing)."""
        ...

    def data(self) -> Any:
        """The JSON document of --json (dataclasses are turned into objects)."""
        ...


def to_json_text(data: Any) -> str:
    """Pretty JSON of a dataclass tree or plain data."""
    from provisioner.serde import to_jsonable

    return json.dumps(to_jsonable(data), indent=2)


def show(result: Result, *, as_json: bool) -> int:
    """Print the result on stdout (its JSON with --json, else its text); its exit code. BadInput when stdout
    cannot take it (a full disk, /dev/full); a reader that went away (BrokenPipeError) is cli.main's."""
    text = to_json_text(result.data()) if as_json else result.text()
    if not as_json and "@" in text:  # a person reads it: no password of a URL (--json keeps what runs)
        from provisioner.urls import masked

        shown, text = text, masked(text)
        if shown != text:
            note(
                "passwords in URLs are shown as ****: give them to pip and uv through ~/.netrc or a keyring "
                "(or take the plan with --json)"
            )
    if text:
        write_stdout(text if text.endswith("\n") else text + "\n")
    return result.exit_code


def write_stdout(text: str) -> None:
    """Write and flush stdout; BadInput (and stdout silenced) when it cannot be written."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise stdout_failed(exc) from None


def stdout_failed(exc: OSError) -> OrtprovError:
    """The error for a stdout that refused the result; stdout then writes to /dev/null, so that the flush at
    exit cannot fail again."""
    from provisioner.errors import BadInput

    _silence(sys.stdout)
    return BadInput(
        f"cannot write the result to stdout: {exc.strerror or exc}",
        hint="send it to a file on a disk with room, or to /dev/null",
    )


def stdout_is_broken() -> bool:
    """True once a write to stdout failed (a full disk, /dev/full), whoever wrote (the help of click too), or
    when what it holds cannot be flushed now."""
    if getattr(sys.stdout, "failed", False):
        return True
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return False
    except OSError:
        return True
    return False


def prepare_streams() -> None:
    """Before any command: a closed stdin or stderr becomes /dev/null (so that no file opened later takes its
    descriptor), stderr drops what it cannot write (a progress line lost to a full disk is no error), and a
    closed stdout is refused (BadInput): the result would be lost."""
    from provisioner.errors import BadInput

    if sys.stdin is None:
        sys.stdin = open(_to_devnull(0), encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as we do
    if sys.stderr is None:
        sys.stderr = open(_to_devnull(2), "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    if not isinstance(sys.stderr, _Forgiving):
        sys.stderr = _Forgiving(sys.stderr)
    if sys.stdout is not None and not isinstance(sys.stdout, _Watched):
        with contextlib.suppress(AttributeError, ValueError):  # a name from argv that is not UTF-8: its bytes
            sys.stdout.reconfigure(errors="surrogateescape")  # type: ignore[union-attr]
        sys.stdout = _Watched(sys.stdout)
    if sys.stdout is None:
        sys.stdout = open(_to_devnull(1), "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        raise BadInput(
            "stdout is closed: ortprov writes its result there",
            hint="redirect it instead of closing it: `> result.txt`, or `> /dev/null` to drop it",
        )


def _to_devnull(fd: int) -> int:
    """Point descriptor `fd` at /dev/null; `fd`."""
    null = os.open(os.devnull, os.O_RDWR)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)
    return fd


class _Stream:
    """A text stream's stand-in that delegates everything it does not define."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Watched(_Stream):
    """stdout that remembers a failed write (`failed`), even one that a library swallowed; the OSError still
    propagates (a reader gone away, EPIPE, is not remembered: cli.main ends that run quietly)."""

    failed = False

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except OSError as exc:
            self._fail(exc)
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            self._fail(exc)
            raise

    def _fail(self, exc: OSError) -> None:
        if not isinstance(exc, BrokenPipeError):
            self.failed = True


def _silence(stream: Any) -> None:
    """Point the stream's descriptor at /dev/null and flush what it held there."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return
    _to_devnull(fd)
    with contextlib.suppress(OSError):
        stream.flush()


class _Forgiving(_Stream):
    """stderr that drops what it cannot write (ENOSPC, EPIPE, EIO) and then writes to /dev/null."""

    def write(self, text: str) -> int:
        if isinstance(text, str) and "@" in text:  # every line on stderr: no password of a URL
            from provisioner.urls import masked

            text = masked(text)
        try:
            return int(self._stream.write(text))
        except OSError:
            _silence(self._stream)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            _silence(self._stream)


def error_object(error: OrtprovError) -> dict[str, Any]:
    """The JSON error object (docs/json.md): the same sentence and hint as the error line, the exit code, the
    rejected candidates of a failed plan, and what the error adds (apply: what was done and verified)."""
    from provisioner.serde import to_jsonable
    from provisioner.urls import masked

    return {
        "error": masked(error.message),
        "hint": None if error.hint is None else masked(error.hint),
        "exit_code": error.exit_code,
        "rejected": to_jsonable(list(getattr(error, "rejected", []))),
        **{key: to_jsonable(value) for key, value in error.details.items()},
    }


def show_error(error: OrtprovError, *, as_json: bool, verbose: bool = False) -> int:
    """The error line (and hint) on stderr; with --json also the error object on stdout; its exit code. In
    text, a failed plan's rejected candidates follow the error line (all of them with -v)."""
    from provisioner.errors import NoCompatiblePlan, OrtprovError

    if as_json and not stdout_is_broken():
        with contextlib.suppress(OrtprovError):  # the error line below says what failed
            write_stdout(to_json_text(error_object(error)) + "\n")
    error_line(error.message, error.hint)
    if isinstance(error, NoCompatiblePlan) and error.rejected and not as_json:
        from provisioner.render.plan import render_no_plan

        _errors().write(render_no_plan(error, verbose) + "\n")
    return error.exit_code


def traceback_if_asked(exc: BaseException, verbose: bool = False) -> None:
    """A bug's traceback on stderr, with -v or when ORTPROV_TRACEBACK is set (its error line says so)."""
    if verbose or os.environ.get("ORTPROV_TRACEBACK"):
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__)


def error_line(message: str, hint: str | None = None) -> None:
    """The one-line error (and optional hint) the CLI prints instead of a traceback (-q too)."""
    stream = _errors()
    stream.write(style("error: ", "red", stream) + message + "\n")
    if hint:
        stream.write(style("hint: ", "yellow", stream) + hint + "\n")
    stream.flush()


def be_quiet() -> None:
    """-q: from now on stderr drops notes and progress (whoever writes them: this module, the installer's
    progress, a tune's); the error lines still go to the real stderr. A question that waits for an answer on a
    terminal (apply's confirmation) still shows: a quiet run must not hang on a prompt nobody sees."""
    if not isinstance(sys.stderr, _Quiet):
        sys.stderr = _Quiet(sys.stderr)


def _errors() -> Any:
    """Where error lines go: stderr, or under -q the stderr that -q silenced."""
    return sys.stderr.real if isinstance(sys.stderr, _Quiet) else sys.stderr


class _Quiet(_Stream):
    """stderr under -q: drops what is written, except a prompt (text without a line end, no carriage return)
    while stdin and the real stderr are terminals. Not a terminal itself, so no status line is drawn on it."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.real = stream

    def write(self, text: Any) -> int:
        if _is_prompt(text) and _terminal(sys.stdin) and _terminal(self.real):
            if isinstance(text, str):
                return int(self.real.write(text))
            self.real.flush()  # click writes its prompts as bytes
            return int(self.real.buffer.write(text))
        return len(text)

    def flush(self) -> None:
        self.real.flush()

    def isatty(self) -> bool:
        return False


def _is_prompt(text: Any) -> bool:
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    return isinstance(text, str) and bool(text.strip()) and not text.endswith("\n") and "\r" not in text


def _terminal(stream: Any) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (OSError, ValueError):
        return False


def progress(text: str) -> None:
    """A line of progress on stderr, as it is (apply's and download's narration: render/apply.py words it)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def note(text: str, label: str = "note") -> None:
    """A note on stderr (`note: ...`; another label, such as `notice`, in yellow): stdout carries only the
    result."""
    prefix = "note: " if label == "note" else style(f"{label}: ", "yellow", sys.stderr)
    sys.stderr.write(prefix + text + "\n")
    sys.stderr.flush()
