"""A pasted log -> facts (`LogEvidence`): the same kinds of facts the host probes fill, each with its line. Pure.

Nothing here decides a finding (provisioner/doctor/rules.py does, for logs and hosts alike). The text is read in
three steps: scan.py picks the lines worth reading (bounded, linear), normalize.py turns them into the lines the
program printed (prefixes gone, wrapped lines joined, quotes unified), and `read_evidence` reads each line once,
topic by topic (platform, driver and GPUs, packages and versions, libraries, errors, providers, symptoms, timings).
Knowledge that is data comes from the matrix: CUDA and cuBLAS error numbers and messages (cuda.yaml `errors`),
GPU names -> compute capability (gpus.yaml), library names (standalone/libnames.py); the wordings are in
patterns.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from provisioner.doctor import patterns as P
from provisioner.doctor.normalize import Line, logical_lines
from provisioner.doctor.scan import LINE_LIMIT, READ_LIMIT, SHAPE_LIMIT, bounded, candidate_lines
from provisioner.facts import DriverInfo, Gpu, OrtDist, RuntimeEnvironment
from provisioner.matrix.query import gpu_key, gpu_models_by_key
from provisioner.standalone.libnames import complete_fragment, library_family

if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix

__all__ = [
    "LINE_LIMIT",
    "READ_LIMIT",
    "SHAPE_LIMIT",
    "LoadError",
    "LogEvidence",
    "Seen",
    "Timing",
    "bounded",
    "paste_next",
    "read_evidence",
]

EVIDENCE_WIDTH = 300  # characters of a line kept as evidence


@dataclass(frozen=True)
class Seen:
    """One fact and the log line it was read from."""

    value: str
    line: str


@dataclass(frozen=True)
class LoadError:
    """A library file the loader could not open: its name, family (cudnn, cublas, cuda, nvinfer ...), major, and
    the library that needed it where the log says (`Failed to load library X with error: Y`: Y needed by X)."""

    filename: str
    family: str | None
    major: str | None
    line: str
    needed_by: str | None = None


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
    ort_stated: tuple[Seen, ...] = ()  # onnxruntime versions stated (issue template, prose, release assets)
    cuda_installed: tuple[Seen, ...] = ()  # CUDA versions the log shows installed (nvcc, CUDA_PATH, torch +cuNNN)
    cudnn_installed: tuple[Seen, ...] = ()  # cuDNN versions the log shows installed ("cudnn 9.3", libcudnn8)
    cuda_required: tuple[Seen, ...] = ()  # CUDA majors the build needs ("Require ... CUDA 12.*", "cuda12" assets)
    cuda_required_said: tuple[Seen, ...] = ()  # the same said in prose ("this onnxruntime build uses cuda11"): weaker
    cuda_fixed: tuple[Seen, ...] = ()  # CUDA majors whose install fixed it, as the log says ("installing CUDA 11.8")
    cudnn_required: tuple[Seen, ...] = ()  # cuDNN majors the build needs ("Require cuDNN 9.*")
    load_errors: tuple[LoadError, ...] = ()  # files the loader could not open
    loading: tuple[Seen, ...] = ()  # libraries that failed to load for a dependency the log does not name
    files: tuple[Seen, ...] = ()  # library files a listing shows on disk (find, ls, locate, dir)
    cuda_errors: tuple[Seen, ...] = ()  # cudaError_t names
    cublas_errors: tuple[Seen, ...] = ()  # CUBLAS_STATUS_ names
    providers: tuple[Seen, ...] = ()  # provider lists printed: "CPU,Azure"
    session_providers: tuple[Seen, ...] = ()  # a session's providers printed (get_providers(), "Applied providers")
    signals: tuple[Seen, ...] = ()  # named symptoms: dll-init-failed, module-not-found, cpu-only-build ...
    timings: tuple[Timing, ...] = ()
    dated: Seen | None = None  # the latest day a timestamp shows ("2023-04-03"): the program ran then
    cut: bool = False  # the log was longer than READ_LIMIT: its middle was not read

    def signal(self, name: str) -> Seen | None:
        """The first line showing symptom `name`."""
        return next((s for s in self.signals if s.value == name), None)

    def lines(self, name: str) -> tuple[str, ...]:
        """Every line showing symptom `name` (up to 6)."""
        return tuple(dict.fromkeys(s.line for s in self.signals if s.value == name))[:6]

    def summary(self) -> tuple[str, ...]:
        """What was read, one fact a line (for "no known failure recognised")."""
        facts = []
        if self.os:
            facts.append(
                f"platform: {self.os}{' ' + self.arch if self.arch else ''}{' (Jetson)' if self.jetson else ''}"
            )
        if self.python_version:
            facts.append(f"Python {self.python_version}")
        if self.driver and self.driver.version:
            facts.append(
                f"NVIDIA driver {self.driver.version}"
                + (f" (CUDA {self.driver.cuda_version})" if self.driver.cuda_version else "")
            )
        facts += [
            f"GPU: {g.name}" + (f" (compute capability {g.compute_capability})" if g.compute_capability else "")
            for g in self.gpus[:2]
        ]
        facts += [f"other GPU: {s.value}" for s in self.other_gpus[:1]]
        facts += [f"installed: {s.value}" for s in self.distributions[:6]]
        facts += [f"stated: {s.value}" for s in self.ort_stated[:1]]
        facts += [f"CUDA {s.value} (installed)" for s in _first_per_value(self.cuda_installed)[:2]]
        facts += [f"cuDNN {s.value} (installed)" for s in _first_per_value(self.cudnn_installed)[:2]]
        facts += [f"the build needs CUDA {s.value}" for s in _first_per_value(self.cuda_required)[:1]]
        facts += [f"providers listed: {s.value}" for s in self.providers[:2]]
        facts += [f"could not load: {e.filename}" for e in self.load_errors[:3]]
        facts += [f"CUDA error: {s.value}" for s in _first_per_value(self.cuda_errors)[:2]]
        if self.environment.container:
            facts.append(f"runs in a {self.environment.container} container")
        said = [SYMPTOMS[s.value] for s in self.signals if s.value in SYMPTOMS]
        facts += [f"symptom: {words}" for words in dict.fromkeys(said)][:4]
        return tuple(facts)


# the symptoms a summary names (the other signals are context: a package named, a fork, a header)
SYMPTOMS = {
    "provider-failed": "the CUDA provider failed",
    "tensorrt-provider-failed": "the TensorRT provider failed",
    "cpu-only-build": "a CPU-only onnxruntime in use",
    "module-not-found": "a DLL/module not found (error 126)",
    "dll-init-failed": "a DLL's initialisation failed (error 1114)",
    "provider-dll-init-failed": "a provider's DLL failed to initialise (error 1114)",
    "provider-name-unknown": "the code asks for a provider by a name ONNX Runtime does not know",
    "install-failed-said": "the install itself said to fail",
    "present-said": "a library file said to be there",
    "driver-symbol-missing": "the driver lacks a symbol at CUDA's first call (error 500)",
    "pybind-import-failed": "onnxruntime's module failed to import",
    "not-installed": "onnxruntime not installed",
    "no-wheel": "no wheel for the platform",
    "out-of-memory": "out of memory",
    "force-ptx-jit": "CUDA_FORCE_PTX_JIT set",
    "node-failed": "a CUDA kernel failed while running a node",
    "dml-failed": "the DirectML provider failed (an HRESULT from its code)",
    "nodes-on-cpu": "nodes assigned to the CPU",
    "gpu-slower": "the GPU said to be slower",
    "results-differ": "results said to differ",
    "driver-absent": "no NVIDIA driver",
    "driver-old": "the driver said to be too old",
}


def paste_next(ev: LogEvidence) -> tuple[str, ...]:
    """What to paste next when nothing was recognised, the one that decides first: which onnxruntime runs where the
    log names none (its build, device and providers tell a CPU build from a failing GPU one), else the program's own
    error output; then the facts this log lacks."""
    wanted = []
    error_output = (
        "the program's whole error output, with ONNX Runtime's log on: "
        "onnxruntime.set_default_logger_severity(0) before creating the session"
    )
    no_error = not (ev.load_errors or ev.cuda_errors or any(s.value in SYMPTOMS for s in ev.signals))
    if not ev.onnxruntime and not ev.ort_stated:
        wanted.append(
            'python -c "import onnxruntime as ort; print(ort.__version__, ort.get_device(), '
            'ort.get_available_providers())"'
        )
        wanted.append("python -m pip list  (the onnxruntime, nvidia-*, torch and tensorrt rows)")
    elif no_error:
        wanted.append(error_output)
    if ev.driver is None:
        wanted.append("nvidia-smi  (the driver, its CUDA version and the GPU)")
    if no_error and error_output not in wanted:
        wanted.append(error_output)
    wanted.append("or run `ortprov doctor` on that machine: it probes the host and proves a real CUDA session")
    return tuple(wanted)


_DRIVER_WORDS = re.compile(
    r"nvidia|driver|gpu|geforce|rtx|gtx|quadro|tesla|titan|radeon|intel|amd|rocm|device|smi|cuda|nvml|docker|"
    r"only (?:with|on) (?:the )?cpu|container|显卡|驱动|\b[abhklmptv]\d{1,3}\b|gb200|gh200"
)
_PACKAGE_WORDS = re.compile(
    r"onnx|ort|wheel|platform|pip|install|tensorrt|module|requirement|\buv\b|conda|distribution|version|package|"
    r"nuget|jar|crate|get_device|cpu|gpu|nvidia-|torch|pycuda|^\W{0,4}\w{0,3}$"  # (the rows of patterns.DIST_BODY)
)
_LIBRARY_WORDS = re.compile(
    r"\.so|dll|dlopen|librar|module|error 1|126|127|1114|193|win32|zlib|pybind|visual c|vcruntime|msvc|vc_?redist|"
    r"cudnn|cublas|cudart|cufft|curand|nvrtc|"
    r"vc\+\+|找不到|初始化|"
    r"モジュール|ルーチン|\.dylib|c0000409|1073740791|3221226505|stack_buffer"
)


def _first_per_value(seen: tuple[Seen, ...]) -> list[Seen]:
    return list({s.value: s for s in reversed(seen)}.values())[::-1]


def _short(line: str) -> str:
    line = line.strip()
    return line if len(line) <= EVIDENCE_WIDTH else line[: EVIDENCE_WIDTH - 3] + "..."


def major_of(filename: str) -> str | None:
    """The library's major: `.so.N`, or a Windows DLL's suffix, where CUDA 10 and older spelt major and minor
    together (cublas64_91.dll: 9.1, cudart64_110.dll: 11.0; cublas64_12.dll: 12)."""
    match = P.SONAME_MAJOR.search(filename)
    if not match:
        return None
    if match.group(1):
        return match.group(1)
    number = int(match.group(2))
    return str(number // 10 if number >= 20 else number)


def _cudnn_major(value: str) -> str | None:
    """The major of a stated cuDNN version: "9.3" -> 9, "8.9.7.29" -> 8, "8200" (cudnnGetVersion) -> 8."""
    if value.isdigit() and len(value) >= 4:
        return value[0] if len(value) == 4 else value[:2]
    head = value.split(".")[0]
    return head if head.isdigit() and 5 <= int(head) <= 12 else None


class _Reader:
    """Reads the program's lines one by one into facts; each topic is one method."""

    def __init__(self, matrix: Matrix | None) -> None:
        self.matrix = matrix
        self.numbers: dict[int, str] = {}
        self.cublas_numbers: dict[int, str] = {}
        self.messages: list[tuple[str, str]] = []
        if matrix is not None:
            for error in matrix.cuda_errors:
                table = self.cublas_numbers if error.name.startswith("CUBLAS_") else self.numbers
                table[error.number] = error.name
                if error.message:
                    self.messages.append((error.message.lower(), error.name))
        self.gpu_models = gpu_models_by_key(matrix) if matrix is not None else {}
        self.f: dict[str, list] = {}
        self.driver: DriverInfo | None = None
        self.driver_line = ""
        self.container: str | None = None
        self.wsl = False
        self.conda_not_found = False  # inside conda's list of packages not found
        self.visible: dict[str, str] = {}
        self.os_votes = {"windows": 0, "linux": 0, "darwin": 0}
        self.arch: str | None = None
        self.jetson = False
        self.python_version: str | None = None
        self.pip_show: str | None = None
        self.wrapped = ""  # a provider list cut mid-name at the end of the previous line
        self.header: tuple[str, int] | None = None  # an issue template's header and where it was
        self.section: tuple[str, int] | None = None  # a timing section's device ("GPU Test result") and where
        self.using: str | None = None  # the providers of onnxruntime's last "EP Error ... when using [...]"
        self.columns: tuple[list[str], int] | None = None  # a markdown table's header cells and where
        self.call = ""  # "device" | "session": the previous line called get_device() / get_providers() (answer follows)
        self.preload_frame = False  # the previous line is a traceback's frame in onnxruntime's _ld_preload.py
        self.preload_failed: tuple[str, str] | None = None  # (library, line) of _ld_preload's CDLL(...) that raised
        self.differ_pending = ""  # the previous line says results differ, naming no device
        self.ort_frame = -10  # where a traceback last showed onnxruntime's native module being imported
        self.trt_ran = False  # the last EP Error was TensorRT failing on the model (it loaded), not failing to load
        self.python_caller = False  # the program is Python (a traceback, pip, site-packages, import onnxruntime)
        self.fetched: set[str] = set()  # onnxruntime flavours pip fetched or installed
        self.steps = 0  # lines left of a fix told as a list of steps ("solved it by the following steps:")
        self.both_fetched = False

    def add(self, key: str, value: object) -> None:
        self.f.setdefault(key, []).append(value)

    def signal(self, name: str, line: str) -> None:
        self.add("signals", Seen(name, line))

    def read(self, entry: Line) -> None:
        """Each topic reads the line only if one of its words is in it (a topic's patterns all need one)."""
        raw = entry.text.strip()
        line = _short(raw)
        lower = raw.lower()
        digits = any(ch.isdigit() for ch in raw)
        self.platform(raw, line, lower)
        self.call_answer(raw, line)
        if self.preload_frame and (call := P.CDLL_CALL.search(raw)):
            # a traceback's frame in onnxruntime's _ld_preload.py at `CDLL("libcublas.so.10")`: that load raised; the
            # error line itself may be cut from the paste (read at the end, when nothing else explains it)
            self.preload_failed = (call.group(1), line)
        self.preload_frame = "_ld_preload" in raw and bool(P.PRELOAD_FRAME.search(raw))
        if _DRIVER_WORDS.search(lower):
            self.driver_and_gpus(raw, line, lower)
        if _PACKAGE_WORDS.search(lower):
            self.packages(raw, line, lower)
        if digits:
            self.versions(raw, line, lower)
        if _LIBRARY_WORDS.search(lower):
            self.libraries(raw, line)
        if digits or "cuda" in lower or "cublas" in lower or "error" in lower:
            self.errors(raw, line, lower)
        if any(word in lower for word in ("provider", "cuda", "gpu", "cpu", "build", "tensorrt", "ep error")):
            self.providers(raw, line, lower)
        self.symptoms(raw, line, lower)
        self.fixed_by(raw, line, lower)
        if "undefined symbol" in lower and P.UNDEFINED_CUDA_SYMBOL.search(raw):
            self.signal("undefined-cuda-symbol", line)
        if "cud" in lower:
            if P.CUDNN_ABSENT_SAID.search(raw):
                self.signal("cudnn-absent-said", line)
            elif P.CUDA_ABSENT_SAID.search(raw):
                self.signal("cuda-absent-said", line)
        self.timings(raw, line, entry, lower, digits)
        self.native_import(raw, line, lower, entry)

    def native_import(self, raw: str, line: str, lower: str, entry: Line) -> None:
        """A traceback importing onnxruntime's native module, then Python's "DLL load failed" without the module's
        name (Python 3.7 and older say "DLL load failed: ..." only): that module failed to load."""
        if P.ORT_NATIVE_FRAME.search(raw):
            self.ort_frame = entry.last
        elif (
            "dll load failed" in lower
            and entry.first - self.ort_frame <= 3
            and not (P.PYBIND_IMPORT.search(raw) or P.OTHER_MODULE_IMPORT.search(raw))
        ):
            self.signal("pybind-import-failed", line)

    # --- topics ----------------------------------------------------------------------------------------------
    def platform(self, raw: str, line: str, lower: str) -> None:
        if P.WINDOWS.search(raw):
            self.os_votes["windows"] += 1
        if P.LINUX.search(raw):
            self.os_votes["linux"] += 1
        if P.MACOS.search(raw):
            self.os_votes["darwin"] += 2
        if any(w in lower for w in _ARM_WORDS) and P.ARM.search(raw):
            self.arch = "aarch64"
            self.jetson = self.jetson or bool(P.JETSON.search(raw))
        if self.container is None and not P.LISTING_ROW.fullmatch(raw) and (hit := P.CONTAINER.search(raw)):
            word = (hit.group(1) or "docker").lower()
            kinds = {"k8s": "kubernetes", "kubectl": "kubernetes", "apptainer": "singularity"}
            word = kinds.get(word, word)
            self.container = word if word in ("podman", "kubernetes", "singularity", "enroot") else "docker"
            self.add("env_lines", line)
        if any(w in lower for w in ("gpu", "nvidia", "--nv")) and P.CONTAINER_GPU.search(raw):
            self.add("flags", line)
        if ("wsl" in lower or "microsoft-standard" in lower) and P.WSL.search(raw):
            self.wsl = True
            self.add("env_lines", line)
        for name, value in P.VISIBLE.findall(raw) if "visible_devices" in lower else ():
            self.visible[name.upper()] = value
        if self.python_version is None and ("python" in lower or "cp3" in lower) and (hit := P.PYTHON.search(raw)):
            g = hit.groups()
            self.python_version = g[0] or g[1] or (f"3.{g[2]}" if g[2] else f"3.{g[3]}")
        if not self.python_caller and P.PYTHON_CALLER.search(raw):
            self.python_caller = True
            self.signal("python", line)
        if any(w in lower for w in ("32", "x86")) and P.PYTHON_32BIT.search(raw) and _BITS.search(lower):
            self.signal("python-32bit", line)

    def driver_and_gpus(self, raw: str, line: str, lower: str) -> None:
        if hit := P.NVIDIA_SMI.search(raw):
            cuda = hit.group(2) if hit.group(2) and hit.group(2) != "N/A" else None
            self.driver, self.driver_line = DriverInfo(True, hit.group(1), cuda, "log"), line
        elif self.driver is None and (hit := P.DRIVER_PROSE.search(raw)):
            self.driver, self.driver_line = DriverInfo(True, hit.group(1), None, "log"), line
        if P.DRIVER_MISMATCH.search(raw):
            self.driver, self.driver_line = DriverInfo(True, None, None, "log", line), line
        elif P.DRIVER_ABSENT.search(raw):
            self.signal("driver-absent", line)
        if P.DRIVER_OLD.search(raw):
            self.signal("driver-old", line)
        if P.GPU_IN_CONTAINER.search(raw):
            self.signal("gpu-in-container", line)
        if P.GPU_CONTEXT.search(raw) or "rtx" in lower or "gtx" in lower:
            for hit in P.NVIDIA_GPU.finditer(raw):
                self.gpu(hit.group(0).strip(), raw, lower, line)
        for hit in P.OTHER_GPU.finditer(raw):
            self.add("other", Seen(_other_gpu_name(hit.group(0)), line))

    def gpu(self, name: str, raw: str, lower: str, line: str) -> None:
        short = re.fullmatch(r"[A-Za-z]\d{1,3}[GS]?", name) and not re.search(r"nvidia|tesla", lower)
        if short and not re.search(rf"{re.escape(name)}\s{{0,2}}(?:GPU|-SXM|-PCIE|\d{{2}}GB)", raw, re.I):
            return  # "T4", "A10" alone name a GPU only next to NVIDIA/Tesla or "GPU"
        model = self.gpu_models.get(gpu_key(name))
        if self.matrix is not None and model is None:
            return
        cc = model.compute_capability if model else None
        shown = f"NVIDIA {model.name}" if model and not model.name.startswith("NVIDIA") else name
        gpus = self.f.setdefault("gpus", [])
        gpus.append(Gpu(len(gpus), shown if model else name, cc))
        self.add("gpu_lines", line)

    def packages(self, raw: str, line: str, lower: str) -> None:
        hit = P.DIST_LINE.match(raw)
        while hit:
            name = hit.group(1).lower().replace("_", "-")
            typed = P.TYPED_ROW.fullmatch(hit.group(0).strip()) and not P.TREE_ROW.match(raw)
            rest = raw[hit.end() :]
            padded = P.PADDED_ROW.match(hit.group(0).strip())  # a column's padding: poetry show's rows describe
            if not P.DIST_NEXT.match(raw, hit.end()) and P.SENTENCE_AFTER.match(rest) and not padded:
                break  # "onnxruntime 1.31.1: session ran on ...": a sentence naming the package, not a listing's row
            if name == "onnxruntime" and typed and hit.end() == len(raw.rstrip()):
                # "onnxruntime 1.18.1" written as a sentence is the version the user means, not pip's row of the CPU
                # package (pip list pads its columns, freeze writes ==, conda adds a build)
                self.add("ort_stated", Seen(f"{name} {hit.group(2)}", line))
                break
            self.add("dists", Seen(f"{name} {hit.group(2)}", line))
            hit = P.DIST_NEXT.match(raw, hit.end())
        if "onnx runtime" in lower and (hit := P.APP_ORT_PACKAGE.search(raw)):
            name = "onnxruntime-gpu" if hit.group(1).lower() == "gpu" else "onnxruntime"
            self.add("dists", Seen(f"{name} {hit.group(2)}", line))
        ort = "onnxruntime" in lower  # most package patterns name it: the others are not tried on lines without it
        for hit in P.PIP_HAS.finditer(raw) if ort else ():
            groups = hit.groups()
            name, version = next((groups[i], groups[i + 1]) for i in range(0, len(groups), 2) if groups[i])
            self.add("dists", Seen(f"{name.lower().replace('_', '-')} {version}", line))
        self.pip_fetching(raw, line)
        if P.DIST_INSTALLED.search(raw):
            for name, version in P.DIST_IN_INSTALLED.findall(raw):
                self.add("dists", Seen(f"{name.lower()} {version}", line))
        if hit := P.PIP_SHOW_NAME.match(raw):
            self.pip_show = hit.group(1).lower().replace("_", "-")
        elif self.pip_show and (hit := P.PIP_SHOW_VERSION.match(raw)):
            self.add("dists", Seen(f"{self.pip_show} {hit.group(1)}", line))
            self.pip_show = None
        if ("wheel" in lower or "distribution" in lower or "find" in lower or "provides" in lower) and (
            P.NO_WHEEL.search(raw) or P.NO_WHEEL_SAID.search(raw)
        ):
            self.signal("no-wheel", line)
        # conda: "PackagesNotFoundError: The following packages are not available from current channels:" and the
        # packages, one a line ("  - onnxruntime-gpu") after it
        if "not available from current channels" in lower:
            self.conda_not_found = True
        elif self.conda_not_found:
            if "current channels" in lower:  # the list of channels follows, not of packages
                self.conda_not_found = False
            elif P.CONDA_MISSING_ROW.search(raw):
                self.signal("no-wheel", line)
        if "tensorrt" in lower and P.NO_TENSORRT.search(raw):
            self.signal("tensorrt-absent", line)
        if ort:
            self.onnxruntime_named(raw, line)

    def call_answer(self, raw: str, line: str) -> None:
        """The answer on the line after a call of get_device() or a session's get_providers(), bare (a REPL) or
        said ("I get GPU")."""
        if self.call == "device" and (answer := P.DEVICE_ANSWER.match(raw.strip())):
            self.signal("cpu-only-build" if answer.group(1).upper() == "CPU" else "gpu-device", line)
        elif self.call == "session" and (answer := P.SESSION_ANSWER.match(raw.strip())):
            self.add("sessions", Seen(",".join(dict.fromkeys(P.PROVIDER_NAME.findall(answer.group(1)))), line))
        if "get_" not in raw:  # neither call on this line (most lines): a cheap test before the patterns
            self.call = ""
            return
        self.call = "device" if P.DEVICE_CALL.search(raw) else "session" if P.SESSION_CALL.search(raw) else ""

    def onnxruntime_named(self, raw: str, line: str) -> None:
        """What a line naming onnxruntime says of its packages: both installed, the GPU one installed or named, the
        CPU one installed, required or removed, not installed, broken."""
        if P.BOTH_PACKAGES.search(raw):
            self.signal("both-packages", line)
        for name, version in P.UNINSTALLED.findall(raw):
            self.add("uninstalled", f"{name.lower().replace('_', '-')} {version}")
        if P.UNINSTALL_BOTH.search(raw):
            self.signal("uninstall-both", line)
        elif P.CPU_UNINSTALLED.search(raw):
            self.signal("cpu-uninstalled", line)
        if P.GPU_INSTALLED.search(raw) and not P.INSTALL_CHECK.search(raw):
            self.signal("gpu-installed", line)
        if P.NOT_INSTALLED.search(raw):
            self.signal("not-installed", line)
        if P.BROKEN_PACKAGE.search(raw):
            self.signal("package-broken", line)
        if P.AUTOUPDATE_CPU.search(raw):
            self.signal("autoupdate-cpu", line)
        if P.GPU_PACKAGE.search(raw) and not P.INSTALL_CHECK.search(raw):  # advice naming it is no install
            self.signal("gpu-package-named", line)
        if P.CPU_INSTALL.search(raw):
            self.signal("cpu-install-command", line)
        if P.CPU_REQUIRED.search(raw):
            self.signal("cpu-required", line)
        if P.CPU_INSTALLED_SAID.search(raw):
            self.signal("cpu-installed-said", line)
        if P.NODE_PACKAGE.search(raw):
            self.signal("node-package", line)
        if P.BARE_CPU_ROW.match(raw) or P.CPU_PULLED_IN.search(raw):
            self.signal("cpu-row", line)
        if P.CPU_REMOVED_FIXED.search(raw):
            self.signal("cpu-removed-fixed", line)

    def pip_fetching(self, raw: str, line: str) -> None:
        """pip fetching or installing onnxruntime's flavours: a wheel's file name is a listed distribution; both
        flavours fetched (or installed together) are both installed."""
        names: list[str] = []
        if hit := P.PIP_COLLECTING.match(raw):
            names.append(hit.group(1))
        for hit in P.WHEEL_FILE.finditer(raw):
            names.append(hit.group(1))
            self.add("dists", Seen(f"{hit.group(1).lower().replace('_', '-')} {hit.group(2)}", line))
        if hit := P.INSTALLING_COLLECTED.search(raw):
            names += [n.strip() for n in hit.group(1).split(",") if n.strip().lower().startswith("onnxruntime")]
        for name in names:
            flavour = name.lower().replace("_", "-")
            if flavour in ("onnxruntime", "onnxruntime-gpu"):
                self.fetched.add(flavour)
        if names and len(self.fetched) == 2 and not self.both_fetched:
            self.both_fetched = True
            self.signal("both-packages", line)

    def versions(self, raw: str, line: str, lower: str) -> None:
        if hit := P.RUNTIME_API.search(raw):
            self.add("cuda", Seen(hit.group(1), line))
        if (hit := P.DRIVER_API.search(raw)) and (self.driver is None or not self.driver.cuda_version):
            version = self.driver.version if self.driver else None
            self.driver, self.driver_line = DriverInfo(True, version, hit.group(1), "log"), line
        for hit in P.REQUIRE.finditer(raw):
            self.add("cudnn_required", Seen(hit.group(1), line))
            self.add("required", Seen(hit.group(2), line))
        if torch := P.TORCH_OTHER_CUDA.search(raw):
            self.add("required", Seen(torch.group(2), line))
            if torch.group(1) != torch.group(2):
                self.signal("torch-other-cuda", line)
        for hit in P.BUILD_CUDA.finditer(raw):
            self.add("required", Seen(next(g for g in hit.groups() if g), line))
        if build := P.CONDA_CUDA_BUILD.search(raw):  # a conda listing's CUDA build of onnxruntime: the GPU build
            self.add("required", Seen(build.group(1), line))
            self.signal("gpu-package-named", line)
        if row := P.CONDA_CUDA_ROW.search(raw):  # the CUDA a conda environment pins
            self.add("cuda", Seen(row.group(1), line))
        if not P.BUILD_CUDA.search(raw):
            for hit in P.BUILD_CUDA_SAID.finditer(raw):  # the build's CUDA told in words (Case weighs it below records)
                self.add("required_said", Seen(next(g for g in hit.groups() if g), line))
        for hit in P.IMAGE_CUDA.finditer(raw):  # the CUDA an image ships
            self.add("cuda", Seen(hit.group(1), line))
        for hit in P.ORT_STATED.finditer(raw):
            groups = hit.groups()
            version = next(g for g in groups[1::2] if g)
            flavour = "onnxruntime-gpu" if any(groups[0::2]) else "onnxruntime"
            self.add("ort_stated", Seen(f"{flavour} {version}", line))
        if pair := P.CUDA_SLASH_CUDNN.search(raw):
            self.add("cuda", Seen(pair.group(1), line))
            if (cudnn := _cudnn_major(pair.group(2))) is not None:
                self.add("cudnn", Seen(cudnn, line))
            return
        if "driver" not in lower and "cuda version:" not in lower:
            for hit in P.NVCC.finditer(raw):
                self.add("cuda", Seen(hit.group(1), line))
            for hit in P.CUDA_MAJOR_SAID.finditer(raw):
                if not _asked_for(raw, hit.start(), hit.end()):  # "looking for CUDA 11 files": wanted, not installed
                    self.add("cuda_major", Seen(hit.group(1), line))
        for hit in P.TENSORRT_SAID.finditer(raw) if "tensorrt" in lower else ():
            if not _asked_for(raw, hit.start(), hit.end()):  # "using tensorrt 8.2.1.8", not "requires TensorRT 10"
                self.signal(f"tensorrt-{hit.group(1)}-said", line)
        for hit in P.TORCH_CUDA.finditer(raw):
            digits = hit.group(1) or hit.group(2)
            self.add("cuda", Seen(f"{digits[:-1]}.{digits[-1]}", line))
        if "require" not in lower:
            for hit in P.CUDNN_STATED.finditer(raw):
                value = next(g for g in hit.groups() if g)
                if (cudnn := _cudnn_major(value)) is not None:
                    self.add("cudnn", Seen(cudnn, line))

    def template(self, raw: str, line: str, entry: Line) -> None:
        """microsoft/onnxruntime's issue template: "### ONNX Runtime Version or Commit ID" then "1.19.2"."""
        if hit := P.TEMPLATE_HEADER.match(raw):
            self.header = (hit.group(1).lower(), entry.last)
            return
        if self.header is None or entry.first - self.header[1] > 3:
            self.header = None
            return
        name = self.header[0]
        if name.startswith("onnx runtime version") and (hit := re.search(r"\b(1\.\d{1,2}(?:\.\d{1,2})?)\b", raw)):
            self.add("ort_stated", Seen(f"onnxruntime {hit.group(1)}", line))
        elif name.startswith("execution provider library") and (hit := re.search(r"cuda\s?(\d{1,2}\.\d)", raw, re.I)):
            self.add("cuda", Seen(hit.group(1), line))
        self.header = None

    def libraries(self, raw: str, line: str) -> None:
        seen: set[str] = set()
        if P.HYPOTHETICAL.search(raw) or P.GUESS.search(raw):
            return  # an error described as an example or guessed at, not one this log shows
        for pattern in P.LOADER_AND_MISSING:
            for hit in pattern.finditer(raw):
                loader, missing = hit.group(1), hit.group(2)
                if missing.lower() == loader.lower():
                    continue  # "Could not load library X. Error: X: cannot open": X itself, read below
                self.missing(missing, line, seen, needed_by=loader)
                seen.add(loader.lower())
        for pattern in P.MISSING:
            for hit in pattern.finditer(raw):
                self.missing(hit.group(1), line, seen)
        for pattern in P.LOADING:
            for hit in pattern.finditer(raw):
                name = hit.group(1)
                if name.lower() not in seen:
                    seen.add(name.lower())
                    self.add("loading", Seen(name, line))
        self.on_disk(raw, line)
        if P.PRESENT_SAID.search(raw) and not P.NOT_FOUND_WORDS.search(raw):
            self.signal("present-said", line)
        if P.DLL_INIT.search(raw):  # a provider's DLL alone (onnxruntime's own loaded), or any other DLL
            provider = P.PROVIDER_DLL.search(raw) and not P.PYBIND_IMPORT.search(raw)
            self.signal("provider-dll-init-failed" if provider else "dll-init-failed", line)
        if P.MSVC_ABSENT.search(raw) or P.ENTRY_POINT_MISSING.search(raw):
            self.signal("msvc-absent", line)
        if not seen and (said := P.LIBRARY_SAID_MISSING.search(raw)):
            family = (said.group(1) or said.group(2)).lower()
            family = {"cublaslt": "cublasLt", "cdnn": "cudnn"}.get(family, family)
            self.add("loads", LoadError(said.group(0), family, None, line))
        if P.MODULE_NOT_FOUND.search(raw):
            self.signal("module-not-found", line)
        if P.BAD_IMAGE.search(raw):
            self.signal("bad-image", line)
        if P.PROC_NOT_FOUND.search(raw):
            self.signal("proc-not-found", line)
        if P.PYBIND_IMPORT.search(raw):
            self.signal("pybind-import-failed", line)
        if P.CORE_DLL_FAILED.search(raw):
            self.signal("core-dll-failed", line)
        if P.ZLIBWAPI.search(raw) and not P.SPECULATION.search(raw):
            self.signal("zlibwapi-named", line)
        if other := P.VERSION_NOT_DEFINED.search(raw):
            self.signal("other-copy-first", line)
            self.add("files", Seen(other.group(1) or other.group(2), line))
        if P.WINDOWS_ABORT.search(raw):
            self.signal("windows-abort", line)
        if P.CUDNN8_FAULT.search(raw):
            self.signal("cudnn8-fault", line)

    def on_disk(self, raw: str, line: str) -> None:
        """Library files a listing shows present (find, ls, locate, dir): never on a line that reports an error."""
        for hit in P.LIBRARY_PRESENT.finditer(raw):
            self.add("files", Seen(hit.group(1), line))
        if P.NOT_FOUND_WORDS.search(raw) or P.COMMAND_LINE.search(raw):
            return
        for hit in P.FILE_ON_DISK.finditer(raw):
            self.add("files", Seen(hit.group(1), line))

    def missing(self, filename: str, line: str, seen: set[str], needed_by: str | None = None) -> None:
        if filename.lower() in seen:
            return
        seen.add(filename.lower())
        family = library_family(filename) or library_family(re.sub(r"^lib_", "lib", filename))  # "lib_cudnn_adv.so.9"
        if family is None and (whole := complete_fragment(filename)):  # "Lt64_12.dll": a garbled paste ate its start
            family, filename = whole
        self.add("loads", LoadError(filename, family, major_of(filename), line, needed_by))

    def errors(self, raw: str, line: str, lower: str) -> None:
        named = [self.known_error(name) for name in P.CUDA_ERROR_NAME.findall(raw)]
        for hit in P.CUDA_ERROR_NUMBER.finditer(raw):
            number = int(next(g for g in hit.groups() if g))
            if number in self.numbers:
                named.append(self.numbers[number])
        for message, name in self.messages:
            if message in lower:
                if name.startswith("CUBLAS_"):
                    self.add("cublas", Seen(name, line))
                else:
                    named.append(name)
        for name in named:
            self.add("errors", Seen(name, line))
        if "cudaErrorSymbolNotFound" in named and P.INIT_CALL.search(raw):  # CUDA error 500 at the runtime's first call
            self.signal("driver-symbol-missing", line)
        for hit in P.CUBLAS_ERROR.finditer(raw):
            status = hit.group(2) or self.cublas_numbers.get(int(hit.group(1)))
            if status:
                self.add("cublas", Seen(status.upper(), line))

    def known_error(self, name: str) -> str:
        """A cudaError name as the matrix has it; one cut short (a truncated title: "cudaErrorNoK") is the one known
        name it starts, where only one does."""
        known = self.numbers.values()
        if name in known or len(name) < 12:
            return name
        starting = [n for n in known if n.startswith(name)]
        return starting[0] if len(starting) == 1 else name

    def providers(self, raw: str, line: str, lower: str) -> None:
        if "executionprovider" in lower or self.wrapped:
            if listed := _provider_list(self.wrapped + raw.lstrip() if self.wrapped else raw):
                self.add("providers", Seen(",".join(dict.fromkeys(listed)), line))
            elif session := _session_list(raw):
                self.add("sessions", Seen(",".join(dict.fromkeys(session)), line))
        self.wrapped = _cut_provider_list(raw) if "provider" in lower else ""
        if P.GPU_BUILD.search(raw):
            self.signal("gpu-build", line)
        if "unknown provider" in lower and P.UNKNOWN_PROVIDER.search(raw):
            self.signal("provider-name-unknown", line)
        if P.CPU_ONLY_BUILD.search(raw) or _prose_cpu_list(raw):
            self.signal("cpu-only-build", line)
        if "executionprovider" in lower and P.CUDA_APPLIED.search(raw):
            self.signal("cuda-applied", line)
        if "executionprovider" in lower and P.RAN_ON_CUDA.search(raw) and not P.HYPOTHETICAL.search(raw):
            self.signal("ran-on-cuda", line)
        if "not" in lower and P.CUDA_UNAVAILABLE.search(raw):
            self.signal("cuda-unavailable", line)
        trt_words = ("tensorrt", "engine", "enqueue", "initializ", "assert")
        trt_ran = (
            any(w in lower for w in trt_words) and bool(P.TENSORRT_RAN.search(raw)) and not P.TENSORRT_LOAD.search(raw)
        )
        if "EP Error" in raw or "TensorRT" in raw:
            self.trt_ran = trt_ran or (self.trt_ran and "when using" in raw)
        if P.TENSORRT_FAILED.search(raw) and not trt_ran:
            self.signal("tensorrt-provider-failed", line)
        if hit := P.PROVIDER_FAILED.search(raw):
            which = next((g for g in hit.groups() if g), None)
            if which is None:  # the message names no provider itself: the line does
                which = (
                    "tensorrt" if re.search(r"tensorrt", raw, re.I) and not re.search(r"cuda", raw, re.I) else "cuda"
                )
            if which.lower() != "tensorrt":
                self.signal("provider-failed", line)
        if "when using" in lower and (hit := P.WHEN_USING.search(raw)):
            self.using = hit.group(1)
        if "falling back" in lower and (hit := P.FALLING_BACK.search(raw)):
            # the providers that failed are those tried ("when using") and not tried again
            tried = self.using if self.using is not None else "CUDAExecutionProvider"
            if "CUDA" in tried and "CUDA" not in hit.group(1):
                self.signal("provider-failed", line)
            elif "Tensorrt" in tried and "Tensorrt" not in hit.group(1) and not self.trt_ran:
                self.signal("tensorrt-provider-failed", line)
            self.using = None
            self.trt_ran = False

    def fixed_by(self, raw: str, line: str, lower: str) -> None:
        """What the user says fixed it (installing CUDA, cuDNN, zlib, a driver): that was what was missing; also told
        as numbered steps under "I solved it by the following steps:"."""
        if self.steps:
            self.steps -= 1
            if P.STEP.search(raw) and (hit := P.THING.search(raw)):
                self.fixed_thing(hit, line)
                return
        if not any(w in lower for w in ("fix", "solv", "resolv", "work", "trick", "did it")) or _NOT_FIXED.search(
            lower
        ):
            return
        if P.FIXED_BY_BUILD.search(raw):
            self.signal("fixed-by-other-build", line)
        if image := P.FIXED_BY_IMAGE.search(raw):  # an image of another CUDA fixed it
            self.signal("fixed-by-cuda", line)
            self.add("fixed_cuda", Seen(image.group(1), line))
        if P.FIXED_STEPS.search(raw):
            self.steps = 8
        elif hit := P.FIXED_BY[0].search(raw) or P.FIXED_BY[1].search(raw):
            self.fixed_thing(hit, line)

    def fixed_thing(self, hit: re.Match[str], line: str) -> None:
        """The signal for what a fix installed or updated (and the CUDA version it installed, where it says)."""
        thing, verb = hit.group("thing").lower(), hit.group("verb").lower()
        if thing.startswith("cuda") and (version := P.CUDA_VERSION_NAMED.match(hit.string, hit.start("thing"))):
            self.add("fixed_cuda", Seen(version.group(1), line))
        if thing.startswith("zlib"):
            self.signal("zlibwapi-named", line)
        elif "dnn" in thing:
            self.signal("fixed-by-cudnn", line)
        elif thing.startswith("cuda"):
            self.signal("fixed-by-cuda", line)
        elif verb.startswith(("updat", "upgrad")):
            self.signal("driver-old", line)
        elif verb.startswith(("reinstall", "re-install")):
            self.signal("fixed-by-driver-reinstall", line)
        else:
            self.signal("fixed-by-driver-install", line)

    def symptoms(self, raw: str, line: str, lower: str) -> None:
        for pattern, name, words in _SYMPTOM_GATES:
            if words.search(lower) and pattern.search(raw):
                self.signal(name, line)
        if (
            "cudnn" in lower
            and P.INIT_FAILED.search(raw)
            and _CUDNN_ERROR.search(raw)
            and "alloc_failed" not in lower  # cuDNN could not allocate its workspace: out of memory, not cuDNN missing
        ):
            self.signal("cudnn-init-failed", line)
        device = _DEVICE_WORDS.search(lower)
        differ = _DIFFER_GATE.search(lower) and P.DIFFER.search(raw)
        if differ and device:
            self.signal("results-differ", line)
        elif device and self.differ_pending:  # "1.12.1 inference result differs from 1.11.0", "The bug only with CUDA."
            self.signal("results-differ", self.differ_pending)
        self.differ_pending = line if differ and not device else ""
        if ("tolerance" in lower or "mismatched" in lower) and P.ALLCLOSE_FAILED.search(raw):
            self.signal("allclose-failed", line)
        if "allclose" in lower and P.ALLCLOSE_CALL.search(raw):
            self.signal("allclose-gpu", line)
        if any(w in lower for w in ("decimal", "digit", "significant", "1e-", "0.0000")) and P.TINY_DIFFERENCE.search(
            raw
        ):
            self.signal("tiny-difference", line)
        if "path" in lower and P.NOT_ON_PATH_SAID.search(raw):
            self.signal("not-on-path-said", line)

    def table(self, raw: str, line: str, entry: Line) -> bool:
        """A markdown table of timings: device columns ("| model | CPU (ms) | CUDA (ms) |") or device rows under a
        time column ("| provider | time |" then "| CPU | 12 |"), or rows of times with units ("| CPU | 0.9s | 1.6s |",
        the header unread). True when the line was a row of timings."""
        cells = [c.strip() for c in raw.strip().strip("|").split("|")]
        if len(cells) < 2 or not raw.lstrip().startswith("|"):
            self.columns = None
            return False
        if all(set(c) <= set("-: ") for c in cells):
            return False  # the separator row
        numbers = [P.TABLE_NUMBER.match(c) for c in cells]
        if not any(numbers):  # a header row
            self.columns = (cells, entry.last)
            return False
        if P.OTHER_FRAMEWORK.search(raw):
            return False
        near = self.columns is not None and entry.first - self.columns[1] <= 2
        header = self.columns[0] if self.columns is not None and near else [""] * len(cells)
        self.columns = (header, entry.last)
        row_device = next(
            (m.group(1) for c in cells if not P.TABLE_NUMBER.match(c) and (m := P.TABLE_DEVICE.search(c))), None
        )
        row_seconds: list[float] = []  # a row named by its device: its times (one per stage or run) summed
        for name, value in zip(header, numbers, strict=False):
            if value is None:
                continue
            device = P.TABLE_DEVICE.search(name)
            unit = value.group(2) or ("ms" if re.search(r"\bms\b|毫秒", name, re.I) else "s")
            if device and not row_device:
                self.add(
                    "timings", Timing(_timing_device(device.group(1).lower()), _seconds(value.group(1), unit), line)
                )
            elif row_device and (P.TABLE_TIME.search(name) or value.group(2)):
                row_seconds.append(_seconds(value.group(1), unit))
        if row_device and row_seconds:  # the rows share their columns: their sums compare like for like
            self.add("timings", Timing(_timing_device(row_device.lower()), sum(row_seconds), line))
            return True
        return False

    def timings(self, raw: str, line: str, entry: Line, lower: str, digits: bool) -> None:
        """Timings of a device: on the line ("GPU time: 45 ms"), a rate, or under a device's header."""
        if self.table(raw, line, entry) or P.OTHER_FRAMEWORK.search(raw):
            return  # torch's or TensorFlow's timings are not ONNX Runtime's
        device = digits and any(word in lower for word in ("gpu", "cpu", "cuda", "onnxruntime"))
        found = P.TIMING.findall(raw) if device else []
        for name, value, unit in found:
            self.add("timings", Timing(_timing_device(name.lower()), _seconds(value, unit), line))
        for name, value, _unit in P.RATE.findall(raw) if device else ():  # a rate: the time of one item is its inverse
            if float(value) > 0:
                self.add("timings", Timing(_timing_device(name.lower()), 1.0 / float(value), line))
        if hit := P.TIMING_HEADER.match(raw):  # "GPU Test result": the timings under it are the GPU's
            self.section = (_timing_device(hit.group(1).lower()), entry.last)
            return
        section = self.section
        if found or section is None or entry.first - section[1] > 2:
            return
        if hit := P.BARE_TIMING.search(raw):  # "model time : 0.28" under "CPU Test result"
            self.add("timings", Timing(section[0], _seconds(hit.group(1), hit.group(2) or "s"), line))
            self.section = (section[0], entry.last)

    # --- the result ---------------------------------------------------------------------------------------------
    def session_fallback(self) -> None:
        """The build lists the CUDA provider as available (or get_device() says GPU, or the GPU package is installed),
        and every session's provider list printed lacks it: the CUDA provider could not be created (the session fell
        back to the CPU)."""
        available = [s for s in self.f.get("providers", []) if P.AVAILABLE.search(s.line) and "CUDA" in s.value]
        # get_device() said 'GPU', or the GPU package is installed (listed, or the user's install command)
        gpu = any(s.value in ("gpu-device", "gpu-installed") for s in self.f.get("signals", []))
        gpu = gpu or any(d.value.startswith("onnxruntime-gpu ") for d in self.f.get("dists", []))
        sessions: list[Seen] = self.f.get("sessions", [])
        if (available or gpu) and sessions and all("CUDA" not in s.value for s in sessions):
            self.signal("provider-failed", sessions[0].line)

    def evidence(self, cut: bool) -> LogEvidence:
        self.session_fallback()
        explained = self.f.get("loads") or any(s.value == "other-copy-first" for s in self.f.get("signals", []))
        if self.preload_failed and not explained:  # the error line was cut: the library _ld_preload loaded is missing
            self.missing(*self.preload_failed, set())
        f = self.f
        signals = f.get("signals", [])
        if any(s.value == "autoupdate-failed" for s in signals):  # the AutoUpdate installed nothing
            f["signals"] = [s for s in signals if s.value != "autoupdate-cpu"]
        votes = self.os_votes
        os_name = max(votes, key=lambda k: votes[k]) if any(votes.values()) else None
        environment = RuntimeEnvironment(
            container=self.container,
            wsl=self.wsl,
            cuda_visible_devices=self.visible.get("CUDA_VISIBLE_DEVICES"),
            nvidia_visible_devices=self.visible.get("NVIDIA_VISIBLE_DEVICES"),
        )
        gone = set(f.get("uninstalled", ()))  # pip removed these: "Found existing installation" named them going
        dists = tuple(
            d for d in f.get("dists", ()) if not (d.line.startswith("Found existing installation") and d.value in gone)
        )
        return LogEvidence(
            driver=self.driver,
            driver_line=self.driver_line,
            gpus=tuple(f.get("gpus", ())),
            gpu_lines=tuple(dict.fromkeys(f.get("gpu_lines", ()))),
            other_gpus=tuple(f.get("other", ())),
            environment=environment,
            environment_lines=tuple(dict.fromkeys(f.get("env_lines", ())))[:4],
            container_gpu_flags=tuple(f.get("flags", ()))[:4],
            os=os_name,
            arch=self.arch,
            jetson=self.jetson,
            python_version=self.python_version,
            onnxruntime=_ort_dists(list(dists)),
            distributions=dists,
            ort_stated=tuple(f.get("ort_stated", ())),
            cuda_installed=tuple(f.get("cuda", ())) or tuple(f.get("cuda_major", ())),
            cudnn_installed=tuple(f.get("cudnn", ())),
            cuda_required=tuple(f.get("required", ())),
            cuda_required_said=tuple(f.get("required_said", ())),
            cuda_fixed=tuple(f.get("fixed_cuda", ())),
            cudnn_required=tuple(f.get("cudnn_required", ())),
            load_errors=tuple(f.get("loads", ())),
            loading=tuple(f.get("loading", ())),
            files=tuple(f.get("files", ())),
            cuda_errors=tuple(f.get("errors", ())),
            cublas_errors=tuple(f.get("cublas", ())),
            providers=tuple(f.get("providers", ())),
            session_providers=tuple(f.get("sessions", ())),
            signals=tuple(f.get("signals", ())),
            timings=tuple(f.get("timings", ())),
            cut=cut,
        )


