"""The same facts as a host file and as a log give the same finding codes (issue 11), over the seed scenarios.

A host file (tests/hosts/*.json, as `ortprov detect --json` saves one) goes through the host rules
(`doctor.diagnose`); the same facts written the way users paste them (the `nvidia-smi` header, the GPU's name, `pip
list` rows, the container, the driver's absence), to a real file, go through `doctor --log`'s path (`analyze_log`).
Both meet in the shared fact rules (`rules.driver_findings`, `package_findings`, `driver_vs_build`). Then each seed
report's own log (tests/data/logs/seed*.log, from /work/shared/seeds) added to its host's facts: the log gives the
host's codes first.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from provisioner import doctor
from provisioner.doctor import analyze_log
from provisioner.doctor.fixes import Fixes
from provisioner.doctor.rules import driver_findings, driver_vs_build, package_findings
from provisioner.matrix.load import load_matrix
from provisioner.userfiles import read_host_file
from provisioner.verify.report import Timing
from tests.unit.test_doctor import report

if TYPE_CHECKING:
    from provisioner.facts import HostFacts

HOSTS = Path(__file__).resolve().parents[1] / "hosts"
LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
MATRIX = load_matrix(use_cache=False)


def as_log(facts: HostFacts) -> str:
    """The host's facts as a user pastes them: what nvidia-smi, pip list and the shell print."""
    lines = ["Windows 10 x64" if facts.platform.os == "windows" else f"Linux {facts.platform.arch} (Ubuntu 22.04)"]
    if facts.environment.container:
        lines.append(f"running in a {facts.environment.container} container")
    if facts.driver.present:
        cuda = f"   CUDA Version: {facts.driver.cuda_version}" if facts.driver.cuda_version else ""
        lines.append(f"| NVIDIA-SMI {facts.driver.version}   Driver Version: {facts.driver.version}{cuda} |")
        lines += [f"|   0  {gpu.name}   On  | 00000000:01:00.0 Off |" for gpu in facts.gpus]
    else:
        lines.append("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
    lines += ["$ pip list", "Package            Version", "------------------ -------"]
    lines += [f"{dist.name:18} {dist.version}" for dist in facts.onnxruntime]
    return "\n".join(lines) + "\n"


def fact_codes(facts: HostFacts) -> list[str]:
    """The shared fact rules on a host's facts, as host.py calls them."""
    fixes = Fixes()
    found = driver_findings(facts.driver, facts.environment, fixes) + package_findings(facts.onnxruntime, fixes)
    gpu = next((d for d in facts.onnxruntime if d.is_gpu), None)
    if gpu is not None and gpu.cuda_version and facts.driver.cuda_version:
        found += driver_vs_build(gpu, facts.driver.cuda_version, facts.driver.version, fixes)
    return [f.code for f in found]


def log_codes(path: Path) -> list[str]:
    return [f.code for f in analyze_log(path.read_text(encoding="utf-8"), matrix=MATRIX)]


HOST_FILES = sorted(p.name for p in HOSTS.glob("*.json"))


@pytest.mark.parametrize("name", HOST_FILES)
def test_a_host_file_and_its_facts_as_a_log_give_the_same_codes(name: str, tmp_path: Path):
    facts = read_host_file(HOSTS / name)
    log = tmp_path / "pasted.log"
    log.write_text(as_log(facts), encoding="utf-8")
    from_log = log_codes(log)
    assert from_log == fact_codes(facts), log.read_text()
    # and the host rules, without the library probes (a pasted nvidia-smi and pip list show no loader state)
    host_codes = [f.code for f in doctor.diagnose(dataclasses.replace(facts, libraries=()), matrix=MATRIX)]
    assert [c for c in host_codes if c in from_log] == from_log


def test_the_comparison_can_fail():
    """A log that states another fact (the CPU package beside the GPU one) must not give the host's codes."""
    facts = read_host_file(HOSTS / "a100-driver535-container-no-cudnn.json")
    assert fact_codes(facts) == []
    text = as_log(facts) + "onnxruntime        1.19.2\n"
    assert [f.code for f in analyze_log(text, matrix=MATRIX)] == ["cpu-and-gpu-installed"]


SLOW = dataclasses.replace(report().checks[0], gpu=Timing(0.9, 0.5, 2.57, 20), cpu=Timing(0.1, 0.1, 1.18, 20))

# (host file, seed log, the verify report the host path has, the codes both give)
SEEDS = [
    ("a100-driver535-container-no-cudnn.json", "seed002-linux-libcudnn9.log", None, ["cudnn-missing"]),
    ("windows-cuda12.9-cpu-onnxruntime-only.json", "seed003-cpu-package-windows.log", None, ["cpu-package-only"]),
    ("linux-rtx3090.json", "seed001-gpu-slower.log", SLOW, ["gpu-slower-than-cpu"]),
    ("windows-gtx1660super.json", "seed001-gpu-slower.log", SLOW, ["gpu-slower-than-cpu"]),
]


@pytest.mark.parametrize(("host", "seed", "timings", "expected"), SEEDS)
def test_a_seed_report_as_host_file_and_as_log(
    host: str, seed: str, timings: object, expected: list[str], tmp_path: Path
):
    """Seed 000 is not here: its host file shows cuDNN 8 found only in torch/lib (library-not-on-path), its log the
    zlibwapi.dll cuDNN 8 needs (zlibwapi-missing): two different facts of one machine, not one fact twice."""
    facts = read_host_file(HOSTS / host)
    verify = dataclasses.replace(report(), checks=(timings,)) if timings is not None else None
    host_codes = [f.code for f in doctor.diagnose(facts, verify, matrix=MATRIX)]
    log = tmp_path / seed
    log.write_text(as_log(facts) + (LOGS / seed).read_text(encoding="utf-8"), encoding="utf-8")
    from_log = log_codes(log)
    assert host_codes == expected
    # the log may show more (an earlier attempt's error) and has all of the host's codes; its first code is the
    # host's unless the log proves the GPU build loaded its CUDA provider (seed 003's earlier attempt failed on
    # cublas64_12.dll): a loaded CUDA provider proves the GPU package, so the CPU-only verdict is never first then
    # (issue 22), and the missing library is
    assert set(expected) <= set(from_log), from_log
    proven = "Failed to create CUDAExecutionProvider" in log.read_text(encoding="utf-8")
    assert from_log[0] == ("cuda-library-missing" if proven and expected == ["cpu-package-only"] else expected[0])
