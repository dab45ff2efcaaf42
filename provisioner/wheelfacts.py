"""Facts of an onnxruntime-gpu wheel read from its members, and from its file name.

Pure parsers (build_and_package_info.py, METADATA, onnxruntime/__init__.py, a wheel file name; a provider
library's DT_NEEDED through the one ELF reader, standalone/elf.py) plus `read_wheel_facts(source)`, which
pulls just the members it needs out of a `RangeSource` (see provisioner.ziprange). Shared by
`provisioner.matrix.refresh` and the maintainer script `bin/derive_release.py`."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from provisioner.platforms import LEGACY_MANYLINUX
from provisioner.standalone.elf import ElfError, read_dynamic_bytes
from provisioner.standalone.libnames import TENSORRT_FAMILIES, is_system_library, library_family
from provisioner.ziprange import RangeSource, ZipEntry, central_directory, read_member, stream_member

if TYPE_CHECKING:
    from collections.abc import Iterator

BUILD_INFO = "onnxruntime/capi/build_and_package_info.py"
INIT = "onnxruntime/__init__.py"
CUDA_PROVIDER = "onnxruntime/capi/libonnxruntime_providers_cuda.so"
TENSORRT_PROVIDER = "onnxruntime/capi/libonnxruntime_providers_tensorrt.so"
PROVIDER_PREFIX_BYTES = 4_000_000  # the dynamic string table sits in the first MBs of the library
# an execution provider's library in a wheel (1.11's Windows wheels keep them under *.data/purelib/)
_PROVIDER_MEMBER = re.compile(
    r"^(?:[^/]+\.data/(?:purelib|platlib)/)?onnxruntime/capi/(?:lib)?onnxruntime_providers_(\w+)\.(?:so|dll)$"
)
NOT_A_PROVIDER = frozenset({"shared"})  # onnxruntime_providers_shared: the bridge every provider loads

_SONAME = re.compile(rb"(?<=\x00)(lib[A-Za-z0-9_+\-]+\.so(?:\.[0-9]+)*)(?=\x00)")
_WHEEL_NAME = re.compile(
    r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-(?P<build>\d[^-]*))?-(?P<python>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$"
)
_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)_(x86_64|aarch64)$")


@dataclass(frozen=True)
class WheelName:
    """What a wheel's file name says: version, Python ("3.13t" for free-threaded), platform, glibc floor."""

    filename: str
    distribution: str
    version: str
    python: str  # "3.12", "3.13t"
    platform: str  # linux-x86_64 | linux-aarch64 | windows-amd64 | other tag
    glibc_min: str | None


@dataclass(frozen=True)
class WheelFacts:
    """What one wheel says about itself."""

    build_info: dict[str, str]
    cuda_version: str | None
    cudnn_version: str | None  # major, where build info names it
    requires_python: str | None
    extras: dict[str, tuple[str, ...]]  # extra -> requirement strings (without the marker)
    preload_dlls: bool
    cuda_provider_libraries: tuple[str, ...] | None  # None: no CUDA provider, or not read
    tensorrt_provider_libraries: tuple[str, ...] | None
    members: tuple[str, ...] = field(default=(), repr=False)

    @property
    def tensorrt_major(self) -> int | None:
        """10 when the TensorRT provider links libnvinfer.so.10."""
        for lib in self.tensorrt_provider_libraries or ():
            match = re.fullmatch(r"libnvinfer\.so\.(\d+)", lib)
            if match:
                return int(match.group(1))
        return None


def parse_wheel_name(filename: str) -> WheelName | None:
    """Parse `onnxruntime_gpu-1.20.0-cp313-cp313t-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl`."""
    match = _WHEEL_NAME.match(filename)
    if not match:
        return None
    py_tag, abi = match["python"].split(".")[0], match["abi"]
    digits = re.fullmatch(r"cp(\d)(\d+)", py_tag)
    if not digits:
        return None
    python = f"{digits.group(1)}.{digits.group(2)}" + ("t" if abi.endswith("t") else "")
    platform, glibc = _platform(match["plat"])
    return WheelName(filename, match["name"], match["version"], python, platform, glibc)


def _platform(tags: str) -> tuple[str, str | None]:
    floors: list[tuple[int, int]] = []
    arch = None
    for tag in tags.split("."):
        if tag == "win_amd64":
            return "windows-amd64", None
        modern = _MANYLINUX.match(tag)
        if modern:
            floors.append((int(modern.group(1)), int(modern.group(2))))
            arch = modern.group(3)
            continue
        for legacy, floor in LEGACY_MANYLINUX.items():
            if tag.startswith(legacy + "_"):
                major, minor = floor.split(".")
                floors.append((int(major), int(minor)))
                arch = tag[len(legacy) + 1 :]
    if arch and floors:
        low = min(floors)
        return f"linux-{arch}", f"{low[0]}.{low[1]}"
    return tags, None


