"""VerifyReport: what the verify child proved about a GPU session; frozen dataclasses with a JSON round trip.

The child script writes a JSON document whose keys match these dataclasses; the parent adds what only it
knows (exit status, signal, timeout, stderr, the stage reached) and rebuilds the tree with `serde`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from provisioner.serde import from_jsonable, to_jsonable

VERIFY_SCHEMA_VERSION = 1

# Failure kinds that mean "the GPU is not used"
BLOCKING_KINDS = frozenset(
    {
        "not-installed",
        "import-failed",
        "cpu-package-only",
        "cpu-and-gpu-installed",
        "cpu-fallback",
        "no-driver",
        "session-failed",
        "results-differ",
        "library-missing",
        "library-not-on-path",
        "msvc-runtime-missing",  # Windows: the Visual C++ runtime the provider DLL imports is not found
        "timeout",
        "crashed",
        "child-error",
        "numpy-missing",
        "provider-library-unreadable",
        "plugin-register-failed",  # a plugin EP's library did not register into the core
        "plugin-no-device",  # registered, but it offers no device here
        "plugin-beside-gpu-core",  # onnxruntime-gpu installed beside an EP that registers into the CPU core
        "plugin-core-too-old",  # the CPU core is older than the EP's minimum
    }
)


@dataclass(frozen=True)
class Failure:
    """Why verify did not pass: a machine-readable kind and one line for people."""

    kind: str
    message: str
    library: str | None = None  # cudnn | cufft | ... when the failure is about one library


@dataclass(frozen=True)
class InstalledOrt:
    """An onnxruntime distribution installed in the target interpreter."""

    name: str
    version: str
    location: str | None = None


@dataclass(frozen=True)
class OrtImport:
    """The onnxruntime package `import onnxruntime` really loads, and what it offers."""

    dists: tuple[InstalledOrt, ...] = ()
    package_dir: str | None = None
    provider_libraries: tuple[str, ...] = ()  # capi/*providers_* files
    has_provider_library: bool = False  # the requested provider's library is present
    build_package_name: str | None = None  # package_name from capi/build_and_package_info.py
    build_cuda_version: str | None = None
    build_cudnn_version: str | None = None
    imported_dist: str | None = None
    version: str | None = None
    file: str | None = None
    device: str | None = None  # onnxruntime.get_device()
    available_providers: tuple[str, ...] | None = None
    import_s: float | None = None
    related_dists: tuple[InstalledOrt, ...] = ()  # torch, pycuda, tensorrt, cupy: bring or drive CUDA themselves


@dataclass(frozen=True)
class LoadedLibrary:
    """A CUDA-family library mapped into the child process, and where it came from."""

    library: str  # cudnn | cublas | cublasLt | cudart | cufft | curand | nvrtc | nvinfer | cuda ...
    filename: str
    path: str
    source: str  # pip | torch | cuda_toolkit | system | driver | tensorrt | onnxruntime | other


@dataclass(frozen=True)
class PreloadInfo:
    """onnxruntime.preload_dlls(): was it asked for, does it exist, was it called, what did it load."""

    requested: bool = False
    available: bool = False
    called: bool = False
    error: str | None = None
    loaded: tuple[LoadedLibrary, ...] = ()


@dataclass(frozen=True)
class LoaderHookStatus:
    """What ortprov's loader hook did when the child imported onnxruntime (its STATUS dict)."""

    state: str  # loaded | inert | failed | waiting (never triggered)
    version: int | None = None
    reason: str | None = None  # why inert
    cuda_major: str | None = None
    loaded: tuple[str, ...] = ()  # paths it loaded
    already_loaded: tuple[str, ...] = ()
    not_in_wheels: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()  # "soname: why" for libraries that failed to load
    folders: tuple[str, ...] = ()
    error: str | None = None  # the hook itself failed
    seconds: float | None = None

    @property
    def failed(self) -> bool:
        """The hook broke, or a library it should have loaded did not load."""
        return self.state == "failed" or bool(self.errors)


@dataclass(frozen=True)
class Timing:
    """Seconds to create the session and run it once, then the steady-state median."""

    create_s: float
    first_run_s: float
    median_run_ms: float | None = None
    runs: int = 0


@dataclass(frozen=True)
class Comparison:
    """GPU against the CPU (or numpy for the FFT check): normwise relative error against a tolerance."""

    agrees: bool
    tolerance: float
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    detail: str | None = None


@dataclass(frozen=True)
class ModelCheck:
    """One model run on the GPU session (and on the CPU for reference)."""

    model: str  # builtin:check | builtin:fft | model
    path: str
    providers_requested: tuple[str, ...] = ()
    providers_session: tuple[str, ...] = ()  # session.get_providers()
    gpu_first: bool = False
    tf32: str | None = None  # how TF32 was handled
    gpu: Timing | None = None  # timings of the session that asked for the GPU
    cpu: Timing | None = None
    comparison: Comparison | None = None
    libraries_after: tuple[str, ...] = ()  # CUDA library families loaded after this check ran
    error: str | None = None


