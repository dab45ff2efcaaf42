"""The `ortprov` command line: the typer app, its command table, and the entry point.

Each command lives in provisioner/commands/<module>.py, takes its options from the declarations in
commands/options.py and returns a result object that provisioner/render/output.py prints. Like pip's
`commands_dict`, COMMANDS names each command's module and summary, so that a run imports and builds only the
command it invokes, and `ortprov --help` lists the summaries without importing any command module (a test
keeps the summaries equal to the commands' help).
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from provisioner import __version__

# command -> (module under provisioner.commands, summary: the first line of the command's own help)
COMMANDS: dict[str, tuple[str, str]] = {
    "detect": ("detect", "Show the NVIDIA driver, GPUs, platform, Python, onnxruntime, torch and CUDA libraries here."),
    "plan": ("plan", "Pick the onnxruntime-gpu build for a host and say why; print it as text, JSON or a recipe."),
    "dockerfile": ("plan", "Print a Dockerfile for the planned build (same as `ortprov plan --format dockerfile`)."),
    "apply": ("apply", "Install the planned onnxruntime-gpu build, all or nothing, then prove it with verify."),
    "download": (
        "apply",
        "Download every wheel a plan installs into a folder (a wheelhouse), for any Python and platform.",
    ),
    "verify": ("verify", "Prove that onnxruntime really runs on the GPU in the target interpreter."),
    "doctor": (
        "doctor",
        "Why is my GPU not used? Detect the host, plan, verify a real session, and list the findings.",
    ),
    "tune": (
        "tune",
        "Measure MODEL on the CPU and on CUDA with provider-option variants; say why the GPU wins or not.",
    ),
    "matrix": ("matrix", "The compatibility matrix: onnxruntime-gpu builds, CUDA releases, NVIDIA wheels, TensorRT."),
}

# what a usage error's hint names: the commands, and `matrix`'s subcommands
COMMANDS_AND_GROUPS = {*COMMANDS, "check", "show", "update"}

HELP = """Make onnxruntime-gpu really use the GPU: detect the host, plan the right build, install it, prove it.

Examples:

\b
  ortprov detect                      # what this machine has
  ortprov plan                        # the onnxruntime-gpu build for it
  ortprov plan --driver 535.104 --gpu-cc 8.0 --format dockerfile
  ortprov apply --venv .venv          # install it, then prove it
  ortprov doctor                      # why is my GPU not used?

Exit codes: 0 ok, 1 problems found, 2 bad input, 3 no compatible plan."""


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"ortprov {__version__}")
        raise typer.Exit()


# The shells ortprov completes in (typer's scripts); `--show-completion SHELL` prints that shell's script,
# `--install-completion SHELL` installs it; no SHELL: the shell running ortprov, when it is one of these.
SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
COMPLETE_VAR = "_ORTPROV_COMPLETE"
_DETECT = "detect"  # the value of a completion option given without a shell


def _completion_shell(flag: str, value: str) -> str:
    """The shell a completion option names (or, without one, the shell running ortprov); BadInput for any
    other, before anything is written."""
    from provisioner.errors import BadInput

    shell = value.strip().lower() if value != _DETECT else _current_shell()
    if shell in SHELLS:
        return shell
    said = f"{flag} {value!r}" if value != _DETECT else f"{flag}: the shell running ortprov ({shell or 'unknown'})"
    raise BadInput(f"{said} is not a shell ortprov completes in", hint=f"name one: {flag} {'|'.join(SHELLS[:-1])}")


def _shell_names(incomplete: str) -> list[str]:
    """The shells a completion option's value can complete to."""
    return [shell for shell in SHELLS if shell.startswith(incomplete)]


def _current_shell() -> str:
    """The name of the shell running ortprov (shellingham, as typer asks; else $SHELL), or ""."""
    try:
        import shellingham  # type: ignore[import-untyped,unused-ignore]

        return str(shellingham.detect_shell()[0]).lower()
    except Exception:  # noqa: BLE001 - not installed, or no shell found: $SHELL says it, or nothing does
        return os.path.basename(os.environ.get("SHELL", "")).lower()


