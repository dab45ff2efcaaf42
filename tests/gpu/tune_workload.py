"""The issue-21 workload, outside ortprov tune: a model over inputs of different shapes, twice over, and whether
each variant gives the CPU's answers.

    PYTHONPATH=.:$ORT_SITE TARGET_PYTHON tests/gpu/tune_workload.py MODEL [--recommended TUNE.json]
        [--variants cpu,heuristic,graphs,sessions,pad-one] [--table TABLE.md] [--images 24]

Runs in the target interpreter (onnxruntime-gpu, numpy; ortprov's checkout on PYTHONPATH for the very inputs and
shapes `ortprov tune` uses: provisioner/standalone/tune_inputs.py, provisioner/tune/shapes.py). The inputs: text
pages for a detector (24 sizes, multiples of 32 between 480 and 1600), 48-pixel text lines for a recogniser (24
widths from 320 to 1600), normalised as RapidOCR does. Each variant in a fresh process: a new session (or the
per-shape helper the tune recommends, provisioner/standalone/shape_sessions.py: the code a user copies), then every
input once (pass 1: every shape new) and once more (pass 2: all seen), timed. Then, untimed, pass 2's outputs
against the CPU's: for a detector the text regions per page (connected groups, 8 neighbours, of the map above
0.3), for a recogniser the text per line (greedy CTC: the best class per step, repeats merged, blanks dropped),
and tune's own check (provisioner/standalone/tune_compare.py). Last, a markdown table (--table writes it too).

Variants: cpu (the reference), heuristic (CUDA, HEURISTIC, a plain session), exhaustive (onnxruntime's defaults),
graphs (a CUDA graph per input shape, HEURISTIC), sessions (a session per input shape, HEURISTIC), pad-one (every
input zero-padded to the largest shape, HEURISTIC; outputs cropped back), pad-edge (the same with edge values), and
with --recommended the options `ortprov tune --json` recommended (helper, padding as it says).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
import onnxruntime as ort

from provisioner.standalone import shape_sessions, tune_compare, tune_inputs, tune_session
from provisioner.tune import shapes
from provisioner.tune.report import TensorSpec

HEURISTIC = {"cudnn_conv_algo_search": "HEURISTIC"}
CPU = ["CPUExecutionProvider"]
DEFAULT_VARIANTS = "cpu,heuristic,graphs,sessions,pad-one"
LABELS = {
    "cpu": "CPU",
    "exhaustive": "CUDA, onnxruntime's defaults (EXHAUSTIVE)",
    "heuristic": "CUDA, HEURISTIC",
    "graphs": "CUDA, a CUDA graph per input shape (HEURISTIC)",
    "sessions": "CUDA, a session per input shape (HEURISTIC)",
    "pad-one": "CUDA, inputs zero-padded to one shape (HEURISTIC)",
    "pad-edge": "CUDA, inputs edge-padded to one shape (HEURISTIC)",
}


def cuda(options: dict[str, Any]) -> list[Any]:
    return [("CUDAExecutionProvider", dict(options)), "CPUExecutionProvider"]


def workload(model: str, count: int) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """(kind, the runs' shapes, the feeds): tune's own derivation and generator."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model, options, providers=CPU)
    inputs = tuple(TensorSpec(a.name, a.type, tuple(a.shape)) for a in session.get_inputs())
    outputs = tuple(TensorSpec(a.name, a.type, tuple(a.shape)) for a in session.get_outputs())
    runs, _ = shapes.default_sequence(inputs, outputs, count)
    kind = shapes.input_kind(inputs, outputs, runs)
    specs = tune_session.input_specs(session)
    feeds = [
        tune_inputs.make_feed(np, kind, specs, {k: list(v) for k, v in run.items()}, i) for i, run in enumerate(runs)
    ]
    return kind, [dict(run) for run in runs], feeds


class Plain:
    def __init__(
        self, model: str, providers: list[Any], pad_to: dict[str, list[int]] | None = None, mode: str = "zero"
    ):
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.session = ort.InferenceSession(model, options, providers=providers)
        self.pad_to, self.mode = pad_to, mode

    def run(self, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        if self.pad_to:
            feed = tune_inputs.padded_feed(np, feed, self.pad_to, self.mode)
        return self.session.run(None, feed)

    def get_providers(self) -> list[str]:
        return self.session.get_providers()


class Helper(Plain):
    """A shape_sessions helper, as the recommendation pastes it."""

    def __init__(self, model: str, name: str, providers: list[Any], shared_arena: bool = False) -> None:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        if name == "GraphPerShape":
            self.session = shape_sessions.GraphPerShape(model, providers, options)
        else:
            self.session = shape_sessions.SessionPerShape(model, providers, options, shared_arena=shared_arena)
        self.pad_to, self.mode = None, "zero"


def largest(runs: list[dict[str, Any]]) -> dict[str, list[int]]:
    one = shapes.one_shape(tuple(runs))
    return {name: list(dims) for name, dims in (one or runs[0]).items()}


def build(name: str, model: str, runs: list[dict[str, Any]], recommended: dict[str, Any] | None) -> Plain:
    if name == "cpu":
        return Plain(model, CPU)
    if name == "exhaustive":
        return Plain(model, cuda({}))
    if name == "heuristic":
        return Plain(model, cuda(HEURISTIC))
    if name == "graphs":
        return Helper(model, "GraphPerShape", cuda(HEURISTIC))
    if name == "sessions":
        return Helper(model, "SessionPerShape", cuda(HEURISTIC))
    if name in ("pad-one", "pad-edge"):
        return Plain(model, cuda(HEURISTIC), largest(runs), "edge" if name == "pad-edge" else "zero")
    if name == "recommended" and recommended is not None:
        providers = CPU if recommended["provider"] == "CPUExecutionProvider" else cuda(recommended["provider_options"])
        if recommended.get("helper"):
            return Helper(model, recommended["helper"], providers, bool(recommended.get("shared_arena")))
        pad_to = recommended.get("pad_to") or {}
        if pad_to and all(len(sizes) == 1 for dims in pad_to.values() for sizes in dims):
            fixed = {input_name: [sizes[0] for sizes in dims] for input_name, dims in pad_to.items()}
            return Plain(model, providers, fixed, recommended.get("pad_mode") or "zero")
        if pad_to:
            return Buckets(model, providers, pad_to, recommended.get("pad_mode") or "zero")
        return Plain(model, providers)
    raise SystemExit(f"unknown variant {name!r}")


class Buckets(Plain):
    def __init__(self, model: str, providers: list[Any], levels: dict[str, list[list[int]]], mode: str) -> None:
        super().__init__(model, providers)
        self.levels, self.mode = levels, mode

    def run(self, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        target = {
            name: [
                next((s for s in sizes if s >= n), n) for n, sizes in zip(array.shape, self.levels[name], strict=True)
            ]
            for name, array in feed.items()
        }
        return self.session.run(None, tune_inputs.padded_feed(np, feed, target, self.mode))


def decode(probabilities: np.ndarray) -> list[list[int]]:
    """Greedy CTC per line: the best class per step, repeats merged, blanks (0) dropped."""
    lines = []
    for best in probabilities.argmax(axis=-1):
        text, last = [], -1
        for k in best.tolist():
            if k != last and k != 0:
                text.append(k)
            last = k
        lines.append(text)
    return lines


def semantic(kind: str, output: np.ndarray) -> Any:
    """What an OCR pipeline takes from an output: text regions per page, or the text of each line."""
    if kind == "page":
        planes = output.reshape((-1,) + output.shape[-2:]) > tune_compare.MAP_THRESHOLD
        return sum(tune_compare.count_regions(np, plane) for plane in planes)
    return decode(output) if output.ndim == 3 else output.argmax(axis=-1).tolist()


def one(args: argparse.Namespace) -> None:
    """One variant in this process: create, two timed passes, then its answers against the CPU's."""
    kind, runs, feeds = workload(args.model, args.images)
    recommended = None
    if args.recommended:
        with open(args.recommended, encoding="utf-8") as handle:
            recommended = json.load(handle)["analysis"]["recommendation"]
    before = tune_session.memory()
    started = time.perf_counter()
    runner = build(args.one, args.model, runs, recommended)
    create = time.perf_counter() - started
    passes, outputs = [], []
    for number in range(2):
        started = time.perf_counter()
        results = [runner.run(feed) for feed in feeds]
        passes.append(time.perf_counter() - started)
        if number == 0:
            after = tune_session.memory()
        outputs = results
    gpu = None if after["gpu_mb"] is None or before["gpu_mb"] is None else after["gpu_mb"] - before["gpu_mb"]
    result: dict[str, Any] = {
        "variant": args.one,
        "provider": runner.get_providers()[0],
        "create_s": round(create, 3),
        "pass_s": [round(p, 3) for p in passes],
        "gpu_mb": gpu,
    }
    meanings = [
        semantic(kind, out[0][tuple(slice(0, s) for s in ref_shape(args, i, out[0]))]) for i, out in enumerate(outputs)
    ]
    if args.one == "cpu":
        for index, out in enumerate(outputs):
            tune_compare.save_reference(np, args.reference, index, out)
        with open(os.path.join(args.reference, "meanings.json"), "w", encoding="utf-8") as handle:
            json.dump(meanings, handle)
        result["check"] = "reference"
    else:
        comparison = tune_compare.Comparison([f"output{i}" for i in range(len(outputs[0]))])
        for index, out in enumerate(outputs):
            reference = tune_compare.load_reference(np, args.reference, index, len(out))
            if reference is not None:
                comparison.add(np, index, reference, out)
        summary = comparison.summary()
        worst = max(summary["outputs"], key=lambda o: o["share_past"])
        result["check"] = {"agrees": summary["agrees"], "share_past": worst["share_past"], "max_abs": worst["max_abs"]}
        with open(os.path.join(args.reference, "meanings.json"), encoding="utf-8") as handle:
            expected = json.load(handle)
        result["same"] = sum(1 for a, b in zip(expected, meanings, strict=True) if a == b)
        result["differ"] = [[i + 1, a, b] for i, (a, b) in enumerate(zip(expected, meanings, strict=True)) if a != b]
    result["kind"] = kind
    result["meanings"] = meanings if kind == "page" else [len(m) for m in meanings]
    print("RESULT " + json.dumps(result), flush=True)


def ref_shape(args: argparse.Namespace, index: int, output: np.ndarray) -> tuple[int, ...]:
    """The reference's output shape for input `index` (a padded variant's output is cropped to it)."""
    if args.one == "cpu":
        return output.shape
    reference = tune_compare.load_reference(np, args.reference, index, 1)
    return reference[0].shape if reference else output.shape


def agreement(kind: str, result: dict[str, Any], count: int) -> str:
    check = result.get("check")
    if check == "reference":
        return "reference"
    if not isinstance(check, dict):
        return "-"
    what = "pages with the CPU's text regions" if kind == "page" else "lines with the CPU's text"
    head = f"{result['same']}/{count} {what}"
    if result["differ"]:
        shown = ", ".join(f"p{i}: {a}->{b}" if kind == "page" else f"line {i}" for i, a, b in result["differ"][:4])
        head += f" ({shown}{', ...' if len(result['differ']) > 4 else ''})"
    verdict = "agrees" if check["agrees"] else "CHANGES"
    return (
        f"{head}; tune's check: {verdict} ({check['share_past']:.3%} past tolerance, "
        f"max abs diff {check['max_abs']:.3g})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--images", type=int, default=24)
    parser.add_argument("--recommended", help="the output of `ortprov tune --json`")
    parser.add_argument("--variants", default=DEFAULT_VARIANTS)
    parser.add_argument("--table", help="also write the markdown table here")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--reference", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        one(args)
        return
    names = [n for n in args.variants.split(",") if n]
    recommended = None
    if args.recommended:
        with open(args.recommended, encoding="utf-8") as handle:
            recommended = json.load(handle)["analysis"]["recommendation"]
        if recommended:
            names.append("recommended")
        else:
            print(f"{args.recommended} holds no recommendation (the tune measured too little): not run")
    model_name = os.path.basename(args.model)
    print(f"onnxruntime {ort.__version__}, providers {ort.get_available_providers()}; {model_name}")
    kind, runs, _ = workload(args.model, args.images)
    print(
        f"{len(runs)} inputs ({kind}s): " + ", ".join("x".join(str(d) for d in list(r.values())[0][2:]) for r in runs)
    )
    if recommended:
        print(
            f"recommended by ortprov tune: {recommended['label']}: {json.dumps(recommended['provider_options'])} "
            f"helper={recommended.get('helper')} pad_to={recommended.get('pad_to')} mode={recommended.get('pad_mode')}"
        )
    print("each variant in a fresh process; pass 1: every shape new to it, pass 2: all seen; answers from pass 2")
    results = []
    with tempfile.TemporaryDirectory(prefix="tune-workload-") as reference:
        for name in names:
            argv = [sys.executable, __file__, *sys.argv[1:], "--one", name, "--reference", reference]
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            found = [line[7:] for line in done.stdout.splitlines() if line.startswith("RESULT ")]
            if not found:
                tail = (done.stderr.strip().splitlines() or ["no output"])[-3:]
                print(f"{name}: failed (exit {done.returncode}): {' | '.join(tail)}", flush=True)
                results.append({"variant": name, "failed": " | ".join(tail)[:300]})
                continue
            result = json.loads(found[0])
            results.append(result)
            p1, p2 = result["pass_s"]
            print(
                f"{name:<12} {result['provider']:<22} create {result['create_s']:6.2f} s  pass 1 {p1:6.2f} s  "
                f"pass 2 {p2:6.2f} s  {agreement(kind, result, len(runs))}",
                flush=True,
            )
    cpu = next((r for r in results if r.get("variant") == "cpu" and "pass_s" in r), None)
    lines = [
        "| model | variant | create s | pass 1 s | pass 2 s | both | vs CPU (both / pass 2) | GPU MiB | answers |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        label = LABELS.get(r["variant"], f"recommended: {recommended['label']}" if recommended else r["variant"])
        if "pass_s" not in r:
            lines.append(f"| {model_name} | {label} | failed: {r['failed']} | | | | | | |")
            continue
        both = sum(r["pass_s"])
        ratio = "-"
        if cpu is not None:
            ratio = f"{sum(cpu['pass_s']) / both:.2f}x / {cpu['pass_s'][1] / r['pass_s'][1]:.2f}x"
        gpu = "-" if r.get("gpu_mb") is None else f"{r['gpu_mb']:.0f}"
        lines.append(
            f"| {model_name} | {label} | {r['create_s']:.2f} | {r['pass_s'][0]:.2f} | {r['pass_s'][1]:.2f} | "
            f"{both:.2f} | {ratio} | {gpu} | {agreement(kind, r, len(runs))} |"
        )
    if cpu is not None and kind == "page":
        lines.append(f"\nCPU text regions per page: {cpu['meanings']}")
    table = "\n".join(lines)
    print("\n" + table, flush=True)
    if args.table:
        with open(args.table, "a", encoding="utf-8") as handle:
            handle.write(table + "\n\n")


if __name__ == "__main__":
    main()
