"""End to end against the real PyPI: a fresh venv gets the real onnxruntime-gpu and NVIDIA wheels planned for
the H100 host's driver, the no-GPU part of verify passes, and the GPU part reports the missing driver.

Downloads ~1.6 GB (about 90 s here with uv; see benchmarks/RESULTS.md "apply"). Run it with:
    python -m pytest tests/integration/test_apply_pypi.py -m network
"""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import run_ortprov
from tests.support.envs import REPO, clean_env, freeze, venv_python

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.network, pytest.mark.e2e]

H100 = ("--driver", "580.159.04", "--gpu-cc", "9.0")


def test_fresh_venv_gets_the_real_gpu_build_and_its_libraries_resolve(tmp_path: Path) -> None:
    env = clean_env(tmp_path, UV_HTTP_RETRIES="3")
    venv = tmp_path / "venv"
    proc = run_ortprov("apply", "--venv", str(venv), *H100, "-y", "--verify-static", "--json", env=env, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["apply"]["outcome"] == "applied"
    assert result["verify"]["ok"] and result["verify"]["mode"] == "static"
    frozen = freeze(venv_python(venv), env)
    assert any(line.startswith("onnxruntime-gpu==") for line in frozen)
    assert any(line.startswith("nvidia-cudnn") for line in frozen)
    assert not any(line.startswith("onnxruntime==") for line in frozen)
    libraries = {lib["library"]: lib["status"] for lib in result["verify"]["static"]["libraries"] if lib["library"]}
    assert libraries["cuda"] == "driver-missing"  # libcuda.so.1 comes with the driver: none here
    assert {"cudnn", "cublas", "cudart"} <= set(libraries)

    # the user's own plain code: its session fails only on the driver's libcuda.so.1, never on a library of
    # the NVIDIA wheels (the loader hook loaded them when onnxruntime was imported)
    model = REPO / "provisioner" / "verify" / "models" / "check.onnx"
    code = f"import onnxruntime as o; o.InferenceSession({str(model)!r}, providers=['CUDAExecutionProvider'])"
    plain = subprocess.run([str(venv_python(venv)), "-c", code], env=env, capture_output=True, text=True, timeout=120)
    failed = [line for line in plain.stderr.splitlines() if "Failed to load library" in line]
    assert failed and all("libcuda.so.1: cannot open shared object file" in line for line in failed), plain.stderr

    # the GPU part: no driver, so no CUDA session; apply checks statically, says what was not proven, exits 0
    # (a Docker build or CI), unless --require-gpu-verify asks for a session
    again = run_ortprov("apply", "--venv", str(venv), *H100, "-y", env=env, timeout=600)
    assert "already satisfied" in again.stderr
    assert again.returncode == 0, again.stderr
    assert "verify: no CUDA session on this machine (no-driver)" in again.stderr
    assert "not proven: a CUDA session (this machine has no NVIDIA driver)" in again.stdout
    strict = run_ortprov("apply", "--venv", str(venv), *H100, "-y", "--require-gpu-verify", env=env, timeout=600)
    assert strict.returncode == 1 and "--require-gpu-verify asks for one" in strict.stderr

    # the session verify itself names the cause: no NVIDIA driver (not a generic CPU fallback) ...
    verify = run_ortprov("verify", "--python", str(venv_python(venv)), "--json", env=env, timeout=600)
    assert verify.returncode == 1
    report = json.loads(verify.stdout)
    assert "no-driver" in [failure["kind"] for failure in report["failures"]]
    # ... and so does doctor, with the one finding code users look up: in a container no GPU was passed in
    # (gpu-hidden), on a bare machine there is no driver (no-driver); never both for one cause
    detected = json.loads(run_ortprov("detect", "--json", env=env, timeout=120).stdout)
    in_container = bool(detected["environment"]["container"])
    expected, other = ("gpu-hidden", "no-driver") if in_container else ("no-driver", "gpu-hidden")
    doctor = run_ortprov("doctor", "--python", str(venv_python(venv)), "--json", env=env, timeout=600)
    assert doctor.returncode == 1
    codes = [finding["code"] for finding in json.loads(doctor.stdout)["findings"]]
    assert expected in codes and other not in codes, codes
