"""Install or remove the loader hook (provisioner/standalone/loader_hook.py) in a target's site-packages.

What lands in site-packages:
  ortprov-loader.pth        one line, run by `site` at start-up, that imports _ortprov_loader and never raises
  _ortprov_loader/__init__.py   the hook (standalone/loader_hook.py), with the siblings it imports beside it
                                (standalone/elf.py, standalone/libnames.py)
  _ortprov_loader/hook.json     the sonames each CUDA major's builds link or open by name (from the matrix)
Writing is idempotent (a file is rewritten only when its bytes differ) and happens inside apply's
transaction, so a failed apply takes it back with everything else. No distribution owns these files: pip
leaves them alone, also on `pip install -U onnxruntime-gpu`, and the hook adapts to whichever build is there.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from provisioner import __version__, standalone
from provisioner.standalone.loader_hook import PACKAGE as PACKAGE_DIR
from provisioner.standalone.loader_hook import PTH_FILE

COMPILE_TIMEOUT = 60.0  # seconds the byte-compilation of the hook may take

# `site` runs a .pth line that starts with "import"; the exec keeps a missing or broken hook silent.
PTH_LINE = f'import sys; exec("try:\\n import {PACKAGE_DIR}\\nexcept Exception:\\n pass")\n'


def hook_files(
    sonames_by_cuda_major: dict[str, tuple[str, ...]],
    tensorrt_library_dirs: tuple[str, ...] = (),
    tensorrt_folders: list[str] | tuple[str, ...] = (),
    tensorrt_opened_later: tuple[str, ...] = (),
) -> dict[str, bytes]:
    """Relative path under site-packages -> content, for the matrix's soname table; `tensorrt_library_dirs`:
    the site-packages folders of TensorRT's pip packages; `tensorrt_folders`: a TensorRT outside site-packages
    (--tensorrt-libraries DIR); `tensorrt_opened_later`: TensorRT sonames a provider names but does not link."""
    table = {
        "written_by": f"ortprov {__version__}",
        "sonames_by_cuda_major": sonames_by_cuda_major,
        "tensorrt_library_dirs": list(tensorrt_library_dirs),
        "tensorrt_folders": list(tensorrt_folders),
        "tensorrt_opened_later": list(tensorrt_opened_later),
    }
    files = {PTH_FILE: PTH_LINE.encode()}
    for name, content in standalone.sources("loader_hook.py").items():
        files[f"{PACKAGE_DIR}/{'__init__.py' if name == 'loader_hook.py' else name}"] = content
    files[f"{PACKAGE_DIR}/hook.json"] = (json.dumps(table, indent=1, sort_keys=True) + "\n").encode()
    return files


def pending(site_packages: str, files: dict[str, bytes]) -> list[str]:
    """The files that a write would create or change (empty: the hook is installed and current)."""
    root = Path(site_packages)
    out = []
    for relative, content in files.items():
        try:
            if (root / relative).read_bytes() == content:
                continue
        except OSError:
            pass
        out.append(relative)
    return out


def installed(site_packages: str) -> bool:
    """Whether any part of the hook is present."""
    root = Path(site_packages)
    return (root / PTH_FILE).exists() or (root / PACKAGE_DIR).exists()


def write(site_packages: str, files: dict[str, bytes], python: str | None = None) -> list[str]:
    """Create or update the hook's files (each atomically); byte-compile with the target `python` when given.
    Returns the files written."""
    root = Path(site_packages)
    written = pending(site_packages, files)
    for relative in sorted(written, key=lambda r: r == PTH_FILE):  # the .pth last: it arms the rest
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".ortprov-tmp")
        temporary.write_bytes(files[relative])
        os.replace(temporary, path)
    if written and python:
        # best effort: byte-code keeps the start-up cost of the .pth line at an unmarshal. Run as the installers
        # are: its own process group, the parent-death signal, killed with ortprov's other children on a signal
        from provisioner.installer.command import run_command

        run_command([python, "-m", "compileall", "-q", str(root / PACKAGE_DIR)], timeout=COMPILE_TIMEOUT)
    return written


def remove(site_packages: str) -> list[str]:
    """Remove the hook's files (the .pth first: it disarms the rest). Returns what was removed."""
    root = Path(site_packages)
    removed = []
    if (root / PTH_FILE).exists():
        (root / PTH_FILE).unlink()
        removed.append(PTH_FILE)
    if (root / PACKAGE_DIR).exists():
        shutil.rmtree(root / PACKAGE_DIR)
        removed.append(PACKAGE_DIR + "/")
    return removed
