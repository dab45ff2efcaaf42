"""Measurements -> the table, the verdict, the explanations and the recommended options (pure).

A variant's score is the sequence twice over: once with every shape new to the session (the first pass), once
with every shape seen (the median warm pass), as an application meets them. The verdict compares the best CUDA
variant's score with the CPU's. Every explanation quotes the measurement it comes from.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from provisioner.tune import variants as plan
from provisioner.tune.report import Measurement, TuneReport, clean_log_text
from provisioner.tune.shapes import bucket_levels, changes, describe_feed, distinct

GPU_WINS_BY = 1.1  # the GPU "wins" when its score is at least this much better than the CPU's
SEARCH_SHARE = 0.2  # per-shape search worth explaining: more than this share of the variant's score
SWITCH_SHARE = 0.5  # a change of shape worth explaining: its extra cost above this share of a steady run
SWITCH_MIN_MS = 1.0  # ... and above this (timer noise)
SMALL_RUN_MS = 3.0  # the CPU runs the model in less than this: too small for a GPU to win by much
CUDA_PROVIDER = "CUDAExecutionProvider"
MEMCPY_OPS = frozenset({"MemcpyToHost", "MemcpyFromHost"})
_FALLBACK = re.compile(r"OP (\w+)\((.*?)\) running in Fallback mode")
PAD_AND_CROP = (
    "your pipeline must zero-pad every input to this shape and crop the outputs back to each input's size "
    "(an OCR pipeline can: the detector's map is cropped to the image)"
)
RAPIDOCR_SECTIONS = {"det": "Det", "rec": "Rec", "cls": "Cls"}
# RapidOCR 1.4.4, rapidocr_onnxruntime/utils/infer_engine.py, OrtInferSession._get_ep_list: the CUDA options
# every session gets when `use_cuda: true` (config.yaml has no key for them)
RAPIDOCR_HARD_CODED = {
    "device_id": "0",
    "arena_extend_strategy": "kNextPowerOfTwo",
    "cudnn_conv_algo_search": "EXHAUSTIVE",
    "do_copy_in_default_stream": "True",
}


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    name: str
    label: str
    status: str
    reason: str | None = None
    create_s: float | None = None
    first_pass_s: float | None = None  # every shape new to the session the first time it comes
    new_shape_ms: float | None = None  # mean first run of a new shape
    warm_s: float | None = None  # the median warm pass
    spread: float | None = None  # of the warm passes, relative to their median
    run_ms: float | None = None  # the median steady run (over the sequence's entries)
    score_s: float | None = None  # first pass + warm pass
    vs_cpu: float | None = None  # the CPU's best score / this score (> 1: faster than the CPU)
    same_shape_ms: float | None = None  # a steady run of one shape repeated (the shape-switch runs)
    switch_ms: float | None = None  # the median extra of a run that changes to a shape seen before


@dataclass(frozen=True)
class Explanation:
    """Why the numbers are what they are, from the measurements: a stable code, a title, the evidence."""

    code: str
    title: str
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Recommendation:
    """The winning options three ways: Python provider options, RapidOCR's config.yaml (and what it cannot
    say), JSON."""

    variant: str
    label: str
    provider: str  # CUDAExecutionProvider | CPUExecutionProvider
    provider_options: dict[str, str] = field(default_factory=dict)
    session_options: dict[str, str] = field(default_factory=dict)
    io_binding: bool = False
    pad_to: dict[str, list[list[int]]] = field(default_factory=dict)  # input -> per dimension, the bucket sizes
    python: str = ""
    rapidocr: str = ""


@dataclass(frozen=True)
class Analysis:
    rows: tuple[Row, ...]
    verdict: str
    gpu_wins: bool | None  # None: no CUDA measurement to judge by
    speedup: float | None  # the CPU's score / the best CUDA score
    best_cuda: str | None
    explanations: tuple[Explanation, ...]
    recommendation: Recommendation | None
    summary: str = ""  # where the time goes, in a sentence or two (first under "why")
    best_cpu: str | None = None  # the CPU variant the GPU is compared with (the CPU's best total)


def analyse(report: TuneReport) -> Analysis:
    """The table, the verdict, the explanations and the recommendation of a tune."""
    cpus = [m for m in report.measurements if m.variant.provider == "cpu" and plan.score(m) is not None]
    cpu = min(cpus, key=lambda m: plan.score(m) or 0.0) if cpus else report.measurement(plan.CPU_VARIANT.name)
    cpu_score = plan.score(cpu) if cpu is not None else None
    rows = tuple(_row(m, cpu_score) for m in report.measurements)
    cudas = [m for m in report.measurements if m.variant.provider == "cuda" and plan.score(m) is not None]
    best = min(cudas, key=lambda m: plan.score(m) or 0.0) if cudas else None
    speedup = None
    if best is not None and cpu_score:
        speedup = cpu_score / (plan.score(best) or 1.0)
    verdict, wins = _verdict(report, cpu, best, speedup)
    explanations = tuple(_explain(report, cpu, best))
    summary = _summary(report, cpu, explanations)
    recommendation = None
    if best is not None and wins:
        recommendation = recommend(report, best.variant.name)
    elif cpu is not None and cpu.complete:
        recommendation = recommend(report, cpu.variant.name)
    return Analysis(
        rows,
        verdict,
        wins,
        speedup,
        best.variant.name if best else None,
        explanations,
        recommendation,
        summary,
        cpu.variant.name if cpu is not None else None,
    )


def _row(m: Measurement, cpu_score: float | None) -> Row:
    if not m.cold_ms:
        return Row(m.variant.name, m.variant.label, m.status, m.reason, m.create_s)
    steady = m.steady_ms()
    seen = [cold - warm for cold, warm, new in zip(m.cold_ms, steady, m.new_shape, strict=False) if new]
    firsts = [cold for cold, new in zip(m.cold_ms, m.new_shape, strict=False) if new]
    score = plan.score(m)
    return Row(
        m.variant.name,
        m.variant.label,
        m.status,
        m.reason,
        m.create_s,
        round(m.cold_s, 4),
        round(statistics.mean(firsts), 3) if firsts and seen is not None else None,
        round(m.warm_s, 4) if m.warm_s is not None else None,
        round(plan.spread(m), 4) if m.warm_ms else None,
        round(statistics.median(steady), 3) if steady else None,
        round(score, 4) if score is not None else None,
        round(cpu_score / score, 3) if cpu_score and score else None,
        _round(m.switch.same_shape_ms if m.switch else None),
        _round(m.switch.switch_ms if m.switch else None),
    )


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _verdict(
    report: TuneReport, cpu: Measurement | None, best: Measurement | None, speedup: float | None
) -> tuple[str, bool | None]:
    default = report.measurement(plan.CUDA_DEFAULT.name)
    workload = f"{len(report.sequence)} runs, {distinct(report.sequence)} distinct shapes, twice over"
    if best is None or speedup is None:
        why = default.reason if default is not None and default.reason else "no CUDA variant completed"
        if cpu is None or not cpu.complete:
            return f"nothing to compare: {why}", None
        return f"no GPU verdict: {why}. The CPU runs this workload ({workload}) in {plan.score(cpu):.2f} s.", None
    cpu_s, best_s = plan.score(cpu) if cpu else None, plan.score(best)
    default_part = ""
    default_score = plan.score(default) if default is not None else None
    if default_score and cpu_s and default is not best:
        ratio = cpu_s / default_score
        how = f"{ratio:.2f}x the CPU" if ratio >= 1 else f"{1 / ratio:.1f}x slower than the CPU"
        default_part = f" With onnxruntime's defaults it is {how} ({default_score:.2f} s)."
    bar = "the CPU"
    if cpu is not None and cpu.variant.name != plan.CPU_VARIANT.name:
        bar = f"the CPU's best ({cpu.variant.label})"
    pad_part = ""
    if best.variant.pad_one and report.one_shape is not None:
        pad_part = f" Its inputs are padded to one shape ({describe_feed(report.one_shape)}): {PAD_AND_CROP}."
    if speedup >= GPU_WINS_BY:
        return (
            f"the GPU wins: {best.variant.label} runs this workload ({workload}) in {best_s:.2f} s, "
            f"{speedup:.2f}x {bar} ({cpu_s:.2f} s).{pad_part}{default_part}",
            True,
        )
    slower = f"{1 / speedup:.2f}x slower than" if speedup < 1 else f"only {speedup:.2f}x"
    return (
        f"the GPU does not win: its best, {best.variant.label}, runs this workload ({workload}) in {best_s:.2f} s, "
        f"{slower} {bar} ({cpu_s:.2f} s).{default_part}",
        False,
    )


# -- the explanations ------------------------------------------------------------------------------------------


def search_cost_ms(m: Measurement) -> float | None:
    """Mean extra milliseconds of a new shape's first run over the same shape's steady run."""
    if not m.complete:
        return None
    steady = m.steady_ms()
    extra = [cold - warm for cold, warm, new in zip(m.cold_ms, steady, m.new_shape, strict=False) if new]
    return statistics.mean(extra) if extra else None


def _explain(report: TuneReport, cpu: Measurement | None, best: Measurement | None) -> list[Explanation]:
    found: list[Explanation] = []
    default = report.measurement(plan.CUDA_DEFAULT.name)
    if default is not None and not default.cold_ms and default.status != "skipped":
        found.append(Explanation("cuda-not-measured", f"CUDA did not run: {default.status}", (default.reason or "",)))
    found += _cut_short(report)
    found += _switch(report)
    found += _search(report)
    found += _fallback(report)
    found += _placement(report)
    found += _transfer(report)
    found += _small(report, cpu, best)
    found += _padding(report)
    return found


def _cut_short(report: TuneReport) -> list[Explanation]:
    """Variants stopped early for being far slower than the best: measured in part (their first runs, their
    shape switch), not missing."""
    cut = [m for m in report.measurements if m.status == "cut-short" and m.cold_ms]
    if not cut:
        return []
    title = (
        f"{len(cut)} variant{'s were' if len(cut) > 1 else ' was'} stopped early for being far slower than the best: "
        "measured in part (the first runs, the shape switch), not missing"
    )
    return [Explanation("cut-short", title, tuple(f"{m.variant.label}: {m.reason or m.status}" for m in cut))]


def _search(report: TuneReport) -> list[Explanation]:
    costs = []
    for m in report.measurements:
        if m.variant.provider != "cuda" or plan.score(m) is None:
            continue
        cost = search_cost_ms(m)
        if cost is None:
            continue
        algo = m.effective_options.get(plan.ALGO) or m.variant.provider_options.get(plan.ALGO, "EXHAUSTIVE")
        new = sum(m.new_shape)
        costs.append((m, algo, cost, new, cost * new / 1000.0))
    if not costs:
        return []
    evidence = tuple(
        f"{m.variant.label} ({algo}): a new shape's first run costs {cost:.0f} ms more than its steady run; "
        f"{new} new shapes: {total:.2f} s of its {plan.score(m) or 0:.2f} s"
        for m, algo, cost, new, total in costs
    )
    # the claim is about shapes that change: judged on the variants that meet more than one new shape
    changing = [c for c in costs if c[3] > 1] or costs
    m, _, _, _, total = max(changing, key=lambda c: c[4] / (plan.score(c[0]) or 1.0))
    score = plan.score(m) or 1.0
    share = f"{total:.2f} s of the {score:.2f} s total of {m.variant.label} ({total / score:.0%})"
    if total < SEARCH_SHARE * score:
        title = f"a new input shape costs little here: at most {share}"
        if worst_switch(report) is not None:
            title = (
                f"a new input shape costs little more than a change to a shape seen before (shape-switch): "
                f"at most {share}"
            )
        return [Explanation("per-shape-cost", title, evidence)]
    how = "this first-run cost dominates:" if total > score / 2 else "this first-run cost takes"
    title = (
        "every new input shape pays again for cuDNN's algorithm search (and the arena's growth): with shapes "
        f"that change per image, {how} {share}"
    )
    return [Explanation("per-shape-search", title, evidence)]


def _fallback(report: TuneReport) -> list[Explanation]:
    """cuDNN's "running in Fallback mode" notices, one line per variant and op type (escapes stripped)."""
    evidence = []
    example = ""
    for m in report.measurements:
        nodes: dict[str, list[int]] = {}
        for line in m.log:
            text = clean_log_text(line.text)
            found = _FALLBACK.search(text)
            if found:
                nodes.setdefault(found.group(1), []).append(line.count)
                example = example or text[found.start() :][:120]
            elif "fallback" in text.lower():
                evidence.append(f"{m.variant.label}: {line.count}x {text[:200]}")
        for op, counts in nodes.items():
            each = f"{counts[0]} times each" if len(set(counts)) == 1 else f"{min(counts)} to {max(counts)} times each"
            evidence.append(f"{m.variant.label}: {len(counts)} {op} nodes ran in fallback mode, {each}")
    if not evidence:
        return []
    if example:
        evidence.append(f"(ONNX Runtime's log: {example})")
    return [
        Explanation("conv-fallback", "cuDNN ran convolutions in fallback mode (no algorithm chosen)", tuple(evidence))
    ]


