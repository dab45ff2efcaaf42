"""The rules: facts -> findings, one registry for the live host and a pasted log. Pure.

- The fact rules (factrules.py: `driver_findings`, `package_findings`, `driver_vs_build`, `library_code`) take the
  host model's parts and are what both sources call: the same facts give the same code (host.py calls them on the
  probed machine, logrules.py on a log's facts).
- `RULES` is the registry: one `Rule` per finding code, in findings.CODES order, with the evidence it reads, the
  rule that decides it from a log (logrules.py) and its fix (fixes.FIXES). Codes only the live doctor can show
  (its verify child, its loader hook) or a tune measures have no log rule; TensorRT's own codes are read from the
  log's text by doctor/tensorrt.py (issue 25), whose findings `decide_log` ranks with the rest.
- `decide_log` runs every log rule on a `Case`, merges the findings per code and library, drops the generic
  symptom where a cause was found, and ranks them by cause (`rank`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.doctor import logrules as L
from provisioner.doctor.case import Case
from provisioner.doctor.evidence import LogEvidence, bounded, read_lines
from provisioner.doctor.factrules import driver_findings, driver_vs_build, library_code, package_findings
from provisioner.doctor.fixes import FIXES, Fixes
from provisioner.doctor.normalize import logical_lines
from provisioner.doctor.scan import candidate_lines, candidate_text
from provisioner.findings import CODES, SEVERITIES, Finding, merge_findings
from provisioner.matrix.query import cuda_major

if TYPE_CHECKING:
    from collections.abc import Callable

    from provisioner.matrix.model import Matrix

__all__ = [
    "RULE",
    "RULES",
    "Rule",
    "analyze_log",
    "decide_log",
    "driver_findings",
    "driver_vs_build",
    "library_code",
    "package_findings",
    "read_log_text",
]

# --- the registry -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One finding code: the evidence it reads, the rule deciding it from a log (None: only the live doctor can
    show it), and its fix (fixes.FIXES)."""

    code: str
    reads: str
    on_log: Callable[[Case], list[Finding]] | None

    def fix(self, fixes: Fixes, library: str | None = None, subject: str | None = None) -> str:
        return FIXES[self.code](fixes, library, subject)


