"""`ortprov apply` in a build pipeline on a machine without a GPU (issue 23): a Dockerfile's `RUN ortprov apply
...`, as `docker build` runs it (`/bin/sh -c`, no terminal, stdin empty), with the default flags.

The onnxruntime-gpu wheel of the loopback index is the real CPU onnxruntime of the test interpreter (with its
numpy) under the GPU build's name, reporting the CUDA provider as a GPU build does, with gcc-built libraries
under the real NVIDIA sonames (tests/support/gpu_stubs.on_real_onnxruntime): verify's CUDA session really runs
and falls back to the CPU because this machine has no NVIDIA driver, and its static check really resolves the
provider's libraries. What a pipeline needs: exit 0 and a verdict that says what was and was not proven; with
--require-gpu-verify, exit 1 and the environment restored.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from provisioner.matrix.load import load_matrix
from tests.support.cli import ortprov_argv, run_ortprov
from tests.support.envs import REPO, clean_env, freeze, venv_python
from tests.support.gpu_stubs import on_real_onnxruntime
from tests.support.index_server import IndexServer
from tests.support.wheels import build_wheels

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e

# the GPU machine the image is built for, described by flags; the venv gets the test interpreter's Python
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
GPU_HOST = ("--driver", "580.159.04", "--gpu-cc", "9.0", "--python", PYTHON, "--platform", "linux-x86_64")
BUILD = ("--ort", "1.22.0", "--cuda", "12")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("pipeline")
    planned = run_ortprov("plan", "--json", *GPU_HOST, *BUILD, env=clean_env(work))
    assert planned.returncode == 0, planned.stderr
    build_wheels(work / "wheels", on_real_onnxruntime(json.loads(planned.stdout), load_matrix(), work / "build"))
    with IndexServer(work / "wheels") as server:
        yield server


def docker_run(line: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`RUN <line>` of a Dockerfile: `/bin/sh -c` with the line, no terminal, stdin empty."""
    return subprocess.run(
        ["/bin/sh", "-c", shlex.join(line)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )


def test_a_dockerfile_run_apply_without_a_gpu_passes_with_the_default_flags(tmp_path: Path, index: IndexServer) -> None:
    env = clean_env(tmp_path)
    venv = tmp_path / "opt-venv"
    run = docker_run(ortprov_argv("apply", "--venv", str(venv), *GPU_HOST, *BUILD, "--index-url", index.url, "-y"), env)
    assert run.returncode == 0, run.stderr
    assert "verify: no CUDA session on this machine (no-driver)" in run.stderr
    assert "verify: passed (static" in run.stderr
    [verdict] = run.stdout.splitlines()
    assert verdict.startswith("verdict: installed and verified as far as this machine can: every library")
    assert "not proven: a CUDA session (this machine has no NVIDIA driver)" in verdict
    assert f"`ortprov verify --python {venv_python(venv)}` on the GPU machine" in verdict
    frozen = freeze(venv_python(venv), env)
    assert "onnxruntime-gpu==1.22.0" in frozen and not any(line.startswith("onnxruntime==") for line in frozen)

    # the same build again (a cached layer rebuilt): nothing to do, proven as far as before, exit 0
    again = docker_run(
        ortprov_argv("apply", "--venv", str(venv), *GPU_HOST, *BUILD, "--index-url", index.url, "-y"), env
    )
    assert again.returncode == 0, again.stderr
    assert "already satisfied" in again.stderr and again.stdout.startswith("verdict: already installed and verified")


def test_require_gpu_verify_fails_the_build_and_restores(tmp_path: Path, index: IndexServer) -> None:
    env = clean_env(tmp_path)
    venv = tmp_path / "opt-venv"
    line = ortprov_argv("apply", "--venv", str(venv), *GPU_HOST, *BUILD, "--index-url", index.url, "-y", "--json")
    run = docker_run([*line, "--require-gpu-verify"], env)
    assert run.returncode == 1, run.stderr
    error = json.loads(run.stdout)
    assert "no CUDA session could run here (no NVIDIA driver), and --require-gpu-verify asks for one" in error["error"]
    assert error["apply"]["outcome"] == "restored" and error["apply"]["restored_exactly"]
    assert not any(line.startswith("onnxruntime-gpu==") for line in freeze(venv_python(venv), env))


def test_the_verdict_in_json(tmp_path: Path, index: IndexServer) -> None:
    env = clean_env(tmp_path)
    venv = tmp_path / "opt-venv"
    run = run_ortprov(
        "apply", "--venv", str(venv), *GPU_HOST, *BUILD, "--index-url", index.url, "-y", "--json", env=env
    )
    assert run.returncode == 0, run.stderr
    verdict = json.loads(run.stdout)["verdict"]
    assert verdict == {"proven": "static", "unproven": "no-driver", "failure": None, "ok": True}
    contradiction = run_ortprov("apply", "--venv", str(venv), "--verify-static", "--require-gpu-verify", env=env)
    assert contradiction.returncode == 2 and "--require-gpu-verify asks for a CUDA session" in contradiction.stderr
