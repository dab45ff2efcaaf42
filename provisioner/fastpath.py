"""`ortprov plan` and `ortprov dockerfile` without importing typer, for well-formed arguments.

Importing typer (and the click it vendors) takes ~0.1 s, more than the planning itself, and build pipelines
run `ortprov plan --json` and `ortprov dockerfile` on every build. `parse` reads the arguments with the table
below and nothing else: long options as `--name VALUE` or `--name=VALUE`, the short `-f VALUE` and `-v`.
For anything it does not fully understand (--help, an unknown or repeated option, a value that looks like an
option, a positional argument) it returns None, and the typer app parses the same arguments and gives its
own help or error. commands/plan.py stays the definition of the options: tests/unit/test_fastpath.py keeps
this table equal to it and checks that both parsers pass the commands the same arguments.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

    Kind = Literal["flag", "value", "repeated"]

_PLANNING: dict[str, tuple[str, Kind]] = {
    "--host": ("host", "repeated"),
    "--driver": ("driver", "value"),
    "--gpu-cc": ("gpu_cc", "value"),
    "--python": ("python", "value"),
    "--platform": ("platform", "value"),
    "--ort": ("ort", "value"),
    "--cuda": ("cuda", "value"),
    "--tensorrt": ("tensorrt", "flag"),
    "--cuda-libraries": ("cuda_libraries", "value"),
}

# command -> option string -> (the command function's parameter, kind)
OPTIONS: dict[str, dict[str, tuple[str, Kind]]] = {
    "plan": {
        **_PLANNING,
        "--no-loader-hook": ("no_loader_hook", "flag"),
        "--format": ("fmt", "value"),
        "-f": ("fmt", "value"),
        "--json": ("json_output", "flag"),
        "--hashes": ("hashes", "flag"),
        "--base": ("base", "value"),
        "-v": ("verbose", "flag"),
        "--verbose": ("verbose", "flag"),
    },
    "dockerfile": {**_PLANNING, "--base": ("base", "value")},
}


def parse(args: Sequence[str]) -> tuple[str, dict[str, object]] | None:
    """(command, keyword arguments) for well-formed `plan` / `dockerfile` arguments; None: leave it to typer."""
    if not args or args[0] not in OPTIONS:
        return None
    table = OPTIONS[args[0]]
    kwargs: dict[str, object] = {}
    position = 1
    while position < len(args):
        token = args[position]
        position += 1
        name, equals, attached = token.partition("=") if token.startswith("--") else (token, "", "")
        if name not in table:
            return None
        parameter, kind = table[name]
        if kind == "flag":
            if equals:
                return None
            kwargs[parameter] = True
            continue
        if equals:
            value = attached
        elif position < len(args) and not args[position].startswith("-"):
            value = args[position]
            position += 1
        else:
            return None
        if kind == "repeated":
            values = kwargs.setdefault(parameter, [])
            assert isinstance(values, list)
            values.append(value)
        elif parameter in kwargs:
            return None
        else:
            kwargs[parameter] = value
    return args[0], kwargs


def run(args: Sequence[str]) -> bool:
    """Run the command when `parse` understands the arguments; False: nothing was done."""
    parsed = parse(args)
    if parsed is None:
        return False
    command, kwargs = parsed
    from provisioner.commands import plan_run

    function = plan_run.plan_command if command == "plan" else plan_run.dockerfile_command
    function(**kwargs)  # type: ignore[arg-type]
    return True
