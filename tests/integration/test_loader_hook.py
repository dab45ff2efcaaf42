"""A plain program in the environment `ortprov apply` leaves finds the NVIDIA wheels' libraries.

For four onnxruntime-gpu eras (1.18 CUDA 11, 1.20 CUDA 12 without preload_dlls(), 1.22 CUDA 12, 1.31 CUDA
13), real venvs get stub wheels under the real names, versions and folders, with gcc-built libraries under the
real sonames, from a package index on 127.0.0.1. After apply, a plain `python -c` session (no
preload_dlls(), no torch, no environment variable) fails only on libcuda.so.1, which comes with the NVIDIA
driver this machine does not have; without the loader hook the same session names a library of the wheels.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from provisioner.matrix.load import load_matrix
from tests.support.cli import run_ortprov
from tests.support.envs import clean_env, venv_python
from tests.support.gpu_stubs import DRIVER_LIBRARY, PLAIN_SESSION, era_wheels
from tests.support.index_server import IndexServer
from tests.support.wheels import build_wheels

pytestmark = pytest.mark.e2e

H100 = ("--driver", "580.159.04", "--gpu-cc", "9.0", "--python", "3.11", "--platform", "linux-x86_64")
ERAS = {
    "1.18-cuda11": ("--ort", "1.18.1", "--cuda", "11"),
    "1.20-cuda12-no-preload": ("--ort", "1.20.0", "--cuda", "12"),
    "1.22-cuda12": ("--ort", "1.22.0", "--cuda", "12"),
    "1.31-cuda13": ("--ort", "1.31.1", "--cuda", "13"),
}


def plain_session(python: Path, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The user's own code: a session asking for CUDA, nothing else."""
    return subprocess.run(
        [str(python), "-c", PLAIN_SESSION], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def loader_error(stderr: str) -> str:
    """The library the dynamic loader could not find, from onnxruntime's error line."""
    marker = "with error: "
    line = next(line for line in stderr.splitlines() if marker in line)
    return line.split(marker, 1)[1].split(":", 1)[0].strip()


@pytest.fixture(scope="module")
def matrix():  # noqa: ANN201
    return load_matrix()


@pytest.mark.parametrize("era", list(ERAS))
def test_plain_code_finds_the_wheels_libraries_after_apply(era: str, tmp_path: Path, matrix) -> None:  # noqa: ANN001
    env = clean_env(tmp_path)
    planned = run_ortprov("plan", "--json", *H100, *ERAS[era], env=env)
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert any(step["kind"] == "loader-hook" for step in plan["steps"])
    wheels = tmp_path / "wheels"
    build_wheels(wheels, era_wheels(plan, matrix, tmp_path / "build"))
    venv = tmp_path / "venv"
    with IndexServer(wheels) as index:
        applied = run_ortprov(
            "apply", "--venv", str(venv), *H100, *ERAS[era], "--index-url", index.url, "-y", "--verify-static",
            env=env,
        )  # fmt: skip
    assert applied.returncode == 0, applied.stderr
    assert "loader hook" in applied.stderr
    python = venv_python(venv)

    session = plain_session(python, env, tmp_path)
    assert "['CPUExecutionProvider']" in session.stdout  # no driver here: the CPU, but only for that reason
    assert loader_error(session.stderr) == DRIVER_LIBRARY, session.stderr

    # the control: the same venv without the hook's .pth line names a library of the NVIDIA wheels
    pth = next(Path(p) for p in venv.glob("lib/python*/site-packages/ortprov-loader.pth"))
    pth.rename(pth.with_suffix(".off"))
    without = plain_session(python, env, tmp_path)
    missing = loader_error(without.stderr)
    assert missing != DRIVER_LIBRARY and missing.startswith(("libcublas", "libcudart", "libcudnn", "libcurand"))


@pytest.fixture
def applied_venv(tmp_path: Path, matrix) -> tuple[Path, dict[str, str], IndexServer]:  # noqa: ANN001
    """A venv that `ortprov apply` filled with the 1.22 (CUDA 12) era; the index keeps serving."""
    env = clean_env(tmp_path)
    era = ERAS["1.22-cuda12"]
    plan = json.loads(run_ortprov("plan", "--json", *H100, *era, env=env).stdout)
    wheels = tmp_path / "wheels"
    build_wheels(wheels, era_wheels(plan, matrix, tmp_path / "build"))
    venv = tmp_path / "venv"
    with IndexServer(wheels) as index:
        applied = run_ortprov(
            "apply", "--venv", str(venv), *H100, *era, "--index-url", index.url, "-y", "--verify-static", env=env
        )
        assert applied.returncode == 0, applied.stderr
        yield venv, env, index


def site_of(venv: Path) -> Path:
    return next(venv.glob("lib/python*/site-packages"))


def test_the_hook_lives_through_the_packages_life(applied_venv, tmp_path: Path) -> None:  # noqa: ANN001
    venv, env, index = applied_venv
    python, era = venv_python(venv), ERAS["1.22-cuda12"]
    # apply again: nothing to do, the hook is current
    again = run_ortprov("apply", "--venv", str(venv), *H100, *era, "--index-url", index.url, "-y", "--no-verify",
                        env=env)  # fmt: skip
    assert again.returncode == 0 and "already satisfied" in again.stderr, again.stderr
    # `pip install --force-reinstall onnxruntime-gpu` (as `pip install -U` would): pip leaves the hook alone
    reinstall = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", "--index-url", index.url,
         "onnxruntime-gpu==1.22.0"], env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert reinstall.returncode == 0, reinstall.stderr
    assert loader_error(plain_session(python, env, tmp_path).stderr) == DRIVER_LIBRARY
    # the same machine with CUDA and cuDNN from the system: the hook goes with the NVIDIA wheels' role
    dry = run_ortprov("apply", "--venv", str(venv), *H100, *era, "--cuda-libraries", "system", "--index-url",
                      index.url, "-y", "--dry-run", env=env)  # fmt: skip
    assert "remove the loader hook" in dry.stdout and (site_of(venv) / "ortprov-loader.pth").exists()
    system = run_ortprov("apply", "--venv", str(venv), *H100, *era, "--cuda-libraries", "system", "--index-url",
                         index.url, "-y", "--no-verify", env=env)  # fmt: skip
    assert system.returncode == 0, system.stderr
    assert not (site_of(venv) / "ortprov-loader.pth").exists() and not (site_of(venv) / "_ortprov_loader").exists()


