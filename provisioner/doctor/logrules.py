"""One rule per finding code for a pasted log: each decides its code from all the evidence that can show it. Pure.

Every rule takes a `Case` (the log's facts, what follows from them, the matrix) and returns its findings (usually
none or one). Rules reason from causes: a library the loader could not open is judged by which one is missing (the
file after `Error:`, after "depends on"), not by the library that needed it; a CUDA provider that was loaded proves
the GPU package; a major the build needs is compared with the one the log shows installed; CUDA error 35 is read
with what else the log says (no NVIDIA GPU, a container without the GPU, a GPU seen inside the container). The
registry (rules.RULES) lists them with the evidence each reads and its fix; rules.decide_log runs and ranks them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from provisioner.doctor import patterns as P
from provisioner.doctor.case import Case, version_major
from provisioner.doctor.factrules import HIDDEN_VALUES, package_findings
from provisioner.doctor.fixes import UNSET_PTX_JIT, gpu_code_fix
from provisioner.findings import Finding
from provisioner.matrix.query import newest_cuda_for_driver
from provisioner.versions import vtuple

if TYPE_CHECKING:
    from provisioner.doctor.evidence import LoadError, Seen
    from provisioner.facts import Gpu

_MSVC = ("vcruntime", "msvcp", "api-ms-win-crt")


# --- what several rules share: the missing libraries, the unnamed dependency, CUDA error 35 -------------------
def library_findings(c: Case) -> list[Finding]:
    """One finding per library file the loader could not open, by what is missing (see `_missing_library`)."""
    return [f for e in c.ev.load_errors if (f := _missing_library(c, e)) is not None]


def _missing_library(c: Case, e: LoadError) -> Finding | None:
    name, lower, line = e.filename, e.filename.lower(), e.line
    lines = (line,)
    if lower.startswith(_MSVC):
        return c.finding("msvc-runtime-missing", f"{name} (Microsoft Visual C++ runtime) is missing", lines)
    if "providers_cuda" in lower:
        if re.search(rf"[/\\]{re.escape(name)}", line):  # looked for at a path: the build's file is elsewhere
            title = f"{name} (the CUDA provider) is not where the program looks for it"
            return c.finding("library-not-on-path", title, lines)
        return c.finding("cpu-package-only", f"{name} (the CUDA provider) is not there: a CPU-only onnxruntime", lines)
    if "providers_tensorrt" in lower:
        return c.finding("tensorrt-missing", f"{name} (the TensorRT provider) is not there", lines, "nvinfer")
    if lower.startswith(("libonnxruntime.so", "onnxruntime.dll")):
        return c.finding("onnxruntime-not-installed", f"the ONNX Runtime library {name} is not found", lines)
    if "providers_shared" in lower:
        return c.finding(
            "library-not-on-path",
            f"{name} (shipped next to the ONNX Runtime library) is not found by the loader",
            lines,
        )
    if e.family is None:
        return None
    if e.family in ("cuda", "nvml"):  # the driver's own libraries
        if c.ev.environment.wsl:  # WSL's driver libraries live in /usr/lib/wsl/lib: there, just not on the path
            title = f"{name} (the Windows driver's CUDA library in WSL) is not on the loader's path (/usr/lib/wsl/lib)"
            return c.finding("library-not-on-path", title, lines, "cuda")
        found = _driver_absent(c, line)
        return found[0] if found else None
    if e.family == "zlibwapi":
        return c.finding("zlibwapi-missing", "zlibwapi.dll (needed by older cuDNN on Windows) is missing", lines)
    listed = {s.value.split(" ", 1)[0]: s.line for s in c.ev.distributions}
    if e.family in ("nvinfer", "nvonnxparser"):
        trt = [s for s in c.ev.distributions if s.value.startswith("tensorrt")]
        wheel = trt[0].line if trt else None
        if trt and e.major and all(version_major(s.value.split(" ", 1)[1]) != int(e.major) for s in trt):
            return None  # TensorRT of another major is installed: tensorrt.py's tensorrt-major-mismatch says so
        if wheel:
            title = f"TensorRT is installed ({wheel}) but {name} is not found"
            return c.finding("library-not-on-path", title, (*lines, wheel), "nvinfer")
        said = [s for s in c.ev.signals if s.value == f"tensorrt-{e.major}-said"] if e.major else []
        if said:  # "I'm using tensorrt 8.2.1.8": that major is installed, its library is not where the loader looks
            title = f"TensorRT {e.major} is installed (the log says so) but {name} is not found by the loader"
            return c.finding("library-not-on-path", title, (*lines, said[0].line), "nvinfer")
        return c.finding("tensorrt-missing", f"TensorRT cannot be loaded ({name})", lines, "nvinfer")
    library = "cublas" if e.family == "cublasLt" else e.family
    by = f" (needed by {e.needed_by})" if e.needed_by else ""
    on_disk = next((s for s in c.ev.files if s.value.lower() == name.lower()), None)
    if zlib := _cudnn8_part_there(c, name, line):
        return zlib
    if on_disk is not None:  # the log also shows the file on disk: installed, where the loader does not look
        title = f"{name}{by} is on disk (the log lists it), but not where the loader looks"
        return c.finding("library-not-on-path", title, (*lines, on_disk.line), library)
    mismatch = _wrong_major(c, e, library)
    stated = c.ev.cuda_required[0] if c.ev.cuda_required and not c.ev.cudnn_required else None
    needing = _cuda_majors_needing(c, e, library)
    if mismatch is None and stated and needing and int(stated.value) not in needing:
        # the package says it is built for CUDA 13 ("cuda-13", "onnxruntime-gpu (CUDA 13.1)"), its provider asks for a
        # CUDA 12 library: the provider is another build than the package says
        title = f"{name}{by} is a CUDA {min(needing)} library, but the build is said to be for CUDA {stated.value}"
        return c.finding("cuda-major-mismatch", title, (*lines, stated.line), library)
    if mismatch:
        have, have_lines = mismatch
        title = f"{name}{by} is of another major than the {have} the log shows installed"
        return c.finding("cuda-major-mismatch", title, (*lines, *have_lines), library)
    wheel_line = next(
        (
            ln
            for n, ln in listed.items()
            if n.startswith("nvidia-")
            and library.replace("cudart", "cuda-runtime") in n
            and (not needing or "-cu" not in n or int(n.rsplit("-cu", 1)[1]) in needing)
        ),
        None,
    )
    if wheel_line:
        title = f"{library} is installed as a pip wheel but the loader does not find {name} there"
        return c.finding("library-not-on-path", title, (*lines, wheel_line), library)
    if library == "cudnn":
        return c.finding("cudnn-missing", f"cuDNN cannot be loaded: {name} is missing{by}", lines, "cudnn")
    return c.finding("cuda-library-missing", f"the CUDA library {name} ({library}) is missing{by}", lines, library)


def _cudnn8_part_there(c: Case, name: str, line: str) -> Finding | None:
    """zlibwapi-missing where a part of cuDNN 8 on Windows (cudnn_cnn_infer64_8.dll) fails to load although the log
    shows it there (listed on disk, or said to be): what the part loads is missing, zlibwapi.dll (cuDNN 8.3+)."""
    if not P.CUDNN8_WINDOWS_PART.match(name):
        return None
    on_disk = [s.line for s in c.ev.files if s.value.lower() == name.lower()]
    said = [s.line for s in c.ev.signals if s.value == "present-said" and name.lower() in s.line.lower()]
    if not (on_disk or said):
        return None
    title = f"{name} is there but cannot be loaded: cuDNN 8's parts need zlibwapi.dll on Windows"
    return c.finding("zlibwapi-missing", title, (line, (on_disk or said)[0]), "zlibwapi")


def _cuda_majors_needing(c: Case, e: LoadError, library: str) -> set[int]:
    needing = c.cuda_majors_needing(e)
    if not needing and e.major and library in ("cudart", "cublas", "nvrtc"):
        needing = {int(e.major)}  # these carry the CUDA major in their name (CUDA 10 and older too)
    return needing


def _wrong_major(c: Case, e: LoadError, library: str) -> tuple[str, tuple[str, ...]] | None:
    """(what is installed instead, its lines) when the file's major is not among the installed majors."""
    if e.major is None:
        return None
    if library == "cudnn":
        # cuDNN needs no other CUDA: a build needing a newer cuDNN than installed lacks cuDNN (install it); one
        # needing an older cuDNN than installed has the wrong major (another build fits)
        have = c.installed_cudnn
        if have and int(e.major) not in have and int(e.major) < max(have):
            return f"cuDNN {', '.join(map(str, sorted(have)))}", tuple(have.values())
        return None
    needing = _cuda_majors_needing(c, e, library)
    have = c.installed_cuda
    if needing and have and not needing & set(have):
        return f"CUDA {', '.join(map(str, sorted(have)))}", tuple(have.values())
    return None


