"""The issue-12 workload, outside ortprov tune: the detection model over images of different sizes, twice over.

    PYTHONPATH=. TARGET_PYTHON tests/gpu/tune_workload.py MODEL [--images 24] [--recommended TUNE.json]

Runs in the target interpreter (onnxruntime-gpu, numpy; ortprov's checkout on PYTHONPATH for the image sizes,
the same spread `ortprov tune` derives). For each variant: a new session, then every image once (pass 1: every
shape new to the session) and once more (pass 2), as the issue measured on the H100. Variants: the CPU, CUDA with
onnxruntime's defaults (EXHAUSTIVE), the report's options (RapidOCR 1.4.4's), HEURISTIC, DEFAULT, and with
--recommended the options `ortprov tune --json` recommended (padding and I/O binding as it says).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

import numpy as np
import onnxruntime as ort

from provisioner.tune.shapes import image_sizes

REPORT = {
    "arena_extend_strategy": "kNextPowerOfTwo",
    "cudnn_conv_algo_search": "EXHAUSTIVE",
    "do_copy_in_default_stream": True,
}
VARIANTS: list[tuple[str, list[Any], dict[str, Any]]] = [
    ("CPU", ["CPUExecutionProvider"], {}),
    ("CUDA, onnxruntime's defaults (EXHAUSTIVE)", [("CUDAExecutionProvider", {}), "CPUExecutionProvider"], {}),
    ("CUDA, the report's options", [("CUDAExecutionProvider", REPORT), "CPUExecutionProvider"], {}),
    (
        "CUDA, HEURISTIC",
        [("CUDAExecutionProvider", {"cudnn_conv_algo_search": "HEURISTIC"}), "CPUExecutionProvider"],
        {},
    ),
    ("CUDA, DEFAULT", [("CUDAExecutionProvider", {"cudnn_conv_algo_search": "DEFAULT"}), "CPUExecutionProvider"], {}),
]


def pad(array: np.ndarray, levels: list[list[int]] | None) -> np.ndarray:
    """Zero-pad each dimension up to the first bucket that holds it."""
    if not levels:
        return array
    target = [next((s for s in sizes if s >= n), n) for n, sizes in zip(array.shape, levels)]  # noqa: B905
    if list(array.shape) == target:
        return array
    out = np.zeros(target, dtype=array.dtype)
    out[tuple(slice(0, n) for n in array.shape)] = array
    return out


def measure(model: str, name: str, providers: list[Any], extra: dict[str, Any], images: list[np.ndarray]) -> None:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    level = extra.get("session_options", {}).get("graph_optimization_level")
    if level:
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    started = time.perf_counter()
    session = ort.InferenceSession(model, sess_options=options, providers=providers)
    create = time.perf_counter() - started
    input_name = session.get_inputs()[0].name
    levels = extra.get("pad_to", {}).get(input_name)
    binding = extra.get("io_binding") and session.get_providers()[0] == "CUDAExecutionProvider"
    passes = []
    for _ in range(2):
        started = time.perf_counter()
        for image in images:
            feed = pad(image, levels)
            if binding:
                io = session.io_binding()
                io.bind_cpu_input(input_name, feed)
                for output in session.get_outputs():
                    io.bind_output(output.name, "cuda", 0)
                session.run_with_iobinding(io)
                [value.numpy() for value in io.get_outputs()]
            else:
                session.run(None, {input_name: feed})
        passes.append(time.perf_counter() - started)
    print(
        f"{name:<60} {session.get_providers()[0]:<24} create {create:6.2f} s  pass 1 {passes[0]:6.2f} s  "
        f"pass 2 {passes[1]:6.2f} s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--images", type=int, default=24)
    parser.add_argument("--recommended", help="the output of `ortprov tune --json`")
    parser.add_argument("--only-recommended", action="store_true", help="the CPU and the recommended")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = image_sizes(args.images)
    if args.one is None:
        print(f"onnxruntime {ort.__version__}, providers {ort.get_available_providers()}")
        print(f"{len(sizes)} images (height x width): {', '.join(f'{h}x{w}' for h, w in sizes)}")
        print("each variant in a fresh process; pass 1: every shape new to the session, pass 2: all seen")
    rng = np.random.RandomState(0)
    images = [(rng.random_sample((1, 3, h, w)) * 2 - 1).astype("float32") for h, w in sizes]
    variants = list(VARIANTS)
    if args.only_recommended:
        variants = [variants[0]]
    if args.recommended:
        with open(args.recommended, encoding="utf-8") as handle:
            rec = json.load(handle)["analysis"]["recommendation"]
        if rec:
            options = dict(rec["provider_options"])
            if options.pop("enable_cuda_graph", None) and args.one is None:
                print("(enable_cuda_graph left out here: a CUDA graph needs fixed device buffers, this loop has none)")
            providers: list[Any] = [(rec["provider"], options), "CPUExecutionProvider"]
            if rec["provider"] == "CPUExecutionProvider":
                providers = ["CPUExecutionProvider"]
            if args.one is None:
                print(
                    f"recommended by ortprov tune: {json.dumps(rec['provider_options'])} {rec['session_options']} "
                    f"io_binding={rec['io_binding']} pad_to={rec['pad_to']}"
                )
            variants.append((f"recommended: {rec['label']}"[:60], providers, rec))
    if args.one is not None:
        name, providers, extra = variants[args.one]
        measure(args.model, name, providers, extra, images)
        return
    for index in range(len(variants)):  # each in a fresh process: none inherits another's loaded kernels
        argv = [sys.executable, __file__, *sys.argv[1:], "--one", str(index)]
        subprocess.run(argv, check=False)


if __name__ == "__main__":
    main()
