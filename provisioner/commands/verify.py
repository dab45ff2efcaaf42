"""`ortprov verify`: prove a real GPU session in the target interpreter (a child process with a timeout)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from provisioner.commands.options import command
from provisioner.errors import BadInput

if TYPE_CHECKING:
    import typer

    from provisioner.render.verify import VerifyResult

VERIFY_HELP = """Prove that onnxruntime really runs on the GPU in the target interpreter.

A child process of the target Python imports onnxruntime, checks that the GPU package is the one imported,
creates a session with the GPU provider first, runs a built-in model that touches cuDNN (Conv), cuBLAS
(MatMul/Gemm) and cuFFT (Rfft), compares it with the CPU, times both, and lists every CUDA library loaded.
It fails if ONNX Runtime silently falls back to the CPU. The verdict is what a plain program gets there: no
onnxruntime.preload_dlls(), no `import torch` (ortprov's loader hook, where apply installed it, does its work).

Examples:

\b
  ortprov verify
  ortprov verify --python .venv/bin/python --json
  ortprov verify --model model.onnx --dim batch=1 --dim seq=128
  ortprov verify --static        # no GPU needed (Docker builds, CI)
  ortprov verify --provider tensorrt --timeout 600

Exit codes: 0 verified, 1 the GPU is not used (or the check failed), 2 bad input.
"""


def register(app: typer.Typer) -> None:
    """Add the command(s) of this module to the app."""
    app.command("verify", help=VERIFY_HELP)(command(verify))


def verify(
    target: str | None,
    model: str | None,
    provider: str | None,
    tensorrt_provider: bool,
    static: bool,
    dim: dict[str, int],
    timeout: float,
    preload: bool,
    json_output: bool,
) -> VerifyResult:
    """Prove that onnxruntime really runs on the GPU in the target interpreter."""
    from provisioner.probe.target import inspect
    from provisioner.render.verify import VerifyResult
    from provisioner.verify import run_verify

    if model is not None and static:
        raise BadInput("--model and --static do not go together", hint="--static runs no model")
    if tensorrt_provider and provider not in (None, "tensorrt"):
        raise BadInput(
            f"--tensorrt and --provider {provider} ask for different providers",
            hint="--tensorrt is --provider tensorrt: give one of them",
        )
    provider = "tensorrt" if tensorrt_provider else provider or "cuda"
    dims = dim  # checked and sized once, by the --dim declaration (commands/options.py)
    if dims and model is None:
        raise BadInput("--dim sizes the inputs of --model", hint="add --model FILE")
    report = run_verify(
        inspect(target).interpreter, provider=provider, model=model, static=static, dims=dims, timeout=timeout,
        preload=preload,
    )  # fmt: skip
    if report.ok:
        return VerifyResult(report)
    from provisioner.commands.planning import matrix_in_use
    from provisioner.doctor import diagnose
    from provisioner.probe.system import read_environment

    # the child ran with this process's environment: doctor's fix for the same cause (CUDA_FORCE_PTX_JIT set)
    found = diagnose(None, report, matrix=matrix_in_use(), environment=read_environment())
    return VerifyResult(report, tuple(f for f in found if f.blocking))
