"""`ortprov plan` and `ortprov dockerfile`: the onnxruntime-gpu build for a host, explained or as a recipe."""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING

import typer

from provisioner.commands._planning_options import (
    PLANNING_HELP,
    CudaLibrariesOpt,
    CudaOpt,
    DriverOpt,
    GpuCcOpt,
    HostOpt,
    OrtOpt,
    PlatformOpt,
    PythonOpt,
    TensorrtOpt,
    planning_options,
)

if TYPE_CHECKING:
    from provisioner.planning import PlanningOptions

FORMATS = ("text", "json", "pip", "requirements", "uv", "conda", "dockerfile")

PLAN_HELP = f"""Pick the onnxruntime-gpu build for a host and say why; print it as text, JSON or a recipe.

The newest release that runs on every host (driver, compute capability, Python, platform) unless pinned,
preferring CUDA/cuDNN majors already installed (torch's), with exact NVIDIA library pins and the
conflicting onnxruntime flavours removed first.

{PLANNING_HELP}

Examples:

  ortprov plan                                   # for this machine

  ortprov plan --host gpu-box.json --format pip

  ortprov plan --driver 535.104 --gpu-cc 8.0 --python 3.11 --platform linux-x86_64 --json

  ortprov plan --host a.json --host b.json -v    # one plan for both, or the host that blocks it

  ortprov plan --ort 1.20 --cuda 12 --format requirements --hashes

Exit codes: 0 a plan, 2 bad input, 3 no compatible build (the reasons are listed)."""

DOCKERFILE_HELP = f"""Print a Dockerfile for the planned build (same as `ortprov plan --format dockerfile`).

{PLANNING_HELP}

Examples:

  ortprov dockerfile --driver 550 --gpu-cc 8.6 --python 3.12 --platform linux-x86_64 > Dockerfile

  ortprov dockerfile --host gpu-box.json --base cuda"""


def register(app: typer.Typer) -> None:
    """Add `plan` and `dockerfile`."""
    app.command("plan", help=PLAN_HELP)(plan)
    app.command("dockerfile", help=DOCKERFILE_HELP)(dockerfile)


def plan(
    host: HostOpt = None,
    driver: DriverOpt = None,
    gpu_cc: GpuCcOpt = None,
    python: PythonOpt = None,
    platform: PlatformOpt = None,
    ort: OrtOpt = None,
    cuda: CudaOpt = None,
    tensorrt: TensorrtOpt = False,
    cuda_libraries: CudaLibrariesOpt = "wheels",
    fmt: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help=" | ".join(FORMATS) + "."),
    json_output: bool = typer.Option(False, "--json", help="Same as --format json."),
    hashes: bool = typer.Option(False, "--hashes", help="requirements: pin sha256 digests read from the index."),
    base: str = typer.Option("slim", "--base", metavar="slim|cuda", help="dockerfile: the base image kind."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="List every rejected candidate."),
) -> None:
    """Pick the onnxruntime-gpu build for a host and say why."""
    from provisioner.errors import BadInput

    if json_output:
        if fmt not in ("text", "json"):
            raise BadInput(f"--json and --format {fmt} exclude each other", hint="keep one of them")
        fmt = "json"
    run_plan(
        planning_options(host, driver, gpu_cc, python, platform, ort, cuda, tensorrt, cuda_libraries),
        fmt,
        hashes=hashes,
        base=base,
        verbose=verbose,
    )


def dockerfile(
    host: HostOpt = None,
    driver: DriverOpt = None,
    gpu_cc: GpuCcOpt = None,
    python: PythonOpt = None,
    platform: PlatformOpt = None,
    ort: OrtOpt = None,
    cuda: CudaOpt = None,
    tensorrt: TensorrtOpt = False,
    cuda_libraries: CudaLibrariesOpt = "wheels",
    base: str = typer.Option(
        "slim", "--base", metavar="slim|cuda", help="slim Python + NVIDIA wheels, or nvidia/cuda."
    ),
) -> None:
    """Print a Dockerfile for the planned build."""
    options = planning_options(host, driver, gpu_cc, python, platform, ort, cuda, tensorrt, cuda_libraries)
    run_plan(options, "dockerfile", base=base)


def run_plan(
    options: PlanningOptions, fmt: str, *, hashes: bool = False, base: str = "slim", verbose: bool = False
) -> None:
    """Plan and print in `fmt`; errors go to cli.main (one line, exit 2/3), with JSON on stdout for --json."""
    from provisioner.errors import BadInput, NoCompatiblePlan, OrtprovError
    from provisioner.planning import describes_machine, plan_for

    try:
        if fmt not in FORMATS:
            raise BadInput(f"unknown format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
        if hashes and fmt != "requirements":
            raise BadInput("--hashes applies to --format requirements", hint="add --format requirements")
        if base not in ("slim", "cuda"):
            raise BadInput(f"unknown --base {base!r}", hint="use slim or cuda")
        if fmt == "dockerfile" and base == "cuda":
            # the nvidia/cuda image supplies CUDA and cuDNN: the plan installs no NVIDIA wheels
            options = dataclasses.replace(options, cuda_libraries="system")
        from provisioner.matrix import load_matrix

        matrix = load_matrix()
        for notice in matrix.notices:
            sys.stderr.write(f"note: {notice}\n")
        the_plan = plan_for(options, matrix)
    except NoCompatiblePlan as exc:
        if fmt == "json":
            _emit_error(exc)
            raise
        from provisioner.output import error_line
        from provisioner.plan_text import render_no_plan

        error_line(exc.message, exc.hint)
        sys.stderr.write(render_no_plan(exc, verbose) + "\n")
        raise typer.Exit(exc.exit_code) from None
    except OrtprovError as exc:
        if fmt == "json":
            _emit_error(exc)
        raise
    assumed = the_plan.hosts[0].python
    if describes_machine(options) and options.python_version is None and assumed is not None:
        sys.stderr.write(
            f"note: planned for Python {assumed.minor} (this interpreter's); pass --python X.Y for another\n"
        )
    if fmt == "json":
        import json

        sys.stdout.write(json.dumps(the_plan.to_dict(), indent=2) + "\n")
    elif fmt == "text":
        from provisioner.plan_text import render_text

        typer.echo(render_text(the_plan, verbose=verbose, python=options.target_python or "python"))
    else:
        from provisioner import recipes

        text = recipes.render(
            the_plan, fmt, matrix=matrix, python=options.target_python or "python", hashes=hashes, base=base
        )
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _emit_error(exc: Exception) -> None:
    import json

    from provisioner.serde import to_jsonable

    data = {
        "error": getattr(exc, "message", str(exc)),
        "hint": getattr(exc, "hint", None),
        "exit_code": getattr(exc, "exit_code", 1),
        "rejected": to_jsonable(list(getattr(exc, "rejected", []))),
    }
    sys.stdout.write(json.dumps(data, indent=2) + "\n")
