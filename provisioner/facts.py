"""HostFacts: everything ortprov knows about a host, as frozen dataclasses with a JSON round trip.

Produced by `provisioner.probe` on a real machine (`ortprov detect --json`), rebuilt from a saved host file
(`--host FILE`, read by provisioner/userfiles.py), or adjusted by planning flags. The planner and doctor only
ever see this model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields, is_dataclass

from provisioner.errors import BadInput
from provisioner.serde import from_jsonable, to_jsonable

FACTS_SCHEMA_VERSION = 1

PLATFORM_TAGS = ("linux-x86_64", "linux-aarch64", "windows-amd64")


@dataclass(frozen=True)
class Gpu:
    """One NVIDIA GPU as NVML (or procfs) reports it."""

    index: int
    name: str
    compute_capability: str | None = None  # "9.0"
    memory_mib: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    visible: bool = True  # False: present, but hidden by CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES
    # MIG instances' "MIG-..." UUIDs, which those variables may name: () MIG off or unsupported, None unknown
    mig_uuids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class DriverInfo:
    """The NVIDIA kernel driver and the newest CUDA version it supports."""

    present: bool
    version: str | None = None  # "580.159.04"
    cuda_version: str | None = None  # "13.0"
    source: str = "none"  # nvml | procfs | flags | none
    error: str | None = None  # one line, e.g. "NVML: Driver/library version mismatch"


@dataclass(frozen=True)
class PlatformInfo:
    """Operating system, CPU architecture and C library."""

    os: str  # linux | windows | darwin
    arch: str  # x86_64 | aarch64 | amd64 | arm64
    glibc: str | None = None  # "2.36"; None on musl, Windows and macOS
    os_release: str | None = None  # "Debian GNU/Linux 12 (bookworm)"

    @property
    def tag(self) -> str:
        """`linux-x86_64`, `linux-aarch64`, `windows-amd64`, ... as used by the matrix."""
        arch = self.arch.lower()
        if self.os == "windows":
            arch = {"x86_64": "amd64", "arm64": "arm64", "aarch64": "arm64"}.get(arch, arch)
        elif arch in ("amd64", "x64"):
            arch = "x86_64"
        elif arch == "arm64":
            arch = "aarch64"
        return f"{self.os}-{arch}"


@dataclass(frozen=True)
class PythonInfo:
    """The target interpreter (not necessarily the one running ortprov)."""

    executable: str
    version: str  # "3.12.3"
    implementation: str = "cpython"
    abi: str = ""  # "cp312", "cp313t"
    free_threaded: bool = False
    is_venv: bool = False
    is_conda: bool = False
    externally_managed: bool = False  # PEP 668 marker present
    prefix: str = ""
    loader_hook: str | None = None  # ortprov's loader hook (site-packages/ortprov-loader.pth), where installed

    @property
    def minor(self) -> str:
        """ "3.12" (with a trailing "t" for a free-threaded build)."""
        major_minor = ".".join(self.version.split(".")[:2])
        return major_minor + ("t" if self.free_threaded else "")


@dataclass(frozen=True)
class RuntimeEnvironment:
    """Container, WSL and the device-visibility variables that hide GPUs."""

    container: str | None = None  # docker | podman | kubernetes | lxc | None
    wsl: bool = False
    cuda_visible_devices: str | None = None
    nvidia_visible_devices: str | None = None
    cuda_device_order: str | None = None  # PCI_BUS_ID: CUDA numbers GPUs as NVML does; else fastest first
    cuda_force_ptx_jit: str | None = None  # CUDA_FORCE_PTX_JIT: "1" makes the driver ignore kernels and JIT PTX


@dataclass(frozen=True)
class MissingFiles:
    """Files a distribution's RECORD lists that are not on disk: it is installed, but incomplete (another
    distribution's removal took files they shared, or someone deleted them). Byte-code and files recorded as
    empty are not counted: losing a shared empty `__init__.py` breaks nothing."""

    count: int  # missing
    listed: int  # checked: the RECORD's entries less byte-code and empty files
    sample: tuple[str, ...] = ()  # a few of the missing paths, as the RECORD names them

    def __str__(self) -> str:
        """ "57 of the 60 files its RECORD lists are missing, e.g. onnxruntime/__init__.py"."""
        example = f", e.g. {self.sample[0]}" if self.sample else ""
        return f"{self.count} of the {self.listed} files its RECORD lists are missing{example}"


@dataclass(frozen=True)
class OrtDist:
    """An installed onnxruntime flavour (onnxruntime, onnxruntime-gpu, onnxruntime-directml, ...)."""

    name: str
    version: str
    location: str | None = None
    cuda_version: str | None = None  # from onnxruntime/capi/build_and_package_info.py
    cudnn_version: str | None = None  # older builds record it too
    build_package_name: str | None = None  # package_name in build_and_package_info.py
    missing_files: MissingFiles | None = None  # None: every file its RECORD lists is there (or not checked)

    @property
    def is_gpu(self) -> bool:
        """True for a CUDA/TensorRT flavour."""
        return self.name in ("onnxruntime-gpu", "ort-nightly-gpu", "onnxruntime-gpu-cuda12")


@dataclass(frozen=True)
class TorchInfo:
    """torch, which brings its own CUDA libraries (and sometimes 'fixes' onnxruntime by accident)."""

    version: str
    cuda_version: str | None = None  # torch.version.cuda, read from torch/version.py
    location: str | None = None


@dataclass(frozen=True)
class NvidiaWheel:
    """An installed NVIDIA pip wheel (nvidia-cudnn-cu12, nvidia-cublas, ...)."""

    name: str
    version: str
    library: str | None = None  # cudnn | cublas | cudart | cufft | curand | nvrtc | tensorrt | ...
    cuda_major: int | None = None  # from the -cuNN suffix, or the version for CUDA 13's unsuffixed names
    lib_dirs: tuple[str, ...] = ()
    missing_files: MissingFiles | None = None  # None: every file its RECORD lists is there (or not checked)
    # the files it installed (RECORD, relative to site-packages; metadata, byte-code and empty files left out):
    # another distribution installed over them overwrites them. None: not read (an older host file)
    files: tuple[str, ...] | None = None


@dataclass(frozen=True)
class LibraryHit:
    """Where the dynamic loader would find one CUDA library of one major version."""

    library: str  # cuda | cudart | cublas | cublasLt | cufft | curand | nvrtc | cudnn | nvinfer
    major: str | None  # "9" for libcudnn.so.9
    filename: str  # libcudnn.so.9 / cudnn64_9.dll
    path: str
    source: str  # pip | torch | conda | ld_library_path | ldconfig | cuda_toolkit | path | cuda_path | wsl | system
    # the CUDA major it belongs to, where the file says so through its package (a conda record's build string or
    # cuda-version dependency, the -cuNN pip wheel) or its own soname (libcudart.so.12); None: not known here
    cuda_major: int | None = None
    package: str | None = (
        None  # the package that installed it: "conda cudnn 9.3.0.75 (cuda12...)", "nvidia-cudnn-cu12 9.1.0.70"
    )

    @property
    def searched(self) -> bool:
        """Whether a plain process of the target interpreter would load it: not a toolkit under /usr/local that
        no search path names, nor CUDA_PATH's folder that PATH does not name."""
        return self.source not in UNSEARCHED_SOURCES