def algorithm(m: Measurement) -> str:
    """The variant's cuDNN algorithm search (what its session reports, else what it asked; "-" on the CPU)."""
    if m.variant.provider != "cuda":
        return "-"
    return m.effective_options.get(plan.ALGO) or m.variant.provider_options.get(plan.ALGO, "EXHAUSTIVE")


def _switches(report: TuneReport) -> list[tuple[Measurement, float, float]]:
    """(measurement, a steady run of one shape, the extra of a change of shape) for each measured switch."""
    found = []
    for m in report.measurements:
        same = m.switch.same_shape_ms if m.switch else None
        extra = m.switch.switch_ms if m.switch else None
        if same is not None and extra is not None:
            found.append((m, same, extra))
    return found


def switch_costly(same: float, extra: float) -> bool:
    return extra > max(SWITCH_MIN_MS, SWITCH_SHARE * same)


def worst_switch(report: TuneReport) -> tuple[Measurement, float, float] | None:
    """The CUDA variant whose change of shape costs the most, when that cost is worth explaining."""
    costly = [f for f in _switches(report) if f[0].variant.provider == "cuda" and switch_costly(f[1], f[2])]
    return max(costly, key=lambda f: f[2]) if costly else None


def _algorithm_only(m: Measurement) -> bool:
    """An unpadded CUDA variant that differs from onnxruntime's defaults in its algorithm search alone."""
    v = m.variant
    return (
        v.provider == "cuda"
        and not v.pad_one
        and not v.padded
        and v.binding == "none"
        and not v.session_options
        and set(v.provider_options) <= {plan.ALGO}
    )


