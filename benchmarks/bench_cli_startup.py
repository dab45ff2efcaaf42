"""CLI start-up: `ortprov --help`, the `--help` of every command, `ortprov detect --json` and
`ortprov plan --json` as whole processes, against `python -c pass`.

Usage:
    .venv/bin/python benchmarks/bench_cli_startup.py [--runs 15] [--python PATH] [--importtime] [--baseline DIR]

Prints a Markdown table: median and minimum wall-clock seconds, and the median CPU seconds (user + system,
including the command's own child processes; steadier than wall time on a shared, loaded machine).
--importtime adds the ten slowest top-level imports of each command (python -X importtime, cumulative).
The commands come from cli.COMMANDS (and the matrix subcommands), so a new command is timed without an
edit here. --baseline DIR times the same ortprov commands from another checkout too (`git worktree add DIR
COMMIT`), interleaved with this one's, so that before and after meet the same load on a shared machine.
Targets: detect < 0.3 s, --help < 0.15 s, plan --json < 0.25 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from proc_timing import REPO, slowest_imports, time_once

TARGETS = {"ortprov --help": 0.15, "ortprov detect --json": 0.30, "ortprov plan --json (flags)": 0.25}
PLAN_FLAGS = ["--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64"]
MATRIX_SUBCOMMANDS = ("check", "show", "update")
# the package probe run alone (its home before and after the standalone/ folder)
PROBE_CHILD = next(
    path
    for path in (REPO / "provisioner/standalone/packages_probe.py", REPO / "provisioner/probe/packages_child.py")
    if path.exists()
)


def command_names() -> list[str]:
    """Every command and subcommand, as typed after `ortprov`."""
    sys.path.insert(0, str(REPO))
    from provisioner.cli import COMMANDS

    names = []
    for name in COMMANDS:
        names.append(name)
        if name == "matrix":
            names += [f"matrix {sub}" for sub in MATRIX_SUBCOMMANDS]
    return names


def commands(python: str) -> dict[str, list[str]]:
    """The processes to time, by label."""
    names = command_names()
    return {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import typer'": [python, "-c", "import typer"],
        "probe child alone": [python, str(PROBE_CHILD)],
        "ortprov --help": [python, "-m", "provisioner", "--help"],
        **{f"ortprov {name} --help": [python, "-m", "provisioner", *name.split(), "--help"] for name in names},
        "ortprov detect --json": [python, "-m", "provisioner", "detect", "--json"],
        "ortprov plan --json (flags)": [python, "-m", "provisioner", "plan", "--json", *PLAN_FLAGS],
    }


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs ortprov")
    parser.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    parser.add_argument("--baseline", type=Path, help="another checkout to time the same commands from")
    args = parser.parse_args()
    trees = {"": REPO} if args.baseline is None else {"": REPO, " (baseline)": args.baseline.resolve()}
    envs = {}
    for suffix, tree in trees.items():
        env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
        envs[suffix] = {**env, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "0"}
    runs: dict[str, tuple[list[str], str]] = {}
    for label, argv in commands(args.python).items():
        runs[label] = (argv, "")
        if args.baseline is not None and label.startswith("ortprov"):
            runs[label + " (baseline)"] = (argv, " (baseline)")
    table: dict[str, list[tuple[float, float]]] = {label: [] for label in runs}
    for argv, tree in runs.values():
        time_once(argv, envs[tree], trees[tree])  # warm the page cache and write .pyc files
    for _ in range(args.runs):  # interleaved, so a load spike hits every command alike
        for label, (argv, tree) in runs.items():
            table[label].append(time_once(argv, envs[tree], trees[tree]))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python: {args.python} ({args.runs} runs each, {os.cpu_count()} CPUs, load {load:.2f})")
    if args.baseline is not None:
        print(f"baseline: {args.baseline}")
    print("\n| command | wall median s | wall min s | CPU median s | target (wall) |")
    print("|---|---|---|---|---|")
    for label, timed in table.items():
        walls = [wall for wall, _ in timed]
        cpus = [cpu for _, cpu in timed]
        median = statistics.median(walls)
        target = TARGETS.get(label)
        verdict = "" if target is None else f"< {target} " + ("ok" if median < target else "MISSED")
        print(f"| `{label}` | {median:.3f} | {min(walls):.3f} | {statistics.median(cpus):.3f} | {verdict} |")
    if args.importtime:
        for label, argv in commands(args.python).items():
            if label.startswith("ortprov"):
                print(f"\nslowest imports of `{label}` (cumulative ms):")
                for micros, module in slowest_imports(argv, envs[""]):
                    print(f"  {micros / 1000:7.1f}  {module}")


if __name__ == "__main__":
    main()
