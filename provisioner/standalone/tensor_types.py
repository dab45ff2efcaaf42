"""Shared: onnxruntime's tensor type names and the numpy dtype that feeds each (None: numpy has none to feed).

Imported by the programs that build inputs for a model (verify_child.py, tune_child.py); standard library only.
"""

from __future__ import annotations

NUMPY_TYPES = {
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(double)": "float64",
    "tensor(int64)": "int64",
    "tensor(int32)": "int32",
    "tensor(int16)": "int16",
    "tensor(int8)": "int8",
    "tensor(uint8)": "uint8",
    "tensor(uint16)": "uint16",
    "tensor(uint32)": "uint32",
    "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
    "tensor(bfloat16)": None,
    "tensor(string)": None,
}