def parse_build_info(text: str) -> dict[str, str]:
    """The constant string assignments of build_and_package_info.py (read, never executed)."""
    values: dict[str, str] = {}
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return values
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            values[node.targets[0].id] = node.value.value
    return values


def parse_metadata(text: str) -> tuple[str | None, dict[str, tuple[str, ...]]]:
    """(Requires-Python, extra -> requirements) from a METADATA file."""
    requires_python = None
    extras: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the body (long description) starts
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "Requires-Python":
            requires_python = value
        elif key == "Provides-Extra":
            extras.setdefault(value, [])
        elif key == "Requires-Dist" and ";" in value:
            requirement, _, marker = value.partition(";")
            found = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", marker)
            if found:
                extras.setdefault(found.group(1), []).append(requirement.strip().replace(" ", ""))
    return requires_python, {name: tuple(reqs) for name, reqs in extras.items()}


def has_preload_dlls(init_text: str) -> bool:
    """True when onnxruntime/__init__.py defines (or imports) preload_dlls."""
    return bool(re.search(r"^\s*def preload_dlls\b|\bimport\b.*\bpreload_dlls\b", init_text, re.MULTILINE))


def elf_needed_sonames(prefix: bytes) -> tuple[str, ...] | None:
    """The libraries an ELF shared object needs, from its first bytes; None when they are not there.

    Exact when the dynamic segment lies inside `prefix` (DT_NEEDED entries). Otherwise the versioned
    sonames of the dynamic string table found in the prefix (DT_NEEDED and version-requirement names;
    the table sits early unless patchelf moved it to the end of the file, in which case: None).
    System libraries are left out.
    """
    if not prefix.startswith(b"\x7fELF"):
        return None
    try:
        needed: list[str] | None = read_dynamic_bytes(prefix).needed or None  # a library needs something
    except ElfError:
        needed = None  # the dynamic segment or its strings lie beyond the prefix
    # Versioned sonames in the string tables: DT_NEEDED and version-need names, and the entries ORT's
    # setup.py removed from DT_NEEDED with patchelf (older wheels preload those through _ld_preload.py).
    named = [m.decode() for m in _SONAME.findall(prefix) if re.search(rb"\.so\.\d", m)]
    names = (needed or []) + named if needed is not None or named else None
    if names is None:
        return None
    return tuple(sorted({name for name in names if not is_system_library(name)}))


LD_PRELOAD = "onnxruntime/capi/_ld_preload.py"
_UNAVAILABLE = re.compile(r"^ORT_([A-Z]+)_UNAVAILABLE$")


def parse_ld_preload(text: str) -> dict[str, tuple[str, ...]]:
    """provider -> the libraries onnxruntime's `_ld_preload.py` loads by name at import for it (1.11-1.15 Linux
    wheels, whose provider libraries lost those DT_NEEDED entries to patchelf): each `try:` block's
    `CDLL("libcublas.so.11", ...)` calls, the provider named by the `ORT_<PROVIDER>_UNAVAILABLE` its `except` sets.
    Empty where the file preloads nothing (1.16 onwards) or cannot be parsed."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        names = [
            call.args[0].value
            for statement in node.body
            for call in ast.walk(statement)
            if isinstance(call, ast.Call)
            and getattr(call.func, "id", None) == "CDLL"
            and call.args
            and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str)
        ]
        flags = [
            match.group(1).lower()
            for handler in node.handlers
            for item in ast.walk(handler)
            if isinstance(item, ast.Constant) and isinstance(item.value, str)
            for match in [_UNAVAILABLE.match(item.value)]
            if match
        ]
        if names and flags:
            found[flags[0]] = tuple(dict.fromkeys(found.get(flags[0], ()) + tuple(names)))
    return found


def read_ld_preload(source: RangeSource) -> dict[str, tuple[str, ...]]:
    """`parse_ld_preload` of the wheel's `_ld_preload.py` (a few KB by range requests); {} where it has none."""
    entries = central_directory(source)
    entry = entries.get(LD_PRELOAD)
    if entry is None:
        return {}
    return parse_ld_preload(read_member(source, entry, 1_000_000).decode("utf-8", "replace"))


