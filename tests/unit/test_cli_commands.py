"""The CLI's static command table (cli.COMMANDS) against the commands the modules really register, the help of
every command, and a closed stdout."""

from __future__ import annotations

import importlib
import re

import pytest
import typer

from provisioner import cli
from tests.support.cli import cli_env, run_ortprov

# every command and subcommand, as typed after `ortprov`
EVERY_COMMAND = [name for name in cli.COMMANDS if name != "matrix"] + [
    "matrix",
    "matrix check",
    "matrix show",
    "matrix update",
]
HELP_WIDTH = 80


def _registered(module_name: str) -> dict[str, str]:
    """name -> first line of the help, for what one command module registers on a fresh app."""
    app = typer.Typer()
    importlib.import_module(f"provisioner.commands.{module_name}").register(app)
    helps = {info.name: info.help or "" for info in app.registered_commands}
    helps |= {info.name: info.typer_instance.info.help or "" for info in app.registered_groups}  # type: ignore[union-attr]
    return {name: text.strip().splitlines()[0] for name, text in helps.items() if name}


def test_every_command_is_in_the_table_with_its_own_summary() -> None:
    modules = sorted({module for module, _ in cli.COMMANDS.values()})
    registered = {name: (module, summary) for module in modules for name, summary in _registered(module).items()}
    assert registered == cli.COMMANDS


def test_top_level_help_imports_no_command_module() -> None:
    out = run_ortprov("--help", env=cli_env(PYTHONPROFILEIMPORTTIME="1"))  # python -X importtime
    assert out.returncode == 0
    assert "Commands:" in out.stdout and all(name in out.stdout for name in cli.COMMANDS)
    imported = re.findall(r"\|\s+(provisioner\S*)$", out.stderr, re.M)
    assert "provisioner.cli" in imported
    assert [name for name in imported if name.startswith("provisioner.commands.")] == []


def test_an_invoked_command_runs_for_real() -> None:
    out = run_ortprov("matrix", "check", timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("matrix OK")


@pytest.mark.parametrize("name", EVERY_COMMAND)
def test_help_examples_are_whole_commands(name: str) -> None:
    """At 80 columns, no help line is wider, and every line of the examples is a whole command: none wraps."""
    out = run_ortprov(*name.split(), "--help", env=cli_env(COLUMNS=str(HELP_WIDTH)))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= HELP_WIDTH, "\n".join(line for line in lines if len(line) > 80)
    if "Examples:" not in out.stdout:
        return
    examples = out.stdout.split("Examples:", 1)[1].split("\n\n  Exit codes", 1)[0].split("\nOptions:", 1)[0]
    commands = [line.strip() for line in examples.splitlines() if line.strip()]
    assert commands and all(line.startswith(("ortprov ", "python ", "pbpaste ")) for line in commands), commands


def test_a_closed_pipe_is_a_quiet_exit() -> None:
    """`ortprov plan -v | head -1` (and a closed stderr): no BrokenPipeError traceback."""
    h100 = ["--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64"]
    closed_stderr = ("sh", "-c", '"$@" 2>&1 >/dev/null | head -c0', "sh")
    result = run_ortprov("plan", "--driver", "300", *h100[2:], "--format", "text", "-v", prefix=closed_stderr)
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr
    result = run_ortprov("dockerfile", *h100, prefix=("sh", "-c", '"$@" | head -1', "sh"))
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr
    assert result.stdout.startswith("#") or result.stdout.startswith("FROM") or result.stdout.startswith("ARG")
