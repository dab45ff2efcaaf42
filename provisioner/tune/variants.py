"""Which variants a tune measures, in what order, and how long each may take.

The order is a coordinate search, the informative variants first and the known-slow ones late: the CPU (the bar
to beat), CUDA with onnxruntime's defaults (what a user gets; EXHAUSTIVE), HEURISTIC, then inputs padded to ONE
shape (the sequence's largest: one algorithm search, no change of shape; with EXHAUSTIVE and with HEURISTIC, each
also with a CUDA graph, which a fixed shape allows) and the CPU on that same padded workload, DEFAULT, the
report's options (RapidOCR 1.4.4's, EXHAUSTIVE), then, on top of the best algorithm search (the base), one change
at a time: padding to shape buckets, I/O binding, NHWC, the cuDNN workspace, TF32, the arena, the graph
optimisation level, CUDA graphs (one fixed shape only); last, the changes that helped, together. A variant whose
first pass already takes CUT_FACTOR times the best total so far is stopped there (`cut-short`, its partial
numbers kept): a slow search cannot eat the budget.

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

# Every input zero-padded to one shape (the sequence's largest, per dimension): one search, no change of shape.
PAD_ONE = Variant(
    "cuda-pad-one",
    "CUDA, inputs padded to one shape (EXHAUSTIVE)",
    "cuda",
    {ALGO: "EXHAUSTIVE"},
    pad_one=True,
    changes=(f"{ALGO}=EXHAUSTIVE", "inputs padded to one shape"),
)
PAD_ONE_GRAPH = Variant(
    "cuda-pad-one-graph",
    "CUDA, inputs padded to one shape (EXHAUSTIVE) + CUDA graph",
    "cuda",
    {ALGO: "EXHAUSTIVE", "enable_cuda_graph": "1"},
    binding="fixed",
    pad_one=True,
    base=PAD_ONE.name,
    changes=(*PAD_ONE.changes, "enable_cuda_graph=1", "I/O binding (fixed buffers)"),
)
# The same with HEURISTIC: one search of a few milliseconds instead of EXHAUSTIVE's second (paid once per process).
PAD_ONE_HEURISTIC = Variant(
    "cuda-pad-one-heuristic",
    "CUDA, inputs padded to one shape (HEURISTIC)",
    "cuda",
    {ALGO: "HEURISTIC"},
    pad_one=True,
    changes=(f"{ALGO}=HEURISTIC", "inputs padded to one shape"),
)
PAD_ONE_HEURISTIC_GRAPH = Variant(
    "cuda-pad-one-heuristic-graph",
    "CUDA, inputs padded to one shape (HEURISTIC) + CUDA graph",
    "cuda",
    {ALGO: "HEURISTIC", "enable_cuda_graph": "1"},
    binding="fixed",
    pad_one=True,
    base=PAD_ONE_HEURISTIC.name,
    changes=(*PAD_ONE_HEURISTIC.changes, "enable_cuda_graph=1", "I/O binding (fixed buffers)"),
)
CPU_PAD_ONE = Variant(
    "cpu-pad-one", "CPU, inputs padded to one shape", "cpu", pad_one=True, changes=("inputs padded to one shape",)
)


@dataclass(frozen=True)
class Change:
    """One change to a base variant: provider options, session options, binding or padding."""

    name: str
    label: str
    provider_options: dict[str, str] = field(default_factory=dict)
    session_options: dict[str, str] = field(default_factory=dict)
    binding: str | None = None
    padded: bool = False
    conv_only: bool = False  # a cuDNN convolution setting: pointless without Conv nodes
    group: str = ""  # changes of one group exclude each other in the combination

    def words(self) -> tuple[str, ...]:
        found = [f"{k}={v}" for k, v in {**self.provider_options, **self.session_options}.items()]
        if self.binding == "copy":
            found.append("I/O binding")
        if self.binding == "fixed":
            found.append("I/O binding (fixed buffers)")
        if self.padded:
            found.append("inputs padded to buckets")
        return tuple(found)


ALGORITHMS = (
    Change("heuristic", "cudnn_conv_algo_search HEURISTIC", {ALGO: "HEURISTIC"}, conv_only=True, group="algo"),
    Change("algo-default", "cudnn_conv_algo_search DEFAULT", {ALGO: "DEFAULT"}, conv_only=True, group="algo"),
)
CHANGES = (
    Change("pad", "inputs padded to shape buckets", padded=True, group="pad"),
    Change(
        "pad-exhaustive",
        "inputs padded to shape buckets, cudnn_conv_algo_search EXHAUSTIVE",
        {ALGO: "EXHAUSTIVE"},
        padded=True,
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
    Change("cuda-graph", "CUDA graph", {"enable_cuda_graph": "1"}, binding="fixed", group="binding"),
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
        padded=base.padded or change.padded,
        base=base.name,
        changes=base.changes + change.words(),
    )


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


def helps(candidate: Measurement, base: Measurement) -> bool:
    """The candidate is faster than its base by more than the noise."""
    a, b = score(candidate), score(base)
    if a is None or b is None:
        return False
    return a < b * (1.0 - max(HELPS_BY, spread(base), spread(candidate)))


def ran(measurement: Measurement | None) -> bool:
    """The variant's session ran runs (complete, or cut short with its first runs measured)."""
    return measurement is not None and measurement.status in ("ok", "cut-short") and bool(measurement.cold_ms)


