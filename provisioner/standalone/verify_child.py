"""ortprov verify child: prove (or disprove) a real GPU session inside the TARGET interpreter.

Run as `TARGET_PYTHON verify_child.py [options]` by provisioner/verify/runner.py; ortprov's tests also import
it. Standard library + onnxruntime + numpy only; Python 3.8+; its siblings elf.py (the ELF reader) and
libnames.py (the CUDA library names) come from its own folder. Writes exactly one JSON document on the real
stdout; everything else (ORT warnings, preload_dlls prints, stage markers "ortprov-verify-stage: NAME") goes to
stderr, which the parent keeps.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import time
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import elf, libnames, protocol, tensor_types
else:  # run as a script: its folder is sys.path[0]
    import elf  # type: ignore[no-redef]
    import libnames  # type: ignore[no-redef]
    import protocol  # type: ignore[no-redef]
    import tensor_types  # type: ignore[no-redef]

SCHEMA = 1
STAGE_PREFIX = "ortprov-verify-stage: "
HERE = os.path.dirname(os.path.abspath(__file__))

GPU_PROVIDERS = {"cuda": "CUDAExecutionProvider", "tensorrt": "TensorrtExecutionProvider"}
PROVIDER_LIBS = {
    "cuda": ("libonnxruntime_providers_cuda.so", "onnxruntime_providers_cuda.dll"),
    "tensorrt": ("libonnxruntime_providers_tensorrt.so", "onnxruntime_providers_tensorrt.dll"),
}

# loaded alongside a CUDA session but uninteresting as evidence
_IGNORED_NVIDIA = re.compile(r"^(libnvidia-(?!ml)|libnvdxgdmal|nvcuda64)", re.I)


def classify_source(path: str) -> str:
    """Where a library file comes from: pip|torch|cuda_toolkit|tensorrt|onnxruntime|driver|system|other."""
    norm = path.replace("\\", "/").lower()
    if "/site-packages/nvidia/" in norm or "/dist-packages/nvidia/" in norm:
        return "pip"
    if "/site-packages/torch/" in norm or "/dist-packages/torch/" in norm:
        return "torch"
    if "/site-packages/tensorrt" in norm or "/dist-packages/tensorrt" in norm:
        return "tensorrt"
    if "/site-packages/onnxruntime" in norm or "/dist-packages/onnxruntime" in norm:
        return "onnxruntime"
    if "/usr/local/cuda" in norm or "/nvidia gpu computing toolkit/cuda/" in norm or "/opt/cuda" in norm:
        return "cuda_toolkit"
    if "/usr/local/nvidia/" in norm or "/usr/lib/wsl/" in norm:
        return "driver"
    if norm.startswith(("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")) or "/windows/system32/" in norm:
        return "system"
    return "other"


# an error that means a library could not be loaded (as opposed to a problem of a check model)
LIBRARY_TROUBLE = re.compile(
    r"cannot open shared object|file too short|Failed to load|LoadLibrary|which is missing|cufft|CUFFT", re.I
)


def stage(name: str) -> None:
    """Mark progress on stderr so the parent knows where a crash or hang happened."""
    sys.stderr.write(STAGE_PREFIX + name + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------- static resolution (Linux loader rules)


def _ldconfig_cache() -> dict:
    """soname -> path from `ldconfig -p` (or the text file named by ORTPROV_VERIFY_LDCONFIG, for tests)."""
    text = ""
    fake = os.environ.get("ORTPROV_VERIFY_LDCONFIG")
    if fake:
        with open(fake, encoding="utf-8") as handle:
            text = handle.read()
    else:
        for exe in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
            try:
                text = subprocess.run([exe, "-p"], capture_output=True, text=True, timeout=10).stdout
                break
            except (OSError, subprocess.SubprocessError):
                continue
    cache = {}
    for line in text.splitlines():
        match = re.match(r"\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)", line)
        if (
            match
            and match.group(1) not in cache
            and ("x86-64" in match.group(2) or "64" in match.group(2) or os.uname().machine not in ("x86_64",))
        ):
            cache[match.group(1)] = match.group(3)
    return cache


def _default_dirs() -> list:
    override = os.environ.get("ORTPROV_VERIFY_DEFAULT_DIRS")
    if override is not None:
        return [d for d in override.split(":") if d]
    machine = os.uname().machine
    triplet = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}.get(machine, machine + "-linux-gnu")
    return [f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib64", "/usr/lib64", "/lib", "/usr/lib"]


def _expand_origin(entries: list, origin: str) -> list:
    return [e.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for e in entries]


def resolve_soname(soname: str, requester: elf.Dynamic, origin: str, cache: dict) -> tuple:
    """(path, how) the way glibc's loader finds `soname` for an object with `requester`'s RPATH/RUNPATH."""
    searches = []
    if not requester.runpath:
        searches += [(d, "rpath") for d in _expand_origin(requester.rpath, origin)]
    searches += [(d, "ld_library_path") for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    searches += [(d, "runpath") for d in _expand_origin(requester.runpath, origin)]
    for directory, how in searches:
        candidate = os.path.join(directory, soname)
        if is_elf(candidate):
            return candidate, how
    if soname in cache and is_elf(cache[soname]):
        return cache[soname], "ldconfig"
    for directory in _default_dirs():
        candidate = os.path.join(directory, soname)
        if is_elf(candidate):
            return candidate, "default_dir"
    return None, None


def is_elf(path: str) -> bool:
    """An existing ELF file (a file masked by an empty one, or a broken link, is not a library)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def _preload_candidates(site_dir: str, soname: str) -> str | None:
    """Where onnxruntime.preload_dlls() looks first: site-packages/nvidia/<pkg>/lib/<soname>."""
    nvidia = os.path.join(site_dir, "nvidia")
    if not os.path.isdir(nvidia):
        return None
    for package in sorted(os.listdir(nvidia)):
        candidate = os.path.join(nvidia, package, "lib", soname)
        if is_elf(candidate):
            return candidate
    return None


