"""Benchmark: how long loading (parse + validate) the shipped matrix takes, cold, in a fresh process.

    .venv/bin/python benchmarks/bench_matrix_load.py [--runs 20]

Each run starts a new interpreter (no memo, no warm imports) with an empty ORTPROV_CACHE_DIR and measures
`load_matrix()` inside it:
- shipped data: the YAML texts are hashed (SHA-256) and matched with matrices/compiled.json, the validated
  matrix shipped next to them, which is read with json and rebuilt directly (no YAML, no re-validation);
- edited data (a copy of matrices/ with one comment added, so no compiled copy matches): YAML parsed with
  libyaml's CSafeLoader + full validation, then kept as JSON in the cache dir for the next process.
The target is < 30 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
t1 = time.perf_counter()
from provisioner.matrix.load import load_matrix
t2 = time.perf_counter()
m = load_matrix(sys.argv[1]) if len(sys.argv) > 1 else load_matrix(use_cache=False)
t3 = time.perf_counter()
m2 = load_matrix(sys.argv[1]) if len(sys.argv) > 1 else load_matrix(use_cache=False)
t4 = time.perf_counter()
print(json.dumps({"module_import": t2 - t1, "load": t3 - t2, "memo": t4 - t3, "builds": len(m.builds),
                  "yaml_imported": "yaml" in sys.modules}))
"""


def _run(cache_dir: str, directory: str | None = None) -> dict:
    env = {**os.environ, "ORTPROV_CACHE_DIR": cache_dir}
    argv = [sys.executable, "-c", CHILD] + ([directory] if directory else [])
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout)


def _line(name: str, values: list[float]) -> str:
    values = sorted(values)
    median = statistics.median(values)
    return f"{name}: median {median:.1f} ms, min {values[0]:.1f}, max {values[-1]:.1f} (n={len(values)})"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    shipped = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as cache:
            shipped.append(_run(cache))
    edited, again = [], []
    with tempfile.TemporaryDirectory() as work:
        copy = Path(work) / "matrices"
        shutil.copytree(ROOT / "matrices", copy, ignore=shutil.ignore_patterns("*.py", "compiled.json"))
        with open(copy / "tensorrt.yaml", "a", encoding="utf-8") as handle:
            handle.write("# edited\n")
        for _ in range(max(1, args.runs // 4)):
            with tempfile.TemporaryDirectory() as cache:
                edited.append(_run(cache, str(copy)))
                again.append(_run(cache, str(copy)))
    later = shipped
    print(f"builds: {later[0]['builds']}; yaml imported on later loads: {later[0]['yaml_imported']}")
    print(_line("shipped data (compiled.json)", [r["load"] * 1000 for r in shipped]))
    print(_line("edited data, first load (YAML + validation)", [r["load"] * 1000 for r in edited]))
    print(_line("edited data, next process (cached JSON)", [r["load"] * 1000 for r in again]))
    print(_line("import provisioner.matrix.load", [r["module_import"] * 1000 for r in later]))
    print(f"memoized second call in one process: median {statistics.median(r['memo'] * 1e6 for r in later):.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
