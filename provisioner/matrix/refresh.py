"""`ortprov matrix update`: add new onnxruntime-gpu releases from a package index to a cached matrix.

The index is read through the Simple API (PEP 691 JSON, so mirrors work too); each new release's facts
are read from its wheels by HTTP range requests (provisioner.ziprange, provisioner.matrix.derive) without
storing them: the small members by range, and per platform the provider libraries of every wheel streamed once
(their GPU code, imports, Pythons: the same facts bin/derive_release.py records). The
result is validated like the shipped data and written to the user cache dir; it never replaces data with
more builds, and when the index cannot be reached the shipped (or cached) data stays in use.
"""

from __future__ import annotations

import datetime
import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner.matrix.derive import (
    PYPI_SIMPLE,
    IndexError_,
    build_from_facts,
    fallback_build,
    list_project_files,
    read_contents,
    read_release,
    wheels_by_version,
)
from provisioner.matrix.load import clear_memo, load_matrix, parse_files
from provisioner.serde import to_jsonable
from provisioner.urls import masked
from provisioner.versions import vtuple

if TYPE_CHECKING:
    from collections.abc import Callable

    from provisioner.matrix.derive import IndexFile
    from provisioner.matrix.model import Matrix, OrtBuild
    from provisioner.wheelfacts import WheelName

    Wheels = list[tuple[WheelName, IndexFile]]  # one release's wheels on the index

PROJECT = "onnxruntime-gpu"
_RELEASE = re.compile(r"^\d+\.\d+\.\d+$")


@dataclass(frozen=True)
class UpdateResult:
    """What an update did: status is updated | unchanged | offline | kept."""

    status: str
    index_url: str
    data_date: str
    builds_before: int
    builds_after: int
    added: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # "1.32.0: reason"
    written_to: str | None = None
    notices: tuple[str, ...] = field(default_factory=tuple)
    reason: str | None = None  # offline: why the index could not be read, in ortprov's words
    detail: str = ""  # offline: the HTTP library's own text (shown under -v)


def update_matrix(
    index_url: str = PYPI_SIMPLE,
    timeout: float = 20.0,
    retries: int = 2,
    cache_dir: Path | None = None,
    limit: int | None = None,
    today: str | None = None,
    read_gpu_code: bool = True,
    progress: Callable[[str], None] | None = None,
) -> UpdateResult:
    """Refresh the cached matrix from `index_url` (see the module docstring); `limit`: newest N new only.
    `read_gpu_code`: stream every wheel's provider libraries (their GPU code, imports); without it a new build's
    platforms are recorded unread, and the planner checks GPUs against its CUDA release only (and says so)."""
    import requests

    from provisioner.cachedir import cached_matrices_dir
    from provisioner.ziprange import HttpRangeSource

    target = cache_dir or cached_matrices_dir()
    base = load_matrix()
    before = len(base.builds)
    session = requests.Session()
    session.headers["User-Agent"] = "ortprov-matrix-update"
    try:
        files = list_project_files(session, index_url, PROJECT, timeout=timeout, retries=retries, progress=progress)
    except IndexError_ as exc:
        return UpdateResult(
            status="offline",
            index_url=index_url,
            data_date=base.date,
            builds_before=before,
            builds_after=before,
            notices=(f"still using the {_describe(base)}",),
            reason=f"{masked(exc.url)}: {exc.reason}",
            detail=exc.detail,
        )
    on_index = wheels_by_version(files, PROJECT)

    def open_source(url: str) -> HttpRangeSource:
        return HttpRangeSource(url, session=session, timeout=timeout, retries=retries)

    added: list[OrtBuild] = []
    skipped: list[str] = []
    for version in _new_versions(base, on_index, limit):
        derived = _derive(version, on_index[version], base, open_source, read_gpu_code, progress)
        if isinstance(derived, str):
            skipped.append(f"{version}: {derived}")
        else:
            added.append(derived)
    plugins, new_plugins, notice = _refresh_plugins(session, index_url, base, limit, progress)
    if not added and not new_plugins:
        status = "unchanged"
        notices = (notice,) if notice else ()
        return UpdateResult(status, index_url, base.date, before, before, skipped=tuple(skipped), notices=notices)
    return _write(plugins, tuple(added), tuple(skipped), target, index_url, today, new_plugins)


