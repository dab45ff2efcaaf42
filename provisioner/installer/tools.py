"""Which installer runs the steps: uv (on PATH, or the `uv` package) or pip; micromamba, mamba or conda."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from provisioner import childproc
from provisioner.errors import BadInput

CONDA_TOOLS = ("micromamba", "mamba", "conda")


def find_uv() -> list[str] | None:
    """The command that runs uv: `uv` on PATH, the uv beside this Python, or `python -m uv`; None: none."""
    if os.environ.get("ORTPROV_NO_UV"):
        return None
    found = shutil.which("uv")
    if found:
        return [found]
    beside = Path(sys.executable).parent / ("uv.exe" if os.name == "nt" else "uv")
    if beside.is_file():
        return [str(beside)]
    try:
        proc = childproc.run([sys.executable, "-m", "uv", "--version"], timeout=20)
    except OSError:
        return None
    return [sys.executable, "-m", "uv"] if proc.returncode == 0 and not proc.timed_out else None


def find_conda_tool() -> list[str] | None:
    """micromamba, mamba or conda (first found, also via $CONDA_EXE / $MAMBA_EXE); None if none."""
    for variable in ("MAMBA_EXE", "CONDA_EXE"):
        path = os.environ.get(variable)
        if path and Path(path).is_file():
            return [path]
    for name in CONDA_TOOLS:
        found = shutil.which(name)
        if found:
            return [found]
    return None


def choose_installer(requested: str, has_pip: bool, uv: list[str] | None) -> tuple[str, tuple[str, ...] | None]:
    """("uv", uv command) or ("pip", None) for requested "auto" | "uv" | "pip"; `uv`: find_uv()'s answer."""
    if requested not in ("auto", "uv", "pip"):
        raise BadInput(f"unknown installer {requested!r}", hint="use auto, uv, pip or conda")
    uv = uv if requested in ("auto", "uv") else None
    if requested == "uv" and uv is None:
        raise BadInput("--installer uv: uv is not installed", hint="`pip install uv`, or use --installer pip")
    if uv is not None:
        return "uv", tuple(uv)
    if not has_pip:
        raise BadInput(
            "the target environment has no pip and uv is not available",
            hint="install uv (`pip install uv`), or create the venv with pip (`python -m venv`)",
        )
    return "pip", None
