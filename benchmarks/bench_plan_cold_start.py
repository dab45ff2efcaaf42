"""Cold start of `ortprov plan --json` for a machine described by flags, as a whole process.

Usage:
    .venv/bin/python benchmarks/bench_plan_cold_start.py [--runs 15] [--python PATH] [--script PATH]

Times (wall and CPU, median and minimum) the command
    ortprov plan --json --driver 580 --gpu-cc 9.0 --python 3.12 --platform linux-x86_64
as `python -m provisioner` from this checkout (through typer, like every command), and `ortprov dockerfile`,
against the floors under them: `python -c pass` and `import typer`. `--script PATH` adds the `ortprov`
console script of an installed wheel (pip byte-compiles it on install), which is what a user runs.
Byte-code is written and used (PYTHONDONTWRITEBYTECODE=0), as in a pip-installed ortprov: with it set, as
it is on this machine, every edited module is compiled again on each run.
Then splits the command's own work in one process (import planner + planning, load the matrix, plan,
JSON) and lists the slowest top-level imports (python -X importtime). Target: < 0.25 s (the median).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from proc_timing import REPO, slowest_imports, time_once

TARGET = 0.25
PLAN_ARGS = [
    "plan",
    "--json",
    "--driver",
    "580",
    "--gpu-cc",
    "9.0",
    "--python",
    "3.12",
    "--platform",
    "linux-x86_64",
]

PHASES = """
import json, time
t0 = time.perf_counter()
from provisioner.commands.options import PlanningOptions
from provisioner.commands.planning import plan_for
from provisioner.matrix.load import load_matrix
t1 = time.perf_counter()
matrix = load_matrix()
t2 = time.perf_counter()
options = PlanningOptions(driver="580", gpu_cc="9.0", python_version="3.12", platform="linux-x86_64")
plan = plan_for(options, matrix)
t3 = time.perf_counter()
text = json.dumps(plan.to_dict(), indent=2)
t4 = time.perf_counter()
print(json.dumps({"import planner+planning+matrix": t1 - t0, "load_matrix()": t2 - t1, "plan_for()": t3 - t2,
                  "JSON": t4 - t3}))
"""


DOCKERFILE_ARGS = ["dockerfile", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64"]
MAIN = "ortprov plan --json (flags)"


def commands(python: str, script: str | None) -> dict[str, list[str]]:
    """The processes to time, by label."""
    table = {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import typer'": [python, "-c", "import typer"],
        MAIN: [python, "-m", "provisioner", *PLAN_ARGS],
        "ortprov dockerfile (flags)": [python, "-m", "provisioner", *DOCKERFILE_ARGS],
    }
    if script:
        table["installed `ortprov` script: plan --json"] = [script, *PLAN_ARGS]
    return table


def phases(python: str, env: dict[str, str], runs: int) -> dict[str, float]:
    """Median seconds of each phase of the command's own work, each in a fresh process."""
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        out = subprocess.run([python, "-c", PHASES], cwd=REPO, env=env, capture_output=True, text=True, check=True)
        for key, value in json.loads(out.stdout).items():
            samples.setdefault(key, []).append(value)
    return {key: statistics.median(values) for key, values in samples.items()}


def main() -> None:
    """Run the benchmark and print Markdown."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs ortprov")
    parser.add_argument("--script", help="also time this installed `ortprov` console script")
    args = parser.parse_args()
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "ORTPROV_CACHE_DIR")}
    env["PYTHONPATH"] = str(REPO)
    env["PYTHONDONTWRITEBYTECODE"] = "0"
    processes = commands(args.python, args.script)
    table: dict[str, list[tuple[float, float]]] = {label: [] for label in processes}
    for argv in processes.values():
        time_once(argv, env)  # warm the page cache and write the .pyc files
    for _ in range(args.runs):
        for label, argv in processes.items():  # interleaved: load changes hit all rows alike
            table[label].append(time_once(argv, env))
    print(
        f"{args.runs} runs each, interleaved; load average {os.getloadavg()[0]:.2f} at the end; {os.cpu_count()} CPUs\n"
    )
    print("| process | median wall s | min wall s | median CPU s |")
    print("|---|---|---|---|")
    for label, rows in table.items():
        walls = [wall for wall, _ in rows]
        cpus = [cpu for _, cpu in rows]
        print(f"| {label} | {statistics.median(walls):.3f} | {min(walls):.3f} | {statistics.median(cpus):.3f} |")
    median = statistics.median(wall for wall, _ in table[MAIN])
    verdict = "met" if median < TARGET else "NOT met"
    print(f"\nTarget < {TARGET} s: {verdict} (median {median:.3f} s).\n")
    print("The command's own work, in-process (median of fresh processes):\n")
    for key, value in phases(args.python, env, max(3, args.runs // 3)).items():
        print(f"- {key}: {value * 1000:.1f} ms")
    print("\nSlowest imports of one `ortprov plan --json` run (cumulative, python -X importtime):\n")
    for micros, module in slowest_imports(processes[MAIN], env):
        print(f"- {module.strip()}: {micros / 1000:.1f} ms")


if __name__ == "__main__":
    main()
