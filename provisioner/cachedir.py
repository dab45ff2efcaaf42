"""Where ortprov keeps refreshed data: the user cache dir (ORTPROV_CACHE_DIR overrides, for tests)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def user_cache_dir() -> Path:
    """$ORTPROV_CACHE_DIR, else the platform's user cache dir + /ortprov (XDG on Linux)."""
    override = os.environ.get("ORTPROV_CACHE_DIR")
    if override:
        return Path(override)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "ortprov" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ortprov"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ortprov"


def cached_matrices_dir() -> Path:
    """The folder `ortprov matrix update` writes refreshed matrices/*.yaml into."""
    return user_cache_dir() / "matrices"
