"""Finding: one diagnosed problem with a stable code, the evidence and the exact fix; ordering, merging.

Codes are a public contract (`ortprov doctor --json`, docs/verify-doctor.md): never rename one.
"""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("error", "warning", "info")  # error: the GPU is not used (doctor exits 1)

# Most important first: a root cause outranks what it causes (no driver explains a missing library).
CODES = (
    "no-driver",
    "driver-library-mismatch",
    "gpu-hidden",
    "driver-too-old",
    "no-wheel-for-platform",
    "onnxruntime-not-installed",
    "cpu-package-only",
    "cpu-and-gpu-installed",
    "plugin-beside-gpu-core",
    "plugin-core-too-old",
    "package-files-missing",
    "cuda-major-mismatch",
    "cudnn-missing",
    "cuda-library-missing",
    "library-not-on-path",
    "loader-hook-failed",
    "plugin-library-missing",
    "plugin-register-failed",
    "plugin-no-device",
    "msvc-runtime-missing",
    "zlibwapi-missing",
    "tensorrt-missing",
    "tensorrt-install-failed",
    "tensorrt-major-mismatch",
    "unsupported-gpu-arch",
    "gpu-provider-failed",
    "known-broken-release",
    "gpu-out-of-memory",
    "cuda-context-conflict",
    "tensorrt-engine-cache-stale",
    "cuda-library-twice",
    "verify-crashed",
    "verify-timeout",
    "gpu-results-differ",
    "verify-failed",
    "gpu-slower-than-cpu",
    "fastest-gpu-changes-results",
    "nodes-on-cpu",
)
_RANK = {code: i for i, code in enumerate(CODES)}


@dataclass(frozen=True)
class Finding:
    """A diagnosed problem: stable `code`, `severity` (error|warning|info), a one-line `title`, the `evidence`
    lines that prove it, and the `fix` (an exact command, or the ortprov command that does it)."""

    code: str
    severity: str
    title: str
    evidence: tuple[str, ...] = ()
    fix: str = ""
    library: str | None = None  # for library codes: cudnn, cublas, cudart, cufft, curand, nvrtc, nvinfer ...

    @property
    def blocking(self) -> bool:
        """True when this finding means the GPU is not used."""
        return self.severity == "error"


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Most important first: errors before warnings before info, root causes before consequences."""
    return sorted(findings, key=lambda f: (SEVERITIES.index(f.severity), _RANK.get(f.code, len(CODES))))


def merge_findings(findings: list[Finding]) -> list[Finding]:
    """One finding per (code, library): evidence is pooled, the first title/fix and the worst severity win."""
    merged: dict[tuple[str, str | None], Finding] = {}
    for finding in findings:
        key = (finding.code, finding.library)
        if key not in merged:
            merged[key] = finding
            continue
        old = merged[key]
        evidence = old.evidence + tuple(e for e in finding.evidence if e not in old.evidence)
        severity = min(old.severity, finding.severity, key=SEVERITIES.index)
        merged[key] = Finding(old.code, severity, old.title, evidence[:12], old.fix or finding.fix, old.library)
    return sort_findings(list(merged.values()))
