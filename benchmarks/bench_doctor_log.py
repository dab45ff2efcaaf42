"""`ortprov doctor --log` on big and hostile logs: wall time and peak memory (max RSS) of the real CLI process.

Cases (issue 11): a 20 MB log of real corpus text repeated, a 200 MiB log, a single 100 kB and 200 kB line built
from the patterns' worst cases, and /dev/zero (must be refused). Each case runs `ortprov doctor --log FILE` in a
child process (`.venv/bin/ortprov`), best of --repeat runs; peak memory from wait4's ru_maxrss.

Usage:
  .venv/bin/python benchmarks/bench_doctor_log.py [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "data" / "logs"
ORTPROV = Path(sys.executable).with_name("ortprov")

# worst cases for line patterns: long runs of what a pattern repeats, with its anchor word never completing
HOSTILE = (
    "CUDA failure " + "9" * 40 + " ",
    "Driver Version: 535.1 " + " " * 60,
    "a" * 200 + ".so.1.2.3.4 ",
    "GPU " + "x" * 50 + " slower ",
    "[ 'CPUExecutionProvider', ",
    "Failed to load library " + "w" * 120 + " ",
    "results " + "y" * 70 + " ",
    "Python3.1 cp31 ",
)


def _corpus_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(LOGS.glob("*.log")))


def _distinct_lines(size: int) -> str:
    """A run log whose lines all differ (timestamps, counters), ending in a real error: the common big log."""
    tail = (LOGS / "seed002-linux-libcudnn9.log").read_text(encoding="utf-8")
    lines, total, i = [], 0, 0
    while total < size - len(tail):
        stamp = f"2026-11-23 12:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}"
        line = f"{stamp} INFO worker-{i % 7} frame {i} took {i % 97}.{i % 13}"
        lines.append(line)
        total += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n" + tail


def _write(folder: Path, name: str, text: str, size: int) -> Path:
    path = folder / name
    block = text.encode("utf-8")
    with open(path, "wb") as out:
        written = 0
        while written < size:
            piece = block[: size - written]
            out.write(piece)
            written += len(piece)
    return path


def _run(log: str) -> tuple[float, float, int]:
    """(seconds, peak MiB, exit code) of one `ortprov doctor --log LOG`."""
    start = time.perf_counter()
    proc = subprocess.Popen([str(ORTPROV), "doctor", "--log", log], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    return seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def write_cases(folder: Path) -> dict[str, str]:
    """Write the logs; run in a child process, so that the measuring parent stays small (a forked child's
    ru_maxrss starts at its parent's size)."""
    corpus = _corpus_text()
    return {
        "20 MB log (distinct lines, an error at the end)": str(
            _write(folder, "20mb-distinct.log", _distinct_lines(20 * 1000 * 1000), 20 * 1000 * 1000)
        ),
        "20 MB log (corpus text repeated)": str(_write(folder, "20mb.log", corpus, 20 * 1000 * 1000)),
        "200 MiB log (corpus text repeated)": str(_write(folder, "200mib.log", corpus, 200 * 1024 * 1024)),
        "one 100 kB line (worst cases)": str(_write(folder, "100k.log", "".join(HOSTILE), 100 * 1000)),
        "one 200 kB line (worst cases)": str(_write(folder, "200k.log", "".join(HOSTILE), 200 * 1000)),
        "one 1 MB line (worst cases)": str(_write(folder, "1m.log", "".join(HOSTILE), 1000 * 1000)),
        "/dev/zero": "/dev/zero",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--write", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        print(json.dumps(write_cases(Path(args.write))))
        return 0
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        written = subprocess.run(
            [sys.executable, __file__, "--write", tmp], check=True, capture_output=True, text=True
        ).stdout
        for label, log in json.loads(written).items():
            runs = [_run(log) for _ in range(args.repeat)]
            best = min(runs)
            results.append(
                {
                    "case": label,
                    "seconds": round(best[0], 3),
                    "peak_mib": round(max(r[1] for r in runs), 1),
                    "exit": best[2],
                }
            )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"{'case':48} {'best s':>8} {'peak MiB':>9} {'exit':>5}")
        for r in results:
            print(f"{r['case']:48} {r['seconds']:8.3f} {r['peak_mib']:9.1f} {r['exit']:5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
