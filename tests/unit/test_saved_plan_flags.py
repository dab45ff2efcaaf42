"""A flag beside a saved plan is honoured or refused by one rule: every planning flag (options.PLANNING_FLAGS)
is refused, except those the command reads as something else (apply: --python names the target; download:
--python X.Y and --platform pick the wheels). The refusal is one line, exit 2, before anything is touched."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING

import pytest

from provisioner.commands.apply import APPLY_TARGET, DOWNLOAD_WHEELS
from provisioner.commands.options import (
    PLANNING_FLAGS,
    PlanningOptions,
    planning_flags_given,
    planning_options,
    refuse_beside_saved_plan,
)
from provisioner.errors import BadInput
from provisioner.plan import Plan, Step
from tests.support.cli import run_ortprov

if TYPE_CHECKING:
    from pathlib import Path

EVERY_FLAG = planning_options(
    host=["gpu.json"], driver="580", gpu_cc="9.0", python="3.12", platform="linux-x86_64", ort="1.20", cuda="12",
    tensorrt=True, cuda_libraries="system",
)  # fmt: skip


def test_every_planning_input_has_its_flag() -> None:
    inputs = {field.name for field in dataclasses.fields(PlanningOptions)} - {"prefer_existing_libraries"}
    assert set(PLANNING_FLAGS) == inputs


def test_the_flags_given_are_named_and_the_honoured_ones_left_out() -> None:
    assert planning_flags_given(PlanningOptions()) == []
    assert planning_flags_given(EVERY_FLAG, APPLY_TARGET) == [
        "--host", "--driver", "--gpu-cc", "--platform", "--ort", "--cuda", "--tensorrt", "--cuda-libraries",
    ]  # fmt: skip
    assert "--platform" not in planning_flags_given(EVERY_FLAG, DOWNLOAD_WHEELS)
    path = planning_options(python="/opt/venv/bin/python")
    assert planning_flags_given(path) == ["--python PATH"] and planning_flags_given(path, APPLY_TARGET) == []
    # given as its default value, a flag is still given: it is refused, not silently ignored
    wheels = planning_options(cuda_libraries="wheels")
    assert planning_flags_given(wheels) == ["--cuda-libraries"]


def test_the_refusal_is_one_line_naming_the_flags() -> None:
    with pytest.raises(BadInput) as refused:
        refuse_beside_saved_plan(planning_options(cuda="12", tensorrt=True), "--plan p.json")
    assert refused.value.message == "--plan p.json already says what to install: --cuda and --tensorrt cannot change it"
    assert refused.value.hint and refused.value.hint.startswith("drop --cuda and --tensorrt, or make a new plan")
    assert refused.value.exit_code == 2
    refuse_beside_saved_plan(planning_options(python="3.12"), "x", APPLY_TARGET)


# -- the real CLI ---------------------------------------------------------------------------------------------


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    plan = Plan("1.31.1", "onnxruntime-gpu", "13.0", "9", steps=(Step("install", ("onnxruntime-gpu==1.31.1",)),))
    path = tmp_path / "plan.json"
    path.write_text(plan.to_json())
    return path


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--cuda-libraries", "system"], "--cuda-libraries"),  # was silently ignored
        (["--cuda", "12"], "--cuda"),
        (["--cuda-libraries", "wheels", "--tensorrt"], "--tensorrt and --cuda-libraries"),
        (["--host", "gpu.json", "--driver", "580"], "--host and --driver"),
    ],
)
def test_apply_refuses_a_planning_flag_beside_plan_before_touching_anything(
    tmp_path: Path, plan_file: Path, flags: list[str], named: str
) -> None:
    venv = tmp_path / "venv"
    proc = run_ortprov("apply", "--plan", str(plan_file), "--venv", str(venv), "-y", *flags)
    assert proc.returncode == 2, proc.stderr
    assert (
        proc.stderr.splitlines()[0]
        == f"error: --plan {plan_file} already says what to install: {named} cannot change it"
    )
    assert len(proc.stderr.splitlines()) == 2 and "Traceback" not in proc.stderr
    assert not venv.exists()  # refused before the venv was created


def test_the_refusal_with_json_is_also_json(tmp_path: Path, plan_file: Path) -> None:
    proc = run_ortprov("apply", "--plan", str(plan_file), "--venv", str(tmp_path / "v"), "--cuda", "12", "--json")
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"].endswith("--cuda cannot change it")


def test_download_refuses_the_same_flags(tmp_path: Path, plan_file: Path) -> None:
    proc = run_ortprov(
        "download", "--dest", str(tmp_path / "w"), "--plan", str(plan_file), "--cuda-libraries", "system"
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0].endswith("already says what to install: --cuda-libraries cannot change it")
    assert not (tmp_path / "w").exists()
    # --python X.Y and --platform beside --plan: tests/integration/test_apply.py downloads with them


def test_apply_honours_the_target_python_beside_plan(tmp_path: Path, plan_file: Path) -> None:
    venv = tmp_path / "venv"
    proc = run_ortprov("apply", "--plan", str(plan_file), "--venv", str(venv), "--python", "3.11", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert f"dry run: would create the venv {venv} (Python 3.11), then apply to {venv}/bin/python" in proc.stdout
    assert "would install: onnxruntime-gpu==1.31.1" in proc.stdout
    assert not venv.exists()
