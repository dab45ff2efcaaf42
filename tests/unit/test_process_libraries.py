"""The CUDA libraries a process will load, wherever they come from (conda records, torch/lib, LD_LIBRARY_PATH, the
ld.so cache, Windows' search order), their CUDA major, and the planner's answer to them (planner/process.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from provisioner.errors import NoCompatiblePlan
from provisioner.facts import LibraryHit
from provisioner.matrix.load import load_matrix
from provisioner.plan import Request
from provisioner.planner import make_plan
from provisioner.planner.process import process_libraries
from provisioner.probe import libraries
from tests.unit.matrix_fixtures import host

if TYPE_CHECKING:
    from pathlib import Path


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    return path


@pytest.mark.parametrize(
    ("name", "version", "build", "depends", "expected"),
    [
        ("pytorch", "2.7.1", "cuda126_generic_py312_h7a1b2c3_200", [], 12),
        ("pytorch", "2.0.1", "cuda118_py310h1234567_0", [], 11),
        ("pytorch", "2.9.0", "cuda130_mkl_py313_h0000000_300", [], 13),
        ("pytorch", "2.7.1", "cpu_generic_py312_h0000000_0", [], None),
        ("cudnn", "9.10.1.4", "haad7af6_0", ["__glibc >=2.28,<3.0.a0", "cuda-version >=12,<13.0a0", "libcublas"], 12),
        ("libcublas", "12.9.1.4", "h9ab20c4_0", ["cuda-version >=12.9,<12.10.0a0"], 12),
        ("cudnn", "8.9.7.29", "hbc23b4c_3", ["cudatoolkit 11.*"], 11),
        ("cudatoolkit", "11.8.0", "h4ba93d1_13", [], 11),
        ("cuda-version", "13.0", "h2ba0bd4_3", [], 13),
        ("libzlib", "1.3.1", "hb9d3cd8_2", [], None),
    ],
)
def test_conda_cuda_major(name: str, version: str, build: str, depends: list[str], expected: int | None) -> None:
    assert libraries.conda_cuda_major(name, version, build, depends) == expected


def conda_prefix(root: Path) -> Path:
    """A conda env as conda-forge lays it out: cuda-cudart's file under targets/ with its lib/ link, cudnn in lib/,
    each named in a conda-meta record; and a stray library no record names."""
    prefix = root / "envs/torch"
    real = touch(prefix / "targets/x86_64-linux/lib/libcudart.so.12.8.90")
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib/libcudart.so.12").symlink_to(real)
    touch(prefix / "lib/libcudnn.so.9.10.1")
    (prefix / "lib/libcudnn.so.9").symlink_to(prefix / "lib/libcudnn.so.9.10.1")
    touch(prefix / "lib/libcurand.so.10")
    records = {
        "cuda-cudart-12.8.90-h5888daf_1.json": {
            "name": "cuda-cudart",
            "version": "12.8.90",
            "build": "h5888daf_1",
            "depends": ["cuda-version >=12.8,<12.9.0a0"],
            "files": ["lib/libcudart.so.12", "targets/x86_64-linux/lib/libcudart.so.12.8.90"],
        },
        "cudnn-9.10.1.4-haad7af6_0.json": {
            "name": "cudnn",
            "version": "9.10.1.4",
            "build": "haad7af6_0",
            "depends": ["cuda-version >=12,<13.0a0", "libcublas"],
            "files": ["include/cudnn.h", "lib/libcudnn.so.9", "lib/libcudnn.so.9.10.1"],
        },
        "broken.json": "not a record",
    }
    (prefix / "conda-meta").mkdir()
    for name, record in records.items():
        (prefix / "conda-meta" / name).write_text(json.dumps(record))
    (prefix / "conda-meta/history").write_text("")
    return prefix


def test_conda_records_name_each_library_and_its_cuda(tmp_path: Path) -> None:
    prefix = conda_prefix(tmp_path)
    owners = libraries.read_conda_owners(str(prefix))
    places = libraries.search_places(windows=False, conda_prefix=str(prefix), root=tmp_path)
    hits = libraries.find_libraries(places, owners=owners)
    assert [(h.filename, h.source, h.cuda_major, h.package) for h in hits] == [
        ("libcudart.so.12", "conda", 12, "conda cuda-cudart 12.8.90 (h5888daf_1)"),
        ("libcudnn.so.9", "conda", 12, "conda cudnn 9.10.1.4 (haad7af6_0)"),
        ("libcurand.so.10", "conda", None, None),  # no record: its CUDA major comes from its folder
    ]
    assert libraries.read_conda_owners(str(tmp_path / "nowhere")) == {}


def test_process_libraries_majors_from_package_name_and_folder() -> None:
    matrix = load_matrix()
    hits = (
        LibraryHit("cudnn", "9", "libcudnn.so.9", "/opt/app/lib/libcudnn.so.9", "ld_library_path"),
        LibraryHit("cudart", "12", "libcudart.so.12", "/opt/app/lib/libcudart.so.12", "ld_library_path"),
        LibraryHit("curand", "10", "libcurand.so.10", "/opt/other/libcurand.so.10", "ld_library_path"),
        LibraryHit("cufft", "12", "libcufft.so.12", "/usr/lib/libcufft.so.12", "ldconfig"),
        LibraryHit("cudart", "11", "libcudart.so.11.0", "/usr/local/cuda-11.8/lib64/libcudart.so.11.0", "cuda_toolkit"),
        LibraryHit("cuda", "1", "libcuda.so.1", "/usr/lib/libcuda.so.1", "ldconfig"),
        LibraryHit("cudnn", "9", "libcudnn.so.9", "/env/lib/libcudnn.so.9", "conda", 13, "conda cudnn 9.13"),
    )
    found = process_libraries(replace(host(), libraries=hits), matrix)
    assert [(lib.hit.path, lib.library, lib.cuda_major, lib.shared) for lib in found] == [
        ("/opt/app/lib/libcudnn.so.9", "cudnn", 12, True),  # next to libcudart.so.12
        ("/opt/app/lib/libcudart.so.12", "cudart", 12, False),
        ("/opt/other/libcurand.so.10", "curand", None, True),  # CUDA 11, 12 and 13 all load libcurand.so.10
        ("/usr/lib/libcufft.so.12", "cufft", 13, False),  # only CUDA 13 builds load libcufft.so.12
        ("/env/lib/libcudnn.so.9", "cudnn", 13, True),  # its conda record says so
    ]  # the toolkit no search path names, and the driver, are left out


def conda_hits(cuda: int) -> tuple[LibraryHit, ...]:
    return (
        LibraryHit(
            "cudart",
            str(cuda),
            f"libcudart.so.{cuda}",
            f"/c/lib/libcudart.so.{cuda}",
            "conda",
            cuda,
            "conda cuda-cudart",
        ),
        LibraryHit(
            "cudnn", "9", "libcudnn.so.9", "/c/lib/libcudnn.so.9", "conda", cuda, "conda cudnn 9.10.1.4 (haad7af6_0)"
        ),
    )


def test_a_conda_cuda12_env_plans_the_cuda12_build() -> None:
    plan = make_plan([replace(host(driver="580.65.06", cc="8.9"), libraries=conda_hits(12))], load_matrix(), Request())
    assert plan.cuda_version.startswith("12.")
    assert "the CUDA this environment already loads" in plan.reasons[0]
    text = "\n".join(plan.reasons)
    assert "is newer and runs, but this environment's process already loads CUDA 12 libraries" in text
    assert "libcudnn.so.9 (conda cudnn 9.10.1.4 (haad7af6_0))" in text
    assert any("`--cuda 13` plans" in note and "libcudnn.so.9 twice in one process" in note for note in plan.notes)


def test_a_toolkit_on_ld_library_path_plans_its_cuda() -> None:
    hits = (
        LibraryHit("cudart", "12", "libcudart.so.12", "/opt/cuda-12.6/lib64/libcudart.so.12", "ld_library_path"),
        LibraryHit("cudnn", "9", "libcudnn.so.9", "/opt/cuda-12.6/lib64/libcudnn.so.9", "ld_library_path"),
        LibraryHit("cudart", "13", "libcudart.so.13", "/usr/local/cuda-13.0/lib64/libcudart.so.13", "ldconfig"),
    )
    plan = make_plan([replace(host(cc="8.9"), libraries=hits)], load_matrix(), Request())
    assert plan.cuda_version.startswith("12.")  # LD_LIBRARY_PATH is searched before the ld.so cache
    assert any("libcudart.so.12 (ld_library_path)" in r for r in plan.reasons)
    alone = make_plan([replace(host(cc="8.9"), libraries=hits[2:])], load_matrix(), Request())
    assert alone.cuda_version.startswith("13.")


def test_an_unsearched_toolkit_does_not_steer_the_plan() -> None:
    hits = (
        LibraryHit("cudart", "12", "libcudart.so.12", "/usr/local/cuda-12.8/lib64/libcudart.so.12", "cuda_toolkit"),
    )
    plan = make_plan([replace(host(cc="8.9"), libraries=hits)], load_matrix(), Request())
    assert plan.cuda_version.startswith("13.")


def test_no_build_of_the_environments_cuda_runs_refuses_and_names_the_mix() -> None:
    """linux-aarch64 has no CUDA 12 build: the CUDA 13 one would put a second libcudnn.so.9 into the process."""
    grace = replace(host(cc="9.0", platform="linux-aarch64", glibc="2.39"), libraries=conda_hits(12))
    with pytest.raises(NoCompatiblePlan) as info:
        make_plan([grace], load_matrix(), Request())
    error = info.value
    assert "no onnxruntime-gpu build for CUDA 12, the CUDA this environment's process already loads" in str(error)
    assert "has no wheel for linux-aarch64" in str(error)
    assert "libcudnn.so.9 for CUDA 13" in (error.hint or "")
    assert "`--cuda 13` plans 1.31.1 (CUDA 13.0) anyway, at that risk" in (error.hint or "")
    plan = make_plan([grace], load_matrix(), Request(cuda="13"))
    assert plan.cuda_version.startswith("13.")
    assert any(n.startswith("--cuda 13: 1.31.1 (CUDA 13.0) would load libcudnn.so.9") for n in plan.notes)


def test_other_names_only_plan_with_a_note() -> None:
    """Only libcudart.so.12 (no shared name): CUDA 13's libraries load beside it; planned, and said."""
    hits = (LibraryHit("cudart", "12", "libcudart.so.12", "/c/lib/libcudart.so.12", "conda", 12, "conda cuda-cudart"),)
    grace = replace(host(cc="9.0", platform="linux-aarch64", glibc="2.39"), libraries=hits)
    plan = make_plan([grace], load_matrix(), Request())
    assert plan.cuda_version.startswith("13.")
    assert any("other names: the loader keeps both" in n for n in plan.notes)


