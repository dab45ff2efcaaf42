"""A variant's outputs against the reference's, in words (pure).

The tune child compares (standalone/tune_compare.py holds the rules and their reasons); this says what it found:
for a probability map, the share of elements past the step and the text regions that changed; for class
probabilities, the decisions the reference was sure of that changed; for values, the share past tolerance and the
largest difference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from provisioner.tune.report import Check, OutputAgreement


def _regions(out: OutputAgreement) -> str:
    """The input whose text regions changed most, as `35 -> 47 on run 4` ('' when none changed)."""
    pairs = list(zip(out.regions_reference, out.regions, strict=False))
    changed = [(abs(a - b), i, a, b) for i, (a, b) in enumerate(pairs) if a != b]
    if not changed:
        return ""
    _, index, a, b = max(changed)
    others = f", {len(changed) - 1} more inputs changed" if len(changed) > 1 else ""
    return f"text regions {a} -> {b} on run {index + 1}{others}"


def describe_output(out: OutputAgreement) -> str:
    """One output's difference from the reference, measured."""
    if out.not_comparable:
        return f"{out.output}: not comparable ({out.not_comparable})"
    parts = [f"{out.share_past:.3%} of {out.output} past tolerance", f"max |diff| {out.max_abs:.3g}"]
    if out.kind == "probability map":
        regions = _regions(out)
        parts.append(regions or "text regions unchanged")
    elif out.kind == "class probabilities" and out.sure:
        parts.append(f"{out.flips} of {out.sure} sure decisions changed class")
    elif out.kind == "values" and out.max_rel:
        parts.append(f"{out.max_rel:.2%} of the largest value")
    return ", ".join(parts)


def describe_change(check: Check) -> str:
    """Why a variant's outputs count as changed (or, when they agree, how close they are)."""
    if check.status in ("reference",):
        return "the reference"
    if not check.outputs:
        return check.reason or check.status
    chosen = [o for o in check.outputs if not o.agrees] or list(check.outputs)
    text = "; ".join(describe_output(o) for o in chosen)
    if check.status == "partial":
        text += f" ({check.inputs} inputs compared: {check.reason})"
    return text


def short(check: Check | None, agrees: bool | None) -> str:
    """The table's cell: agrees, CHANGES, or why not checked."""
    if check is None or agrees is None:
        return "-" if check is None else "not checked"
    if check.status == "reference":
        return "reference"
    if agrees:
        return "agrees"
    worst = max(check.outputs, key=lambda o: o.share_past) if check.outputs else None
    return "CHANGES" + (f" {worst.share_past:.2%}" if worst is not None else "")
