"""The NVIDIA driver and GPUs: NVML (nvidia-ml-py) first, /proc/driver/nvidia as the fallback on Linux.

`read_driver(nvml=..., proc_root=..., env=...)` takes the NVML module as a parameter so tests pass a small
fake implementing only the nvml* functions used here. Every NVML failure becomes a one-line DriverInfo.error.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from provisioner.facts import DriverInfo, Gpu
from provisioner.probe import cuda_order

PROC_DRIVER = Path("proc/driver/nvidia")
_NVRM_VERSION = re.compile(r"NVRM version:.*?\s(\d+\.\d+(?:\.\d+)?)\s")
_FRIENDLY_ERRORS = {
    "NVMLError_LibraryNotFound": "NVML library not found",
    "NVMLError_DriverNotLoaded": "NVIDIA kernel driver not loaded",
    "NVMLError_LibRmVersionMismatch": (
        "Driver/library version mismatch (the loaded kernel module differs from the user-space driver: "
        "reboot or reload the nvidia module)"
    ),
    "NVMLError_NoPermission": "no permission to access the NVIDIA devices",
    "NVMLError_FunctionNotFound": "function not found in the NVML library (driver too old for nvidia-ml-py)",
}


@dataclass(frozen=True)
class DriverReport:
    """The driver, its GPUs (with visibility applied) and what could not be read."""

    driver: DriverInfo
    gpus: tuple[Gpu, ...] = ()
    errors: tuple[str, ...] = ()


def read_driver(
    nvml: Any = None,
    proc_root: Path = Path("/"),
    env: dict[str, str] | None = None,
    use_procfs: bool | None = None,
) -> DriverReport:
    """Driver version, CUDA version and GPUs; NVML first, procfs when NVML cannot answer."""
    env = dict(os.environ) if env is None else env
    use_procfs = (os.name != "nt") if use_procfs is None else use_procfs
    nvml_error: str | None = None
    if nvml is None and use_procfs and not nvml_library_loadable():
        nvml_error = "NVML: " + _FRIENDLY_ERRORS["NVMLError_LibraryNotFound"]  # what pynvml would say
    elif nvml is None:
        try:
            import pynvml as nvml_module
        except ImportError:
            nvml_module = None
            nvml_error = "NVML: nvidia-ml-py is not installed"
        nvml = nvml_module
    report: DriverReport | None = None
    if nvml is not None:
        report, nvml_error = _read_nvml(nvml)
    if report is None and use_procfs:
        report = read_procfs(proc_root, nvml_error)
    if report is None:
        report = DriverReport(DriverInfo(present=False, source="none", error=nvml_error))
    gpus = apply_visibility(report.gpus, env.get("CUDA_VISIBLE_DEVICES"), env.get("NVIDIA_VISIBLE_DEVICES"))
    if cuda_order.order_is_ambiguous(report.gpus, env.get("CUDA_VISIBLE_DEVICES"), env.get("CUDA_DEVICE_ORDER")):
        gpus, problem = _visible_in_cuda_order(report.gpus, gpus, env)
        if problem:
            return replace(report, gpus=gpus, errors=report.errors + (problem,))
    return replace(report, gpus=gpus)


def _visible_in_cuda_order(
    gpus: tuple[Gpu, ...], by_nvml_order: tuple[Gpu, ...], env: dict[str, str]
) -> tuple[tuple[Gpu, ...], str | None]:
    """Visibility as the CUDA driver itself reports it (a child process), else NVML's order and why."""
    bus_ids, why = cuda_order.cuda_bus_ids(env)
    mapped = cuda_order.visible_by_bus_id(gpus, bus_ids) if bus_ids is not None else None
    if mapped is not None:
        return mapped, None
    return by_nvml_order, (
        f"CUDA_VISIBLE_DEVICES={env.get('CUDA_VISIBLE_DEVICES')!r} counts these different GPUs fastest first "
        f"(CUDA_DEVICE_ORDER is not PCI_BUS_ID), and the CUDA driver could not say which it names "
        f"({why or 'it lists a device NVML does not'}): nvidia-smi's order assumed; "
        "export CUDA_DEVICE_ORDER=PCI_BUS_ID to make both orders agree"
    )


