"""Shared by the tune child: a variant's session(s) and how one run goes through them; the process's memory.

A variant (from provisioner/tune/report.py's Variant.request()): {"provider": "cpu"|"cuda", "provider_options",
"session_options", "binding": "none"|"copy", "per_shape": null|"sessions"|"graphs", "shared_arena": bool}.

- binding "none": session.run with numpy arrays; "copy": I/O binding, the inputs copied to the device each run
  and the outputs left there by the run and copied back after it (the copies timed apart from the compute);
- per_shape "graphs": shape_sessions.GraphPerShape, one session with a CUDA graph captured per input shape
  (a CUDA graph of one padded shape is the same with one shape); "sessions": shape_sessions.SessionPerShape,
  a session per input shape, created at the shape's first run (its creation is part of that run's time).

Standard library + onnxruntime + numpy; Python 3.8+.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import shape_sessions
else:  # run as a script: its folder is sys.path[0]
    import shape_sessions  # type: ignore[no-redef]

PROVIDERS = {"cuda": "CUDAExecutionProvider", "cpu": "CPUExecutionProvider"}
DEVICES = {"cuda": "cuda", "cpu": "cpu"}


def session_options(ort: Any, wanted: dict) -> Any:
    """SessionOptions with the variant's settings (warnings logged: cuDNN's fallback notices are evidence)."""
    options = ort.SessionOptions()
    options.log_severity_level = 2
    for key, value in (wanted or {}).items():
        if key == "graph_optimization_level":
            options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, str(value))
        elif key in ("enable_mem_pattern", "enable_cpu_mem_arena"):
            setattr(options, key, str(value).lower() in ("1", "true"))
        elif key in ("intra_op_num_threads", "inter_op_num_threads"):
            setattr(options, key, int(value))
        else:
            raise ValueError(f"unknown session option {key!r}")
    return options


def providers_for(variant: dict) -> list:
    name = PROVIDERS[variant["provider"]]
    if variant["provider"] == "cpu":
        return [(name, dict(variant.get("provider_options") or {}))]
    return [(name, dict(variant.get("provider_options") or {})), "CPUExecutionProvider"]


def open_session(ort: Any, model: str, variant: dict, options: Any = None) -> tuple:
    """(session-like, seconds to create it, None) or (None, None, a result saying why there is none). The
    session-like object is an InferenceSession, or a shape_sessions helper for the per-shape variants."""
    wanted = PROVIDERS[variant["provider"]]
    available = list(ort.get_available_providers())
    if wanted not in available:
        why = "{} is not among this onnxruntime's providers ({})".format(wanted, ", ".join(available))
        return None, None, {"status": "unavailable", "reason": why}
    try:
        options = options or session_options(ort, variant.get("session_options") or {})
    except (AttributeError, ValueError) as exc:  # a setting this onnxruntime does not have
        return None, None, {"status": "refused", "stage": "create", "reason": f"{type(exc).__name__}: {exc}"}
    providers = providers_for(variant)
    per_shape = variant.get("per_shape")
    try:
        started = time.perf_counter()
        session: Any
        if per_shape == "graphs":
            session = shape_sessions.GraphPerShape(model, providers, options)
        elif per_shape == "sessions":
            shared = bool(variant.get("shared_arena"))
            session = shape_sessions.SessionPerShape(model, providers, options, shared_arena=shared)
        else:
            session = ort.InferenceSession(model, sess_options=options, providers=providers)
        created = time.perf_counter() - started
    except Exception as exc:  # noqa: BLE001 - ORT raises its own types; the message is the evidence
        message = f"{type(exc).__name__}: {exc}"
        asked = variant.get("provider_options") or {}
        refused = any(key in str(exc) for key in asked) or "provider option" in str(exc).lower()
        refused = refused or isinstance(exc, AttributeError)  # an API this onnxruntime lacks
        return None, None, {"status": "refused" if refused else "failed", "stage": "create", "reason": message}
    running = list(session.get_providers())
    if not running or running[0] != wanted:
        why = f"asked for {wanted} first, the session runs on {running}"
        return None, None, {"status": "fell-back", "reason": why, "session_providers": running}
    return session, created, None


def effective_options(session: Any, provider: str) -> dict:
    try:
        found = session.get_provider_options().get(PROVIDERS[provider], {})
    except Exception:  # noqa: BLE001 - older builds: unknown
        return {}
    return {str(key): str(value) for key, value in found.items()}


def input_specs(session: Any) -> list:
    return [{"name": a.name, "type": a.type, "shape": list(a.shape)} for a in session.get_inputs()]


class Runner:
    """Runs a variant's session the way the variant says; `run` returns the times and, when asked, the outputs
    (numpy, the whole of them: the comparison crops)."""

    def __init__(self, ort: Any, session: Any, variant: dict) -> None:
        self.ort, self.session = ort, session
        self.binding = variant.get("binding") or "none"
        self.device = DEVICES[variant["provider"]]
        self.outputs = [o.name for o in session.get_outputs()]
        self.buffers: dict = {}  # (input name, shape, dtype) -> device OrtValue

    def states(self) -> int:
        """Sessions or captured graphs kept per shape (1 for a plain session)."""
        return len(getattr(self.session, "sessions", None) or getattr(self.session, "graphs", None) or {}) or 1

    def run(self, feed: dict, keep: bool = False) -> tuple:
        """((total, copy in, compute, copy out) in seconds, outputs or None); the copies are 0 unless the
        variant binds (ORT does them inside session.run)."""
        if self.binding != "copy":
            started = time.perf_counter()
            outputs = self.session.run(None, feed)
            return (time.perf_counter() - started, 0.0, 0.0, 0.0), outputs if keep else None
        started = time.perf_counter()
        binding = self.session.io_binding()
        for name, array in feed.items():
            key = (name, array.shape, str(array.dtype))
            value = self.buffers.get(key)
            if value is None:
                value = self.ort.OrtValue.ortvalue_from_shape_and_type(array.shape, array.dtype, self.device, 0)
                self.buffers[key] = value
            value.update_inplace(array)
            binding.bind_ortvalue_input(name, value)
        for name in self.outputs:
            binding.bind_output(name, self.device, 0)
        copied_in = time.perf_counter()
        self.session.run_with_iobinding(binding)
        computed = time.perf_counter()
        outputs = [value.numpy() for value in binding.get_outputs()]
        done = time.perf_counter()
        times = (done - started, copied_in - started, computed - copied_in, done - computed)
        return times, outputs if keep else None


# ---------------------------------------------------------------- memory


def rss_mb() -> float | None:
    """This process's resident memory (Linux: /proc/self/status), MiB."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        return None
    return None


_CUDART: list = []


def gpu_used_mb() -> float | None:
    """GPU memory in use on the current device (total - free, cudaMemGetInfo of the CUDA runtime onnxruntime
    loaded, found in /proc/self/maps), MiB; None before a CUDA session or off Linux. The whole device's: other
    processes count too, so a difference between two readings is what this process added."""
    if not _CUDART:
        path = None
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if "libcudart.so" in line and "/" in line:
                        path = line[line.index("/") :].strip()
                        break
        except OSError:
            return None
        if path is None:
            return None
        try:
            _CUDART.append(ctypes.CDLL(path))
        except OSError:
            return None
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    if _CUDART[0].cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)) != 0:
        return None
    return round((total.value - free.value) / 1048576.0, 1)


def memory() -> dict:
    return {"rss_mb": rss_mb(), "gpu_mb": gpu_used_mb() if os.name == "posix" else None}
