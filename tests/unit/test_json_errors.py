"""With --json, every command prints one JSON error object on stdout when it fails (docs/json.md): the error
line's sentence, its hint, the exit code; the same error line and hint go to stderr. Before, detect, verify,
doctor and matrix check printed nothing on stdout."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pytest

from provisioner.commands.checks import OneOf
from provisioner.matrix.load import shipped_dir
from tests.support.cli import run_ortprov
from tests.unit.test_options import COMMANDS, _declared

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


# -- every option check, walked: with --json, whatever refuses a value is one JSON document on stdout ---------

# what a command needs besides the value under test, so that the refusal is that value's
NEEDS = {"tune": ["{tmp}/model.onnx"], "download": ["--dest", "{tmp}/wheels"]}
# options that exclude each other, refused after the values are read (the planning flags: in each planning command)
EXCLUSIVE_PLANNING = [
    ["--tensorrt-index-url", "https://mirror.example/simple/", "--tensorrt-libraries", "system"],
    ["--host", "tests/hosts/h100-driver580.json", "--python", "/usr/bin/python3"],
]


def _bad_values(name: str) -> list[tuple[list[str], str]]:
    """(arguments, a word the error must name) for each kind of bad value `name` takes: options that exclude each
    other, a choice not offered, a number that is no number, a number out of range."""
    params = {str(p.name) for p in COMMANDS[name].params}
    cases: list[tuple[list[str], str]] = [(["-q", "-v"], "-q and -v")]
    if "fmt" in params:
        cases.append((["--format", "pip"], "--format pip"))
    if "tensorrt_index_url" in params:
        cases += [(args, args[0]) for args in EXCLUSIVE_PLANNING]
    for param in sorted(params - {"help"}):
        if param.endswith("__old_spelling"):
            continue
        declared = _declared(param)
        flag = max(declared.flags, key=len) if declared.flags else None
        if flag is None:
            continue
        if isinstance(declared.check, OneOf):
            cases.append(([flag, "xyz"], "'xyz'"))
        elif declared.annotation in (int, float, int | None, float | None):
            cases += [([flag, "abc"], "'abc'"), ([flag, "-5"], flag)]
    return cases


def _with_json() -> list[str]:
    return sorted(name for name, built in COMMANDS.items() if any("--json" in p.opts for p in built.params))


def test_the_walk_meets_every_kind_of_bad_value() -> None:
    walked = [args for name in _with_json() for args, _ in _bad_values(name)]
    assert ["--format", "pip"] in walked and ["--format", "xyz"] in walked  # the two that escaped before
    assert {"abc", "-5", "xyz", "system"} <= {args[-1] for args in walked}


@pytest.mark.parametrize("name", _with_json())
def test_every_bad_value_of_every_command_is_one_json_error_with_json(name: str, tmp_path: Path) -> None:
    """--json and a bad value of each kind (options that exclude each other, a choice not offered, a number that is
    none or is out of range), in every command that has --json: exit 2, the error as one JSON document on stdout
    naming what was wrong, the same line on stderr. `--format json` asks for JSON too (plan)."""
    cases = _bad_values(name)
    (tmp_path / "model.onnx").write_bytes(b"")
    needs = [arg.format(tmp=tmp_path) for arg in NEEDS.get(name, [])]
    asked = [["--json"], ["--format", "json"]] if name == "plan" else [["--json"]]
    for args, named in cases:
        for json_flag in asked:
            if json_flag[0] == "--format" and args[0] == "--format":
                continue
            result = run_ortprov(*name.split(), *needs, *json_flag, *args)
            assert result.returncode == 2, (args, result.stderr)
            error = json.loads(result.stdout)  # one document, nothing else
            assert set(error) >= KEYS and error["exit_code"] == 2, args
            assert named in error["error"], (args, error)
            assert result.stderr.startswith(f"error: {error['error']}\n"), args


@pytest.mark.parametrize("asked", [["--format", "json"], ["--format=json"], ["-f", "json"], ["-fjson"]])
def test_a_usage_error_is_json_for_every_spelling_of_format_json(asked: list[str]) -> None:
    result = run_ortprov("plan", *asked, "--zzz")
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"] == "No such option: --zzz"


def test_json_after_the_end_of_the_options_is_an_argument_not_a_request() -> None:
    result = run_ortprov("plan", "--zzz", "--", "--json")
    assert (result.returncode, result.stdout) == (2, "")