def _show_completion(value: str | None) -> None:
    if value is None:
        return
    from typer._completion_shared import get_completion_script

    shell = _completion_shell("--show-completion", value)
    typer.echo(get_completion_script(prog_name="ortprov", complete_var=COMPLETE_VAR, shell=shell))
    raise typer.Exit()


def _install_completion(value: str | None) -> None:
    if value is None:
        return
    from typer._completion_shared import install

    shell = _completion_shell("--install-completion", value)
    shell, path = install(shell=shell, prog_name="ortprov", complete_var=COMPLETE_VAR)
    typer.echo(f"{shell} completion installed in {path}; it takes effect in a new shell")
    raise typer.Exit()


def make_app(args: list[str]) -> typer.Typer:
    """The typer app for these arguments: the invoked command registered for real; for anything else (--help,
    --version, a typo) every command as a summary only, so the listing needs no command module."""
    app = typer.Typer(
        name="ortprov",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,  # ours below: a shell named is the shell served, an unknown one refused
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", callback=_version_callback, is_eager=True, help="Show the version."
        ),
        install_completion: str | None = typer.Option(
            None,
            "--install-completion",
            callback=_install_completion,
            is_eager=True,
            metavar="[SHELL]",
            help=f"Install completion for SHELL ({', '.join(SHELLS[:-1])}; default: this shell).",
            autocompletion=_shell_names,
        ),
        show_completion: str | None = typer.Option(
            None,
            "--show-completion",
            callback=_show_completion,
            is_eager=True,
            metavar="[SHELL]",
            help="Print the completion script for SHELL (default: this shell), to install it by hand.",
            autocompletion=_shell_names,
        ),
    ) -> None:
        """ortprov."""

    invoked = next((arg for arg in args if not arg.startswith("-")), None)
    if invoked in COMMANDS:
        importlib.import_module(f"provisioner.commands.{COMMANDS[invoked][0]}").register(app)
    else:
        for name, (_, summary) in COMMANDS.items():
            app.command(name, help=summary, add_help_option=False)(_summary_only)
    return app


def _summary_only() -> None:
    """Stands for a command in the top-level listing; never runs (an invoked command is registered for real)."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point: parse the arguments with typer and run the command, which prints its result. Whatever
    ends the run early ends it in one `error:` line, never a traceback, with the exit code that
    commands/exits.py (the one place) gives it: a usage error of the parser, a closed or full stdout, an
    interrupt, a bug; a reader that went away (`ortprov plan | head -1`) ends it quietly."""
    args = sys.argv[1:] if argv is None else argv
    try:
        from provisioner.render import output

        output.prepare_streams()
        args = _shell_by_default(args)
        code = make_app(args or _completed_words())(args=args, prog_name="ortprov", standalone_mode=False)
        if output.stdout_is_broken():  # a write failed and a library swallowed it (click's help, ...)
            raise output.stdout_failed(OSError("a write failed"))
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - the one path from an exception to an exit code
        from provisioner.commands.exits import exit_code
        from provisioner.commands.options import asks_for_json

        as_json = asks_for_json(args)
        sys.exit(exit_code(exc, as_json=as_json, commands=COMMANDS_AND_GROUPS, args=args))
    sys.exit(code if isinstance(code, int) else 0)


def _shell_by_default(args: list[str]) -> list[str]:
    """`--show-completion` / `--install-completion` without a SHELL after it: this shell (typer's options take a
    value or none, not either; the value `detect` stands for "this shell")."""
    found = list(args)
    for index, arg in enumerate(args):
        if arg in ("--show-completion", "--install-completion") and (
            index + 1 == len(args) or args[index + 1].startswith("-")
        ):
            found.insert(index + 1, _DETECT)
            break
    return found


def _completed_words() -> list[str]:
    """While the shell asks for completions (`ortprov --install-completion`), the words typed so far (bash:
    COMP_WORDS, zsh/fish/powershell: _TYPER_COMPLETE_ARGS), less `ortprov`: make_app then registers the command
    being typed, so that its options complete too."""
    if not os.environ.get(COMPLETE_VAR):
        return []
    from typer._completion_classes import completion_init

    completion_init()  # typer's zsh, fish and PowerShell protocols (bash's is click's)
    words = os.environ.get("COMP_WORDS") or os.environ.get("_TYPER_COMPLETE_ARGS") or ""
    return words.split()[1:]
