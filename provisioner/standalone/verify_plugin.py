"""Shared by the verify child: a plugin execution provider (`verify --provider tensorrt-rtx`), used as its guide says.

Import the EP's module (its own import preloads what it preloads; ortprov's loader hook, where installed, loads the
libraries its wheel bundles under other file names), ask it for its library and EP name, then: the library's
DT_NEEDED resolved as the loader would now (already mapped by soname, or found on the loader path; the driver's own
libraries are the driver's), which is all `--static` and a machine without a driver check; else
`register_execution_provider_library`, `get_ep_devices` for that EP, a session on the first device through
`SessionOptions.add_provider_for_devices`, and its outputs against a CPU session's.

Standard library only (numpy and onnxruntime where the target has them); Python 3.8+.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import time
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import elf, libnames, protocol, verify_libraries, verify_session, verify_static
else:  # run as a script: its folder is sys.path[0]
    import elf  # type: ignore[no-redef]
    import libnames  # type: ignore[no-redef]
    import protocol  # type: ignore[no-redef]
    import verify_libraries  # type: ignore[no-redef]
    import verify_session  # type: ignore[no-redef]
    import verify_static  # type: ignore[no-redef]

_MISSING = re.compile(r"([\w.+-]+\.so[\w.]*): cannot open shared object file")


def plugin_check(ort: Any, args: Any, result: dict[str, Any]) -> None:
    """The plugin EP's record (`result["plugin"]`) and its failures, as the module docstring says."""
    protocol.stage("plugin:import")
    record: dict[str, Any] = {"module": args.plugin_module, "registered": False, "devices": [], "closure": []}
    result["plugin"] = record
    try:
        module = importlib.import_module(args.plugin_module)
        record["version"] = getattr(module, "__version__", None)
        record["library"] = module.get_library_path()
        record["ep_name"] = module.get_ep_name()
    except Exception as exc:  # noqa: BLE001 - the EP's own code: anything it raises is the finding
        kind = "not-installed" if isinstance(exc, ImportError) else "import-failed"
        result["failures"].append(
            {"kind": kind, "message": f"import {args.plugin_module}: {type(exc).__name__}: {exc}"}
        )
        return
    hook = sys.modules.get("_ortprov_loader")
    record["hook"] = (getattr(hook, "PLUGINS", {}) or {}).get(args.plugin_module) if hook is not None else None
    if sys.platform.startswith("linux"):
        protocol.stage("static")
        _closure(record, result)
    if args.static or any(f["kind"] == "library-missing" for f in result["failures"]):
        return
    if sys.platform.startswith("linux") and verify_session.driver_problem():
        result["failures"].append(
            {"kind": "no-driver", "message": f"no NVIDIA driver: {verify_session.driver_problem()}"}
        )
        return
    _session(ort, args, record, result)


def _closure(record: dict[str, Any], result: dict[str, Any]) -> None:
    """Each library the EP's provider links: mapped already (by soname), the driver's, found, or missing."""
    path = record["library"]
    try:
        dynamic = elf.read_dynamic_file(path)
    except (OSError, ValueError) as exc:
        result["failures"].append({"kind": "provider-library-unreadable", "message": f"{path}: {exc}"})
        return
    mapped = _mapped_sonames()
    cache = verify_static._ldconfig_cache()
    for soname in dynamic.needed:
        entry: dict[str, Any] = {"soname": soname, "library": libnames.library_family(soname)}
        if soname in mapped:
            entry.update(status="loaded", path=mapped[soname])
        elif libnames.is_driver_library(soname):
            found, how = verify_static.resolve_soname(soname, dynamic, os.path.dirname(path), cache)
            entry.update(status="driver" if found else "driver-missing", path=found, how=how)
        else:
            found, how = verify_static.resolve_soname(soname, dynamic, os.path.dirname(path), cache)
            entry.update(status="found" if found else "missing", path=found, how=how)
        record["closure"].append(entry)
        if entry["status"] == "missing":
            bundled = _bundled_as(os.path.dirname(path), soname)
            where = f"; its wheel holds it as {bundled}, a name the loader does not look for" if bundled else ""
            result["failures"].append(
                {
                    "kind": "library-missing",
                    "library": entry["library"] or soname,
                    "message": f"{os.path.basename(path)} links {soname}, which nothing in the process or on the "
                    f"loader path provides (the library has no RUNPATH){where}",
                }
            )
        elif (
            entry["status"] == "found" and entry.get("path") and os.path.dirname(entry["path"]) != os.path.dirname(path)
        ):
            bundled = _bundled_as(os.path.dirname(path), soname)
            if bundled:
                result["warnings"].append(
                    f"{soname} would load from {entry['path']}, not the {bundled} the EP bundles (built against it)"
                )


