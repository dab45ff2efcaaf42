"""ortprov tune child: time one model's sessions inside the TARGET interpreter, one request at a time.

Run as `TARGET_PYTHON tune_child.py` by provisioner/tune/runner.py. Standard library + onnxruntime + numpy only;
Python 3.8+. It decides nothing: the parent says what to run, it runs it and reports every timing. After importing
onnxruntime it writes a `ready` event; then it reads one JSON request per line on stdin and answers with JSON
events, one per line, on the real stdout (anything a library prints goes to stderr). Before a request's work it
writes "ortprov-tune-mark: ID" on stderr and "ortprov-tune-end: ID" after it, so that the parent can tell which
request ONNX Runtime's log lines (such as cuDNN's "running in Fallback mode") belong to.

Requests (the variant: {"provider": "cpu"|"cuda", "provider_options": {}, "session_options": {}, "binding":
"none"|"copy"|"fixed"}; a feed: {input name: [dims]}):

    {"id": 1, "op": "inspect", "model": PATH}
        -> {"event": "inspected", "inputs": [...], "outputs": [...]}
    {"id": 2, "op": "measure", "model": PATH, "variant": {...}, "sequence": [feed, ...], "run_shapes": [feed,
     ...] or null (padding: run entry i at run_shapes[i], zero-padded), "warm_passes": 3, "seconds": 40,
     "cut_after_s": 8.0 or null, "switch_runs": 5}
        -> {"event": "progress", ...}*, then {"event": "measured", ...}: the session's creation, the first pass over
           the sequence (each shape new to the session the first time it comes; stopped, `cut-short`, once it has
           met two shapes and its runs took more than cut_after_s), the shape-switch runs (below), then warm
           passes over it. The shape-switch runs, when the first pass ran two distinct run shapes A and B (seen
           before, so no first-run cost): A once then `switch_runs` times, B the same (a steady run of one shape;
           the first of each is a change and not kept), then A, B, A, B ... (`switch_runs` rounds, capped at 3:
           every run a change of shape): {"shapes": [A, B], "same_ms": [[..], [..]], "alternating_ms": [[..], [..]]}
    {"id": 3, "op": "placement", "model": PATH, "variant": {...}, "feed": feed, "runs": 2}
        -> {"event": "placement", ...}: which provider ran each node, from the session's own profile
    {"id": 4, "op": "quit"}
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import tensor_types
else:  # run as a script: its folder is sys.path[0]
    import tensor_types  # type: ignore[no-redef]

MARK = "ortprov-tune-mark: "
END = "ortprov-tune-end: "
PROVIDERS = {"cuda": "CUDAExecutionProvider", "cpu": "CPUExecutionProvider"}
DEVICES = {"cuda": "cuda", "cpu": "cpu"}
PROGRESS_EVERY_S = 1.0
CPU_NODES_KEPT = 40

_out: Any = None  # the real stdout, kept for the events


def emit(event: dict) -> None:
    """One JSON event on the real stdout."""
    _out.write(json.dumps(event, default=str) + "\n")
    _out.flush()


def mark(prefix: str, request_id: Any) -> None:
    sys.stderr.write(prefix + str(request_id) + "\n")
    sys.stderr.flush()


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 4)


# ---------------------------------------------------------------- sessions


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
    """(session, seconds to create it, None) or (None, None, a result saying why there is no session)."""
    wanted = PROVIDERS[variant["provider"]]
    available = list(ort.get_available_providers())
    if wanted not in available:
        why = "{} is not among this onnxruntime's providers ({})".format(wanted, ", ".join(available))
        return None, None, {"status": "unavailable", "reason": why}
    try:
        options = options or session_options(ort, variant.get("session_options") or {})
    except (AttributeError, ValueError) as exc:  # a setting this onnxruntime does not have
        return None, None, {"status": "refused", "stage": "create", "reason": f"{type(exc).__name__}: {exc}"}
    try:
        started = time.perf_counter()
        session = ort.InferenceSession(model, sess_options=options, providers=providers_for(variant))
        created = time.perf_counter() - started
    except Exception as exc:  # noqa: BLE001 - ORT raises its own types; the message is the evidence
        message = f"{type(exc).__name__}: {exc}"
        asked = variant.get("provider_options") or {}
        refused = any(key in str(exc) for key in asked) or "provider option" in str(exc).lower()
        return None, None, {"status": "refused" if refused else "failed", "stage": "create", "reason": message}
    providers = list(session.get_providers())
    if not providers or providers[0] != wanted:
        why = f"asked for {wanted} first, the session runs on {providers}"
        return None, None, {"status": "fell-back", "reason": why, "session_providers": providers}
    return session, created, None


def effective_options(session: Any, provider: str) -> dict:
    try:
        found = session.get_provider_options().get(PROVIDERS[provider], {})
    except Exception:  # noqa: BLE001 - older builds: unknown
        return {}
    return {str(key): str(value) for key, value in found.items()}


def input_specs(session: Any) -> list:
    return [{"name": a.name, "type": a.type, "shape": list(a.shape)} for a in session.get_inputs()]


# ---------------------------------------------------------------- feeds


def make_array(np: Any, spec: dict, dims: list, seed: int) -> Any:
    """Deterministic data of an input's type and these dims (images: values in [-1, 1], as normalised ones)."""
    dtype = tensor_types.NUMPY_TYPES.get(spec["type"])
    if dtype is None:
        raise ValueError("input {!r} has type {}, which ortprov cannot generate".format(spec["name"], spec["type"]))
    rng = np.random.RandomState(seed)
    if dtype.startswith("float"):
        return (rng.random_sample(dims) * 2.0 - 1.0).astype(dtype)
    if dtype == "bool":
        return rng.randint(0, 2, size=dims).astype(bool)
    return rng.randint(0, 10, size=dims).astype(dtype)