def headline_switches(report: TuneReport) -> list[tuple[str, Measurement, float, float]]:
    """The switch costs worth a headline, each with its own label: onnxruntime's defaults, and the best search
    mode without padding (the lowest total among the algorithm-only variants); the worst CUDA one when neither
    costs anything worth noting."""
    found: list[tuple[str, Measurement, float, float]] = []
    switches = {f[0].variant.name: f for f in _switches(report) if switch_costly(f[1], f[2])}
    default = switches.get(plan.CUDA_DEFAULT.name)
    if default is not None:
        found.append((f"with onnxruntime's defaults ({algorithm(default[0])})", *default))
    modes = [
        switches[m.variant.name]
        for m in report.measurements
        if m.variant.name in switches
        and m.variant.name != plan.CUDA_DEFAULT.name
        and _algorithm_only(m)
        and plan.score(m) is not None
    ]
    if modes:
        best = min(modes, key=lambda f: plan.score(f[0]) or 0.0)
        found.append((f"under {algorithm(best[0])}, the best search mode without padding", *best))
    worst = worst_switch(report)
    if not found and worst is not None:
        found.append((f"with {worst[0].variant.label}", *worst))
    return found


def _switch(report: TuneReport) -> list[Explanation]:
    found = _switches(report)
    if not found:
        return []
    evidence = []
    for m, same, extra in found:
        algo = algorithm(m)
        shapes = ", ".join(describe_feed(feed) for feed in m.switch.shapes) if m.switch else ""
        evidence.append(
            f"{m.variant.label}{f' ({algo})' if algo != '-' else ''}: one shape repeated {same:.1f} ms a run; "
            f"alternating between two shapes seen before ({shapes}) {same + extra:.1f} ms a run: "
            f"{extra:+.1f} ms per change"
        )
    headlines = headline_switches(report)
    if not headlines:
        title = "a change between shapes seen before costs nothing worth noting"
        return [Explanation("no-switch-cost", title, tuple(evidence))]
    costs = "; ".join(
        f"{extra:.0f} ms {label}, where one shape repeated takes {same:.1f} ms a run"
        for label, _, same, extra in headlines
    )
    title = f"each change of input shape, even to a shape seen before, costs {costs}"
    return [Explanation("shape-switch", title, tuple(evidence))]