def _refresh_plugins(
    session: Any, index_url: str, base: Matrix, limit: int | None, progress: Callable[[str], None] | None
) -> tuple[Matrix, tuple[str, ...], str | None]:
    """`base` with the plugin EP releases and CPU cores the index has that it lacks (matrix/epfacts.py reads them
    as bin/derive_eps.py does), what was added ("onnxruntime-ep-... 0.6.0", "onnxruntime 1.33.0"), and a notice
    when the index serves none of the followed packages."""
    import dataclasses

    from provisioner.matrix.epfacts import derive_all

    if not base.ep_releases:
        return base, (), None
    if progress is not None:
        progress("plugin EPs: reading the followed EP packages and the CPU core on the index")
    try:
        releases, cores = derive_all(session, index_url, base.ep_releases, limit, only_new=True)
    except (IndexError_, OSError, ValueError) as exc:
        return base, (), f"plugin EPs: not refreshed ({exc})"
    recorded_cores = {(c.package, c.version) for c in base.core_releases}
    new_cores = tuple(c for c in cores if (c.package, c.version) not in recorded_cores)
    if not releases and not new_cores:
        return base, (), None
    eps = tuple(sorted((*releases, *base.ep_releases), key=lambda r: (r.package, vtuple(r.version)), reverse=True))
    every_core = sorted((*new_cores, *base.core_releases), key=lambda c: (c.package, vtuple(c.version)), reverse=True)
    added = tuple(f"{r.package} {r.version}" for r in releases) + tuple(f"{c.package} {c.version}" for c in new_cores)
    return dataclasses.replace(base, ep_releases=eps, core_releases=tuple(every_core)), added, None


def _new_versions(base: Matrix, on_index: dict[str, Wheels], limit: int | None) -> list[str]:
    """The releases on the index that the matrix lacks, newest first (`limit`: the newest N); releases older than
    the matrix's first PyPI build are not tracked."""
    known = {b.ort_version for b in base.builds if b.index_url is None}
    oldest = min(map(vtuple, known), default=())  # releases older than the matrix's first are not tracked
    new = sorted(
        (v for v in on_index if _RELEASE.match(v) and vtuple(v) >= oldest and v not in known),
        key=vtuple,
        reverse=True,
    )
    if limit is not None:
        new = new[:limit]
    return new


def _derive(
    version: str,
    wheels: Wheels,
    base: Matrix,
    open_source: Callable[[str], Any],
    read_gpu_code: bool,
    progress: Callable[[str], None] | None,
) -> OrtBuild | str:
    """One new release's record, read from its wheels by range requests, or why it is skipped (its wheels could not
    be read, its facts do not make a build, or the build would make the matrix invalid)."""
    from provisioner.ziprange import ZipRangeError

    try:
        facts = read_release(version, wheels, open_source)
        # what the planner judges GPUs, Pythons and providers by: the provider libraries of one wheel per
        # platform, streamed (~250 MB each, never stored), read as bin/derive_release.py reads every wheel's
        if progress is not None and read_gpu_code:
            progress(f"{version}: reading the provider libraries of one wheel per platform (GPU code, imports)")
        contents = read_contents(wheels, open_source, every_wheel=False) if read_gpu_code else None
    except (ZipRangeError, OSError, ValueError) as exc:
        return f"could not read the wheels ({exc})"
    majors = {m.major: m for m in base.cuda_majors}
    build, notes = build_from_facts(
        version, wheels, facts, majors, fallback=fallback_build(base.builds, version), contents=contents
    )
    if build is None:
        return "; ".join(notes)
    return _problem_with(base, build) or build


def _write(
    base: Matrix,
    added: tuple[OrtBuild, ...],
    skipped: tuple[str, ...],
    target: Path,
    index_url: str,
    today: str | None,
    plugins: tuple[str, ...] = (),
) -> UpdateResult:
    """Validate the matrix with the new builds and write it to `target`, unless the cache there already holds more
    builds (then it is kept)."""
    before = len(base.builds)
    date = today or datetime.date.today().isoformat()
    texts = render_files(base, base.builds + added, date)
    result = parse_files(texts, origin=str(target))  # validate exactly what will be written
    existing = _existing_cache(target)
    if existing is not None and len(existing.builds) > len(result.builds):
        return UpdateResult(
            "kept",
            index_url,
            existing.date,
            before,
            len(existing.builds),
            skipped=skipped,
            notices=(
                f"the cached matrix in {target} has more builds ({len(existing.builds)}) than the refresh: kept it",
            ),
        )
    write_files(target, texts)
    clear_memo()
    return UpdateResult(
        "updated",
        index_url,
        date,
        before,
        len(result.builds),
        added=tuple(b.ort_version for b in added) + plugins,
        skipped=skipped,
        written_to=str(target),
    )


