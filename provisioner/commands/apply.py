"""`ortprov apply` (install the plan in a venv, transactionally, then verify) and `ortprov download`."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.commands.options import (
    PLANNING_FLAGS,
    PLANNING_HELP,
    PlanningOptions,
    command,
    planning_flags_given,
    refuse_beside_saved_plan,
)

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from provisioner.facts import HostFacts
    from provisioner.installer.events import Event, Watch
    from provisioner.plan import Plan
    from provisioner.probe.packages import PackagesReport
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

On a machine without an NVIDIA driver (a Docker build, CI), the CUDA session cannot run: the install is
checked statically (every library the CUDA provider needs resolves), kept, and that is a success (exit 0),
with a verdict line that says what was and was not proven; --require-gpu-verify makes it a failure.
--dry-run goes through the same checks and lists the same commands, and stops before the first change.

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

Exit codes (README): 0 installed and verified as far as this machine can, 1 a step or the verification
failed (environment restored, or kept with --keep), 2 bad input, 3 no compatible plan, 128+N interrupted
by signal N (130: Ctrl-C; environment restored)."""

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


@dataclass(frozen=True)
class PlanSource:
    """What apply plans from, read before anything is touched: a saved plan (--plan FILE, or a wheelhouse's
    plan.json), or the planning options (a fresh plan for the target, made under the lock)."""

    saved: Plan | None
    options: PlanningOptions


def plan_source(plan_file: Path | None, wheelhouse: Path | None, options: PlanningOptions) -> PlanSource:
    """--plan FILE, else the wheelhouse's plan.json (when no planning flag asks for another), else a fresh plan.
    A planning flag beside --plan, or a plan file that cannot be read, is refused here, before anything is
    touched."""
    from provisioner.installer.wheelhouse import PLAN_FILE
    from provisioner.userfiles import read_plan_file

    saved: Plan | None = None
    if plan_file is not None:
        refuse_beside_saved_plan(options, f"--plan {plan_file}", APPLY_TARGET)
        saved = read_plan_file(plan_file)
    elif wheelhouse is not None and (wheelhouse / PLAN_FILE).is_file():
        saved = None if planning_flags_given(options, APPLY_TARGET) else read_plan_file(wheelhouse / PLAN_FILE)
    return PlanSource(saved, options)


def plan_for_target(source: PlanSource, report: PackagesReport) -> Plan:
    """The plan for the target apply holds locked and has read (`report`, its one probe): a saved plan, or one
    made from flags or host files, with what it removes read from the target (planner.retarget); else a plan
    made for the target itself from that same report."""
    from provisioner.planner import retarget

    if source.saved is not None:
        return retarget(source.saved, (report,))
    return retarget(fresh_plan(options_for_target(source.options, report), "apply", report), (report,))


def options_for_target(options: PlanningOptions, report: PackagesReport) -> PlanningOptions:
    """Plan for the target, unless host files or flags describe the machine (then only its Python version)."""
    from dataclasses import replace

    from provisioner.commands.planning import describes_machine

    minor = report.python.minor if report.python is not None else None
    if options.host_files or describes_machine(options):
        if options.python_version is None and minor and not options.host_files:
            return replace(options, python_version=minor)
        return options
    return replace(options, target_python=report.interpreter)


def fresh_plan(options: PlanningOptions, command: str, report: PackagesReport | None = None) -> Plan:
    """Plan with the shipped (or refreshed) matrix, its notices on stderr. `report`: the target already read
    (apply's), so that it is not probed again."""
    from provisioner.commands.planning import plan_for
    from provisioner.matrix.load import load_matrix
    from provisioner.render.output import note

    matrix = load_matrix()
    for notice in matrix.notices:
        note(notice)
    detect = None
    if report is not None:
        from provisioner.probe import detect_host

        def detect(python: str | None = None) -> HostFacts:
            return detect_host(python, report=report)

    return plan_for(options, matrix, detect=detect, command=command)


class Console:
    """apply's and download's listener on the command line (installer/events.Listener): each event's line on
    stderr (render/apply.py words it), the question asked on the terminal, the installer's status line drawn
    there."""

    def tell(self, event: Event) -> None:
        from provisioner.render.apply import event_line
        from provisioner.render.output import progress

        line = event_line(event)
        if line:
            progress(line)

    def ask(self, question: str) -> bool | None:
        if not sys.stdin.isatty():
            return None
        import typer

        return bool(typer.confirm(question, default=False, err=True))

    def watch(self, pid: int) -> Watch | None:
        from provisioner.installer.progress import watch

        return watch(pid, sys.stderr)


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
    require_gpu_verify: bool,
    timeout: float,
    keep: bool,
    verbose: bool,
    json_output: bool,
) -> Applied:
    """Install the plan in a venv, transactionally, then verify: find the target, open it (lock, settle, read
    it once), plan for it, carry the plan out (installer/flow.py)."""
    from provisioner.installer.flow import ApplySettings, Sources, carry_out, find_target, opened
    from provisioner.render.apply import Applied

    source = plan_source(plan_file, wheelhouse, planning)
    settings = ApplySettings(
        venv=venv,
        python=planning.target_python,
        python_version=planning.python_version,
        installer=installer,
        sources=Sources(index_url, tuple(extra_index_url or ()), tuple(find_links or ()), wheelhouse),
        system=system,
        dry_run=dry_run,
        yes=yes,
        verify=None if no_verify else ("static" if verify_static else "session"),
        verify_timeout=timeout,
        keep=keep,
        require_gpu_verify=require_gpu_verify,
        verbose=verbose,
    )
    console = Console()
    where = find_target(settings)
    with opened(where, settings, console) as target:
        with target.interruptible():
            plan = plan_for_target(source, target.report)
        outcome = carry_out(target, plan, settings, console)
    return Applied(outcome.apply, outcome.verify, outcome.verdict)


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
        Console(),
        dest=dest,
        python_version=planning.python_version,
        platform=planning.platform,
        glibc=glibc,
        index_url=index_url,
        extra_index_urls=tuple(extra_index_url or ()),
        verbose=verbose,
    )
    return Downloaded(wheelhouse)