def _summary(report: TuneReport, cpu: Measurement | None, explanations: tuple[Explanation, ...]) -> str:
    """Where the time goes, in a sentence or two, from the measurements."""
    parts = []
    headlines = headline_switches(report)
    if headlines:
        n = changes(report.sequence)
        label, m, same, extra = headlines[0]
        sentence = (
            f"Where the time goes: {label} each of the {n} changes of input shape in a pass costs about "
            f"{extra:.0f} ms (about {n * extra / 1000:.1f} s a pass), even between shapes seen before, while a run "
            f"of one shape takes {same:.1f} ms"
        )
        for label, m, same, extra in headlines[1:]:
            sentence += (
                f"; {label} ({m.variant.label}) a change costs about {extra:.0f} ms "
                f"(about {n * extra / 1000:.1f} s a pass) and a run of one shape {same:.1f} ms"
            )
        parts.append(sentence + ".")
    padded = [m for m in report.measurements if m.variant.pad_one and m.variant.provider == "cuda"]
    scored = [m for m in padded if plan.score(m) is not None]
    cpu_s = plan.score(cpu) if cpu is not None else None
    if scored and cpu is not None and cpu_s:
        one = min(scored, key=lambda m: plan.score(m) or 0.0)
        parts.append(
            f"With every input padded to one shape (no change of shape, one search), {one.variant.label} runs it "
            f"in {plan.score(one):.2f} s; the CPU's best ({cpu.variant.label}) takes {cpu_s:.2f} s."
        )
    if not parts and explanations:
        first = explanations[0]
        parts.append(f"Where the time goes: {first.title}.")
    return " ".join(parts)


