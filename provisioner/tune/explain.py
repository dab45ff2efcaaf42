"""Why the numbers are what they are: each explanation quotes the measurement it comes from (pure).

The cost of a change of input shape (`shape-switch`), cuDNN's per-shape search (`per-shape-search`), fallback
convolutions, node placement and copies, a model too small for a GPU, padding, variants cut short, CUDA that did
not run (with the provider error onnxruntime logged), variants whose outputs differ from the reference's
(`changes-results`) and what state kept per input shape costs in memory (`per-shape-memory`).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from provisioner.tune import variants as plan
from provisioner.tune.agreement import describe_change
from provisioner.tune.report import Measurement, TuneReport, clean_log_text
from provisioner.tune.shapes import bucket_levels, changes, describe_feed, distinct

GPU_WINS_BY = 1.1  # the GPU "wins" when its score is at least this much better than the CPU's
SEARCH_SHARE = 0.2  # per-shape search worth explaining: more than this share of the variant's score
SWITCH_SHARE = 0.5  # a change of shape worth explaining: its extra cost above this share of a steady run
SWITCH_MIN_MS = 1.0  # ... and above this (timer noise)
SMALL_RUN_MS = 3.0  # the CPU runs the model in less than this: too small for a GPU to win by much
MEMCPY_OPS = frozenset({"MemcpyToHost", "MemcpyFromHost"})
_FALLBACK = re.compile(r"OP (\w+)\((.*?)\) running in Fallback mode")
# what onnxruntime logs when the CUDA provider cannot be created (a library missing, a CUDA or cuDNN error)
_PROVIDER_ERROR = re.compile(
    r"Failed to load library|cannot open shared object|Failed to create CUDAExecutionProvider|"
    r"CUDA failure|CUDNN failure|cudaError|Require cuDNN|libcudnn|libcublas|libcudart",
    re.I,
)


@dataclass(frozen=True)
class Explanation:
    """Why the numbers are what they are, from the measurements: a stable code, a title, the evidence."""

    code: str
    title: str
    evidence: tuple[str, ...] = ()


def explain(report: TuneReport, cpu: Measurement | None, best: Measurement | None) -> list[Explanation]:
    """Every explanation the measurements support, most telling first."""
    found: list[Explanation] = []
    found += _cuda_not_measured(report)
    found += _changes_results(report)
    found += _cut_short(report)
    found += _switch(report)
    found += _search(report)
    found += _memory(report)
    found += _fallback(report)
    found += _placement(report)
    found += _transfer(report)
    found += _small(report, cpu, best)
    found += _padding(report)
    return found


def provider_error(m: Measurement) -> list[str]:
    """The lines onnxruntime logged about the CUDA provider failing to load or start (time stamps stripped)."""
    return [clean_log_text(line.text)[:300] for line in m.log if _PROVIDER_ERROR.search(line.text)][:4]


def _cuda_not_measured(report: TuneReport) -> list[Explanation]:
    default = report.measurement(plan.CUDA_DEFAULT.name)
    if default is None or default.cold_ms or default.status == "skipped":
        return []
    evidence = [default.reason or ""]
    logged = provider_error(default)
    if logged:
        evidence += [f"onnxruntime logged: {line}" for line in logged]
    elif default.status == "fell-back":
        evidence.append("onnxruntime logged no reason at warning level")
    if default.status in ("fell-back", "failed"):
        evidence.append(f"`ortprov doctor --python {report.runtime.python}` names the missing piece and its fix")
    return [Explanation("cuda-not-measured", f"CUDA did not run: {default.status}", tuple(evidence))]


def _changes_results(report: TuneReport) -> list[Explanation]:
    """Variants whose outputs differ from the reference's beyond tolerance: what changed, measured."""
    changed = [m for m in report.measurements if m.agrees is False and m.check is not None]
    if not changed:
        return []
    evidence = tuple(f"{m.variant.label}: {describe_change(m.check)}" for m in changed if m.check is not None)
    kept = [m for m in report.measurements if m.agrees is True and m.variant.name != plan.CPU_VARIANT.name]
    title = (
        f"{len(changed)} variant{'s change' if len(changed) > 1 else ' changes'} the model's outputs beyond "
        "tolerance (against the CPU on the same, unpadded inputs)"
    )
    if kept:
        title += f"; {len(kept)} keep them"
    return [Explanation("changes-results", title, evidence)]


