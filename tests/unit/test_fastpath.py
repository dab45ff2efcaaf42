"""The typer-free fast path of `ortprov plan` / `ortprov dockerfile` (provisioner/fastpath.py) against typer.

The typer declarations in commands/plan.py are the definition; these tests keep the fast path's table equal
to them, check that both parsers hand the command functions the same arguments, and that anything the fast
path does not fully understand is left to typer.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import typer
import typer.main

from provisioner import app as app_module
from provisioner import fastpath
from provisioner.commands import plan as plan_module
from provisioner.commands import plan_run

FUNCTIONS = {"plan": "plan_command", "dockerfile": "dockerfile_command"}
SIGNATURES = {name: inspect.signature(getattr(plan_run, function)) for name, function in FUNCTIONS.items()}


def _typer_command(name: str) -> Any:
    """The click command typer builds (click is vendored as typer._click from typer 0.26: duck-typed here)."""
    app = typer.Typer()
    plan_module.register(app)
    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(fastpath.OPTIONS))
def test_the_table_is_the_typer_declaration(name: str) -> None:
    declared: dict[str, tuple[str, str]] = {}
    for param in _typer_command(name).params:
        assert param.param_type_name == "option"
        assert param.envvar is None and not param.secondary_opts, f"the fast path reads no {param.name} envvar"
        assert type(param.type).__name__ in ("StringParamType", "BoolParamType"), f"{param.name}: not converted"
        kind = "flag" if param.is_flag else "repeated" if param.multiple else "value"
        declared |= {opt: (str(param.name), kind) for opt in param.opts}
    declared.pop("--help", None), declared.pop("-h", None)
    assert fastpath.OPTIONS[name] == declared


@pytest.mark.parametrize("name", sorted(fastpath.OPTIONS))
def test_the_typer_function_and_the_command_function_agree(name: str) -> None:
    """Same parameters, same defaults (the fast path relies on the command function's own defaults)."""
    typer_params = inspect.signature(getattr(plan_module, name)).parameters
    command_params = SIGNATURES[name].parameters
    assert list(typer_params) == list(command_params)
    for param in _typer_command(name).params:
        assert param.default == command_params[str(param.name)].default or (
            param.multiple and command_params[str(param.name)].default is None
        )


ARGUMENTS = [
    ["plan"],
    ["plan", "--json", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64"],
    ["plan", "--driver=535.104.05", "--gpu-cc=8.0,9.0", "--python=3.13t", "-f", "pip", "-v"],
    ["plan", "--host", "a.json", "--host", "b.json", "--ort", ">=1.18,<1.21", "--cuda", "12", "--tensorrt"],
    ["plan", "--format", "requirements", "--hashes", "--verbose", "--base", "cuda", "--cuda-libraries", "system"],
    ["plan", "--json", "--json", "-v", "--verbose", "--driver", ""],
    ["plan", "--python", "/opt/venv with space/bin/python", "--host=x=y.json", "--ort", " >=1.18 "],
    ["dockerfile", "--driver", "550", "--gpu-cc", "8.6", "--base", "cuda", "--host", "h.json"],
    ["dockerfile"],
]


def _recorder(name: str, calls: list[dict[str, Any]]) -> Callable[..., None]:
    signature = SIGNATURES[name]

    def record(**kwargs: Any) -> None:
        bound = signature.bind(**kwargs)
        bound.apply_defaults()
        calls.append(dict(bound.arguments))

    return record


@pytest.mark.parametrize("args", ARGUMENTS, ids=[" ".join(a) for a in ARGUMENTS])
def test_both_parsers_pass_the_same_arguments(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    via_typer: list[dict[str, Any]] = []
    via_fast: list[dict[str, Any]] = []
    monkeypatch.setattr(plan_run, FUNCTIONS[args[0]], _recorder(args[0], via_typer))
    with pytest.raises(SystemExit) as exited:
        app_module.run(list(args))
    assert exited.value.code in (0, None)
    monkeypatch.setattr(plan_run, FUNCTIONS[args[0]], _recorder(args[0], via_fast))
    assert fastpath.run(args) is True
    assert len(via_typer) == len(via_fast) == 1
    assert via_fast == via_typer


LEFT_TO_TYPER = [
    [],
    ["--help"],
    ["--version"],
    ["detect", "--json"],
    ["plan", "--help"],
    ["plan", "-h"],
    ["plan", "--bogus"],
    ["plan", "extra"],
    ["plan", "--driver"],
    ["plan", "--driver", "--json"],
    ["plan", "--driver", "580", "--driver", "550"],
    ["plan", "--json=yes"],
    ["plan", "-fjson"],
    ["plan", "-vf", "json"],
    ["plan", "--", "--json"],
    ["plan", "--form", "json"],
    ["dockerfile", "--json"],
    ["dockerfile", "-v"],
]


@pytest.mark.parametrize("args", LEFT_TO_TYPER, ids=[" ".join(a) or "(none)" for a in LEFT_TO_TYPER])
def test_anything_unusual_is_left_to_typer(args: list[str]) -> None:
    assert fastpath.parse(args) is None


def _ortprov(args: list[str], fast: bool) -> subprocess.CompletedProcess[str]:
    """The real entry point in a fresh process; `fast=False` turns the fast path off (the typer path)."""
    code = (
        "import sys\n"
        "from provisioner import cli, fastpath\n" + ("" if fast else "fastpath.run = lambda args: False\n") + "try:\n"
        "    cli.main(sys.argv[1:])\n"
        "finally:\n"
        "    sys.stderr.write('typer imported: %s\\n' % ('typer' in sys.modules))\n"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


END_TO_END = [
    ["plan", "--json", "--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64"],
    ["plan", "--driver", "535.104.05", "--gpu-cc", "8.6", "--python", "3.11", "--platform", "linux-x86_64", "-v"],
    ["plan", "--driver", "550", "--gpu-cc", "8.0", "--python", "3.12", "--platform", "windows-amd64", "-f", "pip"],
    ["dockerfile", "--driver", "550", "--gpu-cc", "8.6", "--python", "3.12", "--platform", "linux-x86_64"],
    ["plan", "--json", "--driver", "300", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64"],
    ["plan", "--driver", "300", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64"],
    ["plan", "--driver", "abc", "--gpu-cc", "9.0"],
    ["plan", "--json", "--format", "pip", "--driver", "580", "--gpu-cc", "9.0"],
    ["plan", "--host", "/nonexistent/host.json"],
    ["plan", "--json"],  # this machine, probed
]


@pytest.mark.parametrize("args", END_TO_END, ids=[" ".join(a) for a in END_TO_END])
def test_the_fast_path_prints_what_typer_prints(args: list[str]) -> None:
    fast, slow = _ortprov(args, fast=True), _ortprov(args, fast=False)
    assert fast.stderr.endswith("typer imported: False\n") and slow.stderr.endswith("typer imported: True\n")
    assert (fast.returncode, fast.stdout) == (slow.returncode, slow.stdout)
    assert fast.stderr.replace("False", "True") == slow.stderr
    if "--json" in args and fast.returncode in (0, 3):
        json.loads(fast.stdout)


def test_help_and_errors_still_come_from_typer() -> None:
    result = _ortprov(["plan", "--driver", "580", "--bogus"], fast=True)
    assert result.returncode == 2 and "No such option" in result.stderr and "--bogus" in result.stderr
    assert result.stderr.endswith("typer imported: True\n")
    result = _ortprov(["plan", "--help"], fast=True)
    assert result.returncode == 0 and "Examples:" in result.stdout


def test_a_closed_pipe_is_a_quiet_exit() -> None:
    """`ortprov plan -v | head -1`: no BrokenPipeError traceback from the fast path."""
    shell = (
        f"{sys.executable} -m provisioner plan --driver 300 --gpu-cc 9.0 --python 3.12 "
        "--platform linux-x86_64 --format text -v 2>&1 >/dev/null | head -c0; "
        f"{sys.executable} -m provisioner dockerfile --driver 580 --gpu-cc 9.0 --python 3.12 "
        "--platform linux-x86_64 | head -1"
    )
    result = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr
    assert result.stdout.startswith("#") or result.stdout.startswith("FROM") or result.stdout.startswith("ARG")
