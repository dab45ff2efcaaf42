"""The log reader on the held-out logs (tests/data/logs/heldout/, issue 22): logs from repositories the development
corpus does not have, never read while the rules are written. This test prints only the scores and the misses
counted by the expected code (no file names, no lines), says whether issue 22's target is reached, and fails below
HELDOUT_FLOOR.

HELDOUT_TARGET is the issue's bar (85% top-1), reached in round 8 (119/139 = 85.6%, 2026-11-26, after development
against the development corpus only); the suite now fails below it (HELDOUT_FLOOR = the target). Never lower the
floor: a rule change that loses a held-out log must be paid back with a cause found in development logs.

Until the folder exists the test is skipped; once it exists it is required (corpus.json and every log it names).
"""

from __future__ import annotations

import math

import pytest

from provisioner.findings import CODES
from tests.support.logcorpus import (
    ENTRY_KEYS,
    HELDOUT,
    LOGS,
    load_corpus,
    misses_by_expected_code,
    outcomes,
    repo_of,
    summary,
)

HELDOUT_TARGET = 0.85  # top-1 (issue 22); the goal is 0.90 on each batch
HELDOUT_SHARE = 0.30  # of the repositories (issue 22: split by repository, a held-out part of at least 30%)
HELDOUT_FLOOR = HELDOUT_TARGET  # reached in round 8 (119/139): from then on the suite fails below the target


def _corpus() -> dict[str, dict]:
    if not HELDOUT.is_dir():
        pytest.skip("no held-out logs yet (tests/data/logs/heldout/)")
    assert (HELDOUT / "corpus.json").is_file(), "tests/data/logs/heldout/ has no corpus.json"
    return load_corpus(HELDOUT)


def test_heldout_logs_and_entries_match():
    corpus = _corpus()
    files = {p.name for p in HELDOUT.glob("*.log")}
    unlabelled, missing = len(files - set(corpus)), len(set(corpus) - files)
    assert (unlabelled, missing) == (0, 0), f"{unlabelled} log(s) without an entry, {missing} entry(ies) without a log"
    malformed = sum(
        1
        for e in corpus.values()
        if not ENTRY_KEYS <= set(e) <= ENTRY_KEYS | {"repo"}
        or not set(e["codes"]) <= set(CODES)
        or e["primary"] != (e["codes"] or [None])[0]
    )
    assert malformed == 0, f"{malformed} malformed held-out entry(ies)"


def test_score_on_the_heldout_logs(record_property):  # noqa: ANN001 - pytest's fixture
    corpus = _corpus()
    results = outcomes(HELDOUT, corpus)
    misses = misses_by_expected_code(results)
    hits, total = sum(r.top1 for r in results), len(results)  # plain numbers: a failing assert shows no file name
    short = max(0, math.ceil(HELDOUT_TARGET * total - 1e-9) - hits)  # logs still to be read right
    # a score to read, not a list of failures: the test fails only below HELDOUT_FLOOR (its assert below)
    to_go = ", ".join(f"{code} {n}" for code, n in sorted(misses.items(), key=lambda kv: (-kv[1], kv[0])))
    lines = [
        summary("score of the log reader, held-out logs", results),
        f"  goal {HELDOUT_TARGET:.0%} top-1: "
        + (f"{short} log(s) to go" if short else "reached")
        + f" (the suite fails below {HELDOUT_FLOOR:.0%})",
        *([f"  logs not yet read right, by their cause: {to_go}"] if to_go else []),
    ]
    record_property("summary", "\n".join(lines))  # printed at the end of the run, pass or fail (tests/conftest.py)
    assert hits / total >= HELDOUT_FLOOR, f"held-out top-1 {hits}/{total} fell below the floor {HELDOUT_FLOOR:.0%}"


def test_the_heldout_part_keeps_at_least_30_percent_of_the_repositories():
    """Issue 22 splits the corpus by repository, with a held-out part of at least 30%: a development log from a new
    repository lowers that share (bin/corpus_add.py sends such logs to the held-out part unless --dev)."""
    heldout = {repo_of(e) for e in _corpus().values()} - {None}
    development = {repo_of(e) for e in load_corpus(LOGS).values()} - {None}
    share = len(heldout) / len(heldout | development)
    assert share >= HELDOUT_SHARE, f"held-out repositories {len(heldout)} of {len(heldout | development)}: {share:.1%}"
