"""`apply` and `download` end to end. What happens is told to the command's listener as events
(installer/events.py); what was done is returned (the command renders it), failures are raised.

apply is four explicit steps, the same for a real run and a dry run (commands/apply.py runs them in order):

    where = find_target(settings)                  # which interpreter and prefix; refusals; nothing read
    with opened(where, settings, listener) as t:   # create the venv, lock, settle, read the target ONCE
        plan = <the command plans from t.report>   # planning inside the lock, from what the lock protects
        outcome = carry_out(t, plan, settings, listener)   # commands, predict, confirm, transaction, verify

A dry run stops before the first change: it creates no venv (an empty one of that Python stands for it), and
lists the real run's commands with what they would change.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner.errors import BadInput, OrtprovError
from provisioner.installer import venv as targets
from provisioner.installer.command import diagnose, run_command, tail
from provisioner.installer.events import (
    ApplyResult,
    DownloadStarted,
    InstallerLine,
    InstallerTail,
    Planned,
    Said,
    VenvCreated,
    VenvRemoved,
    Verdict,
    VerifyEnded,
    VerifyStarted,
)
from provisioner.installer.predict import dry_run
from provisioner.installer.steps import commands_for, with_sources
from provisioner.installer.transaction import ApplyFailed, Execution, apply_plan, locked
from provisioner.plan import LOADER_HOOK, Plan, requirement_name, step_environment

if TYPE_CHECKING:
    from collections.abc import Iterator

    from provisioner.installer.events import Listener
    from provisioner.installer.session import Session
    from provisioner.installer.venv import Distributions, Target, Where
    from provisioner.probe.packages import PackagesReport
    from provisioner.verify.report import VerifyReport

VERIFY_MODES = ("session", "static")


@dataclass(frozen=True)
class Sources:
    """Where the install steps get their packages, besides the plan's own index: a mirror, more indexes, more
    wheel folders, or a wheelhouse alone (--no-index)."""

    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    wheelhouse: Path | None = None


@dataclass(frozen=True)
class ApplySettings:
    """Everything `ortprov apply` was asked, as one object (commands/apply.py builds it from the options).

    The target: `venv` (created when missing, with Python `python_version`), `python` (an interpreter path),
    or neither (the active environment). verify: session | static | None (--no-verify)."""

    venv: Path | None = None
    python: str | None = None
    python_version: str | None = None
    installer: str = "auto"  # auto | uv | pip | conda
    sources: Sources = Sources()
    system: bool = False
    dry_run: bool = False
    yes: bool = False
    verify: str | None = "session"
    verify_timeout: float = 120.0
    keep: bool = False
    require_gpu_verify: bool = False
    verbose: bool = False

    def check(self) -> None:
        """BadInput for settings that contradict each other, or a wheelhouse that is no folder."""
        if self.verify not in (*VERIFY_MODES, None):
            raise BadInput(f"unknown verify mode {self.verify!r}")
        if self.require_gpu_verify and self.verify != "session":
            given = "--verify-static" if self.verify == "static" else "--no-verify"
            raise BadInput(
                f"--require-gpu-verify asks for a CUDA session, which {given} leaves out",
                hint=f"drop {given}, or drop --require-gpu-verify",
            )
        house = self.sources.wheelhouse
        if house is not None and not house.is_dir():
            raise BadInput(
                f"wheelhouse {str(house)!r} is not a directory",
                hint="fill one with `ortprov download --dest DIR`",
            )


@dataclass(frozen=True)
class Outcome:
    """What `apply` did, what verify reported, and the verdict."""

    apply: ApplyResult
    verify: VerifyReport | None
    verdict: Verdict


@dataclass
class Opened:
    """The target, locked and read once: what planning and carrying out work from. `session` is None for a
    dry run of a venv still to be created (nothing to lock or read)."""

    where: Where
    target: Target
    installed: Distributions
    report: PackagesReport
    session: Session | None
    created: bool = False
    started: bool = False  # carry_out began: a venv created for it stays, whatever happens next

    def interruptible(self) -> contextlib.AbstractContextManager[Any]:
        """A block a signal may cut short (planning): nothing has changed yet."""
        return self.session.guard.interruptible() if self.session is not None else contextlib.nullcontext()


def find_target(settings: ApplySettings) -> Where:
    """The target the settings name, found and checked (installer/venv.find), nothing of it read."""
    from provisioner.installer.tools import find_uv

    settings.check()
    uv = find_uv() if settings.installer in ("auto", "uv") else None
    where = targets.find(
        settings.python,
        settings.venv,
        python_version=settings.python_version,
        uv=uv,
        conda=settings.installer == "conda",
    )
    return replace(where, uv=tuple(uv) if uv else None)


@contextlib.contextmanager
def opened(where: Where, settings: ApplySettings, listener: Listener) -> Iterator[Opened]:
    """Create the venv (a real run), lock the target, settle what an earlier apply left, then read it: every
    fact apply uses about the target comes from this one read, under the lock (docs/transaction.md). A venv
    created here is removed again when nothing was carried out in it (no plan, an interrupt)."""
    created = False
    state: Opened | None = None
    if where.create is not None and settings.dry_run:
        targets.check_creatable(where)  # what the real run would refuse, refused here too (exit 2)
    if where.create is not None and not settings.dry_run:
        version = where.create
        where = targets.create(where)
        created = True
        listener.tell(VenvCreated(str(where.venv), version))
    try:
        if where.prefix is None:  # a dry run of a venv still to be created
            target, installed, report = targets.future(where)
            state = Opened(where, target, installed, report, None)
            yield state
            return
        with locked(where.prefix, where.python, listener, dry_run=settings.dry_run) as session:
            with session.guard.interruptible():
                target, installed, report = targets.read(
                    where,
                    python_version=settings.python_version,
                    system=settings.system,
                    conda=settings.installer == "conda",
                )
            state = Opened(where, replace(target, created=created), installed, report, session, created)
            yield state
    except BaseException as exc:
        from provisioner.installer.lock import Busy

        # another apply that holds the new venv's lock is installing into it: it is not this apply's to remove
        mine = not isinstance(exc, Busy)
        if created and mine and where.venv is not None and (state is None or not state.started):
            shutil.rmtree(where.venv, ignore_errors=True)
            listener.tell(VenvRemoved(str(where.venv)))
        raise


def carry_out(state: Opened, plan: Plan, settings: ApplySettings, listener: Listener) -> Outcome:
    """The plan's commands for this target, then the transaction (or, in a dry run, what it would do), with
    the verification inside it; the verdict says what was proven."""
    state.started = True
    target, installed = state.target, state.installed
    plan = sourced(plan, settings.sources)
    _preflight_tensorrt(plan, listener)
    listener.tell(Planned(plan.package, plan.ort_version, plan.cuda_version, plan.cudnn_version, target.python))
    for warning in _warnings(plan, target, settings):
        listener.tell(Said(warning, "warning"))
    if settings.installer == "conda":
        from provisioner.installer.conda import conda_commands, conda_recipe, conda_tool

        tool_argv = conda_tool()
        commands = conda_commands(plan, conda_recipe(plan), tool_argv, target, installed)
        tool, uv = Path(tool_argv[0]).name, None
    else:
        from provisioner.installer.tools import choose_installer

        tool, uv = choose_installer(settings.installer, target.has_pip, list(state.where.uv or ()) or None)
        commands = commands_for(plan, target, installed, tool, uv, system=settings.system)
    verifier = Verifier(target, plan, settings, listener)
    execution = Execution(
        tool=tool,
        listener=listener,
        uv=uv,
        verbose=settings.verbose,
        yes=settings.yes,
        hook_files=_hook_files(plan),
        check=verifier.check if settings.verify else None,
    )
    if settings.dry_run:
        where = state.where
        created = str(where.venv) if where.create is not None else None
        result = dry_run(
            commands, target, installed, execution, state.session, create_venv=created, create_python=where.create
        )
        return Outcome(result, None, Verdict("none", "dry-run"))
    assert state.session is not None
    try:
        result = apply_plan(commands, target, installed, execution, state.session)
    except ApplyFailed as failed:
        failed.details = {"apply": failed.result, "verify": verifier.report}
        raise
    if result.outcome == "applied" and (target.is_venv or target.is_conda):  # an environment of its own, not /usr
        from provisioner.installer.applied import save_applied

        save_applied(target.prefix, plan)  # with its sources: what doctor's fixes re-apply
    if settings.verify and result.outcome == "unchanged":  # nothing changed, nothing to restore: just prove it
        with state.interruptible():
            why = verifier.check()
        if why:
            listener.tell(
                Said(f"{why}: apply changed nothing, so there is nothing to restore; `ortprov doctor` explains it", "")
            )
    return Outcome(result, verifier.report, verifier.verdict)


def sourced(plan: Plan, sources: Sources) -> Plan:
    """The plan with the package sources of the settings (a wheelhouse: --no-index --find-links DIR)."""
    links = sources.find_links
    if sources.wheelhouse is not None:
        links = (*links, str(sources.wheelhouse.absolute()))
    return with_sources(
        plan,
        index_url=sources.index_url,
        extra_index_urls=sources.extra_index_urls,
        find_links=links,
        no_index=sources.wheelhouse is not None,
    )


def _warnings(plan: Plan, target: Target, settings: ApplySettings) -> list[str]:
    """What the real run and the dry run both warn of before anything runs: a plan made for another Python
    than the target's, a wheelhouse whose wheels cannot go into the target's Python."""
    found = []
    planned = _plan_python(plan)
    if planned and planned != target.minor:
        found.append(f"the plan was made for Python {planned}, the target is Python {target.minor}")
    house = settings.sources.wheelhouse
    if house is not None:
        from provisioner.installer.wheelhouse import unfit_for

        names = frozenset(requirement_name(p) for step in plan.steps if step.kind == "install" for p in step.packages)
        for name, tags in unfit_for(house, names, target.minor).items():
            found.append(
                f"the wheelhouse {house} holds {name} only for {', '.join(tags)}: it cannot go into the target's "
                f"Python {target.minor} (fill one for it: `ortprov download --python {target.minor} ...`)"
            )
    return found


def _preflight_tensorrt(plan: Plan, listener: Listener) -> None:
    """The TensorRT wheels the plan pins can be had from its sources (a wheelhouse, the index or its mirror);
    else one message with the ways that work, before anything is changed."""
    from provisioner.installer.tensorrt_source import preflight, tensorrt_steps

    if tensorrt_steps(plan):
        for found in preflight(plan):
            listener.tell(Said(f"tensorrt: {found.requirement} is available from {found.where}", ""))


def _hook_files(plan: Plan) -> dict[str, bytes] | None:
    """The loader hook's files when the plan installs it (its soname table comes from the matrix)."""
    if not any(step.kind == LOADER_HOOK for step in plan.steps):
        return None
    from provisioner.installer.hook_files import hook_files
    from provisioner.matrix.load import load_matrix
    from provisioner.matrix.query import sonames_by_cuda_major, tensorrt_library_dirs, tensorrt_opened_later

    matrix = load_matrix()
    folders = [plan.tensorrt_source] if plan.tensorrt_source and os.path.isabs(plan.tensorrt_source) else []
    return hook_files(
        sonames_by_cuda_major(matrix), tensorrt_library_dirs(matrix), folders, tensorrt_opened_later(matrix)
    )


