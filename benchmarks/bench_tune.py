"""What `ortprov tune` costs around the measurements it makes, and how steady its figures are.

Usage:
    .venv/bin/python benchmarks/bench_tune.py [--python TARGET] [--model det|rec|cls|FILE] [--budget 60] [--repeat 2]

Runs `ortprov tune MODEL --json` (a child of the target Python, the real rapidocr-onnxruntime 1.4.4 models,
fetched into the test cache when missing) --repeat times and prints, per run: the wall time of the whole
command, the tune's own duration, the seconds the measured variants took in the child (what the user asked
for), and the rest (interpreter start-ups, inspection, the placement profile, one fresh child per variant:
tune's overhead); and per variant the score (first pass + median warm pass), the warm passes' spread, and how
the score moved between repeats (the noise a verdict must beat). On a GPU host, pass the GPU venv's Python.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.rapidocr import CLS, DET, REC, rapidocr_model  # noqa: E402

MODELS = {"det": DET, "rec": REC, "cls": CLS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--model", default="cls")
    parser.add_argument("--shape", action="append", default=None, help="as tune's --shape")
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    model = str(rapidocr_model(MODELS[args.model])) if args.model in MODELS else args.model
    shapes = args.shape if args.shape is not None else (["x=6x3x48x192"] if args.model == "cls" else [])
    scores: dict[str, list[float]] = {}
    for repeat in range(args.repeat):
        argv = [sys.executable, "-m", "provisioner", "tune", model, "--python", args.python, "--budget",
                str(args.budget), "--json"]  # fmt: skip
        for shape in shapes:
            argv += ["--shape", shape]
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=False)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(f"tune failed ({done.returncode}): {done.stderr[-2000:]}")
        data = json.loads(done.stdout)
        report = data["report"]
        measured = sum(m.get("seconds") or 0.0 for m in report["measurements"])
        print(
            f"run {repeat + 1}: wall {wall:.1f} s, tune {report['duration_s']:.1f} s, variants {measured:.1f} s, "
            f"overhead {report['duration_s'] - measured:.1f} s ({len(report['measurements'])} variants, "
            f"{sum(1 for m in report['measurements'] if m['status'] not in ('skipped', 'unavailable'))} measured)"
        )
        for row in data["analysis"]["rows"]:
            if row["score_s"] is not None:
                scores.setdefault(row["label"], []).append(row["score_s"])
                print(
                    f"    {row['label']:<60} total {row['score_s']:8.3f} s  spread {100 * (row['spread'] or 0):5.1f} %"
                    f"  run {row['run_ms']:8.2f} ms"
                )
        print(f"    verdict: {data['analysis']['verdict']}")
    for label, values in scores.items():
        if len(values) > 1:
            moved = (max(values) - min(values)) / statistics.median(values)
            print(f"{label}: totals {', '.join(f'{v:.3f}' for v in values)} s, moved {100 * moved:.1f} % between runs")


if __name__ == "__main__":
    main()
