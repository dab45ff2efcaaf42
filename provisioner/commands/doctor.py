"""`ortprov doctor`: detect, plan and verify, then list what stops the GPU from being used, with fixes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from provisioner.errors import BadInput, OrtprovError

if TYPE_CHECKING:
    from provisioner.findings import Finding

DOCTOR_HELP = """Why is my GPU not used? Detect the host, plan, verify a real session, and list the findings.

Each finding has a stable code (cudnn-missing, cpu-package-only, driver-too-old, ...), the evidence, and the
exact fix: a command, or the ortprov command that does it. Most important first.

Examples:

  ortprov doctor

  ortprov doctor --python .venv/bin/python --json

  ortprov doctor --log error.txt     # explain a pasted log; touches nothing

  python app.py 2>&1 | ortprov doctor --log -

Exit codes: 0 healthy, 1 a finding blocks the GPU, 2 bad input.
"""


def register(app: typer.Typer) -> None:
    """Add the command(s) of this module to the app."""
    app.command("doctor", help=DOCTOR_HELP)(doctor)


def read_log(source: str) -> str:
    """The text of --log FILE, or stdin for '-'; BadInput when missing, unreadable or empty."""
    if source == "-":
        text = sys.stdin.read()
    else:
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise BadInput(f"log file {source!r} does not exist", hint="pass a file, or - to read stdin") from None
        except OSError as exc:
            raise BadInput(f"cannot read log file {source!r}: {exc.strerror}") from None
    if not text.strip():
        raise BadInput(
            f"the log {'on stdin' if source == '-' else repr(source)} is empty",
            hint="paste the error output, e.g. `python app.py 2>&1 | ortprov doctor --log -`",
        )
    return text


def doctor(
    python: str | None = typer.Option(
        None,
        "--python",
        metavar="PATH",
        help="Interpreter (or venv folder) to examine; default: the active env.",
    ),
    log: str | None = typer.Option(
        None, "--log", metavar="FILE|-", help="Explain this error log only (- reads stdin); touches nothing."
    ),
    provider: str = typer.Option("cuda", "--provider", metavar="cuda|tensorrt", help="GPU provider to verify."),
    timeout: float = typer.Option(120.0, "--timeout", metavar="S", help="Seconds allowed for the GPU check."),
    json_output: bool = typer.Option(False, "--json", help="Print findings (and the evidence gathered) as JSON."),
    preload: bool = typer.Option(
        False, "--preload", help="Your code calls onnxruntime.preload_dlls() before creating sessions."
    ),
) -> None:
    """Why is my GPU not used? Detect, plan, verify, and list findings with exact fixes."""
    from provisioner.doctor import diagnose, is_healthy
    from provisioner.logpatterns import analyze_log
    from provisioner.output import emit_json

    if provider not in ("cuda", "tensorrt"):
        raise BadInput(f"--provider {provider!r} is not cuda or tensorrt")
    if timeout <= 0:
        raise BadInput(f"--timeout must be positive, got {timeout}")
    if log is not None:
        findings = analyze_log(read_log(log), python=python or "python", matrix=_matrix())
        if json_output:
            emit_json({"healthy": is_healthy(findings), "recognised": bool(findings), "findings": findings})
        else:
            _print_findings(findings, from_log=True)
        if not is_healthy(findings):
            raise typer.Exit(1)
        return

    from provisioner.probe import detect_host
    from provisioner.probe.target import find_interpreter
    from provisioner.verify import run_verify

    facts = detect_host(python=python, timeout=min(timeout, 60.0))
    plan_outcome, plan_note = _plan(facts)
    target = facts.python.executable if facts.python else find_interpreter(python)
    report = run_verify(target, provider=provider, timeout=timeout, preload=preload)
    findings = diagnose(facts, report, None, plan_outcome, matrix=_matrix())
    if json_output:
        emit_json(
            {
                "healthy": is_healthy(findings),
                "findings": findings,
                "plan": _plan_summary(plan_outcome, plan_note),
                "verify": report,
                "host": facts,
            }
        )
    else:
        from provisioner.verify.render import verdict_line

        typer.echo(f"verify: {verdict_line(report)}")
        summary = _plan_summary(plan_outcome, plan_note)
        typer.echo(f"plan:   {summary['text']}")
        typer.echo("")
        _print_findings(findings, from_log=False)
    if not is_healthy(findings):
        raise typer.Exit(1)


def _matrix() -> Any:
    """The matrix (libraries and CUDA error numbers doctor checks against); None if it cannot be loaded."""
    from provisioner.matrix.load import load_matrix

    try:
        return load_matrix()
    except OrtprovError:
        return None


def _plan(facts: Any) -> tuple[Any, str | None]:
    """make_plan for this host: a Plan, a NoCompatiblePlan, or (None, why it was skipped)."""
    try:
        from provisioner.matrix.load import load_matrix
        from provisioner.plan import Request
        from provisioner.planner import make_plan
    except ImportError as exc:  # the planner is optional for doctor
        return None, f"planner not available ({exc})"
    from provisioner.errors import NoCompatiblePlan

    try:
        return make_plan([facts], load_matrix(), Request()), None
    except NoCompatiblePlan as exc:
        return exc, None
    except OrtprovError as exc:
        return None, f"not planned: {exc.message.splitlines()[0]}"
    except Exception as exc:  # noqa: BLE001 - a planner bug must not hide the verify findings
        return None, f"not planned: the planner failed ({type(exc).__name__}: {exc})"


def _plan_summary(outcome: Any, note: str | None) -> dict[str, Any]:
    from provisioner.errors import NoCompatiblePlan
    from provisioner.plan import Plan

    if isinstance(outcome, Plan):
        label = f"{outcome.package} {outcome.ort_version} (CUDA {outcome.cuda_version})"
        return {"ok": True, "text": f"{label} fits this host (`ortprov plan` for the steps)", "build": label}
    if isinstance(outcome, NoCompatiblePlan):
        return {"ok": False, "text": f"no compatible build: {outcome.message}", "build": None}
    return {"ok": None, "text": note or "not planned", "build": None}


def _print_findings(findings: list[Finding], from_log: bool) -> None:
    from provisioner.doctor import is_healthy
    from provisioner.output import style

    if not findings:
        typer.echo(
            "no known failure recognised in this log"
            if from_log
            else style("healthy", "green") + ": the GPU session works and nothing needs fixing"
        )
        return
    blocking = sum(1 for f in findings if f.blocking)
    headline = (
        style(f"{blocking} problem(s) keep the GPU from being used", "red")
        if not is_healthy(findings)
        else style("healthy", "green") + f", with {len(findings)} note(s)"
    )
    typer.echo(headline)
    colours = {"error": "red", "warning": "yellow", "info": "dim"}
    for number, finding in enumerate(findings, 1):
        typer.echo("")
        typer.echo(
            f"{number}. [{finding.code}] " + style(finding.severity, colours[finding.severity]) + f": {finding.title}"
        )
        for line in finding.evidence[:4]:
            typer.echo(f"   evidence: {line}")
        typer.echo(f"   fix: {finding.fix}")
