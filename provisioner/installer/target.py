"""The environment `apply` acts on: the active venv, `--python PATH`, or `--venv DIR` (created when missing).

The target is found and read by provisioner.probe.target (one program run in the target interpreter, standard
library only), so ortprov may live in its own tool venv and act on another one; this module adds what only
apply needs: creating a venv, and refusing an environment ortprov must not change (PEP 668).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from provisioner.errors import BadInput, OrtprovError
from provisioner.probe import target as probe_target


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


Distributions = dict[str, str]  # normalised name -> version (the first on sys.path, as imports see it)


def inspect_python(python: str, timeout: float = 60.0, *, label: str | None = None) -> tuple[Target, Distributions]:
    """Ask `python` about itself; BadInput when it is not a working Python."""
    report = probe_target.inspect(python, timeout, label=label)
    if report.python is None:
        raise OrtprovError(
            f"cannot read the target Python {python!r}: " + "; ".join(report.errors),
            hint="run `ortprov detect --python PATH` to see why",
        )
    dirs: list[str] = []
    for path in (report.purelib, report.platlib, report.scripts):
        if path and os.path.isdir(path):
            real = os.path.realpath(path)
            if not any(real == d or real.startswith(d + os.sep) for d in dirs):
                dirs = [d for d in dirs if not d.startswith(real + os.sep)] + [real]
    installed = dict(report.distributions)
    target = Target(
        python=report.interpreter,
        version=report.python.version,
        prefix=report.python.prefix,
        is_venv=report.python.is_venv,
        is_conda=report.python.is_conda,
        externally_managed=report.python.externally_managed,
        install_dirs=tuple(dirs),
        has_pip="pip" in installed,
        site_packages=report.purelib,
    )
    return target, installed


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
    label = None
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
        python, label = str(interpreter), f"the Python of the venv {str(venv)!r}"
    elif python is None:
        python = probe_target.active_interpreter()
        if python is None:
            raise BadInput(
                "no target environment: no venv is active",
                hint="activate a venv, or give --venv DIR (created when missing) or --python PATH",
            )
        label = f"the active environment's Python {python!r}"
    target, dists = inspect_python(python, label=label)
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
