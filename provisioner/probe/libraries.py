"""Where the dynamic loader would find each CUDA library (libcudart.so.13, cudnn64_9.dll, ...).

Pure parts: `parse_ldconfig` (text of `ldconfig -p`), `search_places` (which folders, in which order, with
which source label); the names come from standalone/libnames.py (`match_library`: file name -> library and
major). The walking part, `find_libraries`, only lists folders; every path hangs off an injectable root, env
and ldconfig text.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from provisioner import childproc
from provisioner.facts import LibraryHit, NvidiaWheel, TorchInfo
from provisioner.standalone.libnames import match_library

if TYPE_CHECKING:
    from collections.abc import Iterable

_LDCONFIG_LINE = re.compile(r"^\s+(\S+)\s+\(([^)]*)\)\s+=>\s+(.+?)\s*$")
_LDCONFIG_ARCH = {"x86_64": "x86-64", "amd64": "x86-64", "aarch64": "AArch64", "arm64": "AArch64"}


@dataclass(frozen=True)
class Place:
    """A folder the loader (or onnxruntime's preloading) searches, and how ortprov names its source."""

    folder: str
    source: str


LDCONFIG_CACHE = Place("ld.so cache", "ldconfig")  # where in the search order the `ldconfig -p` entries go


def parse_ldconfig(text: str, arch: str | None = None) -> list[tuple[str, str]]:
    """(file name, path) pairs of `ldconfig -p` for this architecture (32-bit entries dropped)."""
    wanted = _LDCONFIG_ARCH.get((arch or "").lower())
    entries = []
    for line in text.splitlines():
        match = _LDCONFIG_LINE.match(line)
        if not match:
            continue
        name, flags, path = match.groups()
        if wanted and wanted not in flags:
            continue
        entries.append((name, path))
    return entries


def read_ldconfig(timeout: float = 5.0) -> str:
    """The text of `ldconfig -p` ('' when ldconfig is missing or fails)."""
    for command in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        try:
            completed = childproc.run([command, "-p"], timeout=timeout)
        except OSError:
            continue
        if completed.returncode == 0 and not completed.timed_out:
            return completed.stdout
    return ""


def wheel_source(wheel: NvidiaWheel, torch_requires: Iterable[str]) -> str:
    """'torch' when torch is installed and requires this wheel (it came with torch), else 'pip'."""
    return "torch" if wheel.name in set(torch_requires) else "pip"


def _split_path_list(value: str | None, windows: bool) -> list[str]:
    return [item for item in (value or "").split(";" if windows else ":") if item.strip()]


def search_places(
    *,
    windows: bool,
    wheels: Iterable[NvidiaWheel] = (),
    torch: TorchInfo | None = None,
    torch_requires: Iterable[str] = (),
    conda_prefix: str | None = None,
    env: dict[str, str] | None = None,
    root: Path = Path("/"),
) -> list[Place]:
    """Folders to look in, in order: pip wheels, torch/lib, the conda env's lib (its python's RPATH),
    LD_LIBRARY_PATH (Linux) or PATH and CUDA_PATH (Windows), the ld.so cache (LDCONFIG_CACHE), CUDA toolkits
    under /usr/local, WSL's driver folder."""
    env = {} if env is None else env
    requires = tuple(torch_requires)
    places: list[Place] = []
    for wheel in wheels:
        source = wheel_source(wheel, requires) if torch is not None else "pip"
        places.extend(Place(folder, source) for folder in wheel.lib_dirs)
    if torch is not None and torch.location:
        places.append(Place(os.path.join(torch.location, "torch", "lib"), "torch"))
    if conda_prefix:
        places.append(Place(os.path.join(conda_prefix, *(("Library", "bin") if windows else ("lib",))), "conda"))
    if windows:
        places.extend(Place(folder, "path") for folder in _split_path_list(env.get("PATH"), windows))
        for key in sorted(env):
            if key == "CUDA_PATH" or key.startswith("CUDA_PATH_V"):
                places.append(Place(os.path.join(env[key], "bin"), "cuda_path"))
        system_root = env.get("SystemRoot") or env.get("SYSTEMROOT")
        if system_root:
            places.append(Place(os.path.join(system_root, "System32"), "system"))
        return places
    places.extend(Place(folder, "ld_library_path") for folder in _split_path_list(env.get("LD_LIBRARY_PATH"), windows))
    places.append(LDCONFIG_CACHE)
    local = root / "usr/local"
    try:
        toolkits = sorted(p for p in local.iterdir() if p.name == "cuda" or p.name.startswith("cuda-"))
    except OSError:
        toolkits = []
    for toolkit in toolkits:
        places.append(Place(str(toolkit / "lib64"), "cuda_toolkit"))
        try:
            targets = sorted((toolkit / "targets").iterdir())
        except OSError:
            targets = []
        places.extend(Place(str(target / "lib"), "cuda_toolkit") for target in targets)
    places.append(Place(str(root / "usr/lib/wsl/lib"), "wsl"))
    return places


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except OSError:
        return path


def find_libraries(
    places: Iterable[Place], ldconfig_entries: Iterable[tuple[str, str]] = (), windows: bool = False
) -> tuple[LibraryHit, ...]:
    """Every CUDA library (each major) in the places and the ld.so cache; one hit per real file."""
    hits: list[LibraryHit] = []
    seen: set[str] = set()

    def add(filename: str, path: str, source: str) -> None:
        matched = match_library(filename, windows)
        if not matched:
            return
        real = _real(path)
        if real in seen:
            return
        seen.add(real)
        hits.append(LibraryHit(library=matched[0], major=matched[1], filename=filename, path=path, source=source))

    ldconfig = list(ldconfig_entries)
    for place in places:
        if place.source == "ldconfig":
            for filename, path in ldconfig:
                add(filename, path, "ldconfig")
            ldconfig = []
            continue
        try:
            names = sorted(os.listdir(place.folder))
        except OSError:
            continue
        for filename in names:
            full = os.path.join(place.folder, filename)
            if match_library(filename, windows) and os.path.exists(full):
                add(filename, full, place.source)
    for filename, path in ldconfig:
        add(filename, path, "ldconfig")
    return tuple(hits)