def _placement(report: TuneReport) -> list[Explanation]:
    placement = report.placement
    if placement is None:
        return []
    if placement.error:
        return [Explanation("placement-unknown", "node placement was not profiled", (placement.error,))]
    if not placement.gpu:
        return []
    on_cpu = [g for g in placement.groups if g.provider == "CPUExecutionProvider" and g.op not in MEMCPY_OPS]
    copies = [g for g in placement.groups if g.op in MEMCPY_OPS]
    total_ms = sum(g.ms_per_run for g in placement.groups)
    if not on_cpu:
        evidence = [f"all {placement.node_count} nodes ran on {placement.session_providers[0]}"]
        if copies:
            evidence.append(
                ", ".join(f"{g.count} {g.op} ({g.ms_per_run:.2f} ms per run)" for g in copies)
                + " (the input and output copies)"
            )
        return [Explanation("placement-ok", "every node ran on the GPU", tuple(evidence))]
    count = sum(g.count for g in on_cpu)
    cpu_ms = sum(g.ms_per_run for g in on_cpu)
    evidence = [
        f"{count} of {placement.node_count} nodes ran on the CPU inside the CUDA session "
        f"({cpu_ms:.2f} of {total_ms:.2f} ms of kernel time per run): "
        + ", ".join(f"{g.count} {g.op}" for g in on_cpu[:8]),
        "copies between the devices: "
        + (", ".join(f"{g.count} {g.op} ({g.ms_per_run:.2f} ms per run)" for g in copies) or "none profiled"),
    ]
    evidence += [f"on the CPU: {node.name} ({node.op})" for node in placement.cpu_nodes[:5]]
    return [
        Explanation("nodes-on-cpu", "ONNX Runtime placed nodes on the CPU inside the CUDA session", tuple(evidence))
    ]


