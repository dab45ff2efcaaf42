"""`ortprov detect`: what this host and the target interpreter have, as a summary or as JSON."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING

from provisioner.commands.options import command

if TYPE_CHECKING:
    import typer

    from provisioner.render.detect import DetectResult

DETECT_HELP = """Show the NVIDIA driver, GPUs, platform, Python, onnxruntime, torch and CUDA libraries here.

The target interpreter's packages are read by a child process (never importing onnxruntime or torch).

Examples:

\b
  ortprov detect
  ortprov detect --json > host.json   # for: ortprov plan --host host.json
  ortprov detect --python .venv/bin/python
  ortprov detect --json --label "A100 build box" > a100.json
"""


def register(app: typer.Typer) -> None:
    """Add the command(s) of this module to the app."""
    app.command("detect", help=DETECT_HELP)(command(detect))


def detect(json_output: bool, target: str | None, label: str, probe_timeout: float) -> DetectResult:
    """The facts of this host, and of the target interpreter's packages."""
    from provisioner.errors import OrtprovError
    from provisioner.matrix.load import load_matrix
    from provisioner.planner.process import with_cuda_majors
    from provisioner.probe import detect_host
    from provisioner.render.detect import DetectResult

    facts = detect_host(python=target, timeout=probe_timeout)
    with contextlib.suppress(OrtprovError):  # each library's CUDA major as the planner infers it (a broken
        facts = with_cuda_majors(facts, load_matrix())  # matrix leaves them as probed)
    if label:
        facts = dataclasses.replace(facts, label=label)
    return DetectResult(facts)