def static_check(
    provider: str, ort_dir: str, ort_module: Any | None, result: dict[str, Any], lazy_by_major: dict
) -> None:
    """Resolve every library the installed provider needs, without loading any of them."""
    capi = os.path.join(ort_dir, "capi")
    lib_name = PROVIDER_LIBS[provider][0]
    lib_path = os.path.join(capi, lib_name)
    result["static"] = {"provider_library": lib_path, "libraries": [], "elf_error": None}
    if not os.path.isfile(lib_path):
        if any(f["kind"] == "cpu-package-only" for f in result["failures"]):
            return
        result["failures"].append(
            {
                "kind": "cpu-package-only",
                "message": f"{lib_name} is not in {capi}: the installed onnxruntime has no {GPU_PROVIDERS[provider]}",
            }
        )
        return
    try:
        info = elf.read_dynamic_file(lib_path)
    except (OSError, ValueError) as exc:
        result["static"]["elf_error"] = str(exc)
        result["failures"].append({"kind": "provider-library-unreadable", "message": f"cannot read {lib_path}: {exc}"})
        return
    result["static"]["runpath"] = info.runpath
    result["static"]["rpath"] = info.rpath
    wanted = [(name, "linked") for name in info.needed]
    lazy = []
    paths_fn = getattr(ort_module, "_get_nvidia_dll_paths", None) if ort_module is not None else None
    if callable(paths_fn):
        try:
            lazy = [p[-1] for p in paths_fn(False, True, True)]
        except Exception as exc:  # noqa: BLE001 - private API, any failure just means "unknown"
            result["warnings"].append(f"onnxruntime._get_nvidia_dll_paths failed: {exc}")
    if not lazy:
        cuda_version = result.get("ort", {}).get("build_cuda_version")
        lazy = lazy_by_major.get((cuda_version or "").split(".")[0], [])
    for name in lazy:
        if name not in info.needed:
            wanted.append((name, "lazy"))
    cache = _ldconfig_cache()
    site_dir = os.path.dirname(ort_dir)
    mapped = {os.path.basename(lib["path"]): lib["path"] for lib in loaded_libraries(every=True)}
    for soname, how_needed in wanted:
        family = libnames.library_family(soname)
        if family is None and not soname.startswith("libonnxruntime") and libnames.is_system_library(soname):
            continue
        if soname in mapped:  # already in this process: the loader hook (or preload_dlls) loaded it
            path, how = mapped[soname], "loaded"
        else:
            path, how = resolve_soname(soname, info, capi, cache)
        preload_path = _preload_candidates(site_dir, soname)
        if path:
            status = "ok"
        elif family == "cuda":
            status = "driver-missing"  # libcuda.so.1 comes with the driver: expected on a machine without one
        elif preload_path:
            status = "preload-only"
        else:
            status = "missing"
        entry = {
            "soname": soname,
            "library": family,
            "needed": how_needed,
            "path": path,
            "via": how,
            "preload_path": preload_path,
            "source": classify_source(path or preload_path or ""),
            "status": status,
        }
        result["static"]["libraries"].append(entry)
        if status == "missing":
            result["failures"].append(
                {
                    "kind": "library-missing",
                    "library": family or soname,
                    "message": f"{soname} ({how_needed}) is found neither by the loader nor "
                    "by onnxruntime.preload_dlls()",
                }
            )
        elif status == "preload-only":
            helps = (
                "only onnxruntime.preload_dlls() finds it"
                if result.get("preload", {}).get("available")
                else ("and this onnxruntime has no preload_dlls()")
            )
            result["failures"].append(
                {
                    "kind": "library-not-on-path",
                    "library": family or soname,
                    "message": f"{soname} is at {preload_path} but a plain program's loader does not search "
                    f"there ({helps}; `ortprov apply` installs the loader hook)",
                }
            )


