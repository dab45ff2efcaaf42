"""The CLI's static command table (cli.COMMANDS) against the commands the modules really register."""

from __future__ import annotations

import importlib
import subprocess
import sys

import typer

from provisioner import cli


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
    code = (
        "import sys\n"
        "from provisioner import cli\n"
        "try:\n"
        "    cli.main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('provisioner.commands')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "Commands:" in out and all(name in out for name in cli.COMMANDS)
    assert out.strip().splitlines()[-1] == "[]"


def test_an_invoked_command_runs_for_real() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "provisioner", "matrix", "check"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout.startswith("matrix OK")
