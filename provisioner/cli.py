"""The `ortprov` command line: parse options, call the core, render. No logic lives here.

Each command lives in provisioner/commands/<module>.py and registers itself on the typer app (app.py).
Like pip's `commands_dict`, COMMANDS names each command's module and summary, so that a run imports and builds
only the command it invokes, and `ortprov --help` lists the summaries without importing any command module (a
test keeps the summaries equal to the commands' help). `plan` and `dockerfile` with well-formed arguments
run without importing typer at all (provisioner/fastpath.py): typer is ~0.1 s of a cold start.
"""

from __future__ import annotations

import os
import sys

from provisioner.errors import OrtprovError

# command -> (module under provisioner.commands, summary: the first line of the command's own help)
COMMANDS: dict[str, tuple[str, str]] = {
    "detect": ("detect", "Show the NVIDIA driver, GPUs, platform, Python, onnxruntime, torch and CUDA libraries here."),
    "plan": ("plan", "Pick the onnxruntime-gpu build for a host and say why; print it as text, JSON or a recipe."),
    "dockerfile": ("plan", "Print a Dockerfile for the planned build (same as `ortprov plan --format dockerfile`)."),
    "apply": ("apply", "Install the planned onnxruntime-gpu build, all or nothing, then prove it with verify."),
    "download": ("apply", "Download every wheel a plan installs into a folder (a wheelhouse), for any Python"),
    "verify": ("verify", "Prove that onnxruntime really runs on the GPU in the target interpreter."),
    "doctor": (
        "doctor",
        "Why is my GPU not used? Detect the host, plan, verify a real session, and list the findings.",
    ),
    "matrix": ("matrix", "The compatibility matrix: onnxruntime-gpu builds, CUDA releases, NVIDIA wheels, TensorRT."),
}


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the command, turning every known error into one line and an exit code."""
    from provisioner import fastpath
    from provisioner.output import error_line

    args = sys.argv[1:] if argv is None else argv
    try:
        if not fastpath.run(args):
            from provisioner.app import run

            run(args)
    except OrtprovError as exc:
        error_line(exc.message, exc.hint)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        # the reader went away (`ortprov plan --json | head -1`): exit quietly, as click does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
