"""`ortprov tune MODEL`: measure a model on the CPU and on CUDA with provider-option variants, say why, and
give the options that win."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from provisioner.commands.options import command
from provisioner.errors import BadInput

if TYPE_CHECKING:
    import typer

    from provisioner.render.tune import TuneResult
    from provisioner.tune.report import Feed

TUNE_HELP = """Measure MODEL on the CPU and on CUDA with provider-option variants; say why the GPU wins or not.

In a child process of the target Python, each variant in a fresh one: session creation, the first run of every new
input shape, steady runs (a median and a spread), and the cost of a change between two shapes seen before. The
variants, in this order: the CPU, CUDA with onnxruntime's defaults (EXHAUSTIVE), HEURISTIC, every input padded to
one shape (EXHAUSTIVE and HEURISTIC, each also with a CUDA graph) and the CPU on that padded workload, DEFAULT, the
options RapidOCR 1.4.4 hard-codes, then one change at a time on the best algorithm search: inputs padded to shape
buckets, I/O binding, prefer_nhwc, cudnn_conv_use_max_workspace, use_tf32, arena_extend_strategy, the graph
optimisation level, CUDA graphs (one fixed shape); last, the changes that helped, together. A variant far slower
than the best so far is stopped early (cut-short, its partial numbers kept). The default shapes follow the model's
dynamic axes (images: 24 sizes, multiples of 32 between 480 and 1600). Then the verdict, the reasons from the
measurements (the cost of a change of shape, per-shape search, nodes on the CPU, copies, a model too small) and the
winning options for Python, RapidOCR and JSON (padding to one shape, when it wins, is your pipeline's part).

Examples:

\b
  ortprov tune det.onnx
  ortprov tune det.onnx --python .venv/bin/python --budget 300
  ortprov tune rec.onnx --shape x=1x3x48x320 --shape x=1x3x48x640
  ortprov tune model.onnx --shapes shapes.json --json

Exit codes: 0 measured, 1 nothing could be measured, 2 bad input.
"""


def register(app: typer.Typer) -> None:
    """Add the command(s) of this module to the app."""
    app.command("tune", help=TUNE_HELP)(command(tune))


def tune(
    model_file: str, target: str | None, shape: list[str] | None, shapes: str | None, budget: float, json_output: bool
) -> TuneResult:
    """Measure MODEL on the CPU and on CUDA with provider-option variants; say why the GPU wins or not."""
    from provisioner.probe.target import find_interpreter
    from provisioner.render.tune import TuneResult
    from provisioner.tune.analysis import analyse
    from provisioner.tune.runner import run_tune

    sequence, source = _sequence(shape, shapes)
    report = run_tune(
        find_interpreter(target), model_file, sequence=sequence, sequence_source=source, budget_s=budget,
        progress=_progress,
    )  # fmt: skip
    return TuneResult(report, analyse(report))


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


def _progress(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
