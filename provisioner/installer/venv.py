"""The environment `apply` acts on: the active venv, `--python PATH`, or `--venv DIR` (created when missing).

Finding the target and reading it are two steps, with the apply lock between them (docs/transaction.md):
`find` says which interpreter and which prefix (the lock's home) and refuses what apply must not change, but
reads nothing of what the target holds; `read` runs the one probe (provisioner.probe.target: one program in
the target interpreter, standard library only) once the lock is held, and checks the rest (PEP 668, the Python
version, a conda environment). A dry run finds the target by the same rules and stops before the first change:
for a venv still to be created, `future` stands for it (an empty venv of that Python).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from provisioner import childproc
from provisioner.errors import BadInput, OrtprovError
from provisioner.probe import target as probe_target

if TYPE_CHECKING:
    from provisioner.probe.packages import PackagesReport

PROBE_TIMEOUT = 60.0  # seconds the target interpreter has to answer a probe
VENV_TIMEOUT_S = 600.0  # creating a venv (uv may fetch an interpreter and seed pip)


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


@dataclass(frozen=True)
class Where:
    """The target found but not read: its interpreter (a venv's, also one still to be created), the prefix the
    lock lives in (None while the venv does not exist), and how error sentences name it."""

    python: str
    prefix: str | None
    label: str
    venv: Path | None = None
    create: str | None = None  # the Python X.Y of the venv still to be created
    uv: tuple[str, ...] | None = None  # the uv that creates it (None: `pythonX.Y -m venv`)


def find(
    python: str | None,
    venv: Path | None,
    *,
    python_version: str | None = None,
    uv: list[str] | None = None,
    conda: bool = False,
) -> Where:
    """Which environment apply acts on, by the rules of the real run and of a dry run alike: --python PATH and
    --venv together are refused, a --venv folder that exists but is no venv is refused, a venv to create needs
    a Python of that version (or uv); an existing interpreter is asked for its prefix (`--where`), nothing
    else. BadInput for every refusal."""
    if python and venv is not None:
        raise BadInput(
            "give either --python PATH or --venv DIR, not both",
            hint="--venv DIR --python X.Y creates the venv with that Python version",
        )
    if venv is not None:
        venv = venv.expanduser().absolute()
        interpreter = venv_python(venv)
        label = f"the Python of the venv {str(venv)!r}"
        if interpreter.exists():
            return Where(str(interpreter), _prefix(str(interpreter), label), label, venv)
        if venv.exists() and (not venv.is_dir() or any(venv.iterdir())):
            raise BadInput(
                f"{venv} exists but is not a venv (no {interpreter.relative_to(venv)})",
                hint="give an empty or missing folder, or an existing venv",
            )
        version = python_version or f"{sys.version_info[0]}.{sys.version_info[1]}"
        if not uv and _find_interpreter(version) is None:
            raise OrtprovError(
                f"no Python {version} interpreter found to create {venv}",
                hint=f"install python{version}, or install uv (`pip install uv`) which can provide one",
            )
        return Where(str(interpreter), None, label, venv, create=version, uv=tuple(uv) if uv else None)
    if conda and python is None:
        prefix = os.environ.get("CONDA_PREFIX")
        if not prefix:
            raise BadInput(
                "--installer conda needs an active conda environment",
                hint="`conda activate ENV` (or micromamba activate), or give --python ENV/bin/python",
            )
        python = str(venv_python(Path(prefix)))
    if python is None:
        active = probe_target.active_interpreter()
        if active is None:
            raise BadInput(
                "no target environment: no venv is active",
                hint="activate a venv, or give --venv DIR (created when missing) or --python PATH",
            )
        label = f"the active environment's Python {active!r}"
        return Where(active, _prefix(active, label), label)
    found = probe_target.find_interpreter(python)
    label = f"--python {python!r}"
    return Where(found, _prefix(found, label), label)


def _prefix(python: str, label: str) -> str:
    return probe_target.prefix_of(python, PROBE_TIMEOUT, label=label)


def create(where: Where) -> Where:
    """Create the venv `where` stands for; the same Where with its prefix."""
    assert where.venv is not None and where.create is not None
    create_venv(where.venv, where.create, list(where.uv) if where.uv else None)
    return replace(where, prefix=str(where.venv), create=None)


def check_creatable(where: Where) -> None:
    """A dry run's answer to what `create` would find: BadInput (the real run's one line) when no Python of the
    version can be had (uv: none found and none in its download list; without uv: none on PATH). Creates nothing."""
    assert where.venv is not None and where.create is not None
    version, venv = where.create, where.venv
    if where.uv:
        uv = list(where.uv)
        found = childproc.run([*uv, "python", "find", version], timeout=VENV_TIMEOUT_S)
        if found.returncode == 0:
            return
        downloads = childproc.run([*uv, "python", "list", version, "--only-downloads"], timeout=VENV_TIMEOUT_S)
        if downloads.returncode != 0 or downloads.stdout.strip():
            return  # a download exists, or uv cannot say: the real run decides
        raise BadInput(
            f"no Python {version} to create the venv {venv} with: uv found none and can fetch none",
            hint="pass --python X.Y for an interpreter this machine has (with uv, any version uv can find)",
        )
    if _find_interpreter(version) is None:
        raise BadInput(
            f"no Python {version} interpreter found to create {venv}",
            hint=f"install python{version}, or install uv (`pip install uv`) which can provide one",
        )


def read(
    where: Where, *, python_version: str | None = None, system: bool = False, conda: bool = False
) -> tuple[Target, Distributions, PackagesReport]:
    """Read the target (the lock held): one probe; then refuse what apply must not change. The probe must find
    the prefix the lock was taken in."""
    report = probe_target.inspect(where.python, PROBE_TIMEOUT, label=where.label)
    target, installed = target_of(report, where.python)
    if where.prefix is not None and not _same_path(target.prefix, where.prefix):
        raise OrtprovError(
            f"{where.label} said its prefix is {where.prefix}, then {target.prefix}: apply cannot lock it",
            hint="pass the interpreter of the environment itself (bin/python of a venv)",
        )
    if python_version and target.minor != python_version.rstrip("t"):
        raise BadInput(
            f"the target Python is {target.minor}, not {python_version}",
            hint="give --python X.Y matching the target, or a venv/interpreter of that version",
        )
    if conda:
        if not target.is_conda:
            raise BadInput(
                f"{target.prefix} is not a conda environment (no conda-meta/)",
                hint="use --installer uv or pip for a venv",
            )
        target = replace(target, install_dirs=(os.path.realpath(target.prefix),))  # one tree: the whole prefix
    elif target.externally_managed and not system:
        raise BadInput(
            f"{target.python} is externally managed (PEP 668): its packages belong to the OS package manager",
            hint="use a venv (--venv DIR), or pass --system to install into it anyway",
        )
    return target, installed, report


def future(where: Where) -> tuple[Target, Distributions, PackagesReport]:
    """The venv a dry run would create, as the real run reads it right after creating it: an empty venv of
    Python `where.create` (pip in it: `python -m venv` and `uv venv --seed` put one there)."""
    from provisioner.facts import PythonInfo
    from provisioner.probe.packages import PackagesReport

    assert where.venv is not None and where.create is not None
    version = where.create.rstrip("t")
    major, minor = version.split(".")[:2]
    free = where.create.endswith("t")
    python = PythonInfo(
        executable=where.python,
        version=version,
        abi=f"cp{major}{minor}{'t' if free else ''}",
        free_threaded=free,
        is_venv=True,
        prefix=str(where.venv),
    )
    report = PackagesReport(python=python, interpreter=where.python)
    target = Target(
        python=where.python,
        version=version,
        prefix=str(where.venv),
        is_venv=True,
        is_conda=False,
        externally_managed=False,
        install_dirs=(),
        has_pip=True,
    )
    return target, {}, report


def target_of(report: PackagesReport, python: str) -> tuple[Target, Distributions]:
    """The Target and its distributions from the probe's report; OrtprovError when the probe failed."""
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