def unnamed_dependency(c: Case) -> Finding | None:
    """The CUDA provider failed for a dependency the log does not name (Windows error 126 on
    onnxruntime_providers_cuda.dll, "CUDA_PATH is set but CUDA wasn't able to be loaded", a bare "Failed to create
    CUDAExecutionProvider"): a major the build needs that the log shows another of, else a missing library
    (Windows 126) or only the failed provider."""
    ev = c.ev
    if ev.load_errors:
        return None
    loading = [s for s in ev.loading if "providers_tensorrt" not in s.value.lower()]
    module = ev.signal("module-not-found")
    if module and not loading and ev.loading:
        return None  # only the TensorRT provider's DLL failed: its own rule says so
    cudnn = [s for s in loading if s.value.lower().startswith(("cudnn", "libcudnn"))]
    if cudnn and (zlib := _cudnn8_part_there(c, cudnn[0].value, cudnn[0].line)):
        return zlib
    if cudnn:  # a cuDNN library failed to load: cuDNN (or its part) is missing
        return c.finding("cudnn-missing", f"cuDNN cannot be loaded ({cudnn[0].value})", (cudnn[0].line,), "cudnn")
    if not (module or c.cuda_provider_failed):
        return None
    lines = ev.lines("module-not-found") + tuple(s.line for s in loading) + ev.lines("provider-failed")
    if mismatch := build_mismatch(c):
        title, used = mismatch
        return c.finding("cuda-major-mismatch", title, (*lines[:2], *used))
    if older := older_cudnn(c):
        title, used = older
        return c.finding("cudnn-missing", title, (*lines[:2], *used), "cudnn")
    if newer := newer_driver_cuda(c):
        title, used = newer
        return c.finding("cuda-major-mismatch", title, (*lines[:2], *used))
    if ev.signal("msvc-absent"):
        return None  # the dependency is the MSVC runtime: its own rule says so
    if said := ev.signal("cudnn-absent-said"):
        title = "the CUDA provider cannot load its dependencies, and the log says cuDNN is not installed"
        return c.finding("cudnn-missing", title, (*lines[:2], said.line), "cudnn")
    if said := ev.signal("cuda-absent-said"):
        title = "the CUDA provider cannot load its dependencies, and the log says the CUDA toolkit is not installed"
        return c.finding("cuda-library-missing", title, (*lines[:2], said.line))
    if module:
        title = "a DLL the CUDA provider depends on is missing (Windows error 126: CUDA, cuDNN or the MSVC runtime)"
        return c.finding("cuda-library-missing", f"{title}; {unnamed_candidates(c)}", lines)
    if cuda_path_not_loaded(c):
        # onnxruntime_pybind_state.cc throws it exactly when the provider's library did not load (its
        # TryGetProviderInfo_CUDA returned nothing) and CUDA_PATH is set: a DLL it links is not found
        title = (
            "the CUDA provider's DLL could not be loaded (\"CUDA_PATH is set but CUDA wasn't able to be loaded\"): a "
            "CUDA or cuDNN DLL it links is not found"
        )
        return c.finding("cuda-library-missing", f"{title}; {unnamed_candidates(c)}", lines)
    return None


def unnamed_candidates(c: Case) -> str:
    """For a failure that names no library: the real candidates, ranked by what else the log shows (the build's CUDA
    and cuDNN majors, the ones shown installed, the platform), and the command that tells them apart."""
    build, have, cudnn, need_cudnn = c.build_cuda, c.installed_cuda, c.installed_cudnn, c.build_cudnn
    cudnn_name = f"cuDNN {need_cudnn[0]}" if need_cudnn else "cuDNN"
    cudnn_there = bool(cudnn) and (need_cudnn is None or need_cudnn[0] in cudnn)
    shown = "/".join(map(str, sorted(have)))
    if build and build[0] in have:
        ranked = [f"{cudnn_name} missing (CUDA {build[0]} is shown installed)"] if not cudnn_there else []
        ranked.append(f"a CUDA {build[0]} or cuDNN library off the loader's path")
    elif build and have:
        ranked = [f"the build's CUDA {build[0]} against the CUDA {shown} installed", f"{cudnn_name} missing"]
    elif build:
        ranked = [f"CUDA {build[0]}'s libraries missing", f"{cudnn_name} missing", "a library off the loader's path"]
    elif have:
        ranked = [f"a build for another CUDA major than the {shown} installed", f"{cudnn_name} missing"]
        ranked.append("a library off the loader's path")
    else:
        ranked = ["cuDNN missing", "a CUDA library missing", "a build for another CUDA major than the one installed"]
    if c.ev.os == "windows":
        ranked.append("the Visual C++ runtime")
    order = ", then ".join(ranked)
    return f"the log names no library; from what it shows, most likely {order} (`ortprov verify --static` decides)"


def cuda_path_not_loaded(c: Case) -> bool:
    """Windows' "CUDA_PATH is set but CUDA wasn't able to be loaded" is in the log."""
    return any(
        "CUDA_PATH is set" in s.line or "CUDA路径已设置" in s.line for s in c.ev.signals if s.value == "provider-failed"
    )


def build_mismatch(c: Case) -> tuple[str, tuple[str, ...]] | None:
    """(title, lines) when the build needs a CUDA or cuDNN major the log shows another of installed."""
    build, have = c.build_cuda, c.installed_cuda
    if build and have and build[0] not in have:
        shown = ", ".join(map(str, sorted(have)))
        return f"{c.build_needs}; the log shows CUDA {shown} installed", (build[1], *have.values())
    build, have = c.build_cudnn, c.installed_cudnn
    if build and have and build[0] not in have and build[0] < max(have):
        shown = ", ".join(map(str, sorted(have)))
        return f"the build needs cuDNN {build[0]}; the log shows cuDNN {shown} installed", (build[1], *have.values())
    return None


def newer_driver_cuda(c: Case) -> tuple[str, tuple[str, ...]] | None:
    """(title, lines) when the only CUDA the log shows is the driver's (nvidia-smi's "CUDA Version"), of a newer
    major than the build needs: the CUDA installed is that newer one, the build's major is not there."""
    build, driver = c.build_cuda, c.ev.driver
    if build is None or c.installed_cuda or driver is None or not driver.cuda_version:
        return None
    have = version_major(driver.cuda_version)
    if have is None or have <= build[0]:
        return None
    title = (
        f"{c.build_needs}; the only CUDA the log shows is the driver's {driver.cuda_version} "
        f"(nvidia-smi): the CUDA {build[0]} libraries are not there"
    )
    return title, (build[1], c.ev.driver_line)


def older_cudnn(c: Case) -> tuple[str, tuple[str, ...]] | None:
    """(title, lines) when the build needs a newer cuDNN major than the log shows installed: cuDNN is missing."""
    build, have = c.build_cudnn, c.installed_cudnn
    if build and have and build[0] not in have and build[0] > max(have):
        shown = ", ".join(map(str, sorted(have)))
        title = f"the build needs cuDNN {build[0]}; the log shows only cuDNN {shown} installed"
        return title, (build[1], *have.values())
    return None


def _driver_absent(c: Case, line: str) -> list[Finding]:
    """No driver library: in a container the GPU was not passed in, else no driver is installed (also when the
    container toolkit itself, on the host, finds no driver)."""
    ev = c.ev
    env = ev.environment_lines[:1]
    if ev.environment.container and not (toolkit := ev.signal("container-toolkit")):
        title = f"this {ev.environment.container} container sees no NVIDIA driver (no GPU access, or none on the host)"
        return [c.finding("gpu-hidden", title, (line, *env))]
    if ev.environment.container and toolkit:
        title = "the NVIDIA container toolkit finds no NVIDIA driver on the host"
        return [c.finding("no-driver", title, (line, toolkit.line))]
    return [c.finding("no-driver", "no NVIDIA driver is loaded", (line, *env))]


