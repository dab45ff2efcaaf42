"""Validation of the matrix data (`ortprov matrix check`, and every load): pure functions from parsed YAML
to records, or a list of problems.

Every problem names the file, the entry and the reason ("onnxruntime-gpu.yaml: builds[3]
(onnxruntime-gpu 1.20.0, CUDA 12.2): cuda_version '12.x' is not a version like '12.4'").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from provisioner.matrix.gpunames import gpu_key
from provisioner.matrix.model import PART_FILES, LibraryWheel, Matrix, OrtBuild, WheelPlatform
from provisioner.serde import from_jsonable
from provisioner.standalone.libnames import TENSORRT_FAMILIES, library_family
from provisioner.versions import major as major_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

SCHEMA_VERSION = 1
PLATFORMS = ("linux-x86_64", "linux-aarch64", "windows-amd64")

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ORT_VERSION = re.compile(r"^\d+\.\d+\.\d+(\.post\d+)?$")
_CUDA_MINOR = re.compile(r"^\d+\.\d+$")
_MAJOR = re.compile(r"^\d+$")
_DOTTED = re.compile(r"^\d+(\.\d+)*([a-z]+\d*)?(\.post\d+|\.dev\d+)?$")
_DRIVER = re.compile(r"^\d+(\.\d+){1,2}$")
_PYTHON = re.compile(r"^3\.\d+t?$")
_URL = re.compile(r"^https?://\S+$")
_REQUIREMENT = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9_,.-]+\])?"
    r"(\s*(===|==|~=|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+(\s*,\s*(===|==|~=|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+)*)?"
    r"(\s*;.+)?$"
)

T = TypeVar("T")


@dataclass(frozen=True)
class Problem:
    """One reason the data is rejected."""

    file: str
    entry: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.entry}: {self.reason}"


def check_header(file: str, data: Any, problems: list[Problem]) -> str | None:
    """The file must be a mapping with schema_version and date; returns the date."""
    if not isinstance(data, dict):
        problems.append(Problem(file, "(file)", f"expected a mapping at the top, got {type(data).__name__}"))
        return None
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        problems.append(Problem(file, "schema_version", f"is {version!r}, this ortprov reads {SCHEMA_VERSION}"))
    date = data.get("date")
    if not isinstance(date, str) or not _DATE.match(date):
        problems.append(Problem(file, "date", f"{date!r} is not a date like '2026-11-22' (quote it in YAML)"))
        return None
    return date


def convert_entries(file: str, key: str, cls: type[T], data: Any, problems: list[Problem]) -> list[T]:
    """Turn the list under `key` into records; malformed entries become problems."""
    raw = data.get(key) if isinstance(data, dict) else None
    if not isinstance(raw, list):
        problems.append(Problem(file, key, f"expected a list of {cls.__name__} entries, got {type(raw).__name__}"))
        return []
    records: list[T] = []
    for index, item in enumerate(raw):
        entry = f"{key}[{index}]" + _hint(item)
        try:
            records.append(from_jsonable(cls, item, path=entry))
        except ValueError as exc:
            message = str(exc)
            reason = message[len(entry) :].lstrip(":. ") if message.startswith(entry) else message
            problems.append(Problem(file, entry, reason or message))
    return records


def _hint(item: Any) -> str:
    if not isinstance(item, dict):
        return ""
    for keys in (("ort_version", "cuda_version"), ("package", "version"), ("version",), ("major",), ("name",)):
        if all(k in item for k in keys):
            return " (" + ", ".join(str(item[k]) for k in keys) + ")"
    return ""


def check_matrix(matrix: Matrix, files: dict[str, str] = PART_FILES) -> list[Problem]:
    """Consistency of the whole: every rule that needs more than one entry or file.

    `files` maps a logical part (builds, cuda, wheels, tensorrt) to the file name used in messages.
    """
    problems: list[Problem] = []
    problems += _check_cuda(matrix, files["cuda"])
    problems += _check_builds(matrix, files["builds"])
    problems += _check_wheels(matrix, files["wheels"])
    problems += _check_tensorrt(matrix, files["tensorrt"])
    problems += _check_errors(matrix, files["cuda"])
    problems += _check_gpus(matrix, files.get("gpus", "gpus.yaml"))
    problems += _check_architectures(matrix, files["cuda"])
    problems += _check_windows_branches(matrix, files["cuda"])
    problems += _check_files(matrix, files.get("files", "wheel-files.yaml"))
    return problems


def _check_files(matrix: Matrix, file: str) -> list[Problem]:
    """Each (package, platform, version) once; known platforms; relative paths; a source on every entry."""
    problems: list[Problem] = []
    seen: dict[tuple[str, str, str], int] = {}
    for index, row in enumerate(matrix.wheel_files):
        entry = f"files[{index}] ({row.package}, {row.platform})"
        problems += _sources(file, entry, row.sources)
        if row.platform not in PLATFORMS:
            problems.append(Problem(file, entry, f"unknown platform {row.platform!r}"))
        if not row.versions:
            problems.append(Problem(file, entry, "lists no versions"))
        if not row.files:
            problems.append(Problem(file, entry, "lists no files"))
        bad = [f for f in row.files if f.startswith(("/", "../")) or "\\" in f]
        if bad:
            problems.append(Problem(file, entry, f"path {bad[0]!r} is not relative to site-packages"))
        for version in row.versions:
            key = (row.package, row.platform, version)
            if key in seen:
                problems.append(Problem(file, entry, f"{row.package} {version} already listed in files[{seen[key]}]"))
            seen[key] = index
    return problems


def _duplicates(items: Iterable[T], key: Callable[[T], Any], file: str, name: str) -> list[Problem]:
    seen: dict[Any, int] = {}
    problems = []
    for index, item in enumerate(items):
        k = key(item)
        if k in seen:
            problems.append(Problem(file, f"{name}[{index}] {k}", f"duplicate of {name}[{seen[k]}]"))
        else:
            seen[k] = index
    return problems


def _sources(file: str, entry: str, sources: tuple[str, ...]) -> list[Problem]:
    if not sources or not all(isinstance(s, str) and s.strip() for s in sources):
        return [Problem(file, entry, "has no source: every fact must say where it came from")]
    return []


def _check_cuda(matrix: Matrix, file: str) -> list[Problem]:
    problems = _duplicates(matrix.cuda_releases, lambda r: r.version, file, "releases")
    problems += _duplicates(matrix.cuda_majors, lambda m: m.major, file, "majors")
    majors = {m.major for m in matrix.cuda_majors}
    for i, rel in enumerate(matrix.cuda_releases):
        entry = f"releases[{i}] ({rel.version})"
        problems += _sources(file, entry, rel.sources)
        if not _CUDA_MINOR.match(rel.version):
            problems.append(Problem(file, entry, f"version {rel.version!r} is not a CUDA minor like '12.4'"))
            continue
        for field, value in (
            ("min_driver_linux", rel.min_driver_linux),
            ("min_driver_windows", rel.min_driver_windows),
        ):
            if value is not None and not _DRIVER.match(value):
                problems.append(Problem(file, entry, f"{field} {value!r} is not a driver version like '550.54.14'"))
        for cc in rel.compute_capabilities:
            if not _CUDA_MINOR.match(cc):
                problems.append(Problem(file, entry, f"compute capability {cc!r} is not like '8.6'"))
        if major_of(rel.version) not in majors:
            problems.append(Problem(file, entry, f"CUDA major {major_of(rel.version)} has no entry under majors"))
    for i, major in enumerate(matrix.cuda_majors):
        entry = f"majors[{i}] ({major.major})"
        problems += _sources(file, entry, major.sources)
        for field, value in (
            ("minor_compat_driver_linux", major.minor_compat_driver_linux),
            ("minor_compat_driver_windows", major.minor_compat_driver_windows),
        ):
            if value is not None and not _DRIVER.match(value):
                problems.append(Problem(file, entry, f"{field} {value!r} is not a driver version"))
        for cudnn in major.cudnn_majors:
            if not _MAJOR.match(cudnn):
                problems.append(Problem(file, entry, f"cudnn major {cudnn!r} is not a number"))
        for image in major.docker_images:
            if not image.cuda_version.startswith(f"{major.major}."):
                problems.append(
                    Problem(file, entry, f"image {image.tag} is CUDA {image.cuda_version}, not {major.major}")
                )
            if not image.sources:
                problems.append(Problem(file, entry, f"image {image.tag} has no source"))
    return problems


def _check_builds(matrix: Matrix, file: str) -> list[Problem]:
    problems = _duplicates(
        matrix.builds, lambda b: (b.package, b.ort_version, b.cuda_version, b.index_url), file, "builds"
    )
    releases = {r.version for r in matrix.cuda_releases}
    majors = {m.major: m for m in matrix.cuda_majors}
    for i, build in enumerate(matrix.builds):
        entry = f"builds[{i}] ({build.ort_version}, CUDA {build.cuda_version})"
        problems += _sources(file, entry, build.sources)
        reasons = []
        if not _ORT_VERSION.match(build.ort_version):
            reasons.append(f"ort_version {build.ort_version!r} is not a release version like '1.20.0'")
        if not _CUDA_MINOR.match(build.cuda_version):
            reasons.append(f"cuda_version {build.cuda_version!r} is not a CUDA minor like '12.4'")
        elif build.cuda_version not in releases:
            reasons.append(f"cuda_version {build.cuda_version} has no CUDA release in cuda.yaml")
        else:
            major = majors.get(build.cuda_major)
            if build.cudnn_version is not None and not _MAJOR.match(build.cudnn_version):
                reasons.append(f"cudnn_version {build.cudnn_version!r} is not a cuDNN major like '9'")
            elif major and build.cudnn_version and major.cudnn_majors and build.cudnn_version not in major.cudnn_majors:
                reasons.append(
                    f"cuDNN {build.cudnn_version} does not exist for CUDA {build.cuda_major} "
                    f"(cuda.yaml lists {', '.join(major.cudnn_majors)})"
                )
            if (
                build.tensorrt_version
                and _DOTTED.match(build.tensorrt_version)
                and not any(t.serves(build.tensorrt_version, build.cuda_major) for t in matrix.tensorrt)
            ):
                reasons.append(
                    f"no release in tensorrt.yaml serves tensorrt_version {build.tensorrt_version} for CUDA "
                    f"{build.cuda_major} (one of that major, not older)"
                )
        if build.tensorrt_version is not None and not _DOTTED.match(build.tensorrt_version):
            reasons.append(f"tensorrt_version {build.tensorrt_version!r} is not a version")
        if not build.python:
            reasons.append("lists no Python versions")
        reasons += [f"python {p!r} is not like '3.12' or '3.13t'" for p in build.python if not _PYTHON.match(p)]
        if not build.platforms:
            reasons.append("lists no platforms")
        for plat in build.platforms:
            if plat.platform not in PLATFORMS:
                reasons.append(f"unknown platform {plat.platform!r} (known: {', '.join(PLATFORMS)})")
            elif plat.platform.startswith("linux") and (
                plat.glibc_min is None or not _CUDA_MINOR.match(plat.glibc_min)
            ):
                reasons.append(f"{plat.platform} needs a glibc_min like '2.28', got {plat.glibc_min!r}")
            elif plat.platform.startswith("windows") and plat.glibc_min is not None:
                reasons.append(f"{plat.platform} cannot have a glibc_min")
            reasons += _wheel_contents_problems(build, plat)
        if len({p.platform for p in build.platforms}) != len(build.platforms):
            reasons.append("lists a platform twice")
        if build.index_url is not None and not _URL.match(build.index_url):
            reasons.append(f"index_url {build.index_url!r} is not an http(s) URL")
        reasons += [
            f"requirement {r!r} is not a pip requirement" for r in build.requirements if not _REQUIREMENT.match(r)
        ]
        if not build.confirmed and not build.notes:
            reasons.append("is not confirmed from the wheel and has no notes saying why")
        problems += [Problem(file, entry, reason) for reason in reasons]
    return problems


_KERNEL = re.compile(r"^sm_\d{2,3}[a-z]?$")
_PTX = re.compile(r"^compute_\d{2,3}[a-z]?$")
_PROVIDER = re.compile(r"^[a-z][a-z0-9_]*$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _wheel_contents_problems(build: OrtBuild, plat: WheelPlatform) -> list[str]:
    """What is wrong with what a platform's wheels were read to hold (Pythons, providers, GPU code)."""
    where = plat.platform
    reasons = [f"{where}: python {p!r} is not like '3.12' or '3.13t'" for p in plat.python if not _PYTHON.match(p)]
    if all(_PYTHON.match(p) for p in build.python):  # else the build's own list is what is reported
        reasons += [
            f"{where}: python {p} is not in the build's python list" for p in plat.python if p not in build.python
        ]
    if plat.sha256 is not None and not _SHA256.match(plat.sha256):
        reasons.append(f"{where}: sha256 {plat.sha256!r} is not a SHA-256 digest")
    if plat.providers is not None and not plat.wheel:
        reasons.append(f"{where}: providers were read from no named wheel (give `wheel`)")
    names = [p.provider for p in plat.providers or ()]
    if len(set(names)) != len(names):
        reasons.append(f"{where}: lists a provider twice")
    for provider in plat.providers or ():
        if not _PROVIDER.match(provider.provider):
            reasons.append(f"{where}: provider {provider.provider!r} is not a provider name like 'cuda'")
        reasons += [f"{where}: kernel {k!r} is not like 'sm_90a'" for k in provider.kernels if not _KERNEL.match(k)]
        reasons += [f"{where}: PTX {p!r} is not like 'compute_90'" for p in provider.ptx if not _PTX.match(p)]
        reasons += [
            f"{where}: {provider.provider} opens {name!r}, which is not a TensorRT library"
            for name in provider.opens
            if library_family(name) not in TENSORRT_FAMILIES
        ]
        reasons += [
            f"{where}: {provider.provider} both links and opens {name}"
            for name in provider.opens
            if name in (provider.needs or ())
        ]
    return reasons


