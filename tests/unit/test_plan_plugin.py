"""Plans for a plugin EP (`--provider tensorrt-rtx`, planner/plugin.py): the CPU core plus the EP package, judged on
the EP's platforms, Pythons, supported GPUs and the driver its bundled CUDA runtime needs; the loader hook where its
wheel bundles a linked library under another file name; refusals that name the reason. The EP rows are shaped like
the real 0.5.0 (matrices/plugin-eps.yaml); the CLI test runs on the shipped matrix."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from provisioner.errors import BadInput, NoCompatiblePlan
from provisioner.facts import OrtDist
from provisioner.matrix.model import CoreRelease, EpRelease, EpVariant
from provisioner.plan import LOADER_HOOK, Plan, Request
from provisioner.planner import make_plan
from provisioner.render.recipes import render
from tests.support.cli import run_ortprov
from tests.unit.matrix_fixtures import MATRIX, host

NEEDS = ("libcudart.so.{major}", "libcuda.so.1", "libtensorrt_rtx.so.1", "libstdc++.so.6", "libc.so.6")
BUNDLED = ("libcudart.so.{runtime}", "libtensorrt_rtx.so.1.7.1", "libtensorrt_shim.so")


def variant(major: int, runtime: str, platforms: tuple[str, ...]) -> EpVariant:
    return EpVariant(
        package=f"onnxruntime-ep-nv-tensorrt-rtx-cu{major}",
        cuda_major=major,
        platforms=platforms,
        glibc_min="2.28",
        library="libonnxruntime_providers_nv_tensorrt_rtx.so",
        needs=tuple(n.format(major=major) for n in NEEDS),
        bundled=tuple(n.format(runtime=runtime) for n in BUNDLED),
    )


def release(version: str, core_min: str = "1.24") -> EpRelease:
    return EpRelease(
        package="onnxruntime-ep-nv-tensorrt-rtx",
        version=version,
        provider="tensorrt-rtx",
        ep_name="NvTensorRTRTXExecutionProvider",
        module="onnxruntime_ep_nv_tensorrt_rtx",
        core="onnxruntime",
        core_min=core_min,
        core_source="its METADATA: `pip install onnxruntime>=1.24`",
        variants=(
            variant(13, "13.1.80", ("linux-aarch64", "linux-x86_64", "windows-amd64")),
            variant(12, "12.9.79", ("linux-x86_64", "windows-amd64")),
        ),
        default_variant="onnxruntime-ep-nv-tensorrt-rtx-cu13",
        python=">=3.8",
        conflicts=("onnxruntime-gpu",),
        conflicts_source="the EP's guide: install the CPU onnxruntime core, uninstall onnxruntime-gpu",
        compute_capabilities=("7.5", "8.6", "8.9", "12.0"),
        compute_capabilities_source="https://docs.nvidia.com/deeplearning/tensorrt-rtx/ (support matrix)",
        device_cc_min="8.0",
        driver_min={"8": "555.85", "12": "570.00"},
        device_source="https://github.com/NVIDIA/TensorRT-RTX-EP-ABI (its device filter and driver check)",
    )


CORES = tuple(
    CoreRelease("onnxruntime", v, ("3.11", "3.12", "3.13"), ("linux-aarch64", "linux-x86_64", "windows-amd64"))
    for v in ("1.32.0", "1.31.1", "1.23.2")
)
EP_MATRIX = replace(MATRIX, ep_releases=(release("0.5.0"), release("0.4.0")), core_releases=CORES)


def plan(*hosts: object, **request: object) -> Plan:
    return make_plan(hosts, EP_MATRIX, Request(provider="tensorrt-rtx", **request))  # type: ignore[arg-type]


def test_rtx_4090_on_driver_580_gets_the_core_and_the_cuda_13_variant_and_the_hook() -> None:
    p = plan(host(driver="580.95.05", cc="8.9"))
    assert (p.package, p.ort_version, p.plugin and p.plugin.package, p.plugin and p.plugin.version) == (
        "onnxruntime",
        "1.32.0",
        "onnxruntime-ep-nv-tensorrt-rtx-cu13",
        "0.5.0",
    )
    assert p.install == ("onnxruntime==1.32.0", "onnxruntime-ep-nv-tensorrt-rtx-cu13==0.5.0")
    assert not p.pins and p.cudnn_version is None  # the EP bundles its runtime: no NVIDIA wheels
    hook = [s for s in p.steps if s.kind == LOADER_HOOK]
    assert len(hook) == 1 and "libcudart.so.13 (bundled as libcudart.so.13.1.80)" in hook[0].description
    why = " ".join(p.reasons)
    assert "compute capability 8.9" in why and "the one its meta package installs" in why and ">= 1.24" in why
    assert any("register_execution_provider_library" in n for n in p.notes)


def test_an_older_driver_gets_the_cuda_12_variant_and_is_told_why_not_the_default() -> None:
    p = plan(host(driver="570.124.06", cc="8.6"))
    assert p.plugin is not None and p.plugin.cuda_major == 12
    assert "not the default onnxruntime-ep-nv-tensorrt-rtx-cu13" in p.reasons[0]
    assert "needs driver >= 580.65.06" in p.reasons[0]


def test_h100_is_refused_by_the_eps_gpu_list() -> None:
    with pytest.raises(NoCompatiblePlan) as caught:
        plan(host(driver="580.95.05", cc="9.0"))
    reasons = " ".join(r.reason for r in caught.value.rejected)
    assert "compute capability 9.0" in reasons and "supports 7.5, 8.6, 8.9, 12.0" in reasons


def test_turing_gets_no_device_from_the_ep_and_blackwell_needs_its_driver() -> None:
    """TensorRT-RTX's support matrix lists 7.5, but the EP's own device filter offers no device below 8.0."""
    with pytest.raises(NoCompatiblePlan) as caught:
        plan(host(driver="580.95.05", cc="7.5"))
    assert "the EP offers no device below 8.0" in caught.value.rejected[0].reason
    with pytest.raises(NoCompatiblePlan) as caught:
        plan(host(driver="560.35.03", cc="12.0"))
    assert "needs driver >= 570.00 for compute capability 12.0" in caught.value.rejected[-1].reason


def test_aarch64_has_only_the_cuda_13_variant() -> None:
    p = plan(host(driver="580.95.05", cc="12.0", platform="linux-aarch64"))
    assert p.plugin is not None and p.plugin.cuda_major == 13
    with pytest.raises(NoCompatiblePlan) as caught:
        plan(host(driver="575.51.03", cc="12.0", platform="linux-aarch64"))
    assert "no onnxruntime-ep-nv-tensorrt-rtx-cu12 wheel for linux-aarch64" in " ".join(
        r.reason for r in caught.value.rejected
    )


def test_windows_needs_no_hook() -> None:
    p = plan(host(driver="581.57", cc="12.0", platform="windows-amd64", glibc=None))
    assert p.plugin is not None and not [s for s in p.steps if s.kind == LOADER_HOOK]


def test_onnxruntime_gpu_is_removed_with_the_eps_own_reason_and_the_cpu_core_reinstalled() -> None:
    installed = replace(
        host(driver="580.95.05", cc="8.9"),
        onnxruntime=(OrtDist("onnxruntime-gpu", "1.31.1", cuda_version="13.0"), OrtDist("onnxruntime", "1.32.0")),
    )
    p = plan(installed)
    # both install onnxruntime/: removing the GPU package deletes the core's files, so the core is installed afresh
    assert p.uninstall == ("onnxruntime", "onnxruntime-gpu") and p.install[0] == "onnxruntime==1.32.0"
    assert "uninstall onnxruntime-gpu" in p.steps[0].description


def test_cuda_and_ort_pins() -> None:
    assert plan(host(driver="580.95.05", cc="8.9"), cuda="12").plugin.cuda_major == 12  # type: ignore[union-attr]
    assert plan(host(driver="580.95.05", cc="8.9"), ort="1.31").ort_version == "1.31.1"
    with pytest.raises(NoCompatiblePlan, match="tensorrt-rtx"):
        plan(host(driver="580.95.05", cc="8.9"), ort="1.23")  # older than the EP's minimum
    with pytest.raises(BadInput, match="CUDA 11 variant"):
        plan(host(driver="580.95.05", cc="8.9"), cuda="11")


def test_the_plan_round_trips_and_renders_as_recipes() -> None:
    p = plan(host(driver="580.95.05", cc="8.9"))
    again = Plan.from_dict(json.loads(p.to_json()))
    assert again.plugin == p.plugin and again.steps == p.steps
    lines = render(p, "requirements", matrix=EP_MATRIX).splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == [
        "onnxruntime==1.32.0",
        "onnxruntime-ep-nv-tensorrt-rtx-cu13==0.5.0",
    ]


def test_cli_plans_it_and_refuses_flags_that_contradict_it() -> None:
    done = run_ortprov("plan", "--driver", "580", "--gpu-cc", "8.9", "--python", "3.12", "--provider", "tensorrt-rtx")
    assert done.returncode == 0 and "onnxruntime-ep-nv-tensorrt-rtx-cu13" in done.stdout
    h100 = run_ortprov("plan", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--provider", "tensorrt-rtx")
    assert h100.returncode == 3 and "compute capability 9.0" in h100.stderr
    both = run_ortprov("plan", "--driver", "580", "--gpu-cc", "8.9", "--provider", "tensorrt-rtx", "--tensorrt")
    assert both.returncode == 2 and "exclude each other" in both.stderr and "Traceback" not in both.stderr
    bad = run_ortprov("plan", "--driver", "580", "--gpu-cc", "8.9", "--provider", "rtx")
    assert bad.returncode == 2 and "cuda, tensorrt, tensorrt-rtx" in bad.stderr


def test_the_dockerfile_checks_the_eps_own_library_and_conda_adds_no_cuda_packages() -> None:
    p = plan(host(driver="580.95.05", cc="8.9"))
    dockerfile = render(p, "dockerfile", matrix=EP_MATRIX)
    assert "--write-ld-conf /etc/ld.so.conf.d/ortprov-nvidia-wheels.conf --plugin onnxruntime_ep_nv_tensorrt_rtx" in (
        dockerfile
    )
    assert (
        "check_cuda_libs.py --plugin onnxruntime_ep_nv_tensorrt_rtx" in dockerfile and "nvidia-cudnn" not in dockerfile
    )
    with pytest.raises(BadInput, match="bundles its runtime"):
        render(p, "dockerfile", matrix=EP_MATRIX, base="cuda")
    conda = render(p, "conda", matrix=EP_MATRIX)
    assert "cuda-version" not in conda and '"onnxruntime-ep-nv-tensorrt-rtx-cu13==0.5.0"' in conda
