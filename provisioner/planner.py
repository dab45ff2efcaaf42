"""The pure planner: (hosts, Matrix, Request) -> Plan, or NoCompatiblePlan that explains every loser.

Nothing here reads the machine or the network, and no version number lives in this code: which build
needs which driver, compute capability, Python, platform and libraries comes from the Matrix.

Rules, in order:
1. Candidates are the matrix builds that match `--ort` and `--cuda` (BadInput when a pin names nothing).
2. A candidate runs on a host when the host's platform has a wheel (and its glibc meets the wheel's floor),
   the target Python has a wheel for that platform, the driver meets the CUDA release's floor (or the CUDA
   major's minor-version-compatibility floor), and every GPU runs the GPU code read from the platform's wheel:
   a cubin of the same major and a minor <= the GPU's (an `a` cubin: exactly that GPU), or PTX of its compute
   capability or older, JIT-compiled only by a driver that supports the build's CUDA (where the wheel was not
   read: the CUDA release's compute capabilities). With --tensorrt the platform's wheels must ship a TensorRT
   provider; with --cuda-libraries system a probed host's loader path must hold every library the provider
   links, and cuDNN; with NVIDIA wheels, none of them may install over the files of an installed distribution
   that stays (torch's nvidia-cudnn-cu12 and nvidia-cudnn-cu13 share nvidia/cudnn/), and every library its CUDA
   provider imports must be a file of one of them, or come with the driver or the OS. Unknown facts (no driver
   on a build server, no GPU, no Python) are not rejected on: they become notes. A host no candidate runs on
   gets NoCompatiblePlan with every reason, and for a GPU no build has code for, the build that has it or the
   source build that would.
3. Of the candidates that run on every host: the newest release; within it, the build whose CUDA/cuDNN
   majors match libraries already present (torch's NVIDIA wheels, system libraries), then the PyPI build,
   then the newest CUDA.
4. NVIDIA library wheels are pinned exactly (already-installed versions first, then the newest versions
   whose CUDA minor the driver supports), among the versions with a wheel for every host's platform; a
   build whose needed library has no wheel at all for a host's platform does not run there (rule 2);
   conflicting onnxruntime flavours are uninstalled first.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from provisioner.closure import closure
from provisioner.errors import BadInput, NoCompatiblePlan
from provisioner.facts import Gpu, HostFacts, MissingFiles, NvidiaWheel, OrtDist, PythonInfo
from provisioner.matrix.model import (
    CudaMajor,
    CudaRelease,
    LibraryWheel,
    Matrix,
    OrtBuild,
    TensorRTRelease,
)
from provisioner.matrix.query import (
    build_gpu_code,
    build_tensorrt,
    code_summary,
    cuda_major,
    cuda_major_libraries,
    cuda_release,
    cuda_versions,
    first_cuda_release_for_cc,
    gpu_code_for,
    library_of,
    library_of_package,
    newest_cuda_for_driver,
    ort_versions,
    provider_needs,
    python_versions_with_wheels,
    recorded_wheels,
    tensorrt_provider,
    wheel_files,
)
from provisioner.plan import (
    LOADER_HOOK,
    REMOVE_LOADER_HOOK,
    LibraryPin,
    Plan,
    Rejection,
    Request,
    Step,
    requirement_name,
)
from provisioner.standalone.libnames import match_library, soname_of
from provisioner.versions import (
    at_least,
    driver_at_least,
    in_series,
    major,
    major_minor,
    ort_matcher,
    satisfies,
    vtuple,
)

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Protocol

    from provisioner.facts import Gpu, HostFacts, MissingFiles, NvidiaWheel, OrtDist, PythonInfo
    from provisioner.matrix.model import (
        CudaMajor,
        CudaRelease,
        LibraryWheel,
        Matrix,
        OrtBuild,
        TensorRTRelease,
        WheelFiles,
    )

    class Planned(Protocol):
        """The planned distribution: an OrtBuild while planning, a saved Plan when it is retargeted."""

        @property
        def package(self) -> str: ...
        @property
        def ort_version(self) -> str: ...
        @property
        def cuda_version(self) -> str: ...
        @property
        def index_url(self) -> str | None: ...

    class Installed(Protocol):
        """What one environment has installed: a HostFacts, or the package probe's report of a target."""

        @property
        def python(self) -> PythonInfo | None: ...
        @property
        def onnxruntime(self) -> tuple[OrtDist, ...]: ...
        @property
        def nvidia_wheels(self) -> tuple[NvidiaWheel, ...]: ...


REUSED_PIN_REASON = "already installed; pinned to that version so it is not downloaded or replaced"


@dataclass
class _Existing:
    """CUDA / cuDNN libraries already present on the hosts, and where they come from."""

    cuda: dict[int, list[str]] = field(default_factory=dict)  # CUDA major -> descriptions
    cudnn: dict[tuple[int | None, str], list[str]] = field(default_factory=dict)  # (CUDA major, cuDNN major)
    wheels: dict[str, set[str]] = field(default_factory=dict)  # installed NVIDIA wheel -> versions

    def add_cuda(self, major: int, where: str) -> None:
        items = self.cuda.setdefault(major, [])
        if where not in items:
            items.append(where)

    def add_cudnn(self, cuda_major: int | None, cudnn_major: str, where: str) -> None:
        items = self.cudnn.setdefault((cuda_major, cudnn_major), [])
        if where not in items:
            items.append(where)


@dataclass(frozen=True)
class _Verdict:
    """One candidate judged against every host."""

    build: OrtBuild
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    reasons: tuple[str, ...]
    blocking_hosts: tuple[int, ...]  # indexes of hosts that reject it
    score: int = 0
    minor_compat: bool = False  # some host runs it only through CUDA minor-version compatibility
    missing_code: tuple[tuple[int, str], ...] = ()  # (host index, compute capability) its wheels hold no code for
    unread_code: tuple[tuple[int, str], ...] = ()  # (host index, cc) judged by the CUDA release: wheels not read


def short_label(build: OrtBuild) -> str:
    """ "1.31.1 (CUDA 13.0)"."""
    return f"{build.ort_version} (CUDA {build.cuda_version})"


def host_name(host: HostFacts, index: int, count: int) -> str:
    """ "this host" for one host, else "host 'a.json'" (the label, or its position)."""
    if count == 1:
        return "this host"
    return f"host {host.label or '#' + str(index + 1)!r}"


def driver_cuda_version(host: HostFacts, matrix: Matrix) -> str | None:
    """The newest CUDA version the host's driver supports: as reported, else derived from matrix floors."""
    driver = host.driver
    if driver.cuda_version:
        return driver.cuda_version
    if not driver.present or not driver.version:
        return None
    release = newest_cuda_for_driver(matrix, driver.version, windows=host.platform.os == "windows")
    return release.version if release else None


def make_plan(hosts: Sequence[HostFacts], matrix: Matrix, request: Request) -> Plan:
    """The newest build that runs on every host, its install steps and pins; NoCompatiblePlan otherwise."""
    hosts = tuple(hosts)
    if not hosts:
        raise BadInput("no host to plan for", hint="pass --host FILE or the --driver/--gpu-cc/--python flags")
    existing = _existing_libraries(hosts, matrix) if request.prefer_existing_libraries else _Existing()
    verdicts = [_judge(build, hosts, matrix, request, existing) for build in candidates(matrix, request)]
    runnable = [v for v in verdicts if not v.problems]
    if not runnable:
        raise _no_plan(verdicts, hosts, request)
    runnable.sort(key=lambda v: _preference(v, request), reverse=True)
    chosen = runnable[0]
    build = chosen.build

    if request.cuda_libraries == "system":
        pins: list[LibraryPin] = []
        library_requirements: list[str] = []
        cudnn_version = build.cudnn_version
        library_notes = _system_library_notes(build, hosts)
    else:
        pins, library_requirements, library_notes, cudnn_version = _library_pins(build, hosts, matrix, existing)
    tensorrt = build_tensorrt(matrix, build) if request.tensorrt else None
    uninstall = _conflicting_flavours(build, hosts, pins)
    wheels_trt = tensorrt if tensorrt and request.tensorrt_libraries == "wheels" else None
    steps = _steps(build, uninstall, library_requirements, wheels_trt, extras=request.cuda_libraries != "system")
    steps += _tensorrt_steps(wheels_trt, request)
    hook_steps, hook_notes = _loader_hook(build, hosts, request)
    steps += hook_steps

    reasons = [_choice_reason(build, hosts, matrix, request), *chosen.reasons]
    reasons += _reuse_reasons(chosen, existing, pins)
    closure_reasons, closure_notes = _closure_lines(build, hosts, matrix, pins, library_requirements, request)
    reasons += closure_reasons
    notes = [*chosen.notes, *library_notes, *_missed_reuse_notes(chosen, runnable, existing, request), *hook_notes]
    notes += closure_notes
    if not build.confirmed:
        source = build.sources[0] if build.sources else "no source recorded"
        notes.append(
            f"{short_label(build)} is known from documentation only ({source}): its CUDA and cuDNN versions "
            f"were not read from the wheel; `ortprov verify` after installing proves them"
        )
    if tensorrt:
        reasons.append(_tensorrt_reason(build, tensorrt, request))
        notes += _tensorrt_notes(build, tensorrt, hosts, matrix, request)
    rejected = _rejections_for_plan(chosen, verdicts, hosts)
    return Plan(
        ort_version=build.ort_version,
        package=build.package,
        cuda_version=build.cuda_version,
        cudnn_version=cudnn_version,
        steps=steps,
        tensorrt_version=_tensorrt_version(tensorrt, request),
        tensorrt_source=_tensorrt_source(tensorrt, request),
        index_url=build.index_url,
        pins=tuple(pins),
        reasons=tuple(_unique(reasons)),
        notes=tuple(_unique(notes)),
        rejected=tuple(rejected),
        hosts=hosts,
    )