def insufficient_driver(c: Case) -> tuple[str, str, tuple[str, ...]] | None:
    """(code, title, lines) for CUDA error 35 ("driver version is insufficient for CUDA runtime version"), read with
    what else the log says: no NVIDIA GPU at all is no driver; in a container, a GPU seen inside means the driver is
    too old (or the GPU too new for the image's CUDA), a new enough host driver without one means the GPU was not
    passed in; elsewhere the driver is older than the build's CUDA."""
    line = c.errors.get("cudaErrorInsufficientDriver")
    if line is None:
        return None
    ev = c.ev
    other = ev.other_gpus[0] if ev.other_gpus else None
    if other and not c.nvidia_named:
        return (
            "no-driver",
            f"CUDA finds no NVIDIA driver: the log names {other.value}, no NVIDIA GPU",
            (line, other.line),
        )
    absent = ev.signal("driver-absent")
    if absent and not c.nvidia_named:
        return "no-driver", "CUDA finds no NVIDIA driver, and the log says there is no NVIDIA GPU", (line, absent.line)
    driver_cuda = _driver_cuda(c)
    build = c.build_cuda[0] if c.build_cuda else None
    new_enough = driver_cuda is not None and (build is None or driver_cuda >= build)
    container = ev.environment.container
    inside = ev.signal("gpu-in-container")
    if (
        container
        and not inside
        and (new_enough or driver_cuda is None)
        and not (ev.container_gpu_flags and not new_enough)
    ):
        title = (
            f"CUDA in the {container} container reports an old driver although the host's is new enough: the GPU "
            "(and its driver) was not passed into the container"
        )
        return "gpu-hidden", title, (line, ev.driver_line, *ev.environment_lines[:2])
    too_new = _gpu_too_new(c)
    if inside and too_new:
        gpu, newest = too_new
        title = (
            f"the GPU is passed into the container, but the {gpu.name} (compute capability {gpu.compute_capability}) "
            f"is newer than the image's CUDA supports (up to {newest})"
        )
        return "unsupported-gpu-arch", title, (line, inside.line, *ev.gpu_lines[:1])
    where = " (the GPU is seen inside the container)" if inside else ""
    title = f"the NVIDIA driver is older than the CUDA runtime this build needs{where}"
    return (
        "driver-too-old",
        title,
        (line, inside.line if inside else "", ev.driver_line, *(c.build_cuda or ("", ""))[1:]),
    )


def _driver_cuda(c: Case) -> int | None:
    """The newest CUDA major the log's driver supports (nvidia-smi's "CUDA Version", else the matrix's floors)."""
    driver = c.ev.driver
    if driver is None:
        return None
    if driver.cuda_version:
        return version_major(driver.cuda_version)
    if driver.version and c.matrix is not None:
        release = newest_cuda_for_driver(c.matrix, driver.version, windows=c.ev.os == "windows")
        return version_major(release.version) if release else None
    return None


def _supported_cc(c: Case, cuda_major: int | None) -> tuple[str, ...] | None:
    """Compute capabilities the build's CUDA supports (its major's newest release; without a build, the newest
    CUDA the matrix has builds for)."""
    matrix = c.matrix
    if matrix is None or not matrix.cuda_releases:
        return None
    if cuda_major is None and matrix.builds:
        cuda_major = max(b.cuda_major for b in matrix.builds)
    releases = [r for r in matrix.cuda_releases if cuda_major is None or version_major(r.version) == cuda_major]
    if not releases:
        return None
    return max(releases, key=lambda r: vtuple(r.version)).compute_capabilities or None


def _gpu_too_new(c: Case) -> tuple[Gpu, str] | None:
    supported = _supported_cc(c, c.build_cuda[0] if c.build_cuda else None)
    if not supported:
        return None
    newest = max(supported, key=vtuple)
    for gpu in c.ev.gpus:
        if gpu.compute_capability and vtuple(gpu.compute_capability) > vtuple(newest):
            return gpu, newest
    return None


def arch_fix(c: Case) -> str | None:
    """unsupported-gpu-arch's fix where the log names the GPU: the newest build whose wheels hold code for its
    compute capability (fixes.gpu_code_fix, from the wheels' facts in the matrix)."""
    gpu = next((g for g in c.ev.gpus if g.compute_capability), None)
    if gpu is None or gpu.compute_capability is None or c.matrix is None:
        return None
    platform = "windows-amd64" if c.ev.os == "windows" else f"linux-{c.ev.arch or 'x86_64'}"
    return gpu_code_fix(c.matrix, gpu.compute_capability, platform, c.fixes.python)


# --- the rules, one per code ----------------------------------------------------------------------------------
def no_wheel_for_platform(c: Case) -> list[Finding]:
    ev = c.ev
    if ev.signal("no-wheel"):
        bits = " (a 32-bit Python: onnxruntime-gpu has 64-bit wheels only)" if ev.signal("python-32bit") else ""
        title = f"no onnxruntime-gpu wheel fits this platform or Python{bits}"
        return [c.finding("no-wheel-for-platform", title, ev.lines("no-wheel") + ev.lines("python-32bit"))]
    cpu_only = c_cpu_only(c)
    if ev.os == "darwin" and (cpu_only or c.gpu_build or any(d.is_gpu for d in ev.onnxruntime)):
        title = "onnxruntime-gpu has no macOS wheels (no CUDA on macOS)"
        return [c.finding("no-wheel-for-platform", title, ev.environment_lines or ev.lines("cpu-only-build"))]
    python = ev.python_version or ev.signal("python")  # PyPI's wheels: a C, Go or Rust caller brings its own library
    if (
        cpu_only
        and ev.jetson
        and python
        and not c.gpu_build
        and not (ev.signal("autoupdate-cpu") and _gpu_package_named(c))
    ):
        title = (
            "PyPI's onnxruntime(-gpu) for Jetson (aarch64) has no CUDA provider: Jetson needs NVIDIA's Jetson Zoo "
            "wheels"
        )
        return [c.finding("no-wheel-for-platform", title, (cpu_only.line,))]
    tried = ev.signal("gpu-installed") or ev.signal("gpu-package-named")
    if ev.jetson and tried and (failed := ev.signal("install-failed-said")) and not c.gpu_build:
        title = "PyPI has no onnxruntime-gpu wheel with CUDA for Jetson: it needs NVIDIA's Jetson Zoo wheels"
        return [c.finding("no-wheel-for-platform", title, (tried.line, failed.line))]
    return []


def _shared_folder_removed(c: Case) -> Seen | None:
    """The CPU package uninstalled while the GPU one is there: both share the onnxruntime/ folder, and removing one
    takes it away (onnxruntime is then missing or broken: files of the GPU package are missing)."""
    removed = c.ev.signal("cpu-uninstalled")
    return removed if removed and _gpu_package_named(c) else None


def onnxruntime_not_installed(c: Case) -> list[Finding]:
    found = [f for f in library_findings(c) if f.code == "onnxruntime-not-installed"]
    if c.ev.signal("not-installed") and not _shared_folder_removed(c):
        title = "onnxruntime is not installed where the program runs"
        found.append(c.finding("onnxruntime-not-installed", title, c.ev.lines("not-installed")))
    return found


def driver_library_mismatch(c: Case) -> list[Finding]:
    ev = c.ev
    found = []
    if ev.driver is not None and ev.driver.error and "mismatch" in ev.driver.error.lower():
        found.append(
            c.finding(
                "driver-library-mismatch", "the NVIDIA kernel driver and its libraries differ", (ev.driver.error,)
            )
        )
    if "cudaErrorSystemDriverMismatch" in c.errors:
        title = "the CUDA driver and its user-space libraries do not fit together (a mixed driver install)"
        found.append(c.finding("driver-library-mismatch", title, (c.errors["cudaErrorSystemDriverMismatch"],)))
    hidden = ev.environment.container and ev.signal("driver-absent")  # no driver inside: the GPU was not passed in
    gpu_words = ev.gpus or ev.driver or c.errors or ev.signal("provider-failed") or ev.signal("cuda-call-error")
    if (rebooted := ev.signal("reboot-fixed")) and gpu_words:
        title = "rebooting fixed it (the log says so): the driver's kernel module and libraries differed until then"
        found.append(c.finding("driver-library-mismatch", title, (rebooted.line,)))
    if said := ev.signal("fixed-by-driver-reinstall"):
        title = "reinstalling the NVIDIA driver fixed it (the log says so): its parts did not fit together"
        found.append(c.finding("driver-library-mismatch", title, (said.line,)))
    if (symbol := _init_symbol_missing(c)) and not ev.environment.container:
        title = (
            "the CUDA driver library lacks what the CUDA runtime needs at its first call (error 500): a driver library "
            "of another version is loaded (a mixed or partial driver install)"
        )
        found.append(c.finding("driver-library-mismatch", title, (symbol,)))
    if "cudaErrorUnknown" in c.errors and not _container_lost_gpu(c) and not hidden:
        title = (
            "CUDA fails with an unknown error (999): the driver is in a broken state (its kernel module and libraries "
            "out of step after an update, or the GPU after a suspend)"
        )
        found.append(c.finding("driver-library-mismatch", title, (c.errors["cudaErrorUnknown"],)))
    return found