def _check_wheels(matrix: Matrix, file: str) -> list[Problem]:
    problems = _duplicates(matrix.library_wheels, lambda w: (w.package, w.version), file, "wheels")
    releases = {r.version for r in matrix.cuda_releases}
    majors = {m.major: m for m in matrix.cuda_majors}
    for i, wheel in enumerate(matrix.library_wheels):
        entry = f"wheels[{i}] ({wheel.package} {wheel.version})"
        problems += _sources(file, entry, wheel.sources)
        if not _DOTTED.match(wheel.version):
            problems.append(Problem(file, entry, f"version {wheel.version!r} is not a version"))
        problems += [Problem(file, entry, reason) for reason in _wheel_platform_problems(wheel)]
        if _MAJOR.match(wheel.cuda_version):
            major_number = int(wheel.cuda_version)
            if wheel.library != "cudnn":
                problems.append(Problem(file, entry, "only cuDNN rows may map to a CUDA major; give the CUDA minor"))
        elif wheel.cuda_version in releases:
            major_number = major_of(wheel.cuda_version)
        else:
            problems.append(
                Problem(file, entry, f"cuda_version {wheel.cuda_version!r} has no CUDA release in cuda.yaml")
            )
            continue
        major = majors.get(major_number)
        if major is None:
            problems.append(Problem(file, entry, f"CUDA major {major_number} is not in cuda.yaml"))
        elif major.pip_packages and major.pip_packages.get(wheel.library) not in (None, wheel.package):
            problems.append(
                Problem(
                    file,
                    entry,
                    f"CUDA {major_number}'s {wheel.library} is {major.pip_packages[wheel.library]}, "
                    f"not {wheel.package}",
                )
            )
    return problems


