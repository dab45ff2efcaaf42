"""The planner over the shipped matrix (matrices/*.yaml): properties that must hold whatever its date."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from provisioner.errors import NoCompatiblePlan
from provisioner.facts import NvidiaWheel, OrtDist, TorchInfo
from provisioner.matrix.load import load_matrix
from provisioner.plan import Request
from provisioner.planner import make_plan
from provisioner.userfiles import read_host_file
from provisioner.versions import vtuple
from tests.unit.matrix_fixtures import host

if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix

HOSTS_DIR = Path(__file__).resolve().parents[1] / "hosts"


@pytest.fixture(scope="module")
def shipped() -> Matrix:
    return load_matrix(use_cache=False)


def _pin_cuda(matrix: Matrix, package: str, version: str) -> str | None:
    return next((w.cuda_version for w in matrix.library_wheels if (w.package, w.version) == (package, version)), None)


def test_the_h100_of_the_brief(shipped: Matrix) -> None:
    """Driver 580.159.04 (CUDA 13.0), H100, Python 3.12, torch 2.11.0+cu130, CPU onnxruntime 1.30.0."""
    box = replace(
        host(driver="580.159.04", cc="9.0", python="3.12"),
        torch=TorchInfo("2.11.0+cu130", "13.0"),
        onnxruntime=(OrtDist("onnxruntime", "1.30.0"),),
    )
    plan = make_plan([box], shipped, Request())
    assert vtuple(plan.cuda_version)[0] == 13
    assert plan.ort_version == max((b.ort_version for b in shipped.builds), key=vtuple)
    assert plan.uninstall == ("onnxruntime",)
    for pin in plan.pins:
        cuda = _pin_cuda(shipped, pin.package, pin.version)
        assert cuda is not None, pin
        if "." in cuda:  # toolkit libraries: a CUDA minor the 580 driver knows
            assert vtuple(cuda) <= (13, 0), pin
    assert any(p.package.startswith("nvidia-cudnn") for p in plan.pins)


def test_installed_cudnn_wheel_is_reused(shipped: Matrix) -> None:
    cudnn = sorted(
        (w for w in shipped.library_wheels if w.package == "nvidia-cudnn-cu13"),
        key=lambda w: vtuple(w.version),
    )
    if len(cudnn) < 2:
        pytest.skip("the shipped matrix lists fewer than two nvidia-cudnn-cu13 versions")
    older = cudnn[0].version
    box = replace(host(driver="580.159.04"), nvidia_wheels=(NvidiaWheel("nvidia-cudnn-cu13", older, "cudnn", 13),))
    plan = make_plan([box], shipped, Request())
    assert f"nvidia-cudnn-cu13=={older}" in plan.install


def test_driver_535_stays_on_cuda_12(shipped: Matrix) -> None:
    plan = make_plan([host(driver="535.104.12", cc="8.0", python="3.10")], shipped, Request())
    assert vtuple(plan.cuda_version)[0] == 12
    assert any("needs driver >= 580" in r.reason for r in plan.rejected if "CUDA 13" in r.candidate)


@pytest.mark.parametrize("path", sorted(HOSTS_DIR.glob("*.json")), ids=lambda p: p.name)
def test_saved_hosts_plan_or_explain_every_candidate(shipped: Matrix, path: Path) -> None:
    facts = read_host_file(path)
    try:
        plan = make_plan([facts], shipped, Request())
    except NoCompatiblePlan as exc:
        assert len(exc.rejected) == len(shipped.builds) and all(r.reason for r in exc.rejected)
        return
    build = next(
        b
        for b in shipped.builds
        if (b.ort_version, b.cuda_version, b.index_url) == (plan.ort_version, plan.cuda_version, plan.index_url)
    )
    assert facts.platform.tag in {p.platform for p in build.platforms}
    if facts.python:
        assert facts.python.minor in build.python
    if any(d.name == "onnxruntime" for d in facts.onnxruntime):
        assert plan.steps[0].kind == "uninstall" and "onnxruntime" in plan.steps[0].packages


def test_nvjitlink_is_pinned_within_what_the_driver_supports(shipped: Matrix) -> None:
    """cuBLAS/cuFFT wheels pull nvJitLink; unpinned, pip would take the newest CUDA minor (13.5 in late 2026)."""
    plan = make_plan([host(driver="580.159.04", cc="9.0", python="3.12")], shipped, Request())
    jitlink = [pin for pin in plan.pins if pin.package.startswith("nvidia-nvjitlink")]
    assert len(jitlink) == 1
    cuda = _pin_cuda(shipped, jitlink[0].package, jitlink[0].version)
    assert cuda is not None and vtuple(cuda)[:2] <= (13, 0)


def test_tensorrt_of_a_build_that_records_only_the_major(shipped: Matrix) -> None:
    """1.23+ wheels say only "TensorRT 10", 1.22 was made against 10.9: both get the exact pins of the newest
    installable TensorRT 10 for their CUDA major (ABI is kept within a major), never a range."""
    plan = make_plan([host(driver="580.65.06", cc="9.0", python="3.12")], shipped, Request(ort="1.23.2", tensorrt=True))
    assert plan.tensorrt_version == "10.16.1.11"
    assert any(step.packages == ("tensorrt-cu12-libs==10.16.1.11",) for step in plan.steps)
    older = make_plan([host(driver="580.65.06", cc="9.0", python="3.12")], shipped, Request(ort="1.22", tensorrt=True))
    assert older.tensorrt_version == "10.16.1.11"
    assert not any(">=" in r or "<" in r for r in older.install if r.startswith("tensorrt"))
