"""Where the dynamic loader would find each CUDA library (libcudart.so.13, cudnn64_9.dll, ...), and what
installed it.

Pure parts: `parse_ldconfig` (text of `ldconfig -p`), `search_places` (which folders, in which order, with
which source label; `windows_places` for a Windows process), `conda_cuda_major` (the CUDA major a conda record
states); the names come from standalone/libnames.py (`match_library`: file name -> library and major). The
reading parts, `find_libraries` (lists folders) and `read_conda_owners` (conda-meta/*.json), take every path
from an injectable root, env and ldconfig text.
"""

from __future__ import annotations

import json
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
    """A folder the loader (or onnxruntime's preloading) searches, how ortprov names its source, and what is
    known of the package that put its libraries there (a pip wheel's name and CUDA major, torch's CUDA)."""

    folder: str
    source: str
    package: str = ""
    cuda_major: int | None = None


@dataclass(frozen=True)
class CondaOwner:
    """The conda package (a conda-meta/*.json record) that installed a file."""

    name: str
    version: str
    build: str
    cuda_major: int | None

    @property
    def label(self) -> str:
        return f"conda {self.name} {self.version} ({self.build})" if self.build else f"conda {self.name} {self.version}"


_CONDA_BUILD_CUDA = re.compile(r"(?:^|[_-])cuda(\d+)(?:[_.-]|$)")
# a dependency that fixes the CUDA major: cuda-version >=12,<13 / cudatoolkit 11.8.* / cuda-cudart >=12.6
_CONDA_CUDA_DEP = re.compile(r"^(cuda-version|cudatoolkit|cuda-cudart|cuda-runtime)\s+[>=~]*\s*(\d+)(?:[.,<* ]|$)")


def conda_cuda_major(name: str, version: str, build: str, depends: Iterable[str]) -> int | None:
    """The CUDA major a conda record states: its build string (pytorch's `cuda126_...`, cudnn's `cuda12_...`),
    else a `cuda-version` / `cudatoolkit` / `cuda-cudart` dependency, else its own version where the package is
    one of those. None when the record says nothing about CUDA."""
    match = _CONDA_BUILD_CUDA.search(build)
    if match:
        digits = match.group(1)
        return int(digits[:-1] if len(digits) >= 3 else digits)
    for dep in depends:
        found = _CONDA_CUDA_DEP.match(dep.strip())
        if found:
            return int(found.group(2))
    if name in ("cuda-version", "cudatoolkit", "cuda-cudart", "cuda-runtime") and version[:1].isdigit():
        return int(version.split(".")[0])
    return None


def _norm(path: str, windows: bool) -> str:
    path = os.path.normpath(path)
    return path.replace("\\", "/").lower() if windows else path


def read_conda_owners(prefix: str, windows: bool = False) -> dict[str, CondaOwner]:
    """CUDA library path (as listed, and its real file) -> the conda package that installed it, from the
    prefix's conda-meta/*.json records; {} without them. Unreadable records are skipped."""
    owners: dict[str, CondaOwner] = {}
    meta = os.path.join(prefix, "conda-meta")
    try:
        names = sorted(n for n in os.listdir(meta) if n.endswith(".json"))
    except OSError:
        return owners
    for name in names:
        try:
            with open(os.path.join(meta, name), encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict) or not isinstance(record.get("files"), list):
            continue
        depends = [d for d in record.get("depends") or () if isinstance(d, str)]
        owner = CondaOwner(
            str(record.get("name", "")),
            str(record.get("version", "")),
            str(record.get("build", "")),
            conda_cuda_major(
                str(record.get("name", "")), str(record.get("version", "")), str(record.get("build", "")), depends
            ),
        )
        for relative in record["files"]:
            if not isinstance(relative, str) or not match_library(os.path.basename(relative), windows):
                continue
            full = os.path.join(prefix, relative)
            owners.setdefault(_norm(full, windows), owner)
            owners.setdefault(_norm(_real(full), windows), owner)
    return owners


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
    python_dir: str | None = None,
) -> list[Place]:
    """Folders to look in, in order: pip wheels, torch/lib, the conda env's lib (its python's RPATH),
    LD_LIBRARY_PATH, the ld.so cache (LDCONFIG_CACHE), CUDA toolkits under /usr/local (found, but no loader
    looks there by itself), WSL's driver folder. Windows: `windows_places`."""
    env = {} if env is None else env
    places = _loaded_first(wheels, torch, tuple(torch_requires))
    if windows:
        return places + windows_places(env, conda_prefix=conda_prefix, python_dir=python_dir)
    if conda_prefix:
        places.append(Place(os.path.join(conda_prefix, "lib"), "conda"))
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


