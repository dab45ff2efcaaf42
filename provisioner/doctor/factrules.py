"""The fact rules: the host model's parts (DriverInfo, RuntimeEnvironment, OrtDist, a library's state) -> findings.
Pure. The live doctor (host.py) calls them on the probed machine, the log rules (logrules.py) on a log's facts: the
same facts give the same code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from provisioner.doctor.case import version_major
from provisioner.findings import Finding

if TYPE_CHECKING:
    from provisioner.doctor.fixes import Fixes
    from provisioner.facts import DriverInfo, OrtDist, RuntimeEnvironment

# CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES values that hide every GPU (set but empty hides them too)
HIDDEN_VALUES = frozenset({"", "-1", "none", "void", "nodevfiles"})


def driver_findings(driver: DriverInfo, environment: RuntimeEnvironment, fixes: Fixes) -> list[Finding]:
    """A driver whose libraries differ from the kernel module, or no driver (in a container: no GPU passed in)."""
    if driver.error and "mismatch" in driver.error.lower():
        return [
            Finding(
                "driver-library-mismatch",
                "error",
                "the NVIDIA kernel driver and its libraries differ",
                (driver.error,),
                fixes.for_code("driver-library-mismatch"),
            )
        ]
    if driver.present:
        return []
    evidence = tuple(x for x in (f"driver: none ({driver.source})", driver.error) if x)
    if environment.container:
        title = f"this {environment.container} container sees no NVIDIA driver (no GPU access, or none on the host)"
        return [
            Finding(
                "gpu-hidden",
                "error",
                title,
                (*evidence, f"container: {environment.container}"),
                fixes.for_code("gpu-hidden"),
            )
        ]
    return [Finding("no-driver", "error", "no NVIDIA driver is loaded", evidence, fixes.for_code("no-driver"))]


def package_findings(ort: tuple[OrtDist, ...], fixes: Fixes, evidence: tuple[str, ...] = ()) -> list[Finding]:
    """The onnxruntime flavours installed: only the CPU one, or the CPU one next to the GPU one."""
    gpu = [d for d in ort if d.is_gpu]
    cpu = [d for d in ort if d.name == "onnxruntime"]
    listed = evidence or tuple(f"installed: {d.name} {d.version}" for d in ort)
    if cpu and not gpu:
        title = "only the CPU onnxruntime package is installed"
        return [Finding("cpu-package-only", "error", title, listed, fixes.for_code("cpu-package-only"))]
    if cpu and gpu:
        title = "the CPU and GPU onnxruntime packages are both installed (they share one folder)"
        return [Finding("cpu-and-gpu-installed", "error", title, listed, fixes.for_code("cpu-and-gpu-installed"))]
    return []


def driver_vs_build(
    gpu: OrtDist, driver_cuda: str, driver_version: str | None, fixes: Fixes, evidence: tuple[str, ...] = ()
) -> list[Finding]:
    """The driver's CUDA major is older than the one the installed build was made for."""
    build_major, driver_major = version_major(gpu.cuda_version), version_major(driver_cuda)
    if build_major is None or driver_major is None or driver_major >= build_major:
        return []
    return [
        Finding(
            "driver-too-old",
            "error",
            f"the driver supports CUDA {driver_cuda}; {gpu.name} {gpu.version} needs CUDA {gpu.cuda_version}",
            evidence
            or (
                f"driver {driver_version} (CUDA {driver_cuda})",
                f"{gpu.name} {gpu.version} built for CUDA {gpu.cuda_version}",
            ),
            fixes.for_code("driver-too-old"),
        )
    ]


def library_code(library: str, state: str) -> str:
    """The code of a CUDA-family library's problem, for the host's facts and a log's alike. `state`: missing (not
    there at all), wrong-major (only another major is there), not-on-path (there, where the loader does not look)."""
    if state == "wrong-major":
        return "cuda-major-mismatch"
    if state == "not-on-path":
        return "library-not-on-path"
    if library in ("nvinfer", "nvonnxparser"):
        return "tensorrt-missing"
    if library == "cuda":
        return "no-driver"
    if library == "zlibwapi":
        return "zlibwapi-missing"
    return "cudnn-missing" if library == "cudnn" else "cuda-library-missing"
