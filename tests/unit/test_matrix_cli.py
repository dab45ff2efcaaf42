"""`ortprov matrix check` and `ortprov matrix show`, run as the real CLI in a child process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from provisioner.matrix.load import shipped_dir
from tests.support.cli import run_ortprov

ROOT = Path(__file__).resolve().parents[2]
KEYS = {
    "ort_version",
    "cuda_version",
    "cudnn_version",
    "tensorrt_version",
    "index_url",
    "python",
    "platforms",
}


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def test_check_ok(cache: Path) -> None:
    result = run_ortprov("matrix", "check", cache=cache)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("matrix OK (shipped")
    assert "onnxruntime-gpu 1.11.0 .. 1.31.1" in result.stdout


def test_check_json(cache: Path) -> None:
    result = run_ortprov("matrix", "check", "--json", cache=cache)
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["valid"] is True and data["ort_newest"] == "1.31.1"


def test_check_reports_every_problem_and_exits_1(tmp_path: Path, cache: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(shipped_dir(), broken, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    text = (broken / "onnxruntime-gpu.yaml").read_text()
    (broken / "onnxruntime-gpu.yaml").write_text(text.replace("cuda_version: '12.8'", "cuda_version: '12.7'", 1))
    cuda = (broken / "cuda.yaml").read_text()
    (broken / "cuda.yaml").write_text(cuda.replace("- version: '11.0'", "- version: eleven", 1))
    result = run_ortprov("matrix", "check", "--dir", str(broken), cache=cache)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "error: the matrix is invalid (2 problems)" in result.stderr
    assert "cuda.yaml: releases[0] (eleven): version 'eleven' is not a CUDA minor" in result.stderr
    assert "has no CUDA release in cuda.yaml" in result.stderr and "Traceback" not in result.stderr
    as_json = json.loads(run_ortprov("matrix", "check", "--dir", str(broken), "--json", cache=cache).stdout)
    assert as_json["valid"] is False and len(as_json["problems"]) == 2


def test_check_bad_dir_is_bad_input(tmp_path: Path, cache: Path) -> None:
    result = run_ortprov("matrix", "check", "--dir", str(tmp_path / "nope"), cache=cache)
    assert result.returncode == 2 and result.stderr.startswith("error: --dir")


def test_show_json_one_object_per_build(cache: Path) -> None:
    result = run_ortprov("matrix", "show", "--json", "--ort", "1.20", cache=cache)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {r["ort_version"] for r in rows} == {"1.20.0", "1.20.2"}
    assert all(set(r) >= KEYS for r in rows)
    pypi = [r for r in rows if r["index_url"] is None]
    feed = [r for r in rows if r["index_url"] is not None]
    assert pypi and all(r["cuda_version"] == "12.2" and r["cudnn_version"] == "9" for r in pypi)
    assert feed and all(r["cuda_version"] == "11.8" and "onnxruntime-cuda-11" in r["index_url"] for r in feed)
    assert "linux-x86_64 (glibc 2.27+)" in pypi[0]["platforms"] and "3.13t" in pypi[0]["python"]


def test_show_table_filtered_by_cuda(cache: Path) -> None:
    result = run_ortprov("matrix", "show", "--cuda", "13", cache=cache)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["onnxruntime-gpu", "CUDA", "cuDNN", "TensorRT"]
    body = lines[2 : lines.index("")]
    assert body[0].startswith("1.31.1") and all(" 13.0 " in line for line in body)
    assert "\x1b[" not in result.stdout


def test_show_bad_filters_are_bad_input(cache: Path) -> None:
    for args in (("--ort", "one.two"), ("--cuda", "twelve")):
        result = run_ortprov("matrix", "show", *args, cache=cache)
        assert result.returncode == 2, args
        assert result.stderr.startswith("error: ") and "hint: " in result.stderr and "Traceback" not in result.stderr


PLAN_FLAGS = ("--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64")


@pytest.mark.parametrize("filters", [("--ort", "0.1"), ("--cuda", "99"), ("--ort", "1.16", "--cuda", "13")])
def test_a_filter_that_names_nothing_is_bad_input_as_for_plan(cache: Path, filters: tuple[str, ...]) -> None:
    """Drift fixed: `matrix show --cuda 99` exited 1 ("no build matches") where `plan --cuda 99` exits 2. Both
    now say the planner's sentence and exit 2; with --json, the error object (docs/json.md)."""
    shown = run_ortprov("matrix", "show", *filters, cache=cache)
    planned = run_ortprov("plan", *PLAN_FLAGS, *filters, cache=cache)
    assert shown.returncode == planned.returncode == 2, shown.stderr
    assert shown.stdout == "" and "Traceback" not in shown.stderr
    assert shown.stderr.splitlines()[:2] == planned.stderr.splitlines()[:2]  # error: ... and hint: ...
    as_json = run_ortprov("matrix", "show", *filters, "--json", cache=cache)
    error = json.loads(as_json.stdout)
    assert as_json.returncode == error["exit_code"] == 2
    assert f"error: {error['error']}" == shown.stderr.splitlines()[0]


@pytest.mark.parametrize("filters", [("--ort", "1"), ("--ort", "one.two"), ("--cuda", "twelve"), ("--cuda", "12.x")])
def test_the_filters_are_read_as_plan_reads_them(cache: Path, filters: tuple[str, ...]) -> None:
    """Drift fixed: `matrix show --ort 1` listed builds where `plan --ort 1` refused the version: --ort and --cuda
    are one declaration with one check (commands/options.py) for both commands."""
    shown = run_ortprov("matrix", "show", *filters, cache=cache)
    planned = run_ortprov("plan", *PLAN_FLAGS, *filters, cache=cache)
    assert shown.returncode == planned.returncode
    if planned.returncode:
        assert shown.stderr.splitlines()[0] == planned.stderr.splitlines()[0]


@pytest.mark.parametrize("spec", ["1", "1.20", "1.20.2", ">=1.27,<1.29", "~=1.22.0"])
def test_plan_and_matrix_show_accept_the_same_ort_specs(spec: str, cache: Path) -> None:
    """One `--ort` matcher (versions.ort_matcher): a bare major means its series, as a bare minor does
    (`matrix show --ort 1` listed builds while `plan --ort 1` exited 2)."""
    shown = run_ortprov("matrix", "show", "--ort", spec, "--json", cache=cache)
    planned = run_ortprov("plan", "--ort", spec, *PLAN_FLAGS, "--json", cache=cache)
    assert shown.returncode == 0, shown.stderr
    assert planned.returncode == 0, planned.stderr
    versions = [row["ort_version"] for row in json.loads(shown.stdout)]
    assert versions and json.loads(planned.stdout)["ort_version"] in versions


@pytest.mark.parametrize("spec", ["1.x", "~=1", ">=", "1.20; rm -rf /"])
def test_plan_and_matrix_show_refuse_the_same_ort_specs(spec: str, cache: Path) -> None:
    shown = run_ortprov("matrix", "show", "--ort", spec, cache=cache)
    planned = run_ortprov("plan", "--ort", spec, *PLAN_FLAGS, cache=cache)
    for result in (shown, planned):
        assert result.returncode == 2, result.stderr
        assert f"--ort {spec!r} is not a version" in result.stderr and "Traceback" not in result.stderr
