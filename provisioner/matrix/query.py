"""THE way to ask the matrix anything: small pure functions over a loaded `Matrix`.

The planner, the recipes, `matrix show`, the loader hook, verify and doctor ask here instead of walking
`matrix.builds` / `matrix.cuda_majors` themselves, so that a lookup has one definition. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.matrix.gpunames import gpu_key
from provisioner.matrix.model import (
    CudaMajor,
    CudaRelease,
    DockerImage,
    GpuArchitecture,
    GpuModel,
    LibraryWheel,
    Matrix,
    OrtBuild,
    ProviderLibrary,
    TensorRTPackage,
    TensorRTProvider,
    TensorRTRelease,
)
from provisioner.standalone.libnames import TENSORRT_FAMILIES, library_family
from provisioner.versions import driver_at_least, in_series, major, ort_matcher, satisfies, vtuple

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from provisioner.matrix.model import (
        CudaMajor,
        CudaRelease,
        DockerImage,
        GpuModel,
        LibraryWheel,
        Matrix,
        OrtBuild,
        TensorRTPackage,
        TensorRTRelease,
        WheelFiles,
        WheelPlatform,
    )

# --- onnxruntime-gpu builds ---------------------------------------------------------------------------------


def builds_for(matrix: Matrix, ort_spec: str | None = None, cuda: int | str | None = None) -> tuple[OrtBuild, ...]:
    """Builds matching an `--ort` spec (versions.ort_matcher: ValueError if malformed) and a CUDA major (12) or
    minor ("12.4"), newest first (then PyPI before a side feed, then the newer CUDA)."""
    matches = ort_matcher(ort_spec) if ort_spec else None
    chosen = [
        build
        for build in matrix.builds
        if (matches is None or matches(build.ort_version)) and (cuda is None or in_series(build.cuda_version, cuda))
    ]
    chosen.sort(key=lambda b: (vtuple(b.ort_version), b.index_url is None, vtuple(b.cuda_version)), reverse=True)
    return tuple(chosen)


def cuda_majors_released_by(matrix: Matrix, day: str) -> frozenset[int]:
    """The CUDA majors of the onnxruntime-gpu builds (PyPI's and the feeds') released on or before `day`
    ("2023-04-03"): what a user could have installed then. Empty when the matrix has no build that old."""
    return frozenset(b.cuda_major for b in matrix.builds if b.released and b.released <= day)


def find_build(
    matrix: Matrix, package: str, ort_version: str, cuda_version: str, index_url: str | None
) -> OrtBuild | None:
    """The record of one build (a plan's package, release, CUDA version and index)."""
    wanted = (package, ort_version, cuda_version, index_url)
    return next((b for b in matrix.builds if (b.package, b.ort_version, b.cuda_version, b.index_url) == wanted), None)


def ort_versions(matrix: Matrix) -> tuple[str, ...]:
    """Every onnxruntime-gpu version in the matrix, newest first."""
    return tuple(sorted({b.ort_version for b in matrix.builds}, key=vtuple, reverse=True))


def cuda_versions(matrix: Matrix) -> tuple[str, ...]:
    """Every CUDA version some build targets, oldest first."""
    return tuple(sorted({b.cuda_version for b in matrix.builds}, key=vtuple))


def python_versions_with_wheels(
    matrix: Matrix, package: str, python: str, platform: str | None = None
) -> tuple[str, ...]:
    """The releases of `package` with a wheel for Python `python` ("3.12", "3.13t") (on `platform` where
    given), oldest first."""
    return tuple(
        sorted(
            {
                b.ort_version
                for b in matrix.builds
                if b.package == package
                and python in (b.pythons_on(platform) if platform and b.wheel_platform(platform) else b.python)
                and (platform is None or b.wheel_platform(platform) is not None)
            },
            key=vtuple,
        )
    )


# --- CUDA ---------------------------------------------------------------------------------------------------


def cuda_release(matrix: Matrix, version: str) -> CudaRelease | None:
    """The CudaRelease for "12.4" (a longer "12.4.1" is cut to its minor)."""
    wanted = vtuple(version)[:2]
    return next((r for r in matrix.cuda_releases if vtuple(r.version)[:2] == wanted), None)


def cuda_major(matrix: Matrix, number: int | str) -> CudaMajor | None:
    """The CudaMajor for 12 (or "12", "12.4")."""
    wanted = major(number)
    return next((m for m in matrix.cuda_majors if m.major == wanted), None)


def cuda_releases_for_major(matrix: Matrix, number: int) -> tuple[CudaRelease, ...]:
    """The CUDA minors of one major, oldest first."""
    return tuple(
        sorted((r for r in matrix.cuda_releases if major(r.version) == number), key=lambda r: vtuple(r.version))
    )


def newest_cuda_for_driver(matrix: Matrix, driver: str, windows: bool = False) -> CudaRelease | None:
    """The newest CUDA release whose driver floor (on Windows: `windows_driver_floor`) the driver meets."""
    floors = [(r, windows_driver_floor(matrix, r) if windows else r.min_driver_linux) for r in matrix.cuda_releases]
    met = [r for r, floor in floors if floor is not None and driver_at_least(driver, floor)]
    return max(met, key=lambda r: vtuple(r.version)) if met else None


def windows_driver_floor(matrix: Matrix, release: CudaRelease) -> str | None:
    """The first Windows driver that supports `release`: NVIDIA's table's Windows column; where it reads N/A, the
    first Windows driver of the branch its Linux floor belongs to (cuda.yaml `windows_driver_branches`); else the
    Linux floor itself, a lower bound (a branch's Windows numbers start at or after the branch's number)."""
    if release.min_driver_windows:
        return release.min_driver_windows
    if not release.min_driver_linux:
        return None
    branch = str(vtuple(release.min_driver_linux)[0])
    known = next((b.first_windows for b in matrix.windows_driver_branches if b.branch == branch), None)
    return known or release.min_driver_linux


def driver_branch(matrix: Matrix, version: str, windows: bool = False) -> int | None:
    """The branch a driver version belongs to. Linux numbers a driver by its branch (535.104.05 is R535). Windows
    numbers its own (R535: 536.25 ... 539.41; R580: 580.88 ... 582.53): a Windows version belongs to the newest
    branch whose first Windows driver it is not older than (`windows_branch_starts`). None: not a driver version."""
    number = vtuple(version) if version else ()
    if not number or number[0] < 100:
        return None
    if not windows:
        return number[0]
    started = [branch for branch, first in windows_branch_starts(matrix) if _padded_at_least(number, first)]
    return max(started) if started else number[0]


def windows_branch_starts(matrix: Matrix) -> list[tuple[int, tuple[int, ...]]]:
    """(branch, its first Windows driver) for every branch the matrix knows: from the CUDA releases' Linux and
    Windows floors (a Linux floor names the branch), from `windows_driver_branches`, and for a branch known only
    by its Linux number (or an architecture's last branch) the branch number itself, a lower bound."""
    starts: dict[int, tuple[int, ...]] = {}
    for release in matrix.cuda_releases:
        if release.min_driver_linux:
            branch = vtuple(release.min_driver_linux)[0]
            floor = vtuple(windows_driver_floor(matrix, release) or release.min_driver_linux)
            starts[branch] = min(starts.get(branch, floor), floor)
    for known in matrix.windows_driver_branches:
        starts[int(known.branch)] = vtuple(known.first_windows)
    for arch in matrix.gpu_architectures:
        if arch.last_driver_branch:
            starts.setdefault(int(arch.last_driver_branch), (int(arch.last_driver_branch),))
    return sorted(starts.items())


def _padded_at_least(version: tuple[int, ...], floor: tuple[int, ...]) -> bool:
    """A Windows version reaches a branch's first driver; a bare number ("581") stands for its whole series."""
    if len(version) == 1:
        return version[0] >= floor[0]
    width = max(len(version), len(floor))
    return version + (0,) * (width - len(version)) >= floor + (0,) * (width - len(floor))


def first_cuda_release_for_cc(matrix: Matrix, cc: str) -> CudaRelease | None:
    """The oldest CUDA release that supports compute capability `cc`."""
    releases = [r for r in matrix.cuda_releases if cc in r.compute_capabilities]
    return min(releases, key=lambda r: vtuple(r.version)) if releases else None


def gpu_architecture(matrix: Matrix, cc: str) -> GpuArchitecture | None:
    """The architecture whose discrete GPUs have compute capability `cc` (Kepler for "3.7"), None: not recorded."""
    return next((a for a in matrix.gpu_architectures if cc in a.compute_capabilities), None)


@dataclass(frozen=True)
class DriverGpuGap:
    """Why a driver cannot run a GPU at all: `kind` too-old | dropped, the driver `needed` ("a driver >= 570.26
    (CUDA 12.8)", "a 470 driver"), and the sentence that says so."""

    kind: str
    needed: str
    why: str


def driver_gpu_gap(
    matrix: Matrix, cc: str, driver_version: str | None, driver_cuda: str | None, windows: bool = False
) -> DriverGpuGap | None:
    """Why a driver cannot run a GPU of compute capability `cc`, whatever onnxruntime build is installed:
    ("too-old", ...) when the driver's CUDA predates the first CUDA release that supports `cc` (derived from the
    releases' compute capabilities; not judged for those the oldest recorded release already lists), ("dropped",
    ...) when the driver's branch is newer than the last one that runs `cc`'s architecture. None: it can, or too
    little is known (a driver given as neither a version nor a CUDA version the matrix knows)."""
    branch = _driver_branch(matrix, driver_version, driver_cuda, windows)
    if driver_cuda is None and driver_version:
        newest = newest_cuda_for_driver(matrix, driver_version, windows)
        driver_cuda = newest.version if newest else None
    first = first_cuda_release_for_cc(matrix, cc)
    oldest = min((r for r in matrix.cuda_releases), key=lambda r: vtuple(r.version), default=None)
    if first is not None and first is not oldest and driver_cuda is not None:
        floor = windows_driver_floor(matrix, first) if windows else first.min_driver_linux
        if floor and vtuple(driver_cuda)[:2] < vtuple(first.version)[:2]:
            needed = f"a driver >= {floor} (CUDA {first.version})"
            return DriverGpuGap(
                "too-old",
                needed,
                f"{needed} is needed for compute capability {cc}: a driver for an older CUDA does not know that "
                f"GPU, and neither kernels nor PTX run on it",
            )
    arch = gpu_architecture(matrix, cc)
    last = arch.last_driver_branch if arch else None
    if arch is not None and last is not None and branch is not None and branch > int(last):
        return DriverGpuGap(
            "dropped",
            f"a {last} driver",
            f"drivers after R{last} do not support compute capability {cc} ({arch.name}): install a {last} driver "
            f"(R{last} is the last branch that runs {arch.name} GPUs), or use a newer GPU",
        )
    return None


def _driver_branch(matrix: Matrix, version: str | None, cuda: str | None, windows: bool) -> int | None:
    """The driver's branch (`driver_branch`: 580 for Linux 580.65.06 and for Windows 581.57); from the CUDA version
    it reports, the branch of the newest CUDA release it reaches; None when neither says (a "12.2" given as a driver
    version names no branch)."""
    branch = driver_branch(matrix, version, windows) if version else None
    if branch is not None:
        return branch
    if not cuda:
        return None
    floors = [r.min_driver_linux for r in matrix.cuda_releases if vtuple(r.version)[:2] <= vtuple(cuda)[:2]]
    known = [f for f in floors if f]
    if not known:
        return None
    return vtuple(max(known, key=vtuple))[0]


def cuda_images(matrix: Matrix, cuda_version: str, cudnn: str | None) -> tuple[DockerImage, ...]:
    """The nvidia/cuda cuDNN images of the CUDA major with the same or a newer minor and the same cuDNN
    major: the exact minor first, then the newer ones, oldest first."""
    record = cuda_major(matrix, cuda_version)
    if record is None:
        return ()
    want = vtuple(cuda_version)[:2]
    cudnn_major = str(major(cudnn)) if cudnn else None
    images = [
        i
        for i in record.docker_images
        if vtuple(i.cuda_version)[:2] >= want
        and (cudnn_major is None or (i.cudnn_version is not None and str(major(i.cudnn_version)) == cudnn_major))
    ]
    return tuple(sorted(images, key=lambda i: (vtuple(i.cuda_version)[:2] != want, vtuple(i.cuda_version))))


# --- GPU models ---------------------------------------------------------------------------------------------


def gpu_models_by_key(matrix: Matrix) -> dict[str, GpuModel]:
    """gpu_key(name or alias) -> the model, for reading logs (gpus.yaml)."""
    return {gpu_key(n): gpu for gpu in matrix.gpu_models for n in (gpu.name, *gpu.aliases)}


# --- NVIDIA library wheels ----------------------------------------------------------------------------------


def wheels_for(matrix: Matrix, package: str) -> tuple[LibraryWheel, ...]:
    """Every known version of one NVIDIA wheel (nvidia-cudnn-cu12 ...), oldest first."""
    return tuple(sorted((w for w in matrix.library_wheels if w.package == package), key=lambda w: vtuple(w.version)))


def wheels_for_library(matrix: Matrix, library: str, cuda: int | str) -> tuple[LibraryWheel, ...]:
    """Versions of a library (cudart, cublas ...) for a CUDA major (12) or minor ("12.4"), oldest first."""
    wanted = str(cuda)
    chosen = [
        w
        for w in matrix.library_wheels
        if w.library == library
        and (w.cuda_version == wanted if "." in wanted else str(major(w.cuda_version)) == wanted)
    ]
    return tuple(sorted(chosen, key=lambda w: vtuple(w.version)))


def library_of_package(matrix: Matrix, package: str) -> str | None:
    """The library (cudnn, cublas ...) an NVIDIA wheel supplies."""
    return next((w.library for w in matrix.library_wheels if w.package == package), None)


# (package, specifier, CUDA major) -> recorded versions, for one `library_wheels` tuple: planning asks the same
# questions for every candidate build, and a memo keeps it ~6 ms instead of ~40 ms.
_RECORDED: dict[tuple[str, str, int], tuple[LibraryWheel, ...]] = {}
_RECORDED_FOR: list[tuple[LibraryWheel, ...]] = []


def recorded_wheels(matrix: Matrix, package: str, spec: str, cuda_major_number: int) -> tuple[LibraryWheel, ...]:
    """The versions of `package` recorded for a CUDA major that meet a requirement's specifier ("~=9.0")."""
    if not _RECORDED_FOR or _RECORDED_FOR[0] is not matrix.library_wheels:
        _RECORDED.clear()
        _RECORDED_FOR[:] = [matrix.library_wheels]
    key = (package, spec, cuda_major_number)
    if key not in _RECORDED:
        _RECORDED[key] = tuple(
            w
            for w in matrix.library_wheels
            if w.package == package and satisfies(w.version, spec) and major(w.cuda_version) == cuda_major_number
        )
    return _RECORDED[key]


# --- TensorRT -----------------------------------------------------------------------------------------------


def tensorrt_release(matrix: Matrix, version: str, cuda_major_number: int) -> TensorRTRelease | None:
    """The TensorRT a build made against `version` ("10.9"; "10" where the wheel says only its major) gets for
    its CUDA major: of the releases of that major not older than `version`, the newest with packages (ABI is
    kept within a major; another major, TensorRT 11 for a build linking libnvinfer.so.10, never serves); else
    the record without packages that says why none exists; None when the matrix knows nothing."""
    serving = [t for t in matrix.tensorrt if t.serves(version, cuda_major_number)]
    with_packages = [t for t in serving if t.packages]
    chosen = with_packages or serving
    return max(chosen, key=lambda t: vtuple(t.version)) if chosen else None


def build_tensorrt(matrix: Matrix, build: OrtBuild) -> TensorRTRelease | None:
    """The TensorRT release the build's TensorRT provider gets (None: none recorded)."""
    return tensorrt_release(matrix, build.tensorrt_version, build.cuda_major) if build.tensorrt_version else None


def tensorrt_views(builds: Iterable[OrtBuild]) -> tuple[TensorRTProvider, ...]:
    """Each PyPI release's TensorRT provider per platform whose wheel was read, oldest release first: a view of the
    builds' wheel facts (onnxruntime-gpu.yaml, a platform's `tensorrt` provider library), where they are recorded
    once; matrix/load.py sets it as `Matrix.tensorrt_providers`."""
    views = []
    for build in sorted((b for b in builds if b.index_url is None), key=lambda b: vtuple(b.ort_version)):
        for platform in build.platforms:
            if platform.providers is not None:
                views.append(_tensorrt_view(build.ort_version, platform))
    return tuple(views)


def _tensorrt_view(ort_version: str, platform: WheelPlatform) -> TensorRTProvider:
    library = platform.provider("tensorrt")
    source = (f"{platform.wheel}: provider libraries",) if platform.wheel else ()
    if library is None:
        return TensorRTProvider(ort_version, platform.platform, None, source)
    file = f"{'' if platform.platform.startswith('windows') else 'lib'}onnxruntime_providers_tensorrt"
    file += ".dll" if platform.platform.startswith("windows") else ".so"
    needed = None
    if library.needs is not None:
        needed = tuple(sorted(n for n in library.needs if library_family(n) in TENSORRT_FAMILIES))
    named = tuple(sorted({*(needed or ()), *library.opens}))
    return TensorRTProvider(ort_version, platform.platform, file, source, needed, named)


def linked_tensorrt_major(providers: Iterable[TensorRTProvider], ort_version: str) -> int | None:
    """The TensorRT major a release's TensorRT provider links (or opens): its libnvinfer.so.N, from the wheels' facts
    (`tensorrt_views`); None where no Linux wheel of the release was read."""
    for provider in providers:
        if provider.ort_version == ort_version:
            for name in provider.needed or provider.named:
                if name.startswith("libnvinfer.so."):
                    return int(name.rsplit(".", 1)[1])
    return None


def tensorrt_provider(matrix: Matrix, ort_version: str, platform: str) -> TensorRTProvider | None:
    """What the release's wheel for `platform` holds of a TensorRT provider (None: not recorded)."""
    return next((p for p in matrix.tensorrt_providers if p.ort_version == ort_version and p.platform == platform), None)


def tensorrt_library_dirs(matrix: Matrix) -> tuple[str, ...]:
    """The site-packages folders TensorRT's pip packages put their libraries in ("tensorrt", "tensorrt_libs")."""
    return tuple(sorted({t.library_dir for t in matrix.tensorrt if t.library_dir}))


def tensorrt_opened_later(matrix: Matrix) -> tuple[str, ...]:
    """TensorRT sonames a provider names but does not link (libnvinfer_plugin.so.10): opened when needed."""
    later = {
        name for p in matrix.tensorrt_providers if p.needed is not None for name in p.named if name not in p.needed
    }
    return tuple(sorted(later))


def tensorrt_package(matrix: Matrix, package: str, version: str) -> TensorRTPackage | None:
    """The recorded facts of one TensorRT package version (stub or wheel, requirements, index)."""
    wanted = (canonical_name(package), version)
    return next((p for p in matrix.tensorrt_packages if (canonical_name(p.package), p.version) == wanted), None)


def canonical_name(name: str) -> str:
    """PEP 503 normalised distribution name."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


# --- libraries, by soname -----------------------------------------------------------------------------------


def library_of(name: str, libraries: Collection[str]) -> str | None:
    """The matrix library (a key of CudaMajor.pip_packages: cudart, cublas, cudnn ...) that a soname, DLL or
    probed family belongs to: libcublasLt.so.12, cublasLt64_12.dll and "cublasLt" -> cublas; the driver's
    libcuda.so.1 -> None."""
    key = name.removeprefix("lib").split(".so")[0].split(".dll")[0].split("64_")[0].lower()
    if key in libraries:
        return key
    return next((library for library in libraries if key.startswith(library)), None)


def soname_major(soname: str) -> str | None:
    """ "12" for libcudart.so.12 and for CUDA 11's libcudart.so.11.0; None without a version."""
    tail = soname.partition(".so.")[2]
    return tail.split(".")[0] if tail[:1].isdigit() else None


def build_libraries(matrix: Matrix, build: OrtBuild) -> dict[str, str]:
    """Library -> soname major for every CUDA library the build links or opens (the driver left out):
    {"cudart": "12", "cublas": "12", "cudnn": "9", "cufft": "11", ...}; empty when the matrix lists none."""
    record = cuda_major(matrix, build.cuda_major)
    names = (record.pip_packages or {}) if record else {}
    found: dict[str, str] = {}
    for soname in (*build.libraries_linked, *build.libraries_lazy):
        library, number = library_of(soname, names), soname_major(soname)
        if library and number:
            found.setdefault(library, number)
    return found


def common_libraries(matrix: Matrix) -> dict[str, bool]:
    """The CUDA libraries every build with a recorded library list needs, in cuda.yaml's order, each with
    whether its soname major is the CUDA major in every build (cudart, cublas: True; cufft, curand: False;
    cuDNN has its own numbering). What doctor checks on a host whose build it cannot look up."""
    per_build = [(b, build_libraries(matrix, b)) for b in matrix.builds]
    per_build = [(b, libs) for b, libs in per_build if libs]
    if not per_build:
        return {}
    shared = set.intersection(*(set(libs) for _, libs in per_build))
    order = [name for m in matrix.cuda_majors for name in (m.pip_packages or {})]
    return {
        library: all(libs[library] == str(b.cuda_major) for b, libs in per_build)
        for library in sorted(shared, key=lambda name: (order.index(name) if name in order else len(order), name))
    }


def cuda_major_libraries(matrix: Matrix) -> frozenset[str]:
    """The libraries whose soname major is the CUDA major wherever a build uses them (cudart, cublas, nvrtc):
    finding one of them says which CUDA major is present."""
    following: dict[str, bool] = {}
    for build in matrix.builds:
        for library, number in build_libraries(matrix, build).items():
            following[library] = following.get(library, True) and number == str(build.cuda_major)
    return frozenset(library for library, same in following.items() if same)


def library_cuda_majors(matrix: Matrix) -> dict[tuple[str, str], frozenset[int]]:
    """(library, soname major) -> the CUDA majors whose builds load a library of that name: ("cudart", "12") ->
    {12}, ("cudnn", "9") -> {12, 13} (from each CUDA major's published cuDNN majors), ("curand", "10") ->
    {11, 12, 13}. A name of one CUDA major says which CUDA a file belongs to; a name of several is shared: two
    copies of it in one process are one library to the loader."""
    table: dict[tuple[str, str], set[int]] = {}
    for build in matrix.builds:
        for library, number in build_libraries(matrix, build).items():
            table.setdefault((library, number), set()).add(build.cuda_major)
    for record in matrix.cuda_majors:
        for number in record.cudnn_majors:
            table.setdefault(("cudnn", number), set()).add(record.major)
    return {key: frozenset(majors) for key, majors in table.items()}


def sonames_by_cuda_major(matrix: Matrix) -> dict[str, tuple[str, ...]]:
    """CUDA major -> every soname a build of that major links or opens by name (the driver's left out):
    what the loader hook prepares, whichever release of that major is installed later."""
    return _sonames(matrix, lazy_only=False)


def lazy_sonames_by_cuda_major(matrix: Matrix) -> dict[str, tuple[str, ...]]:
    """CUDA major -> every soname a build of that major opens only when an operator needs it (cuDNN, cuFFT,
    NVRTC): what verify's static check resolves besides DT_NEEDED when onnxruntime cannot tell it."""
    return _sonames(matrix, lazy_only=True)


def _sonames(matrix: Matrix, lazy_only: bool) -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for build in sorted(matrix.builds, key=lambda b: vtuple(b.ort_version), reverse=True):
        names = table.setdefault(str(build.cuda_major), [])
        for soname in build.libraries_lazy if lazy_only else (*build.libraries_linked, *build.libraries_lazy):
            if soname not in names and not soname.startswith("libcuda.so"):
                names.append(soname)
    return {number: tuple(names) for number, names in sorted(table.items())}


# --- GPU code in a build's wheels ---------------------------------------------------------------------------


def parse_arch(name: str) -> tuple[int, int, str] | None:
    """(10, 0, "a") for sm_100a / compute_100a, (7, 5, "") for sm_75; None for anything else."""
    tail = name.rpartition("_")[2]
    digits = "".join(c for c in tail if c.isdigit())
    suffix = tail[len(digits) :]
    if len(digits) < 2 or not tail.startswith(digits):
        return None
    return int(digits[:-1]), int(digits[-1]), suffix


def arch_runs_on(name: str, cc: str) -> bool:
    """Whether GPU code `name` runs on a GPU of compute capability `cc` ("10.0"): a cubin (sm_XY) on the same
    major with a minor >= Y; an arch-specific one (sm_XYa) on exactly X.Y; PTX (compute_XY) on every X.Y and
    newer, by JIT (compute_XYa: exactly X.Y; compute_XYf: the same major, minor >= Y)."""
    parsed = parse_arch(name)
    wanted = vtuple(cc)[:2]
    if parsed is None or len(wanted) < 2:
        return False
    arch_major, arch_minor, suffix = parsed
    if suffix == "a":
        return (arch_major, arch_minor) == wanted
    same_family = wanted[0] == arch_major and wanted[1] >= arch_minor
    if name.startswith("compute_") and not suffix:
        return wanted >= (arch_major, arch_minor)
    return same_family


def gpu_code_for(kernels: Collection[str], ptx: Collection[str], cc: str) -> tuple[str | None, str | None]:
    """(the cubin that runs on `cc`, the PTX it can JIT): the best of each, None where there is none."""
    cubin = [k for k in kernels if arch_runs_on(k, cc)]
    jit = [p for p in ptx if arch_runs_on(p, cc)]
    order = lambda name: (parse_arch(name) or (0, 0, ""))[:2]  # noqa: E731
    return (max(cubin, key=order) if cubin else None), (max(jit, key=order) if jit else None)


def code_summary(kernels: Collection[str], ptx: Collection[str]) -> str:
    """ "sm_75 80 86 89 90a 120a, no PTX" / "sm_52 60 61, PTX compute_80"."""

    def short(names: Collection[str], prefix: str) -> str:
        tails = [n.removeprefix(prefix) for n in names]
        return prefix + " ".join(tails) if tails else ""

    cubins = short(kernels, "sm_") or "no kernels"
    return f"{cubins}, " + (f"PTX {short(ptx, 'compute_')}" if ptx else "no PTX")


def build_gpu_code(build: OrtBuild, platform: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(kernels, PTX) of the build's CUDA provider in its `platform` wheels; None when they were not read (or
    the build has no wheel there); ((), ()) when the wheels ship no CUDA provider."""
    record = build.wheel_platform(platform)
    if record is None or record.providers is None:
        return None
    cuda = record.provider("cuda")
    return (cuda.kernels, cuda.ptx) if cuda else ((), ())


def pypi_twin(matrix: Matrix, build: OrtBuild, platform: str) -> OrtBuild | None:
    """For a build whose `platform` wheels were not read (a side feed's): the PyPI build of the same release
    (same sources, same build scripts) whose `platform` wheels were read; None when there is none."""
    if build_gpu_code(build, platform) is not None:
        return None
    return next(
        (
            other
            for other in matrix.builds
            if other is not build
            and other.ort_version == build.ort_version
            and other.index_url is None
            and build_gpu_code(other, platform) is not None
        ),
        None,
    )


def builds_with_code_for(matrix: Matrix, cc: str, platform: str) -> tuple[OrtBuild, ...]:
    """The builds whose `platform` wheels hold GPU code (a kernel, or PTX to JIT) for compute capability `cc`,
    newest first: what runs on a GPU a build reported "no kernel image is available" for."""
    found = []
    for build in builds_for(matrix):
        code = build_gpu_code(build, platform)
        if code is not None and any(gpu_code_for(code[0], code[1], cc)):
            found.append(build)
    return tuple(found)


def provider_needs(build: OrtBuild, platform: str, provider: str = "cuda") -> tuple[str, ...] | None:
    """What the build's `provider` library needs from the loader on `platform` (DT_NEEDED / PE imports, read
    from the wheel, and what the wheel's `_ld_preload.py` loads for it by name at import: 1.11-1.15 on Linux);
    None when not read."""
    library = _provider_library(build, platform, provider)
    if library is None or library.needs is None:
        return None
    return tuple(dict.fromkeys((*library.needs, *library.preloads)))


def provider_preloads(build: OrtBuild, platform: str, provider: str = "cuda") -> tuple[str, ...]:
    """What the wheel's `_ld_preload.py` loads by name for `provider` at import (not in its DT_NEEDED)."""
    library = _provider_library(build, platform, provider)
    return library.preloads if library is not None else ()


def _provider_library(build: OrtBuild, platform: str, provider: str) -> ProviderLibrary | None:
    record = build.wheel_platform(platform)
    return record.provider(provider) if record is not None else None


# --- the files NVIDIA wheels install ------------------------------------------------------------------------


def wheel_files(matrix: Matrix, package: str, platform: str, version: str | None = None) -> WheelFiles | None:
    """The files `package` installs on `platform`: of exactly `version`, or (None) of its newest recorded
    version; None when the matrix does not record them."""
    rows = [w for w in matrix.wheel_files if w.package == package and w.platform == platform]
    if version is not None:
        return next((w for w in rows if version in w.versions), None)
    if not rows:
        return None
    return max(rows, key=lambda w: max(vtuple(v) for v in w.versions))
