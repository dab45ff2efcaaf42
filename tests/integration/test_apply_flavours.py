"""Two onnxruntime flavours in one venv, and a venv whose onnxruntime files are gone: `apply` of a saved plan
(`--plan FILE`, a wheelhouse's plan.json) leaves exactly the GPU flavour, complete, with real pip and uv, real
venvs and small wheels under the real names served on 127.0.0.1.

The CPU and GPU wheels both install the one `onnxruntime/` folder, as the real ones do; the stub
`onnxruntime/__init__.py` says which flavour's files were loaded. The plans are made on a clean machine (no
uninstall step): what to remove must be read from the target at apply time."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from provisioner.plan import Plan, Step
from provisioner.probe.target import check_files
from tests.support.cli import run_ortprov
from tests.support.envs import clean_env, freeze, make_venv, tree_digest
from tests.support.index_server import IndexServer
from tests.support.wheels import build_wheels, ort_cpu, ort_family

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e

GPU = "onnxruntime-gpu==1.31.1"
PLAN = Plan(
    ort_version="1.31.1",
    package="onnxruntime-gpu",
    cuda_version="12.0",  # what the stub wheel's build_and_package_info.py says: another minor is reinstalled
    cudnn_version="9",
    steps=(Step("install", ("onnxruntime-gpu[cuda,cudnn]==1.31.1",), "the GPU build and its NVIDIA wheels"),),
)
IMPORTED = "import onnxruntime as o; print(o.FLAVOUR, o.__version__, o.get_device(), o.get_available_providers())"


@pytest.fixture(scope="module")
def wheel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    build_wheels(root, [*ort_family("12"), ort_cpu("1.31.1")])
    return root


@pytest.fixture(scope="module")
def index(wheel_dir: Path):
    with IndexServer(wheel_dir) as server:
        yield server


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    path.write_text(PLAN.to_json())
    return path


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory, plan_file: Path, index: IndexServer) -> Path:
    """`ortprov download` of the plan: the wheels and plan.json, for an offline apply."""
    tmp = tmp_path_factory.mktemp("wheelhouse")
    house = tmp / "house"
    got = run_ortprov(
        "download", "--dest", str(house), "--plan", str(plan_file), "--index-url", index.url, env=clean_env(tmp)
    )
    assert got.returncode == 0, got.stderr
    assert json.loads((house / "plan.json").read_text())["uninstall"] == []
    return house


def both_flavours(venv: Path, env: dict[str, str], index: IndexServer, first: str, second: str) -> Path:
    """A venv where `first` then `second` were installed: the second one's files fill onnxruntime/."""
    python = make_venv(venv, env, (first,), index.url)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--index-url", index.url, second], check=True, env=env)
    return python


def imported(python: Path, env: dict[str, str]) -> str:
    proc = subprocess.run([str(python), "-c", IMPORTED], env=env, capture_output=True, text=True)
    return proc.stdout.strip() or proc.stderr.strip().splitlines()[-1]


def assert_gpu_flavour_alone(python: Path, env: dict[str, str]) -> None:
    assert imported(python, env) == "onnxruntime-gpu 1.31.1 GPU ['CUDAExecutionProvider', 'CPUExecutionProvider']"
    frozen = freeze(python, env)
    assert GPU in frozen and not any(line.startswith("onnxruntime==") for line in frozen)
    assert check_files(str(python)).incomplete == ()  # nothing of any distribution is missing


@pytest.mark.parametrize(
    ("order", "cpu", "installer", "source"),
    [
        ("cpu-first", "1.31.1", "uv", "plan"),
        ("gpu-first", "1.31.1", "pip", "plan"),
        ("cpu-first", "1.30.0", "pip", "wheelhouse"),
        ("gpu-first", "1.30.0", "uv", "wheelhouse"),
    ],
)
def test_both_flavours_installed_apply_leaves_the_gpu_flavour_alone_and_complete(
    tmp_path: Path,
    index: IndexServer,
    plan_file: Path,
    wheelhouse: Path,
    order: str,
    cpu: str,
    installer: str,
    source: str,
) -> None:
    env = clean_env(tmp_path)
    cpu_req = f"onnxruntime=={cpu}"
    first, second = (cpu_req, GPU) if order == "cpu-first" else (GPU, cpu_req)
    python = both_flavours(tmp_path / "venv", env, index, first, second)
    before = imported(python, env)
    assert before.startswith("onnxruntime-gpu" if order == "cpu-first" else "onnxruntime ")

    where = (
        ["--plan", str(plan_file), "--index-url", index.url] if source == "plan" else ["--wheelhouse", str(wheelhouse)]
    )
    args = ["apply", *where, "--python", str(python), "--installer", installer, "--no-verify", "-y"]
    proc = run_ortprov(*args, env=env)
    assert proc.returncode == 0, proc.stderr
    assert_gpu_flavour_alone(python, env)
    # the removals were read from the venv: the CPU flavour, and the GPU one whose files its removal takes
    assert "[1/2] uninstall onnxruntime onnxruntime-gpu" in proc.stderr

    files = tree_digest(tmp_path / "venv")
    again = run_ortprov(*args, env=env)
    assert again.returncode == 0, again.stderr
    assert "uninstall" not in again.stderr and "nothing changed" in again.stderr
    assert tree_digest(tmp_path / "venv") == files


