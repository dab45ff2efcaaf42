"""Shared by the verify child: the onnxruntime that is installed and the one `import onnxruntime` loads, without
importing it (`inspect_package`), then imported (`import_onnxruntime`), and `onnxruntime.preload_dlls()` when the
user's code calls it (`preload`).

Standard library + onnxruntime; Python 3.8+.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import protocol, verify_libraries
else:  # run as a script: its folder is sys.path[0]
    import protocol  # type: ignore[no-redef]
    import verify_libraries  # type: ignore[no-redef]


GPU_PROVIDERS = {"cuda": "CUDAExecutionProvider", "tensorrt": "TensorrtExecutionProvider"}


PROVIDER_LIBS = {
    "cuda": ("libonnxruntime_providers_cuda.so", "onnxruntime_providers_cuda.dll"),
    "tensorrt": ("libonnxruntime_providers_tensorrt.so", "onnxruntime_providers_tensorrt.dll"),
}


def _read_build_info(ort_dir: str) -> dict:
    path = os.path.join(ort_dir, "capi", "build_and_package_info.py")
    found: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return found
    for key in ("package_name", "__version__", "cuda_version", "cudnn_version"):
        match = re.search(rf"^{re.escape(key)}\s*=\s*['\"]([^'\"]*)['\"]", text, re.M)
        if match:
            found[key] = match.group(1)
    return found


RELATED_DISTS = (
    "torch",
    "pycuda",
    "tensorrt",
    "tensorrt-cu11",
    "tensorrt-cu12",
    "tensorrt-cu13",
    "tensorrt-cu11-libs",
    "tensorrt-cu12-libs",
    "tensorrt-cu13-libs",
    "cupy-cuda12x",
    "cupy-cuda13x",
)


def installed_ort_dists(related: bool = False) -> list:
    """Every onnxruntime flavour installed in this interpreter (name, version, location); with related=True,
    the packages that bring or drive CUDA themselves (torch, pycuda, tensorrt, cupy) instead."""
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return []
    found: dict[str, Any] = {}
    for dist in metadata.distributions():
        name = str(dist.metadata["Name"] or "").strip()
        key = name.lower().replace("_", "-")
        wanted = key in RELATED_DISTS if related else key.startswith(("onnxruntime", "ort-nightly"))
        if wanted and not related and not _installs_onnxruntime(dist):
            wanted = False  # a plugin EP package (onnxruntime-ep-*): its own module, registered into the core
        if wanted and key not in found:
            location = None
            with contextlib.suppress(Exception):
                location = str(dist.locate_file(""))
            found[key] = {"name": key, "version": dist.version, "location": location}
    return sorted(found.values(), key=lambda d: d["name"])


def _installs_onnxruntime(dist: Any) -> bool:
    """Whether the distribution's RECORD lists files of the onnxruntime package (unknown: assumed so)."""
    try:
        files = dist.files
    except Exception:  # noqa: BLE001 - a broken RECORD: assume it does, as before
        return True
    if not files:
        return True
    return any(str(f).replace("\\", "/").startswith("onnxruntime/") for f in files)


def is_gpu_dist(name: str) -> bool:
    return "gpu" in name or "tensorrt" in name or name.endswith(("-cuda", "-cuda12", "-cuda13"))


