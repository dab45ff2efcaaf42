"""`ortprov verify`: prove a real GPU session in the target interpreter (a child process with a timeout)."""

from __future__ import annotations

import typer

from provisioner.errors import BadInput

VERIFY_HELP = """Prove that onnxruntime really runs on the GPU in the target interpreter.

A child process of the target Python imports onnxruntime, checks that the GPU package is the one imported,
creates a session with the GPU provider first, runs a built-in model that touches cuDNN (Conv), cuBLAS
(MatMul/Gemm) and cuFFT (Rfft), compares it with the CPU, times both, and lists every CUDA library loaded.
It fails if ONNX Runtime silently falls back to the CPU. The verdict is what a plain program gets there: no
onnxruntime.preload_dlls(), no `import torch` (ortprov's loader hook, where apply installed it, does its work).

Examples:

  ortprov verify

  ortprov verify --python .venv/bin/python --json

  ortprov verify --model model.onnx --dim batch=1 --dim seq=128

  ortprov verify --static        # no GPU needed (Docker builds, CI)

  ortprov verify --provider tensorrt --timeout 600

Exit codes: 0 verified, 1 the GPU is not used (or the check failed), 2 bad input.
"""


def register(app: typer.Typer) -> None:
    """Add the command(s) of this module to the app."""
    app.command("verify", help=VERIFY_HELP)(verify)


def parse_dims(values: list[str] | None) -> dict[str, int]:
    """`["batch=1", "seq=128"]` -> {"batch": 1, "seq": 128}; BadInput on anything else."""
    dims: dict[str, int] = {}
    for value in values or []:
        name, sep, size = value.partition("=")
        name = name.strip()
        if not sep or not name or not size.strip().isdigit() or int(size) < 1:
            raise BadInput(f"--dim {value!r} is not NAME=N", hint="size a dynamic input dimension: --dim batch=1")
        dims[name] = int(size)
    return dims


def verify(
    python: str | None = typer.Option(
        None,
        "--python",
        metavar="PATH",
        help="Interpreter (or venv folder) to verify; default: the active env.",
    ),
    model: str | None = typer.Option(
        None, "--model", metavar="FILE", help="Check your .onnx model instead of the built-in one."
    ),
    provider: str = typer.Option("cuda", "--provider", metavar="cuda|tensorrt", help="GPU provider to prove."),
    static: bool = typer.Option(
        False, "--static", help="Without a GPU: check that every library the provider needs resolves."
    ),
    dim: list[str] | None = typer.Option(  # noqa: B008 - typer's declaration style
        None, "--dim", metavar="NAME=N", help="Size of a dynamic input dimension of --model (repeatable)."
    ),
    timeout: float = typer.Option(120.0, "--timeout", metavar="S", help="Seconds before the check is abandoned."),
    preload: bool = typer.Option(
        False,
        "--preload",
        help="Your code calls onnxruntime.preload_dlls() before creating sessions: verify does the same. "
        "Without it, verify judges what a plain program gets.",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Prove that onnxruntime really runs on the GPU in the target interpreter."""
    from provisioner.probe.target import inspect
    from provisioner.verify import run_verify
    from provisioner.verify.render import render_report

    if provider not in ("cuda", "tensorrt"):
        raise BadInput(f"--provider {provider!r} is not cuda or tensorrt", hint="use --provider cuda")
    if timeout <= 0:
        raise BadInput(f"--timeout must be positive, got {timeout}")
    if model is not None and static:
        raise BadInput("--model and --static do not go together", hint="--static runs no model")
    dims = parse_dims(dim)
    if dims and model is None:
        raise BadInput("--dim sizes the inputs of --model", hint="add --model FILE")
    target = inspect(python).interpreter
    report = run_verify(
        target, provider=provider, model=model, static=static, dims=dims, timeout=timeout, preload=preload
    )
    if json_output:
        typer.echo(report.to_json())
    else:
        typer.echo(render_report(report))
        if not report.ok:
            from provisioner.doctor import diagnose
            from provisioner.matrix.load import load_matrix

            findings = [f for f in diagnose(None, report, matrix=load_matrix()) if f.blocking]
            if findings:
                typer.echo("")
            for finding in findings:
                typer.echo(f"  [{finding.code}] {finding.title}")
                typer.echo(f"      fix: {finding.fix}")
    if not report.ok:
        raise typer.Exit(1)
