"""Releases known to be broken for a host (matrices/known-issues.yaml, from ONNX Runtime's release notes): doctor
warns where the installed release and the host match, and names the release with the fix."""

from __future__ import annotations

from dataclasses import replace

from provisioner.doctor.fixes import Fixes
from provisioner.doctor.known import known_issue_findings, known_issues
from provisioner.facts import OrtDist
from tests.unit.matrix_fixtures import host

FIXES = Fixes(python="/srv/venv/bin/python")


def with_gpu_build(version: str, **kw: object):  # noqa: ANN201
    return replace(host(**kw), onnxruntime=(OrtDist("onnxruntime-gpu", version, cuda_version="11.8"),))


def test_every_entry_has_its_source_and_a_fix_release() -> None:
    entries = known_issues()
    assert entries and all(e.source.startswith("https://github.com/microsoft/onnxruntime/") for e in entries)
    assert all(e.fixed_in not in e.versions for e in entries)


def test_the_release_on_a_matching_host_is_said_with_the_fix() -> None:
    (finding,) = known_issue_findings(with_gpu_build("1.15.0", cc="8.6"), FIXES)
    assert finding.code == "known-broken-release" and finding.severity == "warning"
    assert "cublasGemmBatchedHelper" in finding.title and "fixed in 1.15.1" in finding.title
    assert "--ort '>=1.15.1'" in finding.fix and "pull/16365" in finding.evidence[1]


def test_other_hosts_and_releases_are_left_alone() -> None:
    assert known_issue_findings(with_gpu_build("1.15.0", cc="7.5"), FIXES) == []  # below the entry's GPUs
    assert known_issue_findings(with_gpu_build("1.15.1", cc="8.6"), FIXES) == []  # the fixed release
    windows = with_gpu_build("1.15.0", cc="7.5", platform="windows-amd64", glibc=None)
    (finding,) = known_issue_findings(windows, FIXES)  # the Windows-only entry, whatever the GPU
    assert "the native library does not load" in finding.title