# --- candidates -----------------------------------------------------------------------------------------


def candidates(matrix: Matrix, request: Request) -> list[OrtBuild]:
    """Builds matching --ort and --cuda; BadInput when a pin names nothing in the matrix (`matrix show` too)."""
    builds = list(matrix.builds)
    if not builds:
        raise BadInput(
            f"the matrix ({matrix.origin}) lists no onnxruntime-gpu builds",
            hint="run `ortprov matrix update`",
        )
    if request.ort:
        try:
            matches = ort_matcher(request.ort)
        except ValueError:
            raise BadInput(
                f"--ort {request.ort!r} is not a version or specifier",
                hint="examples: --ort 1.20, --ort 1.20.1, --ort '>=1.18,<1.21'",
            ) from None
        builds = [b for b in builds if matches(b.ort_version)]
        if not builds:
            versions = ort_versions(matrix)
            raise BadInput(
                f"onnxruntime-gpu {request.ort} is not in the matrix (dated {matrix.date}; it knows "
                f"{versions[-1]} to {versions[0]})",
                hint="`ortprov matrix update` refreshes the matrix from PyPI",
            )
    if request.cuda:
        wanted = request.cuda.strip()
        known = cuda_versions(matrix)
        if not any(in_series(v, wanted) for v in known):
            raise BadInput(
                f"no onnxruntime-gpu build in the matrix targets CUDA {wanted}",
                hint=f"builds exist for CUDA {', '.join(known)}",
            )
        pinned = [b for b in builds if in_series(b.cuda_version, wanted)]
        if not pinned:
            offered = ", ".join(sorted({short_label(b) for b in builds}, key=vtuple))
            raise BadInput(
                f"--ort {request.ort} and --cuda {wanted} exclude each other: the matrix has {offered}",
                hint="drop one of the two pins",
            )
        builds = pinned
    return sorted(builds, key=lambda b: (vtuple(b.ort_version), vtuple(b.cuda_version)), reverse=True)


# --- judging one candidate ------------------------------------------------------------------------------


def _judge(
    build: OrtBuild, hosts: tuple[HostFacts, ...], matrix: Matrix, request: Request, existing: _Existing
) -> _Verdict:
    problems: list[str] = []
    notes: list[str] = []
    reasons: list[str] = []
    blocking: list[int] = []
    release = cuda_release(matrix, build.cuda_version)
    major_record = cuda_major(matrix, build.cuda_major)
    if release is None:
        notes.append(
            f"CUDA {build.cuda_version} is not among the matrix's CUDA releases: driver and compute "
            f"capability were not checked for {short_label(build)}"
        )
    if request.tensorrt:
        problems += _tensorrt_problems(build, matrix, request)
    missing_code: list[tuple[int, str]] = []
    unread: list[tuple[int, str]] = []
    for index, host in enumerate(hosts):
        who = host_name(host, index, len(hosts))
        host_problems: list[str] = []
        if request.tensorrt:
            host_problems += _tensorrt_host_problems(build, host, who, matrix, request, notes)
        host_problems += _platform_problems(build, host, who, notes)
        host_problems += _python_problems(build, host, who, matrix, notes)
        host_problems += _library_platform_problems(build, host, who, matrix, request)
        if request.cuda_libraries == "system":
            host_problems += _system_library_problems(build, host, who, notes)
        else:
            host_problems += _overwrite_problems(build, host, who, matrix)
            host_problems += _closure_problems(build, host, who, matrix)
        if release is not None:
            driver_problems = _driver_problems(build, host, who, release, major_record, matrix, notes, reasons)
            host_problems += driver_problems
            gpu_problems, lacking = _gpu_problems(build, host, who, release, matrix, notes, reasons)
            host_problems += gpu_problems
            missing_code += [(index, cc) for cc in lacking if not cc.startswith("?")]
            unread += [(index, cc[1:]) for cc in lacking if cc.startswith("?")]
        if host_problems:
            blocking.append(index)
            problems += host_problems
    return _Verdict(
        build,
        tuple(_unique(problems)),
        tuple(_unique(notes)),
        tuple(_unique(reasons)),
        tuple(blocking),
        _reuse_score(build, existing),
        any("minor-version compatibility" in note for note in notes),
        tuple(missing_code),
        tuple(unread),
    )


def _platform_problems(build: OrtBuild, host: HostFacts, who: str, notes: list[str]) -> list[str]:
    tag = host.platform.tag
    wheel = next((p for p in build.platforms if p.platform == tag), None)
    if wheel is None:
        offered = ", ".join(p.platform for p in build.platforms) or "no platform"
        return [f"{short_label(build)} has no wheel for {tag} ({who}); it has wheels for {offered}"]
    if wheel.glibc_min and host.platform.os == "linux":
        glibc = host.platform.glibc
        if glibc is None:
            notes.append(
                f"the C library of {who} is unknown: {tag} wheels of {build.ort_version} need glibc >= "
                f"{wheel.glibc_min} (musl systems such as Alpine cannot install them)"
            )
        elif not at_least(glibc, wheel.glibc_min):
            arch = tag.split("-", 1)[1]
            return [f"{build.ort_version} {arch} wheels need glibc >= {wheel.glibc_min}; {who} has {glibc}"]
    return []


def _python_problems(build: OrtBuild, host: HostFacts, who: str, matrix: Matrix, notes: list[str]) -> list[str]:
    if host.python is None:
        notes.append(
            f"the Python version of {who} is unknown; {build.ort_version} has wheels for Python "
            f"{', '.join(build.python)} (pass --python X.Y)"
        )
        return []
    wanted = host.python.minor
    tag = host.platform.tag
    if wanted in build.pythons_on(tag):
        return []
    kind = " (free-threaded)" if wanted.endswith("t") else ""
    if wanted in build.python:  # a wheel for this Python exists, but not for this platform
        offered = ", ".join(p.platform for p in build.platforms if wanted in build.pythons_on(p.platform))
        return [
            f"{short_label(build)} has no {tag} wheel for Python {wanted}{kind} ({who}); its Python {wanted} "
            f"wheels are for {offered}"
        ]
    with_wheel = python_versions_with_wheels(matrix, build.package, wanted, tag)
    if not with_wheel:
        return [
            f"no {build.package} wheel for Python {wanted}{kind} on {tag} in the matrix ({who} has Python {wanted})"
        ]
    if vtuple(build.ort_version) > vtuple(with_wheel[-1]):
        return [f"no wheel for Python {wanted}{kind} after {with_wheel[-1]} ({who} has Python {wanted})"]
    if vtuple(build.ort_version) < vtuple(with_wheel[0]):
        return [f"no wheel for Python {wanted}{kind} before {with_wheel[0]} ({who} has Python {wanted})"]
    return [f"{short_label(build)} has no wheel for Python {wanted}{kind} ({who} has Python {wanted})"]


def _driver_floors(
    release: CudaRelease, major_record: CudaMajor | None, windows: bool
) -> tuple[str | None, str | None]:
    """(full-support floor, minor-version-compatibility floor) for the host's OS."""
    if windows:
        full = release.min_driver_windows
        compat = major_record.minor_compat_driver_windows if major_record else None
    else:
        full = release.min_driver_linux
        compat = major_record.minor_compat_driver_linux if major_record else None
    return full, compat


