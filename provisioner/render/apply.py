"""apply's and download's words: each event they tell while they work (installer/events.py) as its line of
progress (`event_line`: the command writes it on stderr), and their results: apply's verdict, or a dry run's
listing of the real run's commands (on stdout), and the JSON of both; download's wheelhouse."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from provisioner.installer.events import ApplyResult, Verdict
    from provisioner.installer.flow import Wheelhouse

INDENT = "      "


def shell_line(argv: list[str] | tuple[str, ...], windows: bool | None = None) -> str:
    """A command as this machine's shell runs it (`windows`: None for this machine): POSIX quoting, or
    PowerShell's on Windows (cmd.exe does not take single quotes; PowerShell, Windows' default shell, does)."""
    from provisioner.render.recipe_parts import command_line

    return command_line(list(argv), windows=os.name == "nt" if windows is None else windows)


def event_line(event: Any) -> str:
    """The progress line(s) of one event ("" for none)."""
    from provisioner.installer import events as e

    if isinstance(event, e.Said):
        return f"{event.level}: {event.text}" if event.level else event.text
    if isinstance(event, e.VenvCreated):
        return f"created the venv {event.venv} (Python {event.version})"
    if isinstance(event, e.VenvRemoved):
        return f"removed the venv {event.venv} again: nothing was installed in it"
    if isinstance(event, e.Planned):
        cudnn = f", cuDNN {event.cudnn}" if event.cudnn else ""
        return f"plan: {event.package} {event.version} (CUDA {event.cuda}{cudnn}) -> {event.python}"
    if isinstance(event, e.SnapshotTaken):
        how = "hard links" if event.linked else "copies"
        return f"snapshot: {event.files} files of {event.prefix} ({how}, {event.seconds:.1f}s)"
    if isinstance(event, e.StepStarted):
        return f"{_label(event.number, event.total, event.kind, event.packages)}\n{INDENT}$ {shell_line(event.argv)}"
    if isinstance(event, e.StepSkipped):
        return f"{_label(event.number, event.total, event.kind, event.packages)}: skipped, {event.why}"
    if isinstance(event, e.StepFinished):
        return f"{INDENT}done in {event.seconds:.1f}s"
    if isinstance(event, e.OwnStepDone):
        return f"[{event.number}/{event.total}] {event.summary}: {event.did}"
    if isinstance(event, e.InstallerLine):
        return f"{INDENT}| {event.line}"
    if isinstance(event, e.InstallerTail):
        shown = "\n".join(f"{INDENT}| {line}" for line in event.text.splitlines())
        return f"{event.tool} output (last lines):\n{shown}"
    if isinstance(event, e.AlreadySatisfied):
        return f"already satisfied: {event.python} has everything the plan installs; nothing changed"
    if isinstance(event, e.Committed):
        return committed_line(event.changes, event.own_files)
    if isinstance(event, e.Restoring):
        return f"{event.failure}; restoring the environment from the snapshot ..."
    if isinstance(event, e.SignalsHeld):
        return "(signals received during the restore were held until it finished)"
    if isinstance(event, e.VerifyStarted):
        session = "TensorRT session" if event.provider == "tensorrt" else "CUDA session"
        what = "static check (libraries resolve)" if event.static else session
        return f"verify: {what} in {event.python} ..."
    if isinstance(event, e.VerifyEnded):
        report = event.report
        if report.ok:
            return f"verify: passed ({report.mode}, {report.duration_s or 0:.1f}s)"
        kinds = ", ".join(report.failure_kinds) or report.status
        # no driver, and nothing else: not this install's failure, and said as such (a static check follows)
        head = "no CUDA session on this machine" if report.failure_kinds == ("no-driver",) else "FAILED"
        lines = [f"verify: {head} ({kinds})"]
        lines += [f"  - {failure.kind}: {failure.message}" for failure in report.failures[:5]]
        return "\n".join(lines)
    if isinstance(event, e.DownloadStarted):
        packages = " ".join(event.packages)
        return f"[{event.number}/{event.total}] download {packages} (Python {event.python_version}, {event.platform})"
    raise TypeError(f"no words for {event!r}")


def _label(number: int, total: int, kind: str, packages: tuple[str, ...]) -> str:
    return f"[{number}/{total}] {kind} {' '.join(packages)}"


def committed_line(changes: tuple, own_files: tuple[str, ...]) -> str:
    """What a committed apply changed: its distributions, and ortprov's own files (the loader hook)."""
    parts = [str(change) for change in changes]
    if own_files:
        parts.append(f"ortprov's loader hook ({', '.join(own_files)})")
    return "changed: " + ", ".join(parts) if parts else "already satisfied: nothing changed"