def _transfer(report: TuneReport) -> list[Explanation]:
    for m in report.measurements:
        if m.variant.binding == "none" or not m.complete or not m.compute_ms:
            continue
        copy_in = sum(Measurement.medians(m.copy_in_ms))
        compute = sum(Measurement.medians(m.compute_ms))
        copy_out = sum(Measurement.medians(m.copy_out_ms))
        total = copy_in + compute + copy_out
        if total <= 0:
            continue
        share = (copy_in + copy_out) / total
        evidence = (
            f"{m.variant.label}, a warm pass: inputs to the GPU {copy_in:.1f} ms, compute {compute:.1f} ms, "
            f"outputs back {copy_out:.1f} ms ({share:.0%} copies)",
        )
        if copy_in + copy_out > compute:
            title = f"the copies to and from the GPU cost more than the compute ({share:.0%} of a warm pass)"
            return [Explanation("transfer-bound", title, evidence)]
        title = f"the compute takes most of a warm pass ({1 - share:.0%}); the copies to and from the GPU {share:.0%}"
        return [Explanation("compute-bound", title, evidence)]
    return []


def _small(report: TuneReport, cpu: Measurement | None, best: Measurement | None) -> list[Explanation]:
    if cpu is None or best is None or not cpu.complete:
        return []
    cpu_run = statistics.median(cpu.steady_ms())
    gpu_run = statistics.median(best.steady_ms())
    if cpu_run >= SMALL_RUN_MS or gpu_run * GPU_WINS_BY < cpu_run:
        return []
    return [
        Explanation(
            "too-small-for-gpu",
            "the model is too small for the GPU to win: a run's fixed costs (kernel launches, copies, "
            "synchronisation) outweigh its compute",
            (f"a steady run: CPU {cpu_run:.2f} ms, {best.variant.label} {gpu_run:.2f} ms",),
        )
    ]


def _padding(report: TuneReport) -> list[Explanation]:
    padded = [m for m in report.measurements if m.variant.padded and plan.score(m) is not None]
    if not padded or not report.buckets:
        return []
    evidence = []
    for m in padded:
        base = report.measurement(m.variant.base or "")
        base_part = f" against {plan.score(base):.2f} s unpadded" if base is not None and plan.score(base) else ""
        evidence.append(f"{m.variant.label}: {plan.score(m):.2f} s{base_part}")
    levels = bucket_levels(report.buckets)
    sizes = "; ".join(
        f"{name} dimension {i}: {values}"
        for name, dims in levels.items()
        for i, values in enumerate(dims)
        if len(values) > 1
    )
    title = (
        f"padding to {distinct(report.buckets)} shape buckets instead of {distinct(report.sequence)} shapes ({sizes})"
    )
    return [Explanation("padding", title, tuple(evidence))]


# -- the recommendation, three ways ----------------------------------------------------------------------------


def recommend(report: TuneReport, name: str) -> Recommendation:
    """The options of the measured variant `name`, as Python, as RapidOCR configuration, and as data."""
    m = report.measurement(name)
    if m is None:
        raise KeyError(name)
    variant = m.variant
    cuda = variant.provider == "cuda"
    options = dict(variant.provider_options)
    if cuda and plan.ALGO not in options:
        options[plan.ALGO] = m.effective_options.get(plan.ALGO, "EXHAUSTIVE")  # say it: RapidOCR sets its own
    fixed = distinct(report.sequence) == 1 or variant.pad_one
    options = {k: v for k, v in options.items() if k != "enable_cuda_graph" or fixed}
    pad_to = bucket_levels(report.buckets) if variant.padded and report.buckets else {}
    if variant.pad_one and report.one_shape is not None:
        pad_to = bucket_levels((report.one_shape,))
    provider = plan.CUDA if cuda else "CPUExecutionProvider"
    return Recommendation(
        variant=variant.name,
        label=variant.label,
        provider=provider,
        provider_options=options,
        session_options=dict(variant.session_options),
        io_binding=variant.binding != "none",
        pad_to=pad_to,
        python=_python(report, provider, options, variant.session_options, pad_to, variant.binding != "none"),
        rapidocr=_rapidocr(report, cuda, options, variant.session_options, pad_to),
    )


