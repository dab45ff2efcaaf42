"""`ortprov tune` as a user runs it: real onnxruntime sessions on the CPU in a child process of the target Python;
no GPU here, so the CUDA variants must come back as unavailable / not measured, cleanly. The CPU itself shows what
the output check does: padding every input to one shape is flagged when the model pools globally (a squeeze-and-
excitation block built here with onnx.helper) and not for a purely local one. The real PP-OCR models of the
rapidocr-onnxruntime 1.4.4 wheel are fetched at run time (`e2e`)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.support.cli import run_ortprov
from tests.support.rapidocr import CLS, DET, rapidocr_model

if TYPE_CHECKING:
    from pathlib import Path

SHAPES = ("--shape", "x=1x3x96x128", "--shape", "x=1x3x128x96", "--shape", "x=1x3x160x160")


def conv(name: str, source: str, target: str, seed: int) -> tuple[list[onnx.TensorProto], onnx.NodeProto]:
    rng = np.random.RandomState(seed)
    weights = numpy_helper.from_array((rng.randn(4, 3, 3, 3) * 0.3).astype(np.float32), f"{name}_w")
    bias = numpy_helper.from_array((rng.randn(4) * 0.1).astype(np.float32), f"{name}_b")
    return [weights, bias], helper.make_node("Conv", [source, f"{name}_w", f"{name}_b"], [target], pads=[1, 1, 1, 1])


def save_model(path: Path, nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], ir: int | None = None) -> str:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, "h", "w"])
    model = helper.make_model(
        helper.make_graph(nodes, path.stem, [x], [y], inits), opset_imports=[helper.make_opsetid("", 17)]
    )
    if ir is not None:
        model.ir_version = ir
    onnx.save(model, path)
    return str(path)


def local_model(path: Path) -> str:
    """One convolution: each output pixel sees its 3x3 neighbourhood only (zero padding changes nothing inside)."""
    inits, node = conv("c", "x", "y", 0)
    return save_model(path, [node], inits)


def pooling_model(path: Path) -> str:
    """A squeeze-and-excitation block: every output pixel is scaled by the mean of the whole feature map."""
    inits, node = conv("c", "x", "f", 0)
    nodes = [
        node,
        helper.make_node("GlobalAveragePool", ["f"], ["g"]),
        helper.make_node("Sigmoid", ["g"], ["s"]),
        helper.make_node("Mul", ["f", "s"], ["y"]),
    ]
    return save_model(path, nodes, inits)


def tune_json(model: str, *extra: str) -> dict:
    done = run_ortprov("tune", model, "--python", sys.executable, "--budget", "60", "--json", *extra)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def rows(data: dict) -> dict[str, dict]:
    return {row["name"]: row for row in data["analysis"]["rows"]}


def test_padding_is_flagged_when_the_model_pools_globally(tmp_path: Path) -> None:
    data = tune_json(pooling_model(tmp_path / "se.onnx"), *SHAPES)
    padded = rows(data)["cpu-pad-one"]
    assert padded["status"] == "ok" and padded["agrees"] is False and padded["answers"].startswith("CHANGES")
    measured = {m["variant"]["name"]: m for m in data["report"]["measurements"]}
    check = measured["cpu-pad-one"]["check"]
    out = check["outputs"][0]
    assert check["status"] == "compared" and check["inputs"] == 3 and out["kind"] == "values"
    assert out["share_past"] > 0.01 and out["max_abs"] > 0.01
    assert measured["cpu"]["check"]["status"] == "reference" and rows(data)["cpu"]["answers"] == "reference"
    explained = {e["code"]: e for e in data["analysis"]["explanations"]}
    assert explained["changes-results"]["evidence"][0].startswith("CPU, inputs padded to one shape: ")
    assert data["report"]["input_kind"] == "page" and "generated text pages" in data["report"]["inputs_source"]


def test_padding_is_not_flagged_for_a_purely_local_model(tmp_path: Path) -> None:
    data = tune_json(local_model(tmp_path / "local.onnx"), *SHAPES)
    padded = rows(data)["cpu-pad-one"]
    assert padded["status"] == "ok" and padded["agrees"] is True and padded["answers"] == "agrees"
    measured = {m["variant"]["name"]: m for m in data["report"]["measurements"]}
    assert measured["cpu-pad-one"]["check"]["outputs"][0]["past_tolerance"] == 0
    assert "changes-results" not in {e["code"] for e in data["analysis"]["explanations"]}


def test_the_users_own_inputs(tmp_path: Path) -> None:
    model = pooling_model(tmp_path / "se.onnx")
    folder = tmp_path / "inputs"
    folder.mkdir()
    for i, (h, w) in enumerate([(64, 80), (80, 64)]):
        np.save(folder / f"{i}.npy", np.random.RandomState(i).rand(1, 3, h, w).astype(np.float32))
    data = tune_json(model, "--inputs", str(folder))
    report = data["report"]
    assert report["input_files"] == ["0.npy", "1.npy"] and report["sequence_source"] == f"--inputs {folder}"
    assert [run["x"] for run in report["sequence"][:2]] == [[1, 3, 64, 80], [1, 3, 80, 64]]
    assert report["inputs_source"] == f"your files from {folder}: 2 arrays"
    np.save(folder / "2.npy", np.zeros((1, 3, 8), np.float32))
    done = run_ortprov("tune", model, "--python", sys.executable, "--inputs", str(folder))
    assert done.returncode == 2 and "--inputs: 2.npy has 3 dimensions, input 'x' has 4" in done.stderr
    (folder / "2.npy").write_bytes(np.random.RandomState(2).bytes(512))  # issue 37: not "load it unsafely"
    done = run_ortprov("tune", model, "--python", sys.executable, "--inputs", str(folder))
    assert done.returncode == 2 and "--inputs: 2.npy is not a .npy array file" in done.stderr
    assert "unsafe" not in done.stderr and "allow_pickle" not in done.stderr
    done = run_ortprov("tune", model, "--python", sys.executable, "--inputs", str(folder), *SHAPES[:2])
    assert done.returncode == 2 and "--inputs and --shape/--shapes do not go together" in done.stderr


def pil_missing() -> bool:
    try:
        import PIL  # noqa: F401
    except ImportError:
        return True
    return False


def write_pages(folder: Path) -> None:
    """Two grey page images (as PNG, with PIL) of sizes RapidOCR resizes: 600x800 -> 736x992, 900x700 -> 960x736."""
    from PIL import Image

    from provisioner.standalone import tune_inputs

    folder.mkdir()
    for index, (h, w) in enumerate([(600, 800), (900, 700)]):
        grey = tune_inputs.make_page(np, h, w, seed=index).astype(np.uint8)
        Image.fromarray(grey).convert("RGB").save(folder / f"page{index}.png")


@pytest.mark.skipif(pil_missing(), reason="needs Pillow in the target (the tests' own interpreter)")
def test_the_users_images_are_resized_as_rapidocr_does(tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    write_pages(folder)
    data = tune_json(pooling_model(tmp_path / "se.onnx"), "--inputs", str(folder))
    report = data["report"]
    assert [run["x"] for run in report["sequence"][:2]] == [[1, 3, 736, 992], [1, 3, 960, 736]]
    assert "2 images (resized and normalised as RapidOCR's detector does, read with PIL)" in report["inputs_source"]


@pytest.mark.skipif(not pil_missing(), reason="the target has Pillow: the images are read")
def test_images_without_a_reader_in_the_target_say_so(tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "page.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    done = run_ortprov("tune", pooling_model(tmp_path / "se.onnx"), "--python", sys.executable, "--inputs", str(folder))
    assert done.returncode == 2 and "reading images needs PIL or cv2 in the target" in done.stderr


def test_what_stops_a_tune_is_blamed_on_its_real_cause(tmp_path: Path) -> None:
    model = local_model(tmp_path / "local.onnx")
    done = run_ortprov("tune", model, "--python", "/bin/ls")
    assert done.returncode == 2 and "--python '/bin/ls' is not a working Python interpreter" in done.stderr
    inits, node = conv("c", "x", "y", 0)
    too_new = save_model(tmp_path / "ir99.onnx", [node], inits, ir=99)
    done = run_ortprov("tune", too_new, "--python", sys.executable)
    assert done.returncode == 2, done.stderr
    assert "ir99.onnx has ONNX IR version 99; onnxruntime " in done.stderr and "reads up to IR version" in done.stderr
    assert "pass an .onnx file" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.e2e
def test_a_target_without_onnxruntime_is_told_to_install_it(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    done = run_ortprov("tune", local_model(tmp_path / "local.onnx"), "--python", python)
    assert done.returncode == 2, done.stderr
    assert "onnxruntime is not installed in the target Python" in done.stderr
    assert "ortprov apply --python" in done.stderr and "numpy" not in done.stderr


# -- the real PP-OCR models (downloaded) ---------------------------------------------------------------------------


@pytest.mark.e2e
def test_tune_cls_json_measures_the_cpu_and_reports_cuda_unavailable() -> None:
    model = rapidocr_model(CLS)
    done = run_ortprov("tune", str(model), "--python", sys.executable, "--shape", "x=6x3x48x192", "--budget", "40",
                       "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    report = {m["variant"]["name"]: m for m in data["report"]["measurements"]}
    cpu = report["cpu"]
    assert cpu["status"] in ("ok", "cut-short") and len(cpu["cold_ms"]) == 24 and cpu["warm_ms"]
    assert all(ms > 0 for ms in cpu["cold_ms"])
    assert cpu["session_providers"] == ["CPUExecutionProvider"]
    assert cpu["check"]["status"] == "reference"
    assert report["cuda-default"]["status"] == "unavailable"
    assert report["cuda-heuristic"]["status"] == "skipped" and report["cuda-report"]["status"] == "skipped"
    assert data["report"]["input_kind"] == "line"  # 48 pixels high: a text line
    placement = data["report"]["placement"]
    assert placement["error"] is None and any(g["op"] == "Conv" for g in placement["groups"])
    analysis = data["analysis"]
    assert analysis["gpu_wins"] is None and analysis["recommendation"]["provider"] == "CPUExecutionProvider"
    assert "tune: [1] CPU" in done.stderr  # progress on stderr
    assert "Traceback" not in done.stderr


@pytest.mark.e2e
def test_tune_det_text_over_image_sizes(tmp_path: Path) -> None:
    model = rapidocr_model(DET)
    runs = tmp_path / "shapes.json"
    runs.write_text(json.dumps([{"x": "1x3x480x640"}, {"x": "1x3x640x480"}, {"x": [1, 3, 480, 640]}]))
    done = run_ortprov("tune", str(model), "--python", sys.executable, "--shapes", str(runs), "--budget", "90")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "shapes (--shapes" in text and "3 runs, 2 distinct" in text
    assert "inputs: generated text pages" in text
    assert "  CPU " in text and "unavailable" in text and "verdict: no GPU verdict" in text
    assert "RapidOCR:" in text and "Det:\n        use_cuda: false" in text
    # padding the 480x640 pages to 640x640 changes what PP-OCRv4's detector finds (its backbone pools globally)
    assert "CPU, inputs padded to one shape" in text and "CHANGES" in text


@pytest.mark.e2e
def test_tune_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    model = rapidocr_model(CLS)
    cases = [
        (["--shape", "y=1x3x48x192"], "the model has no input 'y'"),
        (["--shape", "x=1x3x48"], "input 'x' has 4 dimensions, 3 were given"),
        (["--budget", "0"], "--budget must be positive"),
        (["--shapes", str(tmp_path / "none.json")], "none.json' does not exist"),
    ]
    for extra, message in cases:
        done = run_ortprov("tune", str(model), "--python", sys.executable, *extra)
        assert done.returncode == 2, (extra, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr
    done = run_ortprov("tune", str(tmp_path / "missing.onnx"), "--json")
    assert done.returncode == 2 and json.loads(done.stdout)["error"].startswith("model file")
    done = run_ortprov("doctor", "--model", str(model), "--log", str(tmp_path / "x.log"))
    assert done.returncode == 2 and "--model and --log do not go together" in done.stderr