@dataclass(frozen=True)
class Applied:
    """`ortprov apply`: what the transaction did (installer.transaction.ApplyResult), the verify report and the
    verdict (installer.flow.Verdict). Exit 1 when files are missing or a failed verification was kept."""

    apply: ApplyResult
    verify: Any = None  # VerifyReport | None
    verdict: Verdict | None = None

    @property
    def exit_code(self) -> int:
        if any(finding.blocking for finding in self.apply.findings):
            return 1  # a distribution's RECORD does not match the disk (package-files-missing)
        return 0 if self.verdict is None or self.verdict.ok else 1

    def text(self) -> str:
        """A dry run: the real run's commands and what they would change. Otherwise the verdict."""
        if self.apply.outcome == "dry-run":
            return dry_run_text(self.apply)
        return verdict_line(self.apply, self.verdict)

    def data(self) -> Any:
        verdict = self.verdict
        return {
            "apply": self.apply,
            "verify": self.verify,
            "verdict": None
            if verdict is None
            else {
                "proven": verdict.proven,
                "unproven": verdict.unproven,
                "failure": verdict.failure,
                "ok": self.exit_code == 0,
            },
        }


def dry_run_text(result: ApplyResult) -> str:
    """The dry run's listing: the venv the real run creates, each step's command, the predicted changes."""
    from provisioner.installer.events import UNKNOWN_CHANGES
    from provisioner.plan import requirement_name

    head = f"dry run: would apply to {result.python} with {result.installer}:"
    if result.create_venv:
        python = f" (Python {result.create_python})" if result.create_python else ""
        head = f"dry run: would create the venv {result.create_venv}{python}, then " + head.removeprefix(
            "dry run: would "
        )
    lines = [head]
    total = len(result.steps)
    for step in result.steps:
        shown = step.detail or step.skipped or shell_line(step.argv)
        if step.skipped and not step.detail:
            shown = f"{step.kind} {' '.join(step.packages)}: skipped, {step.skipped}"
        lines.append(f"  [{step.number}/{total}] {shown}")
    if result.prediction != "known":
        lines.append(f"  changes: unknown ({UNKNOWN_CHANGES.get(result.prediction, result.prediction)})")
        installs: dict[str, str] = {}
        for step in result.steps:
            if step.kind == "install" and not step.skipped:
                for requirement in step.packages:  # a plan from two indexes names a package in both steps
                    installs.setdefault(requirement_name(requirement), requirement)
        if installs:
            lines.append(f"  would install: {', '.join(installs.values())}")
    elif not result.changes:
        lines.append("  changes: none (already satisfied)")
    lines += [f"  {change}" for change in result.changes]
    lines.append("nothing was changed (dry run)")
    return "\n".join(lines)


def verdict_line(result: ApplyResult, verdict: Verdict | None) -> str:
    """One line: what the apply left and what was and was not proven about it."""
    done = "installed" if result.outcome == "applied" else "already installed"
    python = result.python
    missing = [finding for finding in result.findings if finding.blocking]
    if missing:
        names = ", ".join(finding.evidence[0].split(":", 1)[0] for finding in missing)
        return f"verdict: {done}, but files are missing from {names} (package-files-missing): it does not work as is"
    if verdict is None:
        return f"verdict: {done}"
    prove = f"`ortprov verify --python {python}` on the GPU machine proves a session"
    if verdict.failure:
        return f"verdict: {done} and kept (--keep), NOT verified: {verdict.failure}"
    if verdict.proven == "session":
        return f"verdict: {done} and verified: a CUDA session ran on the GPU in {python} and agreed with the CPU"
    if verdict.proven == "static":
        why = "this machine has no NVIDIA driver" if verdict.unproven == "no-driver" else "--verify-static"
        return (
            f"verdict: {done} and verified as far as this machine can: every library the CUDA provider needs "
            f"resolves in {python}; not proven: a CUDA session ({why}); {prove}"
        )
    return f"verdict: {done}, not verified (--no-verify); {prove}"


@dataclass(frozen=True)
class Downloaded:
    """`ortprov download`: the wheelhouse it filled (docs/json.md)."""

    wheelhouse: Wheelhouse
    exit_code: int = 0

    def text(self) -> str:
        w = self.wheelhouse
        return (
            f"wheelhouse {w.dest}: {len(w.wheels)} wheels, {w.bytes / 1e6:.1f} MB ({len(w.new)} new) in "
            f"{w.seconds:.1f}s; plan saved to {PurePath(w.plan).name}\n"
            f"install offline with: ortprov apply --wheelhouse {w.dest} --venv DIR"
        )

    def data(self) -> Any:
        w = self.wheelhouse
        return {
            "dest": w.dest,
            "wheels": list(w.wheels),
            "bytes": w.bytes,
            "new": list(w.new),
            "python_version": w.python_version,
            "platforms": list(w.platforms),
            "plan": w.plan,
        }
