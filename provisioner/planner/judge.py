"""Judging one candidate against every host (rule 2): platform and glibc, Python, driver, the NVIDIA library wheels
for the platform, the system's libraries (--cuda-libraries system), files installed over (overwrite) and the
provider's static closure; the GPU code is gpucode.py's, TensorRT tensorrt.py's. A problem rejects the candidate,
an unknown fact becomes a note."""

from __future__ import annotations

from provisioner.closure import closure
from provisioner.matrix.query import (
    cuda_major,
    cuda_release,
    provider_needs,
    python_versions_with_wheels,
    recorded_wheels,
    wheel_files,
    windows_driver_floor,
)
from provisioner.planner.common import (
    Existing,
    Verdict,
    driver_cuda_version,
    found_libraries,
    host_name,
    short_label,
    unique,
)
from provisioner.planner.gpucode import gpu_code_problems
from provisioner.planner.libraries import needed_packages, planned_files, with_transitive_libraries
from provisioner.planner.preference import major_rank, reuse_score
from provisioner.planner.tensorrt import tensorrt_host_problems, tensorrt_problems
from provisioner.standalone.libnames import match_library, soname_of
from provisioner.versions import at_least, driver_at_least, major, vtuple

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.facts import HostFacts
    from provisioner.matrix.model import CudaMajor, CudaRelease, Matrix, OrtBuild
    from provisioner.plan import Request


def judge(
    build: OrtBuild, hosts: tuple[HostFacts, ...], matrix: Matrix, request: Request, existing: Existing
) -> Verdict:
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
        problems += tensorrt_problems(build, matrix, request)
    missing_code: list[tuple[int, str]] = []
    unread: list[tuple[int, str]] = []
    for index, host in enumerate(hosts):
        who = host_name(host, index, len(hosts))
        host_problems: list[str] = []
        if request.tensorrt:
            host_problems += tensorrt_host_problems(build, host, who, matrix, request, notes)
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
            gpu_problems, lacking = gpu_code_problems(build, host, who, release, matrix, notes, reasons)
            host_problems += gpu_problems
            missing_code += [(index, cc) for cc in lacking if not cc.startswith("?")]
            unread += [(index, cc[1:]) for cc in lacking if cc.startswith("?")]
        if host_problems:
            blocking.append(index)
            problems += host_problems
    return Verdict(
        build,
        tuple(unique(problems)),
        tuple(unique(notes)),
        tuple(unique(reasons)),
        tuple(blocking),
        reuse_score(build, existing),
        any("minor-version compatibility" in note for note in notes),
        tuple(missing_code),
        tuple(unread),
        major_rank(build, existing),
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


def driver_floors(
    matrix: Matrix, release: CudaRelease, major_record: CudaMajor | None, windows: bool
) -> tuple[str | None, str | None]:
    """(full-support floor, minor-version-compatibility floor) for the host's OS (Windows numbers its drivers
    apart: `windows_driver_floor`)."""
    if windows:
        full = windows_driver_floor(matrix, release)
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
    full, compat = driver_floors(matrix, release, major_record, host.platform.os == "windows")
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
        f"(found: {found_libraries(host)}): its session would fail"
    ]


def _library_platform_problems(
    build: OrtBuild, host: HostFacts, who: str, matrix: Matrix, request: Request
) -> list[str]:
    """NVIDIA library wheels the build needs that have no recorded version for the host's platform."""
    tag = host.platform.tag
    if request.cuda_libraries == "system" or not any(p.platform == tag for p in build.platforms):
        return []  # no libraries to install, or no onnxruntime-gpu wheel to begin with (said already)
    glibc = host.platform.glibc if host.platform.os == "linux" else None
    problems = []
    for package, spec in needed_packages(build, cuda_major(matrix, build.cuda_major)):
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
    for package, spec in with_transitive_libraries(needed_packages(build, major_record), major_record):
        if package in installed:
            continue  # the same distribution: kept, or upgraded in place by the installer
        planned = planned_files(matrix, package, spec, build.cuda_major, tag)
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
    for package, spec in with_transitive_libraries(needed_packages(build, major_record), major_record):
        record = planned_files(matrix, package, spec, build.cuda_major, tag)
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
