"""`ortprov tune MODEL`: measure a model on the CPU and on CUDA with provider-option variants, say why, and
give the options that win."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from provisioner.commands.options import command
from provisioner.errors import BadInput

if TYPE_CHECKING:
    import typer

    from provisioner.render.tune import TuneResult
    from provisioner.tune.report import Feed

TUNE_HELP = """Measure MODEL on the CPU and on CUDA with provider-option variants; say why the GPU wins or not.

Every variant's outputs are checked against the CPU's on the same, unpadded inputs.

In a child process of the target Python, each variant in a fresh one: session creation, the first run of every new
input shape, steady runs (a median and a spread), the cost of a change between two shapes seen before, the memory
it took, and its outputs against the CPU's on the same, unpadded inputs (a variant that changes them beyond
tolerance is never the recommendation unless --allow-output-change). The variants, in this order: the CPU, CUDA
with onnxruntime's defaults (EXHAUSTIVE), HEURISTIC, a CUDA graph per input shape, a session per input shape,
every input padded to one shape (zeros, edge values, a CUDA graph) and the CPU on that padded workload, DEFAULT,
the options RapidOCR 1.4.4 hard-codes, padding under EXHAUSTIVE, sessions sharing one arena, then one change at a
time on the best algorithm search: shape buckets, I/O binding, prefer_nhwc, cudnn_conv_use_max_workspace,
use_tf32, arena_extend_strategy, the graph optimisation level; last, the changes that helped and kept the answers,
together. A variant far slower than the best so far is stopped early (cut-short, its partial numbers kept). The
default inputs look like the model's data when it is recognisable (text pages for an OCR detector, 48-pixel text
lines for a recogniser) at shapes that follow its dynamic axes (images: 24 sizes, multiples of 32 between 480 and
1600); --inputs DIR feeds your own. Then the verdict, the reasons from the measurements and the winning options for
Python (with the helper that keeps one state per shape, when that wins), RapidOCR and JSON.

Examples:

\b
  ortprov tune det.onnx
  ortprov tune det.onnx --python .venv/bin/python --budget 300
  ortprov tune det.onnx --inputs my-pages/ --json
  ortprov tune rec.onnx --shape x=1x3x48x320 --shape x=1x3x48x640
  ortprov tune model.onnx --shapes shapes.json --allow-output-change

Exit codes: 0 measured, 1 nothing could be measured, 2 bad input (no onnxruntime in the target, a model it cannot
read, a --python that is not a working Python).
"""


def register(app: typer.Typer) -> None:
    """Add the command(s) of this module to the app."""
    app.command("tune", help=TUNE_HELP)(command(tune))


def tune(
    model_file: str,
    target: str | None,
    shape: list[str] | None,
    shapes: str | None,
    inputs_dir: str | None,
    budget: float,
    allow_output_change: bool,
    json_output: bool,
) -> TuneResult:
    """Measure MODEL on the CPU and on CUDA with provider-option variants; say why the GPU wins or not."""
    from provisioner.probe import target as probe
    from provisioner.render.tune import TuneResult
    from provisioner.tune.analysis import analyse
    from provisioner.tune.measure import run_tune

    sequence, source = _sequence(shape, shapes)
    if inputs_dir is not None:
        if sequence is not None:
            raise BadInput("--inputs and --shape/--shapes do not go together", hint="the files give the shapes")
        _check_folder(inputs_dir)
    python = probe.inspect(target).interpreter  # one sentence and exit 2 when it is not a working Python
    report = run_tune(
        python, model_file, sequence=sequence, sequence_source=source, inputs_dir=inputs_dir, budget_s=budget,
        progress=_progress,
    )  # fmt: skip
    return TuneResult(report, analyse(report, allow_output_change=allow_output_change))


def _sequence(shape: list[str] | None, shapes: str | None) -> tuple[tuple[Feed, ...] | None, str]:
    from provisioner.tune import shapes as shaping

    if shape and shapes:
        raise BadInput("--shape and --shapes do not go together", hint="give the runs one way")
    if shapes:
        from provisioner.userfiles import read_shapes_file

        return read_shapes_file(shapes), f"--shapes {shapes}"
    if shape:
        return shaping.sequence_from_options(shaping.parse_shape_options(shape)), "--shape"
    return None, "derived"


def _check_folder(folder: str) -> None:
    """--inputs names a folder this user can list."""
    shown = repr(folder if len(folder) <= 80 else folder[:60] + "...")
    hint = "pass a folder of .npy/.npz files or images"
    try:
        is_folder = Path(folder).is_dir()
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte
        raise BadInput(f"--inputs {shown} cannot be read: {getattr(exc, 'strerror', None) or exc}", hint=hint) from None
    if not is_folder:
        raise BadInput(f"--inputs {shown} is not a folder", hint=hint)


def _progress(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