def _plain(text: str) -> Said:
    return Said(text, "")


class Verifier:
    """apply's verify: what a plain program in the target gets, judged inside the transaction; its verdict."""

    def __init__(self, target: Target, plan: Plan, settings: ApplySettings, listener: Listener) -> None:
        self.target = target
        self.plan = plan
        self.settings = settings
        self.listener = listener
        self.report: VerifyReport | None = None
        self.verdict = Verdict("none", "no-verify" if not settings.verify else None)

    def check(self) -> str | None:
        """Verify; None keeps the change, a sentence says why the transaction must restore it."""
        mode = self.settings.verify
        report = self.run(static=mode == "static")
        if report.ok:
            self.verdict = Verdict(mode or "none", "verify-static" if mode == "static" else None)
            return None
        if "no-driver" in report.failure_kinds and mode == "session":
            said = "verify: this machine has no NVIDIA driver, so no CUDA session can run here; checking statically"
            self.listener.tell(_plain(said))
            static = self.run(static=True)
            if static.ok:
                self.verdict = Verdict("static", "no-driver")
                if not self.settings.require_gpu_verify:
                    return None
                return self._failed(
                    "verify: no CUDA session could run here (no NVIDIA driver), and --require-gpu-verify asks for one",
                    Verdict("static", "no-driver"),
                )
            report = static
        return self._failed(
            f"verify failed ({', '.join(report.failure_kinds) or report.status})", Verdict("none", "failed")
        )

    def _failed(self, why: str, verdict: Verdict) -> str | None:
        """The verification failed: the sentence that makes the transaction restore, or (--keep) None."""
        self.verdict = replace(verdict, failure=why)
        if self.settings.keep:
            self.listener.tell(_plain(f"{why}; --keep: the installation is kept"))
            return None
        return why

    def run(self, static: bool) -> VerifyReport:
        """One verify child, as the plan tells the user's code to run (the loader hook, or the line it must
        call itself)."""
        from provisioner.verify import run_verify

        preload, env = self._as_the_plan_says()
        # a plan with TensorRT from wheels or a folder is proven with the TensorRT provider (first in the
        # session, its libnvinfer, the engine cache); system TensorRT is the machine's, not the plan's
        plan = self.plan
        provider = "tensorrt" if plan.tensorrt_version and plan.tensorrt_source != "system" else "cuda"
        if plan.plugin:
            provider = plan.plugin.provider
        self.listener.tell(VerifyStarted(static, self.target.python, provider))
        report = run_verify(
            self.target.python,
            provider=provider,
            static=static,
            timeout=self.settings.verify_timeout,
            preload=preload,
            env=env,
            plugin_module=plan.plugin.module if plan.plugin else None,
        )
        self.report = report
        self.listener.tell(VerifyEnded(report))
        return report

    def _as_the_plan_says(self) -> tuple[bool, dict[str, str] | None]:
        """--no-loader-hook: the plan told the code to call preload_dlls() (or, for builds without it, to set
        the loader path before starting): verify does the same. Otherwise a plain program."""
        plan = self.plan
        if not plan.pins or any(step.kind == LOADER_HOOK for step in plan.steps):
            return False, None
        from provisioner.matrix.load import load_matrix
        from provisioner.matrix.query import find_build

        build = find_build(load_matrix(), plan.package, plan.ort_version, plan.cuda_version, plan.index_url)
        if build is None or build.preload_dlls:
            return True, None
        import glob
        import os

        sub = "bin" if os.name == "nt" else "lib"
        folders = sorted(glob.glob(os.path.join(self.target.site_packages, "nvidia", "*", sub)))
        variable = "PATH" if os.name == "nt" else "LD_LIBRARY_PATH"
        current = os.environ.get(variable)
        return False, {variable: os.pathsep.join(folders + ([current] if current else []))}