def inspect_python(
    python: str, timeout: float = PROBE_TIMEOUT, *, label: str | None = None
) -> tuple[Target, Distributions]:
    """Ask `python` about itself; BadInput when it is not a working Python."""
    return target_of(probe_target.inspect(python, timeout, label=label), python)


def distributions(python: str) -> Distributions:
    """The exact distribution set of the target (name -> version), like `pip freeze --all`: read again after a
    change (the commit, the restore)."""
    return inspect_python(python)[1]


def venv_python(venv: Path) -> Path:
    """The interpreter inside a venv directory."""
    if os.name == "nt":
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def create_venv(venv: Path, python_version: str | None, uv: list[str] | None) -> None:
    """Create `venv` with Python `python_version` (X.Y; None: the Python running ortprov). A creation that
    fails or is interrupted leaves no half-made venv behind.

    With uv: `uv venv --seed --python X.Y` (uv finds, or fetches when it may, a matching interpreter; without
    --seed when pip cannot be fetched, e.g. offline).
    Without: `pythonX.Y -m venv` from a matching interpreter on PATH.
    """
    version = python_version or f"{sys.version_info[0]}.{sys.version_info[1]}"
    if uv:
        argv = [*uv, "venv", "--seed", "--python", version, str(venv)]
    else:
        interpreter = _find_interpreter(version)
        if interpreter is None:  # the user asked for a Python this machine lacks: their input, exit 2
            raise BadInput(
                f"no Python {version} interpreter found to create {venv}",
                hint=f"install python{version}, or install uv (`pip install uv`) which can provide one",
            )
        argv = [interpreter, "-m", "venv", str(venv)]
    existed = venv.exists()
    try:
        proc = childproc.run(argv, timeout=VENV_TIMEOUT_S)
        if proc.returncode != 0 and uv:
            # --seed fetches pip, which an air-gapped host cannot: a venv without pip is fine for uv
            _remove_made(venv, existed)
            proc = childproc.run([a for a in argv if a != "--seed"], timeout=VENV_TIMEOUT_S)
    except BaseException:
        _remove_made(venv, existed)
        raise
    if proc.returncode != 0:
        _remove_made(venv, existed)
        lines = [line.strip() for line in (proc.stderr.strip() or proc.stdout.strip()).splitlines() if line.strip()]
        said = next((line for line in lines if line.lower().startswith("error:")), lines[-1] if lines else "")
        hint = "pass --python X.Y for an interpreter this machine has (with uv, any version uv can find)"
        if "no interpreter found" in said.lower() or "no download found" in said.lower():
            raise BadInput(
                f"no Python {version} to create the venv {venv} with: uv found none and can fetch none", hint
            )
        raise OrtprovError(f"could not create the venv {venv} with Python {version}: {said or 'no output'}", hint)


def _remove_made(venv: Path, existed: bool) -> None:
    """Remove what a failed creation made: the folder, or (an empty folder given) what is inside it."""
    if not existed:
        shutil.rmtree(venv, ignore_errors=True)
        return
    for entry in venv.iterdir() if venv.is_dir() else ():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _find_interpreter(version: str) -> str | None:
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
        return sys.executable
    return shutil.which(f"python{version}")


def _same_path(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)
