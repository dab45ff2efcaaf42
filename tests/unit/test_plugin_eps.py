"""Plugin execution providers in the matrix: the readers of their metadata (matrix/epfacts.py, on text as the
0.5.0 wheels hold it), the shipped plugin-eps.yaml rows (derived by bin/derive_eps.py), and `matrix show`."""

from __future__ import annotations

from provisioner.matrix import epfacts
from provisioner.matrix.load import load_matrix
from tests.support.cli import run_ortprov

META = """Metadata-Version: 2.4
Name: onnxruntime-ep-nv-tensorrt-rtx
Version: 0.5.0
Requires-Python: >=3.8
Requires-Dist: onnxruntime-ep-nv-tensorrt-rtx-cu13==0.5.0
Dynamic: requires-dist

# onnxruntime-ep-nv-tensorrt-rtx
"""
VARIANT = """Metadata-Version: 2.4
Name: onnxruntime-ep-nv-tensorrt-rtx-cu13
Requires-Python: >=3.8
Provides-Extra: dev
Requires-Dist: onnx>=1.14; extra == "dev"

## Requirements

- NVIDIA RTX GPU (Ampere or later)
- `pip install onnxruntime>=1.24`
"""


def test_metadata_readers() -> None:
    assert epfacts.default_variant(META) == "onnxruntime-ep-nv-tensorrt-rtx-cu13"
    assert epfacts.requires_python(META) == ">=3.8"
    assert epfacts.core_minimum(VARIANT, "onnxruntime") == "1.24"  # documented, no Requires-Dist on the core
    assert epfacts.core_minimum("Requires-Dist: onnxruntime>=1.30.0\n", "onnxruntime") == "1.30.0"
    assert epfacts.core_minimum(META, "onnxruntime") is None
    assert epfacts.ep_name('_KNOWN_EP_NAME = "NvTensorRTRTXExecutionProvider"\n') == "NvTensorRTRTXExecutionProvider"
    assert epfacts.cuda_major_of("onnxruntime-ep-nv-tensorrt-rtx-cu12") == 12


def test_core_rows_from_wheel_names() -> None:
    names = [
        "onnxruntime-1.32.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "onnxruntime-1.32.0-cp313-cp313t-win_amd64.whl",
        "onnxruntime-1.32.0-cp312-cp312-macosx_14_0_arm64.whl",
        "onnxruntime-1.23.0-cp312-cp312-win_amd64.whl",
    ]
    rows = epfacts.core_rows("onnxruntime", names, "1.24", "https://pypi.org/simple/")
    assert [(r.version, r.python, r.platforms) for r in rows] == [
        ("1.32.0", ("3.12", "3.13t"), ("linux-x86_64", "windows-amd64"))
    ]


def test_shipped_rows() -> None:
    matrix = load_matrix()
    newest = max((e for e in matrix.ep_releases if e.provider == "tensorrt-rtx"), key=lambda e: e.version)
    assert newest.version == "0.5.0" and newest.core == "onnxruntime" and newest.core_min == "1.24"
    assert newest.default_variant == "onnxruntime-ep-nv-tensorrt-rtx-cu13"
    cu13 = next(v for v in newest.variants if v.cuda_major == 13)
    assert "libcudart.so.13" in cu13.needs and "libtensorrt_rtx.so.1" in cu13.needs
    assert any(name.startswith("libtensorrt_rtx.so.1.") for name in cu13.bundled)
    assert "9.0" not in newest.compute_capabilities  # no H100 in TensorRT-RTX's support matrix
    assert newest.conflicts == ("onnxruntime-gpu",) and newest.conflicts_source
    assert any(c.version == "1.32.0" for c in matrix.core_releases)


def test_matrix_show_lists_the_ep_rows() -> None:
    shown = run_ortprov("matrix", "show")
    assert shown.returncode == 0, shown.stderr
    assert "onnxruntime-ep-nv-tensorrt-rtx-cu13 (default)" in shown.stdout
    assert "onnxruntime>=1.24, not onnxruntime-gpu" in shown.stdout
    assert "onnxruntime 1.32.0" in shown.stdout