def _plan_python(plan: Plan) -> str | None:
    if plan.hosts and plan.hosts[0].python:
        return plan.hosts[0].python.minor.rstrip("t")
    return None


# -- download ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wheelhouse:
    """What `download` filled: the folder, its wheels (and which are new), for which Python and platforms."""

    dest: str
    wheels: tuple[str, ...]
    bytes: int
    new: tuple[str, ...]
    python_version: str
    platforms: tuple[str, ...]
    plan: str  # the plan saved next to the wheels
    seconds: float = 0.0


def run_download(
    plan: Plan,
    listener: Listener,
    *,
    dest: Path,
    python_version: str | None,
    platform: str | None,
    glibc: str | None,
    index_url: str | None,
    extra_index_urls: tuple[str, ...],
    verbose: bool,
) -> Wheelhouse:
    """`ortprov download`: one `pip download` per install step, then plan.json next to the wheels."""
    from provisioner.installer.wheelhouse import download_argv, platform_tags, save_plan, target_of

    plan_python, plan_platform, plan_glibc = target_of(plan)
    version = python_version or (plan_python.rstrip("t") if plan_python else None)
    version = version or f"{sys.version_info[0]}.{sys.version_info[1]}"
    platform = platform or plan_platform or _this_platform()
    if platform.count("-") == 1 and not platform.startswith(("manylinux", "musllinux", "win_", "macosx")):
        try:
            tags = platform_tags(platform, glibc or plan_glibc)
        except ValueError as exc:
            raise BadInput(str(exc), hint="use linux-x86_64, linux-aarch64, windows-amd64 or a pip tag") from None
    else:
        tags = [platform]
    plan = with_sources(plan, index_url=index_url, extra_index_urls=extra_index_urls)
    _preflight_tensorrt(plan, listener)
    dest.mkdir(parents=True, exist_ok=True)
    before = {p.name for p in dest.glob("*.whl")}
    start = time.monotonic()
    installs = [s for s in plan.steps if s.kind == "install"]
    for number, step in enumerate(installs, 1):
        argv = download_argv(step, dest, version, tags)
        listener.tell(DownloadStarted(number, len(installs), step.packages, version, platform))
        result = run_command(
            argv,
            echo=(lambda line: listener.tell(InstallerLine(line))) if verbose else None,
            env=step_environment(step),
            watch=listener.watch,
        )
        if not result.ok:
            if not verbose:
                listener.tell(InstallerTail("pip", tail(result.output)))
            raise OrtprovError(
                f"download of step {number} failed: {diagnose(result)}",
                hint="check the index and the target Python/platform",
            )
    saved = save_plan(plan, dest)
    wheels = sorted(dest.glob("*.whl"))
    size = sum(p.stat().st_size for p in wheels)
    return Wheelhouse(
        dest=str(dest),
        wheels=tuple(p.name for p in wheels),
        bytes=size,
        new=tuple(p.name for p in wheels if p.name not in before),
        python_version=version,
        platforms=tuple(tags),
        plan=str(saved),
        seconds=time.monotonic() - start,
    )


def _this_platform() -> str:
    import platform as _platform

    os_name = {"linux": "linux", "win32": "windows"}.get(sys.platform, sys.platform)
    arch = _platform.machine().lower()
    arch = {"amd64": "x86_64" if os_name == "linux" else "amd64", "arm64": "aarch64"}.get(arch, arch)
    return f"{os_name}-{arch}"


__all__ = [
    "ApplySettings",
    "Opened",
    "Outcome",
    "Sources",
    "Verdict",
    "Wheelhouse",
    "carry_out",
    "find_target",
    "opened",
    "run_download",
]