def _describe(matrix: Matrix) -> str:
    where = "shipped data" if matrix.origin == "shipped" else f"cached data in {matrix.origin}"
    return f"{where} from {matrix.date}"


def _problem_with(base: Matrix, build: OrtBuild) -> str | None:
    """Why adding this build would make the matrix invalid (a CUDA version it does not know ...), or None."""
    from provisioner.matrix.check import check_matrix

    trial = replace(base, builds=base.builds + (build,))
    before = {str(p) for p in check_matrix(base)}
    problems = [p for p in check_matrix(trial) if str(p) not in before]
    return "; ".join(p.reason for p in problems) or None


def _existing_cache(target: Path) -> Matrix | None:
    from provisioner.errors import DataError

    if not (target / "onnxruntime-gpu.yaml").is_file():
        return None
    try:
        return load_matrix(target)
    except DataError:
        return None


def plain_record(record: Any) -> Any:
    """A record as YAML-ready data, leaving out fields that hold their default (`confirmed` always shown)."""
    import dataclasses

    data = to_jsonable(record)
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if f.default is not dataclasses.MISSING and to_jsonable(f.default) == data[f.name] and f.name != "confirmed":
            del data[f.name]
        elif isinstance(value, tuple) and value and all(dataclasses.is_dataclass(v) for v in value):
            data[f.name] = [_nested(v) for v in value]
    return data


def _nested(record: Any) -> Any:
    """A record inside a record (a build's platforms, their providers): its defaults left out too, except a
    glibc_min, which says "none" for Windows."""
    import dataclasses

    data = plain_record(record)
    for f in dataclasses.fields(record):
        if f.name == "glibc_min" and f.name not in data:
            data[f.name] = None
    return data


def build_order(build: OrtBuild) -> tuple:
    """The YAML's order of builds (sorted with reverse=True): newest release first, PyPI before a feed."""
    return (vtuple(build.ort_version), build.index_url is None)


def render_files(base: Matrix, builds: tuple[OrtBuild, ...], date: str) -> dict[str, str]:
    """The four YAML files of a matrix with these builds, all dated `date`."""
    import yaml

    ordered = sorted(builds, key=build_order, reverse=True)

    def dump(header: str, body: dict[str, Any]) -> str:
        document = {"schema_version": base.schema_version, "date": date, **body}
        return header + yaml.safe_dump(document, sort_keys=False, width=200)

    note = f"# Written by `ortprov matrix update` on {date}; schema: docs/matrix.md.\n"
    return {
        "onnxruntime-gpu.yaml": dump(note, {"builds": [plain_record(b) for b in ordered]}),
        "cuda.yaml": dump(
            note,
            {
                "releases": [plain_record(r) for r in base.cuda_releases],
                "architectures": [plain_record(a) for a in base.gpu_architectures],
                "majors": [plain_record(m) for m in base.cuda_majors],
                "errors": [plain_record(e) for e in base.cuda_errors],
            },
        ),
        "nvidia-wheels.yaml": dump(note, {"wheels": [plain_record(w) for w in base.library_wheels]}),
        "tensorrt.yaml": dump(
            note,
            {
                "releases": [plain_record(t) for t in base.tensorrt],
                "packages": [plain_record(t) for t in base.tensorrt_packages],
            },
        ),
        "gpus.yaml": dump(note, {"gpus": [plain_record(g) for g in base.gpu_models]}),
        # the plugin EPs and cores: `_refresh_plugins` adds what the index has that the matrix lacks
        "plugin-eps.yaml": dump(
            note,
            {
                "eps": [plain_record(e) for e in base.ep_releases],
                "cores": [plain_record(c) for c in base.core_releases],
            },
        ),
    }


def write_files(target: Path, texts: dict[str, str]) -> None:
    """Write each file atomically (temp file + rename), so a crash never leaves half a file."""
    target.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=target)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, target / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
