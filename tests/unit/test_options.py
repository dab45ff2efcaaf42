"""Every option is declared once (provisioner/commands/options.py) and every command reads it from there: the
options typer builds are the declarations, one flag means one thing across commands, and the planning flags are
one typed PlanningOptions, checked in one function."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import pytest
import typer
import typer.main

from provisioner import cli
from provisioner.commands import options
from provisioner.commands.options import PLANNING, PLANNING_FLAGS, PlanningOptions, command, planning_options
from provisioner.errors import BadInput
from tests.support.cli import run_ortprov

PLANNING_COMMANDS = ("plan", "dockerfile", "apply", "download")
CHILD_COMMANDS = ("detect", "verify", "doctor", "apply")  # they wait on a child process of the target Python


def _click_commands() -> dict[str, Any]:
    """`name` or `matrix sub` -> the click command typer builds (click is vendored by typer >= 0.26: duck-typed)."""
    found = {}
    for name, (module, _) in cli.COMMANDS.items():
        app = typer.Typer()
        app.callback()(lambda: None)  # a group, even for a module of one command
        importlib.import_module(f"provisioner.commands.{module}").register(app)
        group = typer.main.get_command(app)
        for command_name, built in group.commands.items():  # type: ignore[attr-defined]
            if command_name != name:
                continue
            if hasattr(built, "commands"):
                found.update({f"{name} {sub}": cmd for sub, cmd in built.commands.items()})
            else:
                found[name] = built
    return found


COMMANDS = _click_commands()


def _declared(param_name: str) -> options.Declared:
    if param_name.endswith("__old_spelling"):
        param_name = param_name.removesuffix("__old_spelling")
    return PLANNING.get(param_name) or options.OPTIONS[param_name]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_typer_builds_each_option_from_its_declaration(name: str) -> None:
    for param in COMMANDS[name].params:
        if param.name == "help":
            continue
        declared = _declared(str(param.name))
        if str(param.name).endswith("__old_spelling"):
            assert param.hidden and tuple(param.opts) == declared.old_flags
            continue
        if declared.argument:  # a positional argument: no flags, named by its placeholder
            assert param.param_type_name == "argument" and param.metavar == declared.metavar, param.name
            continue
        assert tuple(param.opts) == declared.flags and not param.secondary_opts, param.name
        assert (param.help, param.metavar) == (declared.help, declared.metavar), param.name
        assert param.default == (None if declared.default is ... else declared.default) or param.multiple


def test_one_flag_means_one_thing_in_every_command() -> None:
    """The same placeholder for a flag everywhere; --python alone differs where it plans (a version or a path)."""
    metavars: dict[str, set[str | None]] = {}
    for built in COMMANDS.values():
        for param in built.params:
            for flag in param.opts:
                metavars.setdefault(flag, set()).add(param.metavar)
    assert metavars.pop("--python") == {"X.Y|PATH", "PATH"}
    assert {flag: found for flag, found in metavars.items() if len(found) > 1} == {}
    seconds = [d for d in [*options.OPTIONS.values()] if d.annotation is float]
    assert seconds and all(d.metavar == "SECONDS" and d.flags in (("--timeout",), ("--budget",)) for d in seconds)


@pytest.mark.parametrize("name", CHILD_COMMANDS)
def test_every_wait_on_a_child_is_timeout_seconds(name: str) -> None:
    [timeout] = [p for p in COMMANDS[name].params if "--timeout" in p.opts]
    assert timeout.metavar == "SECONDS"


@pytest.mark.parametrize("name", PLANNING_COMMANDS)
def test_every_planning_command_takes_every_planning_option(name: str) -> None:
    names = [str(p.name) for p in COMMANDS[name].params]
    assert [n for n in names if n in PLANNING] == list(PLANNING)


def test_the_saved_plan_rule_names_the_declared_flags() -> None:
    assert set(PLANNING_FLAGS.values()) == {
        "--host", "--driver", "--gpu-cc", "--python X.Y", "--python PATH", "--platform", "--ort", "--cuda",
        "--tensorrt", "--provider", "--cuda-libraries", "--no-loader-hook", "--tensorrt-libraries",
        "--tensorrt-index-url",
    }  # fmt: skip
    assert {field for d in PLANNING.values() for field in d.sets} == set(PLANNING_FLAGS)


def test_planning_options_checks_and_types_the_flags() -> None:
    given = planning_options(host=["a.json"], python="3.13t", ort=" 1.20 ", cuda="12 ", no_loader_hook=True)
    assert given == PlanningOptions(
        host_files=("a.json",), python_version="3.13t", ort="1.20", cuda="12", loader_hook=False
    )
    assert planning_options(python="/opt/venv/bin/python").target_python == "/opt/venv/bin/python"
    for bad, words in (
        ({"driver": "5x.1"}, "is not an NVIDIA driver version"),
        ({"driver": "12.2"}, "looks like a CUDA version"),
        ({"gpu_cc": "86"}, "is not a compute capability"),
        ({"python": "2.7"}, "wheels only for Python 3"),
        ({"python": "3.x"}, "is not a Python version"),
        ({"platform": "linux-arm"}, "unknown platform"),
        ({"ort": "1.20; rm -rf /"}, "is not a version or specifier"),
        ({"cuda": "12.x"}, "is not a CUDA version"),
        ({"cuda_libraries": "conda"}, "is not a library source"),
        ({"host": ["a.json"], "python": "/usr/bin/python3"}, "cannot be combined with --host"),
    ):
        with pytest.raises(BadInput, match=words.replace("(", r"\(")):
            planning_options(**bad)


def test_an_undeclared_parameter_is_refused_when_the_command_is_built() -> None:
    def made_up(colour: str) -> Any:
        raise AssertionError("never runs")

    with pytest.raises(TypeError, match="'colour' is not declared"):
        command(made_up)


def test_the_declarations_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PLANNING["driver"].help = "changed"  # type: ignore[misc]


def test_apply_reads_its_old_timeout_spelling_without_showing_it() -> None:
    shown = run_ortprov("apply", "--help")
    assert "--timeout SECONDS" in shown.stdout and "--verify-timeout" not in shown.stdout
    old = run_ortprov("apply", "--verify-timeout", "0", "--dry-run")
    assert old.returncode == 2 and old.stderr.startswith("error: --timeout must be positive, got 0.0")
