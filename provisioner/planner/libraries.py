"""The NVIDIA library wheels of the chosen build (rule 4): which packages it needs, their exact pins (installed
versions first, then the newest whose CUDA minor the driver supports, among versions with a wheel for every
host's platform), the files they install, the provider's closure over them, and what --cuda-libraries system
needs on the loader path instead."""

from __future__ import annotations

from provisioner.closure import closure
from provisioner.matrix.query import (
    cuda_major,
    library_of,
    library_of_package,
    provider_needs,
    provider_preloads,
    recorded_wheels,
    wheel_files,
)
from provisioner.plan import LibraryPin, Request
from provisioner.planner.common import Existing, driver_cuda_version, found_libraries, host_name
from provisioner.versions import major_minor, satisfies, vtuple

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.facts import HostFacts
    from provisioner.matrix.model import CudaMajor, LibraryWheel, Matrix, OrtBuild, WheelFiles

REUSED_PIN_REASON = "already installed; pinned to that version so it is not downloaded or replaced"


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


def needed_packages(build: OrtBuild, major_record: CudaMajor | None) -> list[tuple[str, str]]:
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


def with_transitive_libraries(needed: list[tuple[str, str]], major_record: CudaMajor | None) -> list[tuple[str, str]]:
    """Add nvJitLink when the CUDA major has a wheel for it: the cuBLAS/cuFFT/cuSPARSE wheels depend on it, and
    left unpinned pip takes the newest CUDA minor, which the host's driver may not support."""
    names = (major_record.pip_packages or {}) if major_record else {}
    jitlink = names.get("nvjitlink")
    pulls_it = any(package in (names.get("cublas"), names.get("cufft")) for package, _ in needed)
    if jitlink and pulls_it and all(package != jitlink for package, _ in needed):
        return [*needed, (jitlink, "")]
    return needed


def planned_files(matrix: Matrix, package: str, spec: str, cuda_major_number: int, tag: str) -> WheelFiles | None:
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


def library_pins(
    build: OrtBuild, hosts: tuple[HostFacts, ...], matrix: Matrix, existing: Existing
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
    for package, spec in with_transitive_libraries(needed_packages(build, major_record), major_record):
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


def closure_lines(
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
                else planned_files(matrix, package, spec, build.cuda_major, tag)
            )
            if record is not None:
                files[f"{package} {pinned.get(package, record.versions[-1])}"] = record.files
        proof = closure(tag, needs, files)
        what = (
            "imports, or onnxruntime preloads for it by name (its _ld_preload.py),"
            if provider_preloads(build, tag)
            else "imports"
        )
        if proof.complete and not proof.summary():
            notes.append(
                f"the {build.ort_version} CUDA provider on {tag} names no CUDA library the wheels were read to load: "
                f"its closure could not be checked"
            )
        elif proof.complete:
            reasons.append(
                f"every library the {build.ort_version} CUDA provider {what} on {tag} is supplied: {proof.summary()}"
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


def _reused_pin(
    build: OrtBuild,
    package: str,
    spec: str,
    wheels: list[LibraryWheel],
    existing: Existing,
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
        best = max(exact or _oldest_cuda(eligible), key=lambda w: vtuple(w.version))
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
    best = max(_oldest_cuda(eligible), key=lambda w: vtuple(w.version))
    return LibraryPin(
        package,
        best.version,
        f"CUDA {best.cuda_version} version (the oldest that fits the build); "
        f"the driver supports only CUDA {cap}, so it runs through "
        f"minor-version compatibility",
    )


def _oldest_cuda(wheels: list[LibraryWheel]) -> list[LibraryWheel]:
    """The wheels built for the oldest CUDA version among `wheels`."""
    lowest = min(vtuple(w.cuda_version) for w in wheels)
    return [w for w in wheels if vtuple(w.cuda_version) == lowest]


def system_library_notes(build: OrtBuild, hosts: tuple[HostFacts, ...]) -> list[str]:
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
                f"loader path ({found_libraries(host)})"
            )
    return notes
