"""Plugin execution providers and the CPU onnxruntime core, read from their wheels on an index (the network edge of
matrices/plugin-eps.yaml; used by bin/derive_eps.py and `ortprov matrix update`).

Which EP packages to follow is data: the `eps` already recorded (a meta package and its CUDA variants). For each
version on the index: the meta package's METADATA (Requires-Python, Requires-Dist: its default variant), each
variant's wheels (platforms and manylinux floor from the file names; from the Linux x86_64 wheel: the provider
library, its DT_NEEDED, the libraries bundled beside it, the EP name its __init__.py registers, and the core
minimum its documentation states: `pip install onnxruntime>=X`). What no artifact says (the GPUs it supports, the
distributions it must not share an environment with) is carried over from the recorded release, with its source.
Cores: every version of the core package on the index from the oldest minimum any EP states, with its Pythons and
platforms from the file names.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from provisioner.matrix.model import CoreRelease, EpRelease, EpVariant
from provisioner.versions import vtuple

if TYPE_CHECKING:
    from collections.abc import Iterable

_REQUIRES = re.compile(r"^Requires-Dist:\s*([A-Za-z0-9_.-]+)\s*==\s*([\w.]+)\s*$", re.MULTILINE)
_PYTHON = re.compile(r"^Requires-Python:\s*(\S+)\s*$", re.MULTILINE)
_EP_NAME = re.compile(r"""^_KNOWN_EP_NAME\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)
_LIBRARY = re.compile(r"""['"]((?:lib)?onnxruntime_providers_\w+\.(?:so|dll))['"]""")


def core_minimum(metadata: str, core: str) -> str | None:
    """The core version the EP's METADATA requires: a Requires-Dist on the core, else its documented
    `pip install core>=X` (None when it says neither)."""
    for line in metadata.splitlines():
        if line.startswith("Requires-Dist:") and ";" not in line:
            found = re.match(rf"Requires-Dist:\s*{re.escape(core)}\s*>=\s*([\d.]+)", line)
            if found:
                return found.group(1)
    documented = re.search(rf"pip install {re.escape(core)}\s*>=\s*([\d.]+)", metadata)
    return documented.group(1) if documented else None


def default_variant(metadata: str) -> str | None:
    """The variant a meta package pins (`Requires-Dist: onnxruntime-ep-...-cu13==0.5.0`)."""
    found = _REQUIRES.search(metadata)
    return found.group(1) if found else None


def requires_python(metadata: str) -> str:
    found = _PYTHON.search(metadata)
    return found.group(1) if found else ""


def ep_name(init_text: str) -> str | None:
    """The EP name the package's __init__.py registers (`_KNOWN_EP_NAME = "..."`)."""
    found = _EP_NAME.search(init_text)
    return found.group(1) if found else None


def cuda_major_of(package: str) -> int | None:
    found = re.search(r"-cu(\d+)$", package)
    return int(found.group(1)) if found else None


def core_rows(package: str, filenames: Iterable[str], since: str, source: str) -> tuple[CoreRelease, ...]:
    """One CoreRelease per version >= `since`, its Pythons and platforms from the wheel names."""
    from provisioner.platforms import PLATFORM_ORDER
    from provisioner.wheelfacts import parse_wheel_name

    found: dict[str, tuple[set[str], set[str]]] = {}
    for filename in filenames:
        name = parse_wheel_name(filename)
        if name is None or vtuple(name.version) < vtuple(since):
            continue
        pythons, platforms = found.setdefault(name.version, (set(), set()))
        pythons.add(name.python)
        if name.platform in PLATFORM_ORDER:
            platforms.add(name.platform)
    return tuple(
        CoreRelease(
            package, version, tuple(sorted(py, key=vtuple)), tuple(sorted(plat)), (f"{source} ({package} {version})",)
        )
        for version, (py, plat) in sorted(found.items(), key=lambda item: vtuple(item[0]), reverse=True)
    )


def _platforms(filenames: Iterable[str]) -> tuple[tuple[str, ...], str | None]:
    from provisioner.platforms import wheel_file_platforms

    platforms: set[str] = set()
    floors = []
    for filename in filenames:
        platforms.update(wheel_file_platforms(filename))
        floor = re.search(r"manylinux_(\d+)_(\d+)_", filename)
        if floor:
            floors.append(f"{floor.group(1)}.{floor.group(2)}")
    return tuple(sorted(platforms)), (max(floors, key=vtuple) if floors else None)