def make_feeds(np: Any, specs: list, sequence: list) -> list:
    """One feed (input name -> array) per sequence entry; a fixed input left out is made at its fixed shape."""
    feeds = []
    for index, entry in enumerate(sequence):
        feed = {}
        for position, spec in enumerate(specs):
            dims = entry.get(spec["name"])
            if dims is None:
                dims = [d if isinstance(d, int) and d >= 0 else 1 for d in spec["shape"]]
            feed[spec["name"]] = make_array(np, spec, list(dims), seed=index * 101 + position)
        feeds.append(feed)
    return feeds


def padded(np: Any, feed: dict, run_shape: dict | None) -> dict:
    """The feed zero-padded (at the end of each dimension) to the run shape: what an app does to hit a bucket."""
    if not run_shape:
        return feed
    out = {}
    for name, array in feed.items():
        target = run_shape.get(name)
        if target is None or list(array.shape) == list(target):
            out[name] = array
            continue
        bigger = np.zeros(target, dtype=array.dtype)
        bigger[tuple(slice(0, n) for n in array.shape)] = array
        out[name] = bigger
    return out


# ---------------------------------------------------------------- one run, three ways


class Runner:
    """Runs a session the way the variant says: plain session.run, or I/O binding ("copy": the inputs copied
    to the device each run, the outputs left there by the run and copied back after it; "fixed": device
    buffers allocated once per shape and refilled in place, as CUDA graphs need)."""

    def __init__(self, ort: Any, np: Any, session: Any, variant: dict, model: str) -> None:
        self.ort, self.np, self.session, self.model = ort, np, session, model
        self.binding = variant.get("binding") or "none"
        self.device = DEVICES[variant["provider"]]
        self.outputs = [o.name for o in session.get_outputs()]
        self.buffers: dict = {}  # (input name, shape) -> device OrtValue
        self.fixed: dict = {}  # run shape key -> (binding, input values, output values)

    def run(self, feed: dict) -> tuple:
        """(total, copy in, compute, copy out) in seconds; the copies are 0 for a plain run (ORT does them
        inside session.run)."""
        if self.binding == "none":
            started = time.perf_counter()
            self.session.run(None, feed)
            return time.perf_counter() - started, 0.0, 0.0, 0.0
        if self.binding == "fixed":
            return self._run_fixed(feed)
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
        [value.numpy() for value in binding.get_outputs()]
        done = time.perf_counter()
        return done - started, copied_in - started, computed - copied_in, done - computed

    def _run_fixed(self, feed: dict) -> tuple:
        key = tuple((name, tuple(array.shape)) for name, array in sorted(feed.items()))
        if key not in self.fixed:
            self.fixed[key] = self._bind_fixed(feed)
        binding, inputs, outputs = self.fixed[key]
        started = time.perf_counter()
        for name, array in feed.items():
            inputs[name].update_inplace(array)
        copied_in = time.perf_counter()
        self.session.run_with_iobinding(binding)
        computed = time.perf_counter()
        [value.numpy() for value in outputs]
        done = time.perf_counter()
        return done - started, copied_in - started, computed - copied_in, done - computed

    def _bind_fixed(self, feed: dict) -> tuple:
        """Device buffers for one shape: the outputs' shapes come from a plain run of a CPU session."""
        cpu = self.ort.InferenceSession(
            self.model, sess_options=session_options(self.ort, {}), providers=["CPUExecutionProvider"]
        )
        shapes = cpu.run(None, feed)
        del cpu
        binding = self.session.io_binding()
        inputs = {}
        for name, array in feed.items():
            inputs[name] = self.ort.OrtValue.ortvalue_from_shape_and_type(array.shape, array.dtype, self.device, 0)
            inputs[name].update_inplace(array)
            binding.bind_ortvalue_input(name, inputs[name])
        outputs = []
        for name, example in zip(self.outputs, shapes):  # noqa: B905 - zip(strict=) needs Python 3.10
            value = self.ort.OrtValue.ortvalue_from_shape_and_type(example.shape, example.dtype, self.device, 0)
            binding.bind_ortvalue_output(name, value)
            outputs.append(value)
        return binding, inputs, outputs


