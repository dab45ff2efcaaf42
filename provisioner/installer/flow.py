"""`apply` and `download` end to end: target, installer, sources, transaction, verify. Progress goes to stderr
as it happens; what was done is returned (the command renders it), and failures are raised."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provisioner.errors import BadInput, OrtprovError
from provisioner.installer.runner import diagnose, print_err, run_command, tail
from provisioner.installer.steps import with_sources
from provisioner.installer.target import distributions, resolve_target, venv_python
from provisioner.installer.tools import choose_installer, find_uv
from provisioner.installer.transaction import ApplyFailed, ApplyResult, ApplySettings, apply_plan, locked
from provisioner.plan import LOADER_HOOK, Plan, step_environment

PlanSource = Callable[[str | None, str | None], Plan]  # (target python, its X.Y) -> the plan


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


def run_apply(
    plan_source: PlanSource,
    *,
    venv: Path | None,
    python: str | None,
    python_version: str | None,
    system: bool,
    installer: str,
    index_url: str | None,
    extra_index_urls: tuple[str, ...],
    find_links: tuple[str, ...],
    wheelhouse: Path | None,
    dry_run: bool,
    yes: bool,
    verify: str | None,
    verify_timeout: float,
    verbose: bool,
    confirm: Callable[[str], bool] | None,
    keep: bool = False,
) -> tuple[Any, Any]:
    """`ortprov apply`: (what was done: an ApplyResult, or the dry run's plan for a venv still to be created;
    the verify report or None). Raises OrtprovError; ApplyFailed's details hold the result and the report.

    The verify runs inside the transaction: when it fails, the environment is restored (ApplyFailed), unless
    `keep`, or unless the only failure is this machine's missing NVIDIA driver and the static check passes
    (a build server preparing a venv for a GPU machine: kept, exit 1, said so)."""
    if wheelhouse is not None:
        if not wheelhouse.is_dir():
            raise BadInput(
                f"wheelhouse {str(wheelhouse)!r} is not a directory",
                hint="fill one with `ortprov download --dest DIR`",
            )
        find_links = (*find_links, str(wheelhouse.absolute()))

    def sourced(plan: Plan) -> Plan:
        return with_sources(
            plan,
            index_url=index_url,
            extra_index_urls=extra_index_urls,
            find_links=find_links,
            no_index=wheelhouse is not None,
        )

    if installer == "conda":
        from provisioner.installer.conda import run_conda_apply

        result = run_conda_apply(
            lambda py, minor: sourced(plan_source(py, minor)),
            python=python,
            dry_run=dry_run,
            yes=yes,
            verbose=verbose,
            confirm=confirm,
        )
        report = None
        if verify and result.outcome != "dry-run":  # conda's CUDA libraries are on the env's loader path
            report = Verifier(result.python, "", None, verify, verify_timeout, keep=True).run(verify == "static")
    else:
        uv = find_uv() if installer in ("auto", "uv") else None
        if dry_run and venv is not None and not venv_python(venv.expanduser().absolute()).exists():
            version = python_version or f"{sys.version_info[0]}.{sys.version_info[1]}"
            plan = sourced(plan_source(None, version))
            _preflight_tensorrt(plan)
            _say(f"dry run: would create the venv {venv} (Python {version}), then install: " + " ".join(plan.install))
            return {"outcome": "dry-run", "create_venv": str(venv), "install": list(plan.install)}, None
        existed = venv is not None and venv.expanduser().exists()
        target, installed = resolve_target(
            python, venv, system=system, python_version=python_version, uv=uv, create=not dry_run
        )
        if target.created:
            _say(f"created the venv {venv} (Python {target.version})")
        planned_ok = False
        try:
            # lock, settle what a killed apply left, then plan from the settled state (docs/transaction.md)
            with locked(target, dry_run=dry_run) as session:
                if session.recovered:
                    installed = distributions(target.python)
                with session.guard.interruptible():
                    plan = sourced(plan_source(target.python, target.minor))
                    _preflight_tensorrt(plan)
                planned_ok = True
                planned = _plan_python(plan)
                if planned and planned != target.minor:
                    _say(f"warning: the plan was made for Python {planned}, the target is Python {target.minor}")
                tool, uv_cmd = choose_installer(installer, target.has_pip)
                verifier = Verifier(target.python, target.site_packages, plan, verify, verify_timeout, keep)
                settings = ApplySettings(
                    tool=tool,
                    uv=uv_cmd,
                    verbose=verbose,
                    dry_run=dry_run,
                    yes=yes,
                    system=system,
                    confirm=confirm,
                    hook_files=_hook_files(plan),
                    check=verifier.check if verify and not dry_run else None,
                )
                _say(
                    f"plan: {plan.package} {plan.ort_version} (CUDA {plan.cuda_version}"
                    + (f", cuDNN {plan.cudnn_version}" if plan.cudnn_version else "")
                    + f") -> {target.python}"
                )
                try:
                    result = apply_plan(plan, target, installed, settings, session)
                except ApplyFailed as failed:
                    failed.details = {"apply": failed.result, "verify": verifier.report}
                    raise
                if verify and result.outcome == "unchanged":  # nothing changed, nothing to restore: just prove it
                    with session.guard.interruptible():
                        why = verifier.check()
                    if why:
                        _say(
                            f"{why}: apply changed nothing, so there is nothing to restore; "
                            "`ortprov doctor` explains it"
                        )
        except OrtprovError:
            if not planned_ok and target.created and venv is not None and not existed:  # no plan: no empty venv
                shutil.rmtree(venv.expanduser(), ignore_errors=True)
                _say(f"removed the venv {venv} again: there is no plan to install into it")
            raise
        report = verifier.report
    return result, report


def _preflight_tensorrt(plan: Plan) -> None:
    """The TensorRT wheels the plan pins can be had from its sources (a wheelhouse, the index or its mirror);
    else one message with the ways that work, before anything is changed."""
    from provisioner.installer.tensorrt_source import preflight, tensorrt_steps

    if tensorrt_steps(plan):
        for found in preflight(plan):
            _say(f"tensorrt: {found.requirement} is available from {found.where}")


def _hook_files(plan: Plan) -> dict[str, bytes] | None:
    """The loader hook's files when the plan installs it (its soname table comes from the matrix)."""
    if not any(step.kind == LOADER_HOOK for step in plan.steps):
        return None
    from provisioner.installer.loader_hook import hook_files
    from provisioner.matrix.load import load_matrix
    from provisioner.matrix.query import sonames_by_cuda_major, tensorrt_library_dirs, tensorrt_opened_later

    matrix = load_matrix()
    folders = [plan.tensorrt_source] if plan.tensorrt_source and os.path.isabs(plan.tensorrt_source) else []
    return hook_files(
        sonames_by_cuda_major(matrix), tensorrt_library_dirs(matrix), folders, tensorrt_opened_later(matrix)
    )