def no_driver(c: Case) -> list[Finding]:
    ev = c.ev
    found = [f for f in library_findings(c) if f.code == "no-driver"]
    absent = ev.signal("driver-absent")
    if absent and not (ev.driver and ev.driver.version):
        found += [f for f in _driver_absent(c, absent.line) if f.code == "no-driver"]
    if said := ev.signal("fixed-by-driver-install"):
        found.append(c.finding("no-driver", "installing the NVIDIA driver fixed it (the log says so)", (said.line,)))
    if (verdict := insufficient_driver(c)) and verdict[0] == "no-driver":
        found.append(c.finding("no-driver", verdict[1], verdict[2]))
    if "cudaErrorStubLibrary" in c.errors:
        # the CUDA toolkit's stub libcuda.so (for linking only) was loaded: no driver's libcuda on the loader's path
        title = "the CUDA toolkit's stub libcuda was loaded instead of the NVIDIA driver's (no driver found)"
        found.append(c.finding("no-driver", title, (c.errors["cudaErrorStubLibrary"],)))
    if "cudaErrorNoDevice" in c.errors and not _old_gpu(c) and ev.other_gpus and not c.nvidia_named:
        other = ev.other_gpus[0]
        title = f"CUDA sees no NVIDIA GPU: the log names {other.value}"
        found.append(c.finding("no-driver", title, (c.errors["cudaErrorNoDevice"], other.line)))
    named_libraries = [f for f in library_findings(c) if f.library or f.code != "no-driver"]
    if named_libraries and ev.other_gpus and not c.nvidia_named and not found:
        # the CUDA libraries are missing because nothing of NVIDIA's is there: the only GPU named is AMD's / Intel's
        other = ev.other_gpus[0]
        title = f"the log names {other.value} and no NVIDIA GPU: CUDA needs an NVIDIA GPU and driver"
        found.append(c.finding("no-driver", title, (other.line, ev.load_errors[0].line)))
    return found


def gpu_hidden(c: Case) -> list[Finding]:
    ev = c.ev
    found = [f for f in library_findings(c) if f.code == "gpu-hidden"]
    absent = ev.signal("driver-absent")
    if absent and not (ev.driver and ev.driver.version):
        found += [f for f in _driver_absent(c, absent.line) if f.code == "gpu-hidden"]
    if (verdict := insufficient_driver(c)) and verdict[0] == "gpu-hidden":
        found.append(c.finding("gpu-hidden", verdict[1], verdict[2]))
    if "cudaErrorNoDevice" in c.errors and not _old_gpu(c) and not (ev.other_gpus and not c.nvidia_named):
        title = "CUDA sees no GPU (container without GPU access, or CUDA_VISIBLE_DEVICES)"
        found.append(c.finding("gpu-hidden", title, (c.errors["cudaErrorNoDevice"], *ev.environment_lines[:2])))
    if (symbol := _init_symbol_missing(c)) and ev.environment.container:
        title = (
            f"the driver inside this {ev.environment.container} container lacks what the CUDA runtime needs at its "
            "first call (error 500): the GPU's driver libraries were not passed in whole (WSL2 with a newer Windows "
            "driver needs a newer NVIDIA container toolkit / Docker Desktop)"
        )
        found.append(c.finding("gpu-hidden", title, (symbol, *ev.environment_lines[:1])))
    if "cudaErrorOperatingSystem" in c.errors and ev.environment.container:
        title = f"CUDA may not use the device inside this {ev.environment.container} container (error 304)"
        found.append(c.finding("gpu-hidden", title, (c.errors["cudaErrorOperatingSystem"], *ev.environment_lines[:1])))
    if not_passed := ev.signal("gpu-not-passed"):
        title = "the container was started without the GPU (the log says so)"
        found.append(c.finding("gpu-hidden", title, (not_passed.line, *ev.environment_lines[:1])))
    if invalid := ev.signal("device-invalid"):
        title = "the GPU device asked for does not exist for this process (no GPU is visible to it)"
        found.append(c.finding("gpu-hidden", title, (invalid.line, *ev.environment_lines[:1])))
    failing = c.errors or ev.signal("cuda-call-error") or ev.signal("provider-failed")
    if ev.environment.container and (torch := ev.signal("torch-no-cuda")) and failing:
        title = f"CUDA sees no GPU inside this {ev.environment.container} container (torch too): no GPU was passed in"
        found.append(c.finding("gpu-hidden", title, (torch.line, *ev.environment_lines[:1])))
    if runtime := ev.signal("no-gpu-runtime"):
        title = "docker has no GPU runtime: the NVIDIA container toolkit is not installed or not configured on the host"
        found.append(c.finding("gpu-hidden", title, (runtime.line,)))
    if lost := _container_lost_gpu(c):
        title = (
            f"NVML fails with an unknown error inside the {ev.environment.container} container: the container has "
            "lost (or never had) access to the GPU's devices"
        )
        found.append(c.finding("gpu-hidden", title, (lost.line, *ev.environment_lines[:1])))
    env = ev.environment
    for name, value in (
        ("CUDA_VISIBLE_DEVICES", env.cuda_visible_devices),
        ("NVIDIA_VISIBLE_DEVICES", env.nvidia_visible_devices),
    ):
        if value is not None and value.strip().lower() in HIDDEN_VALUES and (c.cuda_provider_failed or c.errors):
            found.append(c.finding("gpu-hidden", f"{name}={value} hides every GPU from CUDA", (f"{name}={value}",)))
    return found


def _init_symbol_missing(c: Case) -> str | None:
    """The line of CUDA error 500 (named symbol not found) at the runtime's first calls (device count, set device):
    the driver library loaded lacks a symbol the runtime needs (a driver of another version, or an incomplete one)."""
    said = c.ev.signal("driver-symbol-missing")
    return said.line if said else None


def _container_lost_gpu(c: Case) -> Seen | None:
    """ "Failed to initialize NVML: Unknown Error" in a container (its device access lost, e.g. after the host's
    systemd reloaded its cgroups)."""
    return c.ev.signal("nvml-unknown") if c.ev.environment.container else None


def driver_too_old(c: Case) -> list[Finding]:
    ev = c.ev
    found = []
    verdict = insufficient_driver(c)
    if verdict and verdict[0] == "driver-too-old":
        found.append(c.finding("driver-too-old", verdict[1], verdict[2]))
    if ev.signal("driver-old") and verdict is None and not ev.signal("driver-absent"):
        title = "the log says the NVIDIA driver is too old for this CUDA build"
        found.append(c.finding("driver-too-old", title, ev.lines("driver-old")))
    matrix_cuda = _driver_cuda(c) if ev.driver and not ev.driver.cuda_version else None
    if matrix_cuda is not None and c.build_cuda and matrix_cuda < c.build_cuda[0] and verdict is None:
        version = ev.driver.version if ev.driver else ""
        title = f"the driver {version} supports CUDA {matrix_cuda} at most; {c.build_needs}"
        found.append(c.finding("driver-too-old", title, (ev.driver_line, c.build_cuda[1])))
    if "cudaErrorUnsupportedPtxVersion" in c.errors:
        title = (
            "the driver cannot JIT-compile the library's PTX (CUDA error 222): the PTX was made by a newer CUDA than "
            "the driver supports"
        )
        found.append(c.finding("driver-too-old", title, (c.errors["cudaErrorUnsupportedPtxVersion"], ev.driver_line)))
    if "cudaErrorCompatNotSupportedOnDevice" in c.errors:
        # CUDA tries forward compatibility (an image's newer libcuda over the host's kernel driver) only when the
        # driver is older than the runtime, and only datacenter GPUs accept it
        title = (
            "the host's NVIDIA driver is older than the CUDA runtime (error 804: forward compatibility was tried, "
            "which this GPU does not support): a newer host driver, or an image of an older CUDA"
        )
        found.append(c.finding("driver-too-old", title, (c.errors["cudaErrorCompatNotSupportedOnDevice"],)))
    if "cudaErrorCallRequiresNewerDriver" in c.errors:
        title = "the CUDA runtime calls a function the installed driver lacks (CUDA error 36): the driver is older"
        found.append(c.finding("driver-too-old", title, (c.errors["cudaErrorCallRequiresNewerDriver"], ev.driver_line)))
    driver_says = ev.driver.cuda_version if ev.driver else None
    driver_cuda = version_major(driver_says) if driver_says else None
    if driver_cuda is not None and c.build_cuda and driver_cuda < c.build_cuda[0]:
        title = f"the driver supports CUDA {driver_says}; {c.build_needs}"
        found.append(c.finding("driver-too-old", title, (ev.driver_line, c.build_cuda[1])))
    return found


