"""The `ortprov` command line: parse options, call the core, render. No logic lives here.

Each command lives in provisioner/commands/<module>.py and registers itself on the app; heavy modules are
imported inside the command functions. Like pip's `commands_dict`, COMMANDS names each command's module and
summary, so that a run imports and builds only the command it invokes, and `ortprov --help` lists the
summaries without importing any command module (a test keeps the summaries equal to the commands' help).
"""

from __future__ import annotations

import importlib
import sys

import typer

from provisioner import __version__
from provisioner.errors import OrtprovError
from provisioner.output import error_line

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

app = typer.Typer(
    name="ortprov",
    help=(
        "Make onnxruntime-gpu really use the GPU: detect the host, plan the right build, install it, prove it.\n\n"
        "Examples:\n\n"
        "  ortprov detect                      # what this machine has\n\n"
        "  ortprov plan                        # the onnxruntime-gpu build for this machine\n\n"
        "  ortprov plan --driver 535.104 --gpu-cc 8.0 --format dockerfile\n\n"
        "  ortprov apply --venv .venv          # install it, then prove it\n\n"
        "  ortprov doctor                      # why is my GPU not used?\n\n"
        "Exit codes: 0 ok, 1 problems found, 2 bad input, 3 no compatible plan."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"ortprov {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Show the version."
    ),
) -> None:
    """ortprov."""


def register_commands(args: list[str]) -> None:
    """Register the invoked command for real; for anything else (--help, --version, a typo), every command as
    a summary only, so the listing needs no command module."""
    invoked = next((arg for arg in args if not arg.startswith("-")), None)
    if invoked in COMMANDS:
        importlib.import_module(f"provisioner.commands.{COMMANDS[invoked][0]}").register(app)
        return
    for name, (_, summary) in COMMANDS.items():
        app.command(name, help=summary, add_help_option=False)(_summary_only)


def _summary_only() -> None:
    """Stands for a command in the top-level listing; never runs (an invoked command is registered for real)."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app, turning every known error into one line and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    register_commands(args)
    try:
        app(args=args, prog_name="ortprov")
    except OrtprovError as exc:
        error_line(exc.message, exc.hint)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(130)
