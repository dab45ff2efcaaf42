"""The rules: facts -> findings, one set for the live host (host.py) and for a pasted log (`decide_log`). Pure.

The fact rules (`driver_findings`, `package_findings`, `driver_vs_build`) take the host model's parts
(DriverInfo, RuntimeEnvironment, OrtDist) and are what both sources call: the same facts give the same code. A log
also shows what a probe never sees (a loader's error, a CUDA error number, timings); `decide_log` reasons over
those together with the facts, e.g. "CUDA failure 35" is an old driver only when nothing says otherwise: no
NVIDIA GPU named (an AMD or Intel one) means no driver, a container whose driver is new enough means the GPU was
not passed in. Knowledge is data: CUDA error numbers, GPU compute capabilities, driver floors and the CUDA each
onnxruntime-gpu release was built for come from the matrix.
"""

from __future__ import annotations

import re

from provisioner.doctor.evidence import LoadError, LogEvidence, bounded, read_evidence
from provisioner.doctor.fixes import Fixes
from provisioner.facts import DriverInfo, OrtDist, RuntimeEnvironment
from provisioner.findings import Finding, merge_findings
from provisioner.matrix.model import Matrix
from provisioner.matrix.query import builds_for, common_libraries, newest_cuda_for_driver
from provisioner.versions import major, vtuple