# ---------------------------------------------------------------- what is installed / imported


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
        if wanted and key not in found:
            location = None
            with contextlib.suppress(Exception):
                location = str(dist.locate_file(""))
            found[key] = {"name": key, "version": dist.version, "location": location}
    return sorted(found.values(), key=lambda d: d["name"])


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


# ---------------------------------------------------------------- loaded libraries


def loaded_libraries(every: bool = False) -> list:
    """Every CUDA-family library mapped into this process, with where it came from (every=True: every
    shared object, with library None where it is not a CUDA one)."""
    paths = []
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and parts[5].strip().startswith("/"):
                        paths.append(parts[5].strip().replace(" (deleted)", ""))
        except OSError:
            return []
    elif sys.platform == "win32":
        paths = _windows_modules()
    seen = set()
    found = []
    for path in paths:
        if path in seen:
            continue
        seen.add(path)
        filename = os.path.basename(path)
        if _IGNORED_NVIDIA.match(filename):
            continue
        family = libnames.library_family(filename)
        if family is None and not every:
            continue
        found.append({"library": family, "filename": filename, "path": path, "source": classify_source(path)})
    return found


def _windows_modules() -> list:  # pragma: no cover - exercised on Windows only
    import ctypes
    from ctypes import wintypes

    psapi = getattr(ctypes, "WinDLL")("psapi")  # noqa: B009 - Windows only
    kernel32 = getattr(ctypes, "WinDLL")("kernel32")  # noqa: B009
    # 64-bit handles: without these declarations ctypes would pass and return 32-bit ints
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    psapi.EnumProcessModules.argtypes = [
        wintypes.HANDLE,
        ctypes.POINTER(wintypes.HMODULE),
        wintypes.DWORD,
        ctypes.POINTER(wintypes.DWORD),
    ]
    psapi.EnumProcessModules.restype = wintypes.BOOL
    psapi.GetModuleFileNameExW.argtypes = [wintypes.HANDLE, wintypes.HMODULE, wintypes.LPWSTR, wintypes.DWORD]
    psapi.GetModuleFileNameExW.restype = wintypes.DWORD
    process = kernel32.GetCurrentProcess()
    count = 1024
    while True:
        modules = (wintypes.HMODULE * count)()
        needed = wintypes.DWORD()
        first = ctypes.cast(modules, ctypes.POINTER(wintypes.HMODULE))
        if not psapi.EnumProcessModules(process, first, ctypes.sizeof(modules), ctypes.byref(needed)):
            return []
        if needed.value <= ctypes.sizeof(modules):
            break
        count = needed.value // ctypes.sizeof(wintypes.HMODULE) + 16
    result = []
    buffer = ctypes.create_unicode_buffer(1024)
    for i in range(needed.value // ctypes.sizeof(wintypes.HMODULE)):
        if psapi.GetModuleFileNameExW(process, modules[i], buffer, 1024):
            result.append(buffer.value)
    return result


# ---------------------------------------------------------------- sessions


def make_inputs(session: Any, dims: dict, np: Any, result: dict[str, Any], label: str) -> dict:
    """Deterministic inputs for every model input; symbolic dimensions sized from --dim (default 1)."""
    rng = np.random.default_rng(0)
    feeds = {}
    specs = []
    for arg in session.get_inputs():
        shape = []
        for dim in arg.shape:
            if isinstance(dim, int) and dim >= 0:
                shape.append(dim)
            elif isinstance(dim, str) and dim in dims:
                shape.append(dims[dim])
            else:
                shape.append(1)
                result["warnings"].append(f"{label}: input {arg.name!r} dimension {dim!r} not sized by --dim; using 1")
        dtype = tensor_types.NUMPY_TYPES.get(arg.type)
        if dtype is None:
            raise RuntimeError(f"input {arg.name!r} has type {arg.type}, which ortprov cannot generate")
        if dtype.startswith("float"):
            value = rng.standard_normal(shape).astype(dtype)
        elif dtype == "bool":
            value = rng.integers(0, 2, size=shape).astype(bool)
        else:
            value = rng.integers(0, 10, size=shape).astype(dtype)
        feeds[arg.name] = value
        specs.append({"name": arg.name, "type": arg.type, "shape": shape})
    result.setdefault("inputs", {})[label] = specs
    return feeds


def timed_session(ort: Any, model: str, providers: list, feeds_fn: Any, runs: int, budget_s: float) -> dict:
    """Create a session, run once, then time steady-state runs. Returns dict with session + outputs."""
    options = ort.SessionOptions()
    options.log_severity_level = 2
    started = time.perf_counter()
    session = ort.InferenceSession(model, sess_options=options, providers=providers)
    create_s = time.perf_counter() - started
    feeds = feeds_fn(session)
    started = time.perf_counter()
    outputs = session.run(None, feeds)
    first_s = time.perf_counter() - started
    times: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(times) < runs and (time.perf_counter() < deadline or len(times) < 3):
        started = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - started)
    times.sort()
    median = times[len(times) // 2] if times else None
    return {
        "session": session,
        "outputs": outputs,
        "feeds": feeds,
        "timing": {
            "create_s": round(create_s, 4),
            "first_run_s": round(first_s, 4),
            "median_run_ms": round(median * 1000, 4) if median is not None else None,
            "runs": len(times),
        },
    }


def compare_outputs(gpu_outputs: list, cpu_outputs: list, tf32_off: bool, np: Any) -> dict:
    """Normwise relative error per output, judged against a tolerance that knows about TF32 / fp16."""
    worst = 0.0
    worst_abs = 0.0
    tolerance = 1e-4 if tf32_off else 1e-2
    for gpu, cpu in zip(gpu_outputs, cpu_outputs):  # noqa: B905 - zip(strict=) needs Python 3.10
        if not hasattr(gpu, "dtype") or not hasattr(cpu, "dtype"):
            continue
        if gpu.shape != cpu.shape:
            return {
                "agrees": False,
                "max_abs_diff": None,
                "max_rel_diff": None,
                "tolerance": tolerance,
                "detail": f"shape {gpu.shape} on the GPU, {cpu.shape} on the CPU",
            }
        if gpu.dtype.kind in "fc":
            if gpu.dtype == np.float16 or cpu.dtype == np.float16:
                tolerance = max(tolerance, 1e-2)
            a = gpu.astype(np.float64)
            b = cpu.astype(np.float64)
            if not (np.isfinite(a).all() and np.isfinite(b).all()):
                same_nan = np.array_equal(np.isnan(a), np.isnan(b))
                if not same_nan:
                    return {
                        "agrees": False,
                        "max_abs_diff": None,
                        "max_rel_diff": None,
                        "tolerance": tolerance,
                        "detail": "non-finite values differ",
                    }
                mask = np.isfinite(a) & np.isfinite(b)
                a, b = a[mask], b[mask]
            if a.size == 0:
                continue
            diff = float(np.max(np.abs(a - b)))
            scale = float(np.max(np.abs(b)))
            worst_abs = max(worst_abs, diff)
            worst = max(worst, diff / scale if scale > 0 else diff)
        else:
            if not np.array_equal(gpu, cpu):
                mismatch = float(np.mean(gpu != cpu))
                worst = max(worst, mismatch)
                worst_abs = max(worst_abs, mismatch)
    return {
        "agrees": worst <= tolerance,
        "max_abs_diff": worst_abs,
        "max_rel_diff": worst,
        "tolerance": tolerance,
        "detail": None,
    }


def driver_problem() -> str | None:
    """Why the NVIDIA driver's CUDA library cannot be loaded (None: it can). Loading it starts nothing."""
    import ctypes

    name = "nvcuda.dll" if sys.platform.startswith("win") else "libcuda.so.1"
    try:
        ctypes.CDLL(name)
    except OSError as exc:
        return f"{name} cannot be loaded ({exc})"
    return None


def gpu_provider_list(provider: str, device_id: int, tf32_off: bool, engine_cache: str | None = None) -> list:
    cuda_options = {"device_id": str(device_id)}
    if tf32_off:
        cuda_options["use_tf32"] = "0"
    if provider == "tensorrt":
        trt_options = {"device_id": str(device_id)}
        if engine_cache:
            trt_options.update(trt_engine_cache_enable="True", trt_engine_cache_path=engine_cache)
        return [
            ("TensorrtExecutionProvider", trt_options),
            ("CUDAExecutionProvider", cuda_options),
            "CPUExecutionProvider",
        ]
    return [("CUDAExecutionProvider", cuda_options), "CPUExecutionProvider"]


def cache_files(folder: str) -> dict:
    """name -> (size, mtime) of the files an engine cache folder holds."""
    found = {}
    for root, _dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            found[os.path.relpath(path, folder)] = (info.st_size, info.st_mtime_ns)
    return found


def tensorrt_check(ort: Any, np: Any, args: argparse.Namespace, result: dict[str, Any]) -> None:
    """After a TensorRT session: which libnvinfer the process loaded, and whether a second session with the
    same engine cache reuses the engine the first one built (no new or rewritten engine file)."""
    loaded = [lib for lib in loaded_libraries() if lib["library"] == "nvinfer"]
    libnvinfer = next((lib for lib in loaded if lib["filename"].lower().startswith(("libnvinfer.so", "nvinfer"))), None)
    record: dict[str, Any] = {
        "libnvinfer": libnvinfer["path"] if libnvinfer else None,
        "libnvinfer_source": libnvinfer["source"] if libnvinfer else None,
        "engine_cache": args.engine_cache,
        "first_create_s": None,
        "second_create_s": None,
        "engine_files": 0,
        "written_by_second": [],
        "cache_hit": False,
    }
    result["tensorrt"] = record
    check = result["checks"][0] if result["checks"] else None
    if check is not None and check.get("gpu"):
        record["first_create_s"] = check["gpu"]["create_s"]
    if libnvinfer is None:
        result["failures"].append(
            {"kind": "tensorrt-not-loaded", "message": "the session ran, but no libnvinfer is mapped into the process"}
        )
        return
    before = cache_files(args.engine_cache)
    record["engine_files"] = len(before)
    if not before:
        result["failures"].append(
            {
                "kind": "engine-cache-miss",
                "message": f"the first TensorRT session wrote no engine into {args.engine_cache} "
                "(trt_engine_cache_enable was set)",
            }
        )
        return
    stage("session:tensorrt-cache")
    model = os.path.join(args.models, "check.onnx") if not args.model else args.model
    try:
        second = timed_session(
            ort,
            model,
            gpu_provider_list("tensorrt", args.device_id, False, args.engine_cache),
            lambda s: make_inputs(s, args.dims, np, result, "tensorrt-cache"),
            1,
            0.1,
        )
    except Exception as exc:  # noqa: BLE001
        result["failures"].append(
            {"kind": "engine-cache-miss", "message": f"the second TensorRT session failed: {type(exc).__name__}: {exc}"}
        )
        return
    record["second_create_s"] = second["timing"]["create_s"]
    after = cache_files(args.engine_cache)
    record["written_by_second"] = sorted(name for name, facts in after.items() if before.get(name) != facts)
    first = list(second["session"].get_providers())[:1]
    record["cache_hit"] = not record["written_by_second"] and first == ["TensorrtExecutionProvider"]
    if not record["cache_hit"]:
        result["failures"].append(
            {
                "kind": "engine-cache-miss",
                "message": "a second session with the same engine cache built its engine again (wrote "
                f"{', '.join(record['written_by_second']) or 'nothing, but ran on ' + str(first)})",
            }
        )


def new_check(result: dict[str, Any], label: str, model: str, providers: list[str]) -> dict[str, Any]:
    """A check's record, appended to the result before the check runs."""
    check: dict[str, Any] = {
        "model": label,
        "path": model,
        "providers_requested": providers,
        "providers_session": [],
        "gpu_first": False,
        "tf32": None,
        "gpu": None,
        "cpu": None,
        "comparison": None,
        "libraries_after": [],
        "error": None,
    }
    result["checks"].append(check)
    return check


def check_model(
    ort: Any, np: Any, args: argparse.Namespace, model: str, label: str, builtin: bool, result: dict[str, Any]
) -> dict:
    """GPU session vs CPU session on one model: provider order, agreement, timings, libraries touched."""
    gpu_name = GPU_PROVIDERS[args.provider]
    check = new_check(result, label, model, [gpu_name, "CPUExecutionProvider"])

    def feeds_fn(session: Any) -> dict:
        return make_inputs(session, args.dims, np, result, label)

    stage(f"session:{label}")
    gpu = None
    for tf32_off in (True, False):
        try:
            gpu = timed_session(
                ort,
                model,
                gpu_provider_list(args.provider, args.device_id, tf32_off, args.engine_cache),
                feeds_fn,
                args.runs,
                args.budget,
            )
            check["tf32"] = "disabled (use_tf32=0)" if tf32_off else "default (use_tf32 option not accepted)"
            check["tf32_off"] = tf32_off
            break
        except Exception as exc:  # noqa: BLE001 - ORT raises its own exception types
            if tf32_off and "use_tf32" in str(exc):
                continue
            check["error"] = f"{type(exc).__name__}: {exc}"
            loaded = {lib["library"] for lib in loaded_libraries()}
            check["libraries_after"] = sorted(loaded)
            failure = {"kind": "session-failed", "message": f"{label}: {check['error']}"}
            if builtin and args.provider == "cuda" and "cublas" in loaded and "cudnn" not in loaded:
                # the CUDA provider itself loaded (cuBLAS is linked), but cuDNN never did: the Conv could not get it
                failure["library"] = "cudnn"
                failure["message"] += " (cuDNN was never loaded into the process)"
            result["failures"].append(failure)
            return check
    if gpu is None:  # pragma: no cover - the loop either breaks with a session or returns
        return check
    check["providers_session"] = list(gpu["session"].get_providers())
    check["gpu_first"] = bool(check["providers_session"]) and check["providers_session"][0] == gpu_name
    check["gpu"] = gpu["timing"]
    check["libraries_after"] = sorted({lib["library"] for lib in loaded_libraries()})
    if (
        not check["gpu_first"]
        and args.provider == "tensorrt"
        and check["providers_session"][:1] == ["CUDAExecutionProvider"]
    ):
        result["failures"].append(
            {
                "kind": "tensorrt-fallback",
                "message": f"{label}: asked for TensorrtExecutionProvider first but the session runs on "
                f"{check['providers_session']}: ONNX Runtime fell back to CUDA (TensorRT could not be loaded or "
                "created; its error is in ONNX Runtime's log)",
                "library": "nvinfer",
            }
        )
    elif not check["gpu_first"]:
        no_driver = driver_problem()
        result["failures"].append(
            {
                "kind": "no-driver" if no_driver else "cpu-fallback",
                "message": f"{label}: asked for {gpu_name} first but the session runs on "
                f"{check['providers_session']}: ONNX Runtime fell back to the CPU"
                + (f": no NVIDIA driver, {no_driver}" if no_driver else ""),
            }
        )
    stage(f"cpu:{label}")
    try:
        cpu = timed_session(ort, model, ["CPUExecutionProvider"], lambda s: gpu["feeds"], args.runs, args.budget)
        check["cpu"] = cpu["timing"]
        check["comparison"] = compare_outputs(gpu["outputs"], cpu["outputs"], check.get("tf32_off", False), np)
        if check["gpu_first"] and not check["comparison"]["agrees"]:
            message = (
                f"{label}: GPU and CPU results differ (max relative {check['comparison']['max_rel_diff']:.3g}"
                f" > {check['comparison']['tolerance']:.3g})"
            )
            if builtin:
                result["failures"].append({"kind": "results-differ", "message": message})
            else:
                result["warnings"].append(message)
    except Exception as exc:  # noqa: BLE001
        result["warnings"].append(f"{label}: CPU reference session failed: {type(exc).__name__}: {exc}")
    if builtin and check["gpu_first"]:
        expected = ("cudnn", "cublas") if args.provider == "cuda" else ()
        missing = [name for name in expected if name not in check["libraries_after"]]
        if missing and sys.platform.startswith("linux"):
            result["warnings"].append(f"{label}: ran on the GPU but {', '.join(missing)} never loaded")
    return check


def fft_check(ort: Any, np: Any, args: argparse.Namespace, result: dict[str, Any]) -> None:
    """Rfft (com.microsoft, CUDA-only kernel) against numpy: proves cuFFT loads and works."""
    model = os.path.join(args.models, "check_fft.onnx")
    gpu_name = GPU_PROVIDERS[args.provider]
    check = new_check(result, "builtin:fft", model, [gpu_name])
    stage("session:builtin:fft")
    try:
        run = timed_session(
            ort,
            model,
            gpu_provider_list(args.provider, args.device_id, False, args.engine_cache)[:-1],
            lambda s: make_inputs(s, {}, np, result, "builtin:fft"),
            args.runs,
            args.budget,
        )
    except Exception as exc:  # noqa: BLE001
        check["error"] = f"{type(exc).__name__}: {exc}"
        if LIBRARY_TROUBLE.search(str(exc)):
            result["failures"].append(
                {
                    "kind": "session-failed",
                    "library": "cufft",
                    "message": f"builtin:fft (cuFFT): {check['error']}",
                }
            )
        else:  # the check model's own problem (e.g. an operator this build lacks), not the user's
            result["warnings"].append(f"builtin:fft (cuFFT) could not run: {check['error']}")
        return
    check["providers_session"] = list(run["session"].get_providers())
    check["gpu_first"] = bool(check["providers_session"]) and check["providers_session"][0] == gpu_name
    check["gpu"] = run["timing"]
    check["libraries_after"] = sorted({lib["library"] for lib in loaded_libraries()})
    signal = next(iter(run["feeds"].values())).astype(np.float64)
    spectrum = np.fft.rfft(signal, axis=-1)
    expected = np.stack([spectrum.real, spectrum.imag], axis=-1)
    got = run["outputs"][0].astype(np.float64)
    if got.shape != expected.shape:
        got = got.reshape(expected.shape) if got.size == expected.size else got
    if got.shape != expected.shape:
        comparison = {
            "agrees": False,
            "max_abs_diff": None,
            "max_rel_diff": None,
            "tolerance": 1e-4,
            "detail": f"shape {got.shape}, expected {expected.shape}",
        }
    else:
        diff = float(np.max(np.abs(got - expected)))
        scale = float(np.max(np.abs(expected))) or 1.0
        comparison = {
            "agrees": diff / scale <= 1e-4,
            "max_abs_diff": diff,
            "max_rel_diff": diff / scale,
            "tolerance": 1e-4,
            "detail": "against numpy.fft.rfft",
        }
    check["comparison"] = comparison
    if not comparison["agrees"]:
        result["failures"].append({"kind": "results-differ", "message": "builtin:fft: cuFFT result differs from numpy"})


# ---------------------------------------------------------------- main


def parse_args(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--provider", choices=sorted(GPU_PROVIDERS), default="cuda")
    parser.add_argument("--model", default=None)
    parser.add_argument("--models", required=True, help="the folder of the built-in check models")
    parser.add_argument("--static", action="store_true")
    parser.add_argument("--dim", action="append", default=[], help="NAME=N for a symbolic input dimension")
    parser.add_argument("--preload", choices=("yes", "no"), default="no")
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--budget", type=float, default=0.5, help="seconds of steady-state runs per session")
    parser.add_argument(
        "--lazy-sonames",
        action="append",
        default=[],
        metavar="MAJOR=SONAME,...",
        help="libraries a build of that CUDA major opens at run time (ortprov's matrix), for an onnxruntime "
        "too old to say itself (no _get_nvidia_dll_paths)",
    )
    args = parser.parse_args(argv)
    args.engine_cache = None  # TensorRT's engine cache folder, made by run() for --provider tensorrt
    dims = {}
    for item in args.dim:
        name, _, value = item.partition("=")
        dims[name] = int(value)
    args.dims = dims
    args.lazy_by_major = {}
    for item in args.lazy_sonames:
        major, _, names = item.partition("=")
        args.lazy_by_major[major] = [name for name in names.split(",") if name]
    return args


def run(args: argparse.Namespace) -> dict:
    result: dict[str, Any] = {
        "schema": SCHEMA,
        "mode": "static" if args.static else "session",
        "provider": args.provider,
        "python": sys.executable,
        "python_version": "{}.{}.{}".format(*sys.version_info[:3]),
        "platform": sys.platform,
        "failures": [],
        "warnings": [],
        "checks": [],
        "loaded_libraries": [],
        "ort": {},
        "preload": {},
    }
    gpu_name = GPU_PROVIDERS[args.provider]
    stage("inspect")
    package = inspect_package(args.provider)
    result["ort"] = package
    dists = package["dists"]
    gpu_dists = [d["name"] for d in dists if is_gpu_dist(d["name"])]
    cpu_dists = [d["name"] for d in dists if not is_gpu_dist(d["name"]) and d["name"] == "onnxruntime"]
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
        return result

    stage("import")
    started = time.perf_counter()
    try:
        import onnxruntime as ort
    except Exception as exc:  # noqa: BLE001
        result["failures"].append(
            {"kind": "import-failed", "message": f"import onnxruntime: {type(exc).__name__}: {exc}"}
        )
        return result
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
    available = result["ort"].get("available_providers") or []
    if not package.get("has_provider_library") or gpu_name not in available:
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

    preload_fn = getattr(ort, "preload_dlls", None)
    result["preload"] = {
        "requested": args.preload == "yes",
        "available": callable(preload_fn),
        "called": False,
        "error": None,
        "loaded": [],
    }
    if args.preload == "yes" and callable(preload_fn):
        stage("preload")
        before = {lib["path"] for lib in loaded_libraries()}
        try:
            preload_fn()
            result["preload"]["called"] = True
        except Exception as exc:  # noqa: BLE001
            result["preload"]["error"] = f"{type(exc).__name__}: {exc}"
        result["preload"]["loaded"] = [lib for lib in loaded_libraries() if lib["path"] not in before]

    if args.static:
        stage("static")
        if sys.platform.startswith("linux"):
            static_check(args.provider, package["package_dir"], ort, result, args.lazy_by_major)
        else:
            result["warnings"].append("--static reads ELF files and is implemented for Linux only")
        return result

    try:
        import numpy as np
    except ImportError as exc:
        result["failures"].append({"kind": "numpy-missing", "message": f"import numpy: {exc}"})
        return result
    if args.provider == "tensorrt":
        import tempfile

        args.engine_cache = tempfile.mkdtemp(prefix="ortprov-trt-engines-")
    try:
        if args.model:
            check_model(ort, np, args, args.model, "model", False, result)
        else:
            check_model(ort, np, args, os.path.join(args.models, "check.onnx"), "builtin:check", True, result)
            if result["checks"][-1]["gpu_first"] and args.provider == "cuda":
                fft_check(ort, np, args, result)
        if args.provider == "tensorrt" and result["checks"] and result["checks"][0]["gpu_first"]:
            tensorrt_check(ort, np, args, result)
    finally:
        if args.engine_cache:
            import shutil

            shutil.rmtree(args.engine_cache, ignore_errors=True)
    result["loaded_libraries"] = loaded_libraries()
    return result


def main(argv: list | None = None) -> int:
    # a plain program's sys.path: without this folder (its siblings are imported already)
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != HERE]
    # keep the real stdout for the JSON document; anything printed by libraries goes to stderr
    real_stdout = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    args = parse_args(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    result = run(args)
    result["duration_s"] = round(time.perf_counter() - started, 4)
    stage("done")
    protocol.send(result, real_stdout)
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
