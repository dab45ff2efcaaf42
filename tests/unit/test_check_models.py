"""The shipped check models are what make_check_model.py generates, and touch what verify claims they touch."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")
MODELS = Path(__file__).resolve().parents[2] / "provisioner" / "verify" / "models"


def _generator():
    spec = importlib.util.spec_from_file_location("make_check_model", MODELS / "make_check_model.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_models_match_the_generator():
    generator = _generator()
    assert (MODELS / "check.onnx").read_bytes() == generator.make_check_model().SerializeToString()
    assert (MODELS / "check_fft.onnx").read_bytes() == generator.make_fft_model().SerializeToString()


def test_check_model_touches_cudnn_and_cublas_and_stays_small():
    model = onnx.load(str(MODELS / "check.onnx"))
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("Conv") == 2 and "MatMul" in ops and "Gemm" in ops
    assert [o.name for o in model.graph.output] == ["conv", "logits"]
    assert (MODELS / "check.onnx").stat().st_size < 100_000


def test_fft_model_is_the_cuda_only_rfft():
    model = onnx.load(str(MODELS / "check_fft.onnx"))
    (node,) = model.graph.node
    assert (node.op_type, node.domain) == ("Rfft", "com.microsoft")


def test_check_model_runs_on_the_cpu_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    import numpy as np

    session = ort.InferenceSession(str(MODELS / "check.onnx"), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 16, 96, 96)).astype(np.float32)
    conv, logits = session.run(None, {"x": x})
    assert conv.shape == (1, 32, 96, 96) and logits.shape == (32, 16)
    assert np.isfinite(conv).all() and float(np.abs(logits).max()) > 0