# --- fact rules: the host probe and the log reader both call these -----------------------------------------------


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
        return [
            Finding(
                "gpu-hidden",
                "error",
                f"this {environment.container} container sees no NVIDIA driver (no GPU access, or none on the host)",
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
        return [
            Finding(
                "cpu-package-only",
                "error",
                "only the CPU onnxruntime package is installed",
                listed,
                fixes.for_code("cpu-package-only"),
            )
        ]
    if cpu and gpu:
        return [
            Finding(
                "cpu-and-gpu-installed",
                "error",
                "the CPU and GPU onnxruntime packages are both installed (they share one folder)",
                listed,
                fixes.for_code("cpu-and-gpu-installed"),
            )
        ]
    return []


def driver_vs_build(
    gpu: OrtDist, driver_cuda: str, driver_version: str | None, fixes: Fixes, evidence: tuple[str, ...] = ()
) -> list[Finding]:
    """The driver's CUDA major is older than the one the installed build was made for."""
    build_major, driver_major = _major(gpu.cuda_version), _major(driver_cuda)
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


def _major(version: str | None) -> int | None:
    try:
        return major(str(version))
    except ValueError:
        return None


_NEEDS = re.compile(r"Require (cuDNN [\d.*]{1,8} and CUDA [\d.*]{1,8})")

# --- a pasted log ----------------------------------------------------------------------------------------------


def _f(
    code: str, title: str, lines: tuple[str, ...], fixes: Fixes, library: str | None = None, severity: str = "error"
) -> Finding:
    used = tuple(dict.fromkeys(x for x in lines if x))[:6]  # the lines it used, each once
    return Finding(code, severity, title, used, fixes.for_code(code, library), library)


def build_cuda_major(ev: LogEvidence, matrix: Matrix | None) -> tuple[int | None, str]:
    """The CUDA major the log's onnxruntime build needs, and the line that says it."""
    if ev.cuda_required:
        return int(ev.cuda_required[0].value), ev.cuda_required[0].line
    if matrix is None:
        return None, ""
    for dist in ev.onnxruntime:
        if dist.is_gpu:
            try:
                builds = [b for b in builds_for(matrix, f"=={dist.version}") if b.index_url is None]
            except ValueError:
                continue
            if builds:
                return builds[-1].cuda_major, dist.location or ""
    return None, ""


def _installed_cuda_majors(ev: LogEvidence) -> dict[int, str]:
    majors: dict[int, str] = {}
    for seen in ev.cuda_installed:
        if (value := _major(seen.value)) is not None and 9 <= value <= 20:
            majors.setdefault(value, seen.line)
    for seen in ev.distributions:
        name = seen.value.split(" ", 1)[0]
        if name.startswith("nvidia-") and "-cu" in name:
            majors.setdefault(int(name.rsplit("-cu", 1)[1]), seen.line)
    return majors


def _nvidia_gpu_named(ev: LogEvidence) -> bool:
    return bool(ev.gpus) or (ev.driver is not None and ev.driver.present and ev.driver.version is not None)


def _oldest_supported_cc(matrix: Matrix | None, cuda_major: int | None) -> tuple[str, ...] | None:
    """Compute capabilities the build's CUDA supports (its major's newest release; without a build, the newest
    CUDA the matrix has builds for)."""
    if matrix is None or not matrix.cuda_releases:
        return None
    if cuda_major is None and matrix.builds:
        cuda_major = max(b.cuda_major for b in matrix.builds)
    releases = [r for r in matrix.cuda_releases if cuda_major is None or _major(r.version) == cuda_major]
    if not releases:
        return None
    return max(releases, key=lambda r: vtuple(r.version)).compute_capabilities


def _library_rule(
    error: LoadError, ev: LogEvidence, fixes: Fixes, matrix: Matrix | None, installed: dict[int, str]
) -> list[Finding]:
    """A library the loader could not open -> which piece is missing, or why it was not found."""
    name, lower, line = error.filename, error.filename.lower(), error.line
    if lower.startswith(("vcruntime", "msvcp", "api-ms-win-crt")):
        return [_f("msvc-runtime-missing", f"{name} (Microsoft Visual C++ runtime) is missing", (line,), fixes)]
    if "providers_cuda" in lower:
        return [
            _f("cpu-package-only", f"{name} (the CUDA provider) is not there: a CPU-only onnxruntime", (line,), fixes)
        ]
    if lower.startswith(("libonnxruntime.so", "onnxruntime.dll")):
        return [_f("onnxruntime-not-installed", f"the ONNX Runtime library {name} is not found", (line,), fixes)]
    if "providers_shared" in lower:
        return [
            _f(
                "library-not-on-path",
                f"{name} (shipped next to the ONNX Runtime library) is not found by the loader",
                (line,),
                fixes,
            )
        ]
    family = error.family
    if family is None:
        return []
    listed = {s.value.split(" ", 1)[0]: s.line for s in ev.distributions}
    if family == "cuda":
        found = driver_findings(DriverInfo(False, source="log", error=line), ev.environment, fixes)
        return [Finding(f.code, f.severity, f.title, (line, *ev.environment_lines[:1]), f.fix) for f in found]
    if family == "zlibwapi":
        return [_f("zlibwapi-missing", "zlibwapi.dll (needed by older cuDNN on Windows) is missing", (line,), fixes)]
    if family in ("nvinfer", "nvonnxparser"):
        wheel = next((ln for n, ln in listed.items() if n.startswith("tensorrt")), None)
        if wheel:
            return [
                _f(
                    "library-not-on-path",
                    f"TensorRT is installed ({wheel}) but {name} is not found",
                    (line, wheel),
                    fixes,
                    "nvinfer",
                )
            ]
        return [_f("tensorrt-missing", f"TensorRT cannot be loaded ({name})", (line,), fixes, "nvinfer")]
    library = "cublas" if family == "cublasLt" else family
    same_major = common_libraries(matrix).get(library, False) if matrix is not None else library in ("cudart", "cublas")
    wheel_line = next(
        (
            ln
            for n, ln in listed.items()
            if n.startswith("nvidia-")
            and library.replace("cudart", "cuda-runtime") in n
            and (error.major is None or not same_major or n.endswith(f"-cu{error.major}"))
        ),
        None,
    )
    if error.major and same_major and installed and int(error.major) not in installed:
        have = ", ".join(str(m) for m in sorted(installed))
        return [
            _f(
                "cuda-major-mismatch",
                f"{name} (CUDA {error.major}) is needed, but the log shows CUDA {have} installed",
                (line, *installed.values()),
                fixes,
                library,
            )
        ]
    if wheel_line:
        return [
            _f(
                "library-not-on-path",
                f"{library} is installed as a pip wheel but the loader does not find {name} there",
                (line, wheel_line),
                fixes,
                library,
            )
        ]
    if library == "cudnn":
        return [_f("cudnn-missing", f"cuDNN cannot be loaded ({name})", (line,), fixes, "cudnn")]
    return [
        _f("cuda-library-missing", f"the CUDA library {name} ({library}) cannot be loaded", (line,), fixes, library)
    ]


def decide_log(ev: LogEvidence, fixes: Fixes, matrix: Matrix | None = None) -> list[Finding]:
    """Findings from a log's facts, most important first; symptoms only where no cause is found."""
    found: list[Finding] = []
    installed = _installed_cuda_majors(ev)
    build_major, build_line = build_cuda_major(ev, matrix)
    nvidia = _nvidia_gpu_named(ev)
    other = ev.other_gpus[0] if ev.other_gpus else None
    container = ev.environment.container
    errors = {s.value: s.line for s in reversed(ev.cuda_errors)}

    # platform: onnxruntime-gpu has wheels for Linux x86_64/aarch64 and Windows x64 only
    cpu_only = ev.signal("cpu-only-build")
    listed_lists = [s for s in ev.providers if "CUDA" not in s.value and "Tensorrt" not in s.value]
    if ev.providers and len(listed_lists) == len(ev.providers):
        cpu_only = cpu_only or listed_lists[0]
    no_wheel = ev.signal("no-wheel")
    if no_wheel:
        found.append(
            _f(
                "no-wheel-for-platform",
                "no onnxruntime-gpu wheel fits this platform or Python",
                ev.lines("no-wheel"),
                fixes,
            )
        )
    elif ev.os == "darwin" and (cpu_only or any(d.is_gpu for d in ev.onnxruntime)):
        found.append(
            _f(
                "no-wheel-for-platform",
                "onnxruntime-gpu has no macOS wheels (no CUDA on macOS)",
                ev.environment_lines,
                fixes,
            )
        )
    elif cpu_only and ev.jetson:
        found.append(
            _f(
                "no-wheel-for-platform",
                "PyPI's onnxruntime(-gpu) for Jetson (aarch64) has no CUDA provider: "
                "Jetson needs NVIDIA's Jetson Zoo wheels",
                (cpu_only.line,),
                fixes,
            )
        )

    # the driver
    if ev.driver is not None and ev.driver.error:
        found += driver_findings(ev.driver, ev.environment, fixes)
    for name in ("cudaErrorSystemDriverMismatch", "cudaErrorCompatNotSupportedOnDevice"):
        if name in errors:
            found.append(
                _f(
                    "driver-library-mismatch",
                    "the CUDA driver and its user-space libraries do not fit "
                    "together (CUDA forward compatibility or a mixed driver install)",
                    (errors[name],),
                    fixes,
                )
            )
    absent = ev.signal("driver-absent")
    if absent and not (ev.driver and ev.driver.version):
        found += [
            Finding(f.code, f.severity, f.title, (absent.line, *ev.environment_lines[:1]), f.fix)
            for f in driver_findings(DriverInfo(False, source="log", error=absent.line), ev.environment, fixes)
        ]
    if "cudaErrorInsufficientDriver" in errors:
        line = errors["cudaErrorInsufficientDriver"]
        driver_cuda = None
        if ev.driver and ev.driver.version and matrix is not None:
            release = newest_cuda_for_driver(matrix, ev.driver.version, windows=ev.os == "windows")
            driver_cuda = _major(release.version) if release else None
        if ev.driver and ev.driver.cuda_version:
            driver_cuda = _major(ev.driver.cuda_version)
        new_enough = driver_cuda is not None and (build_major is None or driver_cuda >= build_major)
        if other and not nvidia:
            found.append(
                _f(
                    "no-driver",
                    f"CUDA finds no NVIDIA driver: the log names {other.value}, no NVIDIA GPU",
                    (line, other.line),
                    fixes,
                )
            )
        elif container and (new_enough or driver_cuda is None) and not (ev.container_gpu_flags and not new_enough):
            found.append(
                _f(
                    "gpu-hidden",
                    f"CUDA in the {container} container reports an old driver although the "
                    "host's is new enough: the GPU (and its driver) was not passed into the container",
                    (line, ev.driver_line, *ev.environment_lines[:2]),
                    fixes,
                )
            )
        else:
            found.append(
                _f(
                    "driver-too-old",
                    "the NVIDIA driver is older than the CUDA runtime this build needs",
                    (line, ev.driver_line, build_line),
                    fixes,
                )
            )
    if "cudaErrorNoDevice" in errors:
        line = errors["cudaErrorNoDevice"]
        supported = _oldest_supported_cc(matrix, build_major)
        old = [g for g in ev.gpus if g.compute_capability and supported and g.compute_capability not in supported]
        if old:
            found.append(
                _f(
                    "unsupported-gpu-arch",
                    f"the {old[0].name} (compute capability "
                    f"{old[0].compute_capability}) is not supported by this build's CUDA",
                    (line, *ev.gpu_lines[:2]),
                    fixes,
                )
            )
        elif other and not nvidia:
            found.append(
                _f("no-driver", f"CUDA sees no NVIDIA GPU: the log names {other.value}", (line, other.line), fixes)
            )
        else:
            found.append(
                _f(
                    "gpu-hidden",
                    "CUDA sees no GPU (container without GPU access, or CUDA_VISIBLE_DEVICES)",
                    (line, *ev.environment_lines[:2]),
                    fixes,
                )
            )
    if "cudaErrorNoKernelImageForDevice" in errors:
        named_gpu = next((g for g in ev.gpus if g.compute_capability), None)
        found.append(
            _f(
                "unsupported-gpu-arch",
                f"the build has no GPU code for the {named_gpu.name} (compute capability "
                f"{named_gpu.compute_capability})"
                if named_gpu
                else "the build has no GPU code for this GPU's compute capability",
                (errors["cudaErrorNoKernelImageForDevice"], *ev.gpu_lines[:2]),
                fixes,
            )
        )
    if ev.signal("driver-old") and "cudaErrorInsufficientDriver" not in errors and not absent:
        found.append(
            _f(
                "driver-too-old",
                "the log says the NVIDIA driver is too old for this CUDA build",
                ev.lines("driver-old"),
                fixes,
            )
        )
    if ev.driver and ev.driver.cuda_version and build_major is not None:
        dist = OrtDist("onnxruntime-gpu", "?", cuda_version=f"{build_major}.0")
        if _major(ev.driver.cuda_version) is not None and _major(ev.driver.cuda_version) < build_major:  # type: ignore[operator]
            found += driver_vs_build(
                dist, ev.driver.cuda_version, ev.driver.version, fixes, (ev.driver_line, build_line)
            )

    # packages
    not_installed = ev.signal("not-installed")
    if not_installed:
        found.append(
            _f(
                "onnxruntime-not-installed",
                "onnxruntime is not installed where the program runs",
                ev.lines("not-installed"),
                fixes,
            )
        )
    both = package_findings(ev.onnxruntime, fixes, tuple(dict.fromkeys(d.location or "" for d in ev.onnxruntime)))
    found += [f for f in both if f.code == "cpu-and-gpu-installed" or not any(d.is_gpu for d in ev.onnxruntime)]
    if cpu_only and not any(f.code in ("cpu-and-gpu-installed", "no-wheel-for-platform") for f in found):
        found.append(
            _f(
                "cpu-package-only",
                "the onnxruntime in use has no CUDA provider (a CPU-only build)",
                (cpu_only.line,),
                fixes,
            )
        )
    if ev.signal("package-broken"):
        found.append(
            _f(
                "package-files-missing",
                "the onnxruntime package is broken (its module lacks its API): "
                "files are missing, typically after removing one of two flavours",
                ev.lines("package-broken"),
                fixes,
            )
        )

    # libraries
    named = False
    for error in ev.load_errors:
        hits = _library_rule(error, ev, fixes, matrix, installed)
        named = named or bool(hits)
        found += hits
    if named and other and not nvidia and not any(f.code in ("no-driver", "gpu-hidden") for f in found):
        # the CUDA libraries are missing because nothing of NVIDIA's is there: the only GPU named is AMD's / Intel's
        found.append(
            _f(
                "no-driver",
                f"the log names {other.value} and no NVIDIA GPU: CUDA needs an NVIDIA GPU and driver",
                (other.line, ev.load_errors[0].line),
                fixes,
            )
        )
    if ev.signal("dll-init-failed"):
        found.append(
            _f(
                "msvc-runtime-missing",
                "a DLL's initialisation failed (Windows error 1114): usually a missing "
                "or old Microsoft Visual C++ runtime",
                ev.lines("dll-init-failed"),
                fixes,
            )
        )
    if ev.signal("msvc-absent"):
        found.append(
            _f(
                "msvc-runtime-missing",
                "the Microsoft Visual C++ runtime is not installed",
                ev.lines("msvc-absent"),
                fixes,
            )
        )
    if ev.signal("module-not-found") and not named:
        lines = ev.lines("module-not-found")
        if ev.signal("tensorrt-provider-failed"):
            found.append(_f("tensorrt-missing", "a DLL the TensorRT provider depends on is missing", lines, fixes))
        elif build_major is not None and installed and build_major not in installed:
            found.append(
                _f(
                    "cuda-major-mismatch",
                    f"the build needs CUDA {build_major}; the log shows CUDA {', '.join(map(str, sorted(installed)))}",
                    (*lines, build_line, *installed.values()),
                    fixes,
                )
            )
        else:
            found.append(
                _f(
                    "cuda-library-missing",
                    "a DLL the CUDA provider depends on is missing (Windows error 126: "
                    "CUDA, cuDNN or the MSVC runtime)",
                    lines,
                    fixes,
                )
            )
    if ev.signal("torch-other-cuda"):
        found.append(
            _f(
                "cuda-major-mismatch",
                "the torch beside onnxruntime-gpu brings CUDA libraries of another major than the build's",
                ev.lines("torch-other-cuda"),
                fixes,
            )
        )
    if ev.signal("cudnn-status"):
        found.append(
            _f(
                "cudnn-missing",
                "cuDNN could not be initialised (missing, incomplete or mismatched)",
                ev.lines("cudnn-status"),
                fixes,
                "cudnn",
            )
        )
    if ev.signal("tensorrt-absent") or ev.signal("tensorrt-provider-failed"):
        found.append(
            _f(
                "tensorrt-missing",
                "TensorRT is not installed (or not found) for the TensorRT provider",
                ev.lines("tensorrt-absent") or ev.lines("tensorrt-provider-failed"),
                fixes,
                "nvinfer",
            )
        )

    # runtime symptoms
    if "cudaErrorMemoryAllocation" in errors or ev.signal("out-of-memory"):
        found.append(
            _f(
                "gpu-out-of-memory",
                "the GPU ran out of memory",
                ev.lines("out-of-memory") or (errors.get("cudaErrorMemoryAllocation", ""),),
                fixes,
            )
        )
    if "cudaErrorInvalidResourceHandle" in errors or ev.signal("context-conflict"):
        found.append(
            _f(
                "cuda-context-conflict",
                "CUDA context conflict: TensorRT/pycuda and ONNX Runtime share one process without managing contexts",
                ev.lines("context-conflict") or (errors.get("cudaErrorInvalidResourceHandle", ""),),
                fixes,
            )
        )
    if ev.signal("results-differ"):
        found.append(
            _f("gpu-results-differ", "the GPU's results differ from the CPU's", ev.lines("results-differ"), fixes)
        )
    slower = _slower(ev)
    if slower:
        found.append(
            _f(
                "gpu-slower-than-cpu",
                "the GPU is slower than the CPU (host/device copies or tiny work)",
                slower,
                fixes,
                severity="warning",
            )
        )
    if ev.signal("nodes-on-cpu") or ev.signal("memcpy"):
        found.append(
            _f(
                "nodes-on-cpu",
                "some nodes run on the CPU although a GPU provider was requested",
                ev.lines("nodes-on-cpu") + ev.lines("memcpy"),
                fixes,
                severity="info",
            )
        )
    if ev.signal("provider-failed"):
        said = next((m for s in ev.cuda_required if (m := _NEEDS.search(s.line))), None)
        need = f" (it needs {said.group(1)})" if said else (f" (it needs CUDA {build_major})" if build_major else "")
        found.append(
            _f(
                "gpu-provider-failed",
                f"the CUDA execution provider could not be created; ONNX Runtime fell back to the CPU{need}",
                ev.lines("provider-failed"),
                fixes,
            )
        )
    return drop_generic(merge_findings(found))


def _slower(ev: LogEvidence) -> tuple[str, ...]:
    """Lines showing the GPU slower than the CPU: said in words, or timings where the GPU's is the larger."""
    if ev.signal("gpu-faster"):
        return ()
    said = ev.lines("gpu-slower")
    gpu = [t for t in ev.timings if t.device == "gpu"]
    cpu = [t for t in ev.timings if t.device == "cpu"]
    if any(re.search(r"onnxruntime[-_]gpu", t.line, re.I) for t in gpu):  # the two packages timed side by side
        cpu += [t for t in ev.timings if t.device == "package"]
    if gpu and cpu and min(t.seconds for t in gpu) > min(t.seconds for t in cpu):
        return tuple(dict.fromkeys((*said, gpu[0].line, cpu[0].line)))
    if said and not (gpu and cpu):
        return said
    return ()


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


def analyze_log(text: str, python: str = "python", matrix: Matrix | None = None) -> list[Finding]:
    """Findings a pasted log shows, most important first (empty when nothing is recognised). `matrix`: CUDA error
    numbers and messages, GPU compute capabilities, driver floors and builds (without it: names only)."""
    text, cut = bounded(text)
    evidence = read_evidence(text, matrix, cut)
    fixes = Fixes(python=python, windows=evidence.os == "windows")
    from provisioner.doctor.tensorrt import log_findings  # TensorRT's evidence and rules, in their own module

    return drop_generic(merge_findings(decide_log(evidence, fixes, matrix) + log_findings(text, fixes, matrix)))
