"""The log corpus (tests/data/logs, labelled in corpus.json, described in SOURCES.md): its completeness, its
coverage, and the log reader's score on it, printed (`pytest -s`).

Scores (defined in SOURCES.md): top-1 = the first finding's code is one of the log's `codes` (no codes: no finding);
primary-cause-only = the first finding's code is the log's `primary` (null: no finding).
"""

from __future__ import annotations

from collections import Counter

import pytest

from provisioner.findings import CODES
from tests.support.logcorpus import (
    CALLERS,
    ENTRY_KEYS,
    LANGUAGES,
    LOGS,
    heldout_repositories,
    load_corpus,
    outcomes,
    repo_of,
    summary,
)

CORPUS: dict[str, dict] = load_corpus(LOGS)
# before issue 11: 113/169 (66.9%); the evidence rewrite 145/169 (85.8%); provider lists read as lists, wrapped
# lines, ldd, old DLL suffixes, timings of the two packages: 163/169 (96.4%). The issue asks 0.90. Issue 22's second
# stop grew the corpus from 359 to 577 logs with fresh batches first read at 45-91% (docs/verify-doctor.md), and
# ended at 547/577 (94.8%): a regression guard at 0.94 (the bar for unseen logs is test_log_heldout.py's).
TOP1_TARGET = 0.94
# Codes no user can have posted (ortprov's own verify child and loader hook): SOURCES.md says why.
NO_REAL_LOGS = {
    "loader-hook-failed",
    "verify-crashed",
    "verify-timeout",
    "verify-failed",
    "fastest-gpu-changes-results",
    # TensorRT's codes (issue 25): their rules are written from the texts' sources (wheel-stub's ERROR.txt,
    # TensorRT's and ONNX Runtime's messages) and tested in tests/unit/test_doctor_tensorrt.py; no user log yet
    "tensorrt-install-failed",
    "tensorrt-major-mismatch",
    "tensorrt-engine-cache-stale",
    # plugin EPs (issue 32): read from the verify child's report of a plugin EP (verify_plugin.py)
    "plugin-beside-gpu-core",
    "plugin-core-too-old",
    "cuda-library-twice",  # the verify child's mapped libraries
    "known-broken-release",  # the installed release against matrices/known-issues.yaml
    "plugin-library-missing",
    "plugin-register-failed",
    "plugin-no-device",
}


def test_every_log_has_an_entry_and_every_entry_a_log():
    assert {p.name for p in LOGS.glob("*.log")} == set(CORPUS)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_entry_is_well_formed(name: str):
    entry = CORPUS[name]
    assert ENTRY_KEYS <= set(entry) <= ENTRY_KEYS | {"repo"}
    assert entry["source"].strip() and entry["why"].strip()
    assert entry["language"] in LANGUAGES
    assert entry["caller"] in CALLERS
    assert set(entry["codes"]) <= set(CODES) and len(set(entry["codes"])) == len(entry["codes"])
    assert entry["primary"] == (entry["codes"][0] if entry["codes"] else None)


def test_no_development_log_comes_from_a_heldout_repository():
    """The held-out part stays unseen: a development log of one of its repositories would leak it (prints a count)."""
    held = heldout_repositories()
    leaking = sum(1 for entry in CORPUS.values() if repo_of(entry) in held)
    assert leaking == 0, f"{leaking} development log(s) come from held-out repositories"


def test_coverage():
    real = {name: e for name, e in CORPUS.items() if e["real"]}
    primary = Counter(e["primary"] for e in real.values())
    listing = Counter(code for e in real.values() for code in e["codes"])
    print(f"\n{len(CORPUS)} logs, {len(real)} real")
    print("languages (real):", dict(Counter(e["language"] for e in real.values())))
    print("callers (real):", dict(Counter(e["caller"] for e in real.values())))
    print(f"{'code':28} primary listing")
    for code in CODES:
        print(f"{code:28} {primary[code]:7} {listing[code]:7}")
    print(f"{'(nothing wrong)':28} {primary[None]:7}")
    assert len(real) >= 100
    assert sum(1 for e in real.values() if e["language"] == "zh") >= 10
    assert sum(1 for e in real.values() if e["caller"] not in ("python", "unknown")) >= 10
    thin = [code for code in CODES if code not in NO_REAL_LOGS and listing[code] < 3]
    assert not thin, f"codes with fewer than 3 real logs: {thin}"


def test_score_on_the_corpus():
    results = outcomes(LOGS, CORPUS)
    print("\n" + summary("log reader", results))
    for r in results:
        if not r.primary_right:
            mark = "top-1 ok" if r.top1 else "MISS"
            print(f"  {mark:8} {r.name}: got {r.first}, primary {r.primary}, codes {list(r.codes)}")
    assert sum(r.top1 for r in results) / len(results) >= TOP1_TARGET
