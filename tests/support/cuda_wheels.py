"""Real CUDA 12 libraries, read out of NVIDIA's cu12 wheels on PyPI (never committed).

Each library is one member of its wheel, read through HTTP range requests (provisioner.ziprange: a few hundred
kilobytes, not the wheel) once into a cache folder kept between runs ($ORTPROV_TEST_DATA, else
~/.cache/ortprov-tests), checked to be the ELF shared object of that soname. Offline: the test is skipped,
saying why. Two runs at once are safe: each writes a private name and renames it into place.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# soname -> (wheel, version, member): small members (libcudart 0.7 MB, the cuDNN 9 front library 0.1 MB)
CUDA12 = {
    "libcudart.so.12": ("nvidia-cuda-runtime-cu12", "12.8.90", "nvidia/cuda_runtime/lib/libcudart.so.12"),
    "libcudnn.so.9": ("nvidia-cudnn-cu12", "9.10.2.21", "nvidia/cudnn/lib/libcudnn.so.9"),
}


def cache_dir() -> Path:
    root = os.environ.get("ORTPROV_TEST_DATA") or str(Path.home() / ".cache" / "ortprov-tests")
    return Path(root) / "nvidia-cu12-libraries"


def cuda12_library(soname: str) -> Path:
    """The cached file of one CUDA 12 library (fetched from its wheel on PyPI when missing)."""
    package, version, member = CUDA12[soname]
    path = cache_dir() / f"{package}-{version}" / soname
    if not path.is_file():
        data = _fetch(package, version, member)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{soname}.", delete=False) as partial:
            partial.write(data)
        os.replace(partial.name, path)
    from provisioner.standalone.elf import read_dynamic_file

    assert read_dynamic_file(str(path)).soname == soname, path
    return path


def _fetch(package: str, version: str, member: str) -> bytes:
    import requests

    from provisioner.matrix.derive import PYPI_SIMPLE, list_project_files
    from provisioner.ziprange import HttpRangeSource, central_directory, read_member

    prefix = f"{package.replace('-', '_')}-{version}-"
    try:
        session = requests.Session()
        files = [
            f
            for f in list_project_files(session, PYPI_SIMPLE, package)
            if f.filename.startswith(prefix) and f.filename.endswith("x86_64.whl")
        ]
        assert files, f"{package} {version} has no Linux x86_64 wheel on PyPI"
        source = HttpRangeSource(files[0].url, session)
        return read_member(source, central_directory(source)[member])
    except (requests.RequestException, OSError) as exc:
        pytest.skip(f"offline? reading {member} from {package} {version} on PyPI failed: {exc}")
    raise AssertionError("unreachable")


def place(soname: str, folder: Path, real_name: str | None = None) -> Path:
    """Copy the library into `folder` as `real_name` (default: the soname), with a soname link when the names
    differ, as packages lay them out; the path of the soname."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (real_name or soname)
    target.write_bytes(cuda12_library(soname).read_bytes())
    link = folder / soname
    if real_name and real_name != soname:
        link.symlink_to(target.name)
    return link
