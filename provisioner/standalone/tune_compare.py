"""Shared by the tune child: does a variant give the reference's answers? numpy only.

The reference is the CPU session on the same, unpadded inputs. Each variant's outputs are compared with it one
input at a time (the reference outputs wait on disk, one .npy per run and output, read memory-mapped), in the
region that maps back to the input: a padded variant's outputs are cropped to the reference's shape (padding
goes at the end of each dimension, so the input's own part comes first). Only a summary per output is kept.

What counts as a difference depends on what the output is (`kind_of`, from the reference's values), and the
limits are set so that TF32 noise passes and padding does not (measured on this project's text pages with
PP-OCRv4's models, TF32 emulated on the CPU by rounding every convolution's inputs and weights to a 10-bit
mantissa; docs/tune.md has the table):

- "probability map" (values in [0, 1], two spatial dimensions over 1, e.g. a text detector's [N, 1, H, W]): an
  element differs when it moves by more than 0.2 (probabilities are bounded: an absolute step; TF32 moves the
  steep edges of a text region by up to ~0.3, in at most 0.012 % of the elements); the map agrees when at most
  0.05 % of its elements differ and, per input, its text regions (connected groups of elements above 0.3, a DB
  detector's threshold: RapidOCR's Det.thresh) number the reference's within max(2, 10 %). Padding a page by
  32 pixels moved 0.03-0.9 % of the elements past 0.2, or turned 35 regions into 47;
- "class probabilities" (values in [0, 1] summing to 1 along the last axis, e.g. a recogniser's [N, T, C] or a
  classifier's [N, 2]): elements as above, and no position whose class the reference was sure of (its top class
  ahead of the runner-up by more than 0.3) may change class (at most 0.1 % of them): TF32 changed none,
  padding a text line by 32 pixels changed the text of 2 of 5 lines;
- "values" (anything else: logits, features, boxes): an element differs when |a - b| > 0.03 x the reference's
  root mean square + 0.03 x |b| (TF32 keeps about three significant digits; the scale makes it unitless); at
  most 0.1 % may (TF32: up to 0.12 % past 0.01, none past 0.03; padding: 25-73 %).
"""

from __future__ import annotations

import math
import os

PROBABILITY_STEP = 0.2  # an element of a probability output differs when it moves further than this
PROBABILITY_SHARE = 0.0005  # ... and at most this share of them may
MAP_THRESHOLD = 0.3  # a DB text detector's binarisation (RapidOCR 1.4.4 config.yaml, Det.thresh)
REGION_SLACK = (2, 0.10)  # per input, the regions may differ by max(2, 10 % of the reference's)
SURE_MARGIN = 0.3  # a class decision counts when the top class leads the runner-up by more than this
FLIP_SHARE = 0.001  # at most this share of those decisions may change
VALUES_TOL = 0.03  # values: |diff| > VALUES_TOL x rms(reference) + VALUES_TOL x |reference| differs
VALUES_SHARE = 0.001
REGIONS_KEPT = 64  # per output, the region counts of the first inputs


def kind_of(np, reference) -> str:  # type: ignore[no-untyped-def]
    """probability map | class probabilities | values, from the reference's own values."""
    if reference.size == 0 or reference.dtype.kind != "f":
        return "values"
    low, high = float(reference.min()), float(reference.max())
    if low < -1e-6 or high > 1.0 + 1e-6:
        return "values"
    shape = reference.shape
    if len(shape) >= 2 and shape[-1] > 1:
        sums = reference.sum(axis=-1, dtype="float64")
        if float(np.abs(sums - 1.0).max()) < 1e-3:
            return "class probabilities"
    if len(shape) >= 3 and shape[-1] > 1 and shape[-2] > 1:
        return "probability map"
    return "values"


