"""`ortprov detect` on a real NVIDIA host (on the GPU machine: pytest -m gpu tests/gpu/test_detect_gpu.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from provisioner.facts import HostFacts
from tests.support.cli import cli_env, run_ortprov

pytestmark = pytest.mark.gpu
REPO = Path(__file__).resolve().parents[2]


def detect(cuda_visible_devices: str | None = None) -> HostFacts:
    """`ortprov detect --json` in a fresh process, with CUDA_VISIBLE_DEVICES unset or set to the value."""
    env = {key: value for key, value in cli_env().items() if key != "CUDA_VISIBLE_DEVICES"}
    if cuda_visible_devices is not None:
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible_devices
    result = run_ortprov("detect", "--json", env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return HostFacts.from_dict(json.loads(result.stdout))


def test_detect_reads_the_real_driver_and_gpus() -> None:
    facts = detect()
    assert facts.driver.present and facts.driver.source == "nvml" and facts.driver.error is None
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?", facts.driver.version or "")
    assert re.fullmatch(r"\d+\.\d", facts.driver.cuda_version or "")
    assert facts.gpus and all(re.fullmatch(r"\d+\.\d", gpu.compute_capability or "") for gpu in facts.gpus)
    assert all((gpu.memory_mib or 0) > 1000 and gpu.uuid for gpu in facts.gpus)
    assert any(hit.library == "cuda" for hit in facts.libraries), "libcuda.so.1 must be findable"
    if facts.torch is not None and facts.torch.cuda_version:
        assert any(hit.source == "torch" for hit in facts.libraries), "torch's CUDA wheels were not found"


def _cuda_count(env_value: str) -> int:
    """What the CUDA runtime itself sees (through torch, in a fresh process)."""
    code = "import torch; print(torch.cuda.device_count())"
    env = os.environ | {"CUDA_VISIBLE_DEVICES": env_value}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().splitlines()[-1])


def test_visibility_agrees_with_the_cuda_runtime() -> None:
    """CUDA_VISIBLE_DEVICES values, including a MIG UUID no GPU has: detect counts what CUDA counts."""
    pytest.importorskip("torch")
    uuid = str(detect().gpus[0].uuid)
    values = ["0", "", "-1", "0,-1", "7", uuid[:12], uuid, "MIG-00000000-0000-0000-0000-000000000000", f"{uuid},0"]
    seen = {value: (sum(gpu.visible for gpu in detect(value).gpus), _cuda_count(value)) for value in values}
    assert all(ours == cuda for ours, cuda in seen.values()), seen


def test_the_cuda_driver_names_the_gpus_nvml_reads() -> None:
    """The CUDA driver query (a child process, ctypes on the real libcuda.so.1) finds NVML's GPUs by PCI bus id."""
    from provisioner.probe import cuda_order
    from provisioner.probe.nvml import read_driver

    gpus = read_driver(env={}).gpus
    env = {key: value for key, value in os.environ.items() if key != "CUDA_VISIBLE_DEVICES"}
    bus_ids, why = cuda_order.cuda_bus_ids(env)
    assert why is None and bus_ids is not None and len(bus_ids) == len(gpus)
    assert {cuda_order.bus_id_key(b) for b in bus_ids} == {cuda_order.bus_id_key(g.pci_bus_id) for g in gpus}
    mapped = cuda_order.visible_by_bus_id(gpus, bus_ids)
    assert mapped is not None and all(gpu.visible for gpu in mapped)
    assert cuda_order.cuda_bus_ids(env | {"CUDA_VISIBLE_DEVICES": "-1"}) == ((), None)
