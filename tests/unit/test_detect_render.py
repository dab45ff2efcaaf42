"""The human summary of `ortprov detect`, rendered from host files and hand-built facts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from provisioner.facts import (
    DriverInfo,
    Gpu,
    HostFacts,
    MissingFiles,
    NvidiaWheel,
    OrtDist,
    PlatformInfo,
)
from provisioner.render.detect import render_summary
from provisioner.userfiles import read_host_file

HOSTS = sorted((Path(__file__).resolve().parents[1] / "hosts").glob("*.json"))
LINUX = PlatformInfo(os="linux", arch="x86_64", glibc="2.36")


@pytest.mark.parametrize("path", HOSTS, ids=[path.name for path in HOSTS])
def test_every_host_file_renders(path: Path) -> None:
    facts = read_host_file(path)
    text = render_summary(facts)
    assert text.splitlines()[0].startswith("driver:")
    for gpu in facts.gpus:
        assert gpu.name in text
    for dist in facts.onnxruntime:
        assert f"{dist.name} {dist.version}" in text


def test_no_driver() -> None:
    facts = HostFacts(platform=LINUX, driver=DriverInfo(present=False, error="NVML: NVML library not found"))
    text = render_summary(facts)
    assert "no NVIDIA driver found (NVML: NVML library not found)" in text
    assert "python:      not read" in text and "onnxruntime: not installed" in text


def test_cpu_and_gpu_conflict_is_flagged() -> None:
    facts = HostFacts(
        platform=LINUX,
        driver=DriverInfo(present=True, version="580.159.04", cuda_version="13.0", source="nvml"),
        gpus=(
            Gpu(index=0, name="NVIDIA H100 80GB HBM3", compute_capability="9.0", memory_mib=81559),
            Gpu(index=1, name="NVIDIA H100 80GB HBM3", compute_capability="9.0", visible=False),
        ),
        onnxruntime=(
            OrtDist(name="onnxruntime", version="1.30.0", build_package_name="onnxruntime"),
            OrtDist(name="onnxruntime-gpu", version="1.31.1", build_package_name="onnxruntime"),
        ),
    )
    text = render_summary(facts)
    assert "580.159.04, supports CUDA up to 13.0" in text
    assert "GPU 0: NVIDIA H100 80GB HBM3, cc 9.0, 81559 MiB" in text
    assert "GPU 1: NVIDIA H100 80GB HBM3, cc 9.0, HIDDEN" in text
    assert "CONFLICT: onnxruntime and onnxruntime-gpu are all installed" in text
    assert "its files on disk belong to onnxruntime" in text
    single = replace(facts, onnxruntime=facts.onnxruntime[:1])
    assert "CONFLICT" not in render_summary(single)


def test_incomplete_distributions_are_flagged() -> None:
    missing = MissingFiles(57, 60, ("onnxruntime/__init__.py",))
    facts = HostFacts(
        platform=LINUX,
        driver=DriverInfo(present=False),
        onnxruntime=(OrtDist(name="onnxruntime-gpu", version="1.31.1", missing_files=missing),),
        nvidia_wheels=(NvidiaWheel("nvidia-cudnn-cu12", "9.1.0.70", "cudnn", 12, missing_files=MissingFiles(2, 9)),),
    )
    text = render_summary(facts)
    assert (
        "  ! INCOMPLETE: 57 of the 60 files its RECORD lists are missing, e.g. onnxruntime/__init__.py; "
        "`ortprov apply` installs it afresh"
    ) in text
    assert "  nvidia-cudnn-cu12 9.1.0.70 (CUDA 12)  ! INCOMPLETE: 2 of the 9 files its RECORD lists are missing" in text
