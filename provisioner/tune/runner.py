"""The edge of a tune: the conversation with standalone/tune_child.py in the target interpreter.

One child process (the target's Python, a new session group) answers one request at a time. Every answer is
awaited with a timeout; a child that hangs or dies is killed and recorded (`timeout`, `crashed`), and a fresh one
takes the next variant while the budget lasts. ONNX Runtime's log lines on the child's stderr are kept with the
request they came in (the child marks each request's start and end there). Progress goes to `progress`.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from provisioner import standalone
from provisioner.childproc import kill_group
from provisioner.errors import BadInput
from provisioner.serde import from_jsonable, to_jsonable
from provisioner.tune import shapes as shaping
from provisioner.tune import variants as plan
from provisioner.tune.report import (
    Feed,
    LogLine,
    Measurement,
    Placement,
    Runtime,
    TensorSpec,
    TuneReport,
    Variant,
    clean_log_text,
)

CHILD_SCRIPT = standalone.path("tune_child.py")
MARK = "ortprov-tune-mark: "
END = "ortprov-tune-end: "
START_TIMEOUT_S = 60.0  # importing onnxruntime (a GPU build loads its libraries later, at the first session)
GRACE_S = 20.0  # a request's answer may come this late after the time it was given (one long run, a search)
MIN_VARIANT_S = 3.0  # a variant given less than this is skipped, not started
LOG_LINES_KEPT = 12
FALLBACK_LINES_KEPT = 500  # cuDNN's fallback notices: one per Conv node, all kept (the analysis counts them)
_STAMP = re.compile(r"^\S*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ ")
_NOISE = re.compile(r"^\s*$")

Progress = Callable[[str], None]


def run_tune(
    python: str,
    model: str,
    *,
    sequence: tuple[Feed, ...] | None = None,
    sequence_source: str = "derived",
    budget_s: float = 300.0,
    progress: Progress | None = None,
) -> TuneReport:
    """Tune `model` in `python` within `budget_s` seconds: inspect it, derive (or check) the shapes, profile the
    node placement, then measure the variants `variants.next_variant` asks for, one after the other."""
    if not Path(python).is_file() or not os.access(python, os.X_OK):
        raise BadInput(
            f"python interpreter {python!r} does not exist or is not executable",
            hint="pass the target's interpreter, e.g. --python .venv/bin/python",
        )
    # the model and --budget are checked once, by their declarations (commands/options.py)
    say = progress or (lambda _line: None)
    model_path = str(Path(model).resolve())
    started = time.monotonic()
    deadline = started + budget_s
    child = _Child(python)
    try:
        runtime = child.start(min(START_TIMEOUT_S, budget_s))
        report = TuneReport(model=model_path, runtime=runtime, budget_s=budget_s, sequence_source=sequence_source)
        if runtime.error:
            return replace(report, stopped=f"the target cannot run a model: {runtime.error}")
        say(f"tune: {Path(model).name} in {runtime.python} (onnxruntime {runtime.ort_version})")
        answer = child.ask({"op": "inspect", "model": model_path}, _left(deadline))
        if answer.get("error") or "inputs" not in answer:
            why = answer.get("error") or answer.get("reason") or "no answer"
            raise BadInput(f"{model} is not a model onnxruntime can load: {why}", hint="pass an .onnx file")
        inputs = tuple(from_jsonable(TensorSpec, spec) for spec in answer["inputs"])
        outputs = tuple(from_jsonable(TensorSpec, spec) for spec in answer["outputs"])
        notes: tuple[str, ...] = ()
        if sequence is None:
            runs, notes = shaping.default_sequence(inputs, outputs)
        else:
            runs = shaping.check_sequence(sequence, inputs, sequence_source)
        if shaping.distinct(runs) == 1 and len(runs) < shaping.DEFAULT_RUNS:
            runs = (runs[0],) * shaping.DEFAULT_RUNS  # one shape: the same run again, enough for a median
        report = replace(
            report,
            inputs=inputs,
            outputs=outputs,
            sequence=runs,
            buckets=shaping.buckets(runs),
            one_shape=shaping.one_shape(runs),
            notes=notes,
        )
        say(f"tune: {len(runs)} runs, {shaping.distinct(runs)} distinct shapes; budget {budget_s:.0f} s")
        report = _place(child, report, deadline, say)
        report = _measure_all(child, report, deadline, say)
    finally:
        child.stop()
    return replace(report, duration_s=round(time.monotonic() - started, 3))


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _place(child: _Child, report: TuneReport, deadline: float, say: Progress) -> TuneReport:
    """The placement profile: one session (CUDA when there is one: the largest run shape; else the CPU: the
    smallest, only the ops are wanted), three runs."""
    variant = plan.placement_variant(report)
    pick = max if variant.provider == "cuda" else min
    feed = pick(report.sequence, key=shaping.elements)
    say(f"tune: profiling node placement ({variant.label}, {shaping.describe_feed(feed)})")
    request = {"op": "placement", "model": report.model, "variant": variant.request(), "feed": feed, "runs": 2}
    answer = child.ask(request, min(_left(deadline), 120.0))
    fields = {k: v for k, v in answer.items() if k not in ("event", "id")}
    if answer.get("event") != "placement":
        fields = {"error": answer.get("reason") or answer.get("message") or "no answer"}
    placement = from_jsonable(Placement, {"variant": variant.name, "feed": feed, **fields})
    return replace(report, placement=placement)


def _measure_all(child: _Child, report: TuneReport, deadline: float, say: Progress) -> TuneReport:
    done = 0
    while True:
        item = plan.next_variant(report)
        if item is None:
            return report
        if isinstance(item, tuple):
            variant, why = item
            report = _add(report, Measurement(variant, "skipped", why))
            continue
        variant = item
        left = _left(deadline)
        estimate = plan.estimate_s(variant, report)
        if left < MIN_VARIANT_S or (
            estimate is not None and variant.name != plan.CUDA_DEFAULT.name and left < estimate
        ):
            need = f", it needs about {estimate:.0f} s" if estimate is not None else ""
            why = f"the budget ({report.budget_s:.0f} s) had {left:.0f} s left{need}"
            report = _add(report, Measurement(variant, "skipped", why))
            if report.stopped is None:
                report = replace(report, stopped=f"the budget ran out: {why}")
            continue
        done += 1
        child.stop()  # each variant in a fresh process: none inherits another's loaded kernels or caches
        say(f"tune: [{done}] {variant.label} ({left:.0f} s of the budget left)")
        report = _add(report, _measure(child, report, variant, left, say))


def _share(variant: Variant, report: TuneReport, left: float) -> float:
    """Seconds one variant may take: the CPU a third of the budget, any other half of what is left (so that the
    variants after it get their turn), never less than MIN_VARIANT_S; the child stops its warm passes there."""
    share = (report.budget_s or left) / 3 if variant.name == plan.CPU_VARIANT.name else left / 2
    return max(MIN_VARIANT_S, min(left - 2.0, share))


def _add(report: TuneReport, measurement: Measurement) -> TuneReport:
    return replace(report, measurements=(*report.measurements, measurement))


def _measure(child: _Child, report: TuneReport, variant: Variant, left: float, say: Progress) -> Measurement:
    sequence = list(report.sequence)
    run_shapes = list(report.buckets) if variant.padded and report.buckets else None
    if variant.pad_one and report.one_shape is not None:
        run_shapes = [report.one_shape] * len(sequence)
    request = {
        "op": "measure",
        "model": report.model,
        "variant": variant.request(),
        "sequence": sequence,
        "run_shapes": run_shapes,
        "warm_passes": plan.warm_passes(variant, report),
        "seconds": _share(variant, report, left),
        "cut_after_s": plan.cut_after_s(variant, report),
        "switch_runs": plan.SWITCH_RUNS,
    }

    def on_progress(event: dict[str, Any]) -> None:
        say(f"tune:     {variant.label}: {event.get('phase')} run {event.get('done')} of {event.get('total')}")

    answer = child.ask(request, left + GRACE_S, on_progress)
    log = tuple(LogLine(text, count) for text, count in child.last_log)
    if answer.get("event") != "measured":
        status = answer.get("status", "failed")
        reason = answer.get("reason") or answer.get("message") or "no answer"
        return Measurement(variant, status, reason, log=log)
    fields = {k: v for k, v in answer.items() if k in Measurement.__dataclass_fields__ and k != "variant"}
    measured = from_jsonable(Measurement, {**fields, "variant": to_jsonable(variant), "log": []})
    return replace(measured, variant=variant, log=log)


class _Child:
    """The tune child: started, asked one request at a time, stopped; restarted after a timeout or a crash."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.process: subprocess.Popen[str] | None = None
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        self.lock = threading.Lock()
        self.next_id = 0
        self.last_log: list[tuple[str, int]] = []
        self.runtime: Runtime | None = None

    def start(self, timeout: float) -> Runtime:
        env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1"}
        self.events = queue.Queue()
        self.stderr = []
        try:
            self.process = subprocess.Popen(
                [self.python, str(CHILD_SCRIPT)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return Runtime(python=self.python, python_version="", error=f"cannot start it: {exc}")
        threading.Thread(target=self._read_events, args=(self.process,), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(self.process,), daemon=True).start()
        ready = self._wait(None, timeout)
        if ready.get("event") != "ready":
            why = ready.get("reason") or "no ready event"
            self.stop()
            return Runtime(python=self.python, python_version="", error=why)
        fields = {k: v for k, v in ready.items() if k not in ("event",)}
        self.runtime = from_jsonable(Runtime, fields)
        return self.runtime

    def ask(
        self, request: dict[str, Any], timeout: float, on_progress: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        """Send one request; its answer, or {"event": "lost", "status": "timeout"|"crashed", "reason": ...}."""
        if self.process is None or self.process.poll() is not None:
            self.start(START_TIMEOUT_S)
        if self.process is None or self.process.stdin is None:
            return {"event": "lost", "status": "crashed", "reason": "the tune child could not be started"}
        self.next_id += 1
        request_id = self.next_id
        with self.lock:
            mark = len(self.stderr)
        try:
            self.process.stdin.write(json.dumps({"id": request_id, **request}) + "\n")
            self.process.stdin.flush()
        except OSError:
            pass
        answer = self._wait(request_id, timeout, on_progress)
        time.sleep(0.05)  # the END mark and the last log lines trail the answer on the other pipe
        with self.lock:
            self.last_log = _log_lines(self.stderr[mark:], request_id)
        if answer.get("event") == "lost":
            self.stop()
        return answer

    def _wait(
        self, request_id: int | None, timeout: float, on_progress: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + max(timeout, 1.0)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return {"event": "lost", "status": "timeout", "reason": f"no answer within {timeout:.0f} s"}
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if event is None:
                return {"event": "lost", "status": "crashed", "reason": self._death()}
            if event.get("event") == "progress":
                if on_progress is not None:
                    on_progress(event)
                continue
            if request_id is None or event.get("id") == request_id:
                return event

    def _death(self) -> str:
        process = self.process
        code = process.wait(timeout=5) if process is not None else None
        with self.lock:
            tail = [line for line in self.stderr if line.strip() and not line.startswith((MARK, END))][-3:]
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        return f"the tune child died ({how})" + (f": {' | '.join(tail)}" if tail else "")

    def _read_events(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                self.events.put(event)
        self.events.put(None)

    def _read_stderr(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            with self.lock:
                self.stderr.append(line.rstrip("\n"))

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                if process.stdin is not None:
                    process.stdin.write(json.dumps({"op": "quit"}) + "\n")
                    process.stdin.flush()
                process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                kill_group(process)
                process.wait(timeout=5)


def _log_lines(lines: list[str], request_id: int) -> list[tuple[str, int]]:
    """ONNX Runtime's lines between the request's marks, time stamps stripped, counted, the first few kept."""
    inside = False
    counts: dict[str, int] = {}
    for line in lines:
        if line.startswith(MARK):
            inside = line[len(MARK) :].strip() == str(request_id)
            continue
        if line.startswith(END):
            inside = False
            continue
        if inside and not _NOISE.match(line):
            text = _STAMP.sub("", clean_log_text(line)).strip()
            cap = FALLBACK_LINES_KEPT if "Fallback mode" in text else LOG_LINES_KEPT
            if text in counts or len(counts) < cap:
                counts[text] = counts.get(text, 0) + 1
    return list(counts.items())
