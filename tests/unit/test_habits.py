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
        cword = len(words.split()) - (0 if words.endswith(" ") else 1)  # past a space: a new, empty word
        env = cli_env(_ORTPROV_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(cword))
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


# a line only that shell's script holds (typer's scripts)
SCRIPT_MARK = {
    "bash": "complete -o default -F",
    "zsh": "#compdef ortprov",
    "fish": "complete --command ortprov",
    "powershell": "Register-ArgumentCompleter",
}


@pytest.mark.parametrize("shell", list(SCRIPT_MARK))
def test_show_completion_prints_the_script_for_the_shell_named(shell: str) -> None:
    """Issue 23: `--show-completion zsh` printed the bash script."""
    result = run_ortprov("--show-completion", shell)
    assert result.returncode == 0, result.stderr
    assert "_ORTPROV_COMPLETE" in result.stdout and "ortprov" in result.stdout
    assert [mark for mark in SCRIPT_MARK.values() if mark in result.stdout] == [SCRIPT_MARK[shell]]


def test_install_completion_refuses_a_shell_it_cannot_serve_and_writes_nothing(tmp_path) -> None:
    """Issue 23: `--install-completion nosuchshell` edited ~/.bashrc."""
    home = tmp_path / "home"
    home.mkdir()
    result = run_ortprov("--install-completion", "nosuchshell", env=cli_env(HOME=str(home)))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: --install-completion 'nosuchshell' is not a shell ortprov completes in")
    assert list(home.iterdir()) == []
    done = run_ortprov("--install-completion", "fish", env=cli_env(HOME=str(home)))
    assert done.returncode == 0, done.stderr
    assert "complete --command ortprov" in (home / ".config/fish/completions/ortprov.fish").read_text()


@pytest.mark.parametrize(
    ("words", "values"),
    [
        ("ortprov plan --format ", ["text", "json", "pip", "uv", "requirements", "conda", "dockerfile", "kubernetes"]),
        ("ortprov plan --format d", ["dockerfile"]),
        ("ortprov apply --installer ", ["auto", "uv", "pip", "conda"]),
        ("ortprov dockerfile --base ", ["slim", "cuda"]),
        ("ortprov download --cuda-libraries s", ["system"]),
        ("ortprov verify --provider ", ["cuda", "tensorrt", "tensorrt-rtx"]),
        ("ortprov plan --platform linux-", ["linux-x86_64", "linux-aarch64"]),
        ("ortprov --show-completion p", ["powershell", "pwsh"]),
    ],
)
def test_enumerated_values_complete_from_their_declaration(words: str, values: list[str]) -> None:
    assert complete(words) == values
    assert [v for v in values if v in " ".join(complete(words, shell="zsh"))] == values


@pytest.mark.parametrize("command", EVERY_COMMAND)
def test_every_command_takes_quiet_and_verbose(command: str) -> None:
    shown = run_ortprov(*command.split(), "--help", env=cli_env(COLUMNS="200")).stdout
    assert "-q, --quiet" in shown and "-v, --verbose" in shown, shown
    required = {"download": ("--dest", "wheels"), "tune": ("model.onnx",)}.get(command, ())
    both = run_ortprov(*command.split(), *required, "-q", "-v")
    assert both.returncode == 2 and both.stderr.startswith("error: -q and -v exclude each other"), both.stderr


def test_quiet_drops_notes_and_keeps_the_result_and_errors() -> None:
    loud = run_ortprov("plan", "--driver", "580", "--gpu-cc", "9.0")
    quiet = run_ortprov("plan", "-q", "--driver", "580", "--gpu-cc", "9.0")
    assert loud.returncode == quiet.returncode == 0 and loud.stdout == quiet.stdout
    assert "note: planned for Python" in loud.stderr and quiet.stderr == ""
    refused = run_ortprov("plan", "-q", "--driver", "5x")
    assert refused.returncode == 2 and refused.stderr.startswith("error: --driver '5x' is not an NVIDIA driver")


def test_force_color_colours_a_pipe_and_no_color_wins() -> None:
    base = {k: v for k, v in cli_env().items() if k != "NO_COLOR"}
    forced = run_ortprov("plan", "--driver", "5x", env={**base, "FORCE_COLOR": "1"})
    assert "\x1b[31merror: " in forced.stderr
    both = run_ortprov("plan", "--driver", "5x", env={**base, "FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert both.stderr.startswith("error: ")
    plain = run_ortprov("plan", "--driver", "5x", env=base)
    assert plain.stderr.startswith("error: ")


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
