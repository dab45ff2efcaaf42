"""Issue 14, a newcomer's habits: shell completion (typer's, with the command table that imports commands
lazily), help examples that paste as shown at 80 columns. (No colour under TERM=dumb or NO_COLOR: the pty cases
of test_fuzz_cli.py.)"""

from __future__ import annotations

import re
import shlex

import pytest

from provisioner import cli
from tests.support.cli import cli_env, run_ortprov

EVERY_COMMAND = [name for name in cli.COMMANDS if name != "matrix"] + ["matrix show", "matrix check", "matrix update"]


def complete(words: str, shell: str = "bash") -> list[str]:
    """What the shell's completion function gets for `words` (the last one being typed)."""
    if shell == "bash":
        env = cli_env(_ORTPROV_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(len(words.split()) - 1))
    else:
        env = cli_env(_ORTPROV_COMPLETE=f"complete_{shell}", _TYPER_COMPLETE_ARGS=words)
    result = run_ortprov(env=env)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return result.stdout.split()


def test_completion_of_commands_and_of_the_options_of_the_command_being_typed() -> None:
    assert complete("ortprov pl") == ["plan"]
    assert "--gpu-cc" in complete("ortprov plan --gp") and complete("ortprov plan --dri") == ["--driver"]
    assert complete("ortprov matrix show --c") == ["--cuda"]
    assert complete("ortprov download --de") == ["--dest"]
    assert "--venv" in " ".join(complete("ortprov apply --ve", shell="zsh"))


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_the_script_for_the_shell(shell: str) -> None:
    result = run_ortprov("--show-completion", shell)
    assert result.returncode == 0, result.stderr
    assert "_ORTPROV_COMPLETE" in result.stdout and "ortprov" in result.stdout


def example_lines(help_text: str) -> list[str]:
    """The `ortprov ...` lines of the help's Examples blocks, comments dropped."""
    return [line.split("  #")[0].strip() for line in help_text.splitlines() if line.strip().startswith("ortprov ")]


@pytest.mark.parametrize("command", EVERY_COMMAND)
def test_help_fits_80_columns_and_its_examples_paste_as_shown(command: str) -> None:
    result = run_ortprov(*command.split(), "--help", env=cli_env(COLUMNS="80"))
    assert result.returncode == 0, result.stderr
    assert all(len(line) <= 80 for line in result.stdout.splitlines()), result.stdout
    examples = example_lines(result.stdout)
    declared = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-z])\b", result.stdout))
    for example in examples:
        words = shlex.split(example)  # balanced quotes: one line is one whole command
        assert words[1] in cli.COMMANDS, example
        if " ".join(words[1 : 1 + len(command.split())]) != command:
            continue  # another command's example (`ortprov plan ... > plan.json` in apply's help)
        for word in words:
            flag = word.split("=")[0]
            if flag.startswith("-"):
                assert flag in declared, f"{example}: {flag} is not an option of `ortprov {command}`"