def _driver_problems(
    build: OrtBuild,
    host: HostFacts,
    who: str,
    release: CudaRelease,
    major_record: CudaMajor | None,
    matrix: Matrix,
    notes: list[str],
    reasons: list[str],
) -> list[str]:
    driver = host.driver
    full, compat = _driver_floors(release, major_record, host.platform.os == "windows")
    needed = compat or full
    label = short_label(build)
    if not driver.present or not (driver.version or driver.cuda_version):
        why = f" ({driver.error})" if driver.error else ""
        notes.append(
            f"no NVIDIA driver known on {who}{why}: the driver was not checked; the machine that runs "
            f"{label} needs driver >= {needed or 'unknown'}"
        )
        return []
    supported = driver_cuda_version(host, matrix)
    has = f"{driver.version or 'a driver'}" + (f" (CUDA {supported})" if supported else "")
    if driver.version and (full or compat):
        if full and driver_at_least(driver.version, full):
            reasons.append(f"driver {has} on {who} supports CUDA {build.cuda_version} (needs >= {full})")
            return []
        if compat and driver_at_least(driver.version, compat):
            notes.append(
                f"driver {has} on {who} runs {label} only through CUDA minor-version compatibility "
                f"(full support from {full}): JIT-compiled code (NVRTC, cuDNN runtime-compiled engines) "
                f"can fail until the driver is upgraded"
            )
            return []
        return [f"{label} needs driver >= {needed}; {who} has {has}"]
    if supported:
        if vtuple(supported)[0] < build.cuda_major:
            return [
                f"{label} needs a driver for CUDA {build.cuda_major} (>= {needed}); {who}'s driver supports "
                f"CUDA {supported}"
            ]
        if vtuple(supported) < vtuple(build.cuda_version):
            notes.append(
                f"{who}'s driver supports CUDA {supported}: {label} runs through minor-version "
                f"compatibility if the driver is >= {compat or full}"
            )
        return []
    notes.append(f"the driver on {who} reports no version: not checked (needs >= {needed})")
    return []


def _gpus(host: HostFacts, who: str, notes: list[str]) -> tuple[Gpu, ...]:
    if host.gpus and not host.visible_gpus:
        notes.append(
            f"every GPU on {who} is hidden (CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES): planned for "
            f"all of them, but CUDA will see none until that is changed"
        )
        return host.gpus
    return host.visible_gpus


def _gpu_problems(
    build: OrtBuild,
    host: HostFacts,
    who: str,
    release: CudaRelease,
    matrix: Matrix,
    notes: list[str],
    reasons: list[str],
) -> tuple[list[str], list[str]]:
    """(problems, compute capabilities the build's wheels hold no code for) for the host's GPUs. What runs is
    read from the wheel for the host's platform (its kernels and PTX); where it was not read, from what the
    build's CUDA release supports."""
    gpus = _gpus(host, who, notes)
    if not gpus:
        if host.driver.present:
            notes.append(f"no GPU listed for {who}: compute capability not checked")
        return [], []
    problems: list[str] = []
    lacking: list[str] = []
    code = build_gpu_code(build, host.platform.tag)
    label = short_label(build)
    matched: list[str] = []
    for gpu in gpus:
        cc = gpu.compute_capability
        where = f"GPU {gpu.index}" + (f" ({gpu.name})" if gpu.name else "") + f" on {who}" if len(gpus) > 1 else who
        if not cc:
            notes.append(f"compute capability of GPU {gpu.index} on {who} unknown: not checked")
            continue
        if code is None:
            problem = _cc_problem(build, cc, release, matrix)
            if problem is None and build.wheel_platform(host.platform.tag) is not None:
                notes.append(
                    f"the GPU code in {build.ort_version}'s {host.platform.tag} wheels was not read from them: "
                    f"compute capability {cc} is checked against what CUDA {release.version} supports only"
                )
                lacking.append(f"?{cc}")  # runs by its CUDA release's word, not by its wheels
        else:
            problem, match = _code_problem(build, host, cc, code, notes, where, driver_cuda_version(host, matrix))
            if problem is None and match:
                matched.append(f"{cc}: {match}")
            elif problem is not None:
                lacking.append(cc)
        if problem:
            problems.append(f"{problem} ({where} has {cc})" if len(gpus) > 1 else problem)
    if not problems:
        ccs = ", ".join(sorted({g.compute_capability for g in gpus if g.compute_capability}, key=vtuple))
        if matched:
            reasons.append(f"{label}'s {host.platform.tag} wheels hold GPU code for {who} ({'; '.join(matched)})")
        elif ccs:
            reasons.append(f"compute capability {ccs} is supported by CUDA {build.cuda_version}")
    return problems, lacking


def _code_problem(
    build: OrtBuild,
    host: HostFacts,
    cc: str,
    code: tuple[tuple[str, ...], tuple[str, ...]],
    notes: list[str],
    where: str,
    driver_cuda: str | None,
) -> tuple[str | None, str | None]:
    """(why the build's GPU code does not run on `cc`, or None; the code that runs). PTX runs by JIT only
    under a driver that supports the build's CUDA (`driver_cuda`, None: unknown)."""
    kernels, ptx = code
    cubin, jit = gpu_code_for(kernels, ptx, cc)
    if cubin:
        return None, cubin
    tag = host.platform.tag
    if not kernels and not ptx:
        return f"{build.ort_version}'s {tag} wheels hold no CUDA provider with GPU code", None
    if jit is None:
        return (
            f"{build.ort_version} has no kernels for compute capability {cc} ({code_summary(kernels, ptx)}"
            f"{'' if tag == 'linux-x86_64' else ', ' + tag})",
            None,
        )
    full = driver_cuda is not None and vtuple(driver_cuda)[:2] >= vtuple(build.cuda_version)[:2]
    if host.driver.present and driver_cuda and not full:
        return (
            f"{build.ort_version} has no kernels for compute capability {cc}, only {jit} PTX, which the driver "
            f"JIT-compiles only when it supports CUDA {build.cuda_version}; {where}'s supports CUDA "
            f"{driver_cuda} (PTX does not run through minor-version compatibility)",
            None,
        )
    notes.append(
        f"{build.ort_version} has no kernels for compute capability {cc} ({where}): the driver JIT-compiles its "
        f"{jit} PTX on the first session (slow once, then cached)"
        + ("" if full else f"; that needs a driver for CUDA {build.cuda_version} or newer")
    )
    return None, jit


def _cc_problem(build: OrtBuild, cc: str, release: CudaRelease, matrix: Matrix) -> str | None:
    supported = release.compute_capabilities
    if not supported or cc in supported:
        return None
    ordered = sorted(supported, key=vtuple)
    if vtuple(cc) < vtuple(ordered[0]):
        return (
            f"CUDA {build.cuda_major} builds do not support compute capability {cc} (CUDA {release.version} "
            f"supports {ordered[0]} to {ordered[-1]})"
        )
    if vtuple(cc) > vtuple(ordered[-1]):
        first = first_cuda_release_for_cc(matrix, cc)
        later = f"; CUDA {first.version} is the first release that does" if first else ""
        return (
            f"{short_label(build)} predates compute capability {cc}: CUDA {release.version} supports up to "
            f"{ordered[-1]}{later}"
        )
    return f"CUDA {release.version} does not support compute capability {cc}"


def _system_library_problems(build: OrtBuild, host: HostFacts, who: str, notes: list[str]) -> list[str]:
    """--cuda-libraries system on a probed host: every CUDA library the provider links, and its cuDNN, must be
    on the loader path already; a build whose session would fail there is rejected."""
    if not host.libraries:
        return []  # described by flags: nothing probed (a note says what must be there)
    windows = host.platform.os == "windows"
    needs = provider_needs(build, host.platform.tag)
    names = needs if needs is not None else build.libraries_linked
    wanted: dict[tuple[str, str], str] = {}
    for name in names:
        found = match_library(name, windows) or soname_of(name)
        if found and found[1] and found[0] != "cuda":
            wanted.setdefault((found[0], found[1]), name)
    if build.cudnn_version:
        number = str(major(build.cudnn_version))
        wanted.setdefault(("cudnn", number), f"cuDNN {number}")
    present = {(hit.library, hit.major) for hit in host.libraries}
    missing = [name for key, name in wanted.items() if key not in present]
    if not missing:
        return []
    return [
        f"--cuda-libraries system: {short_label(build)} needs {', '.join(missing)}, not on {who}'s loader path "
        f"(found: {_found_libraries(host)}): its session would fail"
    ]


