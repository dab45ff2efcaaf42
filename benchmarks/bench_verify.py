"""`ortprov verify` end to end, and the phases inside the verify child.

Usage:
    .venv/bin/python benchmarks/bench_verify.py [--runs 5] [--python PATH] [--static]

For each run: the wall time of `run_verify(python)` (child start, import onnxruntime, sessions, runs, JSON)
and of the whole `ortprov verify` process, plus the child's own phases from its report: import, GPU-session
create / first run / steady median, CPU session, and the child's duration. Prints a Markdown table (median
and minimum). On a GPU host pass --python pointing at a venv with onnxruntime-gpu; here (no GPU) the same
code path runs against the CPU onnxruntime (the CPU-fallback case). Target on the H100 host: verify < 3 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from provisioner.verify import run_verify  # noqa: E402

TARGET_S = 3.0


def one_run(python: str, static: bool) -> dict[str, float]:
    """Seconds of one run_verify call, one CLI process, and the phases the child reported."""
    started = time.perf_counter()
    report = run_verify(python, static=static)
    figures = {"run_verify (child, in-process call)": time.perf_counter() - started}
    env = {**os.environ, "NO_COLOR": "1"}
    argv = [sys.executable, "-m", "provisioner", "verify", "--python", python]
    if static:
        argv.append("--static")
    started = time.perf_counter()
    subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    figures["ortprov verify (whole process)"] = time.perf_counter() - started
    if report.duration_s is not None:
        figures["  child process (start to exit, as the parent saw it)"] = report.duration_s
    if report.ort and report.ort.import_s is not None:
        figures["  import onnxruntime"] = report.ort.import_s
    for check in report.checks:
        if check.gpu:
            label = "GPU" if check.gpu_first else "asked-for-GPU (fell back)"
            figures[f"  {check.model} {label} session create"] = check.gpu.create_s
            figures[f"  {check.model} {label} first run"] = check.gpu.first_run_s
            if check.gpu.median_run_ms is not None:
                figures[f"  {check.model} {label} steady run (ms)"] = check.gpu.median_run_ms
        if check.cpu and check.cpu.median_run_ms is not None:
            figures[f"  {check.model} CPU session create"] = check.cpu.create_s
            figures[f"  {check.model} CPU steady run (ms)"] = check.cpu.median_run_ms
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--python", default=str(REPO / ".venv" / "bin" / "python"))
    parser.add_argument("--static", action="store_true", help="time --static instead of a session")
    args = parser.parse_args()
    runs = [one_run(args.python, args.static) for _ in range(args.runs)]
    print(f"python: {args.python}; runs: {args.runs}; static: {args.static}\n")
    print("| what | median s | min s |\n|---|---|---|")
    for key in runs[0]:
        values = [r[key] for r in runs if key in r]
        print(f"| {key} | {statistics.median(values):.3f} | {min(values):.3f} |")
    worst = statistics.median(r["ortprov verify (whole process)"] for r in runs)
    verdict = "met" if worst < TARGET_S else "NOT met"
    print(f"\ntarget: ortprov verify < {TARGET_S} s -> {verdict} (median {worst:.2f} s)")


if __name__ == "__main__":
    main()
