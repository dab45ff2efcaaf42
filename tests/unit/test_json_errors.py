"""With --json, every command prints one JSON error object on stdout when it fails (docs/json.md): the error
line's sentence, its hint, the exit code; the same error line and hint go to stderr. Before, detect, verify,
doctor and matrix check printed nothing on stdout."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pytest

from provisioner.matrix.load import shipped_dir
from tests.support.cli import run_ortprov
from tests.unit.test_options import COMMANDS

if TYPE_CHECKING:
    from pathlib import Path

KEYS = {"error", "hint", "exit_code", "rejected"}


def _broken_matrix(tmp_path: Path) -> Path:
    broken = tmp_path / "broken"
    shutil.copytree(shipped_dir(), broken, ignore=shutil.ignore_patterns("*.py", "__pycache__", "*.json"))
    cuda = (broken / "cuda.yaml").read_text()
    (broken / "cuda.yaml").write_text(cuda.replace("- version: '11.0'", "- version: eleven", 1))
    return broken


# command -> arguments that fail, and the exit code
FAILING = {
    "detect": (["--python", "/nonexistent/python"], 2),
    "plan": (["--driver", "5x.1", "--gpu-cc", "8.6"], 2),
    "apply": (["--plan", "/nonexistent/plan.json", "--venv", "{tmp}/venv"], 2),
    "download": (["--dest", "{tmp}/wheels", "--plan", "/nonexistent/plan.json"], 2),
    "verify": (["--timeout", "0"], 2),
    "doctor": (["--log", "/nonexistent.log"], 2),
    "tune": (["/nonexistent/model.onnx"], 2),
    "matrix check": (["--dir", "{broken}"], 1),
    "matrix show": (["--cuda", "99"], 2),
    "matrix update": (["--index-url", "ftp://mirror.example/simple/"], 2),
}


def test_every_command_with_json_is_checked_here() -> None:
    with_json = {name for name, built in COMMANDS.items() if any("--json" in p.opts for p in built.params)}
    assert with_json == set(FAILING)


@pytest.mark.parametrize("name", sorted(FAILING))
def test_the_error_is_a_json_object_on_stdout_and_a_line_on_stderr(name: str, tmp_path: Path) -> None:
    args, code = FAILING[name]
    broken = _broken_matrix(tmp_path) if name == "matrix check" else tmp_path
    args = [arg.format(tmp=tmp_path, broken=broken) for arg in args]
    result = run_ortprov(*name.split(), *args, "--json")
    assert result.returncode == code, result.stderr
    error = json.loads(result.stdout)  # one object, nothing else
    assert set(error) >= KEYS and error["exit_code"] == code and error["rejected"] == []
    assert result.stderr.startswith(f"error: {error['error']}\n") and "Traceback" not in result.stderr
    if error["hint"]:
        assert f"hint: {error['hint']}\n" in result.stderr
    text = run_ortprov(*name.split(), *args)  # without --json: the same error, nothing on stdout
    assert (text.returncode, text.stdout, text.stderr) == (code, "", result.stderr)
    assert list(tmp_path.iterdir()) == ([broken] if name == "matrix check" else [])  # refused before touching


def test_an_invalid_matrix_keeps_its_valid_and_problems_keys(tmp_path: Path) -> None:
    result = run_ortprov("matrix", "check", "--dir", str(_broken_matrix(tmp_path)), "--json")
    data = json.loads(result.stdout)
    assert data["valid"] is False and len(data["problems"]) == 1
    assert data["problems"][0].startswith("cuda.yaml: releases[0] (eleven): version 'eleven' is not a CUDA minor")
    assert data["error"].startswith("the matrix is invalid (1 problem):")


def test_a_failed_plan_lists_the_rejected_candidates() -> None:
    result = run_ortprov("plan", "--json", "--driver", "418.87.01", "--gpu-cc", "8.6", "--python", "3.12")
    error = json.loads(result.stdout)
    assert result.returncode == error["exit_code"] == 3 and error["rejected"]
    assert all(set(item) == {"candidate", "reason"} for item in error["rejected"])


def test_usage_errors_of_the_parser_are_error_objects_too() -> None:
    """An unknown option is the parser's usage error: exit 2, one `error:` line and a hint naming the help (not
    click's usage block), and with --json the same error object as any other error (docs/json.md)."""
    result = run_ortprov("detect", "--json", "--zzz")
    assert result.returncode == 2
    assert result.stderr == "error: No such option: --zzz\nhint: `ortprov detect --help` lists its options\n"
    assert json.loads(result.stdout) == {
        "error": "No such option: --zzz",
        "hint": "`ortprov detect --help` lists its options",
        "exit_code": 2,
        "rejected": [],
    }
    plain = run_ortprov("detect", "--zzz")
    assert (plain.returncode, plain.stdout, plain.stderr) == (2, "", result.stderr)
    typo = run_ortprov("plna")
    assert typo.returncode == 2 and typo.stderr.splitlines() == [
        "error: No such command 'plna'. Did you mean 'plan'?",
        "hint: `ortprov --help` lists the commands",
    ]
