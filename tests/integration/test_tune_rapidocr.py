"""What the user pastes works: the RapidOCR block `ortprov tune` prints for a per-shape recommendation, run as
written in a venv with the real rapidocr-onnxruntime 1.4.4 from PyPI (CPU onnxruntime: the CUDA provider the
block asks for is absent, so the sessions fall back to the CPU; the helper, RapidOCR's calls into it and its
answers are what is tested). Downloads: `network` (and so `e2e`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from provisioner import standalone
from provisioner.tune import recommend, variants
from provisioner.tune.report import Measurement, Runtime, TuneReport
from tests.support.envs import REPO, clean_env, venv_python

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.network

DRIVER = r"""
import json, os, sys
import numpy as np, yaml, rapidocr_onnxruntime
sys.path.insert(0, sys.argv[1])  # provisioner/standalone: the same generated pages as tune's
import tune_inputs

base = os.path.dirname(rapidocr_onnxruntime.__file__)
config = yaml.safe_load(open(os.path.join(base, "config.yaml")))
for section in ("Det", "Cls", "Rec"):
    config[section]["model_path"] = os.path.join(base, config[section]["model_path"])
config["Det"]["use_cuda"] = False
yaml.safe_dump(config, open("config.yaml", "w"))
scope = {}
exec(open("block.py").read(), scope)  # the block as printed
engine = scope["engine"]
from rapidocr_onnxruntime import RapidOCR

plain = RapidOCR(config_path="config.yaml")
same = []
for index, (h, w) in enumerate([(900, 700), (600, 800), (900, 700)]):
    page = tune_inputs.make_page(np, h, w, index).astype(np.uint8)
    image = np.stack([page] * 3, axis=-1)
    ours, _ = engine(image)
    theirs, _ = plain(image)
    same.append([(box, text) for box, text, _ in ours or []] == [(box, text) for box, text, _ in theirs or []])
    found = len(ours or [])
session = engine.text_det.infer.session
print(json.dumps({"helper": type(session).__name__, "same": same, "sessions": len(session.sessions), "found": found}))
"""


def test_the_rapidocr_block_of_a_per_shape_recommendation_runs_as_printed(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, env=env)
    python = venv_python(tmp_path / "venv")
    install = [
        sys.executable,
        "-m",
        "uv",
        "pip",
        "install",
        "-q",
        "--python",
        str(python),
        "rapidocr-onnxruntime==1.4.4",
    ]
    done = subprocess.run(install, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        pytest.skip(f"offline? installing rapidocr-onnxruntime failed: {done.stderr.strip()[-300:]}")
    sessions = variants.apply_change(
        variants.fast_search(TuneReport("m", Runtime("p", "3"))), variants.SESSION_PER_SHAPE
    )
    report = TuneReport(
        "/models/ch_PP-OCRv4_det_infer.onnx", Runtime("/p", "3.12"), measurements=(Measurement(sessions, "ok"),)
    )
    block = recommend.recommend(report, sessions.name).rapidocr
    yaml_part, code = block.split("use_cuda: false", 1)
    assert yaml_part.endswith("Det:\n    ")
    (tmp_path / "block.py").write_text(code.split("\n", 1)[1], encoding="utf-8")
    shutil.copy(standalone.path(recommend.HELPER_FILE), tmp_path / recommend.HELPER_FILE)
    (tmp_path / "driver.py").write_text(DRIVER, encoding="utf-8")
    ran = subprocess.run(
        [str(python), "driver.py", str(REPO / "provisioner" / "standalone")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    result = json.loads(ran.stdout.strip().splitlines()[-1])
    assert result["helper"] == "SessionPerShape" and result["sessions"] == 2  # two page sizes, two sessions
    assert result["same"] == [True, True, True] and result["found"] > 0  # RapidOCR's own answers, text found
