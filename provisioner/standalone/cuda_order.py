"""The CUDA driver's device order: the PCI bus ids of the devices CUDA sees, in CUDA's numbering.

Run by provisioner/probe/cuda_order.py in a child process (`python -E -s cuda_order.py`), so that the driver
never runs in ortprov's own process; the environment it is given (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER)
is the one asked about. Standard library only (ctypes on libcuda.so.1 or nvcuda.dll), Python 3.8+. Sends one
message (protocol.py): {"bus_ids": [...]} or {"error": "..."}.
"""

from __future__ import annotations

import ctypes
import sys

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import protocol
else:  # run as a script: its folder is sys.path[0]
    import protocol  # type: ignore[no-redef]

CUDA_ERROR_NO_DEVICE = 100  # cuInit's answer when CUDA_VISIBLE_DEVICES leaves no device


def bus_ids() -> dict:
    """{"bus_ids": [...]} in CUDA's order, or {"error": why}."""
    try:
        cuda = ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
    except OSError as exc:
        return {"error": f"the CUDA driver library cannot be loaded: {exc}"}
    status = cuda.cuInit(0)
    if status == CUDA_ERROR_NO_DEVICE:
        return {"bus_ids": []}
    if status != 0:
        return {"error": f"cuInit failed with CUresult {status}"}
    count = ctypes.c_int(0)
    cuda.cuDeviceGetCount(ctypes.byref(count))
    found = []
    for ordinal in range(count.value):
        device = ctypes.c_int(0)
        buffer = ctypes.create_string_buffer(64)
        if cuda.cuDeviceGet(ctypes.byref(device), ordinal) or cuda.cuDeviceGetPCIBusId(buffer, 64, device):
            return {"error": f"cannot read the PCI bus id of CUDA device {ordinal}"}
        found.append(buffer.value.decode("ascii", "replace"))
    return {"bus_ids": found}


if __name__ == "__main__":
    protocol.send(bus_ids())
