"""`ortprov plan` and `ortprov dockerfile`: the options (typer); what they do is in commands/plan_run.py.

The same commands also run without typer for well-formed arguments (provisioner/fastpath.py); a test keeps
its option table equal to the options declared here.
"""

from __future__ import annotations

import typer

from provisioner.commands import plan_run
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
from provisioner.commands.plan_run import FORMATS

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
    no_loader_hook: NoLoaderHookOpt = False,
    fmt: str = typer.Option("text", "--format", "-f", metavar="FORMAT", help=" | ".join(FORMATS) + "."),
    json_output: bool = typer.Option(False, "--json", help="Same as --format json."),
    hashes: bool = typer.Option(False, "--hashes", help="requirements: pin sha256 digests read from the index."),
    base: str = typer.Option("slim", "--base", metavar="slim|cuda", help="dockerfile: the base image kind."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="List every rejected candidate."),
) -> None:
    """Pick the onnxruntime-gpu build for a host and say why."""
    plan_run.plan_command(**locals())


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
    plan_run.dockerfile_command(**locals())