def read_evidence(text: str, matrix: Matrix | None = None, cut: bool = False) -> LogEvidence:
    """The facts a log shows (`text` already bounded: see `bounded`)."""
    return read_lines(candidate_lines(text), matrix, cut)


def read_lines(
    lines: list[tuple[int, str]], matrix: Matrix | None = None, cut: bool = False, logical: list[Line] | None = None
) -> LogEvidence:
    """The facts of a log's candidate lines (`scan.candidate_lines`; `logical`: their `logical_lines`, if made)."""
    reader = _Reader(matrix)
    dated = log_date(lines)
    seen: set[tuple[str, str]] = set()
    previous = ""
    for entry in logical_lines(lines) if logical is None else logical:
        pair = (previous, entry.text)
        previous = entry.text
        if pair in seen:
            continue  # a line repeated after the same line (a warning per frame, a log pasted twice): nothing new
        seen.add(pair)
        reader.template(entry.text.strip(), _short(entry.text), entry)
        reader.read(entry)
    return replace(reader.evidence(cut), dated=dated)


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def log_date(lines: list[tuple[int, str]]) -> Seen | None:
    """The latest day a line's timestamp or nvidia-smi's header shows ("2023-04-03", the line), as pasted."""
    days: list[Seen] = []
    for _, raw in lines:
        text = raw.strip()
        if hit := P.LOG_DATE.match(text):
            days.append(Seen("-".join(hit.groups()), _short(text)))
        elif hit := P.SMI_DATE.match(text):
            month = _MONTHS.index(hit.group(1)) + 1
            days.append(Seen(f"{hit.group(3)}-{month:02d}-{int(hit.group(2)):02d}", _short(text)))
    return max(days, key=lambda s: s.value) if days else None