# ---------------------------------------------------------------- requests


def inspect(ort: Any, request: dict) -> dict:
    """The model's inputs and outputs, from a CPU session with no graph optimisation (quick to create)."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = ort.InferenceSession(request["model"], sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001
        return {"event": "inspected", "error": f"{type(exc).__name__}: {exc}"}
    outputs = [{"name": a.name, "type": a.type, "shape": list(a.shape)} for a in session.get_outputs()]
    return {"event": "inspected", "inputs": input_specs(session), "outputs": outputs, "error": None}


def measure(ort: Any, np: Any, request: dict, request_id: Any) -> dict:
    """Create the variant's session; run the sequence once (every shape new the first time it comes), then
    warm passes until `warm_passes` are done or `seconds` are spent."""
    started = time.perf_counter()
    deadline = started + float(request.get("seconds") or 60.0)
    variant = request["variant"]
    result: dict = {
        "event": "measured",
        "status": "ok",
        "reason": None,
        "create_s": None,
        "session_providers": [],
        "effective_options": {},
        "cold_ms": [],
        "new_shape": [],
        "warm_ms": [],
        "copy_in_ms": [],
        "compute_ms": [],
        "copy_out_ms": [],
        "switch": None,
    }
    session, created, why = open_session(ort, request["model"], variant)
    if session is None:
        result.update(why)
        result["seconds"] = round(time.perf_counter() - started, 4)
        return result
    result["create_s"] = round(created, 4)
    result["session_providers"] = list(session.get_providers())
    result["effective_options"] = effective_options(session, variant["provider"])
    sequence = request["sequence"]
    run_shapes = request.get("run_shapes") or [None] * len(sequence)
    try:
        feeds = make_feeds(np, input_specs(session), sequence)
    except ValueError as exc:
        result.update(status="failed", stage="inputs", reason=str(exc))
        return result
    runner = Runner(ort, np, session, variant, request["model"])
    seen: set = set()
    last_progress = [time.perf_counter()]
    total_runs = len(sequence) * (1 + int(request.get("warm_passes") or 0))

    def progress(phase: str, done: int) -> None:
        now = time.perf_counter()
        if now - last_progress[0] >= PROGRESS_EVERY_S:
            last_progress[0] = now
            emit({"event": "progress", "id": request_id, "phase": phase, "done": done, "total": total_runs})

    cut_after_s = request.get("cut_after_s")
    index = 0
    try:
        for index in range(len(sequence)):
            pad_started = time.perf_counter()
            feed = padded(np, feeds[index], run_shapes[index])
            pad_s = time.perf_counter() - pad_started
            key = shape_key(feed)
            total, _, _, _ = runner.run(feed)
            result["cold_ms"].append(ms(total + pad_s))
            result["new_shape"].append(key not in seen)
            seen.add(key)
            progress("cold", index + 1)
            if time.perf_counter() > deadline and index + 1 < len(sequence):
                result["status"] = "cut-short"
                result["reason"] = f"the time given ran out after {index + 1} of {len(sequence)} first runs"
                break
            spent_s = sum(result["cold_ms"]) / 1000.0
            if cut_after_s is not None and len(seen) >= 2 and spent_s > cut_after_s and index + 1 < len(sequence):
                result["status"] = "cut-short"
                first = f"its first {index + 1} of {len(sequence)} runs took {spent_s:.1f} s"
                result["reason"] = f"stopped early: {first}, past the {cut_after_s} s allowed (far over the best)"
                break
        firsts: dict = {}
        for position in range(len(result["cold_ms"])):
            feed = padded(np, feeds[position], run_shapes[position])
            firsts.setdefault(shape_key(feed), feed)
        switch_runs = int(request.get("switch_runs") or 0)
        if result["status"] != "failed" and len(firsts) >= 2 and switch_runs > 0:
            until = min(time.perf_counter(), deadline) + SWITCH_SECONDS  # the parent waits 20 s past the deadline
            result["switch"] = measure_switch(runner, list(firsts.values()), switch_runs, until)
        passes = int(request.get("warm_passes") or 0)
        while result["status"] == "ok" and len(result["warm_ms"]) < passes:
            if time.perf_counter() > deadline:
                result["status"] = "cut-short"
                result["reason"] = "the time given ran out after {} of {} warm passes".format(
                    len(result["warm_ms"]), passes
                )
                break
            times, copies_in, computes, copies_out = [], [], [], []
            for index in range(len(sequence)):
                pad_started = time.perf_counter()
                feed = padded(np, feeds[index], run_shapes[index])
                pad_s = time.perf_counter() - pad_started
                total, copy_in, compute, copy_out = runner.run(feed)
                times.append(ms(total + pad_s))
                copies_in.append(ms(copy_in))
                computes.append(ms(compute))
                copies_out.append(ms(copy_out))
                progress("warm", len(sequence) * (1 + len(result["warm_ms"])) + index + 1)
            result["warm_ms"].append(times)
            if runner.binding != "none":
                result["copy_in_ms"].append(copies_in)
                result["compute_ms"].append(computes)
                result["copy_out_ms"].append(copies_out)
    except Exception as exc:  # noqa: BLE001 - a run that fails ends the variant; what was measured stays
        failed_at = len(result["cold_ms"]) if len(result["cold_ms"]) < len(sequence) else index
        result["status"] = "failed"
        result["stage"] = "run"
        result["failed_at"] = failed_at
        result["reason"] = f"{describe(sequence[failed_at])}: {type(exc).__name__}: {exc}"
    del runner, session
    result["seconds"] = round(time.perf_counter() - started, 4)
    return result


def shape_key(feed: dict) -> tuple:
    return tuple((name, tuple(array.shape)) for name, array in sorted(feed.items()))


SWITCH_SECONDS = 15.0  # the shape-switch runs may go this far past the first pass (or the deadline)
SWITCH_ROUNDS_MAX = 3  # alternating rounds: each run a change of shape, dear under EXHAUSTIVE (~0.6 s on an H100)


def measure_switch(runner: Runner, feeds: list, runs: int, deadline: float) -> dict | None:
    """A steady run of one shape vs. runs that alternate between two shapes seen before: apart, the cost of a
    change of input shape (None: fewer than two shapes, or no runs asked)."""
    if runs <= 0 or len(feeds) < 2:
        return None
    same: list = [[], []]
    alternating: list = [[], []]
    for which, feed in enumerate(feeds[:2]):
        runner.run(feed)  # the change to this shape: not a steady run
        for _ in range(runs):
            same[which].append(ms(runner.run(feed)[0]))
            if time.perf_counter() > deadline:
                break
    for _ in range(min(runs, SWITCH_ROUNDS_MAX)):
        if time.perf_counter() > deadline:
            break
        for which, feed in enumerate(feeds[:2]):
            alternating[which].append(ms(runner.run(feed)[0]))
    shapes = [{name: list(array.shape) for name, array in feed.items()} for feed in feeds[:2]]
    return {"shapes": shapes, "same_ms": same, "alternating_ms": alternating}


def describe(entry: dict) -> str:
    return ", ".join("{}={}".format(name, "x".join(str(d) for d in dims)) for name, dims in sorted(entry.items()))


def placement(ort: Any, np: Any, request: dict) -> dict:
    """Which provider ran each node, from the session's profile: nodes per (provider, op type) with their
    kernel time per run, the CPU nodes of a GPU session by name, and the runs' durations."""
    variant = request["variant"]
    folder = tempfile.mkdtemp(prefix="ortprov-tune-profile-")
    result: dict = {"event": "placement", "error": None, "session_providers": [], "groups": [], "cpu_nodes": []}
    try:
        options = session_options(ort, variant.get("session_options") or {})
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(folder, "profile")
        session, created, why = open_session(ort, request["model"], variant, options)
        if session is None:
            result["error"] = (why or {}).get("reason")
            return result
        result["create_s"] = round(created, 4)
        result["session_providers"] = list(session.get_providers())
        feed = make_feeds(np, input_specs(session), [request["feed"]])[0]
        runs = max(1, int(request.get("runs") or 2))
        first_started = time.perf_counter()
        session.run(None, feed)
        result["first_run_ms"] = ms(time.perf_counter() - first_started)
        for _ in range(runs):
            session.run(None, feed)
        path = session.end_profiling()
        with open(path, encoding="utf-8") as handle:
            events = json.load(handle)
        result.update(summarise_profile(events, runs + 1, result["session_providers"][0]))
    except Exception as exc:  # noqa: BLE001
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def summarise_profile(events: list, runs: int, first_provider: str) -> dict:
    """Node kernel events grouped by (provider, op type): distinct nodes and kernel milliseconds per run."""
    groups: dict = {}
    nodes_seen: set = set()
    cpu_nodes: list = []
    run_ms = []
    for event in events:
        if event.get("cat") == "Session" and event.get("name") == "model_run":
            run_ms.append(round(event.get("dur", 0) / 1000.0, 4))
        if event.get("cat") != "Node" or not str(event.get("name", "")).endswith("_kernel_time"):
            continue
        args = event.get("args") or {}
        provider = args.get("provider") or "?"
        op = args.get("op_name") or "?"
        node = str(event["name"])[: -len("_kernel_time")]
        group = groups.setdefault((provider, op), {"provider": provider, "op": op, "nodes": set(), "us": 0})
        group["nodes"].add(node)
        group["us"] += event.get("dur", 0)
        on_cpu = provider == "CPUExecutionProvider" and first_provider != provider
        if on_cpu and node not in nodes_seen and len(cpu_nodes) < CPU_NODES_KEPT:
            cpu_nodes.append({"name": node, "op": op})
        nodes_seen.add(node)
    return {
        "groups": [
            {
                "provider": g["provider"],
                "op": g["op"],
                "count": len(g["nodes"]),
                "ms_per_run": round(g["us"] / 1000.0 / runs, 4),
            }
            for g in sorted(groups.values(), key=lambda g: (g["provider"], -g["us"]))
        ],
        "cpu_nodes": cpu_nodes,
        "node_count": len(nodes_seen),
        "run_ms": run_ms,
        "runs": runs,
    }


