"""--tensorrt with the shipped matrix (derived from PyPI by bin/derive_tensorrt.py): exact pins of the TensorRT the
build links, from the index that has the real wheels, never another major; the refusals that exit 3."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from provisioner.errors import BadInput, NoCompatiblePlan
from provisioner.facts import DriverInfo, Gpu, HostFacts, PlatformInfo, PythonInfo
from provisioner.matrix.load import load_matrix
from provisioner.matrix.query import build_tensorrt, find_build, tensorrt_package, tensorrt_provider, tensorrt_release
from provisioner.plan import Request, step_argv
from provisioner.planner import make_plan
from provisioner.render.recipes import render
from tests.support.cli import run_ortprov

if TYPE_CHECKING:
    from pathlib import Path

MATRIX = load_matrix(use_cache=False)
NVIDIA = "https://pypi.nvidia.com/"


def host(platform: str = "linux-x86_64", python: str = "3.12", cc: str = "9.0") -> HostFacts:
    os_name, _, arch = platform.partition("-")
    return HostFacts(
        platform=PlatformInfo(os_name, arch, glibc="2.39" if os_name == "linux" else None),
        driver=DriverInfo(True, "580.95.05", "13.0", source="test"),
        python=PythonInfo(python, python + ".0", "/usr/bin/python"),
        gpus=(Gpu(0, "GPU", cc),),
    )


def plan(h: HostFacts | None = None, **request: object):  # type: ignore[no-untyped-def]
    return make_plan([h or host()], MATRIX, Request(tensorrt=True, **request))  # type: ignore[arg-type]


def trt_steps(p):  # type: ignore[no-untyped-def]
    return [s for s in p.steps if s.only_binary]


def test_the_matrix_records_stubs_wheels_and_what_each_provider_links() -> None:
    stub = tensorrt_package(MATRIX, "tensorrt-cu13-libs", "10.16.1.11")
    assert stub is not None and stub.kind == "stub" and stub.build_backend == "wheel_stub.buildapi"
    assert stub.index_url == NVIDIA and stub.installable
    broken = tensorrt_package(MATRIX, "tensorrt-cu13-libs", "10.13.2.6")
    assert broken is not None and not broken.installable and "nvidia-cuda-runtime-cu13" in (broken.notes or "")
    real = tensorrt_package(MATRIX, "tensorrt", "8.5.3.1")
    assert real is not None and real.kind == "wheel" and real.library_dir == "tensorrt" and "3.10" in real.python
    linux = tensorrt_provider(MATRIX, "1.31.1", "linux-x86_64")
    assert linux is not None and linux.needed == ("libnvinfer.so.10", "libnvonnxparser.so.10")
    assert "libnvinfer_plugin.so.10" in linux.named  # named, not linked: opened when needed
    aarch64 = tensorrt_provider(MATRIX, "1.31.1", "linux-aarch64")
    assert aarch64 is not None and aarch64.library is None


def test_a_build_gets_the_newest_installable_release_of_its_major_never_another() -> None:
    for cuda in (12, 13):
        release = tensorrt_release(MATRIX, "10", cuda)
        assert release is not None and release.packages == (f"tensorrt-cu{cuda}-libs==10.16.1.11",)
    assert tensorrt_release(MATRIX, "10.9", 12) == tensorrt_release(MATRIX, "10", 12)  # ABI kept within a major
    assert all(t.major != 11 for t in MATRIX.tensorrt)  # TensorRT 11 never serves a libnvinfer.so.10 build
    eight = tensorrt_release(MATRIX, "8.6", 11)
    assert eight is not None and not eight.packages and eight.notes  # 8.5.3.1 is too old for an 8.6 build


def test_cuda_13_plan_pins_the_libs_in_a_step_of_their_own_from_nvidia() -> None:
    p = plan()
    assert p.ort_version == "1.31.1" and p.tensorrt_version == "10.16.1.11" and p.tensorrt_source == NVIDIA
    (step,) = trt_steps(p)
    assert step.packages == ("tensorrt-cu13-libs==10.16.1.11",)
    assert step_argv(step, "pip")[4:] == [
        "--index-url",
        NVIDIA,
        "--only-binary",
        "tensorrt-cu13-libs",
        "tensorrt-cu13-libs==10.16.1.11",
    ]
    assert not any("tensorrt" in r for s in p.steps if not s.only_binary for r in s.packages)
    assert not any(r.startswith(("tensorrt==", "tensorrt-cu13==")) for r in p.install)  # never the meta-package


def test_cuda_12_build_gets_the_cu12_libs() -> None:
    p = plan(cuda="12")
    assert p.cuda_version.startswith("12.")
    assert [s.packages for s in trt_steps(p)] == [("tensorrt-cu12-libs==10.16.1.11",)]


def test_a_mirror_replaces_the_index_and_is_handed_to_the_stubs() -> None:
    mirror = "https://mirror.example/nvidia/simple/"
    (step,) = trt_steps(plan(tensorrt_index_url=mirror))
    assert step.index_url == mirror and step.environment == (f"WHEEL_STUB_PIP_INDEX_URL={mirror}",)
    text = render(plan(tensorrt_index_url=mirror), "pip")
    assert f"WHEEL_STUB_PIP_INDEX_URL={mirror} python -m pip install --index-url {mirror}" in text


def test_aarch64_has_no_tensorrt_provider() -> None:
    with pytest.raises(NoCompatiblePlan) as info:
        plan(host("linux-aarch64"))
    assert any("the linux-aarch64 wheel of 1.31.1 has no TensorRT provider" in r.reason for r in info.value.rejected)


def test_aarch64_refusal_exits_3() -> None:
    result = run_ortprov(
        "plan", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-aarch64",
        "--tensorrt", "--json",
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    data = json.loads(result.stdout)
    assert any("has no TensorRT provider" in r["reason"] for r in data["rejected"])


def test_tensorrt_8_wheels_on_pypi_need_python_up_to_3_10() -> None:
    ok = plan(host(python="3.10", cc="8.6"), ort="1.14")
    assert "tensorrt==8.5.3.1" in ok.install and not trt_steps(ok)  # a real PyPI wheel: the main step
    with pytest.raises(NoCompatiblePlan) as info:
        plan(host(python="3.12", cc="8.6"), ort="1.14")
    assert any("Python 3.6 to 3.10 only" in r.reason for r in info.value.rejected)


def test_system_and_folder_install_nothing_and_check_the_major(tmp_path: Path) -> None:
    p = plan(tensorrt_libraries="system")
    assert not trt_steps(p) and p.tensorrt_source == "system" and p.tensorrt_version == "10"
    folder = tmp_path / "TensorRT-11" / "lib"
    folder.mkdir(parents=True)
    (folder / "libnvinfer.so.11").write_bytes(b"")
    result = run_ortprov(
        "plan", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64",
        "--tensorrt-libraries", str(folder), "--json",
    )  # fmt: skip
    assert result.returncode == 3
    assert "links libnvinfer.so.10 (TensorRT 10); the folder holds libnvinfer.so.11" in result.stdout
    (folder / "libnvinfer.so.10").write_bytes(b"")
    p = plan(tensorrt_libraries=str(folder), tensorrt_sonames=("libnvinfer.so.10", "libnvinfer.so.11"))
    assert not trt_steps(p) and p.tensorrt_source == str(folder)


def test_requirements_refuse_with_the_reason() -> None:
    result = run_ortprov(
        "plan", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64",
        "--tensorrt", "--format", "requirements",
    )  # fmt: skip
    assert result.returncode == 2
    assert "PyPI holds only source stubs of them" in result.stderr


@pytest.mark.parametrize(
    ("fmt", "what"), [("requirements", "a requirements file"), ("conda", "an environment.yml's pip section")]
)
def test_a_one_run_format_says_once_that_it_is_one_run(fmt: str, what: str) -> None:
    """The refusal's sentence names the format and says once that it is one pip run (it said "an environment.yml
    (its pip section is one pip run) is one pip run")."""
    with pytest.raises(BadInput) as refused:
        render(plan(), fmt, matrix=MATRIX)
    sentence = str(refused.value)
    assert f": {what} is one pip run, and would let PyPI's stub or another index serve them" in sentence
    assert sentence.count("one pip run") == 1 and "(its pip section" not in sentence


def test_uv_and_dockerfile_render_the_pinned_index() -> None:
    p = plan()
    assert f"uv pip install --python python --index-url {NVIDIA} --only-binary tensorrt-cu13-libs" in render(p, "uv")
    docker = render(p, "dockerfile", matrix=MATRIX)
    assert f'"--index-url", "{NVIDIA}", "--only-binary", "tensorrt-cu13-libs"' in docker


def test_every_build_recording_tensorrt_is_served_or_says_why() -> None:
    for build in MATRIX.builds:
        if build.tensorrt_version:
            release = build_tensorrt(MATRIX, build)
            assert release is not None, build.label
            assert release.major == int(build.tensorrt_version.split(".")[0])
            assert release.packages or release.notes
    assert find_build(MATRIX, "onnxruntime-gpu", "1.31.1", "13.0", None) is not None