def nvml_library_loadable() -> bool:
    """Linux: can libnvidia-ml.so.1 be loaded? pynvml tries exactly this; asking first saves importing it
    (a large module) on machines without a driver."""
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def describe_nvml_error(exc: BaseException) -> str:
    """One line for an NVML exception: 'NVML: Driver/library version mismatch (...)'."""
    for cls in type(exc).__mro__:
        if cls.__name__ in _FRIENDLY_ERRORS:
            return "NVML: " + _FRIENDLY_ERRORS[cls.__name__]
    try:
        text = str(exc).strip().splitlines()[0]
    except (IndexError, Exception):
        text = ""
    return "NVML: " + (text or type(exc).__name__)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def format_cuda_version(value: int) -> str:
    """NVML's 13000 -> '13.0', 12040 -> '12.4'."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def _read_nvml(nvml: Any) -> tuple[DriverReport | None, str | None]:
    """(report, None) when NVML answered; (None, error line) when it could not initialise."""
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return None, describe_nvml_error(exc)
    errors: list[str] = []
    try:
        version = _text(nvml.nvmlSystemGetDriverVersion())
        cuda_version = None
        try:
            cuda_version = format_cuda_version(int(nvml.nvmlSystemGetCudaDriverVersion_v2()))
        except Exception as exc:
            try:
                cuda_version = format_cuda_version(int(nvml.nvmlSystemGetCudaDriverVersion()))
            except Exception:
                errors.append(f"CUDA driver version: {describe_nvml_error(exc)}")
        gpus: list[Gpu] = []
        count = int(nvml.nvmlDeviceGetCount())
        for index in range(count):
            try:
                gpus.append(_read_gpu(nvml, index))
            except Exception as exc:
                errors.append(f"GPU {index}: {describe_nvml_error(exc)}")
                gpus.append(Gpu(index=index, name="unreadable GPU"))
    except Exception as exc:
        error = describe_nvml_error(exc)
        return DriverReport(DriverInfo(present=True, source="nvml", error=error), errors=(error,)), None
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
    driver = DriverInfo(present=True, version=version, cuda_version=cuda_version, source="nvml")
    return DriverReport(driver, tuple(gpus), tuple(errors)), None


def _optional(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except Exception:
        return None


def _read_gpu(nvml: Any, index: int) -> Gpu:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    name = _text(nvml.nvmlDeviceGetName(handle))
    capability = _optional(nvml.nvmlDeviceGetCudaComputeCapability, handle)
    memory = _optional(nvml.nvmlDeviceGetMemoryInfo, handle)
    uuid = _optional(nvml.nvmlDeviceGetUUID, handle)
    pci = _optional(nvml.nvmlDeviceGetPciInfo, handle)
    bus_id = getattr(pci, "busId", None) if pci is not None else None
    return Gpu(
        index=index,
        name=name,
        compute_capability=f"{capability[0]}.{capability[1]}" if capability else None,
        memory_mib=int(memory.total) // (1024 * 1024) if memory is not None else None,
        uuid=_text(uuid) if uuid else None,
        pci_bus_id=_text(bus_id) if bus_id else None,
        mig_uuids=_mig_uuids(nvml, handle),
    )


def _mig_uuids(nvml: Any, handle: Any) -> tuple[str, ...] | None:
    """The UUIDs of the GPU's MIG instances: () when MIG is off or unsupported, None when NVML cannot say."""
    get_mode = getattr(nvml, "nvmlDeviceGetMigMode", None)
    if get_mode is None:  # an nvidia-ml-py without MIG calls
        return None
    try:
        mode = get_mode(handle)
    except Exception as exc:
        return () if "NotSupported" in type(exc).__name__ else None
    if not mode or not mode[0]:  # (current, pending): NVML_DEVICE_MIG_ENABLE is 1
        return ()
    uuids = []
    for slot in range(int(_optional(nvml.nvmlDeviceGetMaxMigDeviceCount, handle) or 0)):
        instance = _optional(nvml.nvmlDeviceGetMigDeviceHandleByIndex, handle, slot)  # NotFound: an empty slot
        uuid = _optional(nvml.nvmlDeviceGetUUID, instance) if instance is not None else None
        if uuid:
            uuids.append(_text(uuid))
    return tuple(uuids)


def parse_nvrm_version(text: str) -> str | None:
    """'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.12  Wed Sep ...' -> '535.104.12'."""
    match = _NVRM_VERSION.search(text + " ")
    return match.group(1) if match else None


def parse_gpu_information(text: str) -> dict[str, str]:
    """Key/value lines of /proc/driver/nvidia/gpus/<bus>/information."""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            values[key.strip()] = value.strip()
    return values


