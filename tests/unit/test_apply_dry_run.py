"""`apply --dry-run` goes through the real run's checks and lists the real run's commands, and changes nothing
(issue 23): what the real run refuses, the dry run refuses with the same sentence; a venv still to be created
is planned as the empty venv it would be. None of these runs creates a venv or installs anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_ortprov

GPU_HOST = ("--driver", "580", "--gpu-cc", "9.0")
RUNS = [("--dry-run",), ("-y", "--no-verify")]


def _error(proc) -> str:  # noqa: ANN001
    return next(line for line in proc.stderr.splitlines() if line.startswith("error: "))


@pytest.mark.parametrize("run", RUNS, ids=["dry-run", "real"])
@pytest.mark.parametrize("folder", ["/etc", ".", "project"])
def test_a_folder_that_is_not_a_venv_is_refused_by_both(tmp_path: Path, run: tuple[str, ...], folder: str) -> None:
    if folder == "project":
        project = tmp_path / "project"
        project.mkdir()
        (project / "main.py").write_text("print('mine')\n")
        folder = str(project)
    before = sorted(p.name for p in Path(folder).iterdir())
    proc = run_ortprov("apply", "--venv", folder, *GPU_HOST, *run)
    assert proc.returncode == 2, proc.stderr
    assert "exists but is not a venv (no bin/python)" in _error(proc), proc.stderr
    assert sorted(p.name for p in Path(folder).iterdir()) == before


@pytest.mark.parametrize("run", RUNS, ids=["dry-run", "real"])
def test_python_path_beside_venv_is_refused_by_both(tmp_path: Path, run: tuple[str, ...]) -> None:
    import sys

    proc = run_ortprov("apply", "--venv", str(tmp_path / "new"), "--python", sys.executable, *GPU_HOST, *run)
    assert proc.returncode == 2, proc.stderr
    assert _error(proc) == "error: give either --python PATH or --venv DIR, not both"
    assert not (tmp_path / "new").exists()


def test_a_new_venv_gets_the_real_runs_commands_with_their_index_and_each_package_once(tmp_path: Path) -> None:
    """A CUDA 11 plan installs from two indexes (onnxruntime-gpu from its own, --no-deps; then its
    dependencies): both commands are listed as the real run runs them; the packages to install, once each.
    (1.21 asked for: a CUDA 11 build from PyPI, whose wheels were read, outranks the side feed's otherwise.)"""
    venv = tmp_path / "new"
    flags = ("--driver", "520", "--gpu-cc", "8.6", "--cuda", "11", "--ort", "1.21", "--python", "3.11")
    proc = run_ortprov("apply", "--venv", str(venv), *flags, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"dry run: would create the venv {venv} (Python 3.11), then apply to {venv}/bin/python")
    first = next(line for line in lines if line.startswith("  [1/3] "))
    assert (
        "--index-url https://aiinfra.pkgs.visualstudio.com/" in first and "--no-deps onnxruntime-gpu==1.21.1" in first
    )
    assert next(line for line in lines if line.startswith("  [2/3] ")).endswith("nvidia-curand-cu11==10.3.0.86")
    assert "  [3/3] ortprov: install the loader hook" in proc.stdout
    [would] = [line for line in lines if line.startswith("  would install: ")]
    assert would.count("onnxruntime-gpu==1.21.1") == 1, would
    assert lines[-1] == "nothing was changed (dry run)"
    assert not venv.exists()
    data = json.loads(run_ortprov("apply", "--venv", str(venv), *flags, "--dry-run", "--json").stdout)
    assert data["apply"]["outcome"] == "dry-run" and data["apply"]["create_venv"] == str(venv)
    assert [step["number"] for step in data["apply"]["steps"]] == [1, 2, 3]
    assert data["verdict"] == {"proven": "none", "unproven": "dry-run", "failure": None, "ok": True}


def test_a_wheelhouse_for_another_python_is_said_before_anything_runs(tmp_path: Path) -> None:
    """A wheelhouse filled for Python 3.12 (its onnxruntime-gpu wheel is cp312) cannot go into a 3.11 venv: the
    dry run warns as the real run would, from the wheels' own tags."""
    house = tmp_path / "wheels"
    house.mkdir()
    plan = run_ortprov("plan", *GPU_HOST, "--python", "3.12", "--platform", "linux-x86_64", "--json")
    assert plan.returncode == 0, plan.stderr
    (house / "plan.json").write_text(plan.stdout)
    version = json.loads(plan.stdout)["ort_version"]
    (house / f"onnxruntime_gpu-{version}-cp312-cp312-manylinux_2_27_x86_64.whl").write_bytes(b"")
    proc = run_ortprov("apply", "--venv", str(tmp_path / "new"), "--python", "3.11", "--wheelhouse", str(house),
                       "--dry-run")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (
        f"warning: the wheelhouse {house} holds onnxruntime-gpu only for cp312: it cannot go into the target's "
        "Python 3.11" in proc.stderr
    )
    assert "warning: the plan was made for Python 3.12, the target is Python 3.11" in proc.stderr
    assert "--no-index --find-links" in proc.stdout
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("version", ["3.99", "3.11.99"])
def test_a_python_this_machine_cannot_have_is_bad_input_and_leaves_no_venv(tmp_path: Path, version: str) -> None:
    """Issue 37: `apply --venv X --python 3.99` is the user's input, refused as such (exit 2, was 1), in one line
    of ours (not uv's hint about updating uv), and no half-made venv stays."""
    venv = tmp_path / "new"
    proc = run_ortprov("apply", "--venv", str(venv), "--python", version, *GPU_HOST, "-y", "--no-verify")
    assert proc.returncode == 2, proc.stderr
    assert (
        _error(proc) == f"error: no Python {version} to create the venv {venv} with: uv found none and can fetch none"
    )
    assert not venv.exists()


@pytest.mark.parametrize("version", ["3.99", "3.11.99"])
def test_a_dry_run_refuses_that_python_as_the_real_run_does(tmp_path: Path, version: str) -> None:
    """Issue 37: the dry run gave exit 3 (no wheel for Python 3.99) where the real run gives exit 2: both say it now."""
    venv = tmp_path / "new"
    proc = run_ortprov("apply", "--venv", str(venv), "--python", version, *GPU_HOST, "--dry-run")
    assert proc.returncode == 2, proc.stderr
    assert (
        _error(proc) == f"error: no Python {version} to create the venv {venv} with: uv found none and can fetch none"
    )
    assert not venv.exists()
