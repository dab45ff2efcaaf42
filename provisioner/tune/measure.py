"""The edge of a tune: the steps of one, each a request to the tune child (child.py) in the target interpreter.

Inspect the model (a load error said as the user's problem: preflight.py), settle its inputs (generated to look
like its data, or the user's files: the child reads them) and shapes, profile the node placement, then measure the
variants `variants.next_variant` asks for, each in a fresh child, within the budget. The CPU variant writes its
outputs, input by input, into a private folder as the reference; every later variant's outputs are compared with
them in its own child (the folder is removed at the end). Progress lines go to `progress`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from provisioner.errors import BadInput
from provisioner.serde import from_jsonable, to_jsonable
from provisioner.tune import preflight
from provisioner.tune import shapes as shaping
from provisioner.tune import variants as plan
from provisioner.tune.child import START_TIMEOUT_S, TuneChild
from provisioner.tune.report import Feed, LogLine, Measurement, Placement, TensorSpec, TuneReport, Variant

GRACE_S = 20.0  # a request's answer may come this late after the time it was given (one long run, a search)
MIN_VARIANT_S = 3.0  # a variant given less than this is skipped, not started
CHECK_MIN_S, CHECK_MAX_S = 10.0, 30.0  # the untimed check of a variant's outputs: half its share, within these

Progress = Callable[[str], None]


def run_tune(
    python: str,
    model: str,
    *,
    sequence: tuple[Feed, ...] | None = None,
    sequence_source: str = "derived",
    inputs_dir: str | None = None,
    budget_s: float = 300.0,
    progress: Progress | None = None,
) -> TuneReport:
    """Tune `model` in `python` within `budget_s` seconds: inspect it, settle its inputs (generated, or the files of
    `inputs_dir`) and shapes, profile the node placement, then measure the variants `variants.next_variant` asks
    for, one after the other, each checked against the CPU's outputs (kept on disk meanwhile)."""
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
    child = TuneChild(python)
    reference = tempfile.mkdtemp(prefix="ortprov-tune-reference-")
    try:
        runtime = child.start(min(START_TIMEOUT_S, budget_s))
        problem = preflight.runtime_problem(runtime)
        if problem is not None:
            raise problem
        report = TuneReport(model=model_path, runtime=runtime, budget_s=budget_s, sequence_source=sequence_source)
        say(f"tune: {Path(model).name} in {runtime.python} (onnxruntime {runtime.ort_version})")
        answer = child.ask({"op": "inspect", "model": model_path}, _left(deadline))
        if answer.get("error") or "inputs" not in answer:
            why = answer.get("error") or answer.get("reason") or answer.get("message") or "no answer"
            raise preflight.model_problem(model, str(why), runtime)
        inputs = tuple(from_jsonable(TensorSpec, spec) for spec in answer["inputs"])
        outputs = tuple(from_jsonable(TensorSpec, spec) for spec in answer["outputs"])
        report = replace(report, inputs=inputs, outputs=outputs)
        if inputs_dir is not None:
            report = _from_files(child, report, inputs_dir, deadline)
        else:
            report = _generated(report, sequence)
        runs = report.sequence
        say(f"tune: {len(runs)} runs, {shaping.distinct(runs)} distinct shapes; {report.inputs_source}")
        say(f"tune: budget {budget_s:.0f} s")
        report = _place(child, report, deadline, say)
        report = _measure_all(child, report, deadline, say, reference)
    finally:
        child.stop()
        shutil.rmtree(reference, ignore_errors=True)
    return replace(report, duration_s=round(time.monotonic() - started, 3))


def _generated(report: TuneReport, sequence: tuple[Feed, ...] | None) -> TuneReport:
    """The sequence derived (or given) and checked, and the generated inputs it runs on."""
    notes: tuple[str, ...] = ()
    if sequence is None:
        runs, notes = shaping.default_sequence(report.inputs, report.outputs)
    else:
        runs = shaping.check_sequence(sequence, report.inputs, report.sequence_source)
    if shaping.distinct(runs) == 1 and len(runs) < shaping.DEFAULT_RUNS:
        runs = (runs[0],) * shaping.DEFAULT_RUNS  # one shape: the same run again, enough for a median
    kind = shaping.input_kind(report.inputs, report.outputs, runs)
    return _with_sequence(replace(report, input_kind=kind, inputs_source=GENERATED[kind], notes=notes), runs)


