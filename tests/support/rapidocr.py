"""The PP-OCR models of the rapidocr-onnxruntime 1.4.4 wheel on PyPI, fetched at run time (never committed).

The wheel is downloaded once with pip into a cache folder kept between runs ($ORTPROV_TEST_DATA, else
~/.cache/ortprov-tests), and its models are unpacked beside it. Offline: the test is skipped, saying why.
Two runs (or two workers) at once are safe: each downloads or unpacks into a private temporary name and renames
it into place; the last rename wins with identical bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

WHEEL_REQUIREMENT = "rapidocr-onnxruntime==1.4.4"
DET = "ch_PP-OCRv4_det_infer.onnx"
REC = "ch_PP-OCRv4_rec_infer.onnx"
CLS = "ch_ppocr_mobile_v2.0_cls_infer.onnx"


def cache_dir() -> Path:
    root = os.environ.get("ORTPROV_TEST_DATA") or str(Path.home() / ".cache" / "ortprov-tests")
    return Path(root) / "rapidocr-onnxruntime-1.4.4"


def rapidocr_wheel() -> Path:
    """The wheel file (downloaded when missing); skips the test when the index cannot be reached."""
    folder = cache_dir()
    found = sorted(folder.glob("rapidocr_onnxruntime-1.4.4-*.whl"))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".download-") as private:
        argv = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL_REQUIREMENT, "-d", private]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired:
            pytest.skip(f"offline? `pip download {WHEEL_REQUIREMENT}` took over 180 s")
        found = sorted(Path(private).glob("rapidocr_onnxruntime-1.4.4-*.whl"))
        if done.returncode != 0 or not found:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"offline? `pip download {WHEEL_REQUIREMENT}` failed: {last}")
        os.replace(found[0], folder / found[0].name)
    return folder / found[0].name


def rapidocr_model(name: str) -> Path:
    """One model of the wheel (DET, REC or CLS), unpacked into the cache."""
    path = cache_dir() / "models" / name
    if not path.is_file():
        with zipfile.ZipFile(rapidocr_wheel()) as wheel:
            data = wheel.read(f"rapidocr_onnxruntime/models/{name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{name}.", delete=False) as partial:
            partial.write(data)
        os.replace(partial.name, path)
    return path