# the symptoms read from any line: (pattern, signal, words one of which the line must hold for the pattern to be tried)
_SLOWER_WORDS = (
    *("slow", "慢", "faster", "快", "more than", "exceed", "longer", "greater", "大于", "超过", "13198", "speed"),
    *("same", "耗时", "小于", "worse", "outperform", "beat", "better than", "more time", "lower", "forever", "ages"),
)
_SYMPTOMS = (
    (P.CUDA_CALL_FAILED, "cuda-call-failed", ("cuda", "initializ")),
    (P.FORK, "fork", ("multiprocessing", "fork", "process(", "start_method", "pool(")),
    (P.NODE_FAILED, "node-failed", ("node",)),
    (P.DML_FAILED, "dml-failed", ("dml", "directml", "d3d12")),
    (P.CONTAINER_TOOLKIT, "container-toolkit", ("nvidia-container", "oci runtime")),
    (P.NO_GPU_RUNTIME, "no-gpu-runtime", ("device driver", "runtime name")),
    (P.NVML_UNKNOWN, "nvml-unknown", ("nvml",)),
    (P.DEVICE_ID_INVALID, "device-invalid", ("device",)),
    (P.AUTOUPDATE_FAILED, "autoupdate-failed", ("retry", "autoupdate", "non-zero exit", "command not found")),
    (P.CUDA_CALL_ERROR, "cuda-call-error", ("cuda", "cublas", "cudnn", "cufft", "curand")),
    (P.TORCH_NO_CUDA, "torch-no-cuda", ("is_available", "cuda available")),
    (
        P.SILENT_EXIT,
        "silent-exit",
        ("exit", "quit", "close", "crash", "terminat", "stop", "die", "silent", "闪退", "退出", "报错"),
    ),
    (P.GPU_UNUSED, "gpu-unused", ("gpu", "cpu", "cuda", "rtx", "gtx")),
    (P.GPU_NOT_PASSED, "gpu-not-passed", ("gpus", "runtime", "gpu")),
    (P.INSTALL_FAILED_SAID, "install-failed-said", ("install",)),
    (P.REBOOT_FIXED, "reboot-fixed", ("reboot", "restart")),
    (P.TORCH_ARCH, "torch-arch", ("capability",)),
    (P.PROVIDER_FAILED_SAID, "provider-failed", ("provider", " ep", "无法加载", "失败")),
    (P.NODES_ON_CPU_SAID, "nodes-on-cpu", ("cpu", "provider", " ep")),
    (P.OOM, "out-of-memory", ("memory", "alloc", "显存")),
    (P.FORCE_PTX_JIT, "force-ptx-jit", ("force_ptx",)),
    (P.CONTEXT, "context-conflict", ("handle", "pycuda", "context")),
    (P.CUDNN_STATUS, "cudnn-status", ("cudnn",)),
    (P.NODES_ON_CPU, "nodes-on-cpu", ("node", "kernel not found")),
    (P.MEMCPY, "memcpy", ("memcpy",)),
    (P.SLOWER, "gpu-slower", _SLOWER_WORDS),
    (P.FASTER_GPU, "gpu-faster", ("faster", "快")),
)
_DIFFER_WORDS = (
    *(
        "result",
        "output",
        "inference",
        "differ",
        "inconsistent",
        "wrong",
        "relative",
        "absolute",
        "max",
        "结果",
        "精度",
    ),
    *("误差", "tolerance", "value", "label", "prediction", "accuracy", "bad", "incorrect", "garbage", "corrupt"),
)
_DEVICE_WORDS = re.compile(r"gpu|cuda|cpu|显卡|provider")


