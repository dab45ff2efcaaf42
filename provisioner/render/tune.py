"""A tune rendered: what was fed, the table (CPU, CUDA with onnxruntime's defaults, each variant, with its answers
against the CPU's), the verdict, why, and the winning options three ways (Python with the per-shape helper when it
wins, RapidOCR, JSON)."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from provisioner import standalone
from provisioner.render.style import style
from provisioner.serde import to_jsonable

if TYPE_CHECKING:
    from provisioner.tune.analysis import Analysis, Row
    from provisioner.tune.report import TuneReport


@dataclass(frozen=True)
class TuneResult:
    """`ortprov tune`: the measurements and what they say. Exit 0 when something was measured, else 1."""

    report: TuneReport
    analysis: Analysis

    @property
    def exit_code(self) -> int:
        return 0 if any(row.score_s is not None for row in self.analysis.rows) else 1

    def text(self) -> str:
        return render_tune(self.report, self.analysis)

    def data(self) -> Any:
        analysis = to_jsonable(self.analysis)
        rec = self.analysis.recommendation
        if rec is not None and rec.helper and analysis.get("recommendation"):
            analysis["recommendation"]["helper_source"] = helper_source()
        return {"report": self.report.to_dict(), "analysis": analysis}


def helper_path() -> str:
    """Where the per-shape helper the tune measured lives (provisioner/standalone/shape_sessions.py)."""
    return str(standalone.path("shape_sessions.py"))


def helper_source() -> str:
    return standalone.path("shape_sessions.py").read_text(encoding="utf-8")


def _s(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _row(row: Row) -> list[str]:
    vs = "-" if row.vs_cpu is None else (f"{row.vs_cpu:.2f}x" if row.vs_cpu >= 1 else f"1/{1 / row.vs_cpu:.1f}")
    warm = "-" if row.warm_s is None else f"{row.warm_s:.2f} ±{(row.spread or 0) * 50:.0f}%"
    return [
        row.label,
        row.status,
        _s(row.create_s),
        _s(row.first_pass_s),
        _s(row.new_shape_ms, 1),
        warm,
        _s(row.run_ms, 1),
        _s(row.same_shape_ms, 1),
        "-" if row.switch_ms is None else f"{row.switch_ms:+.1f}",
        _s(row.score_s),
        vs,
        row.answers,
        "-" if row.gpu_mb is None or not row.states else f"{row.gpu_mb:.0f}/{row.states}",
    ]


HEADER = [
    "variant",
    "status",
    "create s",
    "1st pass s",
    "new shape ms",
    "warm pass s",
    "run ms",
    "1 shape ms",
    "switch ms",
    "total s",
    "vs CPU",
    "answers",
    "GPU MiB/states",
]


def table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [
            c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)) if i
        ]
        out.append("  " + "  ".join(cells).rstrip())
        if n == 0:
            out.append("  " + "  ".join("-" * w for w in widths))
    return out


def render_tune(report: TuneReport, analysis: Analysis) -> str:
    runtime = report.runtime
    lines = [
        f"model: {report.model}",
        f"target: {runtime.python} (Python {runtime.python_version}, onnxruntime {runtime.ort_version or '-'}"
        f" [{runtime.ort_package or '?'}], providers: {', '.join(runtime.available_providers) or '-'})",
    ]
    if report.sequence:
        from provisioner.tune.shapes import describe_feed, distinct

        first, last = report.sequence[0], report.sequence[-1]
        lines.append(
            f"shapes ({report.sequence_source}): {len(report.sequence)} runs, {distinct(report.sequence)} distinct, "
            f"e.g. {describe_feed(first)} ... {describe_feed(last)}"
        )
    for note in report.notes:
        lines.append(f"  assumed: {note}")
    if report.inputs_source:
        lines.append(f"inputs: {report.inputs_source}")
    measured = [row for row in analysis.rows if row.status != "skipped"]
    skipped = [row for row in analysis.rows if row.status == "skipped"]
    if measured:
        lines += ["", *table([HEADER] + [_row(row) for row in measured])]
        lines.append("  (total: the first pass, every shape new, plus the median warm pass; ± half the spread;")
        lines.append("   1 shape ms: one seen shape repeated; switch ms: what a change to a seen shape adds to a run;")
        lines.append("   answers: the outputs against the CPU's on the same, unpadded inputs; GPU MiB/states: the GPU")
        lines.append("   memory its first pass added (arenas, per-shape sessions or graphs), over the states kept)")
    for row in measured:
        if row.reason and row.status not in ("ok",):
            lines.append(f"  {row.label}: {row.status}: {row.reason}")
    if skipped:
        lines.append("")
        lines.append(f"not measured ({len(skipped)}):")
        reasons: dict[str, list[str]] = {}
        for row in skipped:
            reasons.setdefault(row.reason or "", []).append(row.label)
        for reason, labels in reasons.items():
            lines.append(f"  {reason}: {'; '.join(labels)}")
    if report.stopped:
        lines.append(style(f"stopped early: {report.stopped}", "yellow"))
    colour = {True: "green", False: "red", None: "yellow"}[analysis.gpu_wins]
    lines += ["", style("verdict: ", colour) + analysis.verdict]
    if analysis.explanations or analysis.summary:
        lines += ["", "why:"]
        if analysis.summary:
            lines += [f"  {line}" for line in textwrap.wrap(analysis.summary, 116)]
        for item in analysis.explanations:
            lines.append(f"  [{item.code}] {item.title}")
            lines += [f"      {line}" for line in item.evidence if line]
    rec = analysis.recommendation
    if rec is not None:
        lines += ["", f"recommended: {rec.label}"]
        if rec.changes_results:
            lines.append(style(f"  it CHANGES THE RESULTS (--allow-output-change): {rec.changes_results}", "red"))
        lines += ["", "  Python:"]
        lines += [f"    {line}" if line else "" for line in rec.python.splitlines()]
        if rec.helper:
            lines += [
                "",
                f"  The helper ({rec.helper}) is the code the tune measured: copy it next to yours,",
                f"    cp {helper_path()} .",
                "  (`--json` carries its source in analysis.recommendation.helper_source)",
            ]
        lines += ["", "  RapidOCR:"]
        lines += [f"    {line}" if line else "" for line in rec.rapidocr.splitlines()]
        lines += ["", "  JSON:"]
        lines += [f"    {line}" for line in json.dumps(recommendation_json(rec), indent=2).splitlines()]
    if report.duration_s is not None:
        lines += ["", f"tuned in {report.duration_s:.0f} s (budget {report.budget_s or 0:.0f} s)"]
    return "\n".join(lines)


def recommendation_json(rec: Any) -> dict[str, Any]:
    """The options as data: what a program reads to build its session."""
    return {
        "provider": rec.provider,
        "provider_options": rec.provider_options,
        "session_options": rec.session_options,
        "io_binding": rec.io_binding,
        "pad_to": rec.pad_to,
        "pad_mode": rec.pad_mode,
        "per_shape": rec.helper,
    }
