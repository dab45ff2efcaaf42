"""Releases known to be broken for a host (matrices/known-issues.yaml, each entry with its source): the installed
onnxruntime-gpu matched against the host's platform and GPUs. Pure but for reading the file once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from provisioner.findings import Finding
from provisioner.versions import vtuple

if TYPE_CHECKING:
    from provisioner.doctor.fixes import Fixes
    from provisioner.facts import HostFacts, OrtDist


@dataclass(frozen=True)
class KnownIssue:
    """One release known to be broken where the host matches (all fields that are set must match)."""

    id: str
    package: str
    versions: tuple[str, ...]
    fixed_in: str
    summary: str
    source: str
    platforms: tuple[str, ...] = ()  # empty: every platform
    min_compute_capability: str | None = None  # a GPU at or above it


@cache
def known_issues() -> tuple[KnownIssue, ...]:
    """The list, read from the shipped matrices/known-issues.yaml."""
    import yaml

    from provisioner.resources import data_dir

    data = yaml.safe_load((data_dir("matrices") / "known-issues.yaml").read_text(encoding="utf-8"))
    return tuple(
        KnownIssue(
            id=str(entry["id"]),
            package=str(entry["package"]),
            versions=tuple(str(v) for v in entry["versions"]),
            fixed_in=str(entry["fixed_in"]),
            summary=str(entry["summary"]),
            source=str(entry["source"]),
            platforms=tuple(str(p) for p in entry.get("platforms") or ()),
            min_compute_capability=str(entry["min_compute_capability"])
            if entry.get("min_compute_capability")
            else None,
        )
        for entry in data.get("issues") or ()
    )


def matching(issue: KnownIssue, dist: OrtDist, facts: HostFacts) -> bool:
    """Whether the installed distribution and the host are the ones the entry is about."""
    if dist.name != issue.package or dist.version not in issue.versions:
        return False
    if issue.platforms and facts.platform.tag not in issue.platforms:
        return False
    if issue.min_compute_capability:
        floor = vtuple(issue.min_compute_capability)
        return any(g.compute_capability and vtuple(g.compute_capability) >= floor for g in facts.gpus)
    return True


def known_issue_findings(facts: HostFacts, fixes: Fixes, issues: tuple[KnownIssue, ...] | None = None) -> list[Finding]:
    """known-broken-release (a warning) for each entry the installed packages and the host match."""
    found = []
    for dist in facts.onnxruntime:
        for issue in issues if issues is not None else known_issues():
            if matching(issue, dist, facts):
                found.append(
                    Finding(
                        "known-broken-release",
                        "warning",
                        f"{dist.name} {dist.version} is known to be broken here: {issue.summary} (fixed in "
                        f"{issue.fixed_in})",
                        (f"{dist.name} {dist.version} on {facts.platform.tag}", issue.source),
                        fixes.for_code("known-broken-release", subject=issue.fixed_in),
                    )
                )
    return found