def _gate(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern finding any of `words` in a lower-cased line: a pattern is tried only on a line holding one (one
    scan in C instead of a Python loop over the words, for every line read)."""
    return re.compile("|".join(re.escape(word) for word in words))


_SYMPTOM_GATES = tuple((pattern, name, _gate(words)) for pattern, name, words in _SYMPTOMS)
_DIFFER_GATE = _gate(_DIFFER_WORDS)
_CUDNN_ERROR = re.compile(r"CUDNN failure|CUDNN_STATUS|CUDNN error", re.I)
_NOT_FIXED = re.compile(r"(?:n't|\bnot|\bnever|\bno longer|\bstill)\s(?:\w+\s)?(?:fix|solv|resolv|work|help)")
_ARM_WORDS = ("aarch64", "arm64", "jetson", "tegra", "l4t", "orin", "xavier")
_BITS = re.compile(r"python|bit|platform|architecture|win32")
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
    names = P.PROVIDER_NAME.findall(raw)
    if not names:
        return []
    rest = P.PROVIDER_NAME.sub("", raw)
    if P.NAMES_ONLY.fullmatch(rest):  # printed: `['CPUExecutionProvider']`, a bullet
        # a piece of a list spread over lines (code passing providers, a wrapped print) is not the whole list
        whole = rest.count("[") == rest.count("]") and rest.count("(") == rest.count(")")
        return names if whole and not rest.rstrip().endswith(",") else []
    if not P.AVAILABLE.search(raw):
        return []
    for content in P.BRACKETED.findall(raw):
        inside = P.PROVIDER_NAME.findall(content)
        if inside and P.NAMES_ONLY.fullmatch(P.PROVIDER_NAME.sub("", content)):
            return inside
    hit = P.AFTER_HEADER.search(raw)
    return P.PROVIDER_NAME.findall(hit.group(1)) if hit else []


def _prose_cpu_list(raw: str) -> bool:
    """A CPU build's provider list said in words, on a line about the available providers or naming Azure's."""
    hit = P.PROSE_CPU_LIST.search(raw)
    rest = _NEGATED_CUDA.sub("", raw[hit.start() :]) if hit else ""  # "not have cuda and tensorrt" lists no CUDA
    return bool(hit and re.search(r"availab|azure", raw, re.I) and not re.search(r"CUDA|Tensorrt", rest, re.I))


_NEGATED_CUDA = re.compile(
    r"(?:not (?:have|has|show|shows|list|lists|include)|\bno|without)\s(?:the\s)?(?:cuda|tensorrt)\w*"
    r"(?:\s(?:and|or|,|nor)\s(?:cuda|tensorrt)\w*)?",
    re.I,
)


def _session_list(raw: str) -> list[str]:
    """The providers a line says a session uses ("get_providers() is: ['CPUExecutionProvider']", "Applied providers:
    [...]"); never the providers code asks for (`providers=[...]`)."""
    if not P.SESSION_LIST.search(raw) or P.PROVIDERS_REQUESTED.search(raw):
        return []
    for content in P.BRACKETED.findall(raw):
        inside = P.PROVIDER_NAME.findall(content)
        if inside and P.NAMES_ONLY.fullmatch(P.PROVIDER_NAME.sub("", content)):
            return inside
    return []


def _cut_provider_list(raw: str) -> str:
    """What follows "available providers:" when the line ends inside a name (a wrapped paste), else ""."""
    hit = P.AFTER_HEADER.search(raw) if P.AVAILABLE.search(raw) else None
    if not hit or not hit.group(1) or not hit.group(1)[-1].isalnum() or hit.group(1).endswith("Provider"):
        return ""
    return "available providers: " + hit.group(1)


def _asked_for(raw: str, start: int, end: int) -> bool:
    """The CUDA major at raw[start:end] is what something asks for ("looking for CUDA 11 files", "requires CUDA 12",
    "built for CUDA 11"), not what is installed."""
    return bool(P.ASKED_BEFORE.search(raw[max(0, start - 24) : start]) or P.ASKED_AFTER.match(raw, end))


def _seconds(value: str, unit: str) -> float:
    return float(value) / (1000.0 if unit.lower() in ("ms", "毫秒") else 1.0)


def _timing_device(word: str) -> str:
    """gpu | cpu, or `package` for the plain onnxruntime package named as what was timed (the CPU package where
    onnxruntime-gpu is timed beside it)."""
    if word == "cpu":
        return "cpu"
    if word in ("gpu", "cuda", "tensorrt", "trt"):
        return "gpu"
    return "package" if word == "onnxruntime" else "gpu"


def _ort_dists(dists: list[Seen]) -> tuple[OrtDist, ...]:
    """The onnxruntime flavours listed, one per name (the last listing wins: it is the newest state)."""
    found: dict[str, OrtDist] = {}
    for seen in dists:
        name, version = seen.value.split(" ", 1)
        if name.startswith("onnxruntime"):
            found[name] = OrtDist(name, version, location=seen.line)
    return tuple(found.values())
