"""The TensorRT-RTX plugin EP used as its guide says, outside ortprov (tests/gpu/prove_plugin_ep.sh): register its
library, list the EP devices, run a Conv+Relu session on the first one against the CPU; one JSON line per fact.

    python plugin_ep_probe.py MODE     MODE ending in "preload-cudart": load the bundled libcudart first
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import json
import os
import sys
import time
from typing import Any

MODE = sys.argv[1]


def out(**facts: Any) -> None:
    print(json.dumps({"mode": MODE, **facts}), flush=True)


def mapped() -> list[str]:
    """The CUDA, TensorRT-RTX and driver libraries this process has mapped."""
    keys = ("libcudart", "libcuda.so", "tensorrt", "libnvidia-ml", "providers_nv")
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if any(key in line for key in keys)})


def conv_model(path: str, np: Any) -> Any:
    from onnx import TensorProto, helper, numpy_helper, save

    weights = np.random.default_rng(0).standard_normal((16, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32, 32])],
        [numpy_helper.from_array(weights, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    save(model, path)


def main() -> None:
    if MODE.endswith("preload-cudart"):
        spec = importlib.util.find_spec("onnxruntime_ep_nv_tensorrt_rtx")
        assert spec is not None and spec.origin
        for found in glob.glob(os.path.join(os.path.dirname(spec.origin), "libcudart.so.13*")):
            ctypes.CDLL(found, mode=ctypes.RTLD_GLOBAL)
            out(preloaded=found)
    import numpy as np
    import onnxruntime as ort

    out(ort=ort.__version__, ort_file=ort.__file__, providers=ort.get_available_providers())
    import onnxruntime_ep_nv_tensorrt_rtx as ep

    out(ep=ep.__version__, name=ep.get_ep_name(), lib=ep.get_library_path())
    try:
        ort.register_execution_provider_library(ep.get_ep_name(), ep.get_library_path())
        out(registered=True)
    except Exception as exc:  # noqa: BLE001 - the EP's error is the finding
        out(registered=False, error=f"{type(exc).__name__}: {exc}")
    out(maps=mapped())
    devices = ort.get_ep_devices()
    out(devices=[{"ep": d.ep_name, "vendor": d.ep_vendor, "type": str(d.device.type)} for d in devices])
    mine = [d for d in devices if d.ep_name == ep.get_ep_name()]
    if mine:
        path = "/tmp/conv.onnx"
        conv_model(path, np)
        x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
        reference = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        options = ort.SessionOptions()
        try:
            options.add_provider_for_devices(mine, {})
            started = time.time()
            session = ort.InferenceSession(path, sess_options=options)
            out(session_providers=session.get_providers(), made_s=round(time.time() - started, 2))
            out(max_abs_diff=float(np.abs(session.run(None, {"x": x})[0] - reference).max()))
        except Exception as exc:  # noqa: BLE001
            out(session_error=f"{type(exc).__name__}: {exc}"[:3000])
    out(maps_after=mapped())


if __name__ == "__main__":
    main()
