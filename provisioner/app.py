"""The typer app behind `ortprov`: every command's options, help and errors.

cli.main runs it for every invocation the fast path (provisioner/fastpath.py) leaves alone. A run imports
and builds only the command it invokes (cli.COMMANDS names each command's module and summary), and
`ortprov --help` lists the summaries without importing any command module.
"""

from __future__ import annotations

import importlib

import typer

from provisioner import __version__
from provisioner.cli import COMMANDS

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


def run(args: list[str]) -> None:
    """Parse `args` with typer and run the command (typer exits the process)."""
    register_commands(args)
    app(args=args, prog_name="ortprov")
