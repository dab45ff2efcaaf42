"""Shared by the verify child: GPU sessions against CPU sessions on a check model (the built-in one, or the
user's `--model`) and the cuFFT check: deterministic inputs, timed sessions, the outputs compared, the provider
the session really runs on, the libraries it loaded. Each session is announced on stderr first
(`protocol.stage`): a crash or a hang is placed by the parent.

Standard library + onnxruntime + numpy; Python 3.8+.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import protocol, tensor_types, verify_libraries, verify_package
else:  # run as a script: its folder is sys.path[0]
    import protocol  # type: ignore[no-redef]
    import tensor_types  # type: ignore[no-redef]
    import verify_libraries  # type: ignore[no-redef]
    import verify_package  # type: ignore[no-redef]


# an error that means a library could not be loaded (as opposed to a problem of a check model)
LIBRARY_TROUBLE = re.compile(
    r"cannot open shared object|file too short|Failed to load|LoadLibrary|which is missing|cufft|CUFFT", re.I
)


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
    gpu_name = verify_package.GPU_PROVIDERS[args.provider]
    check = new_check(result, label, model, [gpu_name, "CPUExecutionProvider"])
    run = _ModelRun(ort, np, args, model, label, builtin, check, result)
    protocol.stage(f"session:{label}")
    gpu = _gpu_session(run)
    if gpu is None:
        return check
    _record_session(check, gpu, gpu_name)
    if not check["gpu_first"]:
        result["failures"].append(_fallback(check, args.provider, label))
    protocol.stage(f"cpu:{label}")
    _against_the_cpu(run, gpu)
    if builtin and check["gpu_first"]:
        expected = ("cudnn", "cublas") if args.provider == "cuda" else ()
        missing = [name for name in expected if name not in check["libraries_after"]]
        if missing and sys.platform.startswith("linux"):
            result["warnings"].append(f"{label}: ran on the GPU but {', '.join(missing)} never loaded")
    return check


def _record_session(check: dict[str, Any], run: dict, gpu_name: str) -> None:
    """What a GPU session that was created says: the providers it runs on (whether `gpu_name` is first), its
    timing and the libraries loaded after it."""
    check["providers_session"] = list(run["session"].get_providers())
    check["gpu_first"] = bool(check["providers_session"]) and check["providers_session"][0] == gpu_name
    check["gpu"] = run["timing"]
    check["libraries_after"] = sorted({lib["library"] for lib in verify_libraries.loaded_libraries()})


@dataclass(frozen=True)
class _ModelRun:
    """One model's check as its steps share it: onnxruntime and numpy, the child's arguments, the model, its label,
    whether it is the built-in one, and where its record and the report's failures go."""

    ort: Any
    np: Any
    args: argparse.Namespace
    model: str
    label: str
    builtin: bool
    check: dict[str, Any]
    result: dict[str, Any]


def _gpu_session(run: _ModelRun) -> dict | None:
    """The GPU session (`timed_session`), with TF32 off where the provider takes the option; None when it failed
    (the failure is in the report, with cuDNN named when the CUDA provider loaded without it)."""
    args, check, result, label = run.args, run.check, run.result, run.label
    for tf32_off in (True, False):
        try:
            gpu = timed_session(
                run.ort,
                run.model,
                gpu_provider_list(args.provider, args.device_id, tf32_off, args.engine_cache),
                lambda session: make_inputs(session, args.dims, run.np, result, label),
                args.runs,
                args.budget,
            )
        except Exception as exc:  # noqa: BLE001 - ORT raises its own exception types
            if tf32_off and "use_tf32" in str(exc):
                continue
            check["error"] = f"{type(exc).__name__}: {exc}"
            loaded = {lib["library"] for lib in verify_libraries.loaded_libraries()}
            check["libraries_after"] = sorted(loaded)
            failure = {"kind": "session-failed", "message": f"{label}: {check['error']}"}
            if run.builtin and args.provider == "cuda" and "cublas" in loaded and "cudnn" not in loaded:
                # the CUDA provider itself loaded (cuBLAS is linked), but cuDNN never did: the Conv could not get it
                failure["library"] = "cudnn"
                failure["message"] += " (cuDNN was never loaded into the process)"
            result["failures"].append(failure)
            return None
        check["tf32"] = "disabled (use_tf32=0)" if tf32_off else "default (use_tf32 option not accepted)"
        check["tf32_off"] = tf32_off
        return gpu
    return None  # pragma: no cover - the loop returns a session or a failure


def _fallback(check: dict[str, Any], provider: str, label: str) -> dict[str, Any]:
    """The failure of a session that does not run on the provider asked for first: TensorRT fell back to CUDA,
    or the GPU to the CPU (no driver, when its library cannot be loaded)."""
    if provider == "tensorrt" and check["providers_session"][:1] == ["CUDAExecutionProvider"]:
        return {
            "kind": "tensorrt-fallback",
            "message": f"{label}: asked for TensorrtExecutionProvider first but the session runs on "
            f"{check['providers_session']}: ONNX Runtime fell back to CUDA (TensorRT could not be loaded or "
            "created; its error is in ONNX Runtime's log)",
            "library": "nvinfer",
        }
    no_driver = driver_problem()
    return {
        "kind": "no-driver" if no_driver else "cpu-fallback",
        "message": f"{label}: asked for {verify_package.GPU_PROVIDERS[provider]} first but the session runs on "
        f"{check['providers_session']}: ONNX Runtime fell back to the CPU"
        + (f": no NVIDIA driver, {no_driver}" if no_driver else ""),
    }


def _against_the_cpu(run: _ModelRun, gpu: dict) -> None:
    """The same inputs through a CPU session: its timing and the outputs compared (a difference fails the built-in
    check; for the user's model it is a warning). A CPU session that fails is a warning."""
    args, check, result, label = run.args, run.check, run.result, run.label
    try:
        cpu = timed_session(
            run.ort, run.model, ["CPUExecutionProvider"], lambda s: gpu["feeds"], args.runs, args.budget
        )
        check["cpu"] = cpu["timing"]
        check["comparison"] = compare_outputs(gpu["outputs"], cpu["outputs"], check.get("tf32_off", False), run.np)
        if check["gpu_first"] and not check["comparison"]["agrees"]:
            message = (
                f"{label}: GPU and CPU results differ (max relative {check['comparison']['max_rel_diff']:.3g}"
                f" > {check['comparison']['tolerance']:.3g})"
            )
            if run.builtin:
                result["failures"].append({"kind": "results-differ", "message": message})
            else:
                result["warnings"].append(message)
    except Exception as exc:  # noqa: BLE001
        result["warnings"].append(f"{label}: CPU reference session failed: {type(exc).__name__}: {exc}")


def fft_check(ort: Any, np: Any, args: argparse.Namespace, result: dict[str, Any]) -> None:
    """Rfft (com.microsoft, CUDA-only kernel) against numpy: proves cuFFT loads and works."""
    model = os.path.join(args.models, "check_fft.onnx")
    gpu_name = verify_package.GPU_PROVIDERS[args.provider]
    check = new_check(result, "builtin:fft", model, [gpu_name])
    protocol.stage("session:builtin:fft")
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
    _record_session(check, run, gpu_name)
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
