"""`ortprov doctor`: detect, plan and verify, then list what stops the GPU from being used, with fixes."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from provisioner.commands.options import command
from provisioner.errors import BadInput, OrtprovError

if TYPE_CHECKING:
    import typer

    from provisioner.render.doctor import DoctorResult, PlanSummary

DOCTOR_HELP = """Why is my GPU not used? Detect the host, plan, verify a real session, and list the findings.

Each finding has a stable code (cudnn-missing, cpu-package-only, driver-too-old, ...), the evidence, and the
exact fix: a command, or the ortprov command that does it. Most important first.

Examples:

\b
  ortprov doctor
  ortprov doctor --python .venv/bin/python --json
  ortprov doctor --log error.txt     # explain a pasted log; touches nothing
  python app.py 2>&1 | ortprov doctor --log -
  ortprov doctor --model det.onnx    # also: GPU slower than the CPU here?

Exit codes: 0 healthy, 1 a finding blocks the GPU, 2 bad input.
"""


def register(app: typer.Typer) -> None:
    """Add the command(s) of this module to the app."""
    app.command("doctor", help=DOCTOR_HELP)(command(doctor))


def doctor(
    target: str | None,
    log: str | None,
    provider: str | None,
    timeout: float,
    json_output: bool,
    preload: bool,
    tune_model: str | None,
    budget: float,
) -> DoctorResult:
    """Why is my GPU not used? Detect, plan, verify, and list findings with exact fixes."""
    if tune_model is not None and log is not None:
        raise BadInput("--model and --log do not go together", hint="--log explains a log; it runs nothing")
    from provisioner.doctor import diagnose, is_healthy
    from provisioner.render.doctor import DoctorResult

    matrix = _matrix()
    if log is not None:
        from provisioner.doctor.evidence import paste_next
        from provisioner.doctor.rules import read_log_text
        from provisioner.userfiles import read_log

        read = read_log(log)
        found, evidence = read_log_text(read.text, python=target or "python", matrix=matrix)
        return DoctorResult(
            tuple(found),
            is_healthy(found),
            log_note=read.note,
            log_read=evidence.summary(),
            paste_next=paste_next(evidence),
        )

    from provisioner.probe import detect_host
    from provisioner.probe.target import find_interpreter
    from provisioner.verify import run_verify

    facts = detect_host(python=target, timeout=min(timeout, 60.0))
    planned = _as_applied(_plan(facts, matrix), facts)
    python = facts.python.executable if facts.python else find_interpreter(target)
    report = run_verify(python, provider=provider or "cuda", timeout=timeout, preload=preload)
    findings = tuple(diagnose(facts, report, None, planned.for_fixes, matrix=matrix, plan_flags=planned.flags))
    if tune_model is not None:
        from provisioner.findings import merge_findings

        findings = tuple(merge_findings([*_model_findings(python, tune_model, budget), *findings]))
    return DoctorResult(findings, is_healthy(list(findings)), report, planned.summary(python), facts)


def _matrix() -> Any:
    """The matrix (libraries and CUDA error numbers doctor checks against; its notices said); None if it cannot
    be loaded."""
    from provisioner.commands.planning import matrix_in_use

    try:
        return matrix_in_use()
    except OrtprovError:
        return None


@dataclass(frozen=True)
class _Planned:
    """What `ortprov plan` says for the host (`verdict`: a Plan, a NoCompatiblePlan, or None: not planned,
    `note` says why), the plan whose steps the fixes show, and the flags those fixes add beside --python."""

    verdict: Any
    for_fixes: Any = None
    flags: str = ""
    note: str | None = None

    def summary(self, python: str) -> PlanSummary:
        """The plan line of the report: the planner's own verdict, never a second opinion."""
        from provisioner.errors import NoCompatiblePlan
        from provisioner.plan import Plan
        from provisioner.render.doctor import PlanSummary

        if isinstance(self.verdict, Plan):
            label = _label(self.verdict)
            return PlanSummary(True, f"{label} fits this host (`ortprov plan` for the steps)", label)
        if isinstance(self.verdict, NoCompatiblePlan):
            if isinstance(self.for_fixes, Plan):
                return PlanSummary(
                    False,
                    f"{self.verdict.message}; without the driver check: {_label(self.for_fixes)} "
                    f"(`ortprov plan --python {python}{self.flags}`)",
                )
            return PlanSummary(False, f"no compatible build: {self.verdict.message}")
        return PlanSummary(None, self.note or "not planned")


def _label(plan: Any) -> str:
    return f"{plan.package} {plan.ort_version} (CUDA {plan.cuda_version})"


def _plan(facts: Any, matrix: Any) -> _Planned:
    """The planner's verdict for this host, asked as `ortprov plan --python P` asks it (planning.plan_hosts):
    on a host without a driver that is a refusal, and the fixes show the plan `--driver none` makes (with
    that flag, so that they work as written)."""
    from provisioner.commands.options import PlanningOptions
    from provisioner.commands.planning import plan_hosts
    from provisioner.errors import NoCompatiblePlan

    if matrix is None:
        return _Planned(None, note="not planned: the matrix could not be loaded")
    try:
        try:
            verdict = plan_hosts((facts,), matrix, PlanningOptions())
            return _Planned(verdict, verdict)
        except NoCompatiblePlan as refused:
            if refused.rejected or facts.driver.present:
                return _Planned(refused, refused)
            try:
                anyway = plan_hosts((facts,), matrix, PlanningOptions(driver="none"))
            except NoCompatiblePlan:
                return _Planned(refused, refused)
            return _Planned(refused, anyway, " --driver none")
    except OrtprovError as exc:
        return _Planned(None, note=f"not planned: {exc.message.splitlines()[0]}")
    except Exception as exc:  # noqa: BLE001 - a planner bug must not hide the verify findings
        return _Planned(None, note=f"not planned: the planner failed ({type(exc).__name__}: {exc})")


def _as_applied(planned: _Planned, facts: Any) -> _Planned:
    """Where an earlier apply saved its plan in the target (installer/applied.py), the fixes re-apply that plan:
    its pins and its sources (a wheelhouse offline, a mirror), runnable where the user is."""
    from provisioner.installer.applied import applied_path

    prefix = facts.python.prefix if facts.python else ""
    if not prefix or not applied_path(prefix).is_file():
        return planned
    from provisioner.userfiles import read_plan_file

    try:
        saved = read_plan_file(applied_path(prefix))
    except OrtprovError:
        return planned  # not readable as a plan: the fixes plan afresh, as before
    return dataclasses.replace(planned, for_fixes=saved, flags=f" --plan {shlex.quote(str(applied_path(prefix)))}")


def _model_findings(python: str, model: str, budget: float) -> tuple[Any, ...]:
    """`--model`: tune the model (as `ortprov tune`, within --budget) and report what it found."""
    from provisioner.tune.analysis import analyse
    from provisioner.tune.findings import tune_findings
    from provisioner.tune.measure import run_tune
    from provisioner.tune.preflight import TargetCannotRun

    def progress(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    try:
        report = run_tune(python, model, budget_s=budget, progress=progress)
    except TargetCannotRun as exc:  # no onnxruntime: the findings of the checks above say so, with the fix
        progress(f"tune: not run: {exc.message}")
        return ()
    return tuple(tune_findings(analyse(report), model))
