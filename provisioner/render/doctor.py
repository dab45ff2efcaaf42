"""doctor's findings rendered: the headline, each finding with its evidence and fix; or the JSON of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from provisioner.render.style import style

if TYPE_CHECKING:
    from provisioner.facts import HostFacts
    from provisioner.findings import Finding
    from provisioner.verify.report import VerifyReport

EVIDENCE_SHOWN = 6  # lines of evidence per finding in the text (all of them are in --json)


@dataclass(frozen=True)
class PlanSummary:
    """What `make_plan` said for the host, in one line (ok: a plan; False: none fits; None: not planned)."""

    ok: bool | None
    text: str
    build: str | None = None


@dataclass(frozen=True)
class DoctorResult:
    """`ortprov doctor`: the findings, and the evidence gathered (none for --log: the log is the evidence)."""

    findings: tuple[Finding, ...]
    healthy: bool
    verify: VerifyReport | None = None
    plan: PlanSummary | None = None
    host: HostFacts | None = None
    log_note: str | None = None  # --log: the log was cut (read its first and last part only)
    log_read: tuple[str, ...] = ()  # --log: the facts read from it, one a line (shown when nothing is recognised)
    paste_next: tuple[str, ...] = ()  # --log: what to paste next when nothing is recognised

    @property
    def from_log(self) -> bool:
        return self.verify is None

    @property
    def exit_code(self) -> int:
        return 0 if self.healthy else 1

    def text(self) -> str:
        lines = []
        if self.verify is not None and self.plan is not None:
            from provisioner.render.verify import verdict_line

            lines += [f"verify: {verdict_line(self.verify)}", f"plan:   {self.plan.text}", ""]
        if self.log_note:
            lines += [style(f"note: {self.log_note}", "yellow"), ""]
        lines += render_findings(self.findings, self.healthy, from_log=self.from_log)
        if self.from_log and not self.findings:
            lines += unrecognised(self.log_read, self.paste_next)
        return "\n".join(lines)

    def data(self) -> Any:
        if self.from_log:
            data: dict[str, Any] = {
                "healthy": self.healthy,
                "recognised": bool(self.findings),
                "findings": self.findings,
            }
            if not self.findings:
                data |= {"read": list(self.log_read), "paste_next": list(self.paste_next)}
            return {**data, "log_note": self.log_note} if self.log_note else data
        return {
            "healthy": self.healthy,
            "findings": self.findings,
            "plan": self.plan,
            "verify": self.verify,
            "host": self.host,
        }


def unrecognised(read: tuple[str, ...], paste: tuple[str, ...]) -> list[str]:
    """What the log showed and what to paste next, under "no known failure recognised"."""
    lines = ["", "read from the log:"]
    lines += [f"  - {fact}" for fact in read] or ["  nothing about ONNX Runtime, CUDA, cuDNN or the GPU"]
    lines += ["", "paste next (the output of; the first one decides, the others help):"]
    lines += [f"  - {step}" for step in paste]
    return lines


def render_findings(findings: tuple[Finding, ...], healthy: bool, from_log: bool) -> list[str]:
    """The headline, then each finding: code, severity, title, evidence, fix."""
    if not findings:
        if from_log:
            return ["no known failure recognised in this log"]
        return [style("healthy", "green") + ": the GPU session works and nothing needs fixing"]
    blocking = sum(1 for f in findings if f.blocking)
    headline = (
        style(f"{blocking} problem(s) keep the GPU from being used", "red")
        if not healthy
        else style("healthy", "green") + f", with {len(findings)} note(s)"
    )
    lines = [headline]
    colours = {"error": "red", "warning": "yellow", "info": "dim"}
    for number, finding in enumerate(findings, 1):
        lines.append("")
        lines.append(
            f"{number}. [{finding.code}] " + style(finding.severity, colours[finding.severity]) + f": {finding.title}"
        )
        used = tuple(dict.fromkeys(finding.evidence))
        lines += [f"   evidence: {line}" for line in used[:EVIDENCE_SHOWN]]
        if len(used) > EVIDENCE_SHOWN:
            lines.append(f"   evidence: ... {len(used) - EVIDENCE_SHOWN} more line(s) (--json lists them)")
        lines.append(f"   fix: {finding.fix}")
    return lines
