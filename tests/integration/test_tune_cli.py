"""`ortprov tune` as a user runs it: the real PP-OCR models of the rapidocr-onnxruntime 1.4.4 wheel (fetched at run
time), real onnxruntime sessions on the CPU in a child process of the target Python; no GPU here, so the CUDA
variants must come back as unavailable / not measured, cleanly."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_ortprov
from tests.support.rapidocr import CLS, DET, rapidocr_model

pytestmark = pytest.mark.e2e


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
    assert report["cuda-default"]["status"] == "unavailable"
    assert report["cuda-heuristic"]["status"] == "skipped" and report["cuda-report"]["status"] == "skipped"
    placement = data["report"]["placement"]
    assert placement["error"] is None and any(g["op"] == "Conv" for g in placement["groups"])
    analysis = data["analysis"]
    assert analysis["gpu_wins"] is None and analysis["recommendation"]["provider"] == "CPUExecutionProvider"
    assert "tune: [1] CPU" in done.stderr  # progress on stderr
    assert "Traceback" not in done.stderr


def test_tune_det_text_over_image_sizes(tmp_path: Path) -> None:
    model = rapidocr_model(DET)
    runs = tmp_path / "shapes.json"
    runs.write_text(json.dumps([{"x": "1x3x480x640"}, {"x": "1x3x640x480"}, {"x": [1, 3, 480, 640]}]))
    done = run_ortprov("tune", str(model), "--python", sys.executable, "--shapes", str(runs), "--budget", "60")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "shapes (--shapes" in text and "3 runs, 2 distinct" in text
    assert "  CPU " in text and "unavailable" in text and "verdict: no GPU verdict" in text
    assert "RapidOCR:" in text and "Det:\n        use_cuda: false" in text


def test_tune_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    model = rapidocr_model(CLS)
    cases = [
        (["--shape", "y=1x3x48x192"], "the model has no input 'y'"),
        (["--shape", "x=1x3x48"], "input 'x' has 4 dimensions, 3 were given"),
        (["--budget", "0"], "--budget must be positive"),
        (["--shapes", str(tmp_path / "none.json")], "cannot read --shapes"),
    ]
    for extra, message in cases:
        done = run_ortprov("tune", str(model), "--python", sys.executable, *extra)
        assert done.returncode == 2, (extra, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr
    done = run_ortprov("tune", str(tmp_path / "missing.onnx"), "--json")
    assert done.returncode == 2 and json.loads(done.stdout)["error"].startswith("model file")
    done = run_ortprov("doctor", "--model", str(model), "--log", str(tmp_path / "x.log"))
    assert done.returncode == 2 and "--model and --log do not go together" in done.stderr
