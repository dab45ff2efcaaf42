"""The input shapes a tune runs: --shape and --shapes read and checked against the model, the default spread
derived from its dynamic axes, and the padding buckets.

A sequence is what an application feeds a session, in order: one feed (input name -> dims) per run. Shapes that
change from run to run are the case where onnxruntime's per-shape work (cuDNN's algorithm search, the memory
arena growing) costs most, so the default sequence varies every dynamic axis it can give a meaning to:

- an image input (rank 4, 1/3/4 channels: NCHW or NHWC) with a dynamic height and width: 24 sizes, each side a
  multiple of 32 between 480 and 1600 (what an OCR text detector sees after resizing pages and photos);
- the same input when the model's output is a sequence (rank 3, [batch, steps, classes]: a text-line
  recogniser): a line 48 pixels high (when the height is dynamic) and 24 widths, multiples of 32 from 320 to
  1600;
- a token input (rank 2, [batch, length]): 24 lengths, multiples of 8 from 16 to 512;
- a batch dimension (the first, dynamic): 1; any other dynamic dimension: 1, with a note.

Dimensions that share a name take the same value in every input of a run.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from provisioner.errors import BadInput

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from provisioner.tune.report import Dims, Feed, TensorSpec
from provisioner.validate import ascii_digits, json_value, whole_number

DEFAULT_RUNS = 24
IMAGE_SIDES = (480, 1600, 32)  # low, high, step
LINE_WIDTHS = (320, 1600, 32)
LINE_HEIGHT = 48
TOKEN_LENGTHS = (16, 512, 8)
BUCKETS_PER_AXIS = 3
FINE_STEPS = 4  # fine buckets: multiples of 4 x the sizes' common step
LINE_MAX_HEIGHT = 64  # an image input no higher than this in every run is a text line
FLOAT_TYPES = ("tensor(float)", "tensor(float16)", "tensor(double)")
UNNAMED = ("", "?")  # dimension names that say "unknown", not "the same as every other one so named"
MAX_SIZE = 2**31 - 1  # a dimension's size (onnxruntime's are int64; an input that large cannot be allocated)
_DIMS = re.compile(r"^\d+([x,]\d+)*$", re.ASCII)
_GOLDEN = (math.sqrt(5) - 1) / 2
_SQRT2 = math.sqrt(2) - 1


def parse_dims(text: str, flag: str = "--shape") -> Dims:
    """'1x3x640x480' or '1,3,640,480' -> (1, 3, 640, 480) (Unicode digits read as digits; each size at most
    MAX_SIZE); BadInput otherwise."""
    value = ascii_digits(text).strip().replace(" ", "")
    hint = "example: --shape x=1x3x640x480"
    if not _DIMS.match(value):
        raise BadInput(f"{flag}: {text!r} is not a list of sizes", hint=hint)
    try:
        return tuple(whole_number(d, "a size", 1, MAX_SIZE) for d in re.split("[x,]", value))
    except ValueError as exc:
        raise BadInput(f"{flag}: {text[:80]!r}: {exc}", hint=hint) from None


def parse_shape_options(values: list[str] | None) -> dict[str, list[Dims]]:
    """`--shape NAME=DIMS` (repeatable) -> input name -> its shapes, in the order given."""
    found: dict[str, list[Dims]] = {}
    for value in values or []:
        name, sep, dims = value.partition("=")
        if not sep or not name.strip():
            raise BadInput(f"--shape {value!r} is not NAME=DIMS", hint="example: --shape x=1x3x640x480 (repeatable)")
        found.setdefault(name.strip(), []).append(parse_dims(dims))
    return found


def sequence_from_options(shapes: dict[str, list[Dims]]) -> tuple[Feed, ...]:
    """Runs from --shape values: the n-th shape of every input goes together; an input given once keeps its
    shape in every run."""
    counts = {len(values) for values in shapes.values() if len(values) > 1}
    if len(counts) > 1:
        listed = ", ".join(f"{name}: {len(values)}" for name, values in shapes.items())
        raise BadInput(
            f"--shape gives the inputs different numbers of shapes ({listed})",
            hint="give every input the same number of --shape values, or one (kept for every run)",
        )
    runs = counts.pop() if counts else 1
    return tuple({name: values[i if len(values) > 1 else 0] for name, values in shapes.items()} for i in range(runs))


def parse_shapes_file(text: str, source: str) -> tuple[Feed, ...]:
    """The runs of a --shapes FILE: a JSON list with one object per run, input name -> dims (a list of sizes or
    '1x3x640x480'); or an object whose "shapes" key holds that list."""
    hint = 'a JSON list of runs, e.g. [{"x": [1, 3, 640, 480]}, {"x": "1x3x960x736"}]'
    try:
        data = json_value(text)
    except ValueError as exc:
        raise BadInput(f"--shapes {source!r} {exc}", hint=hint) from None
    if isinstance(data, dict) and "shapes" in data:
        data = data["shapes"]
    if not isinstance(data, list) or not data or not all(isinstance(run, dict) and run for run in data):
        raise BadInput(f"--shapes {source!r} holds no list of runs", hint=hint)
    runs = []
    for number, run in enumerate(data, 1):
        feed: Feed = {}
        for name, dims in run.items():
            if isinstance(dims, str):
                feed[str(name)] = parse_dims(dims, f"--shapes {source} run {number}")
            elif isinstance(dims, list) and dims and all(type(d) is int and 1 <= d <= MAX_SIZE for d in dims):
                feed[str(name)] = tuple(dims)
            else:
                raise BadInput(f"--shapes {source!r}: run {number}, input {name!r}: {dims!r} is not a shape", hint=hint)
        runs.append(feed)
    return tuple(runs)


def check_sequence(sequence: tuple[Feed, ...], inputs: tuple[TensorSpec, ...], source: str) -> tuple[Feed, ...]:
    """Every run against the model's inputs: known names, the right rank, the fixed sizes kept, every dynamic
    input given. Fixed inputs left out are filled in. BadInput for the first mismatch."""
    known = {spec.name: spec for spec in inputs}
    completed = []
    for number, feed in enumerate(sequence, 1):
        where = f"{source}, run {number}" if len(sequence) > 1 else source
        for name in feed:
            if name not in known:
                raise BadInput(
                    f"{where}: the model has no input {name!r}",
                    hint=f"its inputs: {', '.join(describe_input(s) for s in inputs)}",
                )
        full: Feed = {}
        for spec in inputs:
            dims = feed.get(spec.name)
            if dims is None:
                if spec.dynamic():
                    raise BadInput(
                        f"{where}: no shape for input {describe_input(spec)}",
                        hint=f"add --shape {spec.name}={'x'.join(_example(d) for d in spec.shape)}",
                    )
                full[spec.name] = tuple(int(d) for d in spec.shape if isinstance(d, int))
                continue
            if len(dims) != len(spec.shape):
                raise BadInput(
                    f"{where}: input {spec.name!r} has {len(spec.shape)} dimensions, {len(dims)} were given",
                    hint=f"its shape: {describe_input(spec)}",
                )
            for position, (size, declared) in enumerate(zip(dims, spec.shape, strict=True)):
                if isinstance(declared, int) and declared >= 0 and size != declared:
                    raise BadInput(
                        f"{where}: dimension {position} of input {spec.name!r} is fixed at {declared}, not {size}",
                        hint=f"its shape: {describe_input(spec)}",
                    )
            full[spec.name] = tuple(dims)
        completed.append(full)
    return tuple(completed)


def describe_input(spec: TensorSpec) -> str:
    """x[batch, 3, H, W] with '?' for an unnamed dynamic dimension."""
    return f"{spec.name}[{', '.join(_example(d) for d in spec.shape)}]"


def describe_feed(feed: Feed) -> str:
    return ", ".join(f"{name}={'x'.join(str(d) for d in dims)}" for name, dims in feed.items())


def _example(dim: int | str | None) -> str:
    if isinstance(dim, int) and dim >= 0:
        return str(dim)
    return str(dim) if isinstance(dim, str) and dim not in UNNAMED else "?"


# -- the default spread ---------------------------------------------------------------------------------------


def _spread(low: int, high: int, step: int, fraction: float) -> int:
    """A multiple of `step` in [low, high] at `fraction` of the way."""
    slots = (high - low) // step
    return low + step * min(slots, int(fraction * (slots + 1)))


def image_sizes(count: int = DEFAULT_RUNS) -> list[tuple[int, int]]:
    """`count` distinct (height, width) pairs, both multiples of 32 in [480, 1600]: a low-discrepancy spread
    (golden-ratio and sqrt(2) steps) that mixes portrait, landscape and square sizes, the same every time."""
    low, high, step = IMAGE_SIDES
    sizes: list[tuple[int, int]] = []
    i = 0
    while len(sizes) < count:
        i += 1
        pair = (_spread(low, high, step, (i * _GOLDEN) % 1.0), _spread(low, high, step, (i * _SQRT2) % 1.0))
        if pair not in sizes:
            sizes.append(pair)
    return sizes


def lengths(low: int, high: int, step: int, count: int = DEFAULT_RUNS) -> list[int]:
    """`count` values, multiples of `step` in [low, high], spread the same low-discrepancy way (repeats allowed
    when there are fewer slots than runs)."""
    return [_spread(low, high, step, (i * _GOLDEN) % 1.0) for i in range(1, count + 1)]


def _layout(spec: TensorSpec) -> tuple[int, int] | None:
    """(height, width) positions of an image input: rank 4 with 1, 3 or 4 channels first (NCHW) or last (NHWC)."""
    if len(spec.shape) != 4:
        return None
    if spec.shape[1] in (1, 3, 4):
        return 2, 3
    if spec.shape[3] in (1, 3, 4):
        return 1, 2
    return None


def default_sequence(
    inputs: tuple[TensorSpec, ...], outputs: tuple[TensorSpec, ...], count: int = DEFAULT_RUNS
) -> tuple[tuple[Feed, ...], tuple[str, ...]]:
    """The runs derived from the model's dynamic axes (see the module's docstring), and notes that say what
    was assumed."""
    notes: list[str] = []
    text_lines = any(len(out.shape) == 3 and out.dynamic() for out in outputs)
    images = image_sizes(count)
    widths = lengths(*LINE_WIDTHS, count)
    tokens = lengths(*TOKEN_LENGTHS, count)
    runs: list[Feed] = []
    for run in range(count):
        named: dict[str, int] = {}  # a named dimension takes one value in every input of the run
        feed: Feed = {}
        for spec in inputs:
            dims = []
            layout = _layout(spec)
            guesses: dict[str, list[int]] = {}
            for position, declared in enumerate(spec.shape):
                if isinstance(declared, int) and declared >= 0:
                    dims.append(declared)
                    continue
                shared = isinstance(declared, str) and declared not in UNNAMED
                if shared and declared in named:
                    dims.append(named[str(declared)])
                    continue
                size, guess = _size(spec, position, layout, text_lines, images[run], widths[run], tokens[run])
                if guess:
                    guesses.setdefault(guess, []).append(position)
                if shared:
                    named[str(declared)] = size
                dims.append(size)
            feed[spec.name] = tuple(dims)
            if run == 0:
                for guess, positions in guesses.items():
                    which = " and ".join(str(p) for p in positions)
                    notes.append(
                        f"{describe_input(spec)}, dimension{'s' if len(positions) > 1 else ''} {which}: {guess}"
                    )
        runs.append(feed)
    return tuple(runs), tuple(dict.fromkeys(notes))


def _size(
    spec: TensorSpec,
    position: int,
    layout: tuple[int, int] | None,
    text_lines: bool,
    image: tuple[int, int],
    width: int,
    tokens: int,
) -> tuple[int, str | None]:
    """The size of one dynamic dimension in one run, and a note when it was a guess."""
    if position == 0 and len(spec.shape) >= 2:
        return 1, None  # a batch
    if layout is not None and position in layout:
        height_at, width_at = layout
        if text_lines:
            if position == height_at:
                return LINE_HEIGHT, f"a text line {LINE_HEIGHT} pixels high (the model's output is a sequence)"
            return width, f"text-line widths, multiples of 32 from {LINE_WIDTHS[0]} to {LINE_WIDTHS[1]}"
        low, high, _ = IMAGE_SIDES
        side = image[0] if position == height_at else image[1]
        return side, f"image sides, multiples of 32 from {low} to {high}"
    if len(spec.shape) == 2 and position == 1:
        low, high, _ = TOKEN_LENGTHS
        return tokens, f"sequence lengths, multiples of 8 from {low} to {high}"
    return 1, "no meaning derived, 1 used (give your sizes with --shape or --shapes)"


# -- padding to buckets ---------------------------------------------------------------------------------------


def buckets(sequence: tuple[Feed, ...], per_axis: int = BUCKETS_PER_AXIS) -> tuple[Feed, ...]:
    """The padded shape of each run: every dimension that varies is rounded up to one of `per_axis` sizes (the
    largest value, and the values at the thirds of the sorted sizes), so that a few shapes stand for many. ()
    when that would not reduce the number of distinct shapes."""
    levels = {
        axis: sorted(
            {values[min(len(values) - 1, math.ceil(len(values) * k / per_axis) - 1)] for k in range(1, per_axis)}
            | {values[-1]}
        )
        for axis, values in _varying(sequence).items()
    }
    return _padded(sequence, levels, lambda axis, size: next(level for level in levels[axis] if level >= size))


def fine_buckets(sequence: tuple[Feed, ...], steps: int = FINE_STEPS) -> tuple[Feed, ...]:
    """The padded shape of each run with fine buckets: every dimension that varies rounded up to a multiple of
    `steps` times its sizes' common step (sizes in multiples of 32: to a multiple of 128, at most 96 more). ()
    when that would not reduce the number of distinct shapes."""
    grain = {axis: math.gcd(*values) * steps for axis, values in _varying(sequence).items()}
    return _padded(sequence, grain, lambda axis, size: -(-size // grain[axis]) * grain[axis])


def _varying(sequence: tuple[Feed, ...]) -> dict[tuple[str, int], list[int]]:
    """Each dimension (input name, position) that takes more than one size across the runs: its sizes, sorted."""
    axes = sorted({(name, i) for feed in sequence for name, dims in feed.items() for i in range(len(dims))})
    varying: dict[tuple[str, int], list[int]] = {}
    for name, position in axes:
        values = sorted({feed[name][position] for feed in sequence if name in feed})
        if len(values) > 1:
            varying[(name, position)] = values
    return varying


def _padded(
    sequence: tuple[Feed, ...], axes: Collection[tuple[str, int]], up: Callable[[tuple[str, int], int], int]
) -> tuple[Feed, ...]:
    """Each run with the sizes of `axes` rounded `up`; () when that would not reduce the number of distinct shapes."""
    if not axes:
        return ()
    padded = []
    for feed in sequence:
        out: Feed = {}
        for name, dims in feed.items():
            out[name] = tuple(up((name, i), size) if (name, i) in axes else size for i, size in enumerate(dims))
        padded.append(out)
    if distinct(tuple(padded)) >= distinct(sequence):
        return ()
    return tuple(padded)


def input_kind(inputs: tuple[TensorSpec, ...], outputs: tuple[TensorSpec, ...], sequence: tuple[Feed, ...]) -> str:
    """What the generated inputs should look like: "line" for an image input read as a text line (a sequence
    comes out, or every run is at most LINE_MAX_HEIGHT pixels high), "page" for an image input whose output is
    a map of the same kind (a text detector), else "random"."""
    images = [spec for spec in inputs if _layout(spec) is not None and spec.type in FLOAT_TYPES]
    if len(images) != len(inputs) or not images:
        return "random"
    heights = [feed[spec.name][_layout(spec)[0]] for feed in sequence for spec in images if spec.name in feed]  # type: ignore[index]
    if any(len(out.shape) == 3 and out.dynamic() for out in outputs) or (heights and max(heights) <= LINE_MAX_HEIGHT):
        return "line"
    if any(len(out.shape) == 4 and len(out.dynamic()) >= 2 for out in outputs):
        return "page"
    return "random"


def one_shape(sequence: tuple[Feed, ...]) -> Feed | None:
    """The one shape every run fits in when zero-padded: per input and dimension, the largest size of the
    sequence. None when the sequence has one shape already."""
    if distinct(sequence) <= 1:
        return None
    largest: dict[str, list[int]] = {}
    for feed in sequence:
        for name, dims in feed.items():
            known = largest.setdefault(name, list(dims))
            largest[name] = [max(a, b) for a, b in zip(known, dims, strict=True)]
    return {name: tuple(dims) for name, dims in largest.items()}


def changes(run_shapes: tuple[Feed, ...]) -> int:
    """How many times a pass over these run shapes changes the input shape (the first run counts as one)."""
    keys = [tuple(sorted(feed.items())) for feed in run_shapes]
    return sum(1 for i, key in enumerate(keys) if i == 0 or key != keys[i - 1])


def bucket_levels(padded: tuple[Feed, ...]) -> dict[str, list[list[int]]]:
    """input name -> per dimension, the sizes its runs are padded to (one size: not padded)."""
    levels: dict[str, list[list[int]]] = {}
    for feed in padded:
        for name, dims in feed.items():
            per_dim = levels.setdefault(name, [[] for _ in dims])
            for i, size in enumerate(dims):
                if size not in per_dim[i]:
                    per_dim[i].append(size)
    return {name: [sorted(values) for values in per_dim] for name, per_dim in levels.items()}


def elements(feed: Feed) -> int:
    """Input elements of one run (what the work grows with)."""
    return sum(math.prod(dims) for dims in feed.values())


def distinct(sequence: tuple[Feed, ...]) -> int:
    return len({tuple(sorted(feed.items())) for feed in sequence})
