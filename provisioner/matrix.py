"""The compatibility matrix: onnxruntime-gpu builds, CUDA releases, NVIDIA library wheels, TensorRT.

Knowledge is data: every fact lives in matrices/*.yaml with its source. This module holds the model and
loads it; queries are small pure functions over the loaded `Matrix`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from provisioner.errors import DataError

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class WheelPlatform:
    """A platform an onnxruntime-gpu build has wheels for."""

    platform: str  # linux-x86_64 | linux-aarch64 | windows-amd64
    glibc_min: str | None = None  # manylinux floor, "2.28"


@dataclass(frozen=True)
class OrtBuild:
    """One onnxruntime-gpu release built for one CUDA version, on one package index."""

    ort_version: str
    cuda_version: str  # the CUDA version it was built with, "12.2"
    cudnn_version: str | None  # cuDNN major it needs, "9"
    python: tuple[str, ...]  # "3.10", "3.13t" (free-threaded)
    platforms: tuple[WheelPlatform, ...]
    sources: tuple[str, ...]
    package: str = "onnxruntime-gpu"
    index_url: str | None = None  # None: PyPI; else the feed's simple index URL
    tensorrt_version: str | None = None  # TensorRT its provider was built against, "10.9"
    extras: tuple[str, ...] = ()  # "cuda", "cudnn" where the release declares them
    requirements: tuple[str, ...] = ()  # pip requirements that supply its CUDA libraries
    libraries_linked: tuple[str, ...] = ()  # sonames the CUDA provider links, "libcublasLt.so.12"
    libraries_lazy: tuple[str, ...] = ()  # opened when an operator needs them, "libcudnn.so.9"
    preload_dlls: bool = False  # onnxruntime.preload_dlls() exists
    # compute capabilities compiled in ("7.5", "8.0", ...), None: unknown
    cuda_archs: tuple[str, ...] | None = None
    confirmed: bool = False  # facts read from the wheel itself (False: from documentation only)
    notes: str | None = None

    @property
    def cuda_major(self) -> int:
        """12 for "12.2"."""
        return int(self.cuda_version.split(".")[0])

    @property
    def label(self) -> str:
        """ "onnxruntime-gpu 1.31.1 (CUDA 13.0)"."""
        return f"{self.package} {self.ort_version} (CUDA {self.cuda_version})"


@dataclass(frozen=True)
class CudaRelease:
    """One CUDA toolkit minor release."""

    version: str  # "12.4"
    min_driver_linux: str  # toolkit driver requirement, "550.54.14"
    sources: tuple[str, ...]
    min_driver_windows: str | None = None
    compute_capabilities: tuple[str, ...] = ()  # supported, "5.0" ... "9.0"


@dataclass(frozen=True)
class DockerImage:
    """An nvidia/cuda image that carries cuDNN."""

    tag: str  # nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04
    cuda_version: str
    cudnn_version: str | None
    sources: tuple[str, ...] = ()
    size_mb: int | None = None


@dataclass(frozen=True)
class CudaMajor:
    """What is common to a CUDA major version: compatibility floors and package names."""

    major: int
    sources: tuple[str, ...]
    minor_compat_driver_linux: str | None = None  # minor-version-compatibility floor
    minor_compat_driver_windows: str | None = None
    pip_packages: dict[str, str] | None = None  # library -> pip name: {"cudnn": "nvidia-cudnn-cu12", ...}
    conda_packages: tuple[str, ...] = ()  # cudatoolkit + cudnn (11), cuda-version, cuda-cudart ... (12+)
    docker_images: tuple[DockerImage, ...] = ()
    cudnn_majors: tuple[str, ...] = ()  # cuDNN majors published for this CUDA major ("8", "9")


@dataclass(frozen=True)
class LibraryWheel:
    """One published version of an NVIDIA library wheel, for exact pins."""

    package: str  # nvidia-cudnn-cu12
    version: str  # 9.1.0.70
    library: str  # cudnn
    cuda_version: str  # the CUDA release it belongs to ("12.4"), or the major for cuDNN ("12")
    sources: tuple[str, ...] = ()
    # platforms with a wheel of this version (linux-x86_64 ...); empty: unknown, taken as any platform
    platforms: tuple[str, ...] = ()
    glibc_min: str | None = None  # the highest manylinux floor among its Linux wheels, "2.27"

    def available_on(self, tag: str, glibc: str | None = None) -> bool:
        """Whether this version has a wheel for platform `tag` (and, when known, the host's glibc)."""
        if self.platforms and tag not in self.platforms:
            return False
        if glibc and self.glibc_min and tag.startswith("linux-"):
            return _version_key(glibc) >= _version_key(self.glibc_min)
        return True


@dataclass(frozen=True)
class TensorRTRelease:
    """A TensorRT release and the pip packages that supply it."""

    version: str  # "10.9"
    cuda_major: int
    packages: tuple[str, ...]  # requirement strings, "tensorrt-cu12-libs==10.9.0.34"
    sources: tuple[str, ...] = ()
    notes: str | None = None  # e.g. why `packages` is empty


@dataclass(frozen=True)
class Matrix:
    """All the knowledge, loaded and validated."""

    schema_version: int
    date: str
    builds: tuple[OrtBuild, ...]
    cuda_releases: tuple[CudaRelease, ...] = ()
    cuda_majors: tuple[CudaMajor, ...] = ()
    library_wheels: tuple[LibraryWheel, ...] = ()
    tensorrt: tuple[TensorRTRelease, ...] = ()
    origin: str = "shipped"  # shipped | a cache path
    notices: tuple[str, ...] = ()  # why a cached copy was not used, for the CLI to show


# ---------------------------------------------------------------------------------------------------------
# Loading: shipped data (matrices/ inside the package) or a refreshed copy in the user cache dir.

_MEMO: dict[tuple[str, str, bool], Matrix] = {}
_DATE_LINE = re.compile(r"^date:\s*['\"]?(\d{4}-\d{2}-\d{2})['\"]?\s*$", re.MULTILINE)


def shipped_dir() -> Path:
    """The matrices/ folder shipped with ortprov."""
    from provisioner.resources import data_dir

    return data_dir("matrices")


def load_matrix(directory: Path | str | None = None, use_cache: bool = True) -> Matrix:
    """Load and validate the matrix; raises DataError naming file, entry and reason.

    With no `directory`: the shipped data, or the refreshed copy in the user cache dir when
    `use_cache` and that copy is valid and not older than the shipped data. Memoized per process.
    """
    from provisioner.cachedir import cached_matrices_dir

    if directory is not None:
        return _load_memo(Path(directory), origin=str(directory))
    shipped = shipped_dir()
    if not use_cache:
        return _load_memo(shipped, origin="shipped")
    cached = cached_matrices_dir()
    key = (str(shipped), str(cached), use_cache)
    if key in _MEMO:
        return _MEMO[key]
    matrix, notices = None, []
    if all((cached / name).is_file() for name in _file_names()):
        cached_date, shipped_date = _peek_date(cached), _peek_date(shipped)
        if cached_date is not None and shipped_date is not None and cached_date < shipped_date:
            notices.append(f"ignored the cached matrix in {cached}: it is older ({cached_date}) than the shipped data")
        else:
            try:
                matrix = _load_dir(cached, origin=str(cached))
            except DataError as exc:
                notices.append(f"ignored the cached matrix in {cached}: {exc.message}")
    if matrix is None:
        matrix = _load_dir(shipped, origin="shipped")
        if notices:
            matrix = replace(matrix, notices=tuple(notices))
    _MEMO[key] = matrix
    return matrix


def clear_memo() -> None:
    """Forget loaded matrices (after `matrix update`, and in tests)."""
    _MEMO.clear()


def _file_names() -> tuple[str, ...]:
    return _FILE_NAMES


def _peek_date(directory: Path) -> str | None:
    """The oldest `date:` among the files, read from their first lines only (cheap)."""
    dates = []
    for name in _file_names():
        try:
            with open(directory / name, encoding="utf-8") as handle:
                head = handle.read(2048)
        except OSError:
            return None
        found = _DATE_LINE.search(head)
        if not found:
            return None
        dates.append(found.group(1))
    return min(dates)


def _load_memo(directory: Path, origin: str) -> Matrix:
    key = (str(directory), origin, False)
    if key not in _MEMO:
        _MEMO[key] = _load_dir(directory, origin)
    return _MEMO[key]


def _yaml_load(text: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader


def parse_files(texts: dict[str, str], origin: str = "shipped") -> Matrix:
    """Build and validate a Matrix from file name -> YAML text; raises DataError listing every problem."""
    from provisioner.matrix_check import FILES, Problem, check_header, check_matrix, convert_entries

    problems: list[Problem] = []
    parts: dict[str, list[Any]] = {}
    dates: list[str] = []
    for name, sections in FILES.items():
        if name not in texts:
            problems.append(Problem(name, "(file)", "is missing"))
            continue
        try:
            data = _yaml_load(texts[name])
        except Exception as exc:  # yaml.YAMLError, but yaml is imported lazily
            problems.append(Problem(name, "(file)", f"is not valid YAML: {' '.join(str(exc).split())}"))
            continue
        date = check_header(name, data, problems)
        if date:
            dates.append(date)
        for key, cls in sections:
            parts[f"{name}:{key}"] = convert_entries(name, key, cls, data, problems)
    if problems:
        raise _data_error(problems, origin)
    matrix = Matrix(
        schema_version=1,
        date=max(dates),
        builds=tuple(parts["onnxruntime-gpu.yaml:builds"]),
        cuda_releases=tuple(parts["cuda.yaml:releases"]),
        cuda_majors=tuple(parts["cuda.yaml:majors"]),
        library_wheels=tuple(parts["nvidia-wheels.yaml:wheels"]),
        tensorrt=tuple(parts["tensorrt.yaml:releases"]),
        origin=origin,
    )
    problems = check_matrix(matrix, PART_FILES)
    if problems:
        raise _data_error(problems, origin)
    return matrix


def _data_error(problems: list[Any], origin: str) -> DataError:
    where = "the shipped matrix" if origin == "shipped" else f"the matrix in {origin}"
    shown = "\n  ".join(str(p) for p in problems[:20])
    more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
    error = DataError(
        f"{where} failed validation ({len(problems)} problem{'s' if len(problems) != 1 else ''}):\n  {shown}{more}",
        hint="run `ortprov matrix check` for the list; `ortprov matrix update` refreshes a cached copy",
    )
    error.problems = list(problems)  # type: ignore[attr-defined]
    return error


def _load_dir(directory: Path, origin: str) -> Matrix:
    texts = {}
    for name in _FILE_NAMES:
        path = directory / name
        try:
            texts[name] = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise DataError(f"cannot read {path}: {exc.strerror}") from exc
    digest = _digest(texts)
    compiled = _read_compiled(digest)
    if compiled is not None:
        return replace(compiled, origin=origin)
    matrix = parse_files(texts, origin)
    _write_compiled(digest, matrix)
    return matrix


# A validated matrix is also kept as plain JSON in the user cache dir, keyed by the SHA-256 of the YAML
# texts: the next process skips YAML parsing and validation (JSON + direct construction take ~2 ms).
_FILE_NAMES = ("onnxruntime-gpu.yaml", "cuda.yaml", "nvidia-wheels.yaml", "tensorrt.yaml")
PART_FILES = {  # logical part -> file name, for messages
    "builds": "onnxruntime-gpu.yaml",
    "cuda": "cuda.yaml",
    "wheels": "nvidia-wheels.yaml",
    "tensorrt": "tensorrt.yaml",
}
_COMPILED_FORMAT = 1


def _digest(texts: dict[str, str]) -> str:
    import hashlib

    h = hashlib.sha256(f"ortprov-matrix-{_COMPILED_FORMAT}".encode())
    for name in sorted(texts):
        h.update(name.encode() + b"\0" + texts[name].encode() + b"\0")
    return h.hexdigest()


def _compiled_path(digest: str) -> Path:
    from provisioner.cachedir import user_cache_dir

    return user_cache_dir() / "compiled" / f"matrix-{digest[:32]}.json"


SHIPPED_COMPILED = "compiled.json"  # next to the shipped YAML, written by compile_directory()


def _read_compiled(digest: str) -> Matrix | None:
    """The validated matrix for these YAML texts: from the user cache dir, else shipped next to the YAML."""
    import json

    for path in (_compiled_path(digest), shipped_dir() / SHIPPED_COMPILED):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("digest") == digest:
                return _matrix_from_plain(data["matrix"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def compile_directory(directory: Path | str) -> Path:
    """Validate the YAML in `directory` and write its compiled JSON there (maintainers, for shipped data)."""
    import json

    from provisioner.serde import to_jsonable

    directory = Path(directory)
    texts = {name: (directory / name).read_text(encoding="utf-8") for name in _FILE_NAMES}
    matrix = parse_files(texts, origin="shipped")
    path = directory / SHIPPED_COMPILED
    path.write_text(json.dumps({"digest": _digest(texts), "matrix": to_jsonable(matrix)}), encoding="utf-8")
    return path


def _write_compiled(digest: str, matrix: Matrix) -> None:
    """Best effort: a read-only or missing cache dir only costs speed."""
    import json
    import os

    from provisioner.serde import to_jsonable

    path = _compiled_path(digest)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"digest": digest, "matrix": to_jsonable(matrix)}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


_NESTED: dict[type, dict[str, type]] = {}


def _record(cls: type, data: dict[str, Any]) -> Any:
    """Rebuild an already-validated record: lists become tuples, nested records are rebuilt."""
    nested = _NESTED.get(cls, {})
    kwargs = {}
    for key, value in data.items():
        if key in nested and value is not None:
            value = tuple(_record(nested[key], item) for item in value)
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[key] = value
    return cls(**kwargs)


def _matrix_from_plain(data: dict[str, Any]) -> Matrix:
    _NESTED.setdefault(OrtBuild, {"platforms": WheelPlatform})
    _NESTED.setdefault(CudaMajor, {"docker_images": DockerImage})
    return Matrix(
        schema_version=data["schema_version"],
        date=data["date"],
        builds=tuple(_record(OrtBuild, b) for b in data["builds"]),
        cuda_releases=tuple(_record(CudaRelease, r) for r in data["cuda_releases"]),
        cuda_majors=tuple(_record(CudaMajor, m) for m in data["cuda_majors"]),
        library_wheels=tuple(_record(LibraryWheel, w) for w in data["library_wheels"]),
        tensorrt=tuple(_record(TensorRTRelease, t) for t in data["tensorrt"]),
        origin=data.get("origin", "shipped"),
        notices=tuple(data.get("notices", ())),
    )


# ---------------------------------------------------------------------------------------------------------
# Queries: small pure functions over a loaded Matrix.


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def ort_spec_matches(spec: str, version: str) -> bool:
    """`1.20` matches 1.20.*, `1.20.1` only itself; PEP 440 specifiers (`>=1.20,<1.23`) work too."""
    spec = spec.strip()
    if re.fullmatch(r"\d+(\.\d+)*", spec):
        parts = spec.split(".")
        return version.split(".")[: len(parts)] == parts
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(spec).contains(version, prereleases=True)


def builds_for(matrix: Matrix, ort_spec: str | None = None, cuda: int | str | None = None) -> tuple[OrtBuild, ...]:
    """Builds matching an ORT version spec and a CUDA major (12) or minor ("12.4"), newest first."""
    chosen = []
    for build in matrix.builds:
        if ort_spec and not ort_spec_matches(ort_spec, build.ort_version):
            continue
        if cuda is not None:
            wanted = str(cuda)
            if "." in wanted and build.cuda_version != wanted:
                continue
            if "." not in wanted and build.cuda_major != int(wanted):
                continue
        chosen.append(build)
    chosen.sort(key=lambda b: (_version_key(b.ort_version), b.index_url is None, b.cuda_version), reverse=True)
    return tuple(chosen)


def cuda_release(matrix: Matrix, version: str) -> CudaRelease | None:
    """The CudaRelease for "12.4" (a longer "12.4.1" is cut to its minor)."""
    minor = ".".join(version.split(".")[:2])
    return next((r for r in matrix.cuda_releases if r.version == minor), None)


def cuda_major(matrix: Matrix, major: int | str) -> CudaMajor | None:
    """The CudaMajor for 12 (or "12", "12.4")."""
    number = int(str(major).split(".")[0])
    return next((m for m in matrix.cuda_majors if m.major == number), None)


def cuda_releases_for_major(matrix: Matrix, major: int) -> tuple[CudaRelease, ...]:
    """The CUDA minors of one major, oldest first."""
    return tuple(
        sorted(
            (r for r in matrix.cuda_releases if r.version.split(".")[0] == str(major)),
            key=lambda r: _version_key(r.version),
        )
    )


def wheels_for(matrix: Matrix, package: str) -> tuple[LibraryWheel, ...]:
    """Every known version of one NVIDIA wheel (nvidia-cudnn-cu12 ...), oldest first."""
    chosen = [w for w in matrix.library_wheels if w.package == package]
    return tuple(sorted(chosen, key=lambda w: _version_key(w.version)))


def wheels_for_library(matrix: Matrix, library: str, cuda: int | str) -> tuple[LibraryWheel, ...]:
    """Versions of a library (cudart, cublas ...) for a CUDA major (12) or minor ("12.4"), oldest first."""
    wanted = str(cuda)
    chosen = []
    for wheel in matrix.library_wheels:
        if wheel.library != library:
            continue
        if "." in wanted:
            if wheel.cuda_version != wanted:
                continue
        elif wheel.cuda_version.split(".")[0] != wanted:
            continue
        chosen.append(wheel)
    return tuple(sorted(chosen, key=lambda w: _version_key(w.version)))


def tensorrt_release(matrix: Matrix, version: str, cuda_major_number: int) -> TensorRTRelease | None:
    """The TensorRT release a build's provider needs, for its CUDA major."""
    matches = (t for t in matrix.tensorrt if t.version == version and t.cuda_major == cuda_major_number)
    return next(matches, None)


def ort_versions(matrix: Matrix) -> tuple[str, ...]:
    """Every onnxruntime-gpu version in the matrix, newest first."""
    return tuple(sorted({b.ort_version for b in matrix.builds}, key=_version_key, reverse=True))


def sonames_by_cuda_major(matrix: Matrix) -> dict[str, tuple[str, ...]]:
    """CUDA major -> every soname a build of that major links or opens by name (the driver's left out):
    what the loader hook prepares, whichever release of that major is installed later."""
    table: dict[str, list[str]] = {}
    for build in sorted(matrix.builds, key=lambda b: _version_key(b.ort_version), reverse=True):
        names = table.setdefault(str(build.cuda_major), [])
        for soname in (*build.libraries_linked, *build.libraries_lazy):
            if soname not in names and not soname.startswith("libcuda.so"):
                names.append(soname)
    return {major: tuple(names) for major, names in sorted(table.items())}
