"""Rendering helpers shared by the commands: JSON to stdout, errors to stderr, colour only when wanted."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from typing import Any


def color_enabled(stream: Any = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def emit_json(data: Any) -> None:
    """Write a dataclass tree or plain data as pretty JSON on stdout."""
    import json

    from provisioner.serde import to_jsonable

    sys.stdout.write(json.dumps(to_jsonable(data), indent=2) + "\n")


def style(text: str, color: str, stream: Any = None) -> str:
    """Wrap text in an ANSI colour when colour is enabled. color: red|green|yellow|bold|dim."""
    if not color_enabled(stream):
        return text
    codes = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2", "cyan": "36"}
    return f"\033[{codes[color]}m{text}\033[0m"


def error_line(message: str, hint: str | None = None) -> None:
    """The one-line error (and optional hint) the CLI prints instead of a traceback."""
    sys.stderr.write(style("error: ", "red", sys.stderr) + message + "\n")
    if hint:
        sys.stderr.write(style("hint: ", "yellow", sys.stderr) + hint + "\n")
