"""Recognise ONNX Runtime / CUDA failures in pasted log text (Linux and Windows spellings). Pure.

`analyze_log(text, matrix=...)` returns Findings, most important first. Each rule looks at one line at a time;
the line is the evidence. Generic symptoms ("Failed to create CUDAExecutionProvider") are kept only when nothing
more specific explains them. Rules name CUDA errors by their cudaError_t name; the numbers logs print
("CUDA failure 35") come from the matrix (cuda.yaml `errors`), as no version number lives in this code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from provisioner.findings import Finding, merge_findings
from provisioner.matrix.model import Matrix
from provisioner.standalone.libnames import library_family

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Fixes:
    """The fix texts, for one platform and one target interpreter."""

    python: str = "python"
    windows: bool = False

    @property
    def pip(self) -> str:
        return f"{self.python} -m pip"

    def for_code(self, code: str, library: str | None = None) -> str:
        p = self.pip
        if code == "cudnn-missing":
            return (
                f"ortprov apply --python {self.python}  (installs the cuDNN wheel the plan pins); by hand: "
                f'{p} install "onnxruntime-gpu[cuda,cudnn]" and call onnxruntime.preload_dlls() before '
                "creating the session"
            )
        if code == "cuda-library-missing":
            name = library or "CUDA"
            return (
                f"ortprov apply --python {self.python}  (installs the {name} wheel the plan pins); by hand: "
                f'{p} install "onnxruntime-gpu[cuda,cudnn]" and call onnxruntime.preload_dlls()'
            )
        if code == "library-not-on-path":
            by_hand = (
                "add the folder holding the DLL to PATH"
                if self.windows
                else "export LD_LIBRARY_PATH=<folder holding the library>:$LD_LIBRARY_PATH"
            )
            return (
                f"ortprov apply --python {self.python}  (installs the loader hook: a plain `import onnxruntime` "
                f"then finds the NVIDIA wheels' libraries); in code: call onnxruntime.preload_dlls() before "
                f"creating the session; or {by_hand}"
            )
        if code == "loader-hook-failed":
            return (
                f"ortprov verify --python {self.python} --json  shows the hook's status (loader_hook); "
                f"`ortprov apply --python {self.python}` rewrites the hook"
            )
        if code == "tensorrt-missing":
            return (
                f"ortprov apply --python {self.python} --tensorrt  (installs the TensorRT packages the build's "
                "provider was built against; `ortprov plan --tensorrt` names them), or drop "
                "TensorrtExecutionProvider and use CUDAExecutionProvider"
            )
        if code == "no-driver":
            if self.windows:
                return "install the NVIDIA driver (https://www.nvidia.com/Download/index.aspx), then `ortprov doctor`"
            return (
                "install the NVIDIA driver (`sudo ubuntu-drivers install` on Ubuntu); in a container, run "
                "it with "
                "`docker run --gpus all ...` (NVIDIA Container Toolkit)"
            )
        if code == "driver-library-mismatch":
            return (
                "the kernel driver and its user-space libraries differ after an upgrade: reboot (or "
                "reload nvidia modules)"
            )
        if code == "gpu-hidden":
            return (
                "start the container with `docker run --gpus all ...` (Kubernetes: request "
                "nvidia.com/gpu), and "
                "`unset CUDA_VISIBLE_DEVICES` or set it to a valid index (export CUDA_VISIBLE_DEVICES=0)"
            )
        if code == "driver-too-old":
            return (
                "upgrade the NVIDIA driver to one that supports the build's CUDA version, or install a "
                "build for the "
                f"CUDA your driver has: ortprov plan --python {self.python} (it reads the driver) then "
                "ortprov apply"
            )
        if code == "cpu-package-only":
            return (
                f"ortprov apply --python {self.python}  (or: {p} uninstall -y onnxruntime && "
                f"{p} install onnxruntime-gpu)"
            )
        if code == "cpu-and-gpu-installed":
            return (
                f"{p} uninstall -y onnxruntime onnxruntime-gpu && {p} install onnxruntime-gpu  "
                f"(or ortprov apply --python {self.python}, which does exactly this)"
            )
        if code == "cuda-major-mismatch":
            return (
                f"ortprov plan --python {self.python}  picks the build for the CUDA major you have; "
                f"ortprov apply installs it (or install torch/NVIDIA wheels for the build's CUDA major)"
            )
        if code == "unsupported-gpu-arch":
            return (
                "this build has no kernels for the GPU's compute capability: ortprov plan --python "
                f"{self.python} chooses a build that supports it (newer GPUs need newer builds, older GPUs "
                "older ones)"
            )
        if code == "msvc-runtime-missing":
            return "install the Microsoft Visual C++ Redistributable: https://aka.ms/vs/17/release/vc_redist.x64.exe"
        if code == "zlibwapi-missing":
            return (
                "zlibwapi.dll is needed by older cuDNN releases on Windows; newer ones bundle zlib: "
                f"ortprov apply --python {self.python}  (installs the cuDNN wheel the plan pins), or put "
                "zlibwapi.dll next to the cuDNN DLLs"
            )
        if code == "gpu-out-of-memory":
            return (
                "free GPU memory (other processes: `nvidia-smi`), lower the batch size, or cap ONNX "
                "Runtime with the "
                "CUDA provider options {'gpu_mem_limit': N, 'arena_extend_strategy': 'kSameAsRequested'}"
            )
        if code == "cuda-context-conflict":
            return (
                "do not `import pycuda.autoinit` next to ONNX Runtime: create one context (cuda.Device(0)."
                "make_context()), push it around TensorRT calls and pop it after; or run the engines in "
                "separate "
                "processes"
            )
        if code == "no-wheel-for-platform":
            return (
                f"ortprov plan --python {self.python}  lists the platforms and Pythons each build has "
                "wheels for; "
                "use a supported Python (e.g. via `uv venv --python 3.12`) or Linux x86_64/aarch64 or "
                "Windows x64"
            )
        if code == "gpu-slower-than-cpu":
            return (
                "ortprov verify --model MODEL.onnx --dim NAME=N  (times your model on GPU vs CPU); avoid "
                "per-call "
                "host<->device copies with IOBinding, warm up before timing, and batch small inputs"
            )
        if code == "nodes-on-cpu":
            return (
                "run with SessionOptions.log_severity_level = 1 to see which nodes fall back to the CPU; "
                "newer onnxruntime-gpu builds cover more operators (ortprov plan)"
            )
        if code == "gpu-provider-failed":
            return (
                f"ortprov doctor --python {self.python}  on the failing machine names the missing piece "
                "(most often "
                "cuDNN or a CUDA library not on the loader path)"
            )
        return f"ortprov doctor --python {self.python}"


def _platform_is_windows(text: str) -> bool:
    return bool(re.search(r"\.dll\b|[A-Z]:\\|LoadLibrary", text))


def _library_finding(name: str, line: str, fixes: Fixes) -> Finding | None:
    """A finding for one named missing library file (libcudnn.so.9, cudnn64_9.dll, zlibwapi.dll ...)."""
    lower = name.lower()
    if lower.startswith(("vcruntime", "msvcp", "api-ms-win-crt")):
        return Finding(
            "msvc-runtime-missing",
            "error",
            f"{name} (Microsoft Visual C++ runtime) is missing",
            (line,),
            fixes.for_code("msvc-runtime-missing"),
        )
    if lower.startswith(("libonnxruntime", "onnxruntime")):
        return None
    family = library_family(name)
    if family is None:
        return None
    if family == "cudnn":
        return Finding(
            "cudnn-missing",
            "error",
            f"cuDNN cannot be loaded ({name})",
            (line,),
            fixes.for_code("cudnn-missing"),
            "cudnn",
        )
    if family in ("nvinfer", "nvonnxparser"):
        return Finding(
            "tensorrt-missing",
            "error",
            f"TensorRT cannot be loaded ({name})",
            (line,),
            fixes.for_code("tensorrt-missing"),
            "nvinfer",
        )
    if family == "cuda":
        return Finding(
            "no-driver",
            "error",
            f"the NVIDIA driver library {name} cannot be loaded",
            (line,),
            fixes.for_code("no-driver"),
        )
    if family == "zlibwapi":
        return Finding(
            "zlibwapi-missing",
            "error",
            "zlibwapi.dll (needed by older cuDNN releases on Windows) is missing",
            (line,),
            fixes.for_code("zlibwapi-missing"),
        )
    base = "cublas" if family == "cublasLt" else family
    return Finding(
        "cuda-library-missing",
        "error",
        f"the CUDA library {name} ({base}) cannot be loaded",
        (line,),
        fixes.for_code("cuda-library-missing", base),
        base,
    )


_LIB_PATTERNS = (
    re.compile(r"([\w.+-]+\.so(?:\.\d+)*)\s*:\s*(?:cannot open shared object file|file too short|invalid ELF)"),
    re.compile(r"\"([\w.+-]+\.dll)\" which is missing", re.I),
    re.compile(r"Could not (?:load|locate) library ([\w.+-]+\.(?:dll|so(?:\.\d+)*))", re.I),
    re.compile(r"Could not locate ([\w.+-]+\.dll)", re.I),
    re.compile(r"'([\w.+-]+\.dll)' not found", re.I),
    re.compile(r"([\w.+-]+\.dll) (?:was not found|is missing|could not be found)", re.I),
)

Rule = tuple[re.Pattern[str], Callable[[re.Match[str], str, Fixes], Finding]]


def _simple(
    code: str, severity: str, title: str, library: str | None = None
) -> Callable[[re.Match[str], str, Fixes], Finding]:
    def build(match: re.Match[str], line: str, fixes: Fixes) -> Finding:
        return Finding(code, severity, title, (line,), fixes.for_code(code, library), library)

    return build


def _provider_failed(match: re.Match[str], line: str, fixes: Fixes) -> Finding:
    provider = match.group(1)
    if provider.startswith("Tensorrt"):
        return Finding(
            "tensorrt-missing",
            "error",
            "the TensorRT execution provider could not be created",
            (line,),
            fixes.for_code("tensorrt-missing"),
            "nvinfer",
        )
    need = re.search(r"Require (cuDNN [\d.*]+ and CUDA [\d.*]+)", line)
    title = "the CUDA execution provider could not be created; ONNX Runtime fell back to the CPU"
    if need:
        title += f" (it needs {need.group(1)})"
    return Finding("gpu-provider-failed", "error", title, (line,), fixes.for_code("gpu-provider-failed"))


def _cuda_mismatch(match: re.Match[str], line: str, fixes: Fixes) -> Finding:
    return Finding(
        "cuda-major-mismatch",
        "error",
        f"CUDA {match.group(1)}.x libraries (torch) next to a build for CUDA {match.group(2)}.x",
        (line,),
        fixes.for_code("cuda-major-mismatch"),
    )


def _msvc_possible(match: re.Match[str], line: str, fixes: Fixes) -> Finding:
    return Finding(
        "msvc-runtime-missing",
        "warning",
        "the CUDA provider failed to load on Windows; a missing MSVC runtime is one possible cause",
        (line,),
        fixes.for_code("msvc-runtime-missing"),
    )


# (pattern, the cudaError_t names it stands for, re flags, finding); `rules()` adds "CUDA failure <number>"
# for each name the matrix knows.
Builder = Callable[[re.Match[str], str, Fixes], Finding]
_RULES: tuple[tuple[str, tuple[str, ...], int, Builder], ...] = (
    (
        r"CUDA driver version is insufficient",
        ("cudaErrorInsufficientDriver",),
        re.I,
        _simple("driver-too-old", "error", "the NVIDIA driver is older than the CUDA runtime this build needs"),
    ),
    (
        r"no kernel image is available",
        ("cudaErrorNoKernelImageForDevice",),
        re.I,
        _simple("unsupported-gpu-arch", "error", "the build has no GPU code for this GPU's compute capability"),
    ),
    (
        r"no CUDA-capable device is detected|CUDA_ERROR_NO_DEVICE",
        ("cudaErrorNoDevice",),
        re.I,
        _simple("gpu-hidden", "error", "CUDA sees no GPU (container without GPU access, or CUDA_VISIBLE_DEVICES)"),
    ),
    (
        r"couldn't communicate with the NVIDIA driver|found no NVIDIA driver on your system",
        (),
        re.I,
        _simple("no-driver", "error", "no NVIDIA driver is loaded"),
    ),
    (
        r"Driver/library version mismatch",
        (),
        re.I,
        _simple(
            "driver-library-mismatch",
            "error",
            "the NVIDIA kernel driver and its libraries have different versions",
        ),
    ),
    (
        r"zlibwapi\.dll",
        (),
        re.I,
        _simple("zlibwapi-missing", "error", "zlibwapi.dll (needed by older cuDNN releases on Windows) is missing"),
    ),
    (
        r"CUDA failure \d+\s*:\s*out of memory|CUDA_ERROR_OUT_OF_MEMORY|"
        r"Failed to allocate memory for requested buffer|CUDNN_STATUS_ALLOC_FAILED|"
        r"CUBLAS_STATUS_ALLOC_FAILED",
        ("cudaErrorMemoryAllocation",),
        re.I,
        _simple("gpu-out-of-memory", "error", "the GPU ran out of memory"),
    ),
    (
        r"invalid resource handle|pycuda\.autoinit",
        ("cudaErrorInvalidResourceHandle",),
        re.I,
        _simple(
            "cuda-context-conflict",
            "error",
            "CUDA context conflict: TensorRT/pycuda and ONNX Runtime share one process without managing contexts",
        ),
    ),
    (
        r"CUDNN_STATUS_NOT_INITIALIZED|CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED|CUDNN_STATUS_VERSION_MISMATCH|"
        r"cudnnCreate\(|(?:unable to|failed to|could not|cannot) (?:dl)?(?:open|load)[^\n]{0,80}cudnn",
        (),
        re.I,
        _simple(
            "cudnn-missing",
            "error",
            "cuDNN could not be initialised (missing, incomplete or mismatched)",
            "cudnn",
        ),
    ),
    (
        r"Microsoft Visual C\+\+ Redistributable is not installed|(?:vcruntime140(?:_1)?|msvcp140)\.dll",
        (),
        re.I,
        _simple("msvc-runtime-missing", "error", "the Microsoft Visual C++ runtime is missing"),
    ),
    (
        r"Specified provider '(?:CUDA|Tensorrt)ExecutionProvider' is not in available provider names|"
        r"(?:available|可用)[^\n\[]{0,40}\[\s*'(?:Azure|CPU)ExecutionProvider'(?:\s*,\s*'(?:Azure|CPU)"
        r"ExecutionProvider')*\s*\]|Available providers: '(?:Azure|CPU)ExecutionProvider(?:, "
        r"?(?:Azure|CPU)"
        r"ExecutionProvider)*'",
        (),
        re.I,
        _simple("cpu-package-only", "error", "the installed onnxruntime has no CUDA provider (the CPU package)"),
    ),
    (r"uses CUDA (\d+)\.x, but \S+ is built with CUDA (\d+)\.x", (), 0, _cuda_mismatch),
    (r"Failed to create (CUDA|Tensorrt)ExecutionProvider", (), 0, _provider_failed),
    (
        r"LoadLibrary failed with error 126.*onnxruntime_providers_tensorrt\.dll",
        (),
        re.I,
        _simple(
            "tensorrt-missing",
            "error",
            "a DLL the TensorRT provider depends on is missing (Windows error 126)",
        ),
    ),
    (
        r"LoadLibrary failed with error 126(?!.*tensorrt)|Error 126",
        (),
        re.I,
        _simple(
            "cuda-library-missing",
            "error",
            "a DLL the CUDA provider depends on is missing (Windows error 126: CUDA, cuDNN or the MSVC runtime)",
        ),
    ),
    (
        r"(?:Current|Applied) providers: \['CPUExecutionProvider'\]|"
        r"Attempt to set CUDAExecutionProvider failed|Falling back to \['CPUExecutionProvider'\]",
        (),
        re.I,
        _simple("gpu-provider-failed", "error", "the session fell back to the CPU"),
    ),
    (r"and the latest MSVC runtime", (), re.I, _msvc_possible),
    (
        r"No matching distribution found for (?:onnxruntime-gpu|onnxruntime_gpu)|Could not find a "
        r"version that "
        r"satisfies the requirement onnxruntime-gpu",
        (),
        re.I,
        _simple("no-wheel-for-platform", "error", "PyPI has no onnxruntime-gpu wheel for this platform or Python"),
    ),
    (
        r"Memcpy nodes are added to the graph .* for CUDAExecutionProvider|GPU[^\n]{0,30}(?:slower|慢)|"
        r"onnxruntime/issues/13198|onnxruntime issue#13198",
        (),
        re.I,
        _simple(
            "gpu-slower-than-cpu",
            "warning",
            "the GPU is slower than expected (host/device copies or tiny work)",
        ),
    ),
    (
        r"Some nodes were not assigned to the preferred execution providers",
        (),
        re.I,
        _simple("nodes-on-cpu", "info", "some nodes run on the CPU although a GPU provider was requested"),
    ),
)


@lru_cache(maxsize=8)
def rules(error_numbers: tuple[tuple[str, int], ...] = ()) -> tuple[Rule, ...]:
    """The compiled rules; each CUDA error a rule names matches by its name and, where `error_numbers`
    (name, number) knows it, as "CUDA failure <number>"."""
    numbers = dict(error_numbers)
    compiled = []
    for pattern, errors, flags, build in _RULES:
        alternatives = [pattern, *map(re.escape, errors)]
        alternatives += [rf"CUDA failure {numbers[name]}\b" for name in errors if name in numbers]
        compiled.append((re.compile("|".join(alternatives), flags), build))
    return tuple(compiled)


def analyze_log(text: str, python: str = "python", matrix: Matrix | None = None) -> list[Finding]:
    """Findings recognised in pasted log text, most important first (empty when nothing is recognised).
    `matrix`: where the CUDA error numbers come from (without it, errors are recognised by name and message)."""
    fixes = Fixes(python=python, windows=_platform_is_windows(text))
    known = tuple(sorted((e.name, e.number) for e in matrix.cuda_errors)) if matrix is not None else ()
    found: list[Finding] = []
    for raw in text.splitlines():
        line = _ANSI.sub("", raw).strip()
        if not line:
            continue
        evidence = line if len(line) <= 500 else line[:497] + "..."
        matched_library = False
        for pattern in _LIB_PATTERNS:
            for match in pattern.finditer(line):
                finding = _library_finding(match.group(1), evidence, fixes)
                if finding:
                    found.append(finding)
                    matched_library = True
        for regex, build in rules(known):
            hit = regex.search(line)
            if not hit:
                continue
            finding = build(hit, evidence, fixes)
            if (
                matched_library
                and finding.code in ("cuda-library-missing", "zlibwapi-missing", "msvc-runtime-missing")
                and finding.library is None
            ):
                continue  # the named library on this line already says it better
            found.append(finding)
    return _drop_generic(merge_findings(found))


def _drop_generic(findings: list[Finding]) -> list[Finding]:
    """Keep symptoms only when no specific cause was recognised."""
    specific = [
        f
        for f in findings
        if f.code != "gpu-provider-failed"
        and not (f.code == "msvc-runtime-missing" and f.severity == "warning")
        and not (f.code == "cuda-library-missing" and f.library is None)
        and f.severity == "error"
    ]
    if not specific:
        return findings
    kept = []
    for finding in findings:
        if finding.code == "gpu-provider-failed":
            continue
        if finding.code == "msvc-runtime-missing" and finding.severity == "warning":
            continue
        if (
            finding.code == "cuda-library-missing"
            and finding.library is None
            and any(
                f.code
                in (
                    "cudnn-missing",
                    "cuda-library-missing",
                    "tensorrt-missing",
                    "msvc-runtime-missing",
                    "zlibwapi-missing",
                )
                and f is not finding
                for f in specific
            )
        ):
            continue
        kept.append(finding)
    return kept
