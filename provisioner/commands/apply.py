"""`ortprov apply` (install the plan in a venv, transactionally, then verify) and `ortprov download`."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from provisioner.commands._planning_options import (
    PLANNING_HELP,
    CudaLibrariesOpt,
    CudaOpt,
    DriverOpt,
    GpuCcOpt,
    HostOpt,
    NoLoaderHookOpt,
    OrtOpt,
    PlatformOpt,
    PythonOpt,
    TensorrtOpt,
)
from provisioner.errors import BadInput

if TYPE_CHECKING:
    from provisioner.plan import Plan
    from provisioner.planning import PlanningOptions

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
...) are honoured, and every other planning flag (--host, --driver, --gpu-cc, --platform, --ort, --cuda,
--tensorrt, --cuda-libraries, --no-loader-hook) is refused; beside --wheelhouse, such a flag makes a new plan instead.

{PLANNING_HELP}

Examples:

\b
  ortprov apply --venv .venv                          # create .venv if missing, install, verify
  ortprov apply --python /opt/app/.venv/bin/python --dry-run
  ortprov apply --venv env --python 3.12 --driver 580 --gpu-cc 9.0 -y
  ortprov plan --host gpu.json --json > plan.json && ortprov apply --plan plan.json -y
  ortprov download --dest wheels/ --host gpu.json     # on a machine with network
  ortprov apply --wheelhouse wheels/ --venv /opt/env -y   # on the air-gapped one

Exit codes: 0 installed and verified, 1 failed or verification failed (environment restored, unless
--keep or this machine has no NVIDIA driver: then say so), 2 bad input, 3 no compatible plan, 130/143
interrupted (environment restored)."""

DOWNLOAD_HELP = f"""Download every wheel a plan installs into a folder (a wheelhouse), for any Python
and platform.

One `pip download --only-binary=:all: --python-version X.Y --platform TAG...` per install step; the plan
is saved next to the wheels (plan.json), and `ortprov apply --wheelhouse DIR` installs it with no network.
The target Python, platform and glibc come from the plan's host, or from --python X.Y / --platform / --glibc.

{PLANNING_HELP}

Examples:

\b
  ortprov download --dest wheels/ --host gpu.json
  ortprov download --dest wheels/ --plan plan.json
  ortprov download --dest wheels/ --driver 580 --gpu-cc 9.0 --python 3.12 --platform linux-x86_64"""


PlanFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--plan",
        metavar="FILE",
        dir_okay=False,
        help="Use a plan saved by `ortprov plan --json` (what it removes is read from the target).",
    ),
]
VenvOpt = Annotated[
    Path | None,
    typer.Option(
        "--venv",
        metavar="DIR",
        help="Target venv; created when missing (with --python X.Y's Python, else this one's).",
    ),
]
ExtraIndexOpt = Annotated[
    list[str] | None,
    typer.Option("--extra-index-url", metavar="URL", help="Additional index (repeatable)."),
]
FindLinksOpt = Annotated[
    list[str] | None,
    typer.Option("--find-links", metavar="DIR|URL", help="Also look for wheels here (repeatable)."),
]
WheelhouseOpt = Annotated[
    Path | None,
    typer.Option(
        "--wheelhouse",
        metavar="DIR",
        file_okay=False,
        help="Install offline from a folder filled by `ortprov download` (--no-index --find-links DIR; "
        "its plan.json unless flags ask for another plan).",
    ),
]
DestOpt = Annotated[
    Path,
    typer.Option("--dest", metavar="DIR", file_okay=False, help="The wheelhouse folder (created when missing)."),
]


# What apply and download read --python (and download --platform) as when a plan is saved: not a planning choice
APPLY_TARGET = ("target_python", "python_version")  # the target: an interpreter or venv, or the Python it has
DOWNLOAD_WHEELS = ("python_version", "platform")  # the Python and platform whose wheels are fetched


