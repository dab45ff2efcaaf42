"""A pasted log -> facts (`LogEvidence`): the same kinds of facts the host probes fill, each with its line. Pure.

Nothing here decides a finding (provisioner/doctor/rules.py does, for logs and hosts alike). Reading is bounded and
linear: the caller passes at most READ_LIMIT bytes (the first and last half), lines longer than LINE_LIMIT are read
in pieces of that size, every pattern's repeats are bounded ({0,N}, no nested quantifiers), and the detailed
patterns run only on lines a single keyword scan picked. Knowledge that is data comes from the matrix: CUDA error
numbers and messages (cuda.yaml `errors`), GPU names -> compute capability (gpus.yaml), library names
(standalone/libnames.py).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TYPE_CHECKING

from provisioner.facts import DriverInfo, Gpu, OrtDist, RuntimeEnvironment
from provisioner.matrix.query import gpu_key, gpu_models_by_key
from provisioner.standalone.libnames import library_family

if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix

READ_LIMIT = 20 * 1024 * 1024  # bytes read from a log: the first 10 MB and the last 10 MB
LINE_LIMIT = 4096  # characters: a longer line is read in pieces of this size
SHAPE_LIMIT = 8  # lines read per shape (lines that differ only in their digits: a warning repeated per frame)
EVIDENCE_WIDTH = 300  # characters of a line kept as evidence

_ANSI = re.compile(r"\x1b\[[0-9;]{0,20}m")
# A line is read in detail only if one of these occurs in it (case-insensitive).
_KEYWORDS = (  # lower case; a line holding one is read in detail (each costs one scan of the log)
    *("cuda", "cudnn", "cublas", "nvidia", "nvinfer", "tensorrt", "provider", "onnxruntime", "dll", ".so"),
    *("driver", "gpu", "cpu", "geforce", "quadro", "tesla", "radeon", "intel", "rtx", "gtx", "python", "pip"),
    *("wheel", "docker", "container", "unraid", "hostname=", "wsl", "nvcc", "error", "fail", "missing"),
    *("not found", "no module", "找不到", "显卡", "耗时", "结果", "误差", "macos", "darwin", "/users/", "/volumes/"),
    *("aarch64", "arm64", "jetson", "windows", "linux", "ubuntu", "torch", "memory", "memcpy", "[+]", "[x]"),
    *("cp3", "result", "output", "diff", "slow", "faster", "stable", "tolerance", "version"),
)
_KEYWORD_BYTES = tuple(k.encode("utf-8") for k in _KEYWORDS)

_LIBRARY_ERRORS = (
    re.compile(
        r"(?<![\w.+-])([\w.+-]{1,120}\.so(?:\.\d{1,6}){0,4})\s{0,4}:\s{0,4}(?:cannot open shared object file|"
        r"file too short|invalid ELF|wrong ELF class)",
        re.I,
    ),
    re.compile(r"[\"'“”]?(?<![\w.+-])([\w.+-]{1,120}\.dll)[\"'“”]? which is missing", re.I),
    re.compile(
        r"Could not (?:load|locate|find) (?:library |module )?[\"'“”]?(?<![\w.+-])"
        r"([\w.+-]{1,120}\.(?:dll|so(?:\.\d{1,6}){0,4}))",
        re.I,
    ),
    re.compile(
        r"Failed to load (?:library|shared library) [\"'“”]?(?<![\w.+-])([\w.+-]{1,120}\.(?:dll|so(?:\.\d{1,6}){0,4}))",
        re.I,
    ),
    re.compile(r"[\"'“”](?<![\w.+-])([\w.+-]{1,120}\.dll)[\"'“”] (?:not found|was not found)", re.I),
    re.compile(r"\b(?<![\w.+-])([\w.+-]{1,120}\.dll) (?:was not found|is missing|could not be found|not found)", re.I),
    re.compile(r"error while loading shared libraries: (?<![\w.+-])([\w.+-]{1,120}\.so(?:\.\d{1,6}){0,4})", re.I),
    re.compile(
        r"(?:unable to|failed to|could not|cannot) (?:dl)?(?:open|load) [\"'“”]?(?<![\w.+-])"
        r"([\w.+-]{1,120}\.so(?:\.\d{1,6}){0,4})",
        re.I,
    ),
    re.compile(r"(?<![\w.+-])([\w.+-]{1,120}\.so(?:\.\d{1,6}){0,4})\s{0,4}=>\s{0,4}not found", re.I),  # ldd
)
_LOADER_NAMES = (2, 3, 7)  # patterns naming the library being loaded, not (necessarily) the one missing
_SONAME_MAJOR = re.compile(r"\.so\.(\d{1,4})|(?:64|_)(\d{1,4})(?:_\d{1,4})?\.dll$", re.I)

_DLL_INIT = re.compile(
    r"DLL initiali[sz]ation routine failed|动态链接库\s?\(DLL\)\s?初始化例程失败|WinError 1114|error 1114|"
    r"DLL 初期化ルーチンの実行に失敗しました|ダイナミック リンク ライブラリ \(DLL\) 初期化ルーチン",
    re.I,
)
_MODULE_NOT_FOUND = re.compile(
    r"LoadLibrary failed with error 126|error 126\b|The specified module could not be found|找不到指定的模块|"
    r"指定されたモジュールが見つかりません|"
    # the native module did not load (old releases only warned), so its names are missing: a dependency is
    r"cannot import name [\"'‘’]\w{1,40}[\"'‘’] from [\"'‘’]onnxruntime\.capi\._pybind_state",
    re.I,
)
_MSVC_ABSENT = re.compile(
    r"Visual C\+\+ (?:Redistributable|runtime)[^\n]{0,30}(?:is )?not installed|"
    r"(?:missing|not installed|install)[^\n]{0,12} (?:the )?(?:Microsoft )?Visual C\+\+ Redistributable",
    re.I,
)
_CUDA_ERROR_NUMBER = re.compile(
    r"CUDA (?:failure|error)\s{0,3}(?:code\s{0,3})?[:=]?\s{0,3}(\d{1,4})\b|cudaError\w{0,40}\s{0,3}\(?(\d{1,4})\)?",
    re.I,
)
_CUDA_ERROR_NAME = re.compile(r"\b(cudaError[A-Z]\w{1,40})")
_PROVIDER_NAME = re.compile(r"\b(\w{2,20})ExecutionProvider\b")
# A provider list is the names in a bracket, or after "available providers:", on a line that speaks of the
# available providers, or a line of names alone (printed, or under a header): never a name the sentence requests.
_BRACKETED = re.compile(r"[\[(]([^\[\]()\n]{0,600})[\])]")
_NAMES_ONLY = re.compile(r"[\s>*•\-\[\](),.\"'‘’“”]{0,200}")  # what is left of a list once its names are taken out
_AVAILABLE = re.compile(r"availab|可用|build has", re.I)
_AFTER_HEADER = re.compile(r"providers?\s{0,3}(?:are|:|：|=)\s{0,3}([^\n]{0,600})$", re.I)

_CPU_ONLY_BUILD = re.compile(
    r"(?:CUDA|GPU)(?: execution provider)? is not enabled in this build|CUDA execution provider is not enabled|"
    r"not (?:compiled|built) with (?:CUDA|GPU)|compile (?:it )?with GPU|with GPU support|"
    r"invalid choice: [\"'‘’]cuda[\"'‘’] \(choose from [\"'‘’]cpu[\"'‘’]\)|"
    r"Specified provider '(?:CUDA|Tensorrt)ExecutionProvider' is not in available provider names|"
    r"onnxruntime_providers_cuda\.(?:dll|so)[\"'“”’]?\s{0,3}(?:does not exist|not exist|is missing)|"
    r"(?:lib)?onnxruntime_providers_cuda\.(?:dll|so)\s{0,3}:\s{0,3}cannot open shared object",
    re.I,
)
_PROVIDER_FAILED = re.compile(
    r"Failed to create (CUDA|Tensorrt)ExecutionProvider|Failed to load (?:library|shared library)[^\n]{0,200}"
    r"onnxruntime_providers_(cuda|tensorrt)|OrtSessionOptionsAppendExecutionProvider_(Cuda|Tensorrt)\w{0,4}: "
    r"Failed to load shared library|Attempt to set CUDAExecutionProvider failed|"
    r"Falling back to \[?'?CPUExecutionProvider|(?:Current|Applied) providers: \['CPUExecutionProvider'\]|"
    r"Failed to load shared library|onnxruntime_providers_(cuda|tensorrt)\.dll",
    re.I,
)
_REQUIRE = re.compile(r"Require cuDNN (\d{1,2})[\d.*]{0,8} and CUDA (\d{1,2})[\d.*]{0,8}", re.I)
# onnxruntime's preload_dlls() on the torch beside it: "The installed PyTorch 2.5.1+cu121 uses CUDA 12.x, but
# onnxruntime-gpu is built with CUDA 13.x"
_TORCH_OTHER_CUDA = re.compile(
    r"PyTorch\s\S{1,40}\suses CUDA (\d{1,2})[\d.x]{0,6}, but onnxruntime-gpu is built with CUDA (\d{1,2})", re.I
)
_NVIDIA_SMI = re.compile(
    r"Driver Version:\s{0,4}(\d{3}\.\d{1,3}(?:\.\d{1,3})?)\s{0,40}(?:CUDA Version:\s{0,4}"
    r"(\d{1,2}\.\d{1,2}|N/A))?",
    re.I,
)
_DRIVER_PROSE = re.compile(
    r"(?:nvidia|driver|驱动)[^\n\d]{0,24}?\b(?:v|version\s)?(\d{3}\.\d{1,3}(?:\.\d{1,3})?)\b", re.I
)
_DRIVER_ABSENT = re.compile(
    r"couldn't communicate with the NVIDIA driver|found no NVIDIA driver on your system|NVIDIA driver (?:is )?not "
    r"(?:installed|loaded|found)|no NVIDIA (?:GPU|driver)|without an? NVIDIA|nvidia-smi: (?:command )?not found",
    re.I,
)
_DRIVER_OLD = re.compile(
    r"driver(?: version)? (?:is |was )?(?:too (?:low|old)|insufficient|outdated)|"
    r"(?:update|upgrade) (?:your |the )?(?:nvidia |gpu )?driver",
    re.I,
)
_DRIVER_MISMATCH = re.compile(
    r"Driver/library version mismatch|unsupported display driver / cuda driver combination|"
    r"forward compatibility was attempted on non supported HW",
    re.I,
)
_NVCC = re.compile(
    r"(?:release|nvcc[^\n\d]{0,30}|cuda[_ -]?toolkit[^\n\d]{0,12}|CUDA[\\/]v|cuda-|CUDA_PATH[^\n\d]{0,40}v"
    r"|cuda[ _](?:version)?:?\s?)(\d{1,2}\.\d)\b",
    re.I,
)
_TORCH_CUDA = re.compile(r"\btorch[\s=:-]{1,20}\d{1,2}\.\d{1,2}(?:\.\d{1,3})?\+cu(\d{2,3})\b|\+cu(\d{2,3})\b", re.I)
_DIST_BODY = (
    r"(onnxruntime(?:[-_](?:gpu|directml|silicon|openvino|training))?|torch|tensorrt(?:[-_]cu\d{2})?|"
    r"nvidia-[a-z-]{2,40}-cu\d{2}|nvidia-(?:cudnn|cublas|cuda-runtime|cufft|curand|cuda-nvrtc)|pycuda)"
    r"(?:\s{1,40}|==|\s{0,3}@\s{0,3}\S{0,200}?\s{0,3})v?(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?(?:[.+-]?\w{1,20})?)\b"
)
_DIST_LINE = re.compile(r"^[\s>+*-]{0,6}" + _DIST_BODY, re.I)
_DIST_NEXT = re.compile(r"\s{1,40}" + _DIST_BODY, re.I)  # a wrapped listing: several rows on one line
_LISTING_ROW = re.compile(r"[\w.-]{1,80}\s{1,40}v?\d{1,6}(?:[.+\w-]{0,40})")  # `pip list`: a name and its version
_DIST_INSTALLED = re.compile(r"Successfully installed [^\n]{0,400}", re.I)
_DIST_IN_INSTALLED = re.compile(r"\b(onnxruntime(?:-gpu)?)-(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)\b", re.I)
_PIP_SHOW_NAME = re.compile(r"^Name:\s{0,4}(onnxruntime(?:[-_]gpu)?)\s{0,4}$", re.I)
_PIP_SHOW_VERSION = re.compile(r"^Version:\s{0,4}(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)", re.I)
_NOT_INSTALLED = re.compile(
    r"No module named [\"'‘’]onnxruntime[\"'‘’]|No module named [\"'‘’]onnxruntime\.capi|"
    r"DistributionNotFound: The [\"'‘’]onnxruntime|PackageNotFoundError: [\"'‘’]?onnxruntime|"
    r"No matching distribution found for onnxruntime\b(?!-gpu)(?!_gpu)|"
    r"The [\"'‘’]?onnxruntime(?:[-_]gpu)?[\"'‘’]? distribution was not found",
    re.I,
)
_BROKEN_PACKAGE = re.compile(
    r"module [\"'‘’]onnxruntime[\"'‘’] has no attribute [\"'‘’](?:InferenceSession|SessionOptions|"
    r"GraphOptimizationLevel|get_available_providers|get_device|set_default_logger_severity|capi)[\"'‘’]|"
    r"cannot import name [\"'‘’]\w{1,40}[\"'‘’] from [\"'‘’]onnxruntime[\"'‘’] \(unknown location\)|"
    r"onnxruntime\.capi\.onnxruntime_pybind11_state[^\n]{0,40}No module named",
    re.I,
)
_NO_WHEEL = re.compile(
    r"No matching distribution found for (?:onnxruntime[-_]gpu|onnxruntime)|Could not find a version that "
    r"satisfies the requirement onnxruntime|"
    r"has no wheels with a(?: matching (?:Python ABI|platform|Python implementation)|\s{0,3}$)|"
    r"is not a supported wheel on this platform|no wheels? (?:are |is )?(?:available|published) for",
    re.I,
)
_NO_TENSORRT = re.compile(
    r"No module named [\"'‘’]tensorrt|TensorRT (?:is )?not (?:installed|found)|install (?:the )?TensorRT librar|"
    r"onnxruntime_providers_tensorrt",
    re.I,
)
_OOM = re.compile(
    r"out of memory|CUDA_ERROR_OUT_OF_MEMORY|Failed to allocate memory for requested buffer|"
    r"CUDNN_STATUS_ALLOC_FAILED|CUBLAS_STATUS_ALLOC_FAILED|BFCArena::AllocateRawInternal",
    re.I,
)
_CONTEXT = re.compile(
    r"invalid resource handle|pycuda\.autoinit|CUDA_ERROR_INVALID_CONTEXT|invalid device context", re.I
)
_CUDNN_STATUS = re.compile(
    r"CUDNN_STATUS_NOT_INITIALIZED|CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED|"
    r"CUDNN_STATUS_VERSION_MISMATCH|cudnnCreate\(",
    re.I,
)
_NODES_ON_CPU = re.compile(r"Some nodes were not assigned to the preferred execution providers", re.I)
_MEMCPY = re.compile(r"Memcpy nodes are added to the graph", re.I)
_SLOWER = re.compile(
    r"(?:GPU|cuda)[^\n]{0,40}(?:slower|much slower|more slowly|慢|耗时更长|速度远小于|远慢于)|"
    r"(?:slower|慢)[^\n]{0,20}(?:on|than|于)\s{0,3}(?:the\s)?(?:GPU|cuda)\b|"
    r"CPU[^\n]{0,40}faster than[^\n]{0,12}GPU|比\s?cpu[^\n]{0,6}慢|onnxruntime/issues/13198|issue#13198",
    re.I,
)
_FASTER_GPU = re.compile(r"GPU[^\n]{0,40}faster than[^\n]{0,12}CPU|GPU[^\n]{0,20}比\s?CPU[^\n]{0,6}快", re.I)
_TIMING = re.compile(
    r"\b(onnxruntime(?:[-_]gpu)?|GPU|CPU|cuda)\b[^\n\d]{0,40}?(\d{1,6}(?:\.\d{1,20})?)\s{0,2}"
    r"(ms|毫秒|s|sec|seconds?|秒)(?![\w])",
    re.I,
)
_OTHER_FRAMEWORK = re.compile(r"torch|tensorflow|paddle", re.I)  # its timings are not ONNX Runtime's
_DIFFER = re.compile(
    r"(?:results?|outputs?|inference)[^\n]{0,60}(?:differ|different|not (?:the )?same|inconsistent|not stable|"
    r"unstable|mismatch|wrong)|(?:differ|different|inconsistent|wrong)[^\n]{0,30}(?:results?|outputs?)|"
    r"(?:relative|absolute|max(?:imum)?) (?:diff|difference|error)|结果(?:不一致|不同|差异|有差别|不稳定|错误)|"
    r"(?:精度|误差)[^\n]{0,10}(?:大|不一致)|not equal to tolerance",
    re.I,
)
_CONTAINER = re.compile(
    r"\b(docker|podman|kubernetes|k8s|container|nvidia-container|devcontainer|\.dockerenv|"
    r"nvidia/cuda:|nvcr\.io|compose\.ya?ml|unraid|truenas|容器)|hostname=[0-9a-f]{12}\b",
    re.I,
)
_CONTAINER_GPU = re.compile(
    r"--gpus|runtime:\s{0,3}nvidia|--runtime=nvidia|deploy:[^\n]{0,20}devices|"
    r"NVIDIA_VISIBLE_DEVICES|capabilities:\s{0,3}\[?\s{0,3}gpu",
    re.I,
)
_WSL = re.compile(r"\bWSL2?\b|microsoft-standard|/usr/lib/wsl", re.I)
_VISIBLE = re.compile(r"\b((?:CUDA|NVIDIA)_VISIBLE_DEVICES)\s{0,3}[=:]\s{0,3}[\"']?([\w,-]{0,40})", re.I)
_WINDOWS = re.compile(r"\.dll\b|\b[A-Z]:\\|LoadLibrary|\bWindows\b|WinError|\.exe\b|\\AppData\\|win_amd64|win32", re.I)
_LINUX = re.compile(r"\.so\b|\.so\.\d|\bLinux\b|/usr/|/home/|/opt/|\bUbuntu\b|\bDebian\b|manylinux|linux_x86_64", re.I)
_MACOS = re.compile(r"\bmacOS\b|\bdarwin\b|macosx_|/Users/\w|/Volumes/|\bApple (?:M\d|Silicon)\b|\bMac ?OS\b", re.I)
_ARM = re.compile(r"\b(aarch64|arm64|ARM64|jetson|tegra|l4t|Orin|Xavier)\b", re.I)
_JETSON = re.compile(r"\b(jetson|tegra|l4t|jetpack)\b", re.I)
_PYTHON = re.compile(
    r"\bPython\s?(3\.\d{1,2})(?:\.\d{1,3})?\b|\bpython(3\.\d{1,2})\b|\bcp3(\d{1,2})\b|"
    r"\\Python3(\d{1,2})\\",
    re.I,
)
_NVIDIA_GPU = re.compile(
    r"\b(?:NVIDIA\s|GeForce\s|Quadro\s|Tesla\s){0,3}(?:(?:RTX|GTX|GT|MX|TITAN)\s?(?:PRO\s)?[A-Z]?\d{2,4}"
    r"(?:\s?(?:Ti|SUPER|Ada))?|TITAN\s(?:RTX|V|Xp?)|"
    r"(?<![\w.])(?:[ABHKLMPTV]\d{1,3}[GS]?|GB200|GH200)(?=[\s,)\-]|$))",
    re.I,
)
_OTHER_GPU = re.compile(
    r"\b(?:AMD\s?)?Radeon\b[^\n,;)]{0,30}|\bRX\s?\d{3,4}(?:\s?XTX?)?\b|\bIntel\(R\)\s(?:UHD|Iris|HD)[^\n,;)]{0,30}|"
    r"\bIntel\s(?:UHD|Iris|HD|Arc)\b[^\n,;)]{0,20}|\bAMD (?:GPU|graphics|cuda)\b|\bROCm\b|"
    r"\[[+xX✓]\]\s{0,2}(?:AMD|Intel)\b",
    re.I,
)
_GPU_CONTEXT = re.compile(r"nvidia|tesla|gpu|cuda|显卡|device", re.I)


@dataclass(frozen=True)
class Seen:
    """One fact and the log line it was read from."""

    value: str
    line: str


@dataclass(frozen=True)
class LoadError:
    """A library the loader could not open: its file name, family (cudnn, cublas, cuda, nvinfer ...) and major."""

    filename: str
    family: str | None
    major: str | None
    line: str


@dataclass(frozen=True)
class Timing:
    """A run time a log reports for a device."""

    device: str  # gpu | cpu | package (the plain onnxruntime package named: see rules._slower)
    seconds: float
    line: str


@dataclass(frozen=True)
class LogEvidence:
    """Facts read from a log: the host model's parts where a log can tell them, and what only a log shows."""

    driver: DriverInfo | None = None  # from nvidia-smi or the log's words; None: the log does not say
    driver_line: str = ""
    gpus: tuple[Gpu, ...] = ()  # NVIDIA GPUs named, with compute capability from gpus.yaml where known
    gpu_lines: tuple[str, ...] = ()
    other_gpus: tuple[Seen, ...] = ()  # AMD / Intel GPUs named
    environment: RuntimeEnvironment = field(default_factory=RuntimeEnvironment)
    environment_lines: tuple[str, ...] = ()
    container_gpu_flags: tuple[str, ...] = ()  # `--gpus all`, `runtime: nvidia` ...
    os: str | None = None  # linux | windows | darwin
    arch: str | None = None  # aarch64 where the log says so
    jetson: bool = False
    python_version: str | None = None
    onnxruntime: tuple[OrtDist, ...] = ()  # from pip list / freeze / show / uv / conda list / "Successfully installed"
    distributions: tuple[Seen, ...] = ()  # every listed distribution: "name version"
    cuda_installed: tuple[Seen, ...] = ()  # CUDA versions the log shows installed (nvcc, CUDA_PATH, torch +cuNNN)
    cuda_required: tuple[Seen, ...] = ()  # CUDA majors the build says it needs ("Require cuDNN 9.* and CUDA 12.*")
    load_errors: tuple[LoadError, ...] = ()
    cuda_errors: tuple[Seen, ...] = ()  # cudaError_t names
    providers: tuple[Seen, ...] = ()  # provider lists printed: "CPU,Azure"
    signals: tuple[Seen, ...] = ()  # named symptoms: dll-init-failed, module-not-found, cpu-only-build ...
    timings: tuple[Timing, ...] = ()
    cut: bool = False  # the log was longer than READ_LIMIT: its middle was not read

    def signal(self, name: str) -> Seen | None:
        """The first line showing symptom `name`."""
        return next((s for s in self.signals if s.value == name), None)

    def lines(self, name: str) -> tuple[str, ...]:
        """Every line showing symptom `name` (up to 6)."""
        return tuple(dict.fromkeys(s.line for s in self.signals if s.value == name))[:6]


