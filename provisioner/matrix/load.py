"""Loading the matrix: the shipped matrices/*.yaml or a refreshed copy in the user cache dir, validated.

A validated matrix is also kept as plain JSON keyed by the SHA-256 of its YAML texts (in the user cache dir,
and for the shipped data as matrices/compiled.json next to the YAML): the next process skips YAML parsing
and validation (JSON and direct construction take ~2 ms). Memoized per process.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from provisioner.errors import DataError
from provisioner.matrix.model import (
    FILE_NAMES,
    FILES,
    OPTIONAL_FILES,
    OPTIONAL_SECTIONS,
    PART_FILES,
    REQUIRED_FILE_NAMES,
    CoreRelease,
    CudaError,
    CudaMajor,
    CudaRelease,
    DockerImage,
    EpRelease,
    EpVariant,
    GpuArchitecture,
    GpuModel,
    LibraryWheel,
    Matrix,
    OrtBuild,
    ProviderLibrary,
    TensorRTPackage,
    TensorRTProvider,
    TensorRTRelease,
    WheelFiles,
    WheelPlatform,
    WindowsDriverBranch,
)

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; `ortprov plan` starts without it
if TYPE_CHECKING:
    from typing import Any

    from provisioner.matrix.check import Problem

SHIPPED_COMPILED = "compiled.json"  # next to the shipped YAML, written by compile_directory()
_COMPILED_FORMAT = 9  # 2: cuda_errors; 3: gpu_models, CudaError.message; 4: wheel contents and files;
# 5: TensorRT providers derived from the builds' wheel facts (ProviderLibrary.opens), not read from tensorrt.yaml;
# 6: gpu_architectures (cuda.yaml), ProviderLibrary.preloads; 7: windows_driver_branches (cuda.yaml);
# 8: ep_releases and core_releases (plugin-eps.yaml); 9: EpRelease.device_cc_min, driver_min, device_source
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
    if all((cached / name).is_file() for name in REQUIRED_FILE_NAMES):
        cached_date, shipped_date = _peek_date(cached), _peek_date(shipped)
        if cached_date is not None and shipped_date is not None and cached_date < shipped_date:
            notices.append(f"ignored the cached matrix in {cached}: it is older ({cached_date}) than the shipped data")
        else:
            try:
                matrix = _load_dir(cached, origin=str(cached))
            except DataError as exc:
                notices.append(_ignored(cached, exc))
    if matrix is None:
        matrix = _load_dir(shipped, origin="shipped")
        if notices:
            matrix = replace(matrix, notices=tuple(notices))
    _MEMO[key] = matrix
    return matrix


def _ignored(cached: Path, error: DataError) -> str:
    """The one-line warning for a cached matrix that does not load: the first file at fault and why."""
    problems = getattr(error, "problems", None) or []
    if not problems:
        why = error.message.splitlines()[0]
    else:
        first = problems[0]
        where = f"{cached / first.file}" if first.entry == "(file)" else f"{cached / first.file}: {first.entry}:"
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        why = f"{where} {first.reason}{more}"
    return f"ignored the cached matrix of `ortprov matrix update`: {why}; using the shipped data"


def clear_memo() -> None:
    """Forget loaded matrices (after `matrix update`, and in tests)."""
    _MEMO.clear()


def _peek_date(directory: Path) -> str | None:
    """The oldest `date:` among the files, read from their first lines (None when a file cannot be read)."""
    from provisioner.userfiles import MATRIX_FILE_LIMIT, Unreadable, read_bytes

    dates = []
    for name in FILE_NAMES:
        if name in OPTIONAL_FILES and not (directory / name).is_file():
            continue
        try:
            head = read_bytes(directory / name, MATRIX_FILE_LIMIT)[:2048].decode("utf-8", errors="replace")
        except Unreadable:
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
    from provisioner.matrix.check import Problem, check_header, check_matrix, convert_entries  # not on the cold path
    from provisioner.matrix.query import tensorrt_views

    problems: list[Problem] = []
    parts: dict[str, list[Any]] = {}
    dates: list[str] = []
    for name, sections in FILES.items():
        if name not in texts:
            if name in OPTIONAL_FILES:
                parts.update({f"{name}:{key}": [] for key, _ in sections})
            else:
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
            if (name, key) in OPTIONAL_SECTIONS and isinstance(data, dict) and key not in data:
                parts[f"{name}:{key}"] = []
                continue
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
        tensorrt_providers=tensorrt_views(parts["onnxruntime-gpu.yaml:builds"]),  # derived: recorded in the builds
        tensorrt_packages=tuple(parts["tensorrt.yaml:packages"]),
        cuda_errors=tuple(parts["cuda.yaml:errors"]),
        gpu_models=tuple(parts["gpus.yaml:gpus"]),
        gpu_architectures=tuple(parts["cuda.yaml:architectures"]),
        windows_driver_branches=tuple(parts["cuda.yaml:windows_driver_branches"]),
        wheel_files=tuple(parts["wheel-files.yaml:files"]),
        ep_releases=tuple(parts["plugin-eps.yaml:eps"]),
        core_releases=tuple(parts["plugin-eps.yaml:cores"]),
        origin=origin,
    )
    problems = check_matrix(matrix, PART_FILES)
    if problems:
        raise _data_error(problems, origin)
    return matrix


def _data_error(problems: list[Problem], origin: str) -> DataError:
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
    """The matrix of the YAML files in `directory`, read as every user file is (provisioner/userfiles.py: a
    regular file, bounded, strict UTF-8); a file that cannot be read is a problem naming it (DataError)."""
    import os

    from provisioner.userfiles import MATRIX_FILE_LIMIT, Unreadable, read_text

    texts = {}
    for name in FILE_NAMES:
        path = directory / name
        if not os.path.lexists(path):
            continue
        try:
            texts[name] = read_text(path, MATRIX_FILE_LIMIT)
        except Unreadable as exc:
            from provisioner.matrix.check import Problem  # not on the cold path

            raise _data_error([Problem(name, "(file)", exc.reason)], origin) from None
    digest = digest_of(texts)
    compiled = _read_compiled(digest)
    if compiled is not None:
        return replace(compiled, origin=origin)
    matrix = parse_files(texts, origin)
    _write_compiled(digest, matrix)
    return matrix


def digest_of(texts: dict[str, str]) -> str:
    """The key of a compiled copy: SHA-256 over the YAML texts (and the compiled format)."""
    import hashlib

    h = hashlib.sha256(f"ortprov-matrix-{_COMPILED_FORMAT}".encode())
    for name in sorted(texts):
        h.update(name.encode() + b"\0" + texts[name].encode() + b"\0")
    return h.hexdigest()


def _compiled_path(digest: str) -> Path:
    from provisioner.cachedir import user_cache_dir

    return user_cache_dir() / "compiled" / f"matrix-{digest[:32]}.json"


def _read_compiled(digest: str) -> Matrix | None:
    """The validated matrix for these YAML texts: from the user cache dir, else shipped next to the YAML."""
    import json

    from provisioner.userfiles import MATRIX_FILE_LIMIT, Unreadable, read_text

    for path in (_compiled_path(digest), shipped_dir() / SHIPPED_COMPILED):
        try:
            data = json.loads(read_text(path, MATRIX_FILE_LIMIT))
            if data.get("digest") == digest:
                return _matrix_from_plain(data["matrix"])
        except (Unreadable, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            continue  # a copy that does not load is rebuilt from the YAML
    return None


def compile_directory(directory: Path | str) -> Path:
    """Validate the YAML in `directory` and write its compiled JSON there (maintainers, for shipped data)."""
    import json

    from provisioner.serde import to_jsonable

    directory = Path(directory)
    present = [name for name in FILE_NAMES if (directory / name).is_file()]
    texts = {name: (directory / name).read_text(encoding="utf-8") for name in present}
    matrix = parse_files(texts, origin="shipped")
    path = directory / SHIPPED_COMPILED
    path.write_text(json.dumps({"digest": digest_of(texts), "matrix": to_jsonable(matrix)}), encoding="utf-8")
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


_NESTED: dict[type, dict[str, type]] = {
    OrtBuild: {"platforms": WheelPlatform},
    WheelPlatform: {"providers": ProviderLibrary},
    CudaMajor: {"docker_images": DockerImage},
    EpRelease: {"variants": EpVariant},
}


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
    return Matrix(
        schema_version=data["schema_version"],
        date=data["date"],
        builds=tuple(_record(OrtBuild, b) for b in data["builds"]),
        cuda_releases=tuple(_record(CudaRelease, r) for r in data["cuda_releases"]),
        cuda_majors=tuple(_record(CudaMajor, m) for m in data["cuda_majors"]),
        library_wheels=tuple(_record(LibraryWheel, w) for w in data["library_wheels"]),
        tensorrt=tuple(_record(TensorRTRelease, t) for t in data["tensorrt"]),
        tensorrt_providers=tuple(_record(TensorRTProvider, t) for t in data.get("tensorrt_providers", ())),
        tensorrt_packages=tuple(_record(TensorRTPackage, t) for t in data.get("tensorrt_packages", ())),
        cuda_errors=tuple(_record(CudaError, e) for e in data["cuda_errors"]),
        gpu_models=tuple(_record(GpuModel, g) for g in data.get("gpu_models", ())),
        gpu_architectures=tuple(_record(GpuArchitecture, a) for a in data.get("gpu_architectures", ())),
        windows_driver_branches=tuple(_record(WindowsDriverBranch, b) for b in data.get("windows_driver_branches", ())),
        wheel_files=tuple(_record(WheelFiles, f) for f in data.get("wheel_files", ())),
        ep_releases=tuple(_record(EpRelease, e) for e in data.get("ep_releases", ())),
        core_releases=tuple(_record(CoreRelease, c) for c in data.get("core_releases", ())),
        origin=data.get("origin", "shipped"),
        notices=tuple(data.get("notices", ())),
    )