def options_for_target(
    options: PlanningOptions, target_python: str | None, target_minor: str | None
) -> PlanningOptions:
    """Plan for the target: probe its interpreter, unless host files or flags describe the machine."""
    from dataclasses import replace

    from provisioner.planning import describes_machine

    if options.host_files or describes_machine(options):
        if options.python_version is None and target_minor and not options.host_files:
            return replace(options, python_version=target_minor)
        return options
    return replace(options, target_python=target_python)


def read_plan_file(path: Path) -> Plan:
    """A plan saved by `ortprov plan --json` (or by `ortprov download` next to its wheels)."""
    import json

    from provisioner.plan import Plan

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(
            f"plan file {str(path)!r} does not exist",
            hint="create one with `ortprov plan --json > plan.json`",
        ) from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"cannot read plan file {str(path)!r}: {exc}") from None
    if isinstance(data, dict) and "error" in data and "steps" not in data:
        raise BadInput(f"plan file {str(path)!r} holds an error, not a plan: {data['error']}")
    try:
        return Plan.from_dict(data)
    except (ValueError, TypeError, AttributeError) as exc:
        raise BadInput(
            f"plan file {str(path)!r} is malformed: {exc}", hint="re-create it with `ortprov plan --json`"
        ) from None


def plan_source(
    plan_file: Path | None, wheelhouse: Path | None, options: PlanningOptions
) -> Callable[[str | None, str | None], Plan]:
    """How apply gets the plan once the target is known: --plan FILE, else the wheelhouse's plan.json (when no
    planning flag asks for another), else a fresh plan for the target. A saved plan's removals are read from
    the target; a planning flag beside --plan is refused here, before anything is touched."""
    from provisioner.installer.wheelhouse import PLAN_FILE
    from provisioner.planning import planning_flags_given, refuse_beside_saved_plan

    saved: Path | None = None
    if plan_file is not None:
        refuse_beside_saved_plan(options, f"--plan {plan_file}", APPLY_TARGET)
        saved = plan_file
    elif wheelhouse is not None and (wheelhouse / PLAN_FILE).is_file():
        saved = None if planning_flags_given(options, APPLY_TARGET) else wheelhouse / PLAN_FILE

    def get(target_python: str | None, target_minor: str | None) -> Plan:
        if saved is not None:
            return for_target(read_plan_file(saved), target_python)
        return for_target(fresh_plan(options_for_target(options, target_python, target_minor)), target_python)

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


def fresh_plan(options: PlanningOptions) -> Plan:
    """Plan with the shipped (or refreshed) matrix, its notices on stderr."""
    from provisioner.matrix.load import load_matrix
    from provisioner.planning import plan_for

    matrix = load_matrix()
    for notice in matrix.notices:
        sys.stderr.write(f"note: {notice}\n")
    return plan_for(options, matrix)


@contextlib.contextmanager
def _json_errors(as_json: bool) -> Iterator[None]:
    """With --json, an error is also written as JSON on stdout (ApplyFailed writes its own, with the result)."""
    from provisioner.errors import OrtprovError
    from provisioner.installer.transaction import ApplyFailed

    try:
        yield
    except ApplyFailed:
        raise
    except OrtprovError as exc:
        if as_json:
            from provisioner.output import emit_json

            emit_json({"error": exc.message, "hint": exc.hint, "exit_code": exc.exit_code})
        raise


def _confirm_fn() -> Any:
    if not sys.stdin.isatty():
        return None
    return lambda question: typer.confirm(question, default=False, err=True)


def register(app: typer.Typer) -> None:
    """Add `apply` and `download` to the app."""
    app.command("apply", help=APPLY_HELP)(apply)
    app.command("download", help=DOWNLOAD_HELP)(download)


