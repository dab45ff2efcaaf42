"""Colour for the text renderers: on a terminal, or wherever FORCE_COLOR asks (https://force-color.org: a CI
log that renders ANSI); never with NO_COLOR (https://no-color.org), which wins, or TERM=dumb. The order is
Python's own (3.13's _colorize): NO_COLOR, then FORCE_COLOR, then TERM=dumb, then the terminal."""

from __future__ import annotations

import os
import sys
from typing import Any


def color_enabled(stream: Any = None) -> bool:
    """Colour on a terminal or with FORCE_COLOR; never with NO_COLOR, or TERM=dumb (unless FORCE_COLOR)."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def style(text: str, color: str, stream: Any = None) -> str:
    """Wrap text in an ANSI colour when colour is enabled. color: red|green|yellow|bold|dim|cyan."""
    if not color_enabled(stream):
        return text
    codes = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2", "cyan": "36"}
    return f"\033[{codes[color]}m{text}\033[0m"