def cuda_usable(report: TuneReport) -> bool:
    """CUDA with onnxruntime's defaults ran (if only its first runs, cut short): the other CUDA variants can."""
    return ran(report.measurement(CUDA_DEFAULT.name))


def best_score(report: TuneReport) -> float | None:
    """The best total measured so far (any variant, the CPU included)."""
    scores = [s for s in (score(m) for m in report.measurements) if s is not None]
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


def base(report: TuneReport) -> Measurement | None:
    """The best of CUDA with onnxruntime's defaults and the other algorithm searches: what the changes build on."""
    names = [CUDA_DEFAULT.name] + [apply_change(CUDA_DEFAULT, c).name for c in ALGORITHMS]
    found = [m for m in (report.measurement(n) for n in names) if m is not None and score(m) is not None]
    return min(found, key=lambda m: score(m) or 0.0) if found else None


def applicable(change: Change, report: TuneReport, base_variant: Variant) -> str | None:
    """Why `change` does not apply here (None: it does)."""
    if change.conv_only and not has_conv(report):
        return "the model has no convolution"
    if change.padded and not report.buckets:
        return "padding would not reduce the number of shapes"
    if change.name == "pad-exhaustive" and base_variant.provider_options.get(ALGO, "EXHAUSTIVE") == "EXHAUSTIVE":
        return "the base already searches EXHAUSTIVE (the padded variant covers it)"
    if change.name == "cuda-graph" and distinct(report.sequence) > 1:
        return f"a CUDA graph needs one fixed input shape; this sequence has {distinct(report.sequence)}"
    return None


def combination(report: TuneReport, base_measurement: Measurement) -> Variant | None:
    """The base with every change that helped on its own (the best of each group), when that is two or more."""
    chosen: dict[str, tuple[float, Change]] = {}
    for change in CHANGES:
        measured = report.measurement(apply_change(base_measurement.variant, change).name)
        if measured is None or not helps(measured, base_measurement):
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


def planned(report: TuneReport) -> list[Variant | tuple[Variant, str]]:
    """Every variant the tune means to measure so far, in order; (variant, why not) for one that does not apply.
    Later entries appear as earlier measurements come in."""
    plan: list[Variant | tuple[Variant, str]] = [CPU_VARIANT, CUDA_DEFAULT]
    default = report.measurement(CUDA_DEFAULT.name)
    if default is None:
        return plan
    heuristic, algo_default = (apply_change(CUDA_DEFAULT, c) for c in ALGORITHMS)
    if not ran(default):
        why = f"CUDA with onnxruntime's defaults did not run ({default.status})"
        rest = [apply_change(CUDA_DEFAULT, c) for c in CHANGES]
        cuda = (
            heuristic,
            PAD_ONE,
            PAD_ONE_GRAPH,
            PAD_ONE_HEURISTIC,
            PAD_ONE_HEURISTIC_GRAPH,
            algo_default,
            REPORT,
            *rest,
        )
        return plan + [(variant, why) for variant in cuda] + [(CPU_PAD_ONE, why)]
    conv = has_conv(report)
    plan.append(heuristic if conv else (heuristic, "the model has no convolution"))
    one = "the sequence has one shape already" if report.one_shape is None else None
    for variant in (PAD_ONE, PAD_ONE_GRAPH, PAD_ONE_HEURISTIC, PAD_ONE_HEURISTIC_GRAPH, CPU_PAD_ONE):
        plan.append(variant if one is None else (variant, one))
    plan.append(algo_default if conv else (algo_default, "the model has no convolution"))
    plan.append(REPORT)
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
