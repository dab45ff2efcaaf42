"""Timing whole processes for the start-up benchmarks: wall and CPU seconds, and the slowest imports."""

from __future__ import annotations

import re
import resource
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_once(argv: list[str], env: dict[str, str], cwd: Path = REPO) -> tuple[float, float]:
    """(wall-clock seconds, CPU seconds incl. its own children) of one run in `cwd` (a checkout: `python -m
    provisioner` imports the one it starts in); fails loudly on failure."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    completed = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {completed.stderr.decode(errors='replace')[-500:]}")
    return elapsed, _children_cpu() - cpu_before


def slowest_imports(argv: list[str], env: dict[str, str], count: int = 10) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of the slowest top-level imports of one run (python -X importtime)."""
    completed = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], cwd=REPO, env=env, capture_output=True, text=True
    )
    rows = []
    for line in completed.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            rows.append((int(match.group(1)), match.group(2)))
    return sorted(rows, reverse=True)[:count]
