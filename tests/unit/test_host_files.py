"""Every saved host file in tests/hosts loads, round-trips, and says what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provisioner.facts import HostFacts
from provisioner.userfiles import read_host_file

HOSTS = sorted((Path(__file__).resolve().parents[1] / "hosts").glob("*.json"))


def test_the_host_files_exist() -> None:
    names = {path.name for path in HOSTS}
    assert {
        "cpu-dev-machine.json",
        "windows-rtx3070-driver522-cuda11.8.json",
        "a100-driver535-container-no-cudnn.json",
        "linux-rtx3090.json",
        "windows-gtx1660super.json",
        "windows-cuda12.9-cpu-onnxruntime-only.json",
    } <= names


def as_saved(now: object, saved: object) -> object:
    """`now` (a file read and written again) less the keys the saved file lacks because an older ortprov wrote
    it, provided they hold their default (null): old host files keep loading as they were."""
    if isinstance(now, dict) and isinstance(saved, dict):
        return {k: as_saved(v, saved.get(k)) for k, v in now.items() if k in saved or v is not None}
    if isinstance(now, list) and isinstance(saved, list) and len(now) == len(saved):
        return [as_saved(a, b) for a, b in zip(now, saved, strict=True)]
    return now


@pytest.mark.parametrize("path", HOSTS, ids=[path.name for path in HOSTS])
def test_round_trip(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    facts = read_host_file(path)
    assert as_saved(facts.to_dict(), data) == data
    assert HostFacts.from_dict(json.loads(facts.to_json())) == facts
    assert facts.label, "every host file says what it is"
    if not facts.captured_by.startswith("ortprov "):
        assert "hand-made" in facts.label.lower(), "a file not captured by ortprov says it is hand-made"
    assert facts.platform.tag in ("linux-x86_64", "linux-aarch64", "windows-amd64")
    for hit in facts.libraries:
        assert hit.filename in hit.path.replace("\\", "/").rsplit("/", 1)[-1]


def test_seed_facts_are_what_the_reports_describe() -> None:
    hosts = {path.stem: read_host_file(path) for path in HOSTS}
    a100 = hosts["a100-driver535-container-no-cudnn"]
    assert a100.environment.container == "docker" and a100.driver.version == "535.104.12"
    assert not [hit for hit in a100.libraries if hit.library == "cudnn"]
    cpu_only = hosts["windows-cuda12.9-cpu-onnxruntime-only"]
    assert [(d.name, d.is_gpu) for d in cpu_only.onnxruntime] == [("onnxruntime", False)]
    assert cpu_only.driver.cuda_version == "12.9"
    rtx3070 = hosts["windows-rtx3070-driver522-cuda11.8"]
    assert {hit.source for hit in rtx3070.libraries if hit.library == "cudnn"} == {"torch"}
