"""`ortprov apply` (install the plan in a venv, transactionally, then verify) and `ortprov download`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner.commands.options import (
    PLANNING_FLAGS,
    PLANNING_HELP,
    PlanningOptions,
    command,
    planning_flags_given,
    refuse_beside_saved_plan,
)

if TYPE_CHECKING:
    import typer

    from provisioner.plan import Plan
    from provisioner.render.apply import Applied, Downloaded

APPLY_HELP = f"""Install the planned onnxruntime-gpu build, all or nothing, then prove it with verify.

Runs exactly the steps `ortprov plan` prints (with uv when available, else pip), in the active venv,
--python PATH, or --venv DIR (created when missing), and installs the loader hook that lets a plain
`import onnxruntime` find the NVIDIA wheels' libraries (--no-loader-hook: not). Before changing anything it
snapshots the environment (hard links: fast, offline); any failure (network, hash mismatch, resolver
conflict, Ctrl-C, SIGTERM, a killed installer, a failed verification) restores it byte for byte (--keep
keeps it when only the verification failed). Removals are confirmed unless --yes.

A saved plan (--plan FILE, or the plan.json of --wheelhouse DIR) says what to install; what it removes first
(other onnxruntime flavours, an incomplete install) is read from the target. Beside --plan, the flags that
pick the target, the package sources and the run (--python, --venv, --index-url, --dry-run, -y, --no-verify
...) are honoured, and every other planning flag ({{refused}}) is refused; beside --wheelhouse, such a flag
makes a new plan instead.

{PLANNING_HELP}

Examples:

\b
  ortprov apply --venv .venv       # create .venv if missing, install, verify
  ortprov apply --python /opt/app/.venv/bin/python --dry-run
  ortprov apply --venv env --python 3.12 --driver 580 --gpu-cc 9.0 -y
  ortprov plan --host gpu.json --json > plan.json
  ortprov apply --plan plan.json -y
  ortprov download --dest wheels/ --host gpu.json      # with network ...
  ortprov apply --wheelhouse wheels/ --venv /opt/env -y  # ... air-gapped

Exit codes: 0 installed and verified, 1 failed or verification failed (environment restored, unless
--keep or this machine has no NVIDIA driver: then say so), 2 bad input, 3 no compatible plan, 130/143
interrupted (environment restored)."""

DOWNLOAD_HELP = f"""Download every wheel a plan installs into a folder (a wheelhouse), for any Python and platform.

One `pip download --only-binary=:all: --python-version X.Y --platform TAG...` per install step; the plan
is saved next to the wheels (plan.json), and `ortprov apply --wheelhouse DIR` installs it with no network.
The target Python, platform and glibc come from the plan's host, or from --python X.Y / --platform / --glibc.

{PLANNING_HELP}

Examples:

\b
  ortprov download --dest wheels/ --host gpu.json
  ortprov download --dest wheels/ --plan plan.json
  ortprov download --dest wheels/ --driver 580 --gpu-cc 9.0 --python 3.12"""


# What apply and download read --python (and download --platform) as when a plan is saved: not a planning choice
APPLY_TARGET = ("target_python", "python_version")  # the target: an interpreter or venv, or the Python it has
DOWNLOAD_WHEELS = ("python_version", "platform")  # the Python and platform whose wheels are fetched
APPLY_HELP = APPLY_HELP.replace(
    "{refused}", ", ".join(flag for field, flag in PLANNING_FLAGS.items() if field not in APPLY_TARGET)
)


def options_for_target(
    options: PlanningOptions, target_python: str | None, target_minor: str | None
) -> PlanningOptions:
    """Plan for the target: probe its interpreter, unless host files or flags describe the machine."""
    from dataclasses import replace

    from provisioner.commands.planning import describes_machine

    if options.host_files or describes_machine(options):
        if options.python_version is None and target_minor and not options.host_files:
            return replace(options, python_version=target_minor)
        return options
    return replace(options, target_python=target_python)


def plan_source(
    plan_file: Path | None, wheelhouse: Path | None, options: PlanningOptions
) -> Callable[[str | None, str | None], Plan]:
    """How apply gets the plan once the target is known: --plan FILE, else the wheelhouse's plan.json (when no
    planning flag asks for another), else a fresh plan for the target. A saved plan's removals are read from
    the target; a planning flag beside --plan, or a plan file that cannot be read, is refused here, before
    anything is touched."""
    from provisioner.installer.wheelhouse import PLAN_FILE
    from provisioner.userfiles import read_plan_file

    saved: Plan | None = None
    if plan_file is not None:
        refuse_beside_saved_plan(options, f"--plan {plan_file}", APPLY_TARGET)
        saved = read_plan_file(plan_file)
    elif wheelhouse is not None and (wheelhouse / PLAN_FILE).is_file():
        saved = None if planning_flags_given(options, APPLY_TARGET) else read_plan_file(wheelhouse / PLAN_FILE)

    def get(target_python: str | None, target_minor: str | None) -> Plan:
        if saved is not None:
            return for_target(saved, target_python)
        planning = options_for_target(options, target_python, target_minor)
        return for_target(fresh_plan(planning, "apply"), target_python)

    return get


def for_target(plan: Plan, target_python: str | None) -> Plan:
    """The plan with what it removes read from the target's installed distributions (planner.retarget): a
    saved plan, or one made from flags or host files, knows the host, not this environment. No target yet (a
    venv to be created): nothing to remove."""
    from provisioner.errors import OrtprovError
    from provisioner.planner import retarget
    from provisioner.probe.target import inspect

    if target_python is None:
        return retarget(plan, ())
    report = inspect(target_python)
    if report.python is None:
        raise OrtprovError(
            f"cannot read what {target_python} has installed, so the saved plan cannot be checked against it: "
            + "; ".join(report.errors),
            hint="run `ortprov detect --python PATH` to see why",
        )
    return retarget(plan, (report,))


def fresh_plan(options: PlanningOptions, command: str) -> Plan:
    """Plan with the shipped (or refreshed) matrix, its notices on stderr."""
    from provisioner.commands.planning import plan_for
    from provisioner.matrix.load import load_matrix
    from provisioner.render.output import note

    matrix = load_matrix()
    for notice in matrix.notices:
        note(notice)
    return plan_for(options, matrix, command=command)


def _confirm_fn() -> Any:
    if not sys.stdin.isatty():
        return None
    return lambda question: typer.confirm(question, default=False, err=True)


def register(app: typer.Typer) -> None:
    """Add `apply` and `download` to the app."""
    app.command("apply", help=APPLY_HELP)(command(apply))
    app.command("download", help=DOWNLOAD_HELP)(command(download))


def apply(
    planning: PlanningOptions,
    plan_file: Path | None,
    venv: Path | None,
    system: bool,
    installer: str,
    index_url: str | None,
    extra_index_url: list[str] | None,
    find_links: list[str] | None,
    wheelhouse: Path | None,
    dry_run: bool,
    yes: bool,
    no_verify: bool,
    verify_static: bool,
    timeout: float,
    keep: bool,
    verbose: bool,
    json_output: bool,
) -> Applied:
    """Install the plan in a venv, transactionally, then verify."""
    from provisioner.installer.flow import run_apply
    from provisioner.render.apply import Applied

    result, report = run_apply(
        plan_source(plan_file, wheelhouse, planning),
        venv=venv,
        python=planning.target_python,
        python_version=planning.python_version,
        system=system,
        installer=installer,
        index_url=index_url,
        extra_index_urls=tuple(extra_index_url or ()),
        find_links=tuple(find_links or ()),
        wheelhouse=wheelhouse,
        dry_run=dry_run,
        yes=yes,
        verify=None if no_verify else ("static" if verify_static else "session"),
        verify_timeout=timeout,
        verbose=verbose,
        confirm=_confirm_fn(),
        keep=keep,
    )
    return Applied(result, report)


def download(
    dest: Path,
    planning: PlanningOptions,
    plan_file: Path | None,
    glibc: str | None,
    index_url: str | None,
    extra_index_url: list[str] | None,
    verbose: bool,
    json_output: bool,
) -> Downloaded:
    """Fill a wheelhouse for a plan."""
    from provisioner.commands.options import make_folder
    from provisioner.installer.flow import run_download
    from provisioner.render.apply import Downloaded
    from provisioner.userfiles import read_plan_file

    if plan_file is not None:
        # --python X.Y and --platform say which wheels to fetch; every other planning flag is refused
        refuse_beside_saved_plan(planning, f"--plan {plan_file}", DOWNLOAD_WHEELS)
        plan = read_plan_file(plan_file)
    else:
        plan = fresh_plan(planning, "download")
    make_folder("--dest", dest)
    wheelhouse = run_download(
        plan,
        dest=dest,
        python_version=planning.python_version,
        platform=planning.platform,
        glibc=glibc,
        index_url=index_url,
        extra_index_urls=tuple(extra_index_url or ()),
        verbose=verbose,
    )
    return Downloaded(wheelhouse)