def _bundled_as(folder: str, soname: str) -> str | None:
    """The file in the EP's folder that carries `soname` under a longer name (libcudart.so.13.4.36)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    return next((n for n in names if n.startswith(soname + ".")), None)


def _mapped_sonames() -> dict[str, str]:
    """soname -> path of the shared objects this process has mapped (Linux)."""
    found: dict[str, str] = {}
    mapped = verify_libraries.loaded_libraries(every=True)
    for library in (lib["path"] for lib in mapped if ".so" in lib["filename"]):
        try:
            soname = elf.read_dynamic_file(library).soname
        except (OSError, ValueError):
            continue
        found.setdefault(soname or os.path.basename(library), library)
        found.setdefault(os.path.basename(library), library)
    return found


def _session(ort: Any, args: Any, record: dict[str, Any], result: dict[str, Any]) -> None:
    """Register the library, find its devices, run the built-in check on the first one against the CPU."""
    protocol.stage("plugin:register")
    try:
        ort.register_execution_provider_library(record["ep_name"], record["library"])
        record["registered"] = True
    except Exception as exc:  # noqa: BLE001
        message = f"register_execution_provider_library: {type(exc).__name__}: {exc}"
        failure = {"kind": "plugin-register-failed", "message": message}
        missing = _MISSING.search(str(exc))
        if missing:
            failure.update(
                kind="library-missing", library=libnames.library_family(missing.group(1)) or missing.group(1)
            )
        result["failures"].append(failure)
        return
    devices = [d for d in ort.get_ep_devices() if d.ep_name == record["ep_name"]]
    record["devices"] = [_device(d) for d in devices]
    if not devices:
        record["gpus_seen"] = _discovered_gpus(ort)
        why = "the GPU is not one it supports, or the driver is not running it"
        if not record["gpus_seen"] and sys.platform.startswith("linux"):
            on_bus = _nvidia_pci_devices()
            why = (
                "onnxruntime discovered no GPU at all: on Linux it looks in /sys/class/drm, "
                + ("which this machine does not have" if not os.path.isdir("/sys/class/drm") else "which lists none")
                + (
                    f" (the NVIDIA GPU is on the PCI bus: {', '.join(on_bus)}; the nvidia-drm kernel module makes it a "
                    "DRM device)"
                    if on_bus
                    else ""
                )
            )
        result["failures"].append(
            {
                "kind": "plugin-no-device",
                "message": f"{record['ep_name']} registered, but get_ep_devices() gives it no device: {why}",
            }
        )
        return
    import numpy as np

    model = args.model or os.path.join(args.models, "check.onnx")
    label = "model" if args.model else "builtin:check"
    check = verify_session.new_check(result, label, model, [record["ep_name"], "CPUExecutionProvider"])
    protocol.stage(f"session:{label}")
    try:
        options = ort.SessionOptions()
        options.add_provider_for_devices(devices[:1], {})
        started = time.perf_counter()
        session = ort.InferenceSession(model, sess_options=options)
        create_s = time.perf_counter() - started
        feeds = verify_session.make_inputs(session, args.dims, np, result, label)
        started = time.perf_counter()
        outputs = session.run(None, feeds)
        check["gpu"] = {"create_s": round(create_s, 4), "first_run_s": round(time.perf_counter() - started, 4)}
        check["providers_session"] = list(session.get_providers())
        check["gpu_first"] = check["providers_session"][:1] == [record["ep_name"]]
    except Exception as exc:  # noqa: BLE001
        check["error"] = f"{type(exc).__name__}: {exc}"
        result["failures"].append({"kind": "session-failed", "message": f"{label}: {check['error']}"})
        return
    if not check["gpu_first"]:
        result["failures"].append(
            {
                "kind": "cpu-fallback",
                "message": f"{label}: the session runs on {check['providers_session']}, not {record['ep_name']}",
            }
        )
    protocol.stage(f"cpu:{label}")
    reference = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    check["comparison"] = verify_session.compare_outputs(outputs, reference, True, np)
    if not check["comparison"]["agrees"]:
        kind = "results-differ" if not args.model else None
        worst = check["comparison"]["max_rel_diff"]
        message = f"{label}: {record['ep_name']} and CPU results differ (max relative {worst:.3g})"
        if kind:
            result["failures"].append({"kind": kind, "message": message})
        else:
            result["warnings"].append(message)


def _discovered_gpus(ort: Any) -> list[str]:
    """The GPU hardware devices onnxruntime's own discovery found (seen through any EP's devices)."""
    found = []
    for device in ort.get_ep_devices():
        hardware = getattr(device, "device", None)
        if "GPU" in str(getattr(hardware, "type", "")):
            found.append(f"{getattr(device, 'ep_name', '?')}: vendor {getattr(hardware, 'vendor_id', '?')}")
    return found


def _nvidia_pci_devices() -> list[str]:
    """PCI addresses of NVIDIA display controllers (vendor 0x10de, class 0x03xxxx), read from sysfs."""
    root = "/sys/bus/pci/devices"
    found = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    for name in names:
        try:
            with open(os.path.join(root, name, "vendor")) as vendor, open(os.path.join(root, name, "class")) as kind:
                if vendor.read().strip() == "0x10de" and kind.read().strip().startswith("0x03"):
                    found.append(name)
        except OSError:
            continue
    return found


def _device(device: Any) -> dict[str, Any]:
    hardware = getattr(device, "device", None)
    return {
        "ep_name": getattr(device, "ep_name", None),
        "vendor": getattr(device, "ep_vendor", None),
        "type": str(getattr(hardware, "type", "")),
        "device_id": getattr(hardware, "device_id", None),
        "metadata": dict(getattr(hardware, "metadata", {}) or {}),
    }