def _overwrite_problems(build: OrtBuild, host: HostFacts, who: str, matrix: Matrix) -> list[str]:
    """NVIDIA wheels the build would install whose files land on those of an installed distribution that stays
    (torch's nvidia-cudnn-cu12 and nvidia-cudnn-cu13 both install nvidia/cudnn/lib/libcudnn.so.9): installing
    one overwrites the other's files, and removing either later deletes them. The installed side from the
    target's RECORDs (or, for an older host file, the matrix's record of that version), the planned side from
    the matrix's record of the package's newest version for the platform."""
    if not host.nvidia_wheels:
        return []
    tag = host.platform.tag
    major_record = cuda_major(matrix, build.cuda_major)
    installed = {wheel.name for wheel in host.nvidia_wheels}
    problems = []
    for package, spec in _with_transitive_libraries(_needed_packages(build, major_record), major_record):
        if package in installed:
            continue  # the same distribution: kept, or upgraded in place by the installer
        planned = _planned_files(matrix, package, spec, build.cuda_major, tag)
        if planned is None:
            continue
        mine = set(planned.files)
        for other in host.nvidia_wheels:
            recorded = wheel_files(matrix, other.name, tag, other.version)
            theirs = set(other.files) if other.files is not None else set(recorded.files if recorded else ())
            clash = sorted(mine & theirs)
            if clash:
                example = clash[0] + (", ..." if len(clash) > 1 else "")
                problems.append(
                    f"{short_label(build)} would install {package}, whose files are those of {who}'s installed "
                    f"{other.name} {other.version} ({len(clash)} files: {example}): installing it overwrites "
                    f"them (a build for CUDA {other.cuda_major or '?'} reuses {other.name}; a fresh venv has none)"
                )
    return problems


def _planned_files(matrix: Matrix, package: str, spec: str, cuda_major_number: int, tag: str) -> WheelFiles | None:
    """The recorded files of the newest version of `package` the build's requirement allows (for its CUDA major)
    that has them for platform `tag`: what installing it puts in site-packages."""
    versions = sorted(
        (w.version for w in recorded_wheels(matrix, package, spec, cuda_major_number)), key=vtuple, reverse=True
    )
    for version in versions:
        record = wheel_files(matrix, package, tag, version)
        if record is not None:
            return record
    return None


def _closure_problems(build: OrtBuild, host: HostFacts, who: str, matrix: Matrix) -> list[str]:
    """A build whose CUDA provider (as read from its wheel for the host's platform) imports a library that none of
    the NVIDIA wheels it needs installs (by their recorded files), nor the driver or the OS: it would not load.
    Judged only where every needed package's files are recorded (else the plan says what was not checked)."""
    tag = host.platform.tag
    needs = provider_needs(build, tag)
    if needs is None:
        return []
    major_record = cuda_major(matrix, build.cuda_major)
    files: dict[str, tuple[str, ...]] = {}
    for package, spec in _with_transitive_libraries(_needed_packages(build, major_record), major_record):
        record = _planned_files(matrix, package, spec, build.cuda_major, tag)
        if record is None:
            return []
        files[package] = record.files
    proof = closure(tag, needs, files)
    if proof.complete:
        return []
    return [
        f"{short_label(build)}'s CUDA provider on {tag} imports {', '.join(proof.missing)}, which none of the NVIDIA "
        f"wheels it needs installs, nor the driver or the OS: it would not load ({who})"
    ]


def _found_libraries(host: HostFacts) -> str:
    found = sorted({f"{hit.library} {hit.major}" for hit in host.libraries if hit.major and hit.library != "cuda"})
    return ", ".join(found) or "no CUDA library"


# --- preference -----------------------------------------------------------------------------------------


def _existing_libraries(hosts: tuple[HostFacts, ...], matrix: Matrix) -> _Existing:
    found = _Existing()
    same_major = cuda_major_libraries(matrix)  # cudart, cublas, nvrtc: their major is the CUDA major
    for host in hosts:
        if host.torch and host.torch.cuda_version:
            found.add_cuda(major(host.torch.cuda_version), f"torch {host.torch.version}")
        for wheel in host.nvidia_wheels:
            found.wheels.setdefault(wheel.name, set()).add(wheel.version)
            if wheel.cuda_major is None:
                continue
            if wheel.library == "cudnn":
                found.add_cudnn(wheel.cuda_major, str(major(wheel.version)), f"{wheel.name} {wheel.version}")
            elif wheel.library and library_of(wheel.library, same_major):
                found.add_cuda(wheel.cuda_major, f"{wheel.name} {wheel.version}")
        for hit in host.libraries:
            if not hit.major or not hit.major.isdigit():
                continue
            where = f"{hit.filename} ({hit.source})"
            if library_of(hit.library, same_major):
                found.add_cuda(int(hit.major), where)
            elif hit.library == "cudnn":
                found.add_cudnn(None, hit.major, where)
    return found


def _cudnn_major(build: OrtBuild) -> str | None:
    return str(major(build.cudnn_version)) if build.cudnn_version else None


def _reuse_score(build: OrtBuild, existing: _Existing) -> int:
    if build.cuda_major not in existing.cuda:
        return 0
    cudnn = _cudnn_major(build)
    if cudnn and ((build.cuda_major, cudnn) in existing.cudnn or (None, cudnn) in existing.cudnn):
        return 2
    return 1


def _preference(verdict: _Verdict, request: Request) -> tuple:
    build = verdict.build
    score = verdict.score if request.prefer_existing_libraries else 0
    # A build whose wheels were read to hold code for every GPU beats one judged by its CUDA release alone (a side
    # feed's, whose wheels cannot be read): the newest build that really runs wins. Same release: a build the
    # driver fully supports beats one that needs minor-version compatibility (JIT paths), then reuse of libraries
    # already present, then PyPI over a side feed, then newer CUDA.
    return (
        not verdict.unread_code,
        vtuple(build.ort_version),
        not verdict.minor_compat,
        score,
        build.index_url is None,
        vtuple(build.cuda_version),
    )


def _reuse_reasons(chosen: _Verdict, existing: _Existing, pins: list[LibraryPin]) -> list[str]:
    """Why the build matching the libraries already present won; "not installed twice" only when it is true."""
    if not chosen.score:
        return []
    build = chosen.build
    sources = existing.cuda.get(build.cuda_major, [])
    text = (
        f"the CUDA {build.cuda_major} build is preferred: CUDA {build.cuda_major} libraries are already "
        f"present ({', '.join(sources[:3])})"
    )
    cudnn = _cudnn_major(build)
    if chosen.score > 1 and cudnn:
        where = existing.cudnn.get((build.cuda_major, cudnn)) or existing.cudnn.get((None, cudnn)) or []
        text += f", and cuDNN {cudnn} ({', '.join(where[:2])})"
    reused = [f"{pin.package} {pin.version}" for pin in pins if pin.reason == REUSED_PIN_REASON]
    if len(reused) == len(pins):
        return [text + ", so they are not installed twice"]
    if reused:
        return [text + f"; the plan reuses {', '.join(reused)} and installs the other NVIDIA wheels it pins"]
    return [text + "; they are not reused as they are: the plan installs the NVIDIA wheels it pins"]


def _missed_reuse_notes(chosen: _Verdict, runnable: list[_Verdict], existing: _Existing, request: Request) -> list[str]:
    """Say when an older release would have reused the libraries already there."""
    if chosen.score or not existing.cuda or request.cuda:
        return []
    better = [v for v in runnable if v.score > 0]
    if not better:
        return []
    alt = better[0].build
    present = ", ".join(f"CUDA {m}" for m in sorted(existing.cuda))
    return [
        f"the {present} libraries already present are not reused: {chosen.build.ort_version} is built for "
        f"CUDA {chosen.build.cuda_version}; `--cuda {alt.cuda_major}` picks {short_label(alt)}, which reuses "
        f"them"
    ]


def _choice_reason(build: OrtBuild, hosts: tuple[HostFacts, ...], matrix: Matrix, request: Request) -> str:
    who = "this host" if len(hosts) == 1 else f"all {len(hosts)} hosts"
    pins = [f"--ort {request.ort}" if request.ort else "", f"--cuda {request.cuda}" if request.cuda else ""]
    pinned = " and ".join(p for p in pins if p)
    if pinned:
        return f"{build.label} is the newest build matching {pinned} that runs on {who}"
    return f"{build.label} is the newest build in the matrix (dated {matrix.date}) that runs on {who}"


# --- libraries, flavours, steps -------------------------------------------------------------------------


def _split_requirement(text: str) -> tuple[str, str]:
    """("nvidia-cudnn-cu13", "~=9.0") from "nvidia-cudnn-cu13~=9.0; sys_platform == 'linux'"."""
    body = text.split(";", 1)[0].strip()
    index = 0
    while index < len(body) and (body[index].isalnum() or body[index] in "-_."):
        index += 1
    name = body[:index]
    rest = body[index:].strip()
    if rest.startswith("["):
        rest = rest[rest.find("]") + 1 :].strip()
    return name, rest