def tolerance_text(kind: str) -> str:
    """The rule an output of this kind is held to, in words (the report carries it)."""
    if kind == "values":
        return f"|diff| > {VALUES_TOL} x rms(reference) + {VALUES_TOL} x |reference| in at most {VALUES_SHARE:.1%}"
    rule = f"|diff| > {PROBABILITY_STEP} in at most {PROBABILITY_SHARE:.2%}"
    if kind == "probability map":
        low, share = REGION_SLACK
        return f"{rule}; regions above {MAP_THRESHOLD} within max({low}, {share:.0%}) per input"
    return f"{rule}; classes the reference is sure of (lead > {SURE_MARGIN}) changed in at most {FLIP_SHARE:.1%}"


def crop(output, shape):  # type: ignore[no-untyped-def]
    """The part of a (padded) output that maps back to the input: its first `shape` elements per dimension.
    None when the output is smaller than the reference somewhere (nothing to crop to)."""
    if len(output.shape) != len(shape) or any(o < s for o, s in zip(output.shape, shape)):  # noqa: B905 - 3.8
        return None
    if tuple(output.shape) == tuple(shape):
        return output
    return output[tuple(slice(0, s) for s in shape)]


def count_regions(np, mask) -> int:  # type: ignore[no-untyped-def]
    """Connected groups (8-neighbours) of True in a 2-D mask: runs per row, joined where they touch the runs of
    the row above (a union-find over runs; numpy finds the runs)."""
    if mask.ndim != 2 or not mask.any():
        return 0
    padded = np.zeros((mask.shape[0], mask.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    edges = np.diff(padded, axis=1)
    rows_s, starts = np.nonzero(edges == 1)
    rows_e, ends = np.nonzero(edges == -1)  # end: one past the last True
    parent = list(range(len(starts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_row: dict = {}
    for index, row in enumerate(rows_s.tolist()):
        by_row.setdefault(row, []).append(index)
    starts_l, ends_l = starts.tolist(), ends.tolist()
    for row, runs in by_row.items():
        above = by_row.get(row - 1)
        if not above:
            continue
        j = 0
        for i in runs:
            while j < len(above) and ends_l[above[j]] < starts_l[i]:  # ends before i starts (8-neighbour: <)
                j += 1
            k = j
            while k < len(above) and starts_l[above[k]] <= ends_l[i]:  # starts before i ends (+1 diagonal)
                a, b = root(i), root(above[k])
                if a != b:
                    parent[a] = b
                k += 1
    return len({root(i) for i in range(len(parent))})


class OutputCheck:
    """The running summary of one output over the inputs compared."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.kind: str | None = None
        self.elements = 0
        self.past = 0
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.sum_abs = 0.0
        self.flips = 0  # probability map: across the threshold; class probabilities: sure positions changed
        self.sure = 0
        self.regions_ref: list = []
        self.regions_out: list = []
        self.worst_input: int | None = None
        self.worst_share = 0.0
        self.not_comparable: str | None = None

    def add(self, np, index: int, reference, output) -> None:  # type: ignore[no-untyped-def]
        if self.kind is None:
            self.kind = kind_of(np, reference)
        part = crop(output, reference.shape)
        if part is None:
            shapes = f"{list(output.shape)} is smaller than the reference's {list(reference.shape)}"
            self.not_comparable = f"run {index + 1}: output shape {shapes}"
            return
        ref = np.asarray(reference, dtype="float64")
        got = np.asarray(part, dtype="float64")
        diff = np.abs(got - ref)
        if self.kind == "values":
            rms = math.sqrt(float(np.mean(ref * ref))) if ref.size else 0.0
            past = diff > VALUES_TOL * rms + VALUES_TOL * np.abs(ref)
        else:
            past = diff > PROBABILITY_STEP
        count = int(past.sum())
        self.elements += int(ref.size)
        self.past += count
        if ref.size:
            self.max_abs = max(self.max_abs, float(diff.max()))
            scale = float(np.abs(ref).max()) or 1.0
            self.max_rel = max(self.max_rel, float(diff.max()) / scale)
            self.sum_abs += float(diff.sum())
            share = count / float(ref.size)
            if share > self.worst_share or self.worst_input is None:
                self.worst_share, self.worst_input = share, index
        if self.kind == "probability map":
            above_ref, above_got = ref > MAP_THRESHOLD, got > MAP_THRESHOLD
            self.flips += int((above_ref != above_got).sum())
            if len(self.regions_ref) < REGIONS_KEPT:
                planes = above_ref.reshape((-1,) + ref.shape[-2:])
                planes_got = above_got.reshape((-1,) + ref.shape[-2:])
                self.regions_ref.append(sum(count_regions(np, p) for p in planes))
                self.regions_out.append(sum(count_regions(np, p) for p in planes_got))
        elif self.kind == "class probabilities" and ref.shape[-1] > 1:
            top2 = np.sort(ref, axis=-1)[..., -2:]
            sure = (top2[..., 1] - top2[..., 0]) > SURE_MARGIN
            changed = np.argmax(ref, axis=-1) != np.argmax(got, axis=-1)
            self.sure += int(sure.sum())
            self.flips += int((changed & sure).sum())

    def summary(self) -> dict:
        share = self.past / float(self.elements) if self.elements else 0.0
        found = {
            "output": self.name,
            "kind": self.kind,
            "tolerance": tolerance_text(self.kind or "values"),
            "elements": self.elements,
            "past_tolerance": self.past,
            "share_past": round(share, 8),
            "max_abs": round(self.max_abs, 6),
            "max_rel": round(self.max_rel, 6),
            "mean_abs": round(self.sum_abs / self.elements, 8) if self.elements else 0.0,
            "worst_run": None if self.worst_input is None else self.worst_input + 1,
            "worst_share": round(self.worst_share, 8),
            "flips": self.flips,
            "sure": self.sure,
            "regions_reference": self.regions_ref,
            "regions": self.regions_out,
            "not_comparable": self.not_comparable,
        }
        found["agrees"] = self.agrees(share)
        return found

    def agrees(self, share: float) -> bool:
        if self.not_comparable:
            return False
        if share > (VALUES_SHARE if self.kind == "values" else PROBABILITY_SHARE):
            return False
        if self.kind == "class probabilities" and self.sure:
            return self.flips / float(self.sure) <= FLIP_SHARE
        if self.kind == "probability map":
            low, slack = REGION_SLACK
            pairs = zip(self.regions_ref, self.regions_out)  # noqa: B905 - Python 3.8
            return all(abs(a - b) <= max(low, slack * a) for a, b in pairs)
        return True


class Comparison:
    """A variant's outputs against the reference, one input at a time."""

    def __init__(self, names: list) -> None:
        self.checks = [OutputCheck(name) for name in names]
        self.inputs = 0

    def add(self, np, index: int, references: list, outputs: list) -> None:  # type: ignore[no-untyped-def]
        for check, reference, output in zip(self.checks, references, outputs):  # noqa: B905 - Python 3.8
            check.add(np, index, reference, output)
        self.inputs += 1

    def summary(self, status: str = "compared", reason: str | None = None) -> dict:
        outputs = [check.summary() for check in self.checks]
        agrees = status == "compared" and bool(outputs) and all(o["agrees"] for o in outputs)
        return {"status": status, "reason": reason, "inputs": self.inputs, "agrees": agrees, "outputs": outputs}


# ---------------------------------------------------------------- the reference on disk


def reference_path(folder: str, index: int, position: int) -> str:
    return os.path.join(folder, f"ref-{index:05d}-{position}.npy")


def save_reference(np, folder: str, index: int, outputs: list) -> None:  # type: ignore[no-untyped-def]
    for position, output in enumerate(outputs):
        path = reference_path(folder, index, position)
        partial = path + ".part.npy"
        np.save(partial, np.ascontiguousarray(output))
        os.replace(partial, path)


def load_reference(np, folder: str, index: int, count: int) -> list | None:  # type: ignore[no-untyped-def]
    """The reference outputs of run `index`, memory-mapped; None when the reference lacks them."""
    found = []
    for position in range(count):
        path = reference_path(folder, index, position)
        if not os.path.isfile(path):
            return None
        found.append(np.load(path, mmap_mode="r", allow_pickle=False))
    return found
