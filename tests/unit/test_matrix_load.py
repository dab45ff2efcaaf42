"""Loading the shipped matrix, preferring a valid and current cached copy, and the query helpers."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest

from provisioner.matrix.load import clear_memo, load_matrix, shipped_dir
from provisioner.matrix.query import (
    builds_for,
    cuda_major,
    cuda_release,
    cuda_releases_for_major,
    tensorrt_release,
    wheels_for,
    wheels_for_library,
)
from provisioner.versions import ort_matcher

if TYPE_CHECKING:
    from pathlib import Path

FILES = ("onnxruntime-gpu.yaml", "cuda.yaml", "nvidia-wheels.yaml", "tensorrt.yaml")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ORTPROV_CACHE_DIR", str(cache))
    clear_memo()
    return cache


def copy_shipped(target: Path, date: str | None = None, drop_version: str | None = None) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        text = (shipped_dir() / name).read_text()
        if date:
            text = text.replace("date: '2026-11-22'", f"date: '{date}'")
        if drop_version and name == "onnxruntime-gpu.yaml":
            import yaml

            head = text.split("schema_version:")[0]
            data = yaml.safe_load(text)
            data["builds"] = [b for b in data["builds"] if b["ort_version"] != drop_version]
            text = head + yaml.safe_dump(data, sort_keys=False)
        (target / name).write_text(text)


def test_every_pypi_release_from_1_14_has_a_confirmed_build() -> None:
    matrix = load_matrix()
    assert matrix.origin == "shipped"
    pypi = {b.ort_version for b in matrix.builds if b.index_url is None}
    assert {"1.14.0", "1.18.1", "1.20.0", "1.27.0", "1.31.1"} <= pypi
    assert all(b.confirmed for b in matrix.builds if b.index_url is None)
    assert all(not b.confirmed and b.notes for b in matrix.builds if b.index_url is not None)


def test_facts_read_from_the_1_31_1_wheel() -> None:
    (build,) = [b for b in builds_for(load_matrix(), "1.31.1") if b.index_url is None]
    assert (build.cuda_version, build.cudnn_version, build.tensorrt_version) == ("13.0", "9", "10")
    assert set(build.libraries_linked) == {
        "libcublasLt.so.13",
        "libcublas.so.13",
        "libcurand.so.10",
        "libcudart.so.13",
        "libcuda.so.1",
    }
    assert "libcudnn.so.9" in build.libraries_lazy and "libcufft.so.12" in build.libraries_lazy
    assert build.extras == ("cuda", "cudnn") and build.preload_dlls
    assert "nvidia-cudnn-cu13~=9.0" in build.requirements and "nvidia-cublas~=13.0" in build.requirements
    assert {p.platform: p.glibc_min for p in build.platforms} == {
        "linux-x86_64": "2.28",
        "linux-aarch64": "2.34",
        "windows-amd64": None,
    }
    assert "3.14t" in build.python


def test_builds_for_filters_by_spec_and_cuda() -> None:
    matrix = load_matrix()
    cuda11 = builds_for(matrix, "1.20", 11)
    assert cuda11 and all(b.cuda_major == 11 and b.ort_version.startswith("1.20.") for b in cuda11)
    assert all(b.index_url for b in cuda11)  # CUDA 11 builds of 1.20 live on ONNX Runtime's feed
    ranged = builds_for(matrix, ">=1.27,<1.29")
    assert {b.ort_version for b in ranged} == {"1.27.0", "1.28.0"}
    assert [b.ort_version for b in builds_for(matrix, cuda="13.0")][0] == "1.31.1"  # newest first
    assert builds_for(matrix, "9.9") == ()


def test_ort_spec_matches() -> None:
    assert ort_matcher("1.20")("1.20.2") and not ort_matcher("1.2")("1.20.0")
    assert ort_matcher("~=1.22.0")("1.22.0") and not ort_matcher("==1.22.1")("1.22.0")


def test_cuda_queries() -> None:
    matrix = load_matrix()
    assert cuda_release(matrix, "12.4.1").min_driver_linux == "550.54.14"  # type: ignore[union-attr]
    assert cuda_release(matrix, "12.7") is None
    thirteen = cuda_major(matrix, "13.0")
    assert thirteen is not None and thirteen.pip_packages["cudart"] == "nvidia-cuda-runtime"  # type: ignore[index]
    assert "6.1" not in cuda_release(matrix, "13.0").compute_capabilities  # type: ignore[union-attr]
    assert "12.0" in cuda_release(matrix, "12.8").compute_capabilities  # type: ignore[union-attr]
    assert [r.version for r in cuda_releases_for_major(matrix, 13)] == ["13.0", "13.1", "13.2", "13.3", "13.4", "13.5"]


def test_wheel_queries_map_versions_to_cuda_minors() -> None:
    matrix = load_matrix()
    runtime = {w.version: w.cuda_version for w in wheels_for(matrix, "nvidia-cuda-runtime-cu12")}
    assert runtime["12.4.127"] == "12.4" and runtime["12.9.79"] == "12.9"
    assert all(w.cuda_version == "13" for w in wheels_for(matrix, "nvidia-cudnn-cu13"))
    assert {w.cuda_version for w in wheels_for_library(matrix, "cublas", "12.8")} == {"12.8"}
    # a build made against 10.9 gets the newest installable TensorRT 10 (ABI is kept within a major)
    assert tensorrt_release(matrix, "10.9", 12).packages == ("tensorrt-cu12-libs==10.16.1.11",)  # type: ignore[union-attr]


def test_valid_current_cache_is_preferred(cache_dir: Path) -> None:
    copy_shipped(cache_dir / "matrices", date="2026-12-01")
    matrix = load_matrix()
    assert matrix.origin == str(cache_dir / "matrices") and matrix.date == "2026-12-01"
    assert load_matrix(use_cache=False).origin == "shipped"


def test_older_cache_is_ignored_with_a_notice(cache_dir: Path) -> None:
    copy_shipped(cache_dir / "matrices", date="2025-01-01")
    matrix = load_matrix()
    assert matrix.origin == "shipped"
    assert any("older (2025-01-01)" in n for n in matrix.notices)


def test_invalid_cache_is_ignored_with_a_notice(cache_dir: Path) -> None:
    copy_shipped(cache_dir / "matrices", date="2026-12-01")
    path = cache_dir / "matrices" / "cuda.yaml"
    path.write_text(path.read_text().replace("min_driver_linux: 550.54.14", "min_driver_linux: five-fifty"))
    matrix = load_matrix()
    assert matrix.origin == "shipped"
    assert any("ignored the cached matrix" in n and "min_driver_linux 'five-fifty'" in n for n in matrix.notices)


def test_second_load_of_edited_data_uses_the_compiled_copy(tmp_path: Path, cache_dir: Path) -> None:
    data = tmp_path / "m"
    copy_shipped(data, date="2026-12-02")  # differs from the shipped YAML: not covered by compiled.json
    first = load_matrix(data)
    compiled = list((cache_dir / "compiled").glob("matrix-*.json"))
    assert len(compiled) == 1
    clear_memo()
    again = load_matrix(data)
    assert again == first and again.date == "2026-12-02"  # rebuilt from JSON, identical records


def test_tampered_compiled_copy_is_not_trusted(tmp_path: Path, cache_dir: Path) -> None:
    data = tmp_path / "m"
    copy_shipped(data, date="2026-12-02")
    load_matrix(data)
    (compiled,) = (cache_dir / "compiled").glob("matrix-*.json")
    compiled.write_text(compiled.read_text().replace('"digest": "', '"digest": "x'))
    clear_memo()
    assert load_matrix(data).date == "2026-12-02"  # parsed from the YAML again


def test_unreadable_directory_copy(tmp_path: Path) -> None:
    target = tmp_path / "m"
    shutil.copytree(shipped_dir(), target, ignore=shutil.ignore_patterns("*.py"))
    assert load_matrix(target).origin == str(target)


def test_shipped_compiled_copy_matches_the_yaml() -> None:
    """matrices/compiled.json must be regenerated whenever the YAML changes (compile_directory)."""
    import json

    from provisioner.matrix.load import SHIPPED_COMPILED, digest_of
    from provisioner.matrix.model import FILE_NAMES

    texts = {name: (shipped_dir() / name).read_text(encoding="utf-8") for name in FILE_NAMES}
    compiled = json.loads((shipped_dir() / SHIPPED_COMPILED).read_text())
    assert compiled["digest"] == digest_of(texts), "run compile_directory('matrices') after editing the YAML"


def test_first_load_uses_the_shipped_compiled_copy(cache_dir: Path) -> None:
    import sys

    sys.modules.pop("yaml", None)
    matrix = load_matrix(use_cache=False)
    assert "yaml" not in sys.modules  # no YAML parsing needed
    assert not (cache_dir / "compiled").exists()
    assert matrix.builds