def _wheel_platform_problems(wheel: LibraryWheel) -> list[str]:
    """Known platform tags, each once; a glibc floor only beside a Linux platform."""
    reasons = [
        f"unknown platform {tag!r} (known: {', '.join(PLATFORMS)})" for tag in wheel.platforms if tag not in PLATFORMS
    ]
    if len(set(wheel.platforms)) != len(wheel.platforms):
        reasons.append("lists a platform twice")
    if wheel.glibc_min is not None:
        if not _CUDA_MINOR.match(wheel.glibc_min):
            reasons.append(f"glibc_min {wheel.glibc_min!r} is not like '2.28'")
        elif not any(tag.startswith("linux-") for tag in wheel.platforms):
            reasons.append("has a glibc_min but no Linux platform")
    return reasons


def _check_tensorrt(matrix: Matrix, file: str) -> list[Problem]:
    problems = _duplicates(matrix.tensorrt, lambda t: (t.version, t.cuda_major), file, "releases")
    majors = {m.major for m in matrix.cuda_majors}
    for i, rel in enumerate(matrix.tensorrt):
        entry = f"releases[{i}] ({rel.version}, CUDA {rel.cuda_major})"
        problems += _sources(file, entry, rel.sources)
        if not _DOTTED.match(rel.version):
            problems.append(Problem(file, entry, f"version {rel.version!r} is not a version"))
        if rel.cuda_major not in majors:
            problems.append(Problem(file, entry, f"CUDA major {rel.cuda_major} is not in cuda.yaml"))
        problems += [
            Problem(file, entry, f"{r!r} is not an exact pin (name==version)")
            for r in rel.packages
            if not _EXACT_PIN.match(r)
        ]
        if not rel.packages and not rel.notes:
            problems.append(Problem(file, entry, "has no packages and no notes saying why"))
        if rel.index_url is not None and not _URL.match(rel.index_url):
            problems.append(Problem(file, entry, f"index_url {rel.index_url!r} is not an http(s) URL"))
        problems += [Problem(file, entry, f"platform {p!r} is unknown") for p in rel.platforms if p not in PLATFORMS]
        problems += [
            Problem(file, entry, f"python {p!r} is not like '3.10'") for p in rel.python if not _PYTHON.match(p)
        ]
    problems += _duplicates(matrix.tensorrt_packages, lambda p: (p.package, p.version), file, "packages")
    for i, package in enumerate(matrix.tensorrt_packages):
        entry = f"packages[{i}] ({package.package}, {package.version})"
        problems += _sources(file, entry, package.sources)
        if package.kind not in ("wheel", "stub", "sdist"):
            problems.append(Problem(file, entry, f"kind {package.kind!r} is not wheel, stub or sdist"))
    return problems


