"""`ortprov detect` run for real, as a user runs it (`python -m provisioner detect ...` in a subprocess),
on this GPU-less machine, against this interpreter, another venv, and interpreters that hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from provisioner.facts import HostFacts
from provisioner.standalone.packages_probe import HELLO
from tests.support.cli import run_ortprov

REPO = Path(__file__).resolve().parents[2]


def has_nvidia_driver() -> bool:
    return Path("/proc/driver/nvidia/version").exists()


@pytest.mark.skipif(has_nvidia_driver(), reason="this host has an NVIDIA driver")
def test_detect_without_driver_says_so_and_exits_0() -> None:
    result = run_ortprov("detect")
    assert result.returncode == 0, result.stderr
    assert "no NVIDIA driver found" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert f"python:      {'.'.join(map(str, sys.version_info[:3]))}" in result.stdout
    assert "onnxruntime 1." in result.stdout  # the dev venv has CPU onnxruntime


def test_detect_json_parses_and_round_trips() -> None:
    result = run_ortprov("detect", "--json", "--label", "dev box")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # nothing but JSON on stdout
    assert data["label"] == "dev box"
    facts = HostFacts.from_dict(data)
    assert facts.to_dict() == data
    assert facts.captured_by.startswith("ortprov ")
    assert facts.python is not None and facts.python.executable == sys.executable
    import importlib.metadata

    ort_version = importlib.metadata.version("onnxruntime")
    assert [(d.name, d.version) for d in facts.onnxruntime] == [("onnxruntime", ort_version)]
    if not has_nvidia_driver():
        assert not facts.driver.present and facts.gpus == ()


def test_detect_probes_another_venv(tmp_path: Path) -> None:
    other = Path("/root/.pyenv/versions/3.12.1/bin/python3")
    base = str(other) if other.exists() else sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", str(tmp_path / "other")], check=True, timeout=120)
    python = tmp_path / "other/bin/python"
    expected = subprocess.run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    result = run_ortprov("detect", "--json", "--python", str(python))
    assert result.returncode == 0, result.stderr
    facts = HostFacts.from_dict(json.loads(result.stdout))
    assert facts.python is not None
    assert facts.python.version == expected
    assert facts.python.is_venv and facts.python.prefix == str(tmp_path / "other")
    assert facts.onnxruntime == ()  # the new venv has none, unlike ortprov's own
    folder = run_ortprov("detect", "--python", str(tmp_path / "other"))  # a venv folder works too
    assert folder.returncode == 0 and f"python:      {expected}" in folder.stdout


@pytest.mark.skipif(os.name == "nt", reason="shell script interpreter")
def test_hanging_python_times_out_cleanly(tmp_path: Path) -> None:
    """Silent from the start: not a working Python (exit 2). A Python whose probe starts (it says hello) and
    then hangs, a stuck file system say: the facts of the host, and why the target's are missing."""
    silent = tmp_path / "silent"
    silent.write_text("#!/bin/sh\nsleep 60\n")
    silent.chmod(0o755)
    started = time.monotonic()
    refused = run_ortprov("detect", "--json", "--python", str(silent), "--timeout", "1")
    assert time.monotonic() - started < 20
    assert refused.returncode == 2 and json.loads(refused.stdout)["exit_code"] == 2  # --json: the error object
    assert "is not a working Python interpreter: it did not answer within 1 s (killed)" in refused.stderr
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho {HELLO}\nsleep 60\n")
    fake.chmod(0o755)
    started = time.monotonic()
    result = run_ortprov("detect", "--json", "--python", str(fake), "--timeout", "1")
    assert time.monotonic() - started < 20
    assert result.returncode == 0, result.stderr
    facts = HostFacts.from_dict(json.loads(result.stdout))
    assert facts.python is None
    assert f"package probe: {fake} did not answer within 1 s (killed)" in facts.probe_errors
    human = run_ortprov("detect", "--python", str(fake), "--timeout", "0.5")
    assert human.returncode == 0 and "did not answer within 0.5 s" in human.stdout


def test_bad_python_is_bad_input(tmp_path: Path) -> None:
    result = run_ortprov("detect", "--python", str(tmp_path / "nope/python"))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: --python ") and "does not exist" in result.stderr
    assert "hint: " in result.stderr and "Traceback" not in result.stderr


@pytest.mark.skipif(not Path("/usr/lib/python3.11/EXTERNALLY-MANAGED").exists(), reason="no PEP 668 system Python here")
def test_system_python_is_externally_managed() -> None:
    result = run_ortprov("detect", "--json", "--python", "/usr/bin/python3.11")
    facts = HostFacts.from_dict(json.loads(result.stdout))
    assert facts.python is not None and facts.python.externally_managed and not facts.python.is_venv
    human = run_ortprov("detect", "--python", "/usr/bin/python3.11")
    assert "externally managed (PEP 668)" in human.stdout


def test_detect_help_has_examples() -> None:
    result = run_ortprov("detect", "--help")
    assert result.returncode == 0
    for text in ("--json", "--python", "--timeout", "ortprov detect --json > host.json"):
        assert text in result.stdout
