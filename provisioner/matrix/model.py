"""The compatibility matrix's records: onnxruntime-gpu builds, CUDA releases, NVIDIA library wheels, TensorRT.

Frozen dataclasses and nothing else: no I/O, no YAML, no network. `provisioner.matrix.load` builds a `Matrix`
from matrices/*.yaml (validated by `provisioner.matrix.check`); `provisioner.matrix.query` answers questions
about one.
"""

from __future__ import annotations

from dataclasses import dataclass

from provisioner.versions import at_least, major, vtuple


@dataclass(frozen=True)
class ProviderLibrary:
    """An execution-provider library a platform's wheel ships, as read from the wheel (bin/derive_release.py)."""

    provider: str  # cuda | tensorrt | ... (onnxruntime_providers_<provider>.so / .dll)
    needs: tuple[str, ...] | None = None  # DT_NEEDED / the DLLs its PE table names, as named; None: not read
    delay_loads: tuple[str, ...] = ()  # DLLs its PE delay-load table names (opened on first use)
    kernels: tuple[str, ...] = ()  # cubin architectures in its fatbins: sm_75, sm_90a
    ptx: tuple[str, ...] = ()  # PTX in its fatbins, JIT-compiled by the driver: compute_90
    # the TensorRT provider: TensorRT libraries its string tables name that it does not link (libnvinfer_plugin.so.10,
    # opened when needed; libnvinfer.so.8 in 1.11-1.15, which onnxruntime's Python package preloads)
    opens: tuple[str, ...] = ()
    # libraries onnxruntime's Python package loads by name for this provider on start (`_ld_preload.py`, 1.11-1.15
    # Linux: patchelf emptied the provider's DT_NEEDED of them); part of what the provider needs from the loader
    preloads: tuple[str, ...] = ()


@dataclass(frozen=True)
class WheelPlatform:
    """A platform an onnxruntime-gpu build has wheels for, and what those wheels hold."""

    platform: str  # linux-x86_64 | linux-aarch64 | windows-amd64
    glibc_min: str | None = None  # manylinux floor, "2.28"
    python: tuple[str, ...] = ()  # CPython versions with a wheel for this platform ("3.13t"); (): the build's list
    providers: tuple[ProviderLibrary, ...] | None = None  # None: the wheel's libraries were not read
    wheel: str | None = None  # the file the providers were read from
    sha256: str | None = None  # its digest, as the index lists it
    wheels_alike: int = 0  # the platform's wheels whose provider libraries have that file's CRC-32 and size
    cross_check: str | None = None  # "cuobjdump 13.4.92 lists the same" where NVIDIA's tool was run on it

    def provider(self, name: str) -> ProviderLibrary | None:
        """The provider library `name` ("cuda"), None when the wheel does not ship it (or was not read)."""
        return next((p for p in self.providers or () if p.provider == name), None)


@dataclass(frozen=True)
class OrtBuild:
    """One onnxruntime-gpu release built for one CUDA version, on one package index."""

    ort_version: str
    cuda_version: str  # the CUDA version it was built with, "12.2"
    cudnn_version: str | None  # cuDNN major it needs, "9"
    python: tuple[str, ...]  # "3.10", "3.13t" (free-threaded)
    platforms: tuple[WheelPlatform, ...]
    sources: tuple[str, ...]
    package: str = "onnxruntime-gpu"
    index_url: str | None = None  # None: PyPI; else the feed's simple index URL
    tensorrt_version: str | None = None  # TensorRT its provider was built against, "10.9"
    extras: tuple[str, ...] = ()  # "cuda", "cudnn" where the release declares them
    requirements: tuple[str, ...] = ()  # pip requirements that supply its CUDA libraries
    libraries_linked: tuple[str, ...] = ()  # sonames the CUDA provider links, "libcublasLt.so.12"
    libraries_lazy: tuple[str, ...] = ()  # opened when an operator needs them, "libcudnn.so.9"
    preload_dlls: bool = False  # onnxruntime.preload_dlls() exists
    released: str | None = None  # the day PyPI got the release's first wheel, "2023-03-22" (a feed build: its twin's)
    confirmed: bool = False  # facts read from the wheel itself (False: from documentation only)
    notes: str | None = None

    @property
    def cuda_major(self) -> int:
        """12 for "12.2"."""
        return major(self.cuda_version)

    def wheel_platform(self, tag: str) -> WheelPlatform | None:
        """The record of platform `tag` ("linux-x86_64"), None when the build has no wheel for it."""
        return next((p for p in self.platforms if p.platform == tag), None)

    def pythons_on(self, tag: str) -> tuple[str, ...]:
        """The Pythons with a wheel for platform `tag`: its own list where read, else the build's."""
        record = self.wheel_platform(tag)
        return record.python if record is not None and record.python else self.python

    @property
    def label(self) -> str:
        """ "onnxruntime-gpu 1.31.1 (CUDA 13.0)"."""
        return f"{self.package} {self.ort_version} (CUDA {self.cuda_version})"


