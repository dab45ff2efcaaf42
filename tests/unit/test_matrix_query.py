"""The matrix package's boundaries and its query API (the one way the planner, recipes, verify and doctor
ask the matrix anything)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from provisioner.matrix.load import load_matrix
from provisioner.matrix.query import (
    build_libraries,
    builds_for,
    common_libraries,
    cuda_images,
    cuda_major_libraries,
    find_build,
    lazy_sonames_by_cuda_major,
    library_of,
    recorded_wheels,
    sonames_by_cuda_major,
    tensorrt_release,
)

ROOT = Path(__file__).resolve().parents[2]


def imported_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_the_pure_modules_import_no_yaml_network_or_file_io() -> None:
    modules = imported_after("import provisioner.matrix.query, provisioner.matrix.model, provisioner.versions")
    for heavy in ("yaml", "requests", "packaging", "provisioner.matrix.load", "provisioner.cachedir"):
        assert heavy not in modules, heavy
    assert "provisioner.matrix.check" not in modules
    assert not imported_after("import provisioner.matrix") & {"yaml", "provisioner.matrix.model"}


def test_loading_the_shipped_data_needs_no_yaml_nor_validation() -> None:
    modules = imported_after("from provisioner.matrix.load import load_matrix; load_matrix(use_cache=False)")
    assert not modules & {"yaml", "requests", "provisioner.matrix.check"}


def test_no_import_circle_between_load_and_check() -> None:
    check = (ROOT / "provisioner/matrix/check.py").read_text(encoding="utf-8")
    model = (ROOT / "provisioner/matrix/model.py").read_text(encoding="utf-8")
    assert "provisioner.matrix.load" not in check and "provisioner.matrix.query" not in check
    assert "import" not in model.split('"""', 2)[2].replace("from __future__ import annotations", "").replace(
        "from dataclasses import dataclass", ""
    ).replace("from provisioner.versions import", "")


def test_find_build_and_tensorrt_by_major_only() -> None:
    matrix = load_matrix()
    build = find_build(matrix, "onnxruntime-gpu", "1.31.1", "13.0", None)
    assert build is not None and build.tensorrt_version == "10"
    assert find_build(matrix, "onnxruntime-gpu", "1.31.1", "12.8", None) is None
    # the wheels of 1.23+ say only the TensorRT major: any release of that major serves them, exact pins
    assert tensorrt_release(matrix, "10", 12).packages == ("tensorrt-cu12-libs==10.16.1.11",)  # type: ignore[union-attr]
    assert tensorrt_release(matrix, "10.9", 12).packages == ("tensorrt-cu12-libs==10.16.1.11",)  # type: ignore[union-attr]
    assert tensorrt_release(matrix, "10.99", 13) is None


def test_cuda_images_exact_minor_first() -> None:
    matrix = load_matrix()
    images = cuda_images(matrix, "12.2", "9")
    assert images and images[0].cuda_version.startswith("12.")
    assert all(i.cudnn_version and i.cudnn_version.startswith("9") for i in images)
    assert cuda_images(matrix, "99.0", "9") == ()


def test_library_of_folds_sonames_and_dlls_into_matrix_libraries() -> None:
    names = ("cudart", "cublas", "cufft", "curand", "nvrtc", "cudnn", "nvjitlink")
    assert library_of("libcublasLt.so.12", names) == "cublas"
    assert library_of("cublasLt64_12.dll", names) == "cublas"
    assert library_of("libcudart.so.11.0", names) == "cudart"
    assert library_of("libnvJitLink.so.13", names) == "nvjitlink"
    assert library_of("libcudnn_ops.so.9", names) == "cudnn"
    assert library_of("libcuda.so.1", names) is None


def test_build_libraries_and_what_every_build_needs() -> None:
    matrix = load_matrix()
    (build,) = builds_for(matrix, "1.31.1")
    assert build_libraries(matrix, build) == {
        "cublas": "13",
        "cudart": "13",
        "curand": "10",
        "cudnn": "9",
        "cufft": "12",
        "nvrtc": "13",
    }
    # what doctor checks on a host whose build it cannot look up: derived, in cuda.yaml's order
    assert common_libraries(matrix) == {"cudart": True, "cublas": True, "cufft": False, "curand": False, "cudnn": False}
    assert cuda_major_libraries(matrix) == {"cudart", "cublas", "nvrtc"}


def test_soname_tables_for_the_loader_hook_and_verify() -> None:
    matrix = load_matrix()
    every = sonames_by_cuda_major(matrix)
    lazy = lazy_sonames_by_cuda_major(matrix)
    assert set(lazy) == set(every) == {"11", "12", "13"}
    assert {"libcudnn.so.9", "libcufft.so.12", "libnvrtc.so.13"} == set(lazy["13"])
    for major, names in lazy.items():
        assert set(names) <= set(every[major]) and not any(n.startswith("libcuda.so") for n in every[major])


def test_recorded_wheels_meet_the_specifier_and_the_major() -> None:
    matrix = load_matrix()
    wheels = recorded_wheels(matrix, "nvidia-cudnn-cu12", "~=9.0", 12)
    assert wheels and all(w.version.startswith("9.") for w in wheels)
    assert recorded_wheels(matrix, "nvidia-cudnn-cu12", "~=9.0", 13) == ()
