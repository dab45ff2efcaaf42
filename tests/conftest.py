"""What every test shares.

- The CLI is run one way: tests/support/cli.run_ortprov (a child process, as a user runs it).
- No test reads or writes the user's cache: ORTPROV_CACHE_DIR points at a fresh folder for the session (a
  `matrix update` the developer ran would otherwise change every plan). A test that needs its own cache sets
  its own, as before.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """ORTPROV_CACHE_DIR for this process and every ortprov it starts, unless a test sets its own."""
    path = tmp_path_factory.mktemp("ortprov-cache")
    before = os.environ.get("ORTPROV_CACHE_DIR")
    os.environ["ORTPROV_CACHE_DIR"] = str(path)
    yield path
    if before is None:
        os.environ.pop("ORTPROV_CACHE_DIR", None)
    else:
        os.environ["ORTPROV_CACHE_DIR"] = before
