"""The loader hook on a real GPU: a plain program finds the NVIDIA wheels' libraries with nothing else on the
loader's path (the CUDA toolkit and system cuDNN hidden by tests/gpu/hide_cuda.sh, which needs root).

    ORTPROV_GPU_PYTHON=/root/fresh/bin/python .venv/bin/python -m pytest -m gpu tests/gpu/test_loader_hook_gpu.py

ORTPROV_GPU_PYTHON: a venv `ortprov apply` filled (onnxruntime-gpu, its NVIDIA wheels, the loader hook).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
REPO = Path(__file__).resolve().parents[2]
GPU_PYTHON = os.environ.get("ORTPROV_GPU_PYTHON", "")
MODEL = REPO / "provisioner" / "verify" / "models" / "check.onnx"


def plain(python: str) -> subprocess.CompletedProcess[str]:
    """The user's script, run where only the wheels' CUDA libraries exist."""
    argv = [
        str(REPO / "tests" / "gpu" / "hide_cuda.sh"),
        python,
        str(REPO / "tests/gpu/plain_user_script.py"),
        str(MODEL),
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(
    not GPU_PYTHON or os.geteuid() != 0 or not shutil.which("unshare"), reason="needs the GPU venv and root"
)
def test_plain_code_runs_on_cuda_with_the_hook_and_on_the_cpu_without() -> None:
    pth = next(Path(GPU_PYTHON).parent.parent.glob("lib/python*/site-packages/ortprov-loader.pth"))
    with_hook = plain(GPU_PYTHON)
    assert "providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']" in with_hook.stdout, with_hook.stderr
    loaded = [line for line in with_hook.stdout.splitlines() if line.startswith("loaded:")]
    assert loaded and all("/site-packages/nvidia/" in line for line in loaded), loaded
    assert any("libcudnn" in line for line in loaded)  # the convolutions reached cuDNN
    off = pth.with_suffix(".off")
    pth.rename(off)
    try:
        without = plain(GPU_PYTHON)
    finally:
        off.rename(pth)
    assert "providers: ['CPUExecutionProvider']" in without.stdout, without.stdout + without.stderr
