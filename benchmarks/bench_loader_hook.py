"""What the loader hook costs: interpreter start-up, and `import onnxruntime` + the first CUDA session.

Usage:
    .venv/bin/python benchmarks/bench_loader_hook.py --python VENV/bin/python [--runs 15] [--model M.onnx]

The venv must hold the hook (`ortprov apply` installed it). Each figure is the median (and minimum) of whole
processes of that interpreter:
  - `python -c pass` with the hook's .pth line, and with it switched off (the .pth renamed for the run);
  - `import onnxruntime` alone, with and without the hook;
  - `import onnxruntime` + a CUDA session on --model (default: verify's check model) + one run, three ways:
    with the hook (plain code), without it but with an explicit onnxruntime.preload_dlls(), and plain
    without either (on a machine whose only CUDA libraries are the wheels', that one falls back to the CPU:
    its providers are printed).
The session rows need a GPU; on a machine without one, pass --no-session.
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
CHECK_MODEL = REPO / "provisioner" / "verify" / "models" / "check.onnx"
SESSION = """
import numpy as np
{preload}
s = ort.InferenceSession({model!r}, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
feeds = {{i.name: np.ones([d if isinstance(d, int) else 1 for d in i.shape], np.float32) for i in s.get_inputs()}}
s.run(None, feeds)
print(s.get_providers()[0])
"""


def pth_of(python: str) -> Path:
    """The hook's .pth file in the interpreter's site-packages."""
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    return Path(site) / "ortprov-loader.pth"


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Seconds and last stdout line of one process; fails loudly."""
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[-1][:60]!r} failed: {done.stderr[-400:]}")
    return elapsed, (done.stdout.strip().splitlines() or [""])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--model", default=str(CHECK_MODEL))
    parser.add_argument("--no-session", action="store_true", help="skip the CUDA session rows (no GPU here)")
    args = parser.parse_args()
    pth = pth_of(args.python)
    if not pth.is_file():
        raise SystemExit(f"no loader hook at {pth}: apply with ortprov first")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    session = SESSION.format(preload="", model=args.model)
    variants = [  # (what, how, code, with the hook's .pth)
        ("`python -c pass`", "hook", "pass", True),
        ("`python -c pass`", "no hook", "pass", False),
        ("`import onnxruntime`", "hook", "import onnxruntime as ort", True),
        ("`import onnxruntime`", "no hook", "import onnxruntime as ort", False),
    ]
    if not args.no_session:
        variants += [
            ("import + first CUDA session + run", "hook (plain code)", "import onnxruntime as ort" + session, True),
            ("import + first CUDA session + run", "no hook, preload_dlls()",
             "import onnxruntime as ort\nort.preload_dlls()" + session, False),
            ("import + first CUDA session + run", "no hook, plain code", "import onnxruntime as ort" + session, False),
        ]  # fmt: skip
    times: dict[int, list[float]] = {i: [] for i in range(len(variants))}
    outs: dict[int, str] = {}
    off = pth.with_name(pth.name + ".off")
    try:
        for _ in range(args.runs):  # interleaved, so that a busy moment hits every variant alike
            for number, (_, _, code, hooked) in enumerate(variants):
                if hooked != pth.exists():
                    (off.rename(pth) if hooked else pth.rename(off))
                elapsed, outs[number] = run_once([args.python, "-c", code], env)
                times[number].append(elapsed)
    finally:
        if off.exists():
            off.rename(pth)
    print(f"runs: {args.runs} each, interleaved; {args.python}")
    print("| what | how | median | min | first provider |")
    print("|---|---|---|---|---|")
    for number, (label, how, code, _) in enumerate(variants):
        median, low = statistics.median(times[number]), min(times[number])
        provider = outs[number] if "Session" in code else ""
        print(f"| {label} | {how} | {median * 1000:.1f} ms | {low * 1000:.1f} ms | {provider} |")


if __name__ == "__main__":
    sys.exit(main())
