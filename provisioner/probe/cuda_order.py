"""CUDA's own answer to "which GPUs does CUDA_VISIBLE_DEVICES leave?", where NVML's numbering cannot say.

CUDA numbers devices fastest first (CUDA_DEVICE_ORDER=FASTEST_FIRST, the default, by a heuristic NVIDIA does
not document); NVML and nvidia-smi number them by PCI bus. For identical GPUs the difference does not matter
to a plan. For different ones ("an RTX 3090 and a GT 710"), `CUDA_VISIBLE_DEVICES=0` may name either, and
planning for the wrong one rejects builds the GPU in use runs. Then a child process asks the CUDA driver
itself (libcuda through ctypes: cuInit, cuDeviceGetCount, cuDeviceGet, cuDeviceGetPCIBusId, in the program
standalone/cuda_order.py): the PCI bus ids of the devices CUDA sees name the GPUs for certain. The driver runs
in the child, never in ortprov's process.
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from provisioner import childproc, standalone

if TYPE_CHECKING:
    from provisioner.facts import Gpu

PROGRAM = standalone.path("cuda_order.py")  # runs in a child process: the driver never runs in ortprov
_BUS_ID = re.compile(r"^(?:([0-9a-fA-F]+):)?([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-7])$")


def order_is_ambiguous(gpus: tuple[Gpu, ...], cuda_visible_devices: str | None, cuda_device_order: str | None) -> bool:
    """True when CUDA_VISIBLE_DEVICES names GPUs by index, CUDA numbers them fastest first, and the GPUs it
    counts among differ (by model or compute capability): NVML's order cannot tell which it names."""
    if cuda_visible_devices is None or (cuda_device_order or "").strip().upper() == "PCI_BUS_ID":
        return False
    tokens = [token.strip() for token in cuda_visible_devices.split(",") if token.strip()]
    if not any(token.isdigit() for token in tokens):
        return False
    return len({(gpu.name, gpu.compute_capability) for gpu in gpus}) > 1


def bus_id_key(text: str | None) -> tuple[int, int, int, int] | None:
    """NVML's "00000000:18:00.0" and CUDA's "0000:18:00.0" as (domain, bus, device, function)."""
    match = _BUS_ID.match((text or "").strip())
    if not match:
        return None
    domain, bus, device, function = match.groups()
    return int(domain or "0", 16), int(bus, 16), int(device, 16), int(function)


def cuda_bus_ids(env: dict[str, str], timeout: float = 20.0) -> tuple[tuple[str, ...] | None, str | None]:
    """(the PCI bus ids of the devices CUDA sees with `env`, in CUDA's order; None and why when it cannot say)."""
    try:
        # -E -s, not -I: isolated mode would leave the program's folder (its sibling protocol.py) off sys.path
        ended = childproc.run([sys.executable, "-E", "-s", str(PROGRAM)], timeout=timeout, env=env)
    except OSError as exc:
        return None, f"cannot start {sys.executable}: {exc}"
    if ended.timed_out:
        return None, f"the CUDA driver did not answer within {timeout:.0f} s"
    answer = ended.answer() or {}
    if isinstance(answer.get("bus_ids"), list):
        return tuple(str(item) for item in answer["bus_ids"]), None
    if ended.returncode is not None and ended.returncode < 0:
        return None, f"the CUDA driver query died with signal {-ended.returncode}"
    return None, str(answer.get("error") or f"the CUDA driver query failed (exit {ended.returncode})")


def visible_by_bus_id(gpus: tuple[Gpu, ...], bus_ids: tuple[str, ...]) -> tuple[Gpu, ...] | None:
    """The GPUs with `visible` set from CUDA's list; None when a GPU's bus id is unknown or CUDA lists a
    device NVML does not (then the answer cannot be mapped)."""
    keys = [bus_id_key(gpu.pci_bus_id) for gpu in gpus]
    seen = {bus_id_key(text) for text in bus_ids}
    if None in keys or None in seen or not seen <= set(keys):
        return None
    return tuple(replace(gpu, visible=key in seen) for gpu, key in zip(gpus, keys, strict=True))