def _with_sequence(report: TuneReport, runs: tuple[Feed, ...]) -> TuneReport:
    return replace(
        report,
        sequence=runs,
        buckets=shaping.buckets(runs),
        fine_buckets=shaping.fine_buckets(runs),
        one_shape=shaping.one_shape(runs),
    )


def _from_files(child: TuneChild, report: TuneReport, folder: str, deadline: float) -> TuneReport:
    """The user's inputs: every array and image of `folder` (sorted by name), one run each, in the target."""
    path = Path(folder)
    if not path.is_dir():
        raise BadInput(f"--inputs {folder!r} is not a folder", hint="pass a folder of .npy/.npz files or images")
    kind = shaping.input_kind(report.inputs, report.outputs, ())
    request = {"op": "files", "model": report.model, "inputs": {"kind": kind, "folder": str(path.resolve())}}
    answer = child.ask(request, min(_left(deadline), 120.0))
    if answer.get("event") != "files":
        raise BadInput(f"--inputs {folder!r} could not be read: {answer.get('message') or answer.get('reason')}")
    files = answer.get("files") or []
    if not files:
        raise BadInput(
            f"--inputs {folder!r} holds no input files",
            hint="put .npy (one array per run), .npz (one array per input) or image files there",
        )
    bad = [entry for entry in files if entry.get("error")]
    if bad:
        reader = answer.get("reader") or "no image reader (PIL, cv2) in the target"
        raise BadInput(
            f"--inputs: {bad[0]['name']} {bad[0]['error']}"
            + (f" (and {len(bad) - 1} more files)" if len(bad) > 1 else ""),
            hint=f"each file feeds one run of the model's inputs ({reader} reads images)",
        )
    runs = tuple({name: tuple(dims) for name, dims in entry["feed"].items()} for entry in files)
    runs = shaping.check_sequence(runs, report.inputs, f"--inputs {folder}")
    names = tuple(entry["name"] for entry in files)
    source = files_source(names, str(path.resolve()), kind, answer.get("reader"))
    report = replace(
        report,
        input_kind=kind,
        inputs_source=source,
        input_files=names,
        input_folder=str(path.resolve()),
        sequence_source=f"--inputs {folder}",
    )
    return _with_sequence(report, runs)


GENERATED = {
    "page": "generated text pages (dark lines of text on a light page, normalised as RapidOCR's detector does)",
    "line": "generated text lines (48 pixels high, dark text on a light background, normalised as RapidOCR does)",
    "random": "generated random values (the model's inputs are not recognised as images of text)",
}


def files_source(names: tuple[str, ...], folder: str, kind: str, reader: str | None) -> str:
    """What --inputs fed, in words."""
    arrays = sum(1 for n in names if n.lower().endswith((".npy", ".npz")))
    images = len(names) - arrays
    parts = [f"{arrays} arrays"] if arrays else []
    if images:
        how = "resized and normalised as RapidOCR's " + ("recogniser" if kind == "line" else "detector") + " does"
        parts.append(f"{images} images ({how}, read with {reader})")
    return f"your files from {folder}: " + ", ".join(parts)


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _inputs(report: TuneReport) -> dict[str, Any]:
    """How the child makes (or reads) the inputs."""
    if report.input_folder:
        return {"kind": report.input_kind, "folder": report.input_folder, "files": list(report.input_files)}
    return {"kind": report.input_kind}