@dataclass(frozen=True)
class CudaRelease:
    """One CUDA toolkit minor release."""

    version: str  # "12.4"
    # toolkit driver requirement, "550.54.14"; None: no table of it was found (the CUDA major's
    # minor-version-compatibility floor still applies, PTX JIT and NVRTC excepted)
    min_driver_linux: str | None
    sources: tuple[str, ...]
    min_driver_windows: str | None = None
    compute_capabilities: tuple[str, ...] = ()  # supported, "5.0" ... "9.0"


@dataclass(frozen=True)
class DockerImage:
    """An nvidia/cuda image that carries cuDNN."""

    tag: str  # nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04
    cuda_version: str
    cudnn_version: str | None
    sources: tuple[str, ...] = ()
    size_mb: int | None = None


@dataclass(frozen=True)
class CudaMajor:
    """What is common to a CUDA major version: compatibility floors and package names."""

    major: int
    sources: tuple[str, ...]
    minor_compat_driver_linux: str | None = None  # minor-version-compatibility floor
    minor_compat_driver_windows: str | None = None
    pip_packages: dict[str, str] | None = None  # library -> pip name: {"cudnn": "nvidia-cudnn-cu12", ...}
    conda_packages: tuple[str, ...] = ()  # cudatoolkit + cudnn (11), cuda-version, cuda-cudart ... (12+)
    docker_images: tuple[DockerImage, ...] = ()
    cudnn_majors: tuple[str, ...] = ()  # cuDNN majors published for this CUDA major ("8", "9")


@dataclass(frozen=True)
class LibraryWheel:
    """One published version of an NVIDIA library wheel, for exact pins."""

    package: str  # nvidia-cudnn-cu12
    version: str  # 9.1.0.70
    library: str  # cudnn
    cuda_version: str  # the CUDA release it belongs to ("12.4"), or the major for cuDNN ("12")
    sources: tuple[str, ...] = ()
    # platforms with a wheel of this version (linux-x86_64 ...); empty: unknown, taken as any platform
    platforms: tuple[str, ...] = ()
    glibc_min: str | None = None  # the highest manylinux floor among its Linux wheels, "2.27"

    def available_on(self, tag: str, glibc: str | None = None) -> bool:
        """Whether this version has a wheel for platform `tag` (and, when known, the host's glibc)."""
        if self.platforms and tag not in self.platforms:
            return False
        if glibc and self.glibc_min and tag.startswith("linux-"):
            return at_least(glibc, self.glibc_min)
        return True


@dataclass(frozen=True)
class WheelFiles:
    """The files an NVIDIA library wheel installs on one platform, for the versions that install exactly these:
    its RECORD, .dist-info left out (bin/derive_wheels.py --files). Two distributions that install one path
    overwrite each other: torch's nvidia-cudnn-cu12 and nvidia-cudnn-cu13 both install nvidia/cudnn/lib/..."""

    package: str  # nvidia-cudnn-cu13
    platform: str  # linux-x86_64 | linux-aarch64 | windows-amd64
    versions: tuple[str, ...]  # 9.13.0.50, ...
    files: tuple[str, ...]  # nvidia/cudnn/lib/libcudnn.so.9, ...
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class TensorRTRelease:
    """The TensorRT a plan installs for builds of one CUDA major that need TensorRT of this major: exact pins of
    the newest installable version (ABI is kept within a major), or no packages and a note saying why."""

    version: str  # the version the packages supply, "10.16.1.11"; without packages, the version needed ("8.6")
    cuda_major: int
    packages: tuple[str, ...]  # exact requirement strings, "tensorrt-cu13-libs==10.16.1.11"
    sources: tuple[str, ...] = ()
    notes: str | None = None  # e.g. why `packages` is empty
    index_url: str | None = None  # where the real wheels are when PyPI holds only a stub (None: PyPI's wheels)
    python: tuple[str, ...] = ()  # Pythons with a wheel, where limited ("3.6" ... "3.10"); empty: any
    platforms: tuple[str, ...] = ()  # platforms with a wheel, where known; empty: not known (behind the index)
    library_dir: str | None = None  # the site-packages folder holding its libraries ("tensorrt_libs")

    @property
    def major(self) -> int:
        """10 for "10.16.1.11"."""
        return major(self.version)

    def serves(self, version: str, cuda_major: int) -> bool:
        """Whether a build made against TensorRT `version` ("10.9", or "10" where only the major is known) for
        `cuda_major` can use this release: same CUDA major, same TensorRT major (the soname, libnvinfer.so.N),
        not older (ABI is kept within a major, forward only)."""
        wanted = vtuple(version)
        return (
            self.cuda_major == cuda_major and self.major == wanted[0] and vtuple(self.version)[: len(wanted)] >= wanted
        )