def _needed_packages(build: OrtBuild, major_record: CudaMajor | None) -> list[tuple[str, str]]:
    """(pip package, specifier) of the NVIDIA libraries the build needs."""
    if build.requirements:
        return [_split_requirement(r) for r in build.requirements]
    names = (major_record.pip_packages or {}) if major_record else {}
    if not names:
        return []
    sonames = build.libraries_linked + build.libraries_lazy
    keys: list[str] = []
    for soname in sonames:
        match = library_of(soname, names)
        if match and match not in keys:
            keys.append(match)
    if not sonames:
        keys = [k for k in names if k != "cudnn" or build.cudnn_version]
    return [(names[k], "") for k in keys]


def _with_transitive_libraries(needed: list[tuple[str, str]], major_record: CudaMajor | None) -> list[tuple[str, str]]:
    """Add nvJitLink when the CUDA major has a wheel for it: the cuBLAS/cuFFT/cuSPARSE wheels depend on it, and
    left unpinned pip takes the newest CUDA minor, which the host's driver may not support."""
    names = (major_record.pip_packages or {}) if major_record else {}
    jitlink = names.get("nvjitlink")
    pulls_it = any(package in (names.get("cublas"), names.get("cufft")) for package, _ in needed)
    if jitlink and pulls_it and all(package != jitlink for package, _ in needed):
        return [*needed, (jitlink, "")]
    return needed


def _library_pins(
    build: OrtBuild, hosts: tuple[HostFacts, ...], matrix: Matrix, existing: _Existing
) -> tuple[list[LibraryPin], list[str], list[str], str | None]:
    """Exact pins (and their requirement strings) for the build's NVIDIA libraries."""
    major_record = cuda_major(matrix, build.cuda_major)
    caps = [c for c in (driver_cuda_version(h, matrix) for h in hosts) if c]
    cap = min(caps, key=vtuple) if caps else None
    pins: list[LibraryPin] = []
    requirements: list[str] = []
    notes: list[str] = []
    beyond: list[str] = []
    replaced: list[str] = []
    cudnn_version = build.cudnn_version
    targets = _wheel_targets(hosts)
    for package, spec in _with_transitive_libraries(_needed_packages(build, major_record), major_record):
        recorded = list(recorded_wheels(matrix, package, spec, build.cuda_major))
        wheels = [w for w in recorded if _available_everywhere(w, targets)]
        missing = {w.version for w in recorded} - {w.version for w in wheels}
        pin = _reused_pin(build, package, spec, wheels, existing, missing)
        if pin is None:
            pin = _choose_wheel(build, package, wheels, cap, matrix.date)
            if pin is not None and missing:
                skipped = _choose_wheel(build, package, recorded, cap, matrix.date)
                pin = _say_skipped(pin, skipped, recorded, targets)
            installed = sorted(existing.wheels.get(package, set()))
            if pin is not None and installed and pin.version not in installed:
                replaced.append(f"{package} {', '.join(installed)}")
        if pin is None:
            requirements.append(package + spec)
            if recorded:
                platforms = " and ".join(sorted({tag for tag, _ in targets}))
                notes.append(
                    f"no version of {package}{spec} recorded in the matrix has a wheel for {platforms} "
                    f"(every target host): left to pip as {package + spec!r}; if pip finds none, install "
                    f"the library from NVIDIA's installer and plan with --cuda-libraries system"
                )
            else:
                notes.append(
                    f"no exact version of {package} is recorded in the matrix: left to pip as {package + spec!r}"
                )
            continue
        pins.append(pin)
        requirements.append(f"{pin.package}=={pin.version}")
        if library_of_package(matrix, package) == "cudnn" or "cudnn" in package:
            cudnn_version = pin.version
        if cap and "minor-version compatibility" in pin.reason:
            beyond.append(f"{pin.package} {pin.version}")
    if replaced:
        notes.append(
            f"installed {', '.join(replaced)} {'is' if len(replaced) == 1 else 'are'} older than the CUDA "
            f"{build.cuda_version} the build needs and will be replaced; packages that pin the old version "
            f"(torch does) make pip warn, but keep working: a newer CUDA minor runs older code"
        )
    if beyond:
        notes.append(
            f"{', '.join(beyond)}: CUDA {build.cuda_version} libraries (what the build needs), newer "
            f"than the CUDA {cap} the driver supports"
        )
    return pins, requirements, notes, cudnn_version


def _closure_lines(
    build: OrtBuild,
    hosts: tuple[HostFacts, ...],
    matrix: Matrix,
    pins: list[LibraryPin],
    requirements: list[str],
    request: Request,
) -> tuple[list[str], list[str]]:
    """(reasons, notes): per target platform, whether every library the CUDA provider imports (read from the
    wheel) is supplied by the planned NVIDIA wheels (their recorded files) or by the driver and the OS."""
    if request.cuda_libraries != "wheels":
        return [], []
    reasons: list[str] = []
    notes: list[str] = []
    pinned = {pin.package: pin.version for pin in pins}
    packages = [_split_requirement(r) for r in requirements]
    for tag in dict.fromkeys(host.platform.tag for host in hosts):
        needs = provider_needs(build, tag)
        if needs is None:
            continue
        files: dict[str, tuple[str, ...]] = {}
        for package, spec in packages:
            record = (
                wheel_files(matrix, package, tag, pinned[package])
                if package in pinned
                else _planned_files(matrix, package, spec, build.cuda_major, tag)
            )
            if record is not None:
                files[f"{package} {pinned.get(package, record.versions[-1])}"] = record.files
        proof = closure(tag, needs, files)
        if proof.complete:
            reasons.append(
                f"every library the {build.ort_version} CUDA provider imports on {tag} is supplied: {proof.summary()}"
            )
        else:
            notes.append(
                f"the {build.ort_version} CUDA provider on {tag} imports {', '.join(proof.missing)}, which no planned "
                f"NVIDIA wheel installs (by the matrix's record of their files): it will not load until "
                f"{'they are' if len(proof.missing) > 1 else 'it is'} on the loader path"
            )
    return reasons, notes


def _wheel_targets(hosts: tuple[HostFacts, ...]) -> list[tuple[str, str | None]]:
    """(platform tag, glibc) of every host, once each: a pinned wheel must install on all of them."""
    targets: list[tuple[str, str | None]] = []
    for host in hosts:
        target = (host.platform.tag, host.platform.glibc if host.platform.os == "linux" else None)
        if target not in targets:
            targets.append(target)
    return targets


def _say_skipped(
    pin: LibraryPin,
    skipped: LibraryPin | None,
    recorded: list[LibraryWheel],
    targets: list[tuple[str, str | None]],
) -> LibraryPin:
    """The pin, its reason naming the version that would have been chosen but does not install on a target."""
    row = next((w for w in recorded if skipped and w.version == skipped.version), None)
    if skipped is None or row is None or skipped.version == pin.version:
        return pin
    lacking = [tag for tag, _ in targets if not row.available_on(tag)]
    why = f"has no wheel for {' or '.join(lacking)}" if lacking else f"needs glibc >= {row.glibc_min}"
    return LibraryPin(pin.package, pin.version, f"{pin.reason}; {skipped.version} {why}")


def _available_everywhere(wheel: LibraryWheel, targets: list[tuple[str, str | None]]) -> bool:
    """The version has a wheel for every target (rows without platforms count as available)."""
    return all(wheel.available_on(tag, glibc) for tag, glibc in targets)


def _library_platform_problems(
    build: OrtBuild, host: HostFacts, who: str, matrix: Matrix, request: Request
) -> list[str]:
    """NVIDIA library wheels the build needs that have no recorded version for the host's platform."""
    tag = host.platform.tag
    if request.cuda_libraries == "system" or not any(p.platform == tag for p in build.platforms):
        return []  # no libraries to install, or no onnxruntime-gpu wheel to begin with (said already)
    glibc = host.platform.glibc if host.platform.os == "linux" else None
    problems = []
    for package, spec in _needed_packages(build, cuda_major(matrix, build.cuda_major)):
        recorded = recorded_wheels(matrix, package, spec, build.cuda_major)
        if recorded and not any(w.available_on(tag, None) for w in recorded):
            offered = sorted({p for w in recorded for p in w.platforms})
            problems.append(
                f"{short_label(build)} needs {package}{spec}, which has no {tag} wheel ({who}; its wheels are "
                f"for {', '.join(offered)}): pick another build, or install CUDA/cuDNN from NVIDIA's "
                f"installers and plan with --cuda-libraries system"
            )
        elif recorded and glibc and not any(w.available_on(tag, glibc) for w in recorded):
            floor = min((w.glibc_min for w in recorded if w.glibc_min), key=vtuple)
            problems.append(
                f"{short_label(build)} needs {package}{spec}, whose {tag} wheels need glibc >= {floor}; "
                f"{who} has {glibc}"
            )
    return problems