def inspect_package(provider: str) -> dict:
    """Find the onnxruntime package that `import onnxruntime` will load, without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("onnxruntime")
    info: dict[str, Any] = {
        "dists": installed_ort_dists(),
        "related_dists": installed_ort_dists(related=True),
        "package_dir": None,
        "provider_libraries": [],
    }
    if spec is None or not spec.origin:
        return info
    ort_dir = os.path.dirname(spec.origin)
    info["package_dir"] = ort_dir
    build = _read_build_info(ort_dir)
    info["build_package_name"] = build.get("package_name")
    info["build_cuda_version"] = build.get("cuda_version")
    info["build_cudnn_version"] = build.get("cudnn_version")
    capi = os.path.join(ort_dir, "capi")
    try:
        names = os.listdir(capi)
    except OSError:
        names = []
    info["provider_libraries"] = sorted(n for n in names if "providers_" in n)
    info["has_provider_library"] = any(n in names for n in PROVIDER_LIBS[provider])
    return info


def installed(provider: str, result: dict[str, Any]) -> dict | None:
    """What is installed (`inspect_package`, stored as the report's `ort`), and what follows from it alone: both
    the CPU and a GPU package in one folder; no onnxruntime importable (then None: nothing more to check)."""
    protocol.stage("inspect")
    package = inspect_package(provider)
    result["ort"] = package
    gpu_dists = gpu_dist_names(package)
    cpu_dists = [d["name"] for d in package["dists"] if not is_gpu_dist(d["name"]) and d["name"] == "onnxruntime"]
    if gpu_dists and cpu_dists:
        result["failures"].append(
            {
                "kind": "cpu-and-gpu-installed",
                "message": f"both {', '.join(cpu_dists)} and {', '.join(gpu_dists)} are installed into the "
                "same "
                "onnxruntime/ folder: whichever was installed last wins",
            }
        )
    if package["package_dir"] is None:
        result["failures"].append({"kind": "not-installed", "message": "no onnxruntime package is importable"})
        return None
    return package


def gpu_dist_names(package: dict) -> list:
    """The GPU flavours among the installed onnxruntime distributions."""
    return [d["name"] for d in package["dists"] if is_gpu_dist(d["name"])]


def import_onnxruntime(package: dict, provider: str, result: dict[str, Any]) -> Any | None:
    """`import onnxruntime` (None when it fails: the failure is in the report), then what it says of itself: its
    version, device, providers, what ortprov's loader hook did; a failure when it has no GPU provider."""
    started = time.perf_counter()
    try:
        import onnxruntime as ort
    except Exception as exc:  # noqa: BLE001
        result["failures"].append(
            {"kind": "import-failed", "message": f"import onnxruntime: {type(exc).__name__}: {exc}"}
        )
        return None
    result["ort"]["import_s"] = round(time.perf_counter() - started, 4)
    hook = sys.modules.get("_ortprov_loader")  # ortprov's loader hook, which ran during the import
    result["loader_hook"] = dict(getattr(hook, "STATUS", {}) or {}) if hook is not None else None
    result["ort"]["version"] = getattr(ort, "__version__", None)
    result["ort"]["file"] = getattr(ort, "__file__", None)
    result["ort"]["imported_dist"] = package.get("build_package_name")
    for attr, key in (("get_device", "device"), ("get_available_providers", "available_providers")):
        try:
            result["ort"][key] = getattr(ort, attr)()
        except Exception as exc:  # noqa: BLE001
            result["ort"][key] = None
            result["warnings"].append(f"onnxruntime.{attr}() failed: {exc}")
    gpu_name = GPU_PROVIDERS[provider]
    available = result["ort"].get("available_providers") or []
    if not package.get("has_provider_library") or gpu_name not in available:
        gpu_dists = gpu_dist_names(package)
        if gpu_dists and (package.get("build_package_name") or "onnxruntime") == "onnxruntime":
            message = (
                f"`import onnxruntime` loads the CPU package ({package.get('build_package_name')}) although "
                f"{', '.join(gpu_dists)} is installed: the CPU package shadows it"
            )
        else:
            message = (
                f"the imported onnxruntime ({package.get('build_package_name') or 'unknown'} "
                f"{result['ort'].get('version')}) has no {gpu_name}; available: {available}"
            )
        result["failures"].append({"kind": "cpu-package-only", "message": message})
    return ort


def windows_driver_loadable(result: dict[str, Any]) -> bool:
    """Whether the NVIDIA driver's nvcuda.dll loads (Windows): without it no CUDA session can run, and the check
    says so before onnxruntime's code runs (a build server, a VM, wine); False puts the no-driver failure in."""
    import ctypes

    try:
        ctypes.WinDLL("nvcuda.dll")  # type: ignore[attr-defined]
    except OSError as exc:
        result["failures"].append(
            {"kind": "no-driver", "message": f"nvcuda.dll (the NVIDIA driver's CUDA library) cannot be loaded: {exc}"}
        )
        return False
    return True


def preload(ort: Any, requested: bool, result: dict[str, Any]) -> None:
    """`onnxruntime.preload_dlls()` when the user's code calls it (`requested`, --preload yes) and this onnxruntime
    has it; the report's `preload`: whether it was called, its error, the libraries it loaded."""
    preload_fn = getattr(ort, "preload_dlls", None)
    result["preload"] = {
        "requested": requested,
        "available": callable(preload_fn),
        "called": False,
        "error": None,
        "loaded": [],
    }
    if requested and callable(preload_fn):
        protocol.stage("preload")
        before = {lib["path"] for lib in verify_libraries.loaded_libraries()}
        try:
            preload_fn()
            result["preload"]["called"] = True
        except Exception as exc:  # noqa: BLE001
            result["preload"]["error"] = f"{type(exc).__name__}: {exc}"
        result["preload"]["loaded"] = [lib for lib in verify_libraries.loaded_libraries() if lib["path"] not in before]