def read_wheel_facts(source: RangeSource, read_libraries: bool = True) -> WheelFacts:
    """Read build info, METADATA, __init__.py and (optionally) the provider libraries' sonames."""
    entries = central_directory(source)
    metadata_name = next((n for n in entries if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)), None)

    def text(name: str | None) -> str:
        return read_member(source, entries[name]).decode("utf-8", "replace") if name in entries and name else ""

    build_info = parse_build_info(text(BUILD_INFO))
    requires_python, extras = parse_metadata(text(metadata_name))
    preload = has_preload_dlls(text(INIT))
    cuda_libs = _provider_libs(source, entries, CUDA_PROVIDER) if read_libraries else None
    trt_libs = _provider_libs(source, entries, TENSORRT_PROVIDER) if read_libraries else None
    cudnn = build_info.get("cudnn_version")
    return WheelFacts(
        build_info=build_info,
        cuda_version=build_info.get("cuda_version") or None,
        cudnn_version=cudnn.split(".")[0] if cudnn else None,
        requires_python=requires_python,
        extras=extras,
        preload_dlls=preload,
        cuda_provider_libraries=cuda_libs,
        tensorrt_provider_libraries=trt_libs,
        members=tuple(entries),
    )


def _provider_libs(source: RangeSource, entries: dict[str, ZipEntry], name: str) -> tuple[str, ...] | None:
    if name not in entries:
        return None
    own = name.rsplit("/", 1)[1]
    libs = elf_needed_sonames(read_member(source, entries[name], PROVIDER_PREFIX_BYTES))
    if libs is None:
        return None
    return tuple(lib for lib in libs if lib != own and not lib.startswith("libonnxruntime"))


def provider_members(entries: dict[str, ZipEntry]) -> dict[str, ZipEntry]:
    """provider ("cuda", "tensorrt") -> its library's member, from a wheel's central directory."""
    found: dict[str, ZipEntry] = {}
    for name, entry in entries.items():
        match = _PROVIDER_MEMBER.match(name)
        if match and match.group(1) not in NOT_A_PROVIDER:
            found.setdefault(match.group(1), entry)
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class ProviderRead:
    """One provider library of a wheel, read in one streamed pass (standalone/fatbin.py)."""

    provider: str
    member: str
    size: int
    crc32: int
    needs: tuple[str, ...] | None  # DT_NEEDED / PE imports; None: not readable
    delay_loads: tuple[str, ...]
    kernels: tuple[str, ...]  # sm_75 ...
    ptx: tuple[str, ...]  # compute_90 ...
    notes: tuple[str, ...] = ()
    opens: tuple[str, ...] = ()  # the TensorRT provider: TensorRT libraries it names and does not link
    preloads: tuple[str, ...] = ()  # what `_ld_preload.py` loads by name for it at import (parse_ld_preload)


def read_provider(source: RangeSource, entry: ZipEntry, provider: str) -> ProviderRead:
    """Stream-decompress one provider library out of the wheel and read its GPU code and imports (nothing is
    stored: the bytes pass once, front to back)."""
    from provisioner.standalone.fatbin import read_library

    prefix = bytearray()
    keep = PROVIDER_PREFIX_BYTES if provider == "tensorrt" else 0  # only the TensorRT provider's `opens` reads it

    def chunks() -> Iterator[bytes]:
        for chunk in stream_member(source, entry):
            if len(prefix) < keep:
                prefix.extend(chunk[: keep - len(prefix)])
            yield chunk

    code = read_library(chunks(), entry.size)
    needs = tuple(code.needed) if code.needed is not None else None
    notes = list(code.notes)
    if code.blobs_outside:
        notes.append(f"{code.blobs_outside} fatbin blobs outside the GPU-code section were not counted")
    if code.other:
        notes.append(f"other fatbin entries: {' '.join(code.other)}")
    return ProviderRead(
        provider=provider,
        member=entry.name,
        size=entry.size,
        crc32=entry.crc32,
        needs=needs,
        delay_loads=tuple(code.delay_loaded),
        kernels=tuple(code.kernels),
        ptx=tuple(code.ptx),
        notes=tuple(notes),
        opens=_tensorrt_opens(bytes(prefix), needs) if provider == "tensorrt" else (),
    )


def _tensorrt_opens(prefix: bytes, needs: tuple[str, ...] | None) -> tuple[str, ...]:
    """The TensorRT libraries a TensorRT provider's string tables name (its first MBs, as `elf_needed_sonames`
    reads them) that it does not link: opened when needed (libnvinfer_plugin.so.10), or preloaded by onnxruntime's
    Python package (1.11-1.15, whose DT_NEEDED lost them to patchelf)."""
    named = elf_needed_sonames(prefix) or ()
    return tuple(sorted(n for n in named if library_family(n) in TENSORRT_FAMILIES and n not in (needs or ())))
