"""Which variants a tune measures, in what order, and how long each may take.

The order is a coordinate search, the informative variants first and the known-slow ones late: the CPU (the bar
to beat, and the reference every other variant's outputs are checked against), CUDA with onnxruntime's defaults
(what a user gets; EXHAUSTIVE), HEURISTIC; then state kept per input shape on the fast search, so that no run
changes the shape its session last ran (a CUDA graph captured per shape in one session; a session per shape);
then inputs padded to ONE shape (the sequence's largest: no change of shape, but the outputs may change: the
check says), with zeros and with the input's own edge, with a CUDA graph, under EXHAUSTIVE, and the CPU on that
padded workload; DEFAULT, the report's options (RapidOCR 1.4.4's, EXHAUSTIVE), sessions per shape sharing one
arena; then, on top of the best algorithm search (the base), one change at a time: padding to shape buckets
(coarse and fine, zeros and edge), I/O binding, NHWC, the cuDNN workspace, TF32, the arena, the graph
optimisation level; last, the changes that helped and kept the answers, together. A variant whose first pass
already takes CUT_FACTOR times the best total so far (of the variants that keep the answers) is stopped there
(`cut-short`, its partial numbers kept): a slow search cannot eat the budget.

`next_variant` is asked again after every measurement, so the plan follows the results; a variant the budget
cannot pay for is recorded as skipped, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from provisioner.tune.report import Measurement, TuneReport, Variant
from provisioner.tune.shapes import distinct

CUDA = "CUDAExecutionProvider"
ALGO = "cudnn_conv_algo_search"
CONV_OPS = frozenset({"Conv", "ConvTranspose", "FusedConv", "NhwcConv"})
HELPS_BY = 0.05  # a change helps when it saves more than this share of the base's time (and its spread)
WARM_PASSES = 3  # a median and a spread
WARM_PASSES_CHEAP = 5  # when a pass takes under CHEAP_PASS_S
CHEAP_PASS_S = 1.0
CUT_FACTOR = 2.0  # a first pass over this many times the best total so far is stopped (cut-short)
SWITCH_RUNS = 5  # the shape-switch runs: each of two seen shapes this many times, then alternating

CPU_VARIANT = Variant("cpu", "CPU", "cpu")
CUDA_DEFAULT = Variant("cuda-default", "CUDA, onnxruntime's defaults", "cuda")
# The options of the report (RapidOCR's GPU page) and of RapidOCR 1.4.4's utils/infer_engine.py, which hard-codes
# them (device_id 0, kNextPowerOfTwo, EXHAUSTIVE, do_copy_in_default_stream True).
REPORT_OPTIONS = {ALGO: "EXHAUSTIVE", "arena_extend_strategy": "kNextPowerOfTwo", "do_copy_in_default_stream": "1"}
REPORT = Variant(
    "cuda-report",
    "CUDA, the report's options (RapidOCR 1.4.4's)",
    "cuda",
    dict(REPORT_OPTIONS),
    changes=tuple(f"{k}={v}" for k, v in REPORT_OPTIONS.items()),
)
PAD_ONE_WORDS = "inputs padded to one shape"


def _pad_one(name: str, algo: str, graph: bool = False, mode: str = "zero") -> Variant:
    """Every input padded to one shape (the sequence's largest, per dimension): one search, no change of shape."""
    how = " with their edge values" if mode == "edge" else ""
    label = f"CUDA, {PAD_ONE_WORDS}{how} ({algo})" + (" + CUDA graph" if graph else "")
    changes = (f"{ALGO}={algo}", PAD_ONE_WORDS + (" (edge)" if mode == "edge" else ""))
    return Variant(
        name,
        label,
        "cuda",
        {ALGO: algo},
        pad_one=True,
        per_shape="graphs" if graph else None,
        pad_mode=mode,
        changes=(*changes, "a CUDA graph") if graph else changes,
    )


PAD_ONE = _pad_one("cuda-pad-one", "EXHAUSTIVE")
PAD_ONE_GRAPH = replace(_pad_one("cuda-pad-one-graph", "EXHAUSTIVE", graph=True), base=PAD_ONE.name)
# HEURISTIC: one search of a few milliseconds instead of EXHAUSTIVE's second (paid once per process).
PAD_ONE_HEURISTIC = _pad_one("cuda-pad-one-heuristic", "HEURISTIC")
PAD_ONE_HEURISTIC_GRAPH = replace(
    _pad_one("cuda-pad-one-heuristic-graph", "HEURISTIC", graph=True), base=PAD_ONE_HEURISTIC.name
)
PAD_ONE_HEURISTIC_EDGE = replace(
    _pad_one("cuda-pad-one-heuristic-edge", "HEURISTIC", mode="edge"), base=PAD_ONE_HEURISTIC.name
)
CPU_PAD_ONE = Variant("cpu-pad-one", f"CPU, {PAD_ONE_WORDS}", "cpu", pad_one=True, changes=(PAD_ONE_WORDS,))


@dataclass(frozen=True)
class Change:
    """One change to a base variant: provider options, session options, binding, padding or per-shape state."""

    name: str
    label: str
    provider_options: dict[str, str] = field(default_factory=dict)
    session_options: dict[str, str] = field(default_factory=dict)
    binding: str | None = None
    padded: str | None = None  # coarse | fine: padded to shape buckets
    pad_mode: str = "zero"
    per_shape: str | None = None  # graphs | sessions
    shared_arena: bool = False
    conv_only: bool = False  # a cuDNN convolution setting: pointless without Conv nodes
    group: str = ""  # changes of one group exclude each other in the combination

    def words(self) -> tuple[str, ...]:
        found = [f"{k}={v}" for k, v in {**self.provider_options, **self.session_options}.items()]
        if self.binding == "copy":
            found.append("I/O binding")
        if self.padded:
            found.append(f"inputs padded to {self.padded} buckets" + (" (edge)" if self.pad_mode == "edge" else ""))
        if self.per_shape == "graphs":
            found.append("a CUDA graph per input shape")
        if self.per_shape == "sessions":
            found.append("a session per input shape" + (" (one shared arena)" if self.shared_arena else ""))
        return tuple(found)


ALGORITHMS = (
    Change("heuristic", "cudnn_conv_algo_search HEURISTIC", {ALGO: "HEURISTIC"}, conv_only=True, group="algo"),
    Change("algo-default", "cudnn_conv_algo_search DEFAULT", {ALGO: "DEFAULT"}, conv_only=True, group="algo"),
)
# how a run reaches its session: one group, so that the combination takes one of them (I/O binding by hand
# and the per-shape helpers do not stack)
GRAPH_PER_SHAPE = Change("graphs", "a CUDA graph per input shape", per_shape="graphs", group="binding")
SESSION_PER_SHAPE = Change("sessions", "a session per input shape", per_shape="sessions", group="binding")
SHARED_ARENA = Change(
    "sessions-shared",
    "a session per input shape, one shared arena",
    per_shape="sessions",
    shared_arena=True,
    group="binding",
)
PER_SHAPE = (GRAPH_PER_SHAPE, SESSION_PER_SHAPE)
CHANGES = (
    Change("pad", "inputs padded to coarse buckets", padded="coarse", group="pad"),
    Change(
        "pad-edge",
        "inputs padded to coarse buckets with their edge values",
        padded="coarse",
        pad_mode="edge",
        group="pad",
    ),  # fmt: skip
    Change("pad-fine", "inputs padded to fine buckets", padded="fine", group="pad"),
    Change(
        "pad-exhaustive",
        "inputs padded to coarse buckets, cudnn_conv_algo_search EXHAUSTIVE",
        {ALGO: "EXHAUSTIVE"},
        padded="coarse",
        conv_only=True,
        group="pad",
    ),
    Change("io-binding", "I/O binding", binding="copy", group="binding"),
    Change("nhwc", "prefer_nhwc", {"prefer_nhwc": "1"}, conv_only=True),
    Change("max-workspace", "cudnn_conv_use_max_workspace", {"cudnn_conv_use_max_workspace": "1"}, conv_only=True),
    Change("tf32-off", "use_tf32 off", {"use_tf32": "0"}),
    Change("arena-same", "arena_extend_strategy kSameAsRequested", {"arena_extend_strategy": "kSameAsRequested"}),
    Change(
        "graph-extended",
        "graph optimisation EXTENDED",
        session_options={"graph_optimization_level": "ORT_ENABLE_EXTENDED"},
        group="graph",
    ),
    Change(
        "graph-basic",
        "graph optimisation BASIC",
        session_options={"graph_optimization_level": "ORT_ENABLE_BASIC"},
        group="graph",
    ),
    GRAPH_PER_SHAPE,
    SESSION_PER_SHAPE,
)


def apply_change(base: Variant, change: Change) -> Variant:
    """`base` with `change` on top, named after both."""
    return Variant(
        name=f"{base.name}+{change.name}" if base.name != CUDA_DEFAULT.name else f"cuda-{change.name}",
        label=f"{base.label} + {change.label}" if base.name != CUDA_DEFAULT.name else f"CUDA, {change.label}",
        provider=base.provider,
        provider_options={**base.provider_options, **change.provider_options},
        session_options={**base.session_options, **change.session_options},
        binding=change.binding or base.binding,
        padded=base.padded or bool(change.padded),
        base=base.name,
        changes=base.changes + change.words(),
        per_shape=change.per_shape or base.per_shape,
        pad_mode=change.pad_mode if change.padded else base.pad_mode,
        shared_arena=base.shared_arena or change.shared_arena,
    )


def buckets_of(variant: Variant) -> str | None:
    """coarse | fine: which shape buckets a bucket-padded variant uses (None: none)."""
    if not variant.padded:
        return None
    return "fine" if any(word.startswith("inputs padded to fine") for word in variant.changes) else "coarse"


# -- what the measurements say ---------------------------------------------------------------------------------


def score(measurement: Measurement) -> float | None:
    """The sequence twice over: once as new shapes (the first pass), once seen (the median warm pass)."""
    if not measurement.complete or measurement.warm_s is None:
        return None
    return measurement.cold_s + measurement.warm_s


def spread(measurement: Measurement) -> float:
    """The warm passes' spread, relative to their median."""
    totals = measurement.warm_totals_s()
    middle = measurement.warm_s
    return (max(totals) - min(totals)) / middle if totals and middle else 0.0


def keeps_answers(measurement: Measurement) -> bool:
    """Its outputs agree with the reference's, or were not checked (nothing says they differ)."""
    return measurement.agrees is not False


def helps(candidate: Measurement, base: Measurement) -> bool:
    """The candidate is faster than its base by more than the noise."""
    a, b = score(candidate), score(base)
    if a is None or b is None:
        return False
    return a < b * (1.0 - max(HELPS_BY, spread(base), spread(candidate)))


def ran(measurement: Measurement | None) -> bool:
    """The variant's session ran runs (complete, or cut short with its first runs measured)."""
    return measurement is not None and measurement.status in ("ok", "cut-short") and bool(measurement.cold_ms)


def best_score(report: TuneReport) -> float | None:
    """The best total measured so far among the variants that keep the answers (the CPU included)."""
    scores = [s for s in (score(m) for m in report.measurements if keeps_answers(m)) if s is not None]
    return min(scores) if scores else None


def cut_after_s(variant: Variant, report: TuneReport) -> float | None:
    """Seconds of first runs after which the child stops a variant: CUT_FACTOR times the best total so far
    (None for the CPU, the bar every other variant is measured against, and before anything is measured)."""
    if variant.name == CPU_VARIANT.name:
        return None
    best = best_score(report)
    return round(best * CUT_FACTOR, 3) if best is not None else None


def has_conv(report: TuneReport) -> bool:
    """Conv nodes in the model, from the placement profile (unknown: assume so)."""
    placement = report.placement
    if placement is None or placement.error or not placement.groups:
        return True
    return bool(placement.ops() & CONV_OPS)


def fast_search(report: TuneReport) -> Variant:
    """The variant the per-shape state builds on: HEURISTIC for a model with convolutions (its search costs
    milliseconds; a new shape pays it once per state), else onnxruntime's defaults."""
    return apply_change(CUDA_DEFAULT, ALGORITHMS[0]) if has_conv(report) else CUDA_DEFAULT


def base(report: TuneReport) -> Measurement | None:
    """The best of CUDA with onnxruntime's defaults and the other algorithm searches: what the changes build on."""
    names = [CUDA_DEFAULT.name] + [apply_change(CUDA_DEFAULT, c).name for c in ALGORITHMS]
    found = [m for m in (report.measurement(n) for n in names) if m is not None and score(m) is not None]
    return min(found, key=lambda m: score(m) or 0.0) if found else None


def applicable(change: Change, report: TuneReport, base_variant: Variant) -> str | None:
    """Why `change` does not apply here (None: it does)."""
    if change.conv_only and not has_conv(report):
        return "the model has no convolution"
    if change.padded and not bucket_sequence(report, change.padded):
        return f"padding to {change.padded} buckets would not reduce the number of shapes"
    if change.name == "pad-exhaustive" and base_variant.provider_options.get(ALGO, "EXHAUSTIVE") == "EXHAUSTIVE":
        return "the base already searches EXHAUSTIVE (the padded variant covers it)"
    if change.per_shape == "sessions" and distinct(report.sequence) < 2:
        return "the sequence has one shape: a session per shape is a plain session"
    return None


def bucket_sequence(report: TuneReport, which: str) -> tuple[dict[str, tuple[int, ...]], ...]:
    return report.fine_buckets if which == "fine" else report.buckets


def combination(report: TuneReport, base_measurement: Measurement) -> Variant | None:
    """The base with every change that helped on its own and kept the answers (the best of each group), when
    that is two or more."""
    chosen: dict[str, tuple[float, Change]] = {}
    for change in CHANGES:
        measured = report.measurement(apply_change(base_measurement.variant, change).name)
        if measured is None or not keeps_answers(measured) or not helps(measured, base_measurement):
            continue
        key = change.group or change.name
        value = score(measured) or 0.0
        if key not in chosen or value < chosen[key][0]:
            chosen[key] = (value, change)
    if len(chosen) < 2:
        return None
    combined = base_measurement.variant
    for _, change in sorted(chosen.values(), key=lambda item: CHANGES.index(item[1])):
        combined = replace(apply_change(combined, change), base=base_measurement.variant.name)
    return replace(combined, name=f"{base_measurement.variant.name}+best", label=f"{combined.label}")


def _early(report: TuneReport) -> list[Variant | tuple[Variant, str]]:
    """After the algorithm searches: state per shape on the fast search, then padding to one shape."""
    fast = fast_search(report)
    found: list[Variant | tuple[Variant, str]] = []
    for change in PER_SHAPE:
        why = applicable(change, report, fast)
        found.append(apply_change(fast, change) if why is None else (apply_change(fast, change), why))
    one = "the sequence has one shape already" if report.one_shape is None else None
    for variant in (PAD_ONE_HEURISTIC, PAD_ONE_HEURISTIC_EDGE, PAD_ONE_HEURISTIC_GRAPH, CPU_PAD_ONE):
        found.append(variant if one is None else (variant, one))
    return found


def planned(report: TuneReport) -> list[Variant | tuple[Variant, str]]:
    """Every variant the tune means to measure so far, in order; (variant, why not) for one that does not apply.
    Later entries appear as earlier measurements come in."""
    plan: list[Variant | tuple[Variant, str]] = [CPU_VARIANT, CUDA_DEFAULT]
    default = report.measurement(CUDA_DEFAULT.name)
    if default is None:
        return plan
    heuristic, algo_default = (apply_change(CUDA_DEFAULT, c) for c in ALGORITHMS)
    shared = apply_change(fast_search(report), SHARED_ARENA)
    if not ran(default):
        why = f"CUDA with onnxruntime's defaults did not run ({default.status})"
        early = [item[0] if isinstance(item, tuple) else item for item in _early(report)]
        rest = [apply_change(CUDA_DEFAULT, c) for c in CHANGES if c not in PER_SHAPE]
        cuda = (heuristic, *early, algo_default, REPORT, PAD_ONE, PAD_ONE_GRAPH, shared, *rest)
        one = "the sequence has one shape already" if report.one_shape is None else None
        cpu_padded = CPU_PAD_ONE if one is None else (CPU_PAD_ONE, one)  # still telling: does padding change it?
        return [*plan, cpu_padded] + [(variant, why) for variant in cuda if variant.provider == "cuda"]
    conv = has_conv(report)
    plan.append(heuristic if conv else (heuristic, "the model has no convolution"))
    plan += _early(report)
    plan.append(algo_default if conv else (algo_default, "the model has no convolution"))
    plan.append(REPORT)
    one = "the sequence has one shape already" if report.one_shape is None else None
    plan += [variant if one is None else (variant, one) for variant in (PAD_ONE, PAD_ONE_GRAPH)]
    why_shared = applicable(SHARED_ARENA, report, fast_search(report))
    plan.append(shared if why_shared is None else (shared, why_shared))
    first = base(report)
    measured_algos = all(report.measurement(apply_change(CUDA_DEFAULT, c).name) is not None for c in ALGORITHMS)
    if first is None or (conv and not measured_algos):
        return plan
    for change in CHANGES:
        variant = apply_change(first.variant, change)
        why_not = applicable(change, report, first.variant)
        plan.append(variant if why_not is None else (variant, why_not))
    if all(report.measurement(apply_change(first.variant, c).name) is not None for c in CHANGES):
        combined = combination(report, first)
        if combined is not None:
            plan.append(combined)
    return plan


def next_variant(report: TuneReport) -> Variant | tuple[Variant, str] | None:
    """The next planned variant not measured (or skipped) yet; None when the plan is done."""
    for item in planned(report):
        variant = item[0] if isinstance(item, tuple) else item
        if report.measurement(variant.name) is None:
            return item
    return None


# -- time ------------------------------------------------------------------------------------------------------


def estimate_s(variant: Variant, report: TuneReport) -> float | None:
    """Seconds a variant will take, from the closest one measured: its base (or CUDA's defaults, whose
    EXHAUSTIVE search is the dearest), else the CPU's. None when nothing is known yet."""
    for name in (variant.base, CUDA_DEFAULT.name if variant.provider == "cuda" else CPU_VARIANT.name):
        if name is None:
            continue
        measured = report.measurement(name)
        if measured is not None and measured.seconds is not None and measured.complete:
            return measured.seconds
    return None


def warm_passes(variant: Variant, report: TuneReport) -> int:
    """More passes when a pass is cheap: a steadier median for the same time."""
    for name in (variant.base, CUDA_DEFAULT.name if variant.provider == "cuda" else None):
        measured = report.measurement(name) if name else None
        if measured is not None and measured.warm_s is not None:
            return WARM_PASSES_CHEAP if measured.warm_s < CHEAP_PASS_S else WARM_PASSES
    return WARM_PASSES


def placement_variant(report: TuneReport) -> Variant:
    """The session profiled for node placement: CUDA (HEURISTIC: where nodes go does not depend on the
    search, and the profile should not wait for one) when this onnxruntime has it, else the CPU."""
    if CUDA in report.runtime.available_providers:
        return Variant("placement", "CUDA, profiled", "cuda", {ALGO: "HEURISTIC"})
    return Variant("placement", "CPU, profiled", "cpu")
