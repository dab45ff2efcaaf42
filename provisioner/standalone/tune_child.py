"""ortprov tune child: time one model's sessions inside the TARGET interpreter, one request at a time, and check
that each variant gives the reference's answers.

Run as `TARGET_PYTHON tune_child.py` by provisioner/tune/measure.py. Standard library + onnxruntime + numpy (and
PIL or cv2 only to read the user's images); Python 3.8+. It decides nothing: the parent says what to run, it runs
it and reports every timing and every comparison. After importing onnxruntime it writes a `ready` event; then it
reads one JSON request per line on stdin and answers with JSON events, one per line, on the real stdout (anything
a library prints goes to stderr). Before a request's work it writes "ortprov-tune-mark: ID" on stderr and
"ortprov-tune-end: ID" after it, so that the parent can tell which request ONNX Runtime's log lines (cuDNN's
"running in Fallback mode", a provider that failed to load) belong to.

Requests (a variant: tune_session.py; a feed: {input name: [dims]}; inputs: {"kind": "page"|"line"|"random"} or
{"kind": ..., "folder": DIR, "files": [names]}, tune_inputs.py):

    {"id": 1, "op": "inspect", "model": PATH}
        -> {"event": "inspected", "inputs": [...], "outputs": [...], "error": null}
    {"id": 2, "op": "files", "model": PATH, "inputs": {...}}
        -> {"event": "files", "reader": "PIL"|"cv2"|null, "files": [{"name", "feed", "error"}]}
    {"id": 3, "op": "measure", "model": PATH, "variant": {...}, "inputs": {...}, "sequence": [feed, ...],
     "run_shapes": [feed, ...] or null (padding: run entry i at run_shapes[i]), "warm_passes": 3, "seconds": 40,
     "cut_after_s": 8.0 or null, "switch_runs": 5, "reference": {"folder": DIR, "make": true|false},
     "check_seconds": 20}
        -> {"event": "progress", ...}*, then {"event": "measured", ...}: the session's creation, the first pass
           over the sequence (each shape new to the session the first time it comes; stopped, `cut-short`,
           once it has met two shapes and its runs took more than cut_after_s), the shape-switch runs, warm
           passes, the memory the variant took (`memory`), then, untimed, the check: every input once more,
           its outputs saved as the reference (make) or compared with it (`check`, tune_compare.py)
    {"id": 4, "op": "placement", "model": PATH, "variant": {...}, "kind": "page", "feed": feed, "runs": 2}
        -> {"event": "placement", ...} (tune_profile.py)
    {"id": 5, "op": "quit"}
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import protocol, tune_compare, tune_inputs, tune_profile, tune_session
else:  # run as a script: its folder is sys.path[0]
    import protocol  # type: ignore[no-redef]
    import tune_compare  # type: ignore[no-redef]
    import tune_inputs  # type: ignore[no-redef]
    import tune_profile  # type: ignore[no-redef]
    import tune_session  # type: ignore[no-redef]

MARK = "ortprov-tune-mark: "
END = "ortprov-tune-end: "
PROGRESS_EVERY_S = 1.0
SWITCH_SECONDS = 15.0  # the shape-switch runs may go this far past the first pass (or the deadline)
SWITCH_ROUNDS_MAX = 3  # alternating rounds: each run a change of shape, dear under EXHAUSTIVE (~0.6 s on an H100)

_out: Any = None  # the real stdout, kept for the events


def emit(event: dict) -> None:
    """One event (a protocol message) on the real stdout."""
    protocol.send(event, _out)


def mark(prefix: str, request_id: Any) -> None:
    sys.stderr.write(prefix + str(request_id) + "\n")
    sys.stderr.flush()


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 4)


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
    return {"event": "inspected", "inputs": tune_session.input_specs(session), "outputs": outputs, "error": None}


def model_specs(ort: Any, model: str) -> list:
    answer = inspect(ort, {"model": model})
    if answer.get("error"):
        raise ValueError(answer["error"])
    return answer["inputs"]


def files(ort: Any, np: Any, request: dict) -> dict:
    """The user's input files: each one's feed shapes, or why it cannot feed the model."""
    inputs = request["inputs"]
    specs = model_specs(ort, request["model"])
    _, reader = tune_inputs.image_reader()
    found = []
    for name in tune_inputs.list_folder(inputs["folder"]):
        entry: dict = {"name": name, "feed": None, "error": None}
        try:
            feed = tune_inputs.load_file(np, os.path.join(inputs["folder"], name), inputs["kind"], specs)
            entry["feed"] = {key: list(value.shape) for key, value in feed.items()}
        except Exception as exc:  # noqa: BLE001 - a file that cannot feed the model is reported, not fatal
            entry["error"] = str(exc) or type(exc).__name__
        found.append(entry)
    return {"event": "files", "reader": reader, "files": found}


class Feeds:
    """The inputs of the sequence, made (or read) once, in the order of the sequence."""

    def __init__(self, np: Any, specs: list, request: dict) -> None:
        inputs = request.get("inputs") or {"kind": "random"}
        kind = inputs.get("kind") or "random"
        self.arrays = []
        if inputs.get("folder"):
            for name in inputs["files"]:
                path = os.path.join(inputs["folder"], name)
                self.arrays.append(tune_inputs.load_file(np, path, kind, specs))
        else:
            for index, entry in enumerate(request["sequence"]):
                self.arrays.append(tune_inputs.make_feed(np, kind, specs, entry, index))


def new_result() -> dict:
    return {
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
        "memory": None,
        "check": None,
    }


def measure(ort: Any, np: Any, request: dict, request_id: Any) -> dict:
    """Create the variant's session; run the sequence once (every shape new the first time it comes), then
    warm passes until `warm_passes` are done or `seconds` are spent; then check its outputs."""
    started = time.perf_counter()
    deadline = started + float(request.get("seconds") or 60.0)
    variant = request["variant"]
    result = new_result()
    try:  # the inputs first: the memory figures are the session's, not theirs
        feeds = Feeds(np, request.get("specs") or model_specs(ort, request["model"]), request).arrays
    except (OSError, ValueError) as exc:
        result.update(status="failed", stage="inputs", reason=str(exc))
        return result
    before = tune_session.memory()
    session, created, why = tune_session.open_session(ort, request["model"], variant)
    if session is None:
        result.update(why)
        result["seconds"] = round(time.perf_counter() - started, 4)
        return result
    result["create_s"] = round(created, 4)
    result["session_providers"] = list(session.get_providers())
    result["effective_options"] = tune_session.effective_options(session, variant["provider"])
    after_create = tune_session.memory()
    sequence = request["sequence"]
    run_shapes = request.get("run_shapes") or [None] * len(sequence)
    pad_mode = variant.get("pad_mode") or "zero"
    runner = tune_session.Runner(ort, session, variant)

    def feed_at(position: int) -> dict:
        return tune_inputs.padded_feed(np, feeds[position], run_shapes[position], pad_mode)

    clock = Progress(request_id, len(sequence) * (1 + int(request.get("warm_passes") or 0)))
    index = 0
    try:
        index = first_pass(runner, feed_at, result, len(sequence), deadline, request.get("cut_after_s"), clock)
        result["memory"] = memory_used(before, after_create, tune_session.memory(), runner.states())
        firsts: dict = {}
        for position in range(len(result["cold_ms"])):
            feed = feed_at(position)
            firsts.setdefault(shape_key(feed), feed)
        switch_runs = int(request.get("switch_runs") or 0)
        if len(firsts) >= 2 and switch_runs > 0:
            until = min(time.perf_counter(), deadline) + SWITCH_SECONDS  # the parent waits 20 s past the deadline
            result["switch"] = measure_switch(runner, list(firsts.values()), switch_runs, until)
        warm_passes(runner, feed_at, result, len(sequence), int(request.get("warm_passes") or 0), deadline, clock)
    except Exception as exc:  # noqa: BLE001 - a run that fails ends the variant; what was measured stays
        failed_at = len(result["cold_ms"]) if len(result["cold_ms"]) < len(sequence) else index
        result["status"] = "failed"
        result["stage"] = "run"
        result["failed_at"] = failed_at
        result["reason"] = f"{describe(sequence[failed_at])}: {type(exc).__name__}: {exc}"
    if result["status"] != "failed":
        result["check"] = check(np, runner, feed_at, request, len(result["cold_ms"]), session)
    del runner, session
    result["seconds"] = round(time.perf_counter() - started, 4)
    return result


class Progress:
    """A progress event at most once a second."""

    def __init__(self, request_id: Any, total: int) -> None:
        self.request_id, self.total, self.last = request_id, total, time.perf_counter()

    def __call__(self, phase: str, done: int) -> None:
        now = time.perf_counter()
        if now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            emit({"event": "progress", "id": self.request_id, "phase": phase, "done": done, "total": self.total})


def first_pass(
    runner: Any, feed_at: Any, result: dict, count: int, deadline: float, cut_after_s: Any, clock: Any
) -> int:
    """Every entry once, each shape new to the session the first time it comes; the padding (and a per-shape
    session's creation, or graph's capture) is part of the run's time."""
    seen: set = set()
    index = 0
    for index in range(count):
        pad_started = time.perf_counter()
        feed = feed_at(index)
        pad_s = time.perf_counter() - pad_started
        key = shape_key(feed)
        times, _ = runner.run(feed)
        result["cold_ms"].append(ms(times[0] + pad_s))
        result["new_shape"].append(key not in seen)
        seen.add(key)
        clock("cold", index + 1)
        if time.perf_counter() > deadline and index + 1 < count:
            result["status"] = "cut-short"
            result["reason"] = f"the time given ran out after {index + 1} of {count} first runs"
            break
        spent_s = sum(result["cold_ms"]) / 1000.0
        if cut_after_s is not None and len(seen) >= 2 and spent_s > cut_after_s and index + 1 < count:
            result["status"] = "cut-short"
            first = f"its first {index + 1} of {count} runs took {spent_s:.1f} s"
            result["reason"] = f"stopped early: {first}, past the {cut_after_s} s allowed (far over the best)"
            break
    return index