def _loaded_first(wheels: Iterable[NvidiaWheel], torch: TorchInfo | None, requires: tuple[str, ...]) -> list[Place]:
    """The folders whose libraries are loaded by path before the loader searches (torch's import, onnxruntime's
    preload_dlls and ortprov's loader hook load the NVIDIA wheels' files; torch loads torch/lib's)."""
    places: list[Place] = []
    for wheel in wheels:
        source = wheel_source(wheel, requires) if torch is not None else "pip"
        package = f"{wheel.name} {wheel.version}"
        places.extend(Place(folder, source, package, wheel.cuda_major) for folder in wheel.lib_dirs)
    if torch is not None and torch.location:
        cuda = (
            int(torch.cuda_version.split(".")[0]) if torch.cuda_version and torch.cuda_version[:1].isdigit() else None
        )
        places.append(Place(os.path.join(torch.location, "torch", "lib"), "torch", f"torch {torch.version}", cuda))
    return places


def windows_places(
    env: dict[str, str], *, conda_prefix: str | None = None, python_dir: str | None = None
) -> list[Place]:
    """The folders a Windows process searches for a DLL the CUDA provider imports by name (LoadLibraryEx with the
    standard search order, SafeDllSearchMode on), after the DLLs already loaded by path (`_loaded_first`; a loaded
    module's base name serves every later load): the application's folder (python.exe's: a conda env's prefix),
    System32, the Windows folder, conda's Library/bin (an activated env puts it first on PATH; conda's python
    adds it as a DLL directory), then PATH. %CUDA_PATH%\\bin is listed last as `cuda_path`: the loader searches it
    only where PATH names it (then it is found as `path`)."""
    places: list[Place] = []
    if python_dir:
        places.append(Place(python_dir, "app"))
    system_root = env.get("SystemRoot") or env.get("SYSTEMROOT")
    if system_root:
        places.append(Place(_win_join(system_root, "System32"), "system"))
        places.append(Place(system_root, "system"))
    if conda_prefix:
        places.append(Place(_win_join(conda_prefix, "Library", "bin"), "conda"))
    places.extend(Place(folder, "path") for folder in _split_path_list(env.get("PATH"), True))
    for key in sorted(env):
        if key == "CUDA_PATH" or key.startswith("CUDA_PATH_V"):
            places.append(Place(_win_join(env[key], "bin"), "cuda_path"))
    return places


def _win_join(base: str, *parts: str) -> str:
    sep = "\\" if "\\" in base or ":" in base[:2] else os.sep
    return sep.join([base.rstrip("\\/"), *parts])


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except OSError:
        return path


def find_libraries(
    places: Iterable[Place],
    ldconfig_entries: Iterable[tuple[str, str]] = (),
    windows: bool = False,
    owners: dict[str, CondaOwner] | None = None,
) -> tuple[LibraryHit, ...]:
    """Every CUDA library (each major) in the places and the ld.so cache, in search order; one hit per real file.
    `owners` (read_conda_owners): the conda package of a file, its label and CUDA major."""
    hits: list[LibraryHit] = []
    seen: set[str] = set()
    owners = owners or {}

    def add(filename: str, path: str, place: Place) -> None:
        matched = match_library(filename, windows)
        if not matched:
            return
        real = _real(path)
        key = real.lower() if windows else real
        if key in seen:
            return
        seen.add(key)
        package, cuda = place.package, place.cuda_major
        owner = owners.get(_norm(path, windows)) or owners.get(_norm(real, windows))
        if owner is not None:
            package, cuda = owner.label, owner.cuda_major
        hits.append(LibraryHit(matched[0], matched[1], filename, path, place.source, cuda, package or None))

    ldconfig = list(ldconfig_entries)
    for place in places:
        if place.source == "ldconfig":
            for filename, path in ldconfig:
                add(filename, path, place)
            ldconfig = []
            continue
        try:
            names = sorted(os.listdir(place.folder))
        except OSError:
            continue
        for filename in names:
            full = os.path.join(place.folder, filename)
            if match_library(filename, windows) and os.path.exists(full):
                add(filename, full, place)
    for filename, path in ldconfig:
        add(filename, path, LDCONFIG_CACHE)
    return tuple(hits)
