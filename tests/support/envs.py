"""Real venvs for integration tests: isolated from this machine's pip/uv configuration, frozen and
fingerprinted.

`clean_env(tmp)` gives an environment in which pip and uv read no config files, use private caches and see
no active venv; `make_venv` creates a venv with pip (optionally pre-installing from an index); `freeze` is
`pip freeze --all`; `tree_digest` fingerprints every file a restore must put back, byte for byte.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# The interpreter running the tests: the dev environment (`pip install -e '.[dev]'`, wherever its venv is), with
# ortprov and the CPU onnxruntime of the dev extras. Tests run the CLI and probe "this machine" through it.
DEV_PYTHON = sys.executable


def clean_env(tmp: Path, **extra: str) -> dict[str, str]:
    """os.environ minus pip/uv configuration and any active venv, with caches under `tmp`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_")) and k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")
    }
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_CACHE_DIR=str(tmp / "pip-cache"),
        UV_CACHE_DIR=str(tmp / "uv-cache"),
        UV_NO_CONFIG="1",
        UV_HTTP_RETRIES="1",
        NO_COLOR="1",
    )
    env.update(extra)
    return env


def venv_python(venv: Path) -> Path:
    """bin/python of a venv."""
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def make_venv(venv: Path, env: dict[str, str], install: tuple[str, ...] = (), index_url: str | None = None) -> Path:
    """A venv with pip (stdlib venv + ensurepip: no network), then `pip install` of `install` from index."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    python = venv_python(venv)
    if install:
        argv = [str(python), "-m", "pip", "install", "-q", "--index-url", str(index_url), *install]
        subprocess.run(argv, check=True, env=env)
    return python


def freeze(python: Path, env: dict[str, str]) -> list[str]:
    """`pip freeze --all` of the interpreter's environment."""
    out = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--all"], check=True, env=env, capture_output=True, text=True
    ).stdout
    return sorted(out.splitlines())


def tree_digest(venv: Path) -> dict[str, str]:
    """relative path -> sha256 (or symlink target) for every file under the venv, except byte-code caches and
    the empty `.lock` file uv creates at the top of any venv it touches (a dry run included)."""
    digest: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(venv):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = Path(dirpath) / name
            rel = str(path.relative_to(venv))
            if rel == ".lock":
                continue
            if path.is_symlink():
                digest[rel] = "-> " + os.readlink(path)
            else:
                digest[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


def children_of(pid: int) -> list[int]:
    """Direct child processes (Linux /proc)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]
