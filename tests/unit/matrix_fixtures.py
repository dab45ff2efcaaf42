"""A small Matrix for planner tests, shaped like the real one (CUDA 11.8 -> 13.x eras).

Figures follow NVIDIA's and ONNX Runtime's published tables where they are well known (toolkit driver
floors, minor-version-compatibility floors, compute capabilities per CUDA release); builds and library
versions are a trimmed, illustrative selection. The planner must get every decision from this data.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from provisioner.facts import (
    DriverInfo,
    Gpu,
    HostFacts,
    NvidiaWheel,
    OrtDist,
    PlatformInfo,
    PythonInfo,
    TorchInfo,
)
from provisioner.matrix.model import (
    CudaMajor,
    CudaRelease,
    LibraryWheel,
    Matrix,
    OrtBuild,
    ProviderLibrary,
    TensorRTRelease,
    WheelPlatform,
)

if TYPE_CHECKING:
    from pathlib import Path

SRC = ("tests/unit/matrix_fixtures.py",)
CUDA12_FEED = "https://aiinfra.pkgs.visualstudio.com/PublicPackages/_packaging/onnxruntime-cuda-12/pypi/simple/"
CUDA11_FEED = "https://aiinfra.pkgs.visualstudio.com/PublicPackages/_packaging/onnxruntime-cuda-11/pypi/simple/"

CC_11 = (
    "3.5",
    "3.7",
    "5.0",
    "5.2",
    "5.3",
    "6.0",
    "6.1",
    "6.2",
    "7.0",
    "7.2",
    "7.5",
    "8.0",
    "8.6",
    "8.7",
    "8.9",
    "9.0",
)
CC_12 = ("5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0")
CC_128 = (*CC_12, "10.0", "10.1", "12.0")
CC_13 = ("7.5", "8.0", "8.6", "8.7", "8.8", "8.9", "9.0", "10.0", "11.0", "12.0", "12.1")

LINUX = WheelPlatform("linux-x86_64", "2.28")
LINUX_217 = WheelPlatform("linux-x86_64", "2.17")
AARCH64 = WheelPlatform("linux-aarch64", "2.34")
WINDOWS = WheelPlatform("windows-amd64")


CU128_KERNELS = "52 60 61 70 75 80 86 89 90 100 120"  # an illustrative CUDA 12.8 arch list
TRT = ("cuda", "tensorrt")  # the providers of x86_64 and Windows wheels; aarch64 ships the CUDA one only


def with_code(
    platform: WheelPlatform, kernels: str, ptx: str = "", providers: tuple[str, ...] = ("cuda",)
) -> WheelPlatform:
    """The platform with its wheels read: a CUDA provider holding `kernels` ("75 80 90a") and `ptx` ("90")."""
    cuda = ProviderLibrary(
        "cuda", kernels=tuple(f"sm_{k}" for k in kernels.split()), ptx=tuple(f"compute_{p}" for p in ptx.split())
    )
    read = tuple(cuda if name == "cuda" else ProviderLibrary(name) for name in providers)
    return replace(platform, providers=read, wheel=f"fixture-{platform.platform}.whl")


CU12_NAMES = {
    "cudart": "nvidia-cuda-runtime-cu12",
    "cublas": "nvidia-cublas-cu12",
    "cufft": "nvidia-cufft-cu12",
    "curand": "nvidia-curand-cu12",
    "nvrtc": "nvidia-cuda-nvrtc-cu12",
    "cudnn": "nvidia-cudnn-cu12",
}
CU13_NAMES = {
    "cudart": "nvidia-cuda-runtime",
    "cublas": "nvidia-cublas",
    "cufft": "nvidia-cufft",
    "curand": "nvidia-curand",
    "nvrtc": "nvidia-cuda-nvrtc",
    "cudnn": "nvidia-cudnn-cu13",
}
CU11_NAMES = {
    "cudart": "nvidia-cuda-runtime-cu11",
    "cublas": "nvidia-cublas-cu11",
    "cudnn": "nvidia-cudnn-cu11",
}

CU12_LINKED = ("libcublasLt.so.12", "libcublas.so.12", "libcurand.so.10", "libcudart.so.12", "libcuda.so.1")
CU12_LAZY = ("libcudnn.so.9", "libcufft.so.11", "libnvrtc.so.12")

CU13_REQS = (
    "nvidia-cuda-runtime~=13.0",
    "nvidia-cublas~=13.0",
    "nvidia-cuda-nvrtc~=13.0",
    "nvidia-cufft~=12.0",
    "nvidia-curand~=10.0",
    "nvidia-cudnn-cu13~=9.0",
)

PY_38_311 = ("3.8", "3.9", "3.10", "3.11")
PY_38_312 = ("3.8", "3.9", "3.10", "3.11", "3.12")
PY_310_313 = ("3.10", "3.11", "3.12", "3.13")
PY_311_314 = ("3.11", "3.12", "3.13", "3.13t", "3.14", "3.14t")


def _build(
    version: str,
    cuda: str,
    cudnn: str | None,
    python: tuple[str, ...],
    platforms: tuple[WheelPlatform, ...],
    **kw: object,
) -> OrtBuild:
    kw.setdefault("notes", "illustrative test data")
    return OrtBuild(
        ort_version=version,
        cuda_version=cuda,
        cudnn_version=cudnn,
        python=python,
        platforms=platforms,
        sources=SRC,
        **kw,
    )  # type: ignore[arg-type]


BUILDS = (
    _build("1.16.3", "11.8", "8", PY_38_311, (LINUX_217, WINDOWS), libraries_linked=("libcublas.so.11",)),
    _build(
        "1.19.2",
        "12.2",
        "9",
        PY_38_312,
        (LINUX, WINDOWS),
        libraries_linked=CU12_LINKED,
        libraries_lazy=CU12_LAZY,
        tensorrt_version="10.1",
    ),
    _build(
        "1.19.2",
        "11.8",
        "8",
        PY_38_312,
        (LINUX, WINDOWS),
        index_url=CUDA11_FEED,
        libraries_linked=("libcublas.so.11", "libcudnn.so.8"),
    ),
    _build(
        "1.20.1",
        "12.2",
        "9",
        PY_310_313,
        tuple(with_code(p, "52 61 70 75 80 86 89 90", "90", TRT) for p in (LINUX, WINDOWS)),
        libraries_linked=CU12_LINKED,
        libraries_lazy=CU12_LAZY,
        tensorrt_version="10.4",
    ),
    _build(
        "1.22.0",
        "12.4",
        "9",
        PY_310_313,
        tuple(with_code(p, "61 70 75 80 86 89 90", "90", TRT) for p in (LINUX, WINDOWS))
        + (with_code(AARCH64, "61 70 75 80 86 89 90", "90"),),
        extras=("cuda", "cudnn"),
        libraries_linked=CU12_LINKED,
        libraries_lazy=CU12_LAZY,
        tensorrt_version="10.9",
    ),
    _build(
        "1.30.0",
        "12.8",
        "9",
        PY_311_314,
        tuple(with_code(p, CU128_KERNELS, "120", TRT) for p in (LINUX, AARCH64, WINDOWS)),
        extras=("cuda", "cudnn"),
        libraries_linked=CU12_LINKED,
        libraries_lazy=CU12_LAZY,
    ),
    _build(
        "1.31.1",
        "13.0",
        "9",
        PY_311_314,
        tuple(with_code(p, "75 80 86 89 90 100 120", "", TRT) for p in (LINUX, WINDOWS))
        + (with_code(AARCH64, "75 80 86 89 90 100 120"),),
        extras=("cuda", "cudnn"),
        requirements=CU13_REQS,
        libraries_linked=("libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libcudart.so.13", "libcuda.so.1"),
        tensorrt_version="10.13",
        preload_dlls=True,
    ),
    _build(
        "1.31.1",
        "12.8",
        "9",
        PY_311_314,
        tuple(with_code(p, CU128_KERNELS, "120", TRT) for p in (LINUX, WINDOWS)),
        index_url=CUDA12_FEED,
        libraries_linked=CU12_LINKED,
        libraries_lazy=CU12_LAZY,
    ),
)

CUDA_RELEASES = (
    CudaRelease("11.8", "520.61.05", SRC, "520.06", CC_11),
    CudaRelease("12.2", "535.54.03", SRC, "536.25", CC_12),
    CudaRelease("12.4", "550.54.14", SRC, "551.61", CC_12),
    CudaRelease("12.8", "570.26", SRC, "570.65", CC_128),
    CudaRelease("13.0", "580.65.06", SRC, "580.88", CC_13),
    CudaRelease("13.1", "590.44.01", SRC, "591.34", CC_13),
)

CUDA_MAJORS = (
    CudaMajor(11, SRC, "450.80.02", "452.39", CU11_NAMES),
    CudaMajor(12, SRC, "525.60.13", "527.41", CU12_NAMES),
    CudaMajor(13, SRC, "580.65.06", "580.88", CU13_NAMES),
)


ALL_PLATFORMS = ("linux-x86_64", "linux-aarch64", "windows-amd64")
X86_WIN = ("linux-x86_64", "windows-amd64")


def _wheels() -> tuple[LibraryWheel, ...]:
    rows = [
        (
            "nvidia-cuda-runtime-cu12",
            "cudart",
            [("12.2", "12.2.140"), ("12.4", "12.4.127"), ("12.8", "12.8.90")],
        ),
        ("nvidia-cublas-cu12", "cublas", [("12.2", "12.2.5.6"), ("12.4", "12.4.5.8"), ("12.8", "12.8.4.1")]),
        ("nvidia-cufft-cu12", "cufft", [("12.2", "11.0.8.103"), ("12.4", "11.2.1.3"), ("12.8", "11.3.3.83")]),
        (
            "nvidia-curand-cu12",
            "curand",
            [("12.2", "10.3.3.141"), ("12.4", "10.3.5.147"), ("12.8", "10.3.9.90")],
        ),
        (
            "nvidia-cuda-nvrtc-cu12",
            "nvrtc",
            [("12.2", "12.2.140"), ("12.4", "12.4.127"), ("12.8", "12.8.93")],
        ),
        ("nvidia-cudnn-cu12", "cudnn", [("12", "9.1.0.70"), ("12", "9.8.0.87"), ("12", "8.9.2.26")]),
        ("nvidia-cuda-runtime", "cudart", [("13.0", "13.0.96"), ("13.1", "13.1.80")]),
        ("nvidia-cublas", "cublas", [("13.0", "13.0.2.14"), ("13.1", "13.1.0.3")]),
        ("nvidia-cuda-nvrtc", "nvrtc", [("13.0", "13.0.88"), ("13.1", "13.1.80")]),
        ("nvidia-cufft", "cufft", [("13.0", "12.0.0.61"), ("13.1", "12.1.0.31")]),
        ("nvidia-curand", "curand", [("13.0", "10.4.0.35"), ("13.1", "10.4.1.34")]),
        ("nvidia-cudnn-cu13", "cudnn", [("13", "9.13.0.50"), ("13", "9.14.0.64")]),
        ("nvidia-cuda-runtime-cu11", "cudart", [("11.8", "11.8.89")]),
        ("nvidia-cublas-cu11", "cublas", [("11.8", "11.11.3.6")]),
        ("nvidia-cudnn-cu11", "cudnn", [("11", "8.9.4.25"), ("11", "8.9.6.50")]),
    ]
    # as on PyPI: cuDNN 8.9.6.50 for CUDA 11 has only a Linux x86_64 wheel, 8.9.4.25 has a Windows one too
    platforms = {("nvidia-cudnn-cu11", "8.9.6.50"): ("linux-x86_64",), ("nvidia-cudnn-cu11", "8.9.4.25"): X86_WIN}
    return tuple(
        LibraryWheel(pkg, version, lib, cuda, SRC, platforms=platforms.get((pkg, version), ALL_PLATFORMS))
        for pkg, lib, items in rows
        for cuda, version in items
    )


TENSORRT = (
    TensorRTRelease("10.1", 12, ("tensorrt-cu12-libs==10.1.0",), SRC),
    TensorRTRelease("10.4", 12, ("tensorrt-cu12-libs==10.4.0",), SRC),
    TensorRTRelease("10.9", 12, (), SRC, notes="no pip packages (illustrative)"),
    TensorRTRelease("10.13", 13, ("tensorrt-cu13-libs==10.13.3.9",), SRC),
)

MATRIX = Matrix(
    schema_version=1,
    date="2026-11-20",
    builds=BUILDS,
    cuda_releases=CUDA_RELEASES,
    cuda_majors=CUDA_MAJORS,
    library_wheels=_wheels(),
    tensorrt=TENSORRT,
    origin="tests/unit/matrix_fixtures.py",
)

# --- hosts ----------------------------------------------------------------------------------------------

DRIVER_CUDA = {
    "418": "10.1",
    "470": "11.4",
    "525": "12.0",
    "535": "12.2",
    "550": "12.4",
    "575": "12.9",
    "580": "13.0",
    "590": "13.1",
}


def host(
    driver: str | None = "580.65.06",
    cc: str | tuple[str, ...] | None = "9.0",
    python: str | None = "3.12",
    platform: str = "linux-x86_64",
    glibc: str | None = "2.36",
    label: str = "",
    **kw: object,
) -> HostFacts:
    """A host as a probe would report it; driver=None: no driver (a build server)."""
    os_name, arch = platform.split("-", 1)
    if driver is None:
        drv = DriverInfo(present=False)
    else:
        drv = DriverInfo(
            present=True, version=driver, cuda_version=DRIVER_CUDA.get(driver.split(".")[0]), source="nvml"
        )
    ccs = (cc,) if isinstance(cc, str) else (cc or ())
    gpus = tuple(Gpu(index=i, name=f"GPU{i}", compute_capability=c) for i, c in enumerate(ccs))
    py = None
    if python:
        free = python.endswith("t")
        version = python.rstrip("t") + ".1"
        py = PythonInfo(executable="/usr/bin/python3", version=version, free_threaded=free)
    plat = PlatformInfo(os=os_name, arch=arch, glibc=glibc if os_name == "linux" else None)
    return HostFacts(platform=plat, driver=drv, python=py, gpus=gpus, label=label, **kw)  # type: ignore[arg-type]


def with_torch(base: HostFacts, cuda_major: int) -> HostFacts:
    """torch with its NVIDIA wheels for CUDA 12 or 13."""
    if cuda_major == 12:
        torch = TorchInfo("2.5.1+cu124", "12.4")
        wheels = (
            NvidiaWheel("nvidia-cudnn-cu12", "9.1.0.70", "cudnn", 12),
            NvidiaWheel("nvidia-cuda-runtime-cu12", "12.4.127", "cudart", 12),
            NvidiaWheel("nvidia-cublas-cu12", "12.4.5.8", "cublas", 12),
        )
    else:
        torch = TorchInfo("2.11.0+cu130", "13.0")
        wheels = (
            NvidiaWheel("nvidia-cudnn-cu13", "9.13.0.50", "cudnn", 13),
            NvidiaWheel("nvidia-cuda-runtime", "13.0.96", "cudart", 13),
            NvidiaWheel("nvidia-cublas", "13.0.2.14", "cublas", 13),
        )
    return replace(base, torch=torch, nvidia_wheels=wheels)


def with_cpu_ort(base: HostFacts, version: str = "1.30.0") -> HostFacts:
    """The CPU onnxruntime installed (it shadows onnxruntime-gpu)."""
    return replace(base, onnxruntime=(OrtDist("onnxruntime", version),))


def write_matrix_dir(directory: Path, matrix: Matrix = MATRIX, date: str | None = None) -> Path:
    """Write `matrix` as the four matrices/*.yaml files (the format load_matrix reads) into `directory`."""
    import yaml

    from provisioner.serde import to_jsonable

    directory.mkdir(parents=True, exist_ok=True)
    header = {"schema_version": 1, "date": date or matrix.date}
    parts = {
        "onnxruntime-gpu.yaml": {"builds": matrix.builds},
        "cuda.yaml": {"releases": matrix.cuda_releases, "majors": matrix.cuda_majors},
        "nvidia-wheels.yaml": {"wheels": matrix.library_wheels},
        "tensorrt.yaml": {"releases": matrix.tensorrt},
    }
    for name, sections in parts.items():
        data = {**header, **{key: to_jsonable(list(value)) for key, value in sections.items()}}
        (directory / name).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return directory
