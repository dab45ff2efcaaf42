"""The log reader on the held-out logs (tests/data/logs/heldout/, issue 22): logs from repositories the development
corpus does not have, never read while the rules are written. This test prints only the scores and the misses
counted by the expected code (no file names, no lines), and fails below HELDOUT_TARGET.

Until the folder exists the test is skipped; once it exists it is required (corpus.json and every log it names).
"""

from __future__ import annotations

import pytest

from provisioner.findings import CODES
from tests.support.logcorpus import ENTRY_KEYS, HELDOUT, load_corpus, misses_by_expected_code, outcomes, summary

HELDOUT_TARGET = 0.85  # top-1 (issue 22); the goal is 0.90 on each batch


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


def test_score_on_the_heldout_logs():
    corpus = _corpus()
    results = outcomes(HELDOUT, corpus)
    print("\n" + summary("log reader, held out", results))
    misses = misses_by_expected_code(results)
    for code, count in sorted(misses.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  missed (top-1), expected {code}: {count}")
    hits, total = sum(r.top1 for r in results), len(results)  # plain numbers: a failing assert shows no file name
    assert hits / total >= HELDOUT_TARGET, f"held-out top-1 {hits}/{total} is below {HELDOUT_TARGET:.0%}"
