"""Scoring `ortprov doctor --log` on a folder of labelled logs (tests/data/logs and its held-out part).

A folder holds `*.log` files and `corpus.json` (one entry per log: `primary`, `codes`, ... as SOURCES.md says).
Scores: top-1 = the first finding's code is one of the log's `codes` (no codes: no finding); primary-cause-only =
the first finding's code is the log's `primary` (null: no finding).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from provisioner.doctor import analyze_log
from provisioner.matrix.load import load_matrix

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
HELDOUT = LOGS / "heldout"
ENTRY_KEYS = frozenset({"source", "language", "caller", "real", "primary", "codes", "why"})  # and `repo`, optional
LANGUAGES = ("en", "zh", "ja", "ru", "mixed")
CALLERS = ("python", "c", "cpp", "csharp", "java", "rust", "node", "go", "unknown")
_REPO = re.compile(r"github\.com/([^/\s]+/[^/\s#?]+)", re.I)


@dataclass(frozen=True)
class Outcome:
    """What the reader put first for one log, against its labels."""

    name: str
    first: str | None
    primary: str | None
    codes: tuple[str, ...]

    @property
    def top1(self) -> bool:
        return self.first in self.codes if self.codes else self.first is None

    @property
    def primary_right(self) -> bool:
        return self.first == self.primary


def load_corpus(folder: Path) -> dict[str, dict]:
    """corpus.json of a folder."""
    return json.loads((folder / "corpus.json").read_text(encoding="utf-8"))


def repo_of(entry: dict) -> str | None:
    """The log's repository, lower case: its `repo` field, else the first GitHub address in its source."""
    if entry.get("repo"):
        return str(entry["repo"]).lower()
    found = _REPO.search(entry.get("source", ""))
    return found.group(1).lower() if found else None


def heldout_repositories() -> frozenset[str]:
    """The repositories whose logs are held out (tests/data/logs/heldout-repositories.txt), lower case."""
    path = LOGS / "heldout-repositories.txt"
    if not path.is_file():
        return frozenset()
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines if line.strip() and not line.startswith("#"))


def first_code(path: Path) -> str | None:
    """The code `ortprov doctor --log` puts first for this log (with the shipped matrix, as the command runs)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    findings = analyze_log(text, matrix=load_matrix(use_cache=False))
    return findings[0].code if findings else None


def outcomes(folder: Path, corpus: dict[str, dict]) -> list[Outcome]:
    """Every labelled log of the folder, read."""
    return [
        Outcome(name, first_code(folder / name), entry["primary"], tuple(entry["codes"]))
        for name, entry in sorted(corpus.items())
    ]


def summary(label: str, results: list[Outcome]) -> str:
    """One line: top-1 and primary-cause-only, counts and shares."""
    total = len(results)
    top1 = sum(r.top1 for r in results)
    primary = sum(r.primary_right for r in results)
    return (
        f"{label} on {total} logs: top-1 {top1}/{total} ({top1 / total:.1%}), "
        f"primary-cause-only {primary}/{total} ({primary / total:.1%})"
    )


def misses_by_expected_code(results: list[Outcome]) -> Counter[str]:
    """Top-1 misses counted by the log's expected (primary) code: no names, no other detail."""
    return Counter(str(r.primary) for r in results if not r.top1)
