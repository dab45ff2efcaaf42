"""Measurements -> the table, the verdict, the explanations and the recommended options (pure).

A variant's score is the sequence twice over: once with every shape new to the session (the first pass), once
with every shape seen (the median warm pass), as an application meets them. A variant counts only with its
answers: the verdict compares the best CUDA variant whose outputs agree with the CPU's (on the same, unpadded
inputs) with the CPU's best that agrees; the fastest CUDA variant stands beside it when it is faster and changes
the outputs, with the measured change, and is recommended only when the user allows it (--allow-output-change).
Every explanation quotes the measurement it comes from (explain.py); the options come three ways (recommend.py).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.tune import variants as plan
from provisioner.tune.agreement import describe_change, short
from provisioner.tune.explain import GPU_WINS_BY, Explanation, explain, summary
from provisioner.tune.recommend import PAD_AND_CROP, Recommendation, recommend
from provisioner.tune.shapes import describe_feed, distinct

if TYPE_CHECKING:
    from provisioner.tune.report import Measurement, TuneReport

__all__ = ["Analysis", "Explanation", "Recommendation", "Row", "analyse"]


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
    agrees: bool | None = None  # its outputs against the reference's (None: not checked)
    answers: str = "-"  # the table's cell: reference, agrees, CHANGES x%, not checked
    change: str | None = None  # how its outputs differ (or how close they are), measured
    states: int | None = None  # sessions or graphs kept per shape
    gpu_mb: float | None = None  # GPU memory the variant took after its first pass
    rss_mb: float | None = None


@dataclass(frozen=True)
class Analysis:
    rows: tuple[Row, ...]
    verdict: str
    gpu_wins: bool | None  # None: no CUDA measurement to judge by
    speedup: float | None  # the CPU's score / the best agreeing CUDA score
    best_cuda: str | None  # the fastest CUDA variant that keeps the answers
    explanations: tuple[Explanation, ...]
    recommendation: Recommendation | None
    summary: str = ""  # where the time goes, in a sentence or two (first under "why")
    best_cpu: str | None = None  # the CPU variant the GPU is compared with (the CPU's best total)
    fastest_cuda: str | None = None  # the fastest CUDA variant, whatever its answers
    fastest_changes: str | None = None  # when it changes the outputs: how (and it is faster than best_cuda)
    fastest_speedup: float | None = None
    allow_output_change: bool = False
    passes_to_win: int | None = None  # the best agreeing CUDA variant loses twice over but wins from pass N on


def _best(found: list[Measurement]) -> Measurement | None:
    return min(found, key=lambda m: plan.score(m) or 0.0) if found else None


def analyse(report: TuneReport, allow_output_change: bool = False) -> Analysis:
    """The table, the verdict, the explanations and the recommendation of a tune."""
    scored = [m for m in report.measurements if plan.score(m) is not None]
    cpus = [m for m in scored if m.variant.provider == "cpu" and plan.keeps_answers(m)]
    cpu = _best(cpus) or report.measurement(plan.CPU_VARIANT.name)
    cpu_score = plan.score(cpu) if cpu is not None else None
    rows = tuple(_row(m, cpu_score) for m in report.measurements)
    cudas = [m for m in scored if m.variant.provider == "cuda"]
    best = _best([m for m in cudas if plan.keeps_answers(m)])
    fastest = _best(cudas)
    speedup = cpu_score / (plan.score(best) or 1.0) if best is not None and cpu_score else None
    changed = None
    if fastest is not None and fastest is not best and fastest.agrees is False and fastest.check is not None:
        changed = describe_change(fastest.check)
    fastest_speedup = cpu_score / (plan.score(fastest) or 1.0) if fastest is not None and cpu_score else None
    verdict, wins = _verdict(report, cpu, best, speedup)
    passes = passes_to_win(cpu, best) if wins is False else None
    if passes is not None and best is not None:
        verdict += f" Once its first pass is paid, {best.variant.label} beats the CPU from pass {passes} on."
    if changed is not None and fastest is not None:
        verdict += " " + _fastest_sentence(fastest, best, fastest_speedup, changed, allow_output_change)
    explanations = tuple(explain(report, cpu, best))
    recommendation = None
    if allow_output_change and changed is not None and fastest is not None and (fastest_speedup or 0) >= GPU_WINS_BY:
        recommendation = recommend(report, fastest.variant.name, changes_results=changed)
    elif best is not None and wins:
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
        summary(report, cpu, explanations),
        cpu.variant.name if cpu is not None else None,
        fastest.variant.name if fastest else None,
        changed,
        round(fastest_speedup, 3) if fastest_speedup else None,
        allow_output_change,
        passes,
    )


def passes_to_win(cpu: Measurement | None, best: Measurement | None) -> int | None:
    """The pass from which `best` has spent less than the CPU in all (its first pass dearer, its warm pass
    cheaper): the first n with first + (n - 1) x warm < the CPU's; None when it never does."""
    if cpu is None or best is None or cpu.warm_s is None or best.warm_s is None or best.warm_s >= cpu.warm_s:
        return None
    gap = best.cold_s - cpu.cold_s
    if gap <= 0:
        return None
    return 2 + math.floor(gap / (cpu.warm_s - best.warm_s))


