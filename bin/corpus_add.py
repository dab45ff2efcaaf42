"""Add collected logs to the doctor's corpus, split by repository (issue 22).

    python bin/corpus_add.py [--dev] STAGING_DIR [STAGING_DIR ...]

Each STAGING_DIR holds `*.log` files and `entries.json` (file name -> the corpus.json fields plus `repo`,
"owner/name"). A log whose repository already has a log in the development corpus (tests/data/logs/corpus.json,
incoming/ included) joins the development side, in tests/data/logs/incoming/ until the reader's developer folds it
into the top level; every other log goes to the held-out part, tests/data/logs/heldout/, and its repository stays
held out for good (a later log of it is held out too). The held-out part is scored by a test and never read while
the reader is developed. Prints counts only: no held-out names.

--dev: logs collected for development (new logs to develop against, gathered from repositories outside the held-out
part) join the development side even when their repository is new to the corpus; a log of a held-out repository
still goes to the held-out part (a development log of it would leak the split).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

LOGS = Path(__file__).resolve().parents[1] / "tests" / "data" / "logs"
PARTS = {"dev": LOGS / "incoming", "heldout": LOGS / "heldout"}
_REPO = re.compile(r"github\.com/([^/\s]+/[^/\s#?]+)", re.I)


def repo_of(entry: dict) -> str | None:
    """The entry's repository, lower case: its `repo` field, else the first GitHub address in its source."""
    if entry.get("repo"):
        return str(entry["repo"]).lower()
    found = _REPO.search(entry.get("source", ""))
    return found.group(1).lower() if found else None


def load(path: Path) -> dict[str, dict]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def main(staging: list[Path], dev_only: bool = False) -> int:
    dev = {**load(LOGS / "corpus.json"), **load(PARTS["dev"] / "corpus.json")}
    heldout = load(PARTS["heldout"] / "corpus.json")
    dev_repos = {repo_of(e) for e in dev.values()} - {None}
    heldout_repos = {repo_of(e) for e in heldout.values()} - {None}
    taken = set(dev) | set(heldout) | {p.name for p in LOGS.rglob("*.log")}
    added = {"dev": {}, "heldout": {}}
    for folder in staging:
        for name, entry in sorted(load(folder / "entries.json").items()):
            if name in taken:
                sys.exit(f"error: {folder / name}: a log of that name is in the corpus already")
            repo = repo_of(entry)
            if repo is None:
                sys.exit(f"error: {folder / name}: no repository in its entry")
            known = repo in dev_repos or dev_only
            part = "dev" if known and repo not in heldout_repos else "heldout"
            if part == "heldout":
                heldout_repos.add(repo)
            else:
                dev_repos.add(repo)
            added[part][name] = {**entry, "repo": repo}
            PARTS[part].mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / name, PARTS[part] / name)
            taken.add(name)
    for part, entries in added.items():
        if entries:
            merged = {**load(PARTS[part] / "corpus.json"), **entries}
            text = json.dumps(dict(sorted(merged.items())), indent=1, ensure_ascii=False) + "\n"
            (PARTS[part] / "corpus.json").write_text(text, encoding="utf-8")
        print(f"{part}: +{len(entries)} logs")
    listing = LOGS / "heldout-repositories.txt"
    listing.write_text(
        "# Repositories whose logs are held out (tests/data/logs/heldout/, never read while developing the reader).\n"
        "# Written by bin/corpus_add.py. Add no development log from these: it would leak the split.\n"
        + "".join(f"{repo}\n" for repo in sorted(heldout_repos)),
        encoding="utf-8",
    )
    print(f"held-out repositories: {len(heldout_repos)}; development repositories: {len(dev_repos)}")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main([Path(arg) for arg in args if arg != "--dev"], dev_only="--dev" in args))