def c_cpu_only(c: Case) -> Seen | None:
    """A line showing that the onnxruntime in use has no CUDA provider: said so, or every provider list printed
    lacks it. A bare list (`['CPUExecutionProvider']`) after the GPU build tried to load CUDA is the session's
    providers after a fallback, not the build's."""
    ev = c.ev
    if said := ev.signal("cpu-only-build"):
        return said
    lists = [s for s in ev.providers if "CUDA" not in s.value and "Tensorrt" not in s.value]
    if not ev.providers or len(lists) != len(ev.providers):
        return _weak_cpu_only(c) if not ev.providers else None
    explicit = [s for s in lists if P.AVAILABLE.search(s.line)]
    if c.gpu_build and not explicit:
        return None
    return (explicit or lists)[0]


def _weak_cpu_only(c: Case) -> Seen | None:
    """With no list of the available providers printed, unless the GPU build is shown (failing or named): an
    application saying the CUDA provider is not available and falling back to the CPU (its check of the available
    providers found none), or sessions that all run on the CPU alone with no failure of the CUDA provider shown
    (applications such as insightface ask for every available provider: a CPU build has only the CPU's)."""
    if c.gpu_build or c.ev.providers or c.cuda_provider_failed or c.ev.signal("provider-name-unknown"):
        return None  # a provider asked for by a wrong name ("cuda") runs the session on the CPU whatever is installed
    if said := c.ev.signal("cuda-unavailable"):
        return said
    sessions = c.ev.session_providers
    cpu_alone = sessions and all(s.value.split(",") == ["CPU"] for s in sessions)
    return sessions[0] if cpu_alone and not _gpu_package_named(c) else None


def cpu_package_only(c: Case) -> list[Finding]:
    """A CPU-only build in use, unless both packages are installed (that is the cause, cpu-and-gpu-installed)."""
    if cpu_and_gpu_installed(c):
        return []
    found = [f for f in library_findings(c) if f.code == "cpu-package-only"]
    if not c.gpu_build:  # only the CPU package listed (pip list, freeze, show)
        listed = tuple(d.location or "" for d in c.ev.onnxruntime)
        found += [f for f in package_findings(c.ev.onnxruntime, c.fixes, listed) if f.code == "cpu-package-only"]
    cpu_only = c_cpu_only(c)
    if cpu_only and not (c.ev.signal("autoupdate-cpu") and _gpu_package_named(c)):
        title = "the onnxruntime in use has no CUDA provider (a CPU-only build)"
        found.append(c.finding("cpu-package-only", title, (cpu_only.line,)))
    elif (
        (installed := c.ev.signal("cpu-install-command") or c.ev.signal("cpu-installed-said"))
        and c.ev.signal("gpu-unused")
        and not _gpu_package_named(c)
    ):
        title = "the CPU onnxruntime package was installed (it has no CUDA provider), and the GPU is not used"
        found.append(c.finding("cpu-package-only", title, (installed.line, *c.ev.lines("gpu-unused")[:1])))
    elif (node := c.ev.signal("node-package")) and c.ev.signal("gpu-unused") and not c.cuda_provider_failed:
        title = (
            "onnxruntime-node runs on the CPU: its CUDA provider is part of the Linux x64 package only, and is used "
            "only when asked for (executionProviders: ['cuda'])"
        )
        found.append(c.finding("cpu-package-only", title, (node.line, *c.ev.lines("gpu-unused")[:1])))
    elif (
        (required := c.ev.signal("cpu-required") or c.ev.signal("cpu-row"))
        and c.ev.signal("gpu-unused")
        and not _gpu_package_named(c)
    ):
        title = "the project requires the CPU onnxruntime package (it has no CUDA provider), and the GPU is not used"
        found.append(c.finding("cpu-package-only", title, (required.line, *c.ev.lines("gpu-unused")[:1])))
    elif c.ev.signal("autoupdate-cpu") and not _gpu_package_named(c):
        title = "the application installed the CPU onnxruntime package (it has no CUDA provider)"
        found.append(c.finding("cpu-package-only", title, c.ev.lines("autoupdate-cpu")))
    return found


def _gpu_package_named(c: Case) -> bool:
    ev = c.ev
    return bool(c.gpu_build or any(d.is_gpu for d in ev.onnxruntime) or ev.signal("gpu-package-named"))


def cpu_and_gpu_installed(c: Case) -> list[Finding]:
    ev = c.ev
    listed = tuple(d.location or "" for d in ev.onnxruntime)
    found = [f for f in package_findings(ev.onnxruntime, c.fixes, listed) if f.code == "cpu-and-gpu-installed"]
    cpu_named = ev.signal("cpu-row") or ev.signal("cpu-removed-fixed")
    if cpu_named and _gpu_package_named(c):  # "onnxruntime" and "onnxruntime-gpu" rows; removing the CPU one fixed it
        title = "the CPU and GPU onnxruntime packages were installed together (they share one folder)"
        found.append(c.finding("cpu-and-gpu-installed", title, (cpu_named.line, *ev.lines("gpu-package-named")[:1])))
    elif removed := ev.signal("cpu-removed-fixed"):
        # removing the CPU package made the GPU work: a GPU package was there beside it (without one, no onnxruntime
        # would be left at all)
        title = "removing the CPU onnxruntime package fixed it: the GPU package was installed beside it (one folder)"
        found.append(c.finding("cpu-and-gpu-installed", title, (removed.line,)))
    if both := ev.signal("both-packages"):
        title = "the CPU and GPU onnxruntime packages are installed together (the log says so; they share one folder)"
        found.append(c.finding("cpu-and-gpu-installed", title, (both.line,)))
    stated = [s.value.split(" ", 1) + [s.line] for s in ev.ort_stated]
    # rows of a listing the user typed (a name and its version, alone on their line), not sentences ("with
    # onnxruntime gpu 1.2.0": the user's second run, in another environment)
    gpu_rows = [line for f, v, line in stated if f == "onnxruntime-gpu" and P.TYPED_ROW.fullmatch(line.strip(" -*"))]
    gpu_versions = bool(gpu_rows) or any(d.is_gpu for d in ev.onnxruntime)
    cpu_rows = [line for f, v, line in stated if f == "onnxruntime" and P.TYPED_ROW.fullmatch(line.strip(" -*"))]
    if gpu_versions and cpu_rows:  # "onnxruntime 1.2.0" listed beside "onnxruntime-gpu 1.2.0"
        title = "the CPU and GPU onnxruntime packages are both installed (the log lists both; they share one folder)"
        gpu_line = next((line for f, v, line in stated if f == "onnxruntime-gpu"), listed[0] if listed else "")
        found.append(c.finding("cpu-and-gpu-installed", title, (cpu_rows[0], gpu_line)))
    gpu_listed = next((d for d in ev.onnxruntime if d.is_gpu), None)
    gpu_installed = ev.signal("gpu-installed") or ev.signal("uninstall-both")
    cpu_only = c_cpu_only(c)
    if (gpu_listed or gpu_installed) and cpu_only and not c.gpu_build and not found and not ev.jetson:
        # onnxruntime-gpu's module always lists the CUDA provider (built in, whether CUDA loads or not): where it was
        # installed (listed, installed by the user's command, or said so), a list without it comes from the CPU
        # package's files, installed over the GPU one's in the same folder
        named = "Microsoft.ML.OnnxRuntime.Gpu" if gpu_installed and ".gpu" in gpu_installed.line.lower() else ""
        shown = (
            f"onnxruntime-gpu {gpu_listed.version} is installed"
            if gpu_listed
            else f"{named or 'onnxruntime-gpu'} was installed"
        )
        title = (
            f"{shown}, but the onnxruntime that runs has no CUDA provider (the GPU package always lists it): the CPU "
            "package's files replaced its own"
        )
        where = gpu_listed.location or "" if gpu_listed else gpu_installed.line if gpu_installed else ""
        if ev.os != "darwin":
            found.append(c.finding("cpu-and-gpu-installed", title, (where, cpu_only.line)))
    if ev.signal("autoupdate-cpu") and _gpu_package_named(c):
        title = "the CPU onnxruntime package was installed beside onnxruntime-gpu (their files share one folder)"
        found.append(
            c.finding("cpu-and-gpu-installed", title, ev.lines("autoupdate-cpu") + ev.lines("gpu-package-named")[:1])
        )
    return found


