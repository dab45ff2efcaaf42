"""Probe the TensorRT-RTX plugin EP as its guide says to use it; print every fact as JSON lines."""
import ctypes, json, os, sys, time, traceback
mode = sys.argv[1]
def out(**kw):
    print(json.dumps({"mode": mode, **kw}), flush=True)
if mode.endswith("preload-cudart"):
    import glob, importlib.util
    spec = importlib.util.find_spec("onnxruntime_ep_nv_tensorrt_rtx")
    d = os.path.dirname(spec.origin)
    for f in glob.glob(d + "/libcudart.so.13*"):
        ctypes.CDLL(f, mode=ctypes.RTLD_GLOBAL); out(preloaded=f)
import numpy as np
import onnxruntime as ort
out(ort=ort.__version__, ort_file=ort.__file__, providers=ort.get_available_providers())
import onnxruntime_ep_nv_tensorrt_rtx as ep
out(ep=ep.__version__, name=ep.get_ep_name(), lib=ep.get_library_path())
try:
    ort.register_execution_provider_library(ep.get_ep_name(), ep.get_library_path())
    out(registered=True)
except Exception as e:
    out(registered=False, error=f"{type(e).__name__}: {e}")
def maps():
    libs = set()
    for line in open("/proc/self/maps"):
        p = line.split()[-1]
        if any(k in p for k in ("libcudart", "libcuda.so", "tensorrt", "libnvidia-ml", "providers_nv")):
            libs.add(p)
    return sorted(libs)
out(maps=maps())
try:
    devs = ort.get_ep_devices()
    out(devices=[{"ep": d.ep_name, "vendor": d.ep_vendor, "type": str(d.device.type), "vendor_id": d.device.vendor_id,
                  "device_id": d.device.device_id, "dev_meta": dict(d.device.metadata), "ep_meta": dict(d.ep_metadata)} for d in devs])
except Exception as e:
    out(devices_error=f"{type(e).__name__}: {e}"); devs = []
import onnx
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(0)
w = rng.standard_normal((16, 3, 3, 3)).astype(np.float32)
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1,1,1,1]), helper.make_node("Relu", ["c"], ["y"])],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32, 32])],
    [numpy_helper.from_array(w, "w")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]); m.ir_version = 8
path = "/tmp/conv.onnx"; onnx.save(m, path)
x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
mine = [d for d in devs if d.ep_name == ep.get_ep_name()]
if mine:
    so = ort.SessionOptions()
    try:
        so.add_provider_for_devices(mine, {})
        t = time.time()
        s = ort.InferenceSession(path, sess_options=so)
        out(session_providers=s.get_providers(), made_s=round(time.time() - t, 2))
        y = s.run(None, {"x": x})[0]
        out(max_abs_diff=float(np.abs(y - ref).max()))
    except Exception as e:
        out(session_error=f"{type(e).__name__}: {e}"[:3000])
out(maps_after=maps())