def bounded(text: str, limit: int = READ_LIMIT) -> tuple[str, bool]:
    """At most `limit` characters: the first and last half of a longer text, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    half = limit // 2
    return text[:half] + "\n" + text[-half:], True


_DIGITS = bytes.maketrans(b"0123456789", b"0000000000")


def candidate_lines(text: str) -> list[str]:
    """The distinct lines worth reading in detail, in order: those holding a keyword, and the line after one that
    names providers (a list printed under its header). Lines are grouped by shape (lower case, digits as 0: a run
    log's lines differ only in their numbers) and each shape is scanned once and
    at most SHAPE_LIMIT lines of it are read. Of a line longer than LINE_LIMIT
    only its first and last LINE_LIMIT/2 characters are kept (a megabyte line is a data dump)."""
    shapes = text.encode("utf-8", "replace").lower().translate(_DIGITS).split(b"\n")
    count = len(shapes)
    groups: dict[bytes, list[int]] = {}
    for index, shape in enumerate(shapes):
        groups.setdefault(shape, []).append(index)
    del shapes
    distinct = list(groups)
    starts = list(accumulate((len(shape) + 1 for shape in distinct), initial=0))
    joined = b"\n".join(distinct)
    wanted: set[int] = set()
    for keyword in _KEYWORD_BYTES:  # bytes.find: a fast scan per keyword, one step per shape that holds it
        pos = joined.find(keyword)
        while pos >= 0:
            number = bisect_right(starts, pos) - 1
            members = groups[distinct[number]][:SHAPE_LIMIT]
            wanted.update(members)
            if b"provider" in distinct[number]:
                wanted.update(i + 1 for i in members if i + 1 < count)
            pos = joined.find(keyword, starts[number + 1])
    out: dict[str, None] = {}
    for line in _lines_at(text, sorted(wanted)):
        line = line.rstrip("\r")
        if len(line) > LINE_LIMIT:
            line = line[: LINE_LIMIT // 2] + " ... " + line[-LINE_LIMIT // 2 :]
        out[line] = None
    return list(out)


def _lines_at(text: str, indices: list[int]) -> list[str]:
    """The lines (split at "\\n") at these sorted indices, without splitting the whole text."""
    out, pos, current = [], 0, 0
    for index in indices:
        while current < index:
            pos = text.find("\n", pos) + 1
            current += 1
        end = text.find("\n", pos)
        out.append(text[pos : end if end >= 0 else len(text)])
    return out


def _short(line: str) -> str:
    line = line.strip()
    return line if len(line) <= EVIDENCE_WIDTH else line[: EVIDENCE_WIDTH - 3] + "..."


def _major_of(filename: str) -> str | None:
    """The library's major: `.so.N`, or a Windows DLL's suffix, where CUDA 10 and older spelt major and minor
    together (cublas64_91.dll: 9.1, cudart64_110.dll: 11.0; cublas64_12.dll: 12)."""
    match = _SONAME_MAJOR.search(filename)
    if not match:
        return None
    if match.group(1):
        return match.group(1)
    number = int(match.group(2))
    return str(number // 10 if number >= 20 else number)


def _error_tables(matrix: Matrix | None) -> tuple[dict[int, str], list[tuple[str, str]]]:
    """CUDA error number -> name, and (message lower-cased, name), from cuda.yaml."""
    if matrix is None:
        return {}, []
    numbers = {e.number: e.name for e in matrix.cuda_errors}
    messages = [(e.message.lower(), e.name) for e in matrix.cuda_errors if e.message]
    return numbers, messages


def read_evidence(text: str, matrix: Matrix | None = None, cut: bool = False) -> LogEvidence:
    """The facts a log shows (`text` already bounded: see `bounded`)."""
    numbers, messages = _error_tables(matrix)
    gpu_models = gpu_models_by_key(matrix) if matrix is not None else {}
    facts: dict[str, list] = {
        key: []
        for key in (
            "gpus",
            "gpu_lines",
            "other",
            "env_lines",
            "flags",
            "dists",
            "ort",
            "cuda",
            "required",
            "loads",
            "errors",
            "providers",
            "signals",
            "timings",
        )
    }
    driver: DriverInfo | None = None
    driver_line = ""
    container: str | None = None
    wsl = False
    visible: dict[str, str] = {}
    os_votes = {"windows": 0, "linux": 0, "darwin": 0}
    arch: str | None = None
    jetson = False
    python_version: str | None = None
    pip_show: str | None = None
    wrapped = ""  # a provider list cut mid-name at the end of the previous line

    def signal(name: str, line: str) -> None:
        facts["signals"].append(Seen(name, line))

    for piece in candidate_lines(text):
        raw = _ANSI.sub("", piece).strip()
        line = _short(raw)
        lower = raw.lower()
        # platform and environment
        if _WINDOWS.search(raw):
            os_votes["windows"] += 1
        if _LINUX.search(raw):
            os_votes["linux"] += 1
        if _MACOS.search(raw):
            os_votes["darwin"] += 2
        arm = _ARM.search(raw)
        if arm:
            arch = "aarch64"
            jetson = jetson or bool(_JETSON.search(raw))
        if container is None and not _LISTING_ROW.fullmatch(raw) and (hit := _CONTAINER.search(raw)):
            word = (hit.group(1) or "docker").lower()
            container = word if word in ("podman", "kubernetes") else "docker"
            facts["env_lines"].append(line)
        if _CONTAINER_GPU.search(raw):
            facts["flags"].append(line)
        if _WSL.search(raw):
            wsl = True
            facts["env_lines"].append(line)
        for name, value in _VISIBLE.findall(raw):
            visible[name.upper()] = value
        if python_version is None and (hit := _PYTHON.search(raw)):
            g = hit.groups()
            python_version = g[0] or g[1] or (f"3.{g[2]}" if g[2] else f"3.{g[3]}")
        # driver
        if hit := _NVIDIA_SMI.search(raw):
            cuda = hit.group(2) if hit.group(2) and hit.group(2) != "N/A" else None
            driver, driver_line = DriverInfo(True, hit.group(1), cuda, "log"), line
        elif driver is None and (hit := _DRIVER_PROSE.search(raw)):
            driver, driver_line = DriverInfo(True, hit.group(1), None, "log"), line
        if _DRIVER_MISMATCH.search(raw):
            driver, driver_line = DriverInfo(True, None, None, "log", line), line
        elif _DRIVER_ABSENT.search(raw):
            signal("driver-absent", line)
        if _DRIVER_OLD.search(raw):
            signal("driver-old", line)
        # GPUs
        if _GPU_CONTEXT.search(raw) or "rtx" in lower or "gtx" in lower:
            for hit in _NVIDIA_GPU.finditer(raw):
                name = hit.group(0).strip()
                short = re.fullmatch(r"[A-Za-z]\d{1,3}[GS]?", name) and not re.search(r"nvidia|tesla", lower)
                if short and not re.search(rf"{re.escape(name)}\s{{0,2}}(?:GPU|-SXM|-PCIE|\d{{2}}GB)", raw, re.I):
                    continue  # "T4", "A10" alone name a GPU only next to NVIDIA/Tesla or "GPU"
                model = gpu_models.get(gpu_key(name))
                if matrix is not None and model is None:
                    continue
                cc = model.compute_capability if model else None
                shown = f"NVIDIA {model.name}" if model and not model.name.startswith("NVIDIA") else name
                facts["gpus"].append(Gpu(len(facts["gpus"]), shown if model else name, cc))
                facts["gpu_lines"].append(line)
        for hit in _OTHER_GPU.finditer(raw):
            facts["other"].append(Seen(_other_gpu_name(hit.group(0)), line))
        # installed distributions
        hit = _DIST_LINE.match(raw)
        while hit:
            name = hit.group(1).lower().replace("_", "-")
            facts["dists"].append(Seen(f"{name} {hit.group(2)}", line))
            hit = _DIST_NEXT.match(raw, hit.end())
        if _DIST_INSTALLED.search(raw):
            for name, version in _DIST_IN_INSTALLED.findall(raw):
                facts["dists"].append(Seen(f"{name.lower()} {version}", line))
        if hit := _PIP_SHOW_NAME.match(raw):
            pip_show = hit.group(1).lower().replace("_", "-")
        elif pip_show and (hit := _PIP_SHOW_VERSION.match(raw)):
            facts["dists"].append(Seen(f"{pip_show} {hit.group(1)}", line))
            pip_show = None
        # CUDA installed / required
        for hit in _NVCC.finditer(raw):
            if "driver" not in lower and "cuda version:" not in lower:
                facts["cuda"].append(Seen(hit.group(1), line))
        for hit in _TORCH_CUDA.finditer(raw):
            digits = hit.group(1) or hit.group(2)
            facts["cuda"].append(Seen(f"{digits[:-1]}.{digits[-1]}", line))
        for hit in _REQUIRE.finditer(raw):
            facts["required"].append(Seen(hit.group(2), line))
        if hit := _TORCH_OTHER_CUDA.search(raw):
            facts["required"].append(Seen(hit.group(2), line))
            if hit.group(1) != hit.group(2):
                signal("torch-other-cuda", line)
        # library load errors
        seen_files = set()
        for index, pattern in enumerate(_LIBRARY_ERRORS):
            for hit in pattern.finditer(raw):
                filename = hit.group(1)
                if filename.lower() in seen_files:
                    continue
                if index in _LOADER_NAMES and "onnxruntime_providers" in filename.lower():
                    continue  # "Failed to load library libonnxruntime_providers_cuda.so with error: <the missing one>"
                seen_files.add(filename.lower())
                facts["loads"].append(LoadError(filename, library_family(filename), _major_of(filename), line))
        if _DLL_INIT.search(raw):
            signal("dll-init-failed", line)
        if _MSVC_ABSENT.search(raw):
            signal("msvc-absent", line)
        if _MODULE_NOT_FOUND.search(raw):
            signal("module-not-found", line)
        # CUDA errors: by name, by number, by message
        for name in _CUDA_ERROR_NAME.findall(raw):
            facts["errors"].append(Seen(name, line))
        for hit in _CUDA_ERROR_NUMBER.finditer(raw):
            number = int(hit.group(1) or hit.group(2))
            if number in numbers:
                facts["errors"].append(Seen(numbers[number], line))
        for message, name in messages:
            if message in lower:
                facts["errors"].append(Seen(name, line))
        # providers
        if listed := _provider_list(wrapped + raw.lstrip() if wrapped else raw):
            facts["providers"].append(Seen(",".join(dict.fromkeys(listed)), line))
        wrapped = _cut_provider_list(raw)
        if _CPU_ONLY_BUILD.search(raw):
            signal("cpu-only-build", line)
        if hit := _PROVIDER_FAILED.search(raw):
            which = next((g for g in hit.groups() if g), "cuda").lower()
            signal("tensorrt-provider-failed" if which == "tensorrt" else "provider-failed", line)
        # packages
        if _NOT_INSTALLED.search(raw):
            signal("not-installed", line)
        if _BROKEN_PACKAGE.search(raw):
            signal("package-broken", line)
        if _NO_WHEEL.search(raw):
            signal("no-wheel", line)
        if _NO_TENSORRT.search(raw):
            signal("tensorrt-absent", line)
        # runtime symptoms
        if _OOM.search(raw):
            signal("out-of-memory", line)
        if _CONTEXT.search(raw):
            signal("context-conflict", line)
        if _CUDNN_STATUS.search(raw):
            signal("cudnn-status", line)
        if _NODES_ON_CPU.search(raw):
            signal("nodes-on-cpu", line)
        if _MEMCPY.search(raw):
            signal("memcpy", line)
        if _SLOWER.search(raw):
            signal("gpu-slower", line)
        if _FASTER_GPU.search(raw):
            signal("gpu-faster", line)
        if _DIFFER.search(raw) and re.search(r"gpu|cuda|cpu|显卡", raw, re.I):
            signal("results-differ", line)
        for device, value, unit in () if _OTHER_FRAMEWORK.search(raw) else _TIMING.findall(raw):
            seconds = float(value) / (1000.0 if unit.lower() in ("ms", "毫秒") else 1.0)
            facts["timings"].append(Timing(_timing_device(device.lower()), seconds, line))
    os_name = max(os_votes, key=lambda k: os_votes[k]) if any(os_votes.values()) else None
    environment = RuntimeEnvironment(
        container=container,
        wsl=wsl,
        cuda_visible_devices=visible.get("CUDA_VISIBLE_DEVICES"),
        nvidia_visible_devices=visible.get("NVIDIA_VISIBLE_DEVICES"),
    )
    return LogEvidence(
        driver=driver,
        driver_line=driver_line,
        gpus=tuple(facts["gpus"]),
        gpu_lines=tuple(dict.fromkeys(facts["gpu_lines"])),
        other_gpus=tuple(facts["other"]),
        environment=environment,
        environment_lines=tuple(dict.fromkeys(facts["env_lines"]))[:4],
        container_gpu_flags=tuple(facts["flags"])[:4],
        os=os_name,
        arch=arch,
        jetson=jetson,
        python_version=python_version,
        onnxruntime=_ort_dists(facts["dists"]),
        distributions=tuple(facts["dists"]),
        cuda_installed=tuple(facts["cuda"]),
        cuda_required=tuple(facts["required"]),
        load_errors=tuple(facts["loads"]),
        cuda_errors=tuple(facts["errors"]),
        providers=tuple(facts["providers"]),
        signals=tuple(facts["signals"]),
        timings=tuple(facts["timings"]),
        cut=cut,
    )


_CHECKBOX = re.compile(r"^\[[+xX✓]\]\s{0,2}")
_VENDOR_ONLY = re.compile(r"(AMD|Intel|ROCm)(?:\s(?:GPU|graphics|cuda))?", re.I)


def _other_gpu_name(matched: str) -> str:
    """The AMD / Intel GPU as the log names it: its product name, or its maker's ("an Intel GPU") where the log
    says no more (a ticked form box "[+] Intel", "AMD GPU", "ROCm")."""
    name = _CHECKBOX.sub("", matched.strip()).strip()
    vendor = _VENDOR_ONLY.fullmatch(name)
    if vendor:
        maker = "AMD" if vendor.group(1).lower() in ("amd", "rocm") else "Intel"
        return f"an {maker} GPU"
    return name


def _provider_list(raw: str) -> list[str]:
    """The providers a line lists as available (empty: it lists none)."""
    names = _PROVIDER_NAME.findall(raw)
    if not names:
        return []
    rest = _PROVIDER_NAME.sub("", raw)
    if _NAMES_ONLY.fullmatch(rest):  # printed: `['CPUExecutionProvider']`, a bullet
        # a piece of a list spread over lines (code passing providers, a wrapped print) is not the whole list
        whole = rest.count("[") == rest.count("]") and rest.count("(") == rest.count(")")
        return names if whole and not rest.rstrip().endswith(",") else []
    if not _AVAILABLE.search(raw):
        return []
    for content in _BRACKETED.findall(raw):
        inside = _PROVIDER_NAME.findall(content)
        if inside and _NAMES_ONLY.fullmatch(_PROVIDER_NAME.sub("", content)):
            return inside
    hit = _AFTER_HEADER.search(raw)
    return _PROVIDER_NAME.findall(hit.group(1)) if hit else []


def _cut_provider_list(raw: str) -> str:
    """What follows "available providers:" when the line ends inside a name (a wrapped paste), else ""."""
    hit = _AFTER_HEADER.search(raw) if _AVAILABLE.search(raw) else None
    if not hit or not hit.group(1) or not hit.group(1)[-1].isalnum() or hit.group(1).endswith("Provider"):
        return ""
    return "available providers: " + hit.group(1)


def _timing_device(word: str) -> str:
    """gpu | cpu, or `package` for the plain onnxruntime package named as what was timed (the CPU package where
    onnxruntime-gpu is timed beside it)."""
    if word == "cpu":
        return "cpu"
    return "package" if word == "onnxruntime" else "gpu"


def _ort_dists(dists: list[Seen]) -> tuple[OrtDist, ...]:
    """The onnxruntime flavours listed, one per name (the last listing wins: it is the newest state)."""
    found: dict[str, OrtDist] = {}
    for seen in dists:
        name, version = seen.value.split(" ", 1)
        if name.startswith("onnxruntime"):
            found[name] = OrtDist(name, version, location=seen.line)
    return tuple(found.values())