@dataclass(frozen=True)
class TensorRTProvider:
    """Whether one onnxruntime-gpu release's wheel for one platform has a TensorRT provider, and what it links.

    Not a record of its own: a view of the platform's wheel facts in onnxruntime-gpu.yaml (its `tensorrt`
    ProviderLibrary), made when the matrix is loaded (`query.tensorrt_views`: `Matrix.tensorrt_providers`)."""

    ort_version: str
    platform: str  # linux-x86_64 | linux-aarch64 | windows-amd64
    library: str | None  # "libonnxruntime_providers_tensorrt.so"; None: the wheel has no TensorRT provider
    sources: tuple[str, ...] = ()
    needed: tuple[str, ...] | None = None  # the TensorRT libraries it links (DT_NEEDED, the PE table); None: not read
    named: tuple[str, ...] = ()  # TensorRT sonames in its string tables (DT_NEEDED and those opened later)


@dataclass(frozen=True)
class TensorRTPackage:
    """One version of a TensorRT pip package on PyPI: a real wheel, NVIDIA's source stub, or another sdist."""

    package: str  # tensorrt-cu13-libs
    version: str
    kind: str  # wheel | stub (wheel-stub backend: downloads the real wheel at build time) | sdist
    installable: bool  # False: a requirement is a deprecated placeholder that refuses to build, or an sdist
    sources: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()  # Requires-Dist (a stub's PKG-INFO is the real wheel's METADATA)
    build_backend: str | None = None
    index_url: str | None = None  # a stub's [tool.wheel_stub] index_url
    platforms: tuple[str, ...] = ()
    python: tuple[str, ...] = ()
    library_dir: str | None = None  # a wheel's folder of libnvinfer
    notes: str | None = None


@dataclass(frozen=True)
class CudaError:
    """A CUDA runtime error code (cudaError_t), as logs print it: "CUDA failure 35: ..."; or a cuBLAS status
    (cublasStatus_t, named CUBLAS_STATUS_...: "CUBLAS failure 14: ..."), numbered apart from the CUDA errors."""

    name: str  # cudaErrorInsufficientDriver
    number: int  # 35
    sources: tuple[str, ...] = ()
    message: str | None = None  # cudaGetErrorString(): "CUDA driver version is insufficient for CUDA runtime version"


@dataclass(frozen=True)
class GpuModel:
    """An NVIDIA GPU product and its compute capability, for reading logs that name a GPU ("RTX 3070")."""

    name: str  # "GeForce RTX 3070", as NVIDIA's CUDA GPUs page lists it
    compute_capability: str  # "8.6"
    sources: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # other spellings of the same product ("2080ti"), matched like the name


@dataclass(frozen=True)
class GpuArchitecture:
    """An NVIDIA GPU architecture's compute capabilities and the last driver branch that runs them."""

    name: str  # "Kepler"
    compute_capabilities: tuple[str, ...]  # discrete GPUs', "3.5", "3.7"
    sources: tuple[str, ...]
    last_driver_branch: str | None = None  # "470"; None: no branch has dropped it yet


@dataclass(frozen=True)
class WindowsDriverBranch:
    """The first Windows driver of a branch where NVIDIA's CUDA table gives none (its Windows column reads N/A).

    NVIDIA numbers Windows drivers apart from Linux: a branch's Windows releases start at or after its number and
    run past it (R535: 536.25 ... 537.13; R580: 580.88 ... 581.xx), so a Windows version's first number is no branch.
    """

    branch: str  # "580"
    first_windows: str  # "580.88"
    sources: tuple[str, ...]


@dataclass(frozen=True)
class EpVariant:
    """One wheel package of a plugin execution provider, built for one CUDA major (read from its wheels)."""

    package: str  # onnxruntime-ep-nv-tensorrt-rtx-cu13
    cuda_major: int
    platforms: tuple[str, ...]  # linux-x86_64, windows-amd64 ... (from the wheel tags)
    glibc_min: str | None = None  # the Linux wheels' manylinux floor
    library: str = ""  # the provider library in the wheel (libonnxruntime_providers_nv_tensorrt_rtx.so)
    needs: tuple[str, ...] = ()  # its DT_NEEDED (Linux x86_64 wheel)
    bundled: tuple[str, ...] = ()  # the shared libraries the wheel carries beside it