def package_files_missing(c: Case) -> list[Finding]:
    if (removed := _shared_folder_removed(c)) and (gone := c.ev.signal("not-installed")):
        title = (
            "onnxruntime is gone although onnxruntime-gpu is installed: removing the CPU package deleted the "
            "onnxruntime/ "
            "folder both packages share"
        )
        return [c.finding("package-files-missing", title, (removed.line, gone.line))]
    if not c.ev.signal("package-broken"):
        return []
    title = (
        "the onnxruntime package is broken (its module lacks its API): files are missing, typically after removing one "
        "of two flavours"
    )
    return [c.finding("package-files-missing", title, c.ev.lines("package-broken"))]


def cuda_major_mismatch(c: Case) -> list[Finding]:
    found = [f for f in library_findings(c) if f.code == "cuda-major-mismatch"]
    if (unnamed := unnamed_dependency(c)) is not None and unnamed.code == "cuda-major-mismatch":
        found.append(unnamed)
    unused = c.ev.signal("gpu-unused")
    if not found and unused and not c.ev.load_errors and (mismatch := build_mismatch(c)):
        # no failure line, but the GPU is not used and the build needs a major the log shows another of
        title, used = mismatch
        found.append(c.finding("cuda-major-mismatch", title, (unused.line, *used)))
    if not found and not c.ev.load_errors and (mismatch := said_build_mismatch(c)):
        found.append(c.finding("cuda-major-mismatch", *mismatch))
    if (fixed := fixed_by_other_major(c)) is not None:
        found.append(fixed)
    if said := c.ev.signal("fixed-by-other-build"):
        title = (
            "another onnxruntime build, one for the CUDA installed, fixed it (the log says so, in words): the build "
            "was made for another CUDA major"
        )
        found.append(c.finding("cuda-major-mismatch", title, (said.line, *c.installed_cuda.values())))
    if c.ev.signal("torch-other-cuda"):
        title = "the torch beside onnxruntime-gpu brings CUDA libraries of another major than the build's"
        found.append(c.finding("cuda-major-mismatch", title, c.ev.lines("torch-other-cuda")))
    return found


def said_build_mismatch(c: Case) -> tuple[str, tuple[str, ...]] | None:
    """(title, lines) when the user says in words which CUDA major the build is for ("this onnxruntime build uses
    cuda11"), no program or record of the release says otherwise, and the log shows another major installed."""
    said = c.ev.cuda_required_said
    if not said or c.ev.cuda_required or c.builds or (mismatch := build_mismatch(c)) is None:
        return None
    return mismatch


def fixed_by_other_major(c: Case) -> Finding | None:
    """Installing CUDA N fixed it while the log shows CUDA M (another major) installed: the build needed N, the CUDA
    there was of another major (not missing: the toolkit of the build's major was)."""
    if not c.ev.cuda_fixed:
        return None
    said = c.ev.cuda_fixed[0]
    major = int(said.value)
    other = {m: line for m, line in c.installed_cuda.items() if m != major}
    if not other:
        return None
    shown, line = min(other.items())
    title = (
        f"CUDA {major} fixed it (the log says so, in words) where CUDA {shown} was installed: the build "
        f"needs CUDA {major}, the CUDA there was of another major"
    )
    return c.finding("cuda-major-mismatch", title, (said.line, line))


def cudnn_missing(c: Case) -> list[Finding]:
    found = [f for f in library_findings(c) if f.code == "cudnn-missing"]
    if (unnamed := unnamed_dependency(c)) is not None and unnamed.code == "cudnn-missing":
        found.append(unnamed)
    if (fault := c.ev.signal("cudnn8-fault")) and (said := c.ev.signal("cudnn-absent-said")):
        title = "the program faulted inside cuDNN, and the log says cuDNN was not installed (properly)"
        found.append(c.finding("cudnn-missing", title, (fault.line, said.line), "cudnn"))
    if said := c.ev.signal("fixed-by-cudnn"):
        found.append(
            c.finding(
                "cudnn-missing", "installing cuDNN fixed it (the log says so): cuDNN was missing", (said.line,), "cudnn"
            )
        )
    # cuDNN failing at its start (the evidence leaves out failures for want of GPU memory)
    lines = c.ev.lines("cudnn-status") + c.ev.lines("cudnn-init-failed")
    if lines:
        title = "cuDNN could not be initialised (missing, incomplete or mismatched)"
        found.append(c.finding("cudnn-missing", title, lines, "cudnn"))
    return found


def cuda_library_missing(c: Case) -> list[Finding]:
    found = [f for f in library_findings(c) if f.code == "cuda-library-missing"]
    said_absent = c.ev.signal("cuda-absent-said")
    if said_absent and c.ev.signal("gpu-unused") and not c.ev.load_errors and not c.cuda_provider_failed:
        title = "the log says the CUDA toolkit is not installed, and the GPU is not used: CUDA's libraries are missing"
        found.append(c.finding("cuda-library-missing", title, (said_absent.line, *c.ev.lines("gpu-unused")[:1])))
    if said := c.ev.signal("fixed-by-cuda"):
        title = "installing the CUDA toolkit fixed it (the log says so): CUDA's libraries were missing"
        found.append(c.finding("cuda-library-missing", title, (said.line,)))
    if (unnamed := unnamed_dependency(c)) is not None and unnamed.code == "cuda-library-missing":
        found.append(unnamed)
    return found


_SYMBOL_FAMILY = {"cuda": "cudart", "cublaslt": "cublasLt"}


def undefined_symbol_finding(c: Case, line: str) -> Finding:
    """A library lacking a symbol of a CUDA library ("X: undefined symbol: nvrtcGetProgramLogSize"): X was built
    against another version of that library than the one it meets (or against one that is not linked): the pair."""
    hit = P.UNDEFINED_CUDA_SYMBOL.search(line)
    assert hit is not None  # the evidence read the line with the same pattern
    needing, family = hit.group(1), hit.group("family")
    family = _SYMBOL_FAMILY.get(family.lower(), family)
    title = (
        f"{needing} needs a symbol of {family} that the {family} library it meets does not have: the two are of "
        f"different versions (or {family} is not linked); the {family} it was built with is not the one found first"
    )
    return c.finding("library-not-on-path", title, (line,), family)


def library_not_on_path(c: Case) -> list[Finding]:
    found = [f for f in library_findings(c) if f.code == "library-not-on-path"]
    if other := c.ev.signal("other-copy-first"):
        title = "another build's copy of a library is found first: the right one is not first on the loader's path"
        found.append(c.finding("library-not-on-path", title, (other.line,)))
    bad = c.ev.signal("bad-image")
    if bad and (c.cuda_provider_failed or "providers_cuda" in bad.line.lower()) and not c.ev.load_errors:
        # Windows error 193 loading the provider: a DLL it links was found, but it is not a 64-bit image (a 32-bit
        # or damaged copy earlier on PATH)
        title = (
            "a DLL the CUDA provider loads is not a valid 64-bit image (Windows error 193): a wrong copy is found "
            "first on PATH"
        )
        found.append(c.finding("library-not-on-path", title, (bad.line,)))
    proc = c.ev.signal("proc-not-found")
    if proc and "providers_cuda" in proc.line.lower() and not c.ev.load_errors:
        # Windows error 127 loading the provider: a DLL it links was found without a function it imports (another
        # version's copy earlier on PATH)
        title = (
            "a DLL the CUDA provider links lacks a function it needs (Windows error 127): another version's copy is "
            "found first on PATH"
        )
        found.append(c.finding("library-not-on-path", title, (proc.line,)))
    for line in c.ev.lines("undefined-cuda-symbol"):
        found.append(undefined_symbol_finding(c, line))
    if said := c.ev.signal("not-on-path-said"):
        library = "cudnn" if "cudnn" in said.line.lower() else None
        title = "the CUDA libraries are installed but not on the loader's path (the log says so)"
        found.append(c.finding("library-not-on-path", title, c.ev.lines("not-on-path-said"), library))
    return found


