"""Validation of matrices/*.yaml: broken copies of the shipped files are rejected (file, entry, reason)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from provisioner.errors import DataError
from provisioner.matrix.load import clear_memo, load_matrix, shipped_dir


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORTPROV_CACHE_DIR", str(tmp_path / "cache"))
    clear_memo()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    target = tmp_path / "matrices"
    target.mkdir()
    for name in ("onnxruntime-gpu.yaml", "cuda.yaml", "nvidia-wheels.yaml", "tensorrt.yaml"):
        shutil.copy(shipped_dir() / name, target / name)
    return target


def edit(directory: Path, name: str, change) -> None:  # type: ignore[no-untyped-def]
    path = directory / name
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def problems_of(directory: Path) -> list[str]:
    with pytest.raises(DataError) as info:
        load_matrix(directory)
    return [str(p) for p in info.value.problems]  # type: ignore[attr-defined]


def build_index(data: dict, version: str, pypi: bool = True) -> int:
    return next(
        i for i, b in enumerate(data["builds"]) if b["ort_version"] == version and (b.get("index_url") is None) == pypi
    )


def test_shipped_data_is_valid() -> None:
    matrix = load_matrix(shipped_dir())
    assert matrix.schema_version == 1 and re.fullmatch(r"\d{4}-\d{2}-\d{2}", matrix.date)
    assert len(matrix.builds) >= 40


def test_missing_source_names_file_entry_reason(data_dir: Path) -> None:
    edit(data_dir, "onnxruntime-gpu.yaml", lambda d: d["builds"][build_index(d, "1.20.0")].update(sources=[]))
    (problem,) = problems_of(data_dir)
    assert problem.startswith("onnxruntime-gpu.yaml: builds[")
    assert "(1.20.0, CUDA 12.2)" in problem and "has no source" in problem


def test_bad_version_string(data_dir: Path) -> None:
    edit(
        data_dir,
        "onnxruntime-gpu.yaml",
        lambda d: d["builds"][build_index(d, "1.22.0")].update(cuda_version="12.x"),
    )
    (problem,) = problems_of(data_dir)
    assert "onnxruntime-gpu.yaml" in problem and "1.22.0" in problem
    assert "cuda_version '12.x' is not a CUDA minor" in problem


def test_unquoted_version_becomes_a_float_and_is_rejected(data_dir: Path) -> None:
    path = data_dir / "cuda.yaml"
    path.write_text(path.read_text().replace("- version: '12.4'", "- version: 12.4", 1))
    problems = problems_of(data_dir)
    assert any(p.startswith("cuda.yaml: releases[") and "expected str, got 12.4" in p for p in problems)


def test_build_whose_cuda_version_has_no_release(data_dir: Path) -> None:
    edit(
        data_dir,
        "onnxruntime-gpu.yaml",
        lambda d: d["builds"][build_index(d, "1.24.1")].update(cuda_version="12.7"),
    )
    (problem,) = problems_of(data_dir)
    assert "1.24.1, CUDA 12.7" in problem and "cuda_version 12.7 has no CUDA release in cuda.yaml" in problem


def test_duplicate_build(data_dir: Path) -> None:
    def dup(d: dict) -> None:
        d["builds"].append(dict(d["builds"][build_index(d, "1.31.1")]))

    edit(data_dir, "onnxruntime-gpu.yaml", dup)
    (problem,) = problems_of(data_dir)
    assert "onnxruntime-gpu.yaml: builds[" in problem and "duplicate of builds[" in problem and "1.31.1" in problem


def test_unknown_platform(data_dir: Path) -> None:
    edit(
        data_dir,
        "onnxruntime-gpu.yaml",
        lambda d: d["builds"][build_index(d, "1.31.1")]["platforms"].append({"platform": "macos-arm64"}),
    )
    (problem,) = problems_of(data_dir)
    assert "unknown platform 'macos-arm64'" in problem and "1.31.1" in problem


def test_cudnn_major_that_does_not_exist_for_the_cuda_major(data_dir: Path) -> None:
    edit(
        data_dir,
        "onnxruntime-gpu.yaml",
        lambda d: d["builds"][build_index(d, "1.30.0")].update(cudnn_version="8"),
    )
    (problem,) = problems_of(data_dir)
    assert "1.30.0, CUDA 13.0" in problem and "cuDNN 8 does not exist for CUDA 13" in problem


def test_linux_platform_without_glibc_floor(data_dir: Path) -> None:
    def drop(d: dict) -> None:
        for p in d["builds"][build_index(d, "1.29.0")]["platforms"]:
            p.pop("glibc_min", None) if p["platform"] == "linux-aarch64" else None

    edit(data_dir, "onnxruntime-gpu.yaml", drop)
    (problem,) = problems_of(data_dir)
    assert "linux-aarch64 needs a glibc_min" in problem


def test_unconfirmed_build_needs_notes(data_dir: Path) -> None:
    edit(
        data_dir,
        "onnxruntime-gpu.yaml",
        lambda d: d["builds"][build_index(d, "1.20.0", pypi=False)].pop("notes"),
    )
    (problem,) = problems_of(data_dir)
    assert "is not confirmed from the wheel and has no notes" in problem


def test_wheel_mapped_to_unknown_cuda_minor(data_dir: Path) -> None:
    def bad(d: dict) -> None:
        w = next(w for w in d["wheels"] if w["package"] == "nvidia-cuda-runtime-cu12" and w["version"] == "12.4.127")
        w["cuda_version"] = "12.7"

    edit(data_dir, "nvidia-wheels.yaml", bad)
    (problem,) = problems_of(data_dir)
    assert problem.startswith("nvidia-wheels.yaml: wheels[") and "nvidia-cuda-runtime-cu12 12.4.127" in problem
    assert "cuda_version '12.7' has no CUDA release" in problem


def test_wheel_under_the_wrong_cuda_major_package(data_dir: Path) -> None:
    def bad(d: dict) -> None:
        w = next(w for w in d["wheels"] if w["package"] == "nvidia-cublas-cu12")
        w["cuda_version"] = "13.0"

    edit(data_dir, "nvidia-wheels.yaml", bad)
    (problem,) = problems_of(data_dir)
    assert "CUDA 13's cublas is nvidia-cublas, not nvidia-cublas-cu12" in problem


def test_tensorrt_version_unknown_to_tensorrt_yaml(data_dir: Path) -> None:
    edit(
        data_dir,
        "onnxruntime-gpu.yaml",
        lambda d: d["builds"][build_index(d, "1.22.0")].update(tensorrt_version="10.99"),
    )
    (problem,) = problems_of(data_dir)
    assert "no release in tensorrt.yaml serves tensorrt_version 10.99 for CUDA 12" in problem


def test_header_problems(data_dir: Path) -> None:
    edit(data_dir, "tensorrt.yaml", lambda d: d.update(schema_version=2))
    edit(data_dir, "cuda.yaml", lambda d: d.pop("date"))
    problems = problems_of(data_dir)
    assert any(p.startswith("tensorrt.yaml: schema_version: is 2") for p in problems)
    assert any(p.startswith("cuda.yaml: date:") for p in problems)


def test_malformed_yaml_and_missing_file(data_dir: Path) -> None:
    (data_dir / "tensorrt.yaml").write_text("releases: [unclosed\n")
    (data_dir / "nvidia-wheels.yaml").unlink()
    problems = problems_of(data_dir)
    assert any(p.startswith("tensorrt.yaml: (file): is not valid YAML") for p in problems)
    assert "nvidia-wheels.yaml: (file): is missing" in problems


def test_missing_required_field(data_dir: Path) -> None:
    edit(data_dir, "cuda.yaml", lambda d: d["releases"][0].pop("min_driver_linux"))
    (problem,) = problems_of(data_dir)
    assert problem.startswith("cuda.yaml: releases[0] (11.0)") and "missing required key 'min_driver_linux'" in problem


def test_edited_yaml_is_revalidated_not_served_from_the_compiled_copy(data_dir: Path) -> None:
    assert load_matrix(data_dir).builds  # compiles a JSON copy into the cache dir
    clear_memo()
    edit(data_dir, "onnxruntime-gpu.yaml", lambda d: d["builds"][0].update(python=["2.7"]))
    (problem,) = problems_of(data_dir)
    assert "python '2.7' is not like '3.12'" in problem


def _wheel(d: dict, package: str, version: str) -> dict:
    return next(w for w in d["wheels"] if w["package"] == package and w["version"] == version)


def test_wheel_with_an_unknown_platform_tag(data_dir: Path) -> None:
    def bad(d: dict) -> None:
        _wheel(d, "nvidia-cublas-cu12", "12.9.1.4")["platforms"].append("win_amd64")

    edit(data_dir, "nvidia-wheels.yaml", bad)
    (problem,) = problems_of(data_dir)
    assert problem.startswith("nvidia-wheels.yaml: wheels[") and "nvidia-cublas-cu12 12.9.1.4" in problem
    assert "unknown platform 'win_amd64' (known: linux-x86_64, linux-aarch64, windows-amd64)" in problem


def test_wheel_platform_twice_and_glibc_floor_without_linux(data_dir: Path) -> None:
    def bad(d: dict) -> None:
        _wheel(d, "nvidia-cublas-cu12", "12.9.1.4")["platforms"].append("linux-x86_64")
        _wheel(d, "nvidia-cudnn-cu11", "8.9.5.29").update(glibc_min="2.17")  # a Windows-only version

    edit(data_dir, "nvidia-wheels.yaml", bad)
    text = "\n".join(problems_of(data_dir))
    assert "nvidia-cublas-cu12 12.9.1.4): lists a platform twice" in text
    assert "nvidia-cudnn-cu11 8.9.5.29): has a glibc_min but no Linux platform" in text


def test_shipped_wheels_record_their_platforms() -> None:
    wheels = {(w.package, w.version): w for w in load_matrix(shipped_dir()).library_wheels}
    assert all(w.platforms for w in wheels.values())
    assert wheels["nvidia-cublas-cu12", "12.9.3.13"].platforms == ("linux-x86_64", "linux-aarch64")
    assert wheels["nvidia-cudnn-cu11", "8.9.6.50"].platforms == ("linux-x86_64",)
    assert "windows-amd64" in wheels["nvidia-cublas-cu12", "12.9.1.4"].platforms


def test_derive_wheels_reads_platforms_from_wheel_file_names() -> None:
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "bin" / "derive_wheels.py"  # maintainer script
    spec = importlib.util.spec_from_file_location("derive_wheels", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    platforms_of = module.platforms_of
    files = [
        "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl",
        "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux_2_27_x86_64.whl",
        "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux_2_28_aarch64.whl",
        "nvidia_cudnn_cu12-9.1.0.70-py3-none-win_amd64.whl",
        "nvidia_cudnn_cu12-9.1.0.70-py3-none-win_arm64.whl",
        "nvidia-cudnn-cu12-9.1.0.70.tar.gz",
    ]
    assert platforms_of(files) == (["linux-x86_64", "linux-aarch64", "windows-amd64"], "2.28")
    assert platforms_of(["n-1.0-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl"]) == (["linux-x86_64"], "2.5")
    assert platforms_of(["n-1.0-py3-none-manylinux2014_sbsa.whl"]) == (["linux-aarch64"], "2.17")
    assert platforms_of(["n-1.0-py3-none-win_amd64.whl", "n-1.0.tar.gz"]) == (["windows-amd64"], None)
    assert platforms_of(["n-1.0.tar.gz", "n-1.0-py3-none-win_arm64.whl"]) == ([], None)
    assert platforms_of(["n-1.0-py3-none-any.whl"]) == (["linux-x86_64", "linux-aarch64", "windows-amd64"], None)


def test_cuda_errors_are_validated(data_dir: Path) -> None:
    def break_errors(d: dict) -> None:
        d["errors"][0]["name"] = "out of memory"
        d["errors"][1]["number"] = d["errors"][2]["number"]
        d["errors"][3]["sources"] = []

    edit(data_dir, "cuda.yaml", break_errors)
    problems = problems_of(data_dir)
    assert any("errors[0] (out of memory)" in p and "is not a cudaError_t name" in p for p in problems)
    assert any(p.startswith("cuda.yaml: errors[2]") and "duplicate of errors[1]" in p for p in problems)
    assert any("errors[3]" in p and "has no source" in p for p in problems)


def test_a_copy_written_before_cuda_errors_existed_still_loads(data_dir: Path) -> None:
    edit(data_dir, "cuda.yaml", lambda d: d.pop("errors"))
    matrix = load_matrix(data_dir)
    assert matrix.cuda_errors == () and matrix.builds
