"""The real `ortprov plan` / `ortprov dockerfile` CLI in a child process: exit codes, the JSON contract,
one-line errors for bad input, host files and flags, and the probe of this machine.

The matrix is the test fixture written as YAML into a private ORTPROV_CACHE_DIR (dated far ahead so it
wins over the shipped data), so expectations do not move when the shipped matrix is refreshed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import run_ortprov
from tests.unit.matrix_fixtures import host, write_matrix_dir

if TYPE_CHECKING:
    import subprocess

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "hosts"
H100 = ["--driver", "580.65.06", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64"]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    write_matrix_dir(cache / "matrices", date="2099-12-31")
    return cache


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int, words: str) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and words in lines[0], result.stderr
    assert all(line.startswith("hint: ") for line in lines[1:]), result.stderr


def test_plan_json_for_a_described_machine(cache_dir: Path) -> None:
    result = run_ortprov("plan", "--json", *H100, cache=cache_dir)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["ort_version"] == "1.31.1" and data["cuda_version"] == "13.0"
    assert data["cudnn_version"] == "9.14.0.64" and data["index_url"] is None
    assert data["uninstall"] == []
    assert data["install"][0] == "onnxruntime-gpu[cuda,cudnn]==1.31.1"
    assert "nvidia-cuda-runtime==13.0.96" in data["install"]
    assert [s["kind"] for s in data["steps"]] == ["install", "loader-hook"]
    assert data["rejected"] == [
        {"candidate": "onnxruntime-gpu 1.31.1 (CUDA 12.8)", "reason": data["rejected"][0]["reason"]}
    ]
    assert data["host"]["driver"] == {
        "present": True,
        "version": "580.65.06",
        "cuda_version": None,
        "source": "flags",
        "error": None,
    }
    assert data["host"]["gpus"][0]["compute_capability"] == "9.0"


def test_format_json_equals_json_flag(cache_dir: Path) -> None:
    a = run_ortprov("plan", "--json", *H100, cache=cache_dir)
    b = run_ortprov("plan", "--format", "json", *H100, cache=cache_dir)
    assert a.returncode == b.returncode == 0
    assert json.loads(a.stdout) == json.loads(b.stdout)


def test_text_summary_and_verbose_rejections(cache_dir: Path) -> None:
    args = ["--driver", "535.104.05", "--gpu-cc", "6.1", "--python", "3.11", "--platform", "linux-x86_64"]
    short = run_ortprov("plan", *args, cache=cache_dir)
    assert short.returncode == 0, short.stderr
    assert short.stdout.startswith("onnxruntime-gpu 1.31.1: CUDA 12.8")
    assert "Why:" in short.stdout and "Steps:" in short.stdout
    assert "minor-version compatibility" in short.stdout
    assert "1 other candidate lost (-v shows why)" in short.stdout
    verbose = run_ortprov("plan", "-v", *args, cache=cache_dir)
    assert "Rejected:" in verbose.stdout
    assert "1.31.1 has no kernels for compute capability 6.1 (sm_75 80 86 89 90 100 120, no PTX)" in verbose.stdout


def test_no_plan_exits_3_with_the_reasons(cache_dir: Path) -> None:
    result = run_ortprov("plan", "--driver", "418.87.01", "--gpu-cc", "5.2", "--python", "3.9", cache=cache_dir)
    assert result.returncode == 3
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.startswith("error: no onnxruntime-gpu build runs on this host")
    assert "no wheel for Python 3.9 after 1.19.2" in result.stderr
    assert "needs driver >= 525.60.13; this host has 418.87.01" in result.stderr
    assert "older candidates (-v lists them)" in result.stderr
    verbose = run_ortprov("plan", "-v", "--driver", "418.87.01", "--gpu-cc", "5.2", "--python", "3.9", cache=cache_dir)
    assert "1.16.3 (CUDA 11.8)" in verbose.stderr


def test_no_plan_json_prints_the_error_object(cache_dir: Path) -> None:
    result = run_ortprov(
        "plan", "--json", "--driver", "418.87.01", "--gpu-cc", "8.6", "--python", "3.12", cache=cache_dir
    )
    assert result.returncode == 3
    data = json.loads(result.stdout)
    assert data["error"].startswith("no onnxruntime-gpu build")
    assert len(data["rejected"]) == 8
    assert all(set(item) == {"candidate", "reason"} and item["reason"] for item in data["rejected"])
    assert result.stderr.startswith("error: ")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--driver", "5x.1", "--gpu-cc", "8.6"], "--driver '5x.1' is not an NVIDIA driver version"),
        (["--driver", "12.2", "--gpu-cc", "8.6"], "--driver '12.2' looks like a CUDA version"),
        (["--driver", "550", "--gpu-cc", "86"], "--gpu-cc '86' is not a compute capability"),
        (["--driver", "550", "--gpu-cc", "8.6", "--python", "2.7"], "wheels only for Python 3"),
        (["--driver", "550", "--gpu-cc", "8.6", "--python", "3.x"], "--python '3.x' is not a Python version"),
        (["--driver", "550", "--gpu-cc", "8.6", "--platform", "linux-arm"], "unknown platform 'linux-arm'"),
        (
            ["--driver", "550", "--gpu-cc", "8.6", "--ort", "1.99"],
            "onnxruntime-gpu 1.99 is not in the matrix",
        ),
        (["--driver", "550", "--gpu-cc", "8.6", "--ort", "1.20; rm -rf /"], "is not a version or specifier"),
        (["--driver", "550", "--gpu-cc", "8.6", "--cuda", "12.x"], "--cuda '12.x' is not a CUDA version"),
        (["--driver", "550", "--gpu-cc", "8.6", "--ort", "1.16", "--cuda", "13"], "exclude each other"),
        (["--host", "does-not-exist.json"], "host file 'does-not-exist.json' does not exist"),
        (
            ["--host", "tests/hosts/cpu-dev-machine.json", "--python", "/usr/bin/python3"],
            "cannot be combined",
        ),
        (["--driver", "550", "--gpu-cc", "8.6", "--hashes"], "--hashes applies to --format requirements"),
        (["--driver", "550", "--gpu-cc", "8.6", "--json", "--format", "pip"], "exclude each other"),
        (["--driver", "550", "--gpu-cc", "8.6", "--format", "xml"], "unknown format 'xml'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cache_dir: Path, args: list[str], words: str) -> None:
    result = run_ortprov("plan", *args, cache=cache_dir)
    assert_one_line_error(result, 2, words)
    if "--json" in args:  # errors too are JSON, --json beside another --format included (docs/json.md)
        assert words in json.loads(result.stdout)["error"]
    else:
        assert result.stdout == ""


def test_bad_input_with_json_prints_the_error_object(cache_dir: Path) -> None:
    result = run_ortprov("plan", "--json", "--driver", "5x.1", "--gpu-cc", "8.6", cache=cache_dir)
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"] == "--driver '5x.1' is not an NVIDIA driver version"


def test_malformed_host_file(cache_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert_one_line_error(run_ortprov("plan", "--host", str(bad), cache=cache_dir), 2, "is not valid JSON")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"platform": {"os": "linux"}, "driver": {"present": True}}), encoding="utf-8")
    assert_one_line_error(run_ortprov("plan", "--host", str(wrong), cache=cache_dir), 2, "is malformed")


def test_host_files_and_flags_override_them(cache_dir: Path) -> None:
    cpu = str(HOSTS / "cpu-dev-machine.json")
    plain = json.loads(run_ortprov("plan", "--json", "--host", cpu, "--driver", "none", cache=cache_dir).stdout)
    assert plain["uninstall"] == ["onnxruntime"]  # the CPU package shadows onnxruntime-gpu
    assert plain["host"]["driver"]["present"] is False
    result = run_ortprov("plan", "--json", "--host", cpu, "--driver", "535.104.05", "--gpu-cc", "8.0", cache=cache_dir)
    data = json.loads(result.stdout)
    assert (data["ort_version"], data["cuda_version"]) == ("1.31.1", "12.8")
    assert data["host"]["driver"]["version"] == "535.104.05"
    assert data["host"]["python"]["version"].startswith("3.11")  # kept from the file
    assert data["uninstall"] == ["onnxruntime"]


def test_several_host_files_name_the_blocking_host(cache_dir: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(host(driver="580.65.06").to_json(), encoding="utf-8")
    old = tmp_path / "old.json"
    old.write_text(host(driver="418.87.01").to_json(), encoding="utf-8")
    ok = run_ortprov("plan", "--json", "--host", str(good), "--host", str(good), cache=cache_dir)
    assert ok.returncode == 0 and isinstance(json.loads(ok.stdout)["host"], list)
    blocked = run_ortprov("plan", "--host", str(good), "--host", str(old), cache=cache_dir)
    assert blocked.returncode == 3
    assert f"host '{old}' blocks it" in blocked.stderr.splitlines()[0]


@pytest.mark.parametrize("path", sorted(HOSTS.glob("*.json")), ids=lambda p: p.name)
def test_saved_host_files_plan_or_explain(cache_dir: Path, path: Path) -> None:
    result = run_ortprov("plan", "--json", "--host", str(path), cache=cache_dir)
    assert result.returncode in (0, 3), result.stderr
    data = json.loads(result.stdout)
    if result.returncode == 0:
        assert "ort_version" in data
    else:
        assert data["rejected"] or "no NVIDIA driver" in data["error"]


def test_recipe_formats_come_from_the_same_plan(cache_dir: Path) -> None:
    pip = run_ortprov("plan", "--format", "pip", *H100, cache=cache_dir)
    assert pip.returncode == 0, pip.stderr
    assert "-m pip install 'onnxruntime-gpu[cuda,cudnn]==1.31.1' nvidia-cuda-runtime==13.0.96" in pip.stdout
    dockerfile = run_ortprov("dockerfile", *H100, cache=cache_dir)
    assert dockerfile.returncode == 0, dockerfile.stderr
    assert "FROM" in dockerfile.stdout and "onnxruntime-gpu" in dockerfile.stdout
    same = run_ortprov("plan", "--format", "dockerfile", *H100, cache=cache_dir)
    assert same.stdout == dockerfile.stdout


def test_a_machine_without_a_driver_gets_no_plan_but_the_way_to_one(cache_dir: Path, tmp_path: Path) -> None:
    """Issue 14: this machine has no NVIDIA driver (a CUDA folder may be there): exit 3, one line saying so, and a
    hint showing how to plan for the GPU machine; the same for a host file saved on such a machine."""
    result = run_ortprov("plan", "--python", sys.executable, timeout=120, cache=cache_dir)
    assert result.returncode == 3 and result.stdout == "", result.stderr
    lines = result.stderr.splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: this machine has no NVIDIA driver"), result.stderr
    assert errors[0].endswith("so there is no GPU to plan for")
    hint = result.stderr[result.stderr.index("hint: ") :]
    for shown in (
        "nvidia-smi --query-gpu=driver_version,compute_cap",
        "ortprov plan --driver VERSION --gpu-cc X.Y",
        "ortprov detect --json > gpu.json",
        "ortprov plan --host gpu.json",
        "ortprov plan --driver none",
    ):
        assert shown in hint, hint
    as_json = run_ortprov("plan", "--json", "--python", sys.executable, timeout=120, cache=cache_dir)
    error = json.loads(as_json.stdout)
    assert as_json.returncode == error["exit_code"] == 3 and error["rejected"] == []
    assert error["error"].startswith("this machine has no NVIDIA driver")
    cpu = str(HOSTS / "cpu-dev-machine.json")
    saved = run_ortprov("plan", "--host", cpu, cache=cache_dir)
    assert saved.returncode == 3 and f"host file {cpu!r} has no NVIDIA driver" in saved.stderr
    assert "ortprov plan --driver none" in saved.stderr
    described = run_ortprov("dockerfile", "--host", cpu, cache=cache_dir)
    assert described.returncode == 3 and "ortprov dockerfile --host gpu.json" in described.stderr
    venv = tmp_path / "new-venv"
    applied = run_ortprov("apply", "--venv", str(venv), "-y", timeout=300, cache=cache_dir)
    assert applied.returncode == 3 and "ortprov apply --driver VERSION" in applied.stderr, applied.stderr
    assert not venv.exists()  # the venv it made to plan for is removed: no plan, nothing left behind
    bad = run_ortprov("plan", "--cuda", "99", "--python", sys.executable, timeout=120, cache=cache_dir)
    assert bad.returncode == 2, bad.stderr  # bad input first, as on a machine with a driver


def test_probing_this_machine_plans_for_the_venv(cache_dir: Path) -> None:
    """`--driver none`: the real probe of this GPU-less machine and of the dev environment (CPU onnxruntime in it),
    planned without a driver check (a build server)."""
    result = run_ortprov("plan", "--json", "--python", sys.executable, "--driver", "none", timeout=120, cache=cache_dir)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert "onnxruntime" in data["uninstall"]
    assert data["host"]["driver"]["present"] is False
    assert any("no NVIDIA driver known" in note for note in data["notes"])


def test_help_has_examples(cache_dir: Path) -> None:
    result = run_ortprov("plan", "--help", cache=cache_dir)
    assert result.returncode == 0
    assert "Examples:" in result.stdout and "--gpu-cc" in result.stdout and "Exit codes" in result.stdout


def test_a_saved_host_file_gives_the_same_plan_as_probing(cache_dir: Path, tmp_path: Path) -> None:
    """DESIGN: `detect --json > host.json` then `plan --host host.json` plans what planning on the box does."""
    venv_python = sys.executable
    detected = run_ortprov("detect", "--json", "--python", venv_python, timeout=120, cache=cache_dir)
    assert detected.returncode == 0, detected.stderr
    saved = tmp_path / "this-box.json"
    saved.write_text(detected.stdout, encoding="utf-8")
    from_file = json.loads(
        run_ortprov("plan", "--json", "--host", str(saved), "--driver", "none", cache=cache_dir).stdout
    )
    probed = json.loads(
        run_ortprov("plan", "--json", "--python", venv_python, "--driver", "none", timeout=120, cache=cache_dir).stdout
    )
    for data in (from_file, probed):
        del data["host"], data["hosts"]
    assert from_file == probed


def test_dockerfile_cuda_base_for_a_driver_given_as_a_major_or_a_version() -> None:
    """Issue 14, with the shipped matrix: `--driver 580` (no CUDA version reported) finds the CUDA 13 image the
    matrix lists, and `--driver 580.65.06` is not called too old (no minor-version compatibility note)."""
    h100 = ["--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64", "--base", "cuda"]
    for driver in ("580", "580.65.06"):
        result = run_ortprov("dockerfile", "--driver", driver, *h100)
        assert result.returncode == 0, result.stderr
        assert "BASE_IMAGE=nvidia/cuda:13.0" in result.stdout
        header = "\n".join(line for line in result.stdout.splitlines() if line.startswith("#"))
        assert "newer than the target driver supports" not in header and "minor-version" not in header