# ---------------------------------------------------------------- main


def main() -> int:
    global _out
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    _out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)  # what libraries print goes to stderr; stdout carries the events only
    sys.stdout = sys.stderr
    ready: dict = {
        "event": "ready",
        "python": sys.executable,
        "python_version": "{}.{}.{}".format(*sys.version_info[:3]),
        "cpu_count": os.cpu_count(),
        "error": None,
    }
    try:
        started = time.perf_counter()
        import numpy as np
        import onnxruntime as ort

        ready["import_s"] = round(time.perf_counter() - started, 4)
    except Exception as exc:  # noqa: BLE001
        ready["error"] = f"{type(exc).__name__}: {exc}"
        emit(ready)
        return 0
    ready["ort_version"] = getattr(ort, "__version__", None)
    ready["numpy_version"] = getattr(np, "__version__", None)
    ready["available_providers"] = list(ort.get_available_providers())
    try:
        ready["device"] = ort.get_device()
    except Exception:  # noqa: BLE001
        ready["device"] = None
    try:
        from onnxruntime.capi import build_and_package_info as info

        ready["ort_package"] = getattr(info, "package_name", None)
    except Exception:  # noqa: BLE001
        ready["ort_package"] = None
    emit(ready)
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        try:
            request = json.loads(line)
        except ValueError:
            emit({"event": "error", "id": None, "message": f"not JSON: {line[:200]!r}"})
            continue
        request_id = request.get("id")
        op = request.get("op")
        if op == "quit":
            return 0
        mark(MARK, request_id)
        try:
            if op == "inspect":
                answer = inspect(ort, request)
            elif op == "measure":
                answer = measure(ort, np, request, request_id)
            elif op == "placement":
                answer = placement(ort, np, request)
            else:
                answer = {"event": "error", "message": f"unknown op {op!r}"}
        except Exception as exc:  # noqa: BLE001 - a bad request must not end the conversation
            answer = {"event": "error", "message": f"{type(exc).__name__}: {exc}"}
        mark(END, request_id)
        answer["id"] = request_id
        emit(answer)


if __name__ == "__main__":
    sys.exit(main())