def read_procfs(proc_root: Path, nvml_error: str | None) -> DriverReport | None:
    """Driver version and GPU names from /proc/driver/nvidia (no CUDA version, capability or memory there)."""
    base = proc_root / PROC_DRIVER
    try:
        version = parse_nvrm_version((base / "version").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    gpus: list[Gpu] = []
    try:
        folders = sorted(p for p in (base / "gpus").iterdir() if p.is_dir())
    except OSError:
        folders = []
    for index, folder in enumerate(folders):
        try:
            info = parse_gpu_information((folder / "information").read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        gpus.append(
            Gpu(
                index=index,
                name=info.get("Model", "unknown NVIDIA GPU"),
                uuid=info.get("GPU UUID") or None,
                pci_bus_id=info.get("Bus Location") or folder.name,
            )
        )
    driver = DriverInfo(present=True, version=version, source="procfs", error=nvml_error)
    return DriverReport(driver, tuple(gpus))


def _matches(token: str, gpu: Gpu, position: int) -> bool:
    """Does one entry of a *_VISIBLE_DEVICES list name this GPU (or one of its MIG instances)?"""
    if token.isdigit():
        return int(token) == position
    token = token.lower()
    if token.startswith("mig-gpu-"):  # the form before driver R470: MIG-GPU-<gpu uuid>/<gi>/<ci>
        return bool(gpu.uuid) and token[len("mig-") :].split("/", 1)[0] == str(gpu.uuid).lower()
    if token.startswith("mig-"):
        return any(uuid.lower().startswith(token) for uuid in gpu.mig_uuids or ())
    return bool(gpu.uuid) and str(gpu.uuid).lower().startswith(token)


def _select(candidates: list[Gpu], tokens: list[str], stop_at_invalid: bool) -> list[Gpu]:
    chosen: list[Gpu] = []
    for token in tokens:
        token = token.split(":", 1)[0] if token[:1].isdigit() else token  # "0:1" is MIG 1 of GPU 0
        hits = [gpu for position, gpu in enumerate(candidates) if _matches(token, gpu, position)]
        if not hits and token.lower().startswith("mig-"):
            # an instance no GPU lists: it may belong to a GPU whose instances NVML could not read (procfs, an
            # old host file), which is then not marked hidden; with every GPU read, CUDA sees no such device
            unknown = [gpu for gpu in candidates if gpu.mig_uuids is None and gpu not in chosen]
            if unknown:
                chosen.extend(unknown)
                continue
        if not hits:
            if stop_at_invalid:
                break  # CUDA ignores everything after the first invalid entry ("-1" hides the rest)
            continue
        if hits[0] not in chosen:
            chosen.append(hits[0])
    return chosen


def apply_visibility(
    gpus: tuple[Gpu, ...], cuda_visible_devices: str | None, nvidia_visible_devices: str | None
) -> tuple[Gpu, ...]:
    """Mark GPUs hidden by NVIDIA_VISIBLE_DEVICES, then CUDA_VISIBLE_DEVICES, as visible=False.

    NVIDIA_VISIBLE_DEVICES: "all" shows all; "none", "void" and "" hide all; a list of indices that NVML
    already sees in full (the container runtime applied it and renumbered) shows all. CUDA_VISIBLE_DEVICES:
    indices count among the GPUs still visible, UUIDs match by prefix, "" hides all, and CUDA ignores
    everything after the first entry it cannot match. A MIG instance's UUID (MIG-..., as Kubernetes' device
    plugin sets it) keeps its parent GPU visible.
    """
    visible = list(gpus)
    if nvidia_visible_devices is not None:
        value = nvidia_visible_devices.strip().lower()
        tokens = [token.strip() for token in value.split(",") if token.strip()]
        if value in ("none", "void", ""):
            visible = []
        elif value != "all":
            indices_only = all(token.split(":", 1)[0].isdigit() for token in tokens)
            if not (indices_only and len(set(tokens)) == len(visible)):
                visible = _select(visible, tokens, stop_at_invalid=False)
    if cuda_visible_devices is not None:
        tokens = [token.strip() for token in cuda_visible_devices.split(",")]
        tokens = [token for token in tokens if token] if cuda_visible_devices.strip() else []
        visible = _select(visible, tokens, stop_at_invalid=True)
    shown = {id(gpu) for gpu in visible}
    return tuple(gpu if id(gpu) in shown else replace(gpu, visible=False) for gpu in gpus)
