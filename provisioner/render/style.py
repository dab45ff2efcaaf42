"""Colour for the text renderers: only on a terminal, never with NO_COLOR (https://no-color.org) or TERM=dumb."""

from __future__ import annotations

import os
import sys
from typing import Any


def color_enabled(stream: Any = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org) or TERM is dumb."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def style(text: str, color: str, stream: Any = None) -> str:
    """Wrap text in an ANSI colour when colour is enabled. color: red|green|yellow|bold|dim|cyan."""
    if not color_enabled(stream):
        return text
    codes = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2", "cyan": "36"}
    return f"\033[{codes[color]}m{text}\033[0m"
