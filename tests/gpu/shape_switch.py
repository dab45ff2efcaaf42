"""Where the GPU's time goes on the detection model: a change of input shape vs. a steady run of one shape.

    PYTHONPATH=. TARGET_PYTHON tests/gpu/shape_switch.py MODEL [--images 24] [--repeat 10]

Runs in the target interpreter (onnxruntime-gpu, numpy; ortprov's checkout on PYTHONPATH for the image sizes, the
spread `ortprov tune` derives). For the CPU, CUDA EXHAUSTIVE and CUDA HEURISTIC, each in a fresh process:

  1. one shape repeated: three sizes (the smallest, the middle and the largest image), each run once (new to the
     session) then --repeat times: the first run and the median of the repeats;
  2. two shapes seen before, alternating A, B, A, B (--repeat rounds): the median run and its extra over the
     same shapes' steady runs (the cost of a change of shape, with no new shape);
  3. all images zero-padded to ONE shape (the largest side per dimension), twice over: pass 1 (one new shape),
     pass 2;
then 4. an ONNX Runtime profile (enable_profiling) of a CUDA EXHAUSTIVE session: two seen shapes alternating,
then one shape repeated, kernel time per op type per run in each phase, and the runs' time outside the kernels.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
import onnxruntime as ort

from provisioner.tune.shapes import image_sizes

VARIANTS: list[tuple[str, list[Any]]] = [
    ("CPU", ["CPUExecutionProvider"]),
    ("CUDA EXHAUSTIVE", [("CUDAExecutionProvider", {"cudnn_conv_algo_search": "EXHAUSTIVE"}), "CPUExecutionProvider"]),
    ("CUDA HEURISTIC", [("CUDAExecutionProvider", {"cudnn_conv_algo_search": "HEURISTIC"}), "CPUExecutionProvider"]),
]
CHILD_TIMEOUT_S = 240


def images(sizes: list[tuple[int, int]]) -> list[np.ndarray]:
    rng = np.random.RandomState(0)
    return [(rng.random_sample((1, 3, h, w)) * 2 - 1).astype("float32") for h, w in sizes]


def timed(session: Any, name: str, image: np.ndarray) -> float:
    started = time.perf_counter()
    session.run(None, {name: image})
    return (time.perf_counter() - started) * 1000.0


def pad(image: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(shape, dtype=image.dtype)
    out[tuple(slice(0, n) for n in image.shape)] = image
    return out


def session_for(providers: list[Any], profile: str | None = None) -> Any:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    if profile:
        options.enable_profiling = True
        options.profile_file_prefix = profile
    return ort.InferenceSession(ARGS.model, sess_options=options, providers=providers)


def three(feeds: list[np.ndarray]) -> list[np.ndarray]:
    by_size = sorted(feeds, key=lambda a: a.size)
    return [by_size[0], by_size[len(by_size) // 2], by_size[-1]]


def one_variant(index: int) -> None:
    label, providers = VARIANTS[index]
    feeds = images(image_sizes(ARGS.images))
    session = session_for(providers)
    name = session.get_inputs()[0].name
    print(f"== {label} (session on {session.get_providers()[0]})", flush=True)
    steady: dict[tuple[int, ...], float] = {}
    for image in three(feeds):
        first = timed(session, name, image)
        runs = [timed(session, name, image) for _ in range(ARGS.repeat)]
        steady[image.shape] = statistics.median(runs)
        print(
            f"  one shape repeated  {image.shape[2]}x{image.shape[3]:<5} first run {first:8.1f} ms, then "
            f"{ARGS.repeat} runs: median {steady[image.shape]:7.1f} ms (min {min(runs):.1f}, max {max(runs):.1f})",
            flush=True,
        )
    a, b = three(feeds)[:2]
    alternating: dict[tuple[int, ...], list[float]] = {a.shape: [], b.shape: []}
    for _ in range(ARGS.repeat):
        for image in (a, b):
            alternating[image.shape].append(timed(session, name, image))
    every = [run for runs in alternating.values() for run in runs]
    extra = [run - steady[shape] for shape, runs in alternating.items() for run in runs]
    print(
        f"  alternating {a.shape[2]}x{a.shape[3]} / {b.shape[2]}x{b.shape[3]} (both seen), {ARGS.repeat} rounds: "
        f"median run {statistics.median(every):7.1f} ms, extra per change of shape {statistics.median(extra):+7.1f} ms",
        flush=True,
    )
    del session
    one = tuple(max(f.shape[i] for f in feeds) for i in range(4))
    session = session_for(providers)
    passes = []
    for _ in range(2):
        started = time.perf_counter()
        for image in feeds:
            session.run(None, {name: pad(image, one)})
        passes.append(time.perf_counter() - started)
    print(
        f"  all {len(feeds)} images padded to one shape {one[2]}x{one[3]}: pass 1 {passes[0]:6.2f} s, "
        f"pass 2 {passes[1]:6.2f} s ({passes[1] / len(feeds) * 1000:.1f} ms a run)",
        flush=True,
    )


def profile() -> None:
    """Kernel time per op type: two seen shapes alternating, then one shape repeated (CUDA EXHAUSTIVE)."""
    label, providers = VARIANTS[1]
    feeds = images(image_sizes(ARGS.images))
    a, b = three(feeds)[:2]
    folder = tempfile.mkdtemp(prefix="ortprov-switch-profile-")
    session = session_for(providers, os.path.join(folder, "profile"))
    name = session.get_inputs()[0].name
    if session.get_providers()[0] != "CUDAExecutionProvider":
        print(f"== profile: no CUDA session ({session.get_providers()}); skipped")
        return
    phases = ["warm-up"] * 2 + ["alternating"] * (2 * ARGS.repeat) + ["same shape"] * ARGS.repeat
    session.run(None, {name: a})
    session.run(None, {name: b})
    for _ in range(ARGS.repeat):
        session.run(None, {name: a})
        session.run(None, {name: b})
    for _ in range(ARGS.repeat):
        session.run(None, {name: a})
    with open(session.end_profiling(), encoding="utf-8") as handle:
        events = json.load(handle)
    runs = sorted((e for e in events if e.get("name") == "model_run"), key=lambda e: e["ts"])
    if len(runs) != len(phases):
        print(f"== profile: {len(runs)} model_run events for {len(phases)} runs; the phases cannot be told apart")
        return
    per_phase: dict[str, dict[str, float]] = {"alternating": {}, "same shape": {}}
    run_ms: dict[str, float] = {"alternating": 0.0, "same shape": 0.0}
    kernel_ms: dict[str, float] = {"alternating": 0.0, "same shape": 0.0}
    for run, phase in zip(runs, phases):  # noqa: B905 - the target may be Python 3.8
        if phase in run_ms:
            run_ms[phase] += run["dur"] / 1000.0
    for event in events:
        if event.get("cat") != "Node" or not str(event.get("name", "")).endswith("_kernel_time"):
            continue
        phase = next(
            (p for r, p in zip(runs, phases) if r["ts"] <= event["ts"] <= r["ts"] + r["dur"]),  # noqa: B905
            None,
        )
        if phase not in per_phase:
            continue
        op = (event.get("args") or {}).get("op_name", "?")
        per_phase[phase][op] = per_phase[phase].get(op, 0.0) + event["dur"] / 1000.0
        kernel_ms[phase] += event["dur"] / 1000.0
    counts = {"alternating": 2 * ARGS.repeat, "same shape": ARGS.repeat}
    print(f"== profile, {label}: {a.shape[2]}x{a.shape[3]} / {b.shape[2]}x{b.shape[3]} alternating, then one repeated")
    for phase in ("alternating", "same shape"):
        n = counts[phase]
        print(
            f"  {phase}: a run {run_ms[phase] / n:.1f} ms, of which in kernels {kernel_ms[phase] / n:.1f} ms "
            f"(outside them {(run_ms[phase] - kernel_ms[phase]) / n:.1f} ms)"
        )
    ops = sorted(per_phase["alternating"], key=lambda op: -per_phase["alternating"][op])
    print(f"  {'op type':<24} {'alternating ms/run':>20} {'same shape ms/run':>20}")
    for op in ops[:12]:
        alt = per_phase["alternating"][op] / counts["alternating"]
        same = per_phase["same shape"].get(op, 0.0) / counts["same shape"]
        print(f"  {op:<24} {alt:>20.2f} {same:>20.2f}")


def main() -> None:
    if ARGS.one is not None:
        if ARGS.one == len(VARIANTS):
            profile()
        else:
            one_variant(ARGS.one)
        return
    print(f"onnxruntime {ort.__version__}, providers {ort.get_available_providers()}")
    print(f"{ARGS.images} images; each variant in a fresh process; times per run, wall clock", flush=True)
    for index in range(len(VARIANTS) + 1):
        argv = [sys.executable, __file__, *sys.argv[1:], "--one", str(index)]
        try:
            subprocess.run(argv, check=False, timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            print(f"  (step {index} killed after {CHILD_TIMEOUT_S} s)", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--images", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ARGS = parser.parse_args()
    main()