def _reused_pin(
    build: OrtBuild,
    package: str,
    spec: str,
    wheels: list[LibraryWheel],
    existing: _Existing,
    unavailable: set[str] | None = None,
) -> LibraryPin | None:
    """The installed version, when every host agrees on it, it is new enough for the build and every
    target platform has a wheel of it (`unavailable`: recorded versions some target has no wheel for)."""
    versions = existing.wheels.get(package, set())
    if len(versions) != 1:
        return None
    version = next(iter(versions))
    if not satisfies(version, spec) or version in (unavailable or set()):
        return None
    known = next((w for w in wheels if w.version == version), None)
    if known is None and wheels:
        return None  # not in the matrix: its CUDA release is unknown
    per_release = known is not None and len(vtuple(known.cuda_version)) > 1
    if per_release and known and vtuple(known.cuda_version)[:2] < vtuple(build.cuda_version)[:2]:
        return None  # a CUDA 12.4 library under a CUDA 12.8 build
    return LibraryPin(package, version, REUSED_PIN_REASON)


def _choose_wheel(
    build: OrtBuild, package: str, wheels: list[LibraryWheel], cap: str | None, date: str
) -> LibraryPin | None:
    if not wheels:
        return None
    per_release = [w for w in wheels if len(vtuple(w.cuda_version)) > 1]
    if not per_release:  # cuDNN: wheels per CUDA major only
        best = max(wheels, key=lambda w: vtuple(w.version))
        return LibraryPin(
            package,
            best.version,
            f"newest {package} for CUDA {build.cuda_major} in the matrix "
            f"(dated {date}), instead of whatever is newest on install day",
        )
    built = vtuple(build.cuda_version)
    eligible = [w for w in per_release if vtuple(w.cuda_version) >= built] or per_release
    if cap is None:
        exact = [w for w in eligible if major_minor(w.cuda_version) == major_minor(build.cuda_version)]
        pool = exact or [w for w in eligible if vtuple(w.cuda_version) == min(vtuple(x.cuda_version) for x in eligible)]
        best = max(pool, key=lambda w: vtuple(w.version))
        return LibraryPin(
            package,
            best.version,
            f"CUDA {best.cuda_version} version, matching the CUDA "
            f"{build.cuda_version} the wheel was built with (driver unknown)",
        )
    within = [w for w in eligible if vtuple(w.cuda_version) <= vtuple(cap)]
    if within:
        best = max(within, key=lambda w: (vtuple(w.cuda_version), vtuple(w.version)))
        newer = [w for w in eligible if vtuple(w.cuda_version) > vtuple(cap)]
        tail = (
            (
                f"; newer CUDA {max((w.cuda_version for w in newer), key=vtuple)} versions exist "
                f"but JIT-compiled "
                f"code (NVRTC, cuDNN runtime-compiled engines) needs a driver that knows their PTX"
            )
            if newer
            else ""
        )
        return LibraryPin(
            package,
            best.version,
            f"newest version for CUDA {best.cuda_version}, which the driver (CUDA {cap}) supports{tail}",
        )
    lowest = min(vtuple(w.cuda_version) for w in eligible)
    best = max((w for w in eligible if vtuple(w.cuda_version) == lowest), key=lambda w: vtuple(w.version))
    return LibraryPin(
        package,
        best.version,
        f"CUDA {best.cuda_version} version (the oldest that fits the build); "
        f"the driver supports only CUDA {cap}, so it runs through "
        f"minor-version compatibility",
    )


def _tensorrt_problems(build: OrtBuild, matrix: Matrix, request: Request) -> list[str]:
    """Why --tensorrt cannot be served for this build, whatever the host (empty when it can)."""
    if not build.tensorrt_version:
        return [f"--tensorrt: the matrix records no TensorRT version for {short_label(build)}"]
    wanted = major(build.tensorrt_version)
    if request.tensorrt_libraries not in ("wheels", "system"):
        found = sorted({soname_major for soname_major in map(_soname_major, request.tensorrt_sonames) if soname_major})
        if wanted not in found:
            have = ", ".join(f"libnvinfer.so.{m}" for m in found) or "no libnvinfer.so.N"
            return [
                f"--tensorrt-libraries {request.tensorrt_libraries}: the {build.ort_version} TensorRT provider "
                f"links libnvinfer.so.{wanted} (TensorRT {wanted}); the folder holds {have}"
            ]
        return []
    if request.tensorrt_libraries == "system":
        return []
    release = build_tensorrt(matrix, build)
    if release is None:
        return [
            f"--tensorrt: TensorRT {build.tensorrt_version} for CUDA {build.cuda_major}, which the "
            f"{build.ort_version} TensorRT provider needs, is not in the matrix"
        ]
    if not release.packages:
        why = f" ({release.notes})" if release.notes else ""
        return [
            f"--tensorrt: TensorRT {release.version} for CUDA {build.cuda_major}, which the "
            f"{build.ort_version} TensorRT provider needs, has no pip packages{why}"
        ]
    return []


def _soname_major(soname: str) -> int | None:
    tail = soname.rpartition(".so.")[2]
    return int(tail.split(".")[0]) if tail[:1].isdigit() else None


def _tensorrt_host_problems(
    build: OrtBuild, host: HostFacts, who: str, matrix: Matrix, request: Request, notes: list[str]
) -> list[str]:
    """Why --tensorrt cannot be served on one host: its platform's wheel has no TensorRT provider, the TensorRT
    wheels exist only for other platforms or Pythons, the system's TensorRT is of another major."""
    tag = host.platform.tag
    provider = tensorrt_provider(matrix, build.ort_version, tag)
    if provider is None:
        notes.append(
            f"--tensorrt: whether the {tag} wheel of {build.ort_version} has a TensorRT provider is not recorded "
            f"in the matrix; `ortprov verify --provider tensorrt` proves it"
        )
    elif provider.library is None:
        return [f"--tensorrt: the {tag} wheel of {build.ort_version} has no TensorRT provider ({who} is {tag})"]
    if request.tensorrt_libraries == "system":
        found = {hit.major for hit in host.libraries if hit.library == "nvinfer" and hit.major}
        wanted = str(major(build.tensorrt_version)) if build.tensorrt_version else None
        if wanted and found and wanted not in found:
            return [
                f"--tensorrt-libraries system: {who} has TensorRT {', '.join(sorted(found))} on the loader path; "
                f"the {build.ort_version} TensorRT provider links libnvinfer.so.{wanted}"
            ]
        return []
    if request.tensorrt_libraries != "wheels":
        return []
    release = build_tensorrt(matrix, build)
    if release is None or not release.packages:
        return []
    if release.platforms and tag not in release.platforms:
        return [
            f"--tensorrt: {', '.join(release.packages)} has wheels for {', '.join(release.platforms)} only "
            f"({who} is {tag})"
        ]
    if release.python and host.python is not None and host.python.minor.rstrip("t") not in release.python:
        return [
            f"--tensorrt: {', '.join(release.packages)} has wheels for Python {release.python[0]} to "
            f"{release.python[-1]} only ({who} has Python {host.python.minor})"
        ]
    return []


def _tensorrt_version(release: TensorRTRelease | None, request: Request) -> str | None:
    """The TensorRT version the plan installs (its packages' version); the major a system/folder TensorRT has."""
    if release is None:
        return None
    if request.tensorrt_libraries == "wheels":
        return release.version
    return str(release.major)


def _tensorrt_source(release: TensorRTRelease | None, request: Request) -> str | None:
    if release is None:
        return None
    if request.tensorrt_libraries != "wheels":
        return request.tensorrt_libraries
    return request.tensorrt_index_url or release.index_url or "PyPI"


def _tensorrt_reason(build: OrtBuild, release: TensorRTRelease, request: Request) -> str:
    linked = f"the {build.ort_version} TensorRT provider was built against TensorRT {build.tensorrt_version}"
    if request.tensorrt_libraries == "system":
        return f"--tensorrt: TensorRT {release.major} from the system's loader path; {linked}"
    if request.tensorrt_libraries != "wheels":
        return f"--tensorrt: TensorRT {release.major} from {request.tensorrt_libraries}; {linked}"
    where = request.tensorrt_index_url or release.index_url or "PyPI"
    return (
        f"--tensorrt: {', '.join(release.packages)} (exact pins, the newest installable TensorRT "
        f"{release.major} for CUDA {release.cuda_major}, from {where}); {linked}, and TensorRT keeps its ABI "
        f"within a major (never TensorRT {release.major + 1} for a provider that links "
        f"libnvinfer.so.{release.major})"
    )