RULES: tuple[Rule, ...] = (
    Rule(
        "no-driver",
        "no driver (NVML, libcuda/nvcuda missing, nvidia-smi failing); CUDA error 35 with no NVIDIA "
        "GPU; CUDA error 100 or missing CUDA libraries where only an AMD/Intel GPU is named",
        L.no_driver,
    ),
    Rule("driver-library-mismatch", "NVML's version mismatch; CUDA errors 803/804", L.driver_library_mismatch),
    Rule(
        "gpu-hidden",
        "no driver inside a container; CUDA error 35 in a container whose host driver is new enough; "
        "CUDA error 100; CUDA/NVIDIA_VISIBLE_DEVICES hiding every GPU",
        L.gpu_hidden,
    ),
    Rule(
        "driver-too-old",
        "CUDA error 35 outside a container or with the GPU seen inside it; the driver's CUDA "
        "(nvidia-smi) older than the build's; the log's own words",
        L.driver_too_old,
    ),
    Rule(
        "no-wheel-for-platform",
        "pip's and uv's 'no matching distribution' / 'no wheel for the current platform'; "
        "macOS, Jetson with a CPU-only build, 32-bit Python; the host's platform tag",
        L.no_wheel_for_platform,
    ),
    Rule(
        "onnxruntime-not-installed",
        "No module named 'onnxruntime'; libonnxruntime.so / onnxruntime.dll missing; nothing importable on the host",
        L.onnxruntime_not_installed,
    ),
    Rule(
        "cpu-package-only",
        "a CPU-only build in use: provider lists without CUDA (unless the GPU build's CUDA "
        "provider was loaded), 'not enabled in this build', .NET's missing CUDA entry point, an application's own "
        "check, the CUDA provider library absent; only the CPU package installed",
        L.cpu_package_only,
    ),
    Rule(
        "cpu-and-gpu-installed",
        "both packages listed (pip list/freeze/show, Successfully installed); an "
        "application installing the CPU package beside the GPU one; the GPU dist holding the CPU build's files",
        L.cpu_and_gpu_installed,
    ),
    Rule(
        "plugin-beside-gpu-core",
        "onnxruntime-gpu installed beside a plugin EP that registers into the CPU core (the verify report)",
        None,
    ),
    Rule(
        "plugin-core-too-old",
        "the CPU core older than the plugin EP's minimum (the verify report, the matrix's EP row)",
        None,
    ),
    Rule(
        "package-files-missing",
        "onnxruntime's module lacking its API; RECORD files gone on the host",
        L.package_files_missing,
    ),
    Rule(
        "cuda-major-mismatch",
        "a missing library of another major than the one installed (CUDA or cuDNN); the "
        "build's required major (Require ..., its release in the matrix) vs the one stated installed; torch's other "
        "CUDA",
        L.cuda_major_mismatch,
    ),
    Rule(
        "cudnn-missing",
        "a cuDNN library missing (the file after 'Error:'/'depends on'); CUDNN_STATUS_* at init",
        L.cudnn_missing,
    ),
    Rule(
        "cuda-library-missing",
        "cuBLAS/cudart/cuFFT/cuRAND/NVRTC missing; Windows error 126 with no name",
        L.cuda_library_missing,
    ),
    Rule(
        "library-not-on-path",
        "a missing library whose NVIDIA wheel is listed; working only after preload_dlls()",
        L.library_not_on_path,
    ),
    Rule("loader-hook-failed", "ortprov's loader hook status in the verify report", None),
    Rule(
        "plugin-library-missing",
        "a library the plugin EP's provider links resolved by nothing (the verify report's closure; in a log: the "
        "load error of the EP's library, its name from the matrix's EP rows)",
        L.plugin_library_missing,
    ),
    Rule("plugin-register-failed", "register_execution_provider_library raised (the verify report)", None),
    Rule("plugin-no-device", "the plugin EP registered but get_ep_devices() has none for it (the verify report)", None),
    Rule(
        "msvc-runtime-missing",
        "vcruntime/msvcp missing; DLL initialisation failed (error 1114)",
        L.msvc_runtime_missing,
    ),
    Rule("zlibwapi-missing", "zlibwapi.dll missing (cuDNN 8 on Windows)", L.zlibwapi_missing),
    Rule(
        "tensorrt-missing",
        "libnvinfer/nvinfer missing; the TensorRT provider failing (a warning when the CUDA "
        "provider failed too, or the session went on with CUDA)",
        L.tensorrt_missing,
    ),
    Rule(
        "tensorrt-install-failed",
        "NVIDIA's placeholder stub could not fetch the real TensorRT wheel; a deprecated placeholder required "
        "(read from the log's text by doctor/tensorrt.py)",
        None,
    ),
    Rule(
        "tensorrt-major-mismatch",
        "libnvinfer.so.N missing beside a TensorRT of another major; verify's installed TensorRT vs the provider's "
        "(doctor/tensorrt.py)",
        None,
    ),
    Rule(
        "unsupported-gpu-arch",
        "no kernel image (CUDA error 209); cuBLAS failing first (status 14, 8); CUDA error "
        "100 or 35 with a GPU the build's CUDA does not support; the plan finding no build",
        L.unsupported_gpu_arch,
    ),
    Rule("gpu-provider-failed", "the CUDA provider failed and nothing more specific was found", L.gpu_provider_failed),
    Rule("known-broken-release", "the installed release and the host in matrices/known-issues.yaml", None),
    Rule(
        "gpu-out-of-memory",
        "out of memory: CUDA error 2, BFC arena, cuBLAS/cuDNN allocation failures",
        L.gpu_out_of_memory,
    ),
    Rule(
        "cuda-context-conflict",
        "invalid resource handle, pycuda.autoinit next to ONNX Runtime; pycuda/tensorrt installed on the host",
        L.cuda_context_conflict,
    ),
    Rule(
        "tensorrt-engine-cache-stale",
        "TensorRT refusing a cached engine of another version or GPU; verify's second session not reusing it "
        "(doctor/tensorrt.py)",
        None,
    ),
    Rule("cuda-library-twice", "two files of one CUDA library soname mapped into the verify child", None),
    Rule("verify-crashed", "the verify child died of a signal", None),
    Rule("verify-timeout", "the verify child hung", None),
    Rule(
        "gpu-results-differ",
        "the log says the GPU's results differ from the CPU's; verify's comparison",
        L.gpu_results_differ,
    ),
    Rule("verify-failed", "the verify child could not run its check", None),
    Rule(
        "gpu-slower-than-cpu",
        "the log says so, or its timings (also under a 'GPU'/'CPU' header) show it; verify's timings",
        L.gpu_slower_than_cpu,
    ),
    Rule(
        "fastest-gpu-changes-results",
        "a tune's measurements: the fastest GPU variant's outputs differ from the CPU's (tune/findings.py)",
        None,
    ),
    Rule("nodes-on-cpu", "'Some nodes were not assigned', Memcpy nodes", L.nodes_on_cpu),
)
RULE = {rule.code: rule for rule in RULES}


# --- a pasted log ------------------------------------------------------------------------------------------------


def decide_log(
    ev: LogEvidence, fixes: Fixes, matrix: Matrix | None = None, more: list[Finding] | None = None
) -> list[Finding]:
    """Findings from a log's facts (and `more`: those doctor/tensorrt.py read from its text), most important first;
    symptoms only where no cause is found."""
    case = Case(ev, fixes, matrix)
    found = [f for rule in RULES if rule.on_log is not None for f in rule.on_log(case)] + list(more or ())
    return rank(drop_generic(merge_findings(_plugin_lines_are_the_plugins(found))), case)


