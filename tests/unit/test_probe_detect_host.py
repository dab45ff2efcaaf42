"""detect_host assembles every probe: an H100-like container built from the narrowest fakes (NVML functions,
a temporary "/" and site-packages), with the real child probe, ldconfig and platform readers."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from provisioner.facts import HostFacts
from provisioner.probe import detect_host
from tests.support.fake_nvml import FakeNvml
from tests.unit.test_probe_nvml import h100
from tests.unit.test_probe_packages import CPU_BUILD_INFO, TORCH_VERSION_PY, install_dist

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_h100_container_like_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    (root / "usr/local/nvidia/lib64").mkdir(parents=True)
    (root / "usr/local/nvidia/lib64/libcuda.so.1").write_bytes(b"\x7fELF")
    (root / ".dockerenv").write_text("")
    site = tmp_path / "site-packages"
    install_dist(
        site,
        "torch",
        "2.11.0+cu130",
        {"torch/version.py": TORCH_VERSION_PY},
        requires=["nvidia-cuda-runtime==13.0.96", "nvidia-cudnn-cu13==9.13.0.50"],
    )
    install_dist(site, "nvidia-cuda-runtime", "13.0.96", {"nvidia/cu13/lib/libcudart.so.13": "x"})
    install_dist(site, "nvidia-cudnn-cu13", "9.13.0.50", {"nvidia/cudnn/lib/libcudnn.so.9": "x"})
    install_dist(site, "onnxruntime", "1.30.0", {"onnxruntime/capi/build_and_package_info.py": CPU_BUILD_INFO})
    monkeypatch.setenv("PYTHONPATH", str(site))
    env = {"NVIDIA_VISIBLE_DEVICES": "0", "LD_LIBRARY_PATH": str(root / "usr/local/nvidia/lib64")}

    facts = detect_host(python=sys.executable, root=root, env=env, nvml=FakeNvml([h100()]))

    assert (facts.driver.version, facts.driver.cuda_version, facts.driver.source) == ("580.159.04", "13.0", "nvml")
    assert [(g.name, g.compute_capability, g.visible) for g in facts.gpus] == [("NVIDIA H100 80GB HBM3", "9.0", True)]
    assert facts.environment.container == "docker" and facts.environment.nvidia_visible_devices == "0"
    assert facts.torch is not None and facts.torch.cuda_version == "13.0"
    assert ("onnxruntime", "1.30.0") in [(d.name, d.version) for d in facts.onnxruntime]
    sources: dict[tuple[str, str | None], str] = {}
    for hit in facts.libraries:  # the first place found (this machine's own ld.so cache may add more)
        sources.setdefault((hit.library, hit.major), hit.source)
    assert sources[("cudart", "13")] == "torch" and sources[("cudnn", "9")] == "torch"
    assert sources[("cuda", "1")] == "ld_library_path"
    assert facts.captured_by.startswith("ortprov ") and facts.probe_errors == ()
    assert HostFacts.from_dict(json.loads(facts.to_json())) == facts
