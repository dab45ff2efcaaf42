"""`ortprov detect` and `ortprov plan` against environments whose process loads real CUDA 12 libraries: a conda-style
env (a prefix with conda-meta/*.json records, the libraries where conda-forge puts them) and a toolkit folder on
LD_LIBRARY_PATH. The libraries are the real files of NVIDIA's cu12 wheels (tests/support/cuda_wheels.py); the
interpreters are real venvs; ortprov runs as a user runs it. This machine has no NVIDIA driver: --driver/--gpu-cc
describe the GPU, everything else is probed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import cli_env, run_ortprov
from tests.support.cuda_wheels import place
from tests.support.envs import clean_env, make_venv

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.network, pytest.mark.e2e]

GPU = ("--driver", "580.65.06", "--gpu-cc", "8.9")  # an RTX 4090 with driver 580

RECORDS = {
    "cuda-cudart-12.8.90-h5888daf_1.json": {
        "name": "cuda-cudart",
        "version": "12.8.90",
        "build": "h5888daf_1",
        "build_number": 1,
        "channel": "https://conda.anaconda.org/conda-forge/linux-64",
        "depends": [
            "__glibc >=2.17,<3.0.a0",
            "cuda-cudart_linux-64 12.8.90 h3f2d84a_1",
            "cuda-version >=12.8,<12.9.0a0",
            "libgcc >=13",
            "libstdcxx >=13",
        ],
        "files": ["lib/libcudart.so.12", "targets/x86_64-linux/lib/libcudart.so.12.8.90"],
    },
    "cudnn-9.10.2.21-hbcb9cd8_0.json": {
        "name": "cudnn",
        "version": "9.10.2.21",
        "build": "hbcb9cd8_0",
        "build_number": 0,
        "channel": "https://conda.anaconda.org/conda-forge/linux-64",
        "depends": [
            "__glibc >=2.28,<3.0.a0",
            "cuda-nvrtc",
            "cuda-version >=12,<13.0a0",
            "libcublas",
            "libgcc >=13",
            "libstdcxx >=13",
        ],
        "files": ["include/cudnn.h", "lib/libcudnn.so.9", "lib/libcudnn.so.9.10.2"],
    },
}


def conda_env(prefix: Path, env: dict[str, str]) -> Path:
    """A venv made into the shape of a conda env: conda-meta/ records, cudart under targets/ with its lib/ link,
    cuDNN in lib/ (the real CUDA 12 files)."""
    python = make_venv(prefix, env)
    targets = prefix / "targets/x86_64-linux/lib"
    place("libcudart.so.12", targets, "libcudart.so.12.8.90")
    (prefix / "lib/libcudart.so.12").symlink_to(targets / "libcudart.so.12.8.90")
    place("libcudnn.so.9", prefix / "lib", "libcudnn.so.9.10.2")
    meta = prefix / "conda-meta"
    meta.mkdir()
    for name, record in RECORDS.items():
        (meta / name).write_text(json.dumps(record), encoding="utf-8")
    (meta / "history").write_text("==> 2026-12-01 10:00:00 <==\n", encoding="utf-8")
    return python


def test_a_conda_env_with_cuda12_libraries_plans_cuda12(tmp_path: Path) -> None:
    python = conda_env(tmp_path / "miniforge3/envs/torch", clean_env(tmp_path))
    env = cli_env()
    env.pop("LD_LIBRARY_PATH", None)
    detected = run_ortprov("detect", "--json", "--python", str(python), env=env)
    assert detected.returncode == 0, detected.stderr
    hits = {hit["filename"]: hit for hit in json.loads(detected.stdout)["libraries"] if hit["source"] == "conda"}
    assert hits["libcudnn.so.9"]["package"] == "conda cudnn 9.10.2.21 (hbcb9cd8_0)"
    assert hits["libcudnn.so.9"]["cuda_major"] == 12
    assert hits["libcudart.so.12"]["package"] == "conda cuda-cudart 12.8.90 (h5888daf_1)"
    summary = run_ortprov("detect", "--python", str(python), env=env)
    assert "[conda cudnn 9.10.2.21 (hbcb9cd8_0), CUDA 12]" in summary.stdout

    planned = run_ortprov("plan", "--json", "--python", str(python), *GPU, env=env)
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert plan["cuda_version"].startswith("12."), plan["reasons"]
    why = "\n".join(plan["reasons"])
    assert "the CUDA this environment already loads" in why
    assert "libcudnn.so.9 (conda cudnn 9.10.2.21 (hbcb9cd8_0))" in why
    assert "would load libcudnn.so.9 for CUDA 13" in why  # the newer CUDA 13 build, and why it lost
    assert any("`--cuda 13` plans" in note for note in plan["notes"])

    pinned = run_ortprov("plan", "--json", "--python", str(python), *GPU, "--cuda", "13", env=env)
    assert pinned.returncode == 0, pinned.stderr
    assert json.loads(pinned.stdout)["cuda_version"].startswith("13.")


def test_a_toolkit_on_ld_library_path_plans_its_cuda(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv", clean_env(tmp_path))
    lib = tmp_path / "opt/cuda-12.8/targets/x86_64-linux/lib"
    place("libcudart.so.12", lib, "libcudart.so.12.8.90")
    place("libcudnn.so.9", lib, "libcudnn.so.9.10.2")
    env = cli_env(LD_LIBRARY_PATH=str(lib))
    planned = run_ortprov("plan", "--json", "--python", str(python), *GPU, env=env)
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert plan["cuda_version"].startswith("12."), plan["reasons"]
    assert any("libcudart.so.12 (ld_library_path)" in reason for reason in plan["reasons"])

    env.pop("LD_LIBRARY_PATH")
    without = json.loads(run_ortprov("plan", "--json", "--python", str(python), *GPU, env=env).stdout)
    assert not any("ld_library_path" in reason for reason in without["reasons"])
