"""What every test shares.

- The CLI is run one way: tests/support/cli.run_ortprov (a child process, as a user runs it).
- No test reads or writes the user's cache: ORTPROV_CACHE_DIR points at a fresh folder for each test (a
  `matrix update` the developer ran would otherwise change every plan; two tests, or two runs at once, would
  share one). Module and session fixtures get a folder of their own for the session. A test that needs its own
  cache sets its own, as before.
- A test that needs PyPI (`network`) is end to end (`e2e`): the default run leaves both out.
- A test may leave lines for the end of the run (`record_property("summary", text)`): they are printed after the
  results, also from xdist workers (the held-out score of the log reader).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Downloads are end to end: every `network` test is also `e2e`."""
    for item in items:
        if item.get_closest_marker("network") and not item.get_closest_marker("e2e"):
            item.add_marker(pytest.mark.e2e)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The lines tests recorded as `summary`, once each, after the results."""
    lines = [
        str(value)
        for kind in ("passed", "failed")
        for report in terminalreporter.stats.get(kind, [])
        if getattr(report, "when", "call") == "call"
        for name, value in getattr(report, "user_properties", [])
        if name == "summary"
    ]
    if lines:
        terminalreporter.write_sep("-", "scores (figures to read, not test results)")
        for line in dict.fromkeys(lines):
            terminalreporter.write_line(line)


@pytest.fixture(autouse=True)
def private_cache_per_test(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """ORTPROV_CACHE_DIR of this test alone (and of every ortprov it starts)."""
    monkeypatch.setenv("ORTPROV_CACHE_DIR", str(tmp_path_factory.mktemp("ortprov-cache")))


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