# found where no loader looks by itself (a toolkit dir off LD_LIBRARY_PATH and the ld.so cache; %CUDA_PATH%\bin)
UNSEARCHED_SOURCES = frozenset({"cuda_toolkit", "cuda_path"})


@dataclass(frozen=True)
class HostFacts:
    """Everything ortprov knows about one host and one target interpreter."""

    platform: PlatformInfo
    driver: DriverInfo
    python: PythonInfo | None = None
    gpus: tuple[Gpu, ...] = ()
    environment: RuntimeEnvironment = field(default_factory=RuntimeEnvironment)
    onnxruntime: tuple[OrtDist, ...] = ()
    torch: TorchInfo | None = None
    nvidia_wheels: tuple[NvidiaWheel, ...] = ()
    libraries: tuple[LibraryHit, ...] = ()
    probe_errors: tuple[str, ...] = ()  # one line each: what could not be read, and why
    schema_version: int = FACTS_SCHEMA_VERSION
    captured_by: str = ""  # "ortprov 0.1.0"
    label: str = ""  # a name for saved host files ("H100, driver 580")

    @property
    def visible_gpus(self) -> tuple[Gpu, ...]:
        """GPUs a CUDA program in this environment can use."""
        return tuple(gpu for gpu in self.gpus if gpu.visible)

    def to_dict(self) -> dict:
        """Plain JSON-able dict."""
        return to_jsonable(self)

    def to_json(self) -> str:
        """Pretty JSON, the format of `ortprov detect --json` and host files."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)

    @classmethod
    def from_dict(cls, data: object, origin: str = "host file") -> HostFacts:
        """Rebuild from a dict; BadInput naming the field on anything malformed."""
        if not isinstance(data, dict):
            raise BadInput(f"{origin} is not a JSON object", hint="create one with `ortprov detect --json > host.json`")
        version = data.get("schema_version", FACTS_SCHEMA_VERSION)
        if not isinstance(version, int) or version > FACTS_SCHEMA_VERSION:
            raise BadInput(
                f"{origin} has schema_version {version!r}; this ortprov reads up to {FACTS_SCHEMA_VERSION}",
                hint="upgrade ortprov, or re-create the file with this version's `ortprov detect --json`",
            )
        try:
            facts = from_jsonable(cls, data)
            _check_versions(facts, "$")
        except (ValueError, RecursionError) as exc:
            raise BadInput(f"{origin} is malformed: {exc}", hint="re-create it with `ortprov detect --json`") from None
        return facts


# The fields that hold versions, and what each must look like: the planner compares them as numbers.
# ASCII digits only: a host file is written by `ortprov detect`; a full-width `８.６` is refused, not half-read
_DOTTED = re.compile(r"^\d{1,9}(\.\d{1,9})*$", re.ASCII)  # 580.65.06, 13.0, 2.36
_LEADING = re.compile(r"^\d{1,9}(\.\d{1,9})*", re.ASCII)  # 3.12.3, 1.20.0rc1, 2.3.0+cu121: starts with one
_CC = re.compile(r"^\d{1,3}\.\d{1,3}$", re.ASCII)  # 8.6
_VERSION_FIELDS: dict[str, tuple[re.Pattern[str], str]] = {
    "DriverInfo.version": (_DOTTED, "an NVIDIA driver version such as 580.65.06"),
    "DriverInfo.cuda_version": (_DOTTED, "a CUDA version such as 13.0"),
    "Gpu.compute_capability": (_CC, "a compute capability such as 8.6"),
    "PythonInfo.version": (_LEADING, "a Python version such as 3.12.3"),
    "PlatformInfo.glibc": (_DOTTED, "a glibc version such as 2.36"),
    "OrtDist.version": (_LEADING, "a version"),
    "OrtDist.cuda_version": (_DOTTED, "a CUDA version"),
    "OrtDist.cudnn_version": (_DOTTED, "a cuDNN version"),
    "TorchInfo.version": (_LEADING, "a version"),
    "TorchInfo.cuda_version": (_DOTTED, "a CUDA version"),
    "NvidiaWheel.version": (_LEADING, "a version"),
    "LibraryHit.major": (_DOTTED, "a major version"),
}

# The fields that name a kind (compared as words by the planner and the matrix): one ASCII word, nothing
# invisible (an arch of "x86_64\x00" matched no wheel and was shown as the one that has wheels)
_WORD = re.compile(r"^[A-Za-z0-9_]+\Z", re.ASCII)
_WORD_FIELDS = {
    "PlatformInfo.os": "an operating system such as linux or windows",
    "PlatformInfo.arch": "a CPU architecture such as x86_64 or aarch64",
}


def _check_versions(node: object, path: str) -> None:
    """ValueError naming the field when a version field of the facts does not parse as one."""
    if isinstance(node, tuple):
        for index, item in enumerate(node):
            _check_versions(item, f"{path}[{index}]")
        return
    if not is_dataclass(node):
        return
    for item in fields(node):
        value = getattr(node, item.name)
        name = f"{type(node).__name__}.{item.name}"
        if name in _WORD_FIELDS and isinstance(value, str) and not _WORD.match(value):
            raise ValueError(f"{path}.{item.name}: {value!r} is not {_WORD_FIELDS[name]}")
        rule = _VERSION_FIELDS.get(name)
        if rule and isinstance(value, str) and not rule[0].match(value.strip()):
            raise ValueError(f"{path}.{item.name}: {value!r} is not {rule[1]}")
        _check_versions(value, f"{path}.{item.name}")