@pytest.mark.parametrize("damage", ["package-gone", "raises-on-import", "elf-reader-gone"])
def test_a_broken_hook_is_silent_at_start_up_and_loud_in_doctor(applied_venv, tmp_path: Path, damage: str) -> None:  # noqa: ANN001
    venv, env, index = applied_venv
    python, package = venv_python(venv), site_of(venv) / "_ortprov_loader"
    if damage == "package-gone":
        for path in package.rglob("*"):
            path.unlink() if path.is_file() else None
        package.joinpath("__pycache__").rmdir() if package.joinpath("__pycache__").exists() else None
        package.rmdir()
    elif damage == "raises-on-import":
        package.joinpath("__init__.py").write_text("raise RuntimeError('hook broken')\n")
    else:
        package.joinpath("elf.py").unlink()
    started = subprocess.run([str(python), "-c", "print('ok')"], env=env, capture_output=True, text=True)
    assert started.returncode == 0 and started.stdout == "ok\n" and started.stderr == ""
    session = plain_session(python, env, tmp_path)
    assert session.returncode == 0 and "['CPUExecutionProvider']" in session.stdout
    if damage == "elf-reader-gone":  # the hook ran and failed: verify and doctor say so
        verify = run_ortprov("verify", "--static", "--json", "--python", str(python), env=env)
        report = json.loads(verify.stdout)
        assert report["loader_hook"]["state"] == "failed" and "elf" in report["loader_hook"]["error"]
        doctor = run_ortprov("doctor", "--json", "--python", str(python), env=env)
        codes = [finding["code"] for finding in json.loads(doctor.stdout)["findings"]]
        assert "loader-hook-failed" in codes, codes
    # apply repairs it, and says that it changed something (not "already satisfied: nothing changed")
    repair = run_ortprov("apply", "--venv", str(venv), *H100, *ERAS["1.22-cuda12"], "--index-url", index.url, "-y",
                         "--no-verify", env=env)  # fmt: skip
    assert repair.returncode == 0, repair.stderr
    assert "changed: ortprov's loader hook (" in repair.stderr and "already satisfied" not in repair.stderr
    assert repair.stdout.startswith("verdict: installed, not verified (--no-verify)")
    assert loader_error(plain_session(python, env, tmp_path).stderr) == DRIVER_LIBRARY