def test_windows_search_order(tmp_path: Path) -> None:
    """python.exe's folder, System32, the Windows folder, conda's Library\\bin, PATH; CUDA_PATH only through PATH."""
    env = {"SystemRoot": "C:\\Windows", "PATH": "C:\\tools\\cudnn\\bin;C:\\App", "CUDA_PATH": "C:\\CUDA\\v12.9"}
    places = libraries.windows_places(env, conda_prefix="C:\\envs\\ocr", python_dir="C:\\envs\\ocr")
    assert [(p.folder, p.source) for p in places] == [
        ("C:\\envs\\ocr", "app"),
        ("C:\\Windows\\System32", "system"),
        ("C:\\Windows", "system"),
        ("C:\\envs\\ocr\\Library\\bin", "conda"),
        ("C:\\tools\\cudnn\\bin", "path"),
        ("C:\\App", "path"),
        ("C:\\CUDA\\v12.9\\bin", "cuda_path"),
    ]
    toolkit = tmp_path / "CUDA/v12.9/bin"
    touch(toolkit / "cudart64_12.dll")
    alone = libraries.search_places(windows=True, env={"CUDA_PATH": str(tmp_path / "CUDA/v12.9")})
    hits = libraries.find_libraries(alone, windows=True)
    assert [(h.filename, h.searched) for h in hits] == [("cudart64_12.dll", False)]
    on_path = libraries.search_places(
        windows=True, env={"CUDA_PATH": str(tmp_path / "CUDA/v12.9"), "PATH": str(toolkit)}
    )
    assert [(h.source, h.searched) for h in libraries.find_libraries(on_path, windows=True)] == [("path", True)]


def test_windows_conda_env_plans_its_cuda() -> None:
    hits = (
        LibraryHit(
            "cudnn", "9", "cudnn64_9.dll", "C:\\envs\\ocr\\Library\\bin\\cudnn64_9.dll", "conda", 12, "conda cudnn"
        ),
        LibraryHit(
            "cublas",
            "12",
            "cublas64_12.dll",
            "C:\\envs\\ocr\\Library\\bin\\cublas64_12.dll",
            "conda",
            12,
            "conda libcublas",
        ),
    )
    win = replace(host(driver="581.57", cc="8.9", platform="windows-amd64"), libraries=hits)
    plan = make_plan([win], load_matrix(), Request())
    assert plan.cuda_version.startswith("12.")
