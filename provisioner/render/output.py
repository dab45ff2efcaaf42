"""The one output path of the CLI: a command's result on stdout (text or JSON), errors, notes and progress on
stderr, colour only when wanted.

A command returns a result object (`Result`: its text, its JSON data, its exit code); `show` prints it. An
OrtprovError becomes `show_error`: one `error:` line and a `hint:` on stderr, and with --json the error object
of docs/json.md on stdout. Nothing here computes anything: the renderers next to this module turn data into
text, and this module writes it.
"""

from __future__ import annotations

import json
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
    """Print the result on stdout (its JSON with --json, else its text); its exit code."""
    text = to_json_text(result.data()) if as_json else result.text()
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    return result.exit_code


def error_object(error: OrtprovError) -> dict[str, Any]:
    """The JSON error object (docs/json.md): the same sentence and hint as the error line, the exit code, the
    rejected candidates of a failed plan, and what the error adds (apply: what was done and verified)."""
    from provisioner.serde import to_jsonable

    return {
        "error": error.message,
        "hint": error.hint,
        "exit_code": error.exit_code,
        "rejected": to_jsonable(list(getattr(error, "rejected", []))),
        **{key: to_jsonable(value) for key, value in error.details.items()},
    }


def show_error(error: OrtprovError, *, as_json: bool, verbose: bool = False) -> int:
    """The error line (and hint) on stderr; with --json also the error object on stdout; its exit code. In
    text, a failed plan's rejected candidates follow the error line (all of them with -v)."""
    from provisioner.errors import NoCompatiblePlan

    if as_json:
        sys.stdout.write(to_json_text(error_object(error)) + "\n")
        sys.stdout.flush()
    error_line(error.message, error.hint)
    if isinstance(error, NoCompatiblePlan) and not as_json:
        from provisioner.render.plan import render_no_plan

        sys.stderr.write(render_no_plan(error, verbose) + "\n")
    return error.exit_code


def error_line(message: str, hint: str | None = None) -> None:
    """The one-line error (and optional hint) the CLI prints instead of a traceback."""
    sys.stderr.write(style("error: ", "red", sys.stderr) + message + "\n")
    if hint:
        sys.stderr.write(style("hint: ", "yellow", sys.stderr) + hint + "\n")


def note(text: str, label: str = "note") -> None:
    """A note on stderr (`note: ...`; another label, such as `notice`, in yellow): stdout carries only the
    result."""
    prefix = "note: " if label == "note" else style(f"{label}: ", "yellow", sys.stderr)
    sys.stderr.write(prefix + text + "\n")
    sys.stderr.flush()
