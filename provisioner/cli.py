"""The `ortprov` command line: parse options, call the core, render. No logic lives here.

Each command lives in provisioner/commands/<name>.py and registers itself on the app; heavy modules are
imported inside the command functions so that `ortprov --help` stays fast.
"""

from __future__ import annotations

import importlib
import sys

import typer

from provisioner import __version__
from provisioner.errors import OrtprovError
from provisioner.output import error_line

COMMAND_MODULES = ("detect", "matrix", "plan", "apply", "verify", "doctor")

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


for _name in COMMAND_MODULES:
    importlib.import_module(f"provisioner.commands.{_name}").register(app)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app, turning every known error into one line and an exit code."""
    try:
        app(args=argv, prog_name="ortprov")
    except OrtprovError as exc:
        error_line(exc.message, exc.hint)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(130)