class Verifier:
    """apply's verify: what a plain program in the target gets, judged inside the transaction."""

    def __init__(
        self, python: str, site_packages: str, plan: Plan | None, mode: str | None, timeout: float, keep: bool
    ) -> None:
        self.python = python
        self.site_packages = site_packages
        self.plan = plan
        self.mode = mode
        self.timeout = timeout
        self.keep = keep
        self.report: Any = None

    def check(self) -> str | None:
        """Verify; None keeps the change, a sentence says why the transaction must restore it."""
        report = self.run(self.mode == "static")
        if report.ok:
            return None
        if "no-driver" in report.failure_kinds and self.mode != "static":
            _say("verify: this machine has no NVIDIA driver, so no GPU session can run here; checking statically")
            static = self.run(static=True)
            if static.ok:
                _say(
                    "verify: the installation is kept: every library the provider needs resolves; "
                    "run `ortprov verify` on the GPU machine to prove a session"
                )
                self.report = report
                return None
            report = static
        self.report = report
        why = f"verify failed ({', '.join(report.failure_kinds) or report.status})"
        if self.keep:
            _say(f"{why}; --keep: the installation is kept")
            return None
        return why

    def run(self, static: bool) -> Any:
        """One verify child, as the plan tells the user's code to run (the loader hook, or the line it must
        call itself), with the outcome printed."""
        from provisioner.verify import run_verify

        preload, env = self._as_the_plan_says()
        # a plan with TensorRT from wheels or a folder is proven with the TensorRT provider (first in the
        # session, its libnvinfer, the engine cache); system TensorRT is the machine's, not the plan's
        tensorrt = bool(self.plan and self.plan.tensorrt_version and self.plan.tensorrt_source != "system")
        what = "static check (libraries resolve)" if static else ("TensorRT session" if tensorrt else "CUDA session")
        _say(f"verify: {what} in {self.python} ...")
        report = run_verify(
            self.python,
            provider="tensorrt" if tensorrt else "cuda",
            static=static,
            timeout=self.timeout,
            preload=preload,
            env=env,
        )
        self.report = report
        if report.ok:
            _say(f"verify: passed ({report.mode}, {report.duration_s or 0:.1f}s)")
        else:
            _say(f"verify: FAILED ({', '.join(report.failure_kinds) or report.status})")
            for failure in report.failures[:5]:
                _say(f"  - {failure.kind}: {failure.message}")
        return report

    def _as_the_plan_says(self) -> tuple[bool, dict[str, str] | None]:
        """--no-loader-hook: the plan told the code to call preload_dlls() (or, for builds without it, to set
        the loader path before starting): verify does the same. Otherwise a plain program."""
        plan = self.plan
        if plan is None or not plan.pins or any(step.kind == LOADER_HOOK for step in plan.steps):
            return False, None
        from provisioner.matrix.load import load_matrix
        from provisioner.matrix.query import find_build

        build = find_build(load_matrix(), plan.package, plan.ort_version, plan.cuda_version, plan.index_url)
        if build is None or build.preload_dlls:
            return True, None
        import glob
        import os

        sub = "bin" if os.name == "nt" else "lib"
        folders = sorted(glob.glob(os.path.join(self.site_packages, "nvidia", "*", sub)))
        variable = "PATH" if os.name == "nt" else "LD_LIBRARY_PATH"
        current = os.environ.get(variable)
        return False, {variable: os.pathsep.join(folders + ([current] if current else []))}


def _plan_python(plan: Plan) -> str | None:
    if plan.hosts and plan.hosts[0].python:
        return plan.hosts[0].python.minor.rstrip("t")
    return None


def _say(text: str) -> None:
    print_err(text)


# -- download ---------------------------------------------------------------------------------------------


def run_download(
    plan: Plan,
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
    _preflight_tensorrt(plan)
    dest.mkdir(parents=True, exist_ok=True)
    before = {p.name for p in dest.glob("*.whl")}
    start = time.monotonic()
    installs = [s for s in plan.steps if s.kind == "install"]
    for number, step in enumerate(installs, 1):
        argv = download_argv(step, dest, version, tags)
        _say(f"[{number}/{len(installs)}] download {' '.join(step.packages)} (Python {version}, {platform})")
        echo = (lambda line: print_err(f"      | {line}")) if verbose else None
        result = run_command(argv, echo=echo, env=step_environment(step))
        if not result.ok:
            if not verbose:
                _say("pip output (last lines):\n" + tail(result.output))
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


__all__ = ["ApplyResult", "Wheelhouse", "run_apply", "run_download"]
