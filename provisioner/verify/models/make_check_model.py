"""Generate the check models shipped with ortprov verify (needs the `onnx` package; not used at run time).

    python provisioner/verify/models/make_check_model.py

check.onnx (opset 17, ~60 KB), runnable on CPU and CUDA so the two can be compared:
  x[1,16,96,96] -> Conv 3x3 (16->32) -> Relu -> Conv 3x3 (32->32)      cuDNN (libcudnn + its engine libraries)
                -> Reshape [32, 9216] -> MatMul(., its transpose)         cuBLAS / cuBLASLt (K = 9216)
                -> Gemm with a [32,16] weight and bias                      cuBLAS again, the common FC layer
  outputs: "conv" (the convolution features) and "logits" (the Gemm result).
  Sized so that a GPU beats the CPU clearly (~140 M multiply-adds) while the file stays small: the matmul
  multiplies the features by themselves, so it needs no large weight.

check_fft.onnx: com.microsoft Rfft on x[4,256]. ONNX Runtime has this kernel on CUDA only (cuFFT, which the
CUDA provider opens lazily, like cuDNN); verify compares it with numpy.fft.rfft, not with a CPU session.

Not included, on purpose: cuRAND is linked by the CUDA provider itself (DT_NEEDED), so session creation
already proves it loads, and no inference operator calls it; NVRTC is opened by cuDNN's runtime-compiled
engines only when cuDNN picks one, which a check cannot force. Both are still listed among the loaded
libraries and checked by --static.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent


def _init(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(array.astype(np.float32), name)


def make_check_model() -> onnx.ModelProto:
    rng = np.random.default_rng(20240601)
    w1 = rng.standard_normal((32, 16, 3, 3)) / np.sqrt(16 * 9)
    b1 = rng.standard_normal(32) * 0.1
    w2 = rng.standard_normal((32, 32, 3, 3)) / np.sqrt(32 * 9)
    b2 = rng.standard_normal(32) * 0.1
    w3 = rng.standard_normal((32, 16)) / np.sqrt(32)
    b3 = rng.standard_normal(16) * 0.1
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["conv"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["conv", "flat_shape"], ["flat"]),
        helper.make_node("Transpose", ["flat"], ["flat_t"], perm=[1, 0]),
        helper.make_node("MatMul", ["flat", "flat_t"], ["gram"]),
        helper.make_node("Gemm", ["gram", "w3", "b3"], ["logits"], alpha=1.0 / 9216.0),
    ]
    graph = helper.make_graph(
        nodes,
        "ortprov_check",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 96, 96])],
        [
            helper.make_tensor_value_info("conv", TensorProto.FLOAT, [1, 32, 96, 96]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, [32, 16]),
        ],
        [
            _init("w1", w1),
            _init("b1", b1),
            _init("w2", w2),
            _init("b2", b2),
            _init("w3", w3),
            _init("b3", b3),
            numpy_helper.from_array(np.array([32, 9216], dtype=np.int64), "flat_shape"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ortprov")
    model.ir_version = 8  # readable by onnxruntime >= 1.10
    onnx.checker.check_model(model)
    return model


def make_fft_model() -> onnx.ModelProto:
    node = helper.make_node("Rfft", ["x"], ["y"], domain="com.microsoft", signal_ndim=1, normalized=0, onesided=1)
    graph = helper.make_graph(
        [node],
        "ortprov_check_fft",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        producer_name="ortprov",
    )
    model.ir_version = 8
    return model


def main() -> None:
    onnx.save(make_check_model(), str(HERE / "check.onnx"))
    onnx.save(make_fft_model(), str(HERE / "check_fft.onnx"))
    for name in ("check.onnx", "check_fft.onnx"):
        print(f"wrote {HERE / name} ({(HERE / name).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