@dataclass(frozen=True)
class EpRelease:
    """A plugin execution provider package release: registers into a CPU onnxruntime core at run time."""

    package: str  # the meta package: onnxruntime-ep-nv-tensorrt-rtx
    version: str
    provider: str  # ortprov's name for it (--provider): tensorrt-rtx
    ep_name: str  # the name it registers: NvTensorRTRTXExecutionProvider
    module: str  # the Python module: onnxruntime_ep_nv_tensorrt_rtx
    core: str  # the core distribution it needs: onnxruntime
    core_min: str  # the oldest core version it works with
    core_source: str  # where core_min comes from (Requires-Dist, or its documented minimum)
    variants: tuple[EpVariant, ...]
    default_variant: str = ""  # what the meta package requires
    python: str = ""  # Requires-Python
    conflicts: tuple[str, ...] = ()  # distributions that must not be installed beside it (onnxruntime-gpu)
    conflicts_source: str = ""
    compute_capabilities: tuple[str, ...] = ()  # the GPUs it supports (documented)
    compute_capabilities_source: str = ""
    device_cc_min: str = ""  # the EP's own device filter: get_ep_devices() offers no device below it ("8.0")
    driver_min: dict[str, str] | None = None  # the EP's own driver check, by compute-capability major: {"8": ...}
    device_source: str = ""  # where device_cc_min and driver_min come from (the EP's source)
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class CoreRelease:
    """A release of the CPU onnxruntime core (what plugin EPs register into): its Pythons and platforms."""

    package: str  # onnxruntime
    version: str
    python: tuple[str, ...]
    platforms: tuple[str, ...]
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Matrix:
    """All the knowledge, loaded and validated."""

    schema_version: int
    date: str
    builds: tuple[OrtBuild, ...]
    cuda_releases: tuple[CudaRelease, ...] = ()
    cuda_majors: tuple[CudaMajor, ...] = ()
    library_wheels: tuple[LibraryWheel, ...] = ()
    tensorrt: tuple[TensorRTRelease, ...] = ()
    # not read from a file: derived from the builds' wheel facts when the matrix is loaded (query.tensorrt_views)
    tensorrt_providers: tuple[TensorRTProvider, ...] = ()
    tensorrt_packages: tuple[TensorRTPackage, ...] = ()
    cuda_errors: tuple[CudaError, ...] = ()
    gpu_models: tuple[GpuModel, ...] = ()
    gpu_architectures: tuple[GpuArchitecture, ...] = ()
    windows_driver_branches: tuple[WindowsDriverBranch, ...] = ()
    wheel_files: tuple[WheelFiles, ...] = ()
    ep_releases: tuple[EpRelease, ...] = ()  # plugin-eps.yaml
    core_releases: tuple[CoreRelease, ...] = ()
    origin: str = "shipped"  # shipped | a cache path
    notices: tuple[str, ...] = ()  # why a cached copy was not used, for the CLI to show


# The data's layout: file name -> (top-level key, record type); cuda.yaml has three lists.
FILES: dict[str, tuple[tuple[str, type], ...]] = {
    "onnxruntime-gpu.yaml": (("builds", OrtBuild),),
    "cuda.yaml": (
        ("releases", CudaRelease),
        ("majors", CudaMajor),
        ("errors", CudaError),
        ("architectures", GpuArchitecture),
        ("windows_driver_branches", WindowsDriverBranch),
    ),
    "nvidia-wheels.yaml": (("wheels", LibraryWheel),),
    "tensorrt.yaml": (("releases", TensorRTRelease), ("packages", TensorRTPackage)),
    "gpus.yaml": (("gpus", GpuModel),),
    "wheel-files.yaml": (("files", WheelFiles),),
    "plugin-eps.yaml": (("eps", EpRelease), ("cores", CoreRelease)),
}
FILE_NAMES = tuple(FILES)
OPTIONAL_SECTIONS = frozenset(
    {
        ("cuda.yaml", "errors"),
        ("cuda.yaml", "architectures"),
        ("cuda.yaml", "windows_driver_branches"),
        ("tensorrt.yaml", "packages"),
    }
)  # added later: a copy written before may lack it (tensorrt.yaml's former `providers` is read from the builds)
OPTIONAL_FILES = frozenset(
    {"gpus.yaml", "wheel-files.yaml", "plugin-eps.yaml"}
)  # added later: a copy written before may lack them
REQUIRED_FILE_NAMES = tuple(name for name in FILE_NAMES if name not in OPTIONAL_FILES)
PART_FILES = {  # a Matrix part -> its file, for messages
    "builds": "onnxruntime-gpu.yaml",
    "cuda": "cuda.yaml",
    "wheels": "nvidia-wheels.yaml",
    "tensorrt": "tensorrt.yaml",
    "gpus": "gpus.yaml",
    "files": "wheel-files.yaml",
    "eps": "plugin-eps.yaml",
}