_EXACT_PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[0-9][A-Za-z0-9.+!_-]*$")


_ERROR_NAME = re.compile(r"^cudaError[A-Z][A-Za-z]+$|^CUBLAS_STATUS_[A-Z_]+$")


def _check_errors(matrix: Matrix, file: str) -> list[Problem]:
    """CUDA runtime errors and cuBLAS statuses: each name once, each number once per API (they number apart)."""
    problems = _duplicates(matrix.cuda_errors, lambda e: e.name, file, "errors")
    problems += _duplicates(matrix.cuda_errors, lambda e: (e.name.startswith("CUBLAS_"), e.number), file, "errors")
    for i, error in enumerate(matrix.cuda_errors):
        entry = f"errors[{i}] ({error.name})"
        problems += _sources(file, entry, error.sources)
        if not _ERROR_NAME.match(error.name):
            problems.append(
                Problem(
                    file,
                    entry,
                    f"name {error.name!r} is not a cudaError_t name (cudaErrorNoDevice) nor a cublasStatus_t one "
                    "(CUBLAS_STATUS_NOT_INITIALIZED)",
                )
            )
        if error.number < 0:
            problems.append(Problem(file, entry, f"number {error.number} is negative"))
        if error.message is not None and not error.message.strip():
            problems.append(Problem(file, entry, "message is empty (leave it out when unknown)"))
    return problems


