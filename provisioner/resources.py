"""Where the shipped data lives: inside the installed package, or at the top of a source checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """`matrices` or `recipes`: the copy inside the wheel, else the checkout's top-level folder."""
    inside = _PACKAGE_DIR / name
    if inside.is_dir():
        return inside
    return _PACKAGE_DIR.parent / name