def read_variant(session: Any, index_url: str, package: str, version: str) -> tuple[EpVariant, str, str] | None:
    """(the variant, its METADATA, its __init__.py) read from its wheels; None when the version has none."""
    from provisioner.matrix.derive import list_project_files
    from provisioner.standalone.elf import ElfError, read_dynamic_bytes
    from provisioner.ziprange import HttpRangeSource, central_directory, read_member

    prefix = f"{package.replace('-', '_')}-{version}-"
    files = [f for f in list_project_files(session, index_url, package) if f.filename.startswith(prefix)]
    if not files:
        return None
    platforms, _ = _platforms(f.filename for f in files)
    linux = next((f for f in files if f.filename.endswith("x86_64.whl")), files[0])
    glibc = _platforms([linux.filename])[1]  # the x86_64 wheel's floor (the planner's platform)
    source = HttpRangeSource(linux.url, session)
    entries = central_directory(source)
    metadata = next((n for n in entries if n.endswith(".dist-info/METADATA")), None)
    init = next((n for n in entries if n.count("/") == 1 and n.endswith("/__init__.py")), None)
    meta_text = read_member(source, entries[metadata]).decode("utf-8", "replace") if metadata else ""
    init_text = read_member(source, entries[init]).decode("utf-8", "replace") if init else ""
    libraries = [n for n in entries if re.search(r"\.so(\.\d+)*$|\.dll$", n)]
    wanted = _LIBRARY.findall(init_text)
    provider = next((n for n in libraries if n.rsplit("/", 1)[-1] in wanted), None)
    needs: tuple[str, ...] = ()
    if provider:
        try:
            needs = tuple(read_dynamic_bytes(read_member(source, entries[provider])).needed)
        except ElfError:
            needs = ()
    bundled = tuple(sorted(n.rsplit("/", 1)[-1] for n in libraries if n != provider))
    variant = EpVariant(
        package=package,
        cuda_major=cuda_major_of(package) or 0,
        platforms=platforms,
        glibc_min=glibc,
        library=provider.rsplit("/", 1)[-1] if provider else "",
        needs=needs,
        bundled=bundled,
    )
    return variant, meta_text, init_text


def derive_release(session: Any, index_url: str, known: EpRelease, version: str) -> EpRelease | None:
    """The release `version` of a followed EP package, read from the index; None when the meta package has no
    wheel of that version."""
    from provisioner.matrix.derive import list_project_files
    from provisioner.ziprange import HttpRangeSource, central_directory, read_member

    prefix = f"{known.package.replace('-', '_')}-{version}-"
    metas = [f for f in list_project_files(session, index_url, known.package) if f.filename.startswith(prefix)]
    if not metas:
        return None
    source = HttpRangeSource(metas[0].url, session)
    entries = central_directory(source)
    name = next(n for n in entries if n.endswith(".dist-info/METADATA"))
    meta_text = read_member(source, entries[name]).decode("utf-8", "replace")
    default = default_variant(meta_text) or known.default_variant
    names = dict.fromkeys([default, *(v.package for v in known.variants)])
    variants: list[EpVariant] = []
    core_min, registered = None, None
    for package in names:
        if not package:
            continue
        read = read_variant(session, index_url, package, version)
        if read is None:
            continue
        variant, text, init_text = read
        variants.append(variant)
        core_min = core_min or core_minimum(text, known.core)
        registered = registered or ep_name(init_text)
    if not variants:
        return None
    page = f"{index_url.rstrip('/')}/{known.package}/"
    return replace(
        known,
        version=version,
        ep_name=registered or known.ep_name,
        core_min=core_min or known.core_min,
        core_source=(
            f"{default} {version} METADATA: `pip install {known.core}>={core_min}`" if core_min else known.core_source
        ),
        variants=tuple(sorted(variants, key=lambda v: -v.cuda_major)),
        default_variant=default,
        python=requires_python(meta_text) or known.python,
        sources=(f"{page} ({known.package} {version} METADATA, its variants' wheels)",),
    )


def derive_all(
    session: Any,
    index_url: str,
    known: tuple[EpRelease, ...],
    limit: int | None = None,
    only_new: bool = False,
) -> tuple[tuple[EpRelease, ...], tuple[CoreRelease, ...]]:
    """Every version of each followed EP package on the index (the newest `limit` per package; `only_new`: those
    `known` lacks), and the core releases from the oldest core minimum they state."""
    from provisioner.matrix.derive import list_project_files

    releases: list[EpRelease] = []
    recorded = {(r.package, r.version) for r in known}
    for package in dict.fromkeys(r.package for r in known):
        template = max((r for r in known if r.package == package), key=lambda r: vtuple(r.version))
        files = list_project_files(session, index_url, package)
        versions = sorted({f.filename.split("-")[1] for f in files if f.filename.endswith(".whl")}, key=vtuple)
        if only_new:
            versions = [v for v in versions if (package, v) not in recorded]
        for version in list(reversed(versions))[:limit]:
            derived = derive_release(session, index_url, template, version)
            if derived is not None:
                releases.append(derived)
    cores: list[CoreRelease] = []
    followed = [*releases, *known] if only_new else releases or list(known)
    for core in dict.fromkeys(r.core for r in followed):
        floor = min((r.core_min for r in followed if r.core == core), key=vtuple)
        names = [f.filename for f in list_project_files(session, index_url, core)]
        cores += core_rows(core, names, floor, index_url)
    return tuple(releases), tuple(cores)