def _tensorrt_notes(
    build: OrtBuild, release: TensorRTRelease, hosts: tuple[HostFacts, ...], matrix: Matrix, request: Request
) -> list[str]:
    if request.tensorrt_libraries == "system":
        return [
            f"--tensorrt-libraries system: libnvinfer.so.{release.major} and libnvonnxparser.so.{release.major} must "
            f"be on the loader path (a TensorRT {release.major} container or tarball in ld.so.conf / "
            "LD_LIBRARY_PATH); nothing of TensorRT is installed"
        ]
    if request.tensorrt_libraries != "wheels":
        return [
            f"--tensorrt-libraries {request.tensorrt_libraries}: the loader hook loads libnvinfer.so."
            f"{release.major} and its siblings from that folder when onnxruntime is imported"
        ]
    plain = (
        f"onnxruntime.preload_dlls() does not load TensorRT: where the loader hook is not installed, code must "
        f"`import {release.library_dir}` (its __init__ loads the libraries) before creating the session"
        if release.library_dir == "tensorrt_libs"
        else f"onnxruntime.preload_dlls() does not load TensorRT: where the loader hook is not installed, the "
        f"folder site-packages/{release.library_dir or 'tensorrt'} must be on LD_LIBRARY_PATH"
    )
    if not release.index_url:
        return [plain]
    mirror = request.tensorrt_index_url
    return [
        plain,
        f"--tensorrt: PyPI holds only source stubs of {', '.join(release.packages)} (they download the real "
        f"wheel from {release.index_url} while pip builds them); the plan installs the real wheels from "
        f"{mirror or release.index_url} with --only-binary, so an unreachable index fails at once instead of "
        "in a stub build"
        + (f"; the mirror is also handed to any stub as WHEEL_STUB_PIP_INDEX_URL={mirror}" if mirror else ""),
    ]


def _tensorrt_steps(release: TensorRTRelease | None, request: Request) -> tuple[Step, ...]:
    """The TensorRT packages that live behind another index: a step of their own, from that index only, never
    built from a stub (the CLI form of uv's explicit index pinned to those packages). PyPI's real wheels
    (TensorRT 8) go with the main step."""
    if release is None or not release.packages or not release.index_url:
        return ()
    source = request.tensorrt_index_url or release.index_url
    names = tuple(requirement_name(package) for package in release.packages)
    return (
        Step(
            "install",
            release.packages,
            f"TensorRT {release.version} for CUDA {release.cuda_major}: the real wheels, from {source} only "
            "(PyPI has only source stubs of them)",
            index_url=source,
            only_binary=names,
            environment=(f"WHEEL_STUB_PIP_INDEX_URL={request.tensorrt_index_url}",)
            if request.tensorrt_index_url
            else (),
        ),
    )


def _conflicting_flavours(
    build: Planned, targets: Sequence[Installed], pins: Sequence[LibraryPin] = ()
) -> list[tuple[str, str]]:
    """(distribution, why) for everything removed before the install steps run: every installed onnxruntime
    flavour that is not exactly the chosen build; the chosen build itself where its files are incomplete or
    where removing another flavour takes the onnxruntime/ files both list (the install step then reinstalls
    it: left installed, pip and uv would call it satisfied with its files gone); a pinned NVIDIA wheel whose
    files are incomplete."""
    found: dict[str, str] = {}
    pinned = {pin.package: pin.version for pin in pins}
    for target in targets:
        removed: dict[str, str] = {}
        planned: OrtDist | None = None
        for dist in target.onnxruntime:
            if dist.name == build.package:
                planned = dist
                replaced = _why_replaced(dist, build)
                if replaced:
                    removed[dist.name] = replaced
            elif dist.name == "onnxruntime":
                removed[dist.name] = (
                    f"the CPU package onnxruntime {dist.version} shadows {build.package}: both install the "
                    f"onnxruntime module"
                )
            else:
                removed[dist.name] = (
                    f"{dist.name} {dist.version} installs the same onnxruntime module as {build.package}"
                )
        if planned is not None and removed and planned.name not in removed:
            removed[planned.name] = (
                f"removing {' and '.join(sorted(removed))} deletes the onnxruntime/ files {planned.name} "
                f"{planned.version} shares with it: {planned.name} is removed too, and installed afresh"
            )
        for wheel in target.nvidia_wheels:
            if wheel.missing_files and pinned.get(wheel.name) == wheel.version:
                removed[wheel.name] = (
                    f"the installed {wheel.name} {wheel.version} is {_incomplete(wheel.missing_files)}"
                )
        for name, why in removed.items():
            found.setdefault(name, why)
    return sorted(found.items())


def _why_replaced(dist: OrtDist, build: Planned) -> str | None:
    """Why the installed distribution of the planned package must go (None: it is exactly the planned one)."""
    if dist.version != build.ort_version:
        return f"{dist.name} {dist.version} is replaced by {build.ort_version}"
    if dist.missing_files:
        return f"the installed {dist.name} {dist.version} is {_incomplete(dist.missing_files)}"
    if dist.cuda_version and major_minor(dist.cuda_version) != major_minor(build.cuda_version):
        return (
            f"the installed {dist.name} {dist.version} is the CUDA {dist.cuda_version} build; pip would "
            f"keep it as 'already satisfied'"
        )
    if not dist.cuda_version and build.index_url:
        return (
            f"the installed {dist.name} {dist.version} may be another CUDA build; the planned one comes "
            f"from {build.index_url}"
        )
    return None


def _incomplete(missing: MissingFiles) -> str:
    return f"incomplete ({missing}): removed and installed afresh"


def retarget(plan: Plan, targets: Sequence[Installed]) -> Plan:
    """A plan for the environment it is carried out in (a saved one, or one made from flags or host files
    without looking at the target): its uninstall step recomputed from what `targets` have installed, by the
    rules `make_plan` uses, and a loader hook the plan does not install removed. No targets: nothing is
    installed (a venv about to be created), so nothing is removed."""
    removals = _conflicting_flavours(plan, targets, plan.pins)
    uninstall = _uninstall_step(removals)
    others = tuple(step for step in plan.steps if step.kind not in ("uninstall", REMOVE_LOADER_HOOK))
    installs_hook = any(step.kind == LOADER_HOOK for step in plan.steps)
    if not installs_hook and any(target.python is not None and target.python.loader_hook for target in targets):
        others += (_hook_removal("the plan installs no loader hook"),)
    return replace(plan, steps=(uninstall, *others) if uninstall else others)


def _system_library_notes(build: OrtBuild, hosts: tuple[HostFacts, ...]) -> list[str]:
    """--cuda-libraries system: what must already be on the loader path, and which probed host lacks it."""
    cudnn = f" and cuDNN {build.cudnn_version}" if build.cudnn_version else ""
    notes = [
        f"--cuda-libraries system: no NVIDIA wheels are installed; CUDA {build.cuda_major}{cudnn} libraries must "
        f"already be on the loader path (an nvidia/cuda cudnn image, or the CUDA toolkit and cuDNN installed "
        f"system-wide); `ortprov verify --static` checks that they resolve"
    ]
    for index, host in enumerate(hosts):
        if host.libraries:
            notes.append(
                f"{host_name(host, index, len(hosts))} has every library the CUDA provider links, and cuDNN, on its "
                f"loader path ({_found_libraries(host)})"
            )
    return notes


def _steps(
    build: OrtBuild,
    uninstall: list[tuple[str, str]],
    libraries: list[str],
    tensorrt: TensorRTRelease | None,
    *,
    extras: bool = True,
) -> tuple[Step, ...]:
    first = _uninstall_step(uninstall)
    steps: list[Step] = [first] if first else []
    extras_text = f"[{','.join(build.extras)}]" if build.extras and extras else ""
    ort = f"{build.package}{extras_text}=={build.ort_version}"
    on_pypi = tensorrt.packages if tensorrt and not tensorrt.index_url else ()  # behind an index: its own step
    extra_packages = [*libraries, *on_pypi]
    if build.index_url is None:
        steps.append(
            Step(
                "install",
                (ort, *extra_packages),
                f"{build.label} with exactly pinned NVIDIA libraries" if libraries else build.label,
            )
        )
        return tuple(steps)
    # PyPI publishes a same-numbered build for another CUDA major: taken from both indexes, pip could pick
    # either. So the package comes from its feed alone, without dependencies; the next step, from PyPI, finds
    # it installed and adds its dependencies and the NVIDIA libraries.
    steps.append(
        Step(
            "install",
            (f"{build.package}=={build.ort_version}",),
            f"{build.label} from its own package index only (PyPI has a same-numbered build for another CUDA)",
            index_url=build.index_url,
            no_deps=True,
        )
    )
    steps.append(
        Step(
            "install",
            (ort, *extra_packages),
            "its dependencies" + (" and the exactly pinned NVIDIA libraries" if libraries else "") + ", from PyPI",
        )
    )
    return tuple(steps)