def warm_passes(runner: Any, feed_at: Any, result: dict, count: int, passes: int, deadline: float, clock: Any) -> None:
    """Passes over the sequence, every shape seen before, until `passes` are done or the time is spent."""
    while result["status"] == "ok" and len(result["warm_ms"]) < passes:
        if time.perf_counter() > deadline:
            result["status"] = "cut-short"
            result["reason"] = "the time given ran out after {} of {} warm passes".format(
                len(result["warm_ms"]), passes
            )
            break
        times, copies_in, computes, copies_out = [], [], [], []
        for index in range(count):
            pad_started = time.perf_counter()
            feed = feed_at(index)
            pad_s = time.perf_counter() - pad_started
            (total, copy_in, compute, copy_out), _ = runner.run(feed)
            times.append(ms(total + pad_s))
            copies_in.append(ms(copy_in))
            computes.append(ms(compute))
            copies_out.append(ms(copy_out))
            clock("warm", count * (1 + len(result["warm_ms"])) + index + 1)
        result["warm_ms"].append(times)
        if runner.binding == "copy":
            result["copy_in_ms"].append(copies_in)
            result["compute_ms"].append(computes)
            result["copy_out_ms"].append(copies_out)


def memory_used(before: dict, created: dict, after: dict, states: int) -> dict:
    """What the variant took, MiB: its creation (resident memory; the GPU's only when a CUDA runtime was loaded
    before it, which a fresh child has not), and what its first pass added (every per-shape session made, every
    graph captured, the arenas grown: resident and GPU memory)."""

    def grew(key: str, a: dict, b: dict) -> float | None:
        return None if a.get(key) is None or b.get(key) is None else round(b[key] - a[key], 1)

    return {
        "states": states,
        "rss_created_mb": grew("rss_mb", before, created),
        "rss_mb": grew("rss_mb", created, after),
        "gpu_created_mb": grew("gpu_mb", before, created),
        "gpu_mb": grew("gpu_mb", created, after),
    }


