"""Plans and matrices built by hand for the recipe tests (the planner has its own tests)."""

from __future__ import annotations

from dataclasses import replace

from provisioner.facts import DriverInfo, HostFacts, PlatformInfo, PythonInfo
from provisioner.matrix.model import CudaMajor, DockerImage, Matrix, OrtBuild, WheelPlatform
from provisioner.plan import LibraryPin, Plan, Rejection, Step


def host(
    platform: str = "linux-x86_64",
    python: str = "3.12.3",
    glibc: str | None = "2.36",
    driver: str = "580.159.04",
    driver_cuda: str = "13.0",
    label: str = "H100, driver 580",
) -> HostFacts:
    """A host as `ortprov detect --json` would describe it."""
    os_name, arch = platform.split("-")
    return HostFacts(
        platform=PlatformInfo(os=os_name, arch=arch, glibc=glibc if os_name == "linux" else None),
        driver=DriverInfo(present=True, version=driver, cuda_version=driver_cuda, source="nvml"),
        python=PythonInfo(executable="/usr/bin/python3", version=python),
        label=label,
    )


def cuda12_plan(platform: str = "linux-x86_64", **changes: object) -> Plan:
    """onnxruntime-gpu 1.23.2 for CUDA 12 with exact NVIDIA pins, replacing the CPU package."""
    plan = Plan(
        ort_version="1.23.2",
        package="onnxruntime-gpu",
        cuda_version="12.8",
        cudnn_version="9",
        steps=(
            Step("uninstall", ("onnxruntime",), "remove the CPU onnxruntime, which shadows onnxruntime-gpu"),
            Step(
                "install",
                (
                    "onnxruntime-gpu[cuda,cudnn]==1.23.2",
                    "nvidia-cudnn-cu12==9.10.2.21",
                    "nvidia-cuda-runtime-cu12==12.8.90",
                ),
                "install onnxruntime-gpu 1.23.2 with its CUDA 12 libraries, pinned",
            ),
        ),
        pins=(
            LibraryPin("nvidia-cudnn-cu12", "9.10.2.21", "cuDNN 9 build for CUDA 12"),
            LibraryPin("nvidia-cuda-runtime-cu12", "12.8.90", "the CUDA minor the wheel was built with"),
        ),
        reasons=("newest release whose CUDA 12 build runs on driver 580",),
        notes=("torch is not installed: the NVIDIA wheels are new",),
        rejected=(Rejection("onnxruntime-gpu 1.31.1 (CUDA 13.0)", "pinned with --cuda 12"),),
        hosts=(host(platform),),
    )
    return replace(plan, **changes)  # type: ignore[arg-type]


def cuda11_plan() -> Plan:
    """An old CUDA 11.8 build (cudatoolkit era for conda)."""
    return Plan(
        ort_version="1.16.3",
        package="onnxruntime-gpu",
        cuda_version="11.8",
        cudnn_version="8",
        steps=(Step("install", ("onnxruntime-gpu==1.16.3",), "install onnxruntime-gpu 1.16.3"),),
        hosts=(host(python="3.10.12", driver="470.256.02", driver_cuda="11.4"),),
    )


def matrix() -> Matrix:
    """The matrix records the recipes read: builds, conda names and nvidia/cuda images per CUDA major."""
    linux = (WheelPlatform("linux-x86_64", "2.28"),)
    return Matrix(
        schema_version=1,
        date="2026-11-22",
        builds=(
            OrtBuild(
                "1.23.2",
                "12.8",
                "9",
                ("3.10", "3.11", "3.12", "3.13"),
                linux,
                ("test",),
                extras=("cuda", "cudnn"),
                libraries_linked=(
                    "libcublasLt.so.12",
                    "libcublas.so.12",
                    "libcurand.so.10",
                    "libcudart.so.12",
                    "libcuda.so.1",
                ),
                libraries_lazy=("libcudnn.so.9", "libcufft.so.11"),
                preload_dlls=True,
            ),
            OrtBuild(
                "1.16.3",
                "11.8",
                "8",
                ("3.10",),
                linux,
                ("test",),
                libraries_linked=(
                    "libcublasLt.so.11",
                    "libcublas.so.11",
                    "libcudart.so.11.0",
                    "libcuda.so.1",
                ),
                libraries_lazy=("libcudnn.so.8",),
            ),
        ),
        cuda_majors=(
            CudaMajor(
                11,
                ("test",),
                conda_packages=("cudatoolkit", "cudnn"),
                docker_images=(DockerImage("nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "11.8.0", "8"),),
            ),
            CudaMajor(
                12,
                ("test",),
                minor_compat_driver_linux="525.60.13",
                conda_packages=("cuda-version", "cuda-cudart", "libcublas", "libcufft", "libcurand", "cudnn"),
                docker_images=(
                    DockerImage("nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04", "12.6.3", "9", size_mb=3300),
                    DockerImage("nvidia/cuda:12.9.1-cudnn-runtime-ubuntu24.04", "12.9.1", "9", size_mb=3400),
                    DockerImage("nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04", "12.8.1", "9", size_mb=3400),
                ),
            ),
        ),
    )
