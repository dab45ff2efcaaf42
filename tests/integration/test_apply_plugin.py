"""`apply --provider tensorrt-rtx` into a real venv that has onnxruntime-gpu: the GPU package goes, the CPU core and
the EP come, transactionally, with real pip and uv from small wheels under the real names served on 127.0.0.1. The
EP wheel is shaped like 0.5.0's: its module names its provider library, a real ELF (built by gcc) that links
libcudart.so.13, which the wheel bundles only as libcudart.so.13.4.36. Then the loader hook loads that file when a
program imports the EP, and `verify --static` (no GPU here) finds the provider's closure in the process."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import run_ortprov
from tests.support.elf import build_so
from tests.support.envs import clean_env, freeze, make_venv
from tests.support.index_server import IndexServer
from tests.support.wheels import WheelSpec, build_wheels, ort_cpu, ort_family

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")]
MODULE = "onnxruntime_ep_nv_tensorrt_rtx"
INIT = """import os
__version__ = "0.5.0"
_HERE = os.path.dirname(os.path.abspath(__file__))
def get_library_path():
    return os.path.join(_HERE, "libonnxruntime_providers_nv_tensorrt_rtx.so")
def get_ep_name():
    return "NvTensorRTRTXExecutionProvider"
"""


def ep_wheel(build: Path) -> WheelSpec:
    runtime = build_so(build, "libcudart.so.13")
    provider = build_so(build, "libonnxruntime_providers_nv_tensorrt_rtx.so", ["libcudart.so.13"], [build])
    return WheelSpec(
        "onnxruntime-ep-nv-tensorrt-rtx-cu13",
        "0.5.0",
        files={
            f"{MODULE}/__init__.py": INIT,
            f"{MODULE}/{provider.name}": provider.read_bytes(),
            f"{MODULE}/libcudart.so.13.4.36": runtime.read_bytes(),
        },
        tag="py3-none-manylinux_2_28_x86_64",
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("wheels")
    build_wheels(root, [*ort_family("13"), ort_cpu("1.32.0"), ep_wheel(tmp_path_factory.mktemp("elf"))])
    with IndexServer(root) as server:
        yield server


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_apply_swaps_onnxruntime_gpu_for_the_core_and_the_ep(tmp_path: Path, index: IndexServer, installer: str):
    env = clean_env(tmp_path)
    python = make_venv(tmp_path / "venv", env, ("onnxruntime-gpu==1.31.1",), index.url)
    flags = ["--provider", "tensorrt-rtx", "--driver", "580.95.05", "--gpu-cc", "8.9", "--index-url", index.url]
    args = ["apply", "--python", str(python), *flags, "--installer", installer, "-y", "--json"]
    done = run_ortprov(*args, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    installed = {line.split("==")[0] for line in freeze(python, env)}
    assert {"onnxruntime", "onnxruntime-ep-nv-tensorrt-rtx-cu13"} <= installed and "onnxruntime-gpu" not in installed
    assert "uninstall onnxruntime-gpu" in done.stderr
    result = json.loads(done.stdout)
    verify = result["verify"]
    assert verify["ok"] and verify["mode"] == "static" and verify["provider"] == "tensorrt-rtx"
    closure = {entry["soname"]: entry for entry in verify["plugin"]["closure"]}
    assert closure["libcudart.so.13"]["status"] == "loaded"
    assert closure["libcudart.so.13"]["path"].endswith(f"{MODULE}/libcudart.so.13.4.36")  # the bundled one
    # a plain program, the EP's documented way: its provider library loads (the hook made it findable)
    code = f"import ctypes, onnxruntime, {MODULE} as ep; ctypes.CDLL(ep.get_library_path()); print('ok')"
    plain = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert plain.stdout.strip() == "ok", plain.stderr