def check(np: Any, runner: Any, feed_at: Any, request: dict, count: int, session: Any) -> dict | None:
    """Every input once more, untimed: its outputs become the reference (make) or are compared with it."""
    reference = request.get("reference")
    if not reference or count == 0:
        return None
    folder, make = reference["folder"], bool(reference.get("make"))
    names = [o.name for o in session.get_outputs()]
    comparison = tune_compare.Comparison(names)
    until = time.perf_counter() + float(request.get("check_seconds") or 30.0)
    missing = 0
    for index in range(count):
        if time.perf_counter() > until and not make:
            reason = f"the time for the check ran out after {comparison.inputs} of {count} inputs"
            return comparison.summary("partial", reason)
        _, outputs = runner.run(feed_at(index), keep=True)
        if make:
            tune_compare.save_reference(np, folder, index, outputs)
            continue
        references = tune_compare.load_reference(np, folder, index, len(names))
        if references is None:
            missing += 1
            continue
        comparison.add(np, index, references, outputs)
        del outputs, references
    if make:
        return {"status": "reference", "reason": None, "inputs": count, "agrees": True, "outputs": []}
    if comparison.inputs == 0:
        return comparison.summary("not-checked", "no reference outputs: the CPU reference did not run")
    gaps = f"{missing} inputs had no reference outputs" if missing else None
    return comparison.summary("compared" if not missing else "partial", gaps)