def msvc_runtime_missing(c: Case) -> list[Finding]:
    found = [f for f in library_findings(c) if f.code == "msvc-runtime-missing"]
    if c.ev.signal("dll-init-failed") and not _provider_init_failed(c):
        title = (
            "a DLL's initialisation failed (Windows error 1114): usually a missing or old Microsoft Visual C++ runtime"
        )
        found.append(c.finding("msvc-runtime-missing", title, c.ev.lines("dll-init-failed")))
    if (core := c.ev.signal("core-dll-failed")) and not _core_links_cuda(c):
        # since 1.9 CUDA is in the provider's library: onnxruntime.dll itself needs only the Visual C++ runtime
        # besides Windows
        which = f" (onnxruntime {c.builds[0].ort_version})" if c.builds else ""
        title = (
            f"onnxruntime.dll{which} cannot be loaded: its dependency besides Windows is the Microsoft Visual C++ "
            "runtime"
        )
        found.append(c.finding("msvc-runtime-missing", title, (core.line, c.build_line)))
    import_failed = c.ev.signal("pybind-import-failed")
    cuda_path = cuda_path_not_loaded(c)
    if import_failed and not c.ev.signal("dll-init-failed") and not cuda_path and not c.ev.load_errors:
        title = (
            "onnxruntime's Python module cannot load its DLLs (Windows): the Microsoft Visual C++ runtime is missing "
            "or older than the build needs"
        )
        found.append(c.finding("msvc-runtime-missing", title, c.ev.lines("pybind-import-failed")))
    if c.ev.signal("msvc-absent"):
        found.append(
            c.finding(
                "msvc-runtime-missing", "the Microsoft Visual C++ runtime is not installed", c.ev.lines("msvc-absent")
            )
        )
    return found


def _core_links_cuda(c: Case) -> bool:
    """A release before 1.9 is named: its onnxruntime.dll linked CUDA and cuDNN itself (no provider library yet)."""
    versions = [s.value.split(" ", 1)[1] for s in c.ev.ort_stated] + [d.version for d in c.ev.onnxruntime]
    return any(vtuple(v) < (1, 9) for v in versions if v[:1].isdigit())


def _provider_init_failed(c: Case) -> bool:
    """Error 1114 on loading a provider library (onnxruntime_providers_cuda.dll) only: onnxruntime's own DLL, built
    with the same Visual C++ runtime, loaded, so that runtime is not what failed; the provider's CUDA or cuDNN DLLs
    (another version found first, or one failing to start) are."""
    named = [line for line in c.ev.lines("dll-init-failed") if _NAMES_MODULE.search(line)]  # not a title's echo
    return bool(c.ev.signal("provider-dll-init-failed")) and not named


_NAMES_MODULE = re.compile(r"\.(?:dll|pyd)\b|importing|pybind", re.I)


def zlibwapi_missing(c: Case) -> list[Finding]:
    found = [f for f in library_findings(c) if f.code == "zlibwapi-missing"]
    if (unnamed := unnamed_dependency(c)) is not None and unnamed.code == "zlibwapi-missing":
        found.append(unnamed)
    if not found and (named := c.ev.signal("zlibwapi-named")):
        title = "zlibwapi.dll (needed by cuDNN 8 on Windows) is missing or unusable (the log names it)"
        found.append(c.finding("zlibwapi-missing", title, c.ev.lines("zlibwapi-named") or (named.line,)))
    silent = c.ev.signal("silent-exit") if c.ev.os == "windows" else None
    if (
        not found
        and (abort := c.ev.signal("windows-abort") or silent)
        and (cudnn8 := _cudnn8(c))
        and not c.ev.load_errors
    ):
        # cuDNN 8.3+ on Windows loads zlibwapi.dll when its first convolution runs and aborts the process (fast
        # fail, 0xC0000409) when it is missing: the message it prints is often lost
        how = "ended without an error" if abort is silent else "aborted (0xC0000409)"
        title = f"the process {how} on Windows with cuDNN 8: cuDNN 8.3+ aborts so when zlibwapi.dll is missing"
        found.append(c.finding("zlibwapi-missing", title, (abort.line, cudnn8)))
    fault = c.ev.signal("cudnn8-fault") and not c.ev.load_errors and not c.ev.loading
    if not found and fault and not c.ev.signal("cudnn-absent-said"):
        title = (
            "the process faulted inside cuDNN 8 on Windows: cuDNN 8.3+ aborts in its first convolution when "
            "zlibwapi.dll is missing"
        )
        found.append(c.finding("zlibwapi-missing", title, c.ev.lines("cudnn8-fault")))
    return found


def _cudnn8(c: Case) -> str | None:
    """The line showing that cuDNN 8 is what runs (installed, needed by the build, or implied by CUDA 11)."""
    if 8 in c.installed_cudnn:
        return c.installed_cudnn[8]
    if c.installed_cudnn:
        return None
    if c.build_cudnn:
        return c.build_cudnn[1] if c.build_cudnn[0] == 8 else None
    return c.installed_cuda.get(11)


def tensorrt_missing(c: Case) -> list[Finding]:
    """TensorRT's failure; a warning when the CUDA provider failed too (that failure keeps the GPU unused, TensorRT
    is optional) or when the session went on with CUDA."""
    ev = c.ev
    found = [f for f in library_findings(c) if f.code == "tensorrt-missing"]
    if ev.signal("tensorrt-absent") or ev.signal("tensorrt-provider-failed"):
        title = "TensorRT is not installed (or not found) for the TensorRT provider"
        lines = ev.lines("tensorrt-absent") or ev.lines("tensorrt-provider-failed")
        found.append(c.finding("tensorrt-missing", title, lines, "nvinfer"))
    cuda_failed = c.cuda_provider_failed and not ev.signal("cuda-applied")
    if found and cuda_failed:
        return [Finding(f.code, "warning", f.title, f.evidence, f.fix, f.library) for f in found]
    return found


def unsupported_gpu_arch(c: Case) -> list[Finding]:
    ev = c.ev
    found = []
    gpu = next((g for g in ev.gpus if g.compute_capability), None)
    named = f"the {gpu.name} (compute capability {gpu.compute_capability})" if gpu else "this GPU's compute capability"
    if "cudaErrorNoKernelImageForDevice" in c.errors:
        title = f"the build has no GPU code for {named}"
        found.append(
            c.finding("unsupported-gpu-arch", title, (c.errors["cudaErrorNoKernelImageForDevice"], *ev.gpu_lines[:2]))
        )
    forced = ev.signal("force-ptx-jit")
    if "CUBLAS_STATUS_ARCH_MISMATCH" in c.cublas:
        title = f"cuBLAS fails (CUBLAS_STATUS_ARCH_MISMATCH): the build has no code for {named}"
        found.append(
            c.finding("unsupported-gpu-arch", title, (c.cublas["CUBLAS_STATUS_ARCH_MISMATCH"], *ev.gpu_lines[:2]))
        )
    if "CUBLAS_STATUS_INTERNAL_ERROR" in c.cublas and not _out_of_memory_lines(c):
        # status 14 at cuBLAS's first call (cublasCreate) means cuBLAS could not start on the device: most often no
        # code the GPU may run (a GPU newer than the build; CUDA_FORCE_PTX_JIT=1 with a wheel without PTX); a full
        # GPU memory gives it too, and then the log shows the memory (gpu-out-of-memory is read instead)
        if forced:
            title = (
                "cuBLAS cannot start (CUBLAS_STATUS_INTERNAL_ERROR) with CUDA_FORCE_PTX_JIT set: the driver ignores "
                f"the compiled kernels and the build holds no PTX for {named}"
            )
        else:
            title = (
                f"cuBLAS cannot start (CUBLAS_STATUS_INTERNAL_ERROR): most often the build has no code {named} may "
                "run (or CUDA_FORCE_PTX_JIT=1 is set); a GPU whose memory is already full fails so too"
            )
        lines = (c.cublas["CUBLAS_STATUS_INTERNAL_ERROR"], *((forced.line,) if forced else ()), *ev.gpu_lines[:2])
        found.append(c.finding("unsupported-gpu-arch", title, lines))
    if "cudaErrorNoKernelImageForDevice" in c.errors and forced:
        found[0] = c.finding(
            "unsupported-gpu-arch", found[0].title + " (CUDA_FORCE_PTX_JIT is set)", (*found[0].evidence, forced.line)
        )
    if "cudaErrorNoDevice" in c.errors and (old := _old_gpu(c)):
        title = f"the {old.name} (compute capability {old.compute_capability}) is not supported by this build's CUDA"
        found.append(c.finding("unsupported-gpu-arch", title, (c.errors["cudaErrorNoDevice"], *ev.gpu_lines[:2])))
    if (verdict := insufficient_driver(c)) and verdict[0] == "unsupported-gpu-arch":
        found.append(c.finding("unsupported-gpu-arch", verdict[1], verdict[2]))
    if torch := ev.signal("torch-arch"):
        title = f"the GPU's architecture is newer than the builds beside it know ({named}): torch says so"
        found.append(c.finding("unsupported-gpu-arch", title, (torch.line, *ev.gpu_lines[:1])))
    fix = UNSET_PTX_JIT if forced else arch_fix(c)
    return [Finding(f.code, f.severity, f.title, f.evidence, fix or f.fix) for f in found]