def test_deleted_onnxruntime_files_are_reported_by_detect_and_doctor_and_repaired_by_apply(
    tmp_path: Path, index: IndexServer, plan_file: Path
) -> None:
    env = clean_env(tmp_path)
    venv = tmp_path / "venv"
    python = make_venv(venv, env, ("onnxruntime-gpu[cuda,cudnn]==1.31.1",), index.url)
    [folder] = venv.glob("lib/python*/site-packages/onnxruntime")
    shutil.rmtree(folder)
    assert "No module named" in imported(python, env) or "has no attribute" in imported(python, env)

    detected = run_ortprov("detect", "--python", str(python), "--json", env=env)
    assert detected.returncode == 0, detected.stderr
    [ort] = json.loads(detected.stdout)["onnxruntime"]
    assert (
        ort["name"] == "onnxruntime-gpu" and ort["missing_files"]["count"] == 2
    )  # capi/__init__.py was empty: not counted
    assert "onnxruntime/__init__.py" in ort["missing_files"]["sample"]
    text = run_ortprov("detect", "--python", str(python), env=env)
    assert "! INCOMPLETE: 2 of the " in text.stdout

    doctor = run_ortprov("doctor", "--python", str(python), "--json", "--timeout", "60", env=env)
    assert doctor.returncode == 1, doctor.stderr
    found = {f["code"]: f for f in json.loads(doctor.stdout)["findings"]}
    assert found["package-files-missing"]["severity"] == "error"
    assert found["package-files-missing"]["evidence"][0].startswith("onnxruntime-gpu 1.31.1: 2 of the ")
    assert [f["library"] for f in found.values() if f["code"] == "package-files-missing"] == [None]

    args = ["apply", "--plan", str(plan_file), "--index-url", index.url, "--python", str(python), "--no-verify"]
    dry = run_ortprov(*args, "--installer", "uv", "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    assert "~ onnxruntime-gpu==1.31.1 (removed and installed afresh)" in dry.stdout
    assert "already satisfied" not in dry.stdout
    proc = run_ortprov(*args, "--installer", "uv", "-y", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "[1/2] uninstall onnxruntime-gpu" in proc.stderr
    assert_gpu_flavour_alone(python, env)
    assert "INCOMPLETE" not in run_ortprov("detect", "--python", str(python), env=env).stdout


def test_a_distribution_outside_the_plan_with_missing_files_is_a_warning_not_the_applys_failure(
    tmp_path: Path, index: IndexServer, plan_file: Path
) -> None:
    """As on the H100 under hide_cuda.sh: torchvision's CUDA libraries were hidden, apply itself did its job."""
    env = clean_env(tmp_path)
    venv = tmp_path / "venv"
    python = make_venv(venv, env, ("onnxruntime==1.31.1",), index.url)
    [typed] = venv.glob("lib/python*/site-packages/pip/py.typed")
    typed.unlink()  # pip's RECORD lists it: pip is now incomplete, and no plan step touches pip
    args = ["apply", "--plan", str(plan_file), "--index-url", index.url, "--python", str(python), "--no-verify"]

    proc = run_ortprov(*args, "--installer", "uv", "-y", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert_gpu_flavour_alone_but(python, env, incomplete=["pip"])
    assert "warning: pip " in proc.stderr and "(not part of this plan: left as it was)" in proc.stderr
    [finding] = json.loads(proc.stdout)["apply"]["findings"]
    assert (finding["code"], finding["severity"]) == ("package-files-missing", "warning")

    again = run_ortprov(*args, "--installer", "uv", "-y", env=env)  # already satisfied: still only a warning
    assert again.returncode == 0, again.stderr
    assert "already satisfied" in again.stderr and "warning: pip " in again.stderr

    [init] = venv.glob("lib/python*/site-packages/onnxruntime/__init__.py")
    init.unlink()  # now a distribution the plan installs is incomplete: "already satisfied" would be a lie
    broken = run_ortprov(*args, "--installer", "uv", "--dry-run", env=env)
    assert "already satisfied" not in broken.stderr + broken.stdout


def assert_gpu_flavour_alone_but(python: Path, env: dict[str, str], incomplete: list[str]) -> None:
    assert imported(python, env) == "onnxruntime-gpu 1.31.1 GPU ['CUDAExecutionProvider', 'CPUExecutionProvider']"
    assert [d.name for d in check_files(str(python)).incomplete] == incomplete