def shape_key(feed: dict) -> tuple:
    return tuple((name, tuple(array.shape)) for name, array in sorted(feed.items()))


def measure_switch(runner: Any, feeds: list, runs: int, deadline: float) -> dict | None:
    """A steady run of one shape vs. runs that alternate between two shapes seen before: apart, the cost of a
    change of input shape (None: fewer than two shapes, or no runs asked)."""
    if runs <= 0 or len(feeds) < 2:
        return None
    same: list = [[], []]
    alternating: list = [[], []]
    for which, feed in enumerate(feeds[:2]):
        runner.run(feed)  # the change to this shape: not a steady run
        for _ in range(runs):
            same[which].append(ms(runner.run(feed)[0][0]))
            if time.perf_counter() > deadline:
                break
    for _ in range(min(runs, SWITCH_ROUNDS_MAX)):
        if time.perf_counter() > deadline:
            break
        for which, feed in enumerate(feeds[:2]):
            alternating[which].append(ms(runner.run(feed)[0][0]))
    shapes = [{name: list(array.shape) for name, array in feed.items()} for feed in feeds[:2]]
    return {"shapes": shapes, "same_ms": same, "alternating_ms": alternating}


def describe(entry: dict) -> str:
    return ", ".join("{}={}".format(name, "x".join(str(d) for d in dims)) for name, dims in sorted(entry.items()))


# ---------------------------------------------------------------- main


def ready_event() -> dict:
    return {
        "event": "ready",
        "python": sys.executable,
        "python_version": "{}.{}.{}".format(*sys.version_info[:3]),
        "cpu_count": os.cpu_count(),
        "error": None,
        "missing": None,
    }


def main() -> int:
    global _out
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    _out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)  # what libraries print goes to stderr; stdout carries the events only
    sys.stdout = sys.stderr
    ready = ready_event()
    started = time.perf_counter()
    for module in ("onnxruntime", "numpy"):  # onnxruntime first: without it, numpy is not the problem
        try:
            __import__(module)
        except ImportError as exc:
            ready["error"] = f"{type(exc).__name__}: {exc}"
            ready["missing"] = module if getattr(exc, "name", module) in (module, None) else exc.name
            emit(ready)
            return 0
        except Exception as exc:  # noqa: BLE001 - a broken install: its own error
            ready["error"] = f"{type(exc).__name__}: {exc}"
            emit(ready)
            return 0
    import numpy as np
    import onnxruntime as ort

    ready["import_s"] = round(time.perf_counter() - started, 4)
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
            elif op == "files":
                answer = files(ort, np, request)
            elif op == "measure":
                answer = measure(ort, np, request, request_id)
            elif op == "placement":
                answer = tune_profile.placement(ort, np, request)
            else:
                answer = {"event": "error", "message": f"unknown op {op!r}"}
        except Exception as exc:  # noqa: BLE001 - a bad request must not end the conversation
            answer = {"event": "error", "message": f"{type(exc).__name__}: {exc}"}
        mark(END, request_id)
        answer["id"] = request_id
        emit(answer)


if __name__ == "__main__":
    sys.exit(main())