def _plugin_lines_are_the_plugins(found: list[Finding]) -> list[Finding]:
    """A plugin EP's load error is the plugin's (plugin-library-missing), not onnxruntime-gpu's CUDA library missing
    nor TensorRT missing (the TensorRT-RTX EP's library name holds "tensorrt")."""
    lines = {line for f in found if f.code == "plugin-library-missing" for line in f.evidence}
    if not lines:
        return found
    replaced = ("cuda-library-missing", "cudnn-missing", "tensorrt-missing", "library-not-on-path")
    return [f for f in found if not (f.code in replaced and set(f.evidence) & lines)]


# (cause, consequence): where both are found, the cause comes first whatever the codes' order
CAUSES = (
    ("nodes-on-cpu", "gpu-slower-than-cpu"),
    ("driver-library-mismatch", "no-driver"),  # a driver whose libraries differ from its module looks absent
    ("tensorrt-major-mismatch", "tensorrt-missing"),  # libnvinfer.so.N is missing because another major is there
)


def rank(findings: list[Finding], case: Case) -> list[Finding]:
    """Errors before warnings before info; root causes before consequences (findings.CODES' order, and CAUSES),
    except that a CPU-only verdict ranks after the other errors once the log proves the GPU build loaded its CUDA
    provider."""
    demoted = {"cpu-package-only"} if case.gpu_build else set()
    order: dict[str, float] = {code: i for i, code in enumerate(CODES)}
    present = {f.code for f in findings}
    for cause, consequence in CAUSES:
        if cause in present and consequence in present:
            order[cause] = order[consequence] - 0.5
    return sorted(
        findings, key=lambda f: (SEVERITIES.index(f.severity), f.code in demoted, order.get(f.code, len(CODES)))
    )


_SPECIFIC_LIBRARY = frozenset(
    {
        "cudnn-missing",
        "cuda-library-missing",
        "tensorrt-missing",
        "msvc-runtime-missing",
        "zlibwapi-missing",
        "cuda-major-mismatch",
        "library-not-on-path",
    }
)


def drop_generic(findings: list[Finding]) -> list[Finding]:
    """Keep symptoms (the provider failed; 'a DLL is missing' without a name) only when no cause was found."""
    causes = [
        f
        for f in findings
        if f.code != "gpu-provider-failed"
        and not (f.code == "cuda-library-missing" and f.library is None)
        and f.severity == "error"
    ]
    if not causes:
        return findings
    kept = []
    for finding in findings:
        if finding.code == "gpu-provider-failed":
            continue
        if (
            finding.code == "cuda-library-missing"
            and finding.library is None
            and any(f.code in _SPECIFIC_LIBRARY for f in causes)
        ):
            continue
        kept.append(finding)
    return kept


def log_fixes(python: str, evidence: LogEvidence, matrix: Matrix | None) -> Fixes:
    """The fixes' context for a log: its platform, and the NVIDIA wheels' names for the build's CUDA major."""
    case = Case(evidence, Fixes(python=python), matrix)
    packages: tuple[tuple[str, str], ...] = ()
    if matrix is not None and case.build_cuda is not None:
        record = cuda_major(matrix, case.build_cuda[0])
        packages = tuple(sorted((record.pip_packages or {}).items())) if record else ()
    return Fixes(python=python, windows=evidence.os == "windows", packages=packages)


def analyze_log(text: str, python: str = "python", matrix: Matrix | None = None) -> list[Finding]:
    """Findings a pasted log shows, most important first (empty when nothing is recognised). `matrix`: CUDA error
    numbers and messages, GPU compute capabilities, driver floors and builds (without it: names only)."""
    return read_log_text(text, python, matrix)[0]


_TRT_WORDS = ("tensorrt", "nvinfer", "trt", "engine", "pycuda")  # what doctor/tensorrt.py's patterns need in a line


def read_log_text(text: str, python: str = "python", matrix: Matrix | None = None) -> tuple[list[Finding], LogEvidence]:
    """(findings, the facts read): `analyze_log` with what it read, for "no known failure recognised"."""
    text, cut = bounded(text)
    lines = candidate_lines(text)  # the lines worth reading: every reader below reads only these
    logical = logical_lines(lines)
    evidence = read_lines(lines, matrix, cut, logical)
    fixes = log_fixes(python, evidence, matrix)
    from provisioner.doctor.tensorrt import log_findings  # TensorRT's evidence and rules, in their own module

    # TensorRT's reader reads the scanned lines as pasted, and those normalize.logical_lines changed (wrapped lines
    # joined, a timestamp's or a service's prefix removed) as the program printed them
    pasted = dict(lines)
    joined = [
        line.text
        for line in logical
        if line.last != line.first
        or (line.text != pasted[line.first].strip() and any(w in line.text.lower() for w in _TRT_WORDS))
    ]
    trt_text = candidate_text(lines) + ("\n\n" + "\n".join(joined) if joined else "")
    return decide_log(evidence, fixes, matrix, log_findings(trt_text, fixes, matrix)), evidence
