"""A tune's analysis as doctor findings (`ortprov doctor --model MODEL`): gpu-slower-than-cpu, a faster GPU variant
that changes the results, nodes-on-cpu; the measurements as evidence and the recommended options as the fix.
Pure: doctor reports from the same measurement `ortprov tune` shows."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from provisioner.findings import Finding

if TYPE_CHECKING:
    from provisioner.tune.analysis import Analysis


def tune_findings(analysis: Analysis, model: str) -> list[Finding]:
    """The findings a tune supports: the GPU losing to the CPU (a warning: the GPU is used, and slow), nodes
    placed on the CPU inside the CUDA session (info)."""
    found: list[Finding] = []
    rec = analysis.recommendation
    if analysis.gpu_wins is False:
        evidence = [analysis.verdict]
        evidence += [f"{e.title}: {e.evidence[0]}" for e in analysis.explanations if e.evidence][:4]
        if rec is not None and rec.provider == "CPUExecutionProvider":
            fix = f"run {model} on the CPU (providers=['CPUExecutionProvider']); `ortprov tune {model}` shows why"
        else:
            fix = f"`ortprov tune {model}` for the options that win"
        found.append(Finding("gpu-slower-than-cpu", "warning", "the GPU is slower than the CPU for this model",
                             tuple(evidence), fix))  # fmt: skip
    elif analysis.gpu_wins and rec is not None and analysis.best_cuda != "cuda-default":
        default = next((row for row in analysis.rows if row.name == "cuda-default"), None)
        if default is not None and default.vs_cpu is not None and default.vs_cpu < 1:
            found.append(
                Finding(
                    "gpu-slower-than-cpu",
                    "warning",
                    "with onnxruntime's default options the GPU is slower than the CPU for this model",
                    (f"CUDA, onnxruntime's defaults: {1 / default.vs_cpu:.1f}x slower than the CPU", analysis.verdict),
                    "use these CUDA provider options: " + json.dumps(rec.provider_options),
                )
            )
    if analysis.fastest_changes is not None and analysis.fastest_cuda is not None:
        row = next((r for r in analysis.rows if r.name == analysis.fastest_cuda), None)
        label = row.label if row is not None else analysis.fastest_cuda
        speed = f" ({analysis.fastest_speedup:.2f}x the CPU)" if analysis.fastest_speedup else ""
        found.append(
            Finding(
                "fastest-gpu-changes-results",
                "info",
                "the fastest GPU variant changes the results",
                (f"{label}{speed}: {analysis.fastest_changes}", analysis.verdict),
                f"keep the recommended options; `ortprov tune {model} --allow-output-change` shows it as code if "
                "the change is acceptable to you",
            )
        )
    for explanation in analysis.explanations:
        if explanation.code == "nodes-on-cpu":
            found.append(
                Finding(
                    "nodes-on-cpu",
                    "info",
                    explanation.title,
                    explanation.evidence,
                    f"`ortprov tune {model}` measures what they cost; an op the CUDA provider lacks stays on the CPU",
                )
            )
    return found