def _fastest_sentence(
    fastest: Measurement, best: Measurement | None, ratio: float | None, changed: str, allowed: bool
) -> str:
    times = f"{plan.score(fastest):.2f} s" + (f", {ratio:.2f}x the CPU" if ratio else "")
    against = f" (the best that keeps them: {best.variant.label}, {plan.score(best):.2f} s)" if best else ""
    then = "recommended below, as --allow-output-change asks" if allowed else "--allow-output-change recommends it"
    return (
        f"The fastest GPU variant, {fastest.variant.label}, runs it in {times}, but changes the results: "
        f"{changed}{against}; {then}."
    )


def _row(m: Measurement, cpu_score: float | None) -> Row:
    memory = m.memory
    answers = {
        "agrees": m.agrees,
        "answers": short(m.check, m.agrees),
        "change": describe_change(m.check) if m.check is not None and m.check.inputs else None,
        "states": memory.states if memory else None,
        "gpu_mb": memory.gpu_mb if memory else None,
        "rss_mb": memory.rss_mb if memory else None,
    }
    if not m.cold_ms:
        return Row(m.variant.name, m.variant.label, m.status, m.reason, m.create_s, **answers)  # type: ignore[arg-type]
    steady = m.steady_ms()
    firsts = [cold for cold, new in zip(m.cold_ms, m.new_shape, strict=False) if new]
    score = plan.score(m)
    return Row(
        m.variant.name,
        m.variant.label,
        m.status,
        m.reason,
        m.create_s,
        round(m.cold_s, 4),
        round(statistics.mean(firsts), 3) if firsts else None,
        round(m.warm_s, 4) if m.warm_s is not None else None,
        round(plan.spread(m), 4) if m.warm_ms else None,
        round(statistics.median(steady), 3) if steady else None,
        round(score, 4) if score is not None else None,
        round(cpu_score / score, 3) if cpu_score and score else None,
        _round(m.switch.same_shape_ms if m.switch else None),
        _round(m.switch.switch_ms if m.switch else None),
        **answers,  # type: ignore[arg-type]
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
        cudas = [m for m in report.measurements if m.variant.provider == "cuda" and plan.score(m) is not None]
        if cudas:
            why = "every CUDA variant measured changes the results"
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
    answers = " with the CPU's answers" if best.agrees else ""
    if best.agrees is None:
        answers = " (its outputs were not checked)"
    pad_part = ""
    if best.variant.pad_one and report.one_shape is not None:
        pad_part = f" Its inputs are padded to one shape ({describe_feed(report.one_shape)}): {PAD_AND_CROP}."
    if speedup >= GPU_WINS_BY:
        return (
            f"the GPU wins: {best.variant.label} runs this workload ({workload}) in {best_s:.2f} s{answers}, "
            f"{speedup:.2f}x {bar} ({cpu_s:.2f} s).{pad_part}{default_part}",
            True,
        )
    slower = f"{1 / speedup:.2f}x slower than" if speedup < 1 else f"only {speedup:.2f}x"
    return (
        f"the GPU does not win: its best that keeps the answers, {best.variant.label}, runs this workload "
        f"({workload}) in {best_s:.2f} s, {slower} {bar} ({cpu_s:.2f} s).{default_part}",
        False,
    )