def plain_code_line(build: OrtBuild, windows: bool) -> str:
    """What code without the loader hook must do so that onnxruntime finds the NVIDIA wheels' libraries."""
    if build.preload_dlls:
        return "`import onnxruntime; onnxruntime.preload_dlls()` before the first InferenceSession"
    listing = (
        "import glob, os, sysconfig; print(os.pathsep.join(glob.glob(os.path.join("
        f"sysconfig.get_paths()['purelib'], 'nvidia', '*', '{'bin' if windows else 'lib'}'))))"
    )
    if windows:
        return f'before starting Python (PowerShell): `$env:PATH = (python -c "{listing}") + ";" + $env:PATH`'
    return f'before starting Python: `export LD_LIBRARY_PATH="$(python -c "{listing}"):$LD_LIBRARY_PATH"`'


def _loader_hook(build: OrtBuild, hosts: tuple[HostFacts, ...], request: Request) -> tuple[tuple[Step, ...], list[str]]:
    """The loader-hook step (NVIDIA wheels planned), its removal (a hook no longer wanted), or a note saying
    what plain code must do instead (--no-loader-hook)."""
    has_hook = any(host.python is not None and host.python.loader_hook for host in hosts)
    windows = bool(hosts) and hosts[0].platform.os == "windows"
    line = plain_code_line(build, windows)
    if request.cuda_libraries == "wheels" and request.loader_hook:
        description = (
            "a plain `import onnxruntime` then finds the NVIDIA wheels' libraries (the CUDA provider has no path "
            "to site-packages/nvidia): no change to your code, no environment variable, no `import torch`. "
            f"Where ortprov does not run, the code must do it itself: {line}"
        )
        return (Step(LOADER_HOOK, (), description),), []
    notes = []
    if request.cuda_libraries == "wheels":
        notes.append(
            "--no-loader-hook: a plain `import onnxruntime` does not find the NVIDIA wheels' libraries and runs "
            f"on the CPU; your code must do this itself: {line}"
        )
    if not has_hook:
        return (), notes
    why = "CUDA and cuDNN come from the system" if request.cuda_libraries == "system" else "--no-loader-hook"
    return (_hook_removal(why),), notes


def _hook_removal(why: str) -> Step:
    return Step(REMOVE_LOADER_HOOK, (), f"{why}: the loader hook an earlier apply installed goes")


def _uninstall_step(removals: list[tuple[str, str]]) -> Step | None:
    if not removals:
        return None
    return Step("uninstall", tuple(name for name, _ in removals), "; ".join(why for _, why in removals))


# --- rejections -----------------------------------------------------------------------------------------


def _rejections_for_plan(
    chosen: _Verdict, verdicts: list[_Verdict], hosts: tuple[HostFacts, ...] = ()
) -> list[Rejection]:
    """Candidates newer than (or as new as) the chosen one that lost, and why (a loser without GPU code for a
    host's GPU names the code the chosen build has for it)."""
    newest = vtuple(chosen.build.ort_version)
    out: list[Rejection] = []
    for verdict in verdicts:
        if verdict is chosen or vtuple(verdict.build.ort_version) < newest:
            continue
        if verdict.problems:
            reason = "; ".join(verdict.problems)
            has = _code_it_has(chosen.build, verdict.missing_code, hosts)
            out.append(Rejection(verdict.build.label, reason + (f"; {has}" if has else "")))
        elif verdict.unread_code and not chosen.unread_code:
            ccs = ", ".join(sorted({cc for _, cc in verdict.unread_code}, key=vtuple))
            has = _code_it_has(chosen.build, verdict.unread_code, hosts)
            out.append(
                Rejection(
                    verdict.build.label,
                    f"its CUDA release supports compute capability {ccs}, but its wheels were not read (a side "
                    f"feed's): whether they hold code for it is unknown; {has or short_label(chosen.build)} "
                    f"(read from its wheels)",
                )
            )
        elif verdict.build.ort_version == chosen.build.ort_version:
            out.append(
                Rejection(
                    verdict.build.label,
                    f"runs, but {short_label(chosen.build)} is preferred: {_why_preferred(chosen, verdict)}",
                )
            )
    return out


def _code_it_has(build: OrtBuild, missing: tuple[tuple[int, str], ...], hosts: tuple[HostFacts, ...]) -> str:
    """ "1.28.0 has sm_100a": the chosen build's code for the compute capabilities a loser lacks."""
    said = []
    for index, cc in missing:
        if index >= len(hosts):
            continue
        code = build_gpu_code(build, hosts[index].platform.tag)
        if code is None:
            continue
        cubin, jit = gpu_code_for(code[0], code[1], cc)
        has = cubin or (f"{jit} PTX" if jit else None)
        if has:
            said.append(f"{build.ort_version} has {has}" + (f" for {cc}" if len(missing) > 1 else ""))
    return ", ".join(_unique(said))


def _why_preferred(chosen: _Verdict, loser: _Verdict) -> str:
    if loser.minor_compat and not chosen.minor_compat:
        return "the driver supports its CUDA fully, without minor-version compatibility"
    if chosen.score > loser.score:
        return "it reuses CUDA libraries already present"
    if chosen.build.index_url is None and loser.build.index_url is not None:
        return "it is on PyPI, not a side index"
    return "it is built for a newer CUDA"


def _no_plan(verdicts: list[_Verdict], hosts: tuple[HostFacts, ...], request: Request) -> NoCompatiblePlan:
    rejected = [Rejection(v.build.label, "; ".join(v.problems)) for v in verdicts]
    pinned = (
        " matching "
        + " and ".join(
            p
            for p in (
                f"--ort {request.ort}" if request.ort else "",
                f"--cuda {request.cuda}" if request.cuda else "",
            )
            if p
        )
        if (request.ort or request.cuda)
        else ""
    )
    would = _what_would_run(verdicts, hosts)
    if len(hosts) == 1:
        message = f"no onnxruntime-gpu build{pinned} runs on this host"
        first = verdicts[0].problems[0] if verdicts and verdicts[0].problems else ""
        hint = "\n      ".join(([f"the newest candidate: {first}"] if first else []) + would) or None
        return NoCompatiblePlan(message, rejected=rejected, hint=hint)
    counts = [sum(1 for v in verdicts if i in v.blocking_hosts) for i in range(len(hosts))]
    worst = max(counts)
    blockers = [host_name(h, i, len(hosts)) for i, h in enumerate(hosts) if counts[i] == worst]
    message = (
        f"no onnxruntime-gpu build{pinned} runs on all {len(hosts)} hosts; {' and '.join(blockers)} "
        f"{'blocks' if len(blockers) == 1 else 'block'} it"
    )
    hint = "\n      ".join(["plan for the blocking host separately, or upgrade it", *would])
    return NoCompatiblePlan(message, rejected=rejected, hint=hint)


def _what_would_run(verdicts: list[_Verdict], hosts: tuple[HostFacts, ...]) -> list[str]:
    """For GPUs no candidate holds code for: the builds whose wheels do have it (rejected for other reasons),
    and the source build that would."""
    lacking = sorted({cc for v in verdicts for _, cc in v.missing_code}, key=vtuple)
    lines = []
    for cc in lacking:
        with_code = [
            v
            for v in verdicts
            if cc not in {c for _, c in v.missing_code}
            and all(build_gpu_code(v.build, h.platform.tag) is not None for h in hosts)
        ]
        if with_code:
            older = with_code[0]
            lines.append(
                f"{short_label(older.build)} holds GPU code for compute capability {cc}, but "
                f"{'; '.join(older.problems) or 'it was not chosen'}"
            )
        digits = cc.replace(".", "")
        lines.append(
            f"no release's wheels hold code that runs on compute capability {cc}: build onnxruntime from source "
            f"for it (./build.sh --use_cuda --cmake_extra_defines CMAKE_CUDA_ARCHITECTURES={digits})"
            if not with_code
            else f"or build onnxruntime from source for it (CMAKE_CUDA_ARCHITECTURES={digits})"
        )
    return lines


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


__all__ = ["make_plan", "retarget", "driver_cuda_version", "short_label", "host_name"]
