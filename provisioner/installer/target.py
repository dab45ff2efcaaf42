"""The environment `apply` acts on: the active venv, `--python PATH`, or `--venv DIR` (created when missing).

Everything about the target is read by a child process running the target interpreter (standard library only),
so ortprov may live in its own tool venv and act on another one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from provisioner.errors import BadInput, OrtprovError

# Runs inside the target interpreter: where it installs, whether it is a venv / conda / externally managed,
# and which distributions it holds.
_INSPECT = r"""
import json, os, sys, sysconfig
try:
    import importlib.metadata as md
except ImportError:
    md = None
paths = sysconfig.get_paths()
stdlib = paths.get("stdlib", "")
is_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
dists = {}
if md is not None:
    for dist in md.distributions():
        name = dist.metadata["Name"]
        if name and name.lower() not in dists:
            dists[name.lower()] = [name, dist.version]
print(json.dumps({
    "executable": sys.executable,
    "version": "%d.%d.%d" % sys.version_info[:3],
    "prefix": sys.prefix,
    "is_venv": is_venv,
    "is_conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),
    "externally_managed": (not is_venv) and os.path.isfile(os.path.join(stdlib, "EXTERNALLY-MANAGED")),
    "paths": {k: paths.get(k, "") for k in ("purelib", "platlib", "scripts")},
    "distributions": sorted(dists.values()),
    "has_pip": any(n.lower() == "pip" for n, _ in dists.values()),
}))
"""


@dataclass(frozen=True)
class Target:
    """One interpreter and where it installs distributions."""

    python: str  # the interpreter, as given to pip/uv
    version: str  # "3.12.3"
    prefix: str
    is_venv: bool
    is_conda: bool
    externally_managed: bool
    install_dirs: tuple[str, ...]  # purelib, platlib, scripts (deduplicated, existing)
    has_pip: bool
    site_packages: str = ""  # purelib: where the loader hook goes
    created: bool = False  # True when `apply --venv` created it just now

    @property
    def minor(self) -> str:
        """ "3.12"."""
        return ".".join(self.version.split(".")[:2])


Distributions = dict[str, str]  # lower-cased name -> version


def inspect_python(python: str, timeout: float = 60.0) -> tuple[Target, Distributions]:
    """Ask `python` about itself; BadInput when it is not a working Python."""
    try:
        proc = subprocess.run([python, "-I", "-c", _INSPECT], capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise BadInput(
            f"the target Python {python!r} does not exist", hint="give --python PATH to an interpreter"
        ) from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BadInput(f"cannot run the target Python {python!r}: {exc}") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise BadInput(f"the target Python {python!r} failed to start: {last}")
    data = json.loads(proc.stdout)
    dirs: list[str] = []
    for key in ("purelib", "platlib", "scripts"):
        path = data["paths"].get(key)
        if path and os.path.isdir(path):
            real = os.path.realpath(path)
            if not any(real == d or real.startswith(d + os.sep) for d in dirs):
                dirs = [d for d in dirs if not d.startswith(real + os.sep)] + [real]
    target = Target(
        python=python,
        version=data["version"],
        prefix=data["prefix"],
        is_venv=data["is_venv"],
        is_conda=data["is_conda"],
        externally_managed=data["externally_managed"],
        install_dirs=tuple(dirs),
        has_pip=data["has_pip"],
        site_packages=data["paths"].get("purelib") or "",
    )
    return target, {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in data["distributions"]}


def distributions(python: str) -> Distributions:
    """The exact distribution set of the target (name -> version), like `pip freeze --all`."""
    return inspect_python(python)[1]


def venv_python(venv: Path) -> Path:
    """The interpreter inside a venv directory."""
    if os.name == "nt":
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def create_venv(venv: Path, python_version: str | None, uv: list[str] | None) -> None:
    """Create `venv` with Python `python_version` (X.Y; None: the Python running ortprov).

    With uv: `uv venv --seed --python X.Y` (uv finds, or fetches when it may, a matching interpreter; without
    --seed when pip cannot be fetched, e.g. offline).
    Without: `pythonX.Y -m venv` from a matching interpreter on PATH.
    """
    version = python_version or f"{sys.version_info[0]}.{sys.version_info[1]}"
    if uv:
        argv = [*uv, "venv", "--seed", "--python", version, str(venv)]
    else:
        interpreter = _find_interpreter(version)
        if interpreter is None:
            raise OrtprovError(
                f"no Python {version} interpreter found to create {venv}",
                hint=f"install python{version}, or install uv (`pip install uv`) which can provide one",
            )
        argv = [interpreter, "-m", "venv", str(venv)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0 and uv:
        # --seed fetches pip, which an air-gapped host cannot: a venv without pip is fine for uv
        shutil.rmtree(venv, ignore_errors=True)
        proc = subprocess.run([a for a in argv if a != "--seed"], capture_output=True, text=True)
    if proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise OrtprovError(
            f"could not create the venv {venv} with Python {version}: " + (detail[-1] if detail else "no output"),
            hint="pass --python X.Y for an interpreter this machine has (with uv, any version uv can find)",
        )


def _find_interpreter(version: str) -> str | None:
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
        return sys.executable
    return shutil.which(f"python{version}")


def resolve_target(
    python: str | None = None,
    venv: Path | None = None,
    *,
    system: bool = False,
    python_version: str | None = None,
    uv: list[str] | None = None,
    create: bool = True,
) -> tuple[Target, Distributions]:
    """Find (or create) the target and check ortprov may change it."""
    if python and venv:
        raise BadInput("give either --python or --venv, not both")
    created = False
    if venv is not None:
        venv = venv.expanduser().absolute()
        interpreter = venv_python(venv)
        if not interpreter.exists():
            if venv.exists() and any(venv.iterdir()):
                raise BadInput(
                    f"{venv} exists but is not a venv (no {interpreter.relative_to(venv)})",
                    hint="give an empty or missing directory, or an existing venv",
                )
            if not create:
                raise BadInput(f"the venv {venv} does not exist", hint="run without --dry-run to create it")
            create_venv(venv, python_version, uv)
            created = True
        python = str(interpreter)
    elif python is not None and Path(python).is_dir():
        python = str(venv_python(Path(python)))  # --python accepts a venv directory too
    elif python is None:
        active = os.environ.get("VIRTUAL_ENV") or os.environ.get("CONDA_PREFIX")
        if not active:
            raise BadInput(
                "no target environment: no venv is active",
                hint="activate a venv, or give --venv DIR (created when missing) or --python PATH",
            )
        python = str(venv_python(Path(active)))
        if not Path(python).exists() and os.name != "nt":
            python = str(Path(active) / "bin" / "python3")
    target, dists = inspect_python(python)
    if python_version and not created and target.minor != python_version:
        raise BadInput(
            f"the target Python is {target.minor}, not {python_version}",
            hint="give --python X.Y matching the target, or a venv/interpreter of that version",
        )
    if target.externally_managed and not system:
        raise BadInput(
            f"{target.python} is externally managed (PEP 668): its packages belong to the OS package manager",
            hint="use a venv (--venv DIR), or pass --system to install into it anyway",
        )
    if created:
        target = Target(**{**target.__dict__, "created": True})
    return target, dists