@dataclass(frozen=True)
class TensorRTCheck:
    """What `verify --provider tensorrt` proved beyond the session: the libnvinfer it loaded, and that a second
    session with the same engine cache reused the engine the first built."""

    libnvinfer: str | None = None  # the path of the libnvinfer mapped into the process
    libnvinfer_source: str | None = None  # tensorrt (its wheels) | system | ...
    engine_cache: str | None = None  # the (temporary) engine cache folder
    first_create_s: float | None = None
    second_create_s: float | None = None
    engine_files: int = 0  # files the first session wrote into the cache
    written_by_second: tuple[str, ...] = ()  # files the second session wrote or rewrote (none: a cache hit)
    cache_hit: bool = False


@dataclass(frozen=True)
class InputSpec:
    """An input the child generated: name, ONNX type, concrete shape."""

    name: str
    type: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class ResolvedLibrary:
    """--static: where one library the provider needs would be found."""

    soname: str
    needed: str  # linked (DT_NEEDED) | lazy (opened when an operator needs it)
    status: str  # ok | preload-only | missing | driver-missing
    library: str | None = None
    path: str | None = None  # what the dynamic loader finds
    via: str | None = None  # rpath | ld_library_path | runpath | ldconfig | default_dir
    preload_path: str | None = None  # what onnxruntime.preload_dlls() finds in site-packages/nvidia
    source: str = "other"


@dataclass(frozen=True)
class StaticCheck:
    """--static: the provider library read as ELF and each of its libraries resolved."""

    provider_library: str
    libraries: tuple[ResolvedLibrary, ...] = ()
    runpath: tuple[str, ...] = ()
    rpath: tuple[str, ...] = ()
    elf_error: str | None = None


@dataclass(frozen=True)
class PluginLibrary:
    """One library a plugin EP's provider links, as the process would resolve it after the EP's import."""

    soname: str
    status: str  # loaded (mapped already) | found | driver | driver-missing | missing
    library: str | None = None
    path: str | None = None
    how: str | None = None  # rpath | ld_library_path | runpath | ldconfig | default_dir


@dataclass(frozen=True)
class EpDevice:
    """One device `get_ep_devices()` gives the plugin EP."""

    ep_name: str | None = None
    vendor: str | None = None
    type: str = ""
    device_id: int | None = None
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PluginCheck:
    """`verify --provider tensorrt-rtx`: the plugin EP as its guide uses it (verify_plugin.py)."""

    module: str
    version: str | None = None
    library: str | None = None
    ep_name: str | None = None
    registered: bool = False
    devices: tuple[EpDevice, ...] = ()
    closure: tuple[PluginLibrary, ...] = ()
    hook: dict[str, Any] | None = None  # what ortprov's loader hook did for it (its PLUGINS entry)
    gpus_seen: tuple[str, ...] = ()  # with no EP device: the GPUs onnxruntime's own discovery found (any EP's)


@dataclass(frozen=True)
class VerifyReport:
    """Everything one `ortprov verify` proved. `ok` is True only when the GPU really ran the checks."""

    ok: bool
    status: str  # passed | failed | timeout | crashed | error
    mode: str  # session | static
    provider: str  # cuda | tensorrt
    python: str
    failures: tuple[Failure, ...] = ()
    warnings: tuple[str, ...] = ()
    ort: OrtImport | None = None
    preload: PreloadInfo | None = None
    preload_required: bool = False  # the GPU session worked only after preload_dlls(): a plain program's fails
    loader_hook: LoaderHookStatus | None = None  # ortprov's loader hook in the target, when installed
    attempts: tuple[str, ...] = ()  # one line per child run, when more than one was needed
    checks: tuple[ModelCheck, ...] = ()
    loaded_libraries: tuple[LoadedLibrary, ...] = ()
    static: StaticCheck | None = None
    tensorrt: TensorRTCheck | None = None  # --provider tensorrt
    plugin: PluginCheck | None = None  # a plugin EP (--provider tensorrt-rtx)
    inputs: dict[str, tuple[InputSpec, ...]] = field(default_factory=dict)
    python_version: str | None = None
    stage: str | None = None  # the last stage the child reached (where a crash or hang happened)
    exit_code: int | None = None
    signal: str | None = None  # SIGSEGV, SIGABRT ... when the child was killed by one
    duration_s: float | None = None
    timeout_s: float | None = None
    ort_messages: tuple[str, ...] = ()  # ONNX Runtime warnings/errors from the child's stderr
    stderr: str = ""  # the tail of the child's stderr (stage markers removed)
    schema_version: int = VERIFY_SCHEMA_VERSION

    @property
    def failure_kinds(self) -> tuple[str, ...]:
        """The kinds of all failures, in order."""
        return tuple(f.kind for f in self.failures)

    @property
    def main_check(self) -> ModelCheck | None:
        """The builtin check model, or the user's model."""
        return self.checks[0] if self.checks else None

    def to_dict(self) -> dict:
        """Plain JSON-able dict."""
        return to_jsonable(self)

    def to_json(self) -> str:
        """Pretty JSON (`ortprov verify --json`)."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict) -> VerifyReport:
        """Inverse of to_dict."""
        return from_jsonable(cls, data)

    @classmethod
    def from_json(cls, text: str) -> VerifyReport:
        """Inverse of to_json."""
        return cls.from_dict(json.loads(text))