def _python(
    report: TuneReport,
    provider: str,
    options: dict[str, str],
    session_options: dict[str, str],
    pad_to: dict[str, list[list[int]]],
    io_binding: bool,
) -> str:
    lines = ["import onnxruntime as ort", "", "options = ort.SessionOptions()"]
    for key, value in session_options.items():
        if key == "graph_optimization_level":
            lines.append(f"options.graph_optimization_level = ort.GraphOptimizationLevel.{value}")
        else:
            lines.append(f"options.{key} = {value!r}")
    if provider == "CPUExecutionProvider":
        lines.append('providers = ["CPUExecutionProvider"]')
    else:
        lines.append(f'providers = [("CUDAExecutionProvider", {_py_dict(options)}), "CPUExecutionProvider"]')
    lines.append(
        f"session = ort.InferenceSession({Path(report.model).name!r}, sess_options=options, providers=providers)"
    )
    if pad_to and all(len(sizes) == 1 for dims in pad_to.values() for sizes in dims):
        lines.append(f"# pad every input with zeros, at the end of each dimension, to one shape {pad_to}:")
        lines.append(f"# {PAD_AND_CROP}")
    elif pad_to:
        lines.append(f"# pad each input with zeros, at the end of each dimension, up to its bucket: {pad_to}")
    if io_binding:
        lines.append("# run with I/O binding (session.io_binding(), bind_ortvalue_input, run_with_iobinding)")
    return "\n".join(lines)


def _py_dict(options: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in options.items()) + "}"


def _rapidocr(
    report: TuneReport,
    cuda: bool,
    options: dict[str, str],
    session_options: dict[str, str],
    pad_to: dict[str, list[list[int]]],
) -> str:
    stem = Path(report.model).name.lower()
    section = next((v for k, v in RAPIDOCR_SECTIONS.items() if f"_{k}" in stem), "Det")
    if not cuda:
        return f"# config.yaml (rapidocr-onnxruntime 1.4.4)\n{section}:\n    use_cuda: false"
    lines = [
        "# config.yaml (rapidocr-onnxruntime 1.4.4): use_cuda is the only CUDA key",
        f"{section}:",
        "    use_cuda: true",
        "",
        "# RapidOCR 1.4.4 hard-codes the CUDA provider options in rapidocr_onnxruntime/utils/infer_engine.py",
        "# (OrtInferSession._get_ep_list: "
        + ", ".join(f"{k}={v}" for k, v in RAPIDOCR_HARD_CODED.items())
        + "); config.yaml cannot change them.",
        "# Replace them before building RapidOCR (this applies to every model with use_cuda: true):",
        "from rapidocr_onnxruntime.utils.infer_engine import OrtInferSession",
        "",
        f"TUNED = {_py_dict(options)}",
        "_ep_list = OrtInferSession._get_ep_list",
        "",
        "",
        "def _tuned_ep_list(self):",
        "    return [",
        '        (name, {"device_id": opts.get("device_id", 0), **TUNED}) if name == "CUDAExecutionProvider"'
        " else (name, opts)",
        "        for name, opts in _ep_list(self)",
        "    ]",
        "",
        "",
        "OrtInferSession._get_ep_list = _tuned_ep_list",
        "# then: from rapidocr_onnxruntime import RapidOCR; engine = RapidOCR(config_path=...)",
    ]
    if session_options:
        lines.append(
            "# the session options ("
            + ", ".join(f"{k}={v}" for k, v in session_options.items())
            + ") are set in OrtInferSession._init_sess_opts (graph_optimization_level ORT_ENABLE_ALL there): "
            "patch it the same way"
        )
    if pad_to:
        lines.append(
            f"# padding ({pad_to}) is not a RapidOCR setting: pad the resized image in your own "
            "pre-processing (TextDetector's resize rounds each side to a multiple of 32) and crop the map back"
        )
    return "\n".join(lines)