_CC = re.compile(r"^\d{1,2}\.\d$")


def _check_gpus(matrix: Matrix, file: str) -> list[Problem]:
    """GPU names (and aliases) once each, a compute capability like "8.6", a source for each."""
    problems = _duplicates(
        [(gpu_key(name), gpu) for gpu in matrix.gpu_models for name in (gpu.name, *gpu.aliases)],
        lambda pair: pair[0],
        file,
        "gpus (name or alias)",
    )
    for i, gpu in enumerate(matrix.gpu_models):
        entry = f"gpus[{i}] ({gpu.name})"
        problems += _sources(file, entry, gpu.sources)
        if not _CC.match(gpu.compute_capability):
            problems.append(Problem(file, entry, f"compute_capability {gpu.compute_capability!r} is not like '8.6'"))
        for name in (gpu.name, *gpu.aliases):
            if not gpu_key(name):
                problems.append(Problem(file, entry, f"{name!r} names no model (only vendor words or sizes)"))
    return problems


def _check_windows_branches(matrix: Matrix, file: str) -> list[Problem]:
    """Windows driver branches: each once, a branch like "580", a first Windows driver at or after that number."""
    problems = _duplicates(matrix.windows_driver_branches, lambda b: b.branch, file, "windows_driver_branches")
    for i, row in enumerate(matrix.windows_driver_branches):
        entry = f"windows_driver_branches[{i}] (R{row.branch})"
        problems += _sources(file, entry, row.sources)
        if not re.fullmatch(r"\d{3}", row.branch):
            problems.append(Problem(file, entry, f"branch {row.branch!r} is not a driver branch like '580'"))
        elif not re.fullmatch(r"\d{3}\.\d+(\.\d+)?", row.first_windows) or int(row.first_windows[:3]) < int(row.branch):
            problems.append(
                Problem(file, entry, f"first_windows {row.first_windows!r} is not a driver of R{row.branch} or later")
            )
    return problems


def _check_architectures(matrix: Matrix, file: str) -> list[Problem]:
    """GPU architectures: a name and each compute capability once, like "3.7", a driver branch like "470"."""
    problems = _duplicates(matrix.gpu_architectures, lambda a: a.name, file, "architectures")
    problems += _duplicates(
        [(cc, a) for a in matrix.gpu_architectures for cc in a.compute_capabilities],
        lambda pair: pair[0],
        file,
        "architectures (compute capability)",
    )
    for i, arch in enumerate(matrix.gpu_architectures):
        entry = f"architectures[{i}] ({arch.name})"
        problems += _sources(file, entry, arch.sources)
        if not arch.compute_capabilities:
            problems.append(Problem(file, entry, "lists no compute capability"))
        for cc in arch.compute_capabilities:
            if not _CC.match(cc):
                problems.append(Problem(file, entry, f"compute capability {cc!r} is not like '8.6'"))
        branch = arch.last_driver_branch
        if branch is not None and not re.fullmatch(r"\d{3}", branch):
            problems.append(Problem(file, entry, f"last_driver_branch {branch!r} is not a driver branch like '470'"))
    return problems
