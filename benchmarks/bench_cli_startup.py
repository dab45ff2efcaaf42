"""CLI start-up: `ortprov --help` and `ortprov detect --json` as whole processes, against `python -c pass`.

Usage:
    .venv/bin/python benchmarks/bench_cli_startup.py [--runs 15] [--python PATH] [--importtime]

Prints a Markdown table: median and minimum wall-clock seconds, and the median CPU seconds (user + system,
including the command's own child processes; steadier than wall time on a shared, loaded machine).
--importtime adds the ten slowest top-level imports of each command (python -X importtime, cumulative).
Targets: detect < 0.3 s, --help < 0.15 s.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGETS = {"ortprov --help": 0.15, "ortprov detect --json": 0.30}


def commands(python: str) -> dict[str, list[str]]:
    """The processes to time, by label."""
    return {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import typer'": [python, "-c", "import typer"],
        "probe child alone": [python, str(REPO / "provisioner/probe/packages_child.py")],
        "ortprov --help": [python, "-m", "provisioner", "--help"],
        "ortprov detect --json": [python, "-m", "provisioner", "detect", "--json"],
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall-clock seconds, CPU seconds incl. its own children) of one run; fails loudly on failure."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    completed = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {completed.stderr.decode(errors='replace')[-500:]}")
    return elapsed, _children_cpu() - cpu_before


def slowest_imports(argv: list[str], env: dict[str, str], count: int = 10) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of the slowest top-level imports."""
    completed = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], cwd=REPO, env=env, capture_output=True, text=True
    )
    rows = []
    for line in completed.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if match and not match.group(2).startswith(" "):
            rows.append((int(match.group(1)), match.group(2)))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs ortprov")
    parser.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    args = parser.parse_args()
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env["PYTHONPATH"] = str(REPO)
    env["PYTHONDONTWRITEBYTECODE"] = "0"
    table: dict[str, list[tuple[float, float]]] = {label: [] for label in commands(args.python)}
    for argv in commands(args.python).values():
        time_once(argv, env)  # warm the page cache and write .pyc files
    for _ in range(args.runs):  # interleaved, so a load spike hits every command alike
        for label, argv in commands(args.python).items():
            table[label].append(time_once(argv, env))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python: {args.python} ({args.runs} runs each, {os.cpu_count()} CPUs, load {load:.2f})\n")
    print("| command | wall median s | wall min s | CPU median s | target (wall) |")
    print("|---|---|---|---|---|")
    for label, runs in table.items():
        walls = [wall for wall, _ in runs]
        cpus = [cpu for _, cpu in runs]
        median = statistics.median(walls)
        target = TARGETS.get(label)
        verdict = "" if target is None else f"< {target} " + ("ok" if median < target else "MISSED")
        print(f"| `{label}` | {median:.3f} | {min(walls):.3f} | {statistics.median(cpus):.3f} | {verdict} |")
    if args.importtime:
        for label, argv in commands(args.python).items():
            if label.startswith("ortprov"):
                print(f"\nslowest imports of `{label}` (cumulative ms):")
                for micros, module in slowest_imports(argv, env):
                    print(f"  {micros / 1000:7.1f}  {module}")


if __name__ == "__main__":
    main()
