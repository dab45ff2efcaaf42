"""`ortprov detect` on a real NVIDIA host (on the GPU machine: pytest -m gpu tests/gpu/test_detect_gpu.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from provisioner.facts import HostFacts

pytestmark = pytest.mark.gpu
REPO = Path(__file__).resolve().parents[2]


def test_detect_reads_the_real_driver_and_gpus() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "provisioner", "detect", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    facts = HostFacts.from_dict(json.loads(result.stdout))
    assert facts.driver.present and facts.driver.source == "nvml" and facts.driver.error is None
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?", facts.driver.version or "")
    assert re.fullmatch(r"\d+\.\d", facts.driver.cuda_version or "")
    assert facts.gpus and all(re.fullmatch(r"\d+\.\d", gpu.compute_capability or "") for gpu in facts.gpus)
    assert all((gpu.memory_mib or 0) > 1000 and gpu.uuid for gpu in facts.gpus)
    assert any(hit.library == "cuda" for hit in facts.libraries), "libcuda.so.1 must be findable"
    if facts.torch is not None and facts.torch.cuda_version:
        assert any(hit.source == "torch" for hit in facts.libraries), "torch's CUDA wheels were not found"