def apply(
    host: HostOpt = None,
    driver: DriverOpt = None,
    gpu_cc: GpuCcOpt = None,
    python: PythonOpt = None,
    platform: PlatformOpt = None,
    ort: OrtOpt = None,
    cuda: CudaOpt = None,
    tensorrt: TensorrtOpt = False,
    cuda_libraries: CudaLibrariesOpt = None,
    no_loader_hook: NoLoaderHookOpt = False,
    plan_file: PlanFileOpt = None,
    venv: VenvOpt = None,
    system: bool = typer.Option(False, "--system", help="Allow an externally managed (PEP 668) interpreter."),
    installer: str = typer.Option(
        "auto",
        "--installer",
        metavar="auto|uv|pip|conda",
        help="auto: uv if available, else pip. conda: the conda recipe with micromamba/mamba/conda, then its pip part.",
    ),
    index_url: str = typer.Option(
        None, "--index-url", metavar="URL", help="Package index for the install steps (a mirror)."
    ),
    extra_index_url: ExtraIndexOpt = None,
    find_links: FindLinksOpt = None,
    wheelhouse: WheelhouseOpt = None,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the commands and what would change."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask before removing or replacing packages."),
    no_verify: bool = typer.Option(False, "--no-verify", help="Skip verification after installing."),
    verify_static: bool = typer.Option(
        False,
        "--verify-static",
        help="Verify only that every library the CUDA provider needs resolves (no GPU needed).",
    ),
    verify_timeout: float = typer.Option(
        120.0, "--verify-timeout", metavar="SECONDS", help="Time limit for verification."
    ),
    keep: bool = typer.Option(
        False, "--keep", help="Keep the installation when its verification fails (default: restore it)."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Stream the installer's output."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
) -> None:
    """Install the plan in a venv, transactionally, then verify."""
    from provisioner.installer.flow import run_apply
    from provisioner.planning import options_from_flags

    options = options_from_flags(
        host, driver, gpu_cc, python, platform, ort, cuda, tensorrt, cuda_libraries, no_loader_hook
    )
    with _json_errors(as_json):
        run_apply(
            plan_source(plan_file, wheelhouse, options),
            venv=venv,
            python=options.target_python,
            python_version=options.python_version,
            system=system,
            installer=installer,
            index_url=index_url,
            extra_index_urls=tuple(extra_index_url or ()),
            find_links=tuple(find_links or ()),
            wheelhouse=wheelhouse,
            dry_run=dry_run,
            yes=yes,
            verify=None if no_verify else ("static" if verify_static else "session"),
            verify_timeout=verify_timeout,
            verbose=verbose,
            as_json=as_json,
            confirm=_confirm_fn(),
            keep=keep,
        )


def download(
    dest: DestOpt,
    host: HostOpt = None,
    driver: DriverOpt = None,
    gpu_cc: GpuCcOpt = None,
    python: PythonOpt = None,
    platform: PlatformOpt = None,
    ort: OrtOpt = None,
    cuda: CudaOpt = None,
    tensorrt: TensorrtOpt = False,
    cuda_libraries: CudaLibrariesOpt = None,
    no_loader_hook: NoLoaderHookOpt = False,
    plan_file: PlanFileOpt = None,
    glibc: str = typer.Option(
        None, "--glibc", metavar="X.Y", help="Target glibc (default: the plan's host, else 2.28)."
    ),
    index_url: str = typer.Option(None, "--index-url", metavar="URL", help="Package index (a mirror)."),
    extra_index_url: ExtraIndexOpt = None,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Stream pip's output."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
) -> None:
    """Fill a wheelhouse for a plan."""
    from provisioner.installer.flow import run_download
    from provisioner.planning import options_from_flags, refuse_beside_saved_plan

    options = options_from_flags(
        host, driver, gpu_cc, python, platform, ort, cuda, tensorrt, cuda_libraries, no_loader_hook
    )
    if plan_file is not None:
        # --python X.Y and --platform say which wheels to fetch; every other planning flag is refused
        refuse_beside_saved_plan(options, f"--plan {plan_file}", DOWNLOAD_WHEELS)
        plan = read_plan_file(plan_file)
    else:
        plan = fresh_plan(options)
    run_download(
        plan,
        dest=dest,
        python_version=options.python_version,
        platform=platform,
        glibc=glibc,
        index_url=index_url,
        extra_index_urls=tuple(extra_index_url or ()),
        verbose=verbose,
        as_json=as_json,
    )
