"""A driver runs a GPU only if its CUDA is at least the first CUDA release that supports the GPU's compute capability
(derived from matrices/cuda.yaml's releases) and its branch has not dropped the GPU's architecture (cuda.yaml's
architectures). Where it cannot, no onnxruntime build helps: `plan` exits 3 naming the driver that would, and
doctor says the same from the host's facts. The expected floors are read from the data in each test."""

from __future__ import annotations

import pytest

from provisioner import doctor
from provisioner.errors import NoCompatiblePlan
from provisioner.facts import DriverInfo, Gpu, HostFacts, PlatformInfo, PythonInfo
from provisioner.matrix.load import load_matrix
from provisioner.matrix.query import driver_gpu_gap, first_cuda_release_for_cc, gpu_architecture
from provisioner.plan import Request
from provisioner.planner import make_plan
from tests.support.cli import run_ortprov

MATRIX = load_matrix()


def host(cc: str, driver: str | None = None, cuda: str | None = None, python: str = "3.12") -> HostFacts:
    return HostFacts(
        platform=PlatformInfo("linux", "x86_64", glibc="2.39"),
        driver=DriverInfo(True, driver, cuda_version=cuda, source="flags"),
        python=PythonInfo("", f"{python}.1", abi=f"cp{python.replace('.', '')}"),
        gpus=(Gpu(0, "", cc),),
    )


def no_plan(h: HostFacts) -> NoCompatiblePlan:
    with pytest.raises(NoCompatiblePlan) as caught:
        make_plan([h], MATRIX, Request())
    return caught.value


def test_a_driver_older_than_the_first_cuda_for_the_gpu_cannot_run_it() -> None:
    first = first_cuda_release_for_cc(MATRIX, "10.0")
    assert first is not None and first.min_driver_linux
    error = no_plan(host("10.0", driver="535"))  # CUDA 12.2: before Blackwell
    assert f"a driver >= {first.min_driver_linux} (CUDA {first.version}) is needed for compute capability 10.0" in str(
        error
    )
    assert error.exit_code == 3 and error.hint and first.min_driver_linux in error.hint
    # that driver's own branch is enough (a bare branch stands for the whole branch)
    branch = first.min_driver_linux.split(".")[0]
    assert make_plan([host("10.0", driver=branch)], MATRIX, Request()).ort_version


def test_the_driver_given_as_the_cuda_version_it_reports_is_judged_the_same() -> None:
    first = first_cuda_release_for_cc(MATRIX, "12.1")
    assert first is not None
    older = max(
        (r for r in MATRIX.cuda_releases if r.min_driver_linux and r.version < first.version and r.version[:2] == "12"),
        key=lambda r: [int(x) for x in r.version.split(".")],
    )
    gap = driver_gpu_gap(MATRIX, "12.1", None, older.version)
    assert gap is not None and gap.kind == "too-old" and f"CUDA {first.version}" in gap.needed
    assert driver_gpu_gap(MATRIX, "12.1", None, first.version) is None


def test_a_branch_after_the_last_one_for_the_architecture_cannot_run_it() -> None:
    kepler = gpu_architecture(MATRIX, "3.7")
    assert kepler is not None and kepler.last_driver_branch
    last = int(kepler.last_driver_branch)
    error = no_plan(host("3.7", driver=f"{last + 110}.10"))
    assert f"drivers after R{last} do not support compute capability 3.7 (Kepler)" in str(error)
    assert f"install a {last} driver" in str(error)
    # the last branch itself runs it: the plan goes on to the builds (what their wheels hold decides then)
    assert make_plan([host("3.7", driver=f"{last}.256.02", python="3.9")], MATRIX, Request()).ort_version
    # a reported CUDA newer than that branch's means a newer branch
    newer_cuda = max(MATRIX.cuda_releases, key=lambda r: [int(x) for x in r.version.split(".")]).version
    gap = driver_gpu_gap(MATRIX, "3.7", None, newer_cuda)
    assert gap is not None and gap.kind == "dropped"


@pytest.mark.parametrize("cc", ["5.2", "6.1", "7.0"])
def test_maxwell_pascal_volta_end_with_their_last_branch(cc: str) -> None:
    arch = gpu_architecture(MATRIX, cc)
    assert arch is not None and arch.last_driver_branch
    last = int(arch.last_driver_branch)
    assert driver_gpu_gap(MATRIX, cc, str(last), None) is None
    gap = driver_gpu_gap(MATRIX, cc, f"{last + 10}.1", None)
    assert gap is not None and gap.kind == "dropped" and arch.name in gap.why


def test_unknown_drivers_and_current_architectures_are_not_judged() -> None:
    assert driver_gpu_gap(MATRIX, "9.0", "12.2", None) is None  # a CUDA version passed as a driver names no branch
    assert driver_gpu_gap(MATRIX, "8.0", "450.51.05", None) is None  # in the oldest recorded release: not judged
    assert gpu_architecture(MATRIX, "9.0") is None


def test_every_architecture_has_a_source_and_its_ccs_are_known_to_cuda() -> None:
    known = {cc for r in MATRIX.cuda_releases for cc in r.compute_capabilities}
    for arch in MATRIX.gpu_architectures:
        assert arch.sources
        assert set(arch.compute_capabilities) <= known | {"3.0"}, arch.name  # 3.0 predates the recorded releases


def test_doctor_says_the_driver_cannot_run_the_gpu() -> None:
    facts = host("10.0", driver="535.104.05", cuda="12.2")
    findings = doctor.diagnose(facts, matrix=MATRIX)
    first = findings[0]
    assert first.code == "driver-too-old"
    assert "cannot run the GPU (compute capability 10.0)" in first.title
    assert "CUDA 12.8" in first.fix
    kepler = doctor.diagnose(host("3.7", driver="580.95.05", cuda="13.0"), matrix=MATRIX)
    arch = next(f for f in kepler if f.code == "unsupported-gpu-arch")
    assert "a 470 driver" in arch.fix and "cannot run the GPU (compute capability 3.7)" in arch.title


def test_cli_exits_3_with_the_driver_that_would_run_it() -> None:
    done = run_ortprov("plan", "--driver", "535", "--gpu-cc", "10.0", "--python", "3.12", "--platform", "linux-x86_64")
    assert done.returncode == 3, done.stdout
    assert "a driver >= 570.26 (CUDA 12.8) is needed for compute capability 10.0" in done.stderr
    done = run_ortprov("plan", "--driver", "580", "--gpu-cc", "3.7", "--python", "3.12", "--platform", "linux-x86_64")
    assert done.returncode == 3
    assert "drivers after R470 do not support compute capability 3.7" in done.stderr
