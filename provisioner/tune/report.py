"""What a tune measured: the variants asked for and the tune child's answers, as frozen dataclasses.

The child (standalone/tune_child.py) answers in JSON whose keys match these classes; the runner adds what only
it knows (the log lines of each request, a timeout, a crash) and `TuneReport.from_dict` rebuilds the tree.
Recorded reports (tests/data/tune/*.json) drive the analysis in the tests.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field

from provisioner.serde import from_jsonable, to_jsonable

TUNE_SCHEMA_VERSION = 2  # 2: every measurement's check against the reference, its memory; the inputs used

Dims = tuple[int, ...]
Feed = dict[str, Dims]  # one run's input shapes: input name -> dims

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def clean_log_text(text: str) -> str:
    """A log line without terminal escapes (ONNX Runtime colours its warnings: `\\x1b[m` at the end)."""
    return _ANSI.sub("", text).strip()


# what a measurement can end as
STATUSES = ("ok", "cut-short", "unavailable", "fell-back", "refused", "failed", "skipped", "timeout", "crashed")


@dataclass(frozen=True)
class TensorSpec:
    """A model input or output: its name, element type and shape (int: fixed; str: a named dynamic dimension;
    None: an unnamed one)."""

    name: str
    type: str
    shape: tuple[int | str | None, ...]

    def dynamic(self) -> list[int]:
        """Positions of the dimensions a run may choose."""
        return [i for i, dim in enumerate(self.shape) if not isinstance(dim, int) or dim < 0]


@dataclass(frozen=True)
class Runtime:
    """The target interpreter and the onnxruntime it imports (the child's `ready` event)."""

    python: str
    python_version: str
    ort_version: str | None = None
    ort_package: str | None = None  # onnxruntime-gpu, onnxruntime ...
    available_providers: tuple[str, ...] = ()
    device: str | None = None
    numpy_version: str | None = None
    cpu_count: int | None = None
    import_s: float | None = None
    error: str | None = None  # import onnxruntime / numpy failed
    missing: str | None = None  # the module that is not installed (onnxruntime, numpy), when that was why


@dataclass(frozen=True)
class Variant:
    """One way to run the model: a provider with options, session options, how inputs reach the session
    (binding: none = session.run with numpy arrays; copy = I/O binding, inputs copied to the device each run and
    outputs left there, then copied back), state kept per input shape (per_shape: "graphs" = one session with a
    CUDA graph captured per shape, "sessions" = a session per shape; standalone/shape_sessions.py), and whether
    inputs are padded (to the tune's shape buckets, or to one shape; with zeros or the input's own edge)."""

    name: str
    label: str
    provider: str  # cpu | cuda
    provider_options: dict[str, str] = field(default_factory=dict)
    session_options: dict[str, str] = field(default_factory=dict)
    binding: str = "none"
    padded: bool = False  # padded to the tune's shape buckets
    pad_one: bool = False  # padded to ONE shape (the sequence's largest per dimension; the app crops)
    base: str | None = None  # the variant this one changes
    changes: tuple[str, ...] = ()  # what it changes, as `option=value`
    per_shape: str | None = None  # graphs | sessions: state kept per input shape
    pad_mode: str = "zero"  # zero | edge (numpy's pad mode "edge": the input's own border continues)
    shared_arena: bool = False  # per-shape sessions allocate from one CUDA arena

    @property
    def pads(self) -> bool:
        return self.padded or self.pad_one

    def request(self) -> dict[str, object]:
        """What the child needs of it."""
        return {
            "provider": self.provider,
            "provider_options": dict(self.provider_options),
            "session_options": dict(self.session_options),
            "binding": self.binding,
            "per_shape": self.per_shape,
            "pad_mode": self.pad_mode,
            "shared_arena": self.shared_arena,
        }


@dataclass(frozen=True)
class LogLine:
    """A line ONNX Runtime logged while a variant ran (time stamps stripped), and how often it came."""

    text: str
    count: int = 1


@dataclass(frozen=True)
class Switch:
    """The cost of a change of input shape, apart from a new shape's: two shapes seen before, each run on its
    own repeatedly (a steady run of one shape), then alternating A, B, A, B (every run a change of shape)."""

    shapes: tuple[Feed, ...] = ()
    same_ms: tuple[tuple[float, ...], ...] = ()  # per shape: its repeated runs
    alternating_ms: tuple[tuple[float, ...], ...] = ()  # per shape: its runs in the alternation

    @property
    def same_shape_ms(self) -> float | None:
        """The median steady run of one shape (the median of the shapes' medians)."""
        medians = [statistics.median(runs) for runs in self.same_ms if runs]
        return statistics.median(medians) if medians else None

    @property
    def switch_ms(self) -> float | None:
        """The median extra milliseconds of a run that changes the shape over a steady run of that shape."""
        extra = [
            run - statistics.median(same)
            for same, alternating in zip(self.same_ms, self.alternating_ms, strict=False)
            if same
            for run in alternating
        ]
        return statistics.median(extra) if extra else None


@dataclass(frozen=True)
class OutputAgreement:
    """One output of a variant against the reference's (standalone/tune_compare.py says the rules)."""

    output: str
    kind: str | None = None  # probability map | class probabilities | values
    tolerance: str = ""
    elements: int = 0
    past_tolerance: int = 0
    share_past: float = 0.0
    max_abs: float = 0.0
    max_rel: float = 0.0
    mean_abs: float = 0.0
    worst_run: int | None = None  # 1-based
    worst_share: float = 0.0
    flips: int = 0  # probability map: across the threshold; class probabilities: sure positions changed
    sure: int = 0
    regions_reference: tuple[int, ...] = ()  # probability map: text regions per input
    regions: tuple[int, ...] = ()
    not_comparable: str | None = None
    agrees: bool = False


@dataclass(frozen=True)
class Check:
    """A variant's outputs against the reference (the CPU session on the same, unpadded inputs), one input at
    a time. status: reference (this variant made it), compared, partial (some inputs), not-checked."""

    status: str
    reason: str | None = None
    inputs: int = 0
    agrees: bool = False
    outputs: tuple[OutputAgreement, ...] = ()


@dataclass(frozen=True)
class Memory:
    """What a variant's session(s) took, MiB: its creation, and what its first pass added (every per-shape session
    made, every graph captured, the arenas grown). GPU figures are the device's; the creation's is unknown (None)
    in a fresh child, whose CUDA runtime the session itself loads."""

    states: int = 1  # sessions or captured graphs kept per input shape (1: a plain session)
    rss_created_mb: float | None = None
    rss_mb: float | None = None  # the first pass's addition
    gpu_created_mb: float | None = None
    gpu_mb: float | None = None  # the first pass's addition


@dataclass(frozen=True)
class Measurement:
    """One variant over the tune's sequence: session creation, the first pass (each run shape new to the
    session the first time it comes), then warm passes; per run, in milliseconds. With I/O binding the copies
    and the compute of each warm run are apart too."""

    variant: Variant
    status: str  # STATUSES
    reason: str | None = None
    create_s: float | None = None
    session_providers: tuple[str, ...] = ()
    effective_options: dict[str, str] = field(default_factory=dict)  # session.get_provider_options()
    cold_ms: tuple[float, ...] = ()  # one per sequence entry
    new_shape: tuple[bool, ...] = ()  # entry i's run shape was new to the session
    warm_ms: tuple[tuple[float, ...], ...] = ()  # one tuple per complete warm pass
    copy_in_ms: tuple[tuple[float, ...], ...] = ()  # I/O binding: per warm pass, per entry
    compute_ms: tuple[tuple[float, ...], ...] = ()
    copy_out_ms: tuple[tuple[float, ...], ...] = ()
    switch: Switch | None = None  # the shape-switch runs (two shapes seen in the first pass)
    failed_at: int | None = None  # the entry a run failed on
    log: tuple[LogLine, ...] = ()
    seconds: float | None = None  # wall time of the whole measurement
    check: Check | None = None  # its outputs against the reference
    memory: Memory | None = None

    @property
    def agrees(self) -> bool | None:
        """True: its outputs match the reference's within tolerance (or it is the reference); False: they
        differ beyond it; None: not checked."""
        if self.check is None or self.check.status == "not-checked" or not self.check.inputs:
            return None
        return self.check.agrees

    @property
    def complete(self) -> bool:
        """Every entry ran once and at least one warm pass came: totals can be compared."""
        return self.status in ("ok", "cut-short") and bool(self.warm_ms) and len(self.cold_ms) == len(self.new_shape)

    @property
    def cold_s(self) -> float:
        """The first pass: every run shape new to the session the first time it comes."""
        return sum(self.cold_ms) / 1000.0

    def warm_totals_s(self) -> list[float]:
        return [sum(one) / 1000.0 for one in self.warm_ms]

    @property
    def warm_s(self) -> float | None:
        """The median of the warm passes' totals (every shape seen before)."""
        totals = self.warm_totals_s()
        return statistics.median(totals) if totals else None

    def steady_ms(self) -> list[float]:
        """Per entry: the median of its warm runs."""
        return self.medians(self.warm_ms)

    @staticmethod
    def medians(passes: tuple[tuple[float, ...], ...]) -> list[float]:
        """Per entry: the median over passes (of warm_ms, copy_in_ms, compute_ms or copy_out_ms)."""
        return [statistics.median(runs) for runs in zip(*passes, strict=True)] if passes else []


@dataclass(frozen=True)
class NodeGroup:
    """Nodes of one op type that one provider ran, and their kernel time per run (from the session profile)."""

    provider: str
    op: str
    count: int
    ms_per_run: float


@dataclass(frozen=True)
class CpuNode:
    name: str
    op: str


@dataclass(frozen=True)
class Placement:
    """Where ONNX Runtime placed each node, from a profiled session of the variant (CUDA when there is one)."""

    variant: str
    feed: Feed
    session_providers: tuple[str, ...] = ()
    groups: tuple[NodeGroup, ...] = ()
    cpu_nodes: tuple[CpuNode, ...] = ()  # nodes on the CPU inside a GPU session (the first few)
    node_count: int = 0
    run_ms: tuple[float, ...] = ()  # the profiled runs, as the profile times them
    runs: int = 0
    create_s: float | None = None  # the first session of this provider in the process: libraries, context
    first_run_ms: float | None = None
    error: str | None = None

    @property
    def gpu(self) -> bool:
        return bool(self.session_providers) and self.session_providers[0] != "CPUExecutionProvider"

    def ops(self) -> set[str]:
        return {group.op for group in self.groups}


@dataclass(frozen=True)
class TuneReport:
    """Everything a tune measured, with what it was asked: the model, the target, the sequence of input shapes
    (and the padded shapes of the buckets), each variant's measurement and the node placement."""

    model: str
    runtime: Runtime
    inputs: tuple[TensorSpec, ...] = ()
    outputs: tuple[TensorSpec, ...] = ()
    sequence: tuple[Feed, ...] = ()
    sequence_source: str = "derived"  # derived | --shape | --shapes FILE | --inputs DIR
    input_kind: str = "random"  # page | line | random: what the generated inputs look like
    inputs_source: str = ""  # what was fed, in words (generated text pages ..., the files of --inputs DIR)
    input_files: tuple[str, ...] = ()  # --inputs DIR: the files used, in the order of the sequence
    input_folder: str | None = None
    buckets: tuple[Feed, ...] = ()  # the padded shape of each sequence entry; () when padding does not apply
    fine_buckets: tuple[Feed, ...] = ()  # the same with fine buckets (each size rounded up to a few steps)
    one_shape: Feed | None = None  # the one shape every entry is padded to (None: the sequence has one already)
    notes: tuple[str, ...] = ()  # what the shapes assumed, what was skipped for the whole tune
    measurements: tuple[Measurement, ...] = ()
    placement: Placement | None = None
    budget_s: float | None = None
    duration_s: float | None = None
    stopped: str | None = None  # why the tune ended before its plan did (the budget, a crash)
    schema_version: int = TUNE_SCHEMA_VERSION

    def measurement(self, name: str) -> Measurement | None:
        return next((m for m in self.measurements if m.variant.name == name), None)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = to_jsonable(self)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> TuneReport:
        return from_jsonable(cls, data)

    @classmethod
    def from_json(cls, text: str) -> TuneReport:
        return cls.from_dict(json.loads(text))