def _place(child: TuneChild, report: TuneReport, deadline: float, say: Progress) -> TuneReport:
    """The placement profile: one session (CUDA when there is one: the largest run shape; else the CPU: the
    smallest, only the ops are wanted), three runs."""
    variant = plan.placement_variant(report)
    pick = max if variant.provider == "cuda" else min
    feed = pick(report.sequence, key=shaping.elements)
    say(f"tune: profiling node placement ({variant.label}, {shaping.describe_feed(feed)})")
    request = {
        "op": "placement",
        "model": report.model,
        "variant": variant.request(),
        "feed": feed,
        "runs": 2,
        "kind": report.input_kind,
    }
    answer = child.ask(request, min(_left(deadline), 120.0))
    fields = {k: v for k, v in answer.items() if k not in ("event", "id")}
    if answer.get("event") != "placement":
        fields = {"error": answer.get("reason") or answer.get("message") or "no answer"}
    placement = from_jsonable(Placement, {"variant": variant.name, "feed": feed, **fields})
    return replace(report, placement=placement)


def _measure_all(child: TuneChild, report: TuneReport, deadline: float, say: Progress, reference: str) -> TuneReport:
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
        measured = _measure(child, report, variant, left, say, reference)
        if measured.check is not None and measured.check.status != "reference":
            say(f"tune:     {variant.label}: {agreement_line(measured)}")
        report = _add(report, measured)


def agreement_line(measured: Measurement) -> str:
    """A progress line: does the variant give the reference's answers?"""
    check = measured.check
    if check is None or measured.agrees is None:
        return f"outputs not checked ({check.reason if check else 'no check'})"
    if check.agrees:
        return f"outputs agree with the CPU's ({check.inputs} inputs)"
    worst = max(check.outputs, key=lambda o: o.share_past)
    return f"outputs CHANGE: {worst.share_past:.3%} of {worst.output} past tolerance (max |diff| {worst.max_abs:.3g})"


def _share(variant: Variant, report: TuneReport, left: float) -> float:
    """Seconds one variant may take: the CPU a third of the budget, any other half of what is left (so that the
    variants after it get their turn), never less than MIN_VARIANT_S; the child stops its warm passes there."""
    share = (report.budget_s or left) / 3 if variant.name == plan.CPU_VARIANT.name else left / 2
    return max(MIN_VARIANT_S, min(left - 2.0, share))


def _add(report: TuneReport, measurement: Measurement) -> TuneReport:
    return replace(report, measurements=(*report.measurements, measurement))


def run_shapes(report: TuneReport, variant: Variant) -> list[Feed] | None:
    """The shape each entry runs at: padded to one shape or to buckets, or None (as it comes)."""
    if variant.pad_one and report.one_shape is not None:
        return [report.one_shape] * len(report.sequence)
    which = plan.buckets_of(variant)
    if which is not None:
        found = plan.bucket_sequence(report, which)
        return list(found) if found else None
    return None


def _measure(
    child: TuneChild, report: TuneReport, variant: Variant, left: float, say: Progress, reference: str
) -> Measurement:
    share = _share(variant, report, left)
    check_s = min(CHECK_MAX_S, max(CHECK_MIN_S, share / 2))
    request = {
        "op": "measure",
        "model": report.model,
        "variant": variant.request(),
        "inputs": _inputs(report),
        "specs": [{"name": spec.name, "type": spec.type, "shape": list(spec.shape)} for spec in report.inputs],
        "sequence": list(report.sequence),
        "run_shapes": run_shapes(report, variant),
        "warm_passes": plan.warm_passes(variant, report),
        "seconds": share,
        "cut_after_s": plan.cut_after_s(variant, report),
        "switch_runs": plan.SWITCH_RUNS,
        "reference": {"folder": reference, "make": variant.name == plan.CPU_VARIANT.name},
        "check_seconds": check_s,
    }

    def on_progress(event: dict[str, Any]) -> None:
        say(f"tune:     {variant.label}: {event.get('phase')} run {event.get('done')} of {event.get('total')}")

    answer = child.ask(request, left + GRACE_S + check_s, on_progress)
    log = tuple(LogLine(text, count) for text, count in child.last_log)
    if answer.get("event") != "measured":
        status = answer.get("status", "failed")
        reason = answer.get("reason") or answer.get("message") or "no answer"
        return Measurement(variant, status, reason, log=log)
    fields = {k: v for k, v in answer.items() if k in Measurement.__dataclass_fields__ and k != "variant"}
    measured = from_jsonable(Measurement, {**fields, "variant": to_jsonable(variant), "log": []})
    return replace(measured, variant=variant, log=log)