def _old_gpu(c: Case) -> Gpu | None:
    supported = _supported_cc(c, c.build_cuda[0] if c.build_cuda else None)
    return next(
        (g for g in c.ev.gpus if g.compute_capability and supported and g.compute_capability not in supported), None
    )


def gpu_provider_failed(c: Case) -> list[Finding]:
    ev = c.ev
    if not ev.signal("provider-failed"):
        if ev.signal("dml-failed") and not ev.load_errors:
            title = (
                "the DirectML provider failed (the HRESULT in its message): a GPU, driver or session DirectML cannot "
                "use (feature level, a device removed or hung, a remote desktop session) or an operator it cannot run; "
                "on an NVIDIA GPU, onnxruntime-gpu's CUDA provider is the other way (`ortprov plan`)"
            )
            return [c.finding("gpu-provider-failed", title, ev.lines("dml-failed"))]
        if ev.signal("node-failed"):
            title = "a CUDA kernel of ONNX Runtime failed while running a node (the CUDA provider itself loaded)"
            return [c.finding("gpu-provider-failed", title, ev.lines("node-failed"))]
        if ev.signal("cuda-call-error"):
            title = "a CUDA, cuBLAS or cuDNN call of ONNX Runtime's CUDA provider failed"
            return [c.finding("gpu-provider-failed", title, ev.lines("cuda-call-error"))]
        if _provider_init_failed(c):
            title = (
                "the CUDA provider's DLL failed to initialise (Windows error 1114) while onnxruntime itself loaded: "
                "one of its CUDA or cuDNN DLLs failed to start (another version found first on the PATH, or a "
                "laptop's NVIDIA GPU switched off by its power settings)"
            )
            return [c.finding("gpu-provider-failed", title, ev.lines("provider-dll-init-failed"))]
        return []
    need = ""
    if c.build_cuda and c.build_cudnn and ev.cudnn_required:
        need = f" (it needs cuDNN {c.build_cudnn[0]}.* and CUDA {c.build_cuda[0]}.*)"
    elif c.build_cuda:
        need = f" (it needs CUDA {c.build_cuda[0]})"
    title = f"the CUDA execution provider could not be created; ONNX Runtime fell back to the CPU{need}"
    if not ev.load_errors and not ev.loading:
        title += f"; {unnamed_candidates(c)}"
    return [c.finding("gpu-provider-failed", title, ev.lines("provider-failed"))]


def _out_of_memory_lines(c: Case) -> tuple[str, ...]:
    return c.ev.lines("out-of-memory") + tuple(
        line
        for name, line in (*c.errors.items(), *c.cublas.items())
        if name in ("cudaErrorMemoryAllocation", "CUBLAS_STATUS_ALLOC_FAILED")
    )


def gpu_out_of_memory(c: Case) -> list[Finding]:
    lines = _out_of_memory_lines(c)
    if lines and "CUBLAS_STATUS_INTERNAL_ERROR" in c.cublas:  # cuBLAS could not start in a full GPU memory
        lines = (*lines, c.cublas["CUBLAS_STATUS_INTERNAL_ERROR"])
    return [c.finding("gpu-out-of-memory", "the GPU ran out of memory", lines)] if lines else []


def cuda_context_conflict(c: Case) -> list[Finding]:
    ev = c.ev
    if (fork := ev.signal("fork")) and ev.signal("cuda-call-failed"):
        title = "CUDA fails in a forked process: CUDA initialised before fork() cannot be used in the child"
        return [c.finding("cuda-context-conflict", title, (*ev.lines("cuda-call-failed")[:2], fork.line))]
    lines = c.ev.lines("context-conflict") + (
        (c.errors["cudaErrorInvalidResourceHandle"],) if "cudaErrorInvalidResourceHandle" in c.errors else ()
    )
    if not lines:
        return []
    title = "CUDA context conflict: TensorRT/pycuda and ONNX Runtime share one process without managing contexts"
    return [c.finding("cuda-context-conflict", title, lines)]


def gpu_results_differ(c: Case) -> list[Finding]:
    if c.ev.signal("tiny-difference"):
        return []  # differences at the fourth decimal or later: float rounding (TF32, kernel choice), not an error
    lines = c.ev.lines("results-differ")
    if (failed := c.ev.signal("allclose-failed")) and (call := c.ev.signal("allclose-gpu")):
        lines = (*lines, call.line, failed.line)  # numpy's comparison of the GPU's outputs with the CPU's failed
    return [c.finding("gpu-results-differ", "the GPU's results differ from the CPU's", lines)] if lines else []


def gpu_slower_than_cpu(c: Case) -> list[Finding]:
    lines = _slower(c)
    if not lines:
        return []
    title = "the GPU is slower than the CPU (host/device copies, first-run setup, or tiny work)"
    return [c.finding("gpu-slower-than-cpu", title, lines, severity="warning")]


def _slower(c: Case) -> tuple[str, ...]:
    """Lines showing the GPU slower than the CPU: said in words, or timings where the GPU's is the larger."""
    ev = c.ev
    if ev.signal("gpu-faster"):
        return ()
    said = ev.lines("gpu-slower")
    gpu = [t for t in ev.timings if t.device == "gpu"]
    cpu = [t for t in ev.timings if t.device == "cpu"]
    if any("onnxruntime-gpu" in t.line.lower() or "onnxruntime_gpu" in t.line.lower() for t in gpu):
        cpu += [t for t in ev.timings if t.device == "package"]  # the two packages timed side by side
    if gpu and cpu and min(t.seconds for t in gpu) > min(t.seconds for t in cpu):
        return tuple(dict.fromkeys((*said, gpu[0].line, cpu[0].line)))
    if said and gpu and cpu:  # said in words, and a GPU run timed slower than the CPU (a faster variant beside it)
        slow = max(gpu, key=lambda t: t.seconds)
        fast = min(cpu, key=lambda t: t.seconds)
        return tuple(dict.fromkeys((*said, slow.line, fast.line))) if slow.seconds > fast.seconds else ()
    return said


def nodes_on_cpu(c: Case) -> list[Finding]:
    """Nodes placed on the CPU (info); a warning when the log also shows the GPU slow: they are its cause."""
    lines = c.ev.lines("nodes-on-cpu") + c.ev.lines("memcpy")
    if not lines:
        return []
    title = "some nodes run on the CPU although a GPU provider was requested"
    return [c.finding("nodes-on-cpu", title, lines, severity="warning" if _slower(c) else "info")]


def plugin_library_missing(c: Case) -> list[Finding]:
    """A library a plugin EP's provider links, not found when it was registered (`Failed to load library
    .../libonnxruntime_providers_nv_tensorrt_rtx.so with error: libcudart.so.13: cannot open shared object file`):
    the plugin libraries' names come from the matrix's EP rows."""
    stems = _plugin_library_stems(c)
    found = []
    for error in c.ev.load_errors:
        where = f"{error.needed_by or ''} {error.line}"
        if any(stem in where for stem in stems):
            title = (
                f"the plugin EP's provider cannot load: {error.filename} is not found by the loader (the EP links it "
                "and has no RUNPATH; its wheel may bundle it under another file name)"
            )
            found.append(c.finding("plugin-library-missing", title, (error.line,)))
    return found


# a plugin EP package's folder in a path (onnxruntime_ep_nv_tensorrt_rtx/), the name the loader hook watches
PLUGIN_FOLDER = "/onnxruntime_ep_"


def _plugin_library_stems(c: Case) -> tuple[str, ...]:
    """onnxruntime_providers_nv_tensorrt_rtx ... : each plugin EP library's name without lib and extension (the
    matrix's EP rows, when the case has the matrix), and the EP packages' folder name in any path."""
    names = {v.library for e in c.matrix.ep_releases for v in e.variants if v.library} if c.matrix else set()
    return (*sorted({n.removeprefix("lib").split(".")[0] for n in names}), PLUGIN_FOLDER, "\\onnxruntime_ep_")