def _memory(report: TuneReport) -> list[Explanation]:
    """What state per input shape costs: GPU (or resident) memory per session or graph."""
    evidence = []
    for m in report.measurements:
        memory = m.memory
        if memory is None or m.variant.per_shape is None or memory.states < 1:
            continue
        gpu, rss = memory.gpu_mb, memory.rss_mb
        what = "sessions" if m.variant.per_shape == "sessions" else "CUDA graphs"
        parts = []
        if gpu is not None:
            parts.append(f"GPU {gpu:.0f} MiB ({gpu / memory.states:.0f} MiB each)")
        if rss is not None:
            parts.append(f"host {rss:.0f} MiB ({rss / memory.states:.0f} MiB each)")
        if parts:
            evidence.append(f"{m.variant.label}: {memory.states} {what}: " + ", ".join(parts))
    if not evidence:
        return []
    title = "what one state per input shape costs in memory (what the first pass added: sessions, graphs, arenas)"
    return [Explanation("per-shape-memory", title, tuple(evidence))]


def search_cost_ms(m: Measurement) -> float | None:
    """Mean extra milliseconds of a new shape's first run over the same shape's steady run."""
    if not m.complete:
        return None
    steady = m.steady_ms()
    extra = [cold - warm for cold, warm, new in zip(m.cold_ms, steady, m.new_shape, strict=False) if new]
    return statistics.mean(extra) if extra else None


def _stopped_early(m: Measurement) -> bool:
    return (m.reason or "").startswith("stopped early")


def _cut_short(report: TuneReport) -> list[Explanation]:
    """Variants stopped early for being far slower than the best: measured in part (their first runs, their
    shape switch), not missing."""
    cut = [m for m in report.measurements if m.status == "cut-short" and m.cold_ms and _stopped_early(m)]
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


def summary(report: TuneReport, cpu: Measurement | None, explanations: tuple[Explanation, ...]) -> str:
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
    cpu_s = plan.score(cpu) if cpu is not None else None
    if cpu is not None and cpu_s:
        parts += _ways_around(report, cpu, cpu_s)
    if not parts and explanations:
        first = explanations[0]
        parts.append(f"Where the time goes: {first.title}.")
    return " ".join(parts)


def _ways_around(report: TuneReport, cpu: Measurement, cpu_s: float) -> list[str]:
    """The two ways around a change of shape, each with its total and whether it keeps the answers: state kept
    per input shape, and every input padded to one shape."""
    found = []
    ways = (
        ("With state kept per input shape (no set-up on a change of shape)", lambda v: v.per_shape is not None
         and not v.pads),
        ("With every input padded to one shape (no change of shape, one search)", lambda v: v.pad_one),
    )  # fmt: skip
    for words, wanted in ways:
        scored = [m for m in report.measurements if m.variant.provider == "cuda" and wanted(m.variant)]
        scored = [m for m in scored if plan.score(m) is not None]
        if not scored:
            continue
        one = min(scored, key=lambda m: plan.score(m) or 0.0)
        answers = ""
        if one.agrees is False and one.check is not None:
            answers = f", but its outputs change ({describe_change(one.check)})"
        elif one.agrees:
            answers = ", with the CPU's answers"
        found.append(
            f"{words}, {one.variant.label} runs it in {plan.score(one):.2f} s{answers}; the CPU's best "
            f"({cpu.variant.label}) takes {cpu_s:.2f} s."
        )
    return found


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
        answers = {True: "; keeps the answers", False: "; changes the answers", None: ""}[m.agrees]
        evidence.append(f"{m.variant.label}: {plan.score(m):.2f} s{base_part}{answers}")
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
