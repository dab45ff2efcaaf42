"""Carry out a plan in one target, all or nothing: lock, predict, confirm, snapshot, run each step, check, then
commit or restore on any failure. What happens is told to the listener as events (installer/events.py); what was
done is returned (ApplyResult), a failure raised (ApplyFailed, with what was done and restored). What an earlier
apply left is settled by installer/recovery.py, the prediction and the dry run are installer/predict.py's; the data
they share (the locked Session, the Execution, ApplyFailed) is installer/session.py's."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner.errors import BadInput, OrtprovError
from provisioner.findings import Finding
from provisioner.installer import faults, hook_files, snapshot
from provisioner.installer.command import CommandResult, Interrupted, SignalGuard, diagnose, run_command, tail
from provisioner.installer.events import (
    UNKNOWN_CHANGES,
    AlreadySatisfied,
    ApplyResult,
    Change,
    Committed,
    InstallerLine,
    InstallerTail,
    OwnStepDone,
    Restoring,
    Said,
    SignalsHeld,
    SnapshotTaken,
    StepFinished,
    StepRun,
    StepSkipped,
    StepStarted,
)
from provisioner.installer.lock import DRY_RUN_WAIT, UV_LOCK, Busy
from provisioner.installer.lock import acquire as acquire_lock
from provisioner.installer.predict import diff, hook_work, predict
from provisioner.installer.recovery import listing, settle, unchanged
from provisioner.installer.session import ApplyFailed, Execution, Session
from provisioner.installer.venv import Distributions, Target, distributions
from provisioner.plan import (
    LOADER_HOOK,
    canonical,
    requirement_name,
    step_environment,
    step_summary,
)
from provisioner.probe.target import TargetProbe, check_files, files_report, start_check_files

if TYPE_CHECKING:
    from collections.abc import Iterator

    from provisioner.installer.events import Listener
    from provisioner.installer.steps import Command

__all__ = ["UNKNOWN_CHANGES", "ApplyFailed", "ApplyResult", "Change", "Execution", "StepRun", "apply_plan"]


@contextlib.contextmanager
def locked(prefix: str, python: str, listener: Listener, *, dry_run: bool = False) -> Iterator[Session]:
    """Lock the target at `prefix` before anything of it is read, then settle what an earlier apply left (a dry
    run only says what the next apply will do). A signal before the snapshot stops the apply: with nothing
    changed, or (after a recovery) with only the earlier apply's snapshot put back."""
    with SignalGuard() as guard:
        lock = None
        session: Session | None = None
        try:
            with guard.interruptible():
                try:
                    lock = acquire_lock(
                        prefix,
                        busy_wait=DRY_RUN_WAIT if dry_run else 0.0,
                        on_wait=lambda holder: listener.tell(
                            Said(
                                f"waiting for apply pid {holder.pid} to finish with {prefix} "
                                f"(up to {DRY_RUN_WAIT:.0f} s; a dry run only reads)"
                            )
                        ),
                    )
                except Busy:
                    raise
                except OrtprovError:
                    if not dry_run:
                        raise
            faults.reached("locked")
            notes, recovered = settle(prefix, guard, dry_run, listener)
            session = Session(prefix, guard, lock, notes, recovered)
            yield session
        except Interrupted as exc:
            raise ApplyFailed(
                f"interrupted by {exc}; {unchanged(session)}",
                ApplyResult("unchanged", python=python, installer="", notes=session.notes if session else ()),
                exit_code=128 + exc.signum,
            ) from None
        finally:
            if lock is not None:
                lock.release()


def carry_out(command: Command, target: Target, execution: Execution) -> tuple[list[str], str]:
    """Do an ortprov step (write or remove the loader hook): (the files it changed, what it says)."""
    if command.step.kind == LOADER_HOOK:
        assert execution.hook_files is not None
        written = hook_files.write(target.site_packages, execution.hook_files, target.python)
        return written, (f"wrote {', '.join(written)} in {target.site_packages}" if written else "already up to date")
    removed = hook_files.remove(target.site_packages)
    return removed, (f"removed {', '.join(removed)} from {target.site_packages}" if removed else "not installed")


def apply_plan(
    commands: list[Command], target: Target, installed: Distributions, execution: Execution, session: Session
) -> ApplyResult:
    """Run the commands in the target (locked and settled: `session`), all or nothing."""
    start = time.monotonic()
    files_check = start_check_files(target.python)  # read-only: it runs beside the prediction, used if unchanged
    with session.guard.interruptible():
        predicted = predict(commands, installed, execution, dry_run=False)
        hooks = {c.number: hook_work(c, target, execution) for c in commands if c.step.done_by_ortprov}
    base: dict[str, Any] = {"python": target.python, "installer": execution.tool, "notes": session.notes}
    if predicted == () and not any(hooks.values()):
        findings = files_findings(target, plan_names(commands), execution, files_check)
        # what the plan installs is listed but not all there: "already satisfied" would be a lie
        if any(finding.blocking for finding in findings):
            steps = tuple(StepRun(c.number, c.step.kind, c.argv, skipped="files missing") for c in commands)
            return ApplyResult("unchanged", steps=steps, seconds=time.monotonic() - start, findings=findings, **base)
        execution.tell(AlreadySatisfied(target.python))
        steps = tuple(StepRun(c.number, c.step.kind, c.argv, skipped="already satisfied") for c in commands)
        return ApplyResult("unchanged", steps=steps, seconds=time.monotonic() - start, findings=findings, **base)
    if isinstance(predicted, tuple):
        removals = [str(c) for c in predicted if c.before is not None]
        touched = {c.name for c in predicted if c.before is not None}
    else:  # no prediction: the uninstall steps are known to remove, and the plan names what it installs
        removals = uninstall_removals(commands, installed)
        touched = set(plan_names(commands))
    confirm_removals(removals, execution)
    return _transaction(commands, target, installed, execution, start, base, session, touched)


def uninstall_removals(commands: list[Command], installed: Distributions) -> list[str]:
    """ "- name==version" for each package the uninstall steps that will run remove."""
    return [
        f"- {name}=={installed[canonical(name)]}"
        for command in commands
        if command.step.kind == "uninstall" and not command.skipped
        for name in command.step.packages
    ]


def confirm_removals(removals: list[str], execution: Execution) -> None:
    """Ask before removing or replacing installed distributions, unless --yes; refuse with no terminal."""
    if not removals or execution.yes:
        return
    listing = ", ".join(removals)
    answer = execution.listener.ask(f"This removes or replaces: {listing}. Continue?")
    if answer is None:
        raise BadInput(
            f"the plan removes or replaces installed distributions ({listing})",
            hint="review with --dry-run, then confirm with --yes (there is no terminal to ask on)",
        )
    if not answer:
        raise OrtprovError("cancelled: nothing was changed", hint="review the plan with --dry-run")


def _transaction(
    commands: list[Command],
    target: Target,
    installed: Distributions,
    execution: Execution,
    start: float,
    base: dict,
    session: Session,
    touched: set[str],
) -> ApplyResult:
    """Snapshot, steps, check, then commit or restore (docs/transaction.md: the states). Signals cut short only
    the interruptible parts; everything after them runs to its end and says what happened."""
    guard, lock = session.guard, session.lock
    progress = _Progress()
    taken: snapshot.Snapshot | None = None
    exit_code = 1
    # uv's `.lock`, as it was before this apply (its dry runs may have made one since)
    uv_lock_existed = lock.uv_lock_existed if lock is not None else (Path(target.prefix) / UV_LOCK).exists()
    verifying = False
    try:
        with guard.interruptible():
            faults.reached("planned")
            taken = _take_snapshot(target, installed, guard, uv_lock_existed)
            execution.tell(SnapshotTaken(taken.files, target.prefix, taken.linked, taken.seconds))
            faults.reached("snapshot-taken")
            blocked = _relevant(taken.blocked, target, touched)
            if blocked:
                progress.failure = f"cannot change {len(blocked)} paths the plan touches: {listing(blocked)}"
            else:
                _run_steps(commands, target, execution, session, progress)
            if progress.failure is None and execution.check is not None:
                verifying = True
                progress.failure = execution.check()
                faults.reached("verified")
    except Interrupted as exc:
        progress.failure = f"interrupted by {exc}" + (" during verification" if verifying else "")
        exit_code = 128 + exc.signum
    except _SnapshotFailed as exc:
        progress.failure = str(exc)
    except Exception as exc:  # noqa: BLE001 - any failure must restore the environment
        progress.failure = f"ortprov failed: {_cause(exc)}"
    # from here on, signals are only recorded: the apply ends in one of two states and says which
    concerned = plan_names(commands)
    if progress.failure is None and taken is not None:
        return _commit(
            taken, target, installed, progress.runs, start, base, session, concerned, tuple(progress.own), execution
        )
    return _roll_back(
        progress.failure or "failed",
        progress.output,
        exit_code,
        taken if progress.changing else None,
        target,
        installed,
        progress.runs,
        start,
        base,
        execution,
        session,
        concerned,
    )


@dataclass
class _Progress:
    """How far the transaction's steps got: each step as it ran, the files ortprov's own steps changed, whether a
    step started (from then on a failure restores), and the failure with the installer's output."""

    runs: list[StepRun] = field(default_factory=list)
    own: list[str] = field(default_factory=list)
    changing: bool = False
    failure: str | None = None
    output: str = ""


def _take_snapshot(
    target: Target, installed: Distributions, guard: SignalGuard, uv_lock_existed: bool
) -> snapshot.Snapshot:
    """The snapshot of the target's install directories (installer/snapshot.py); _SnapshotFailed when it cannot
    be taken (nothing was changed)."""
    try:
        return snapshot.take(
            target.prefix, target.install_dirs, installed, held=guard.held, uv_lock_existed=uv_lock_existed
        )
    except OSError as exc:
        raise _SnapshotFailed(exc, target.prefix) from None


def _run_steps(
    commands: list[Command], target: Target, execution: Execution, session: Session, progress: _Progress
) -> None:
    """Each step in order: a skipped one said, ortprov's own step done, an installer run; the first that fails
    stops the others (`progress.failure`)."""
    total = len(commands)
    for command in commands:
        step = command.step
        if command.skipped:
            execution.tell(StepSkipped(command.number, total, step.kind, step.packages, command.skipped))
            progress.runs.append(StepRun(command.number, step.kind, (), skipped=command.skipped))
            continue
        progress.changing = True
        if step.done_by_ortprov:
            changed, did = carry_out(command, target, execution)
            progress.own += changed
            execution.tell(OwnStepDone(command.number, total, step_summary(step), did))
            progress.runs.append(StepRun(command.number, step.kind, (), 0, detail=did))
            faults.reached("hook-written")
            continue
        result, seconds = _run_installer(command, total, execution, session)
        progress.runs.append(StepRun(command.number, step.kind, command.argv, result.returncode, seconds))
        if not result.ok:
            progress.failure = f"step {command.number} ({step.kind}) failed: {diagnose(result)}"
            progress.output = result.output
            return
        execution.tell(StepFinished(seconds))


def _run_installer(command: Command, total: int, execution: Execution, session: Session) -> tuple[CommandResult, float]:
    """One installer step, run with the lock's descriptor and the step's environment: (its result, seconds)."""
    step, lock = command.step, session.lock
    execution.tell(StepStarted(command.number, total, step.kind, step.packages, command.argv))
    began = time.monotonic()

    def started(pid: int) -> None:
        if lock is not None:
            lock.note_installer(pid)
        faults.reached("installer-started")

    result: CommandResult = run_command(
        list(command.argv),
        echo=(lambda line: execution.tell(InstallerLine(line))) if execution.verbose else None,
        env={**(execution.env or {}), **step_environment(step)},
        pass_fds=session.installer_fds(),
        on_start=started,
        watch=execution.listener.watch,
    )
    if lock is not None:
        lock.note_installer(None)
    faults.reached("installer-finished")
    return result, time.monotonic() - began


class _SnapshotFailed(Exception):
    """The snapshot could not be taken (the disk is full, ...): said in one sentence, nothing was changed."""

    def __init__(self, exc: OSError, prefix: str) -> None:
        super().__init__(f"taking the snapshot of {prefix} failed: {_cause(exc)}")


def _cause(exc: BaseException) -> str:
    """An unexpected exception in words: a full disk (no space, or no inodes left) as such, an OSError by its
    reason and path, anything else by its type."""
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            where = f" (writing {exc.filename})" if exc.filename else ""
            return f"the disk is full: no space or no free inodes left{where}"
        reason = exc.strerror or str(exc)
        return f"{reason}: {exc.filename}" if exc.filename else reason
    return f"{type(exc).__name__}: {exc}"


def _commit(
    taken: snapshot.Snapshot,
    target: Target,
    installed: Distributions,
    runs: list[StepRun],
    start: float,
    base: dict,
    session: Session,
    concerned: frozenset[str],
    own: tuple[str, ...],
    execution: Execution,
) -> ApplyResult:
    faults.reached("committing")
    snapshot.discard(taken.root)  # its journal goes first: from then on the change is final
    after = distributions(target.python)
    changes = diff(installed, after)
    findings = files_findings(target, concerned | {canonical(c.name) for c in changes}, execution)
    faults.reached("files-checked")
    notes = list(base.pop("notes"))
    if session.guard.received:
        name = signal.Signals(session.guard.received[0]).name
        notes.append(f"{name} came after the change was complete: it is kept")
        execution.tell(Said(notes[-1]))
    if changes or own or not findings:
        execution.tell(Committed(changes, own))
    return ApplyResult(
        "applied" if changes or own else "unchanged",
        steps=tuple(runs),
        changes=changes,
        snapshot_files=taken.files,
        snapshot_seconds=taken.seconds,
        seconds=time.monotonic() - start,
        findings=findings,
        notes=tuple(notes),
        own_files=own,
        **base,
    )


def _roll_back(
    failure: str,
    output: str,
    exit_code: int,
    taken: snapshot.Snapshot | None,
    target: Target,
    installed: Distributions,
    runs: list[StepRun],
    start: float,
    base: dict,
    execution: Execution,
    session: Session,
    concerned: frozenset[str],
) -> ApplyResult:
    if output and not execution.verbose:
        execution.tell(InstallerTail("installer", tail(output)))
    failed: tuple[str, ...] = ()
    changed = 0
    if taken is not None:
        execution.tell(Restoring(failure))
        faults.reached("restoring")
        restored = snapshot.restore(taken.trees)
        faults.reached("restored")
        changed, failed = restored.changed, restored.failed
        if failed:  # the journal stays: the next apply tries again, once the paths are writable
            snapshot.mark_ended(taken.root, failure)
        else:
            snapshot.discard(taken.root)
    else:
        snapshot.discard(snapshot.snapshot_root(target.prefix))  # no step ran: nothing to put back
    now = distributions(target.python)
    findings = files_findings(target, concerned, execution)
    exact = now == installed and not failed and not any(finding.blocking for finding in findings)
    result = ApplyResult(
        "restored",
        steps=tuple(runs),
        failure=failure,
        restored_exactly=exact,
        snapshot_files=taken.files if taken else 0,
        snapshot_seconds=taken.seconds if taken else 0.0,
        seconds=time.monotonic() - start,
        changes=diff(installed, now),
        findings=findings,
        not_restored=failed,
        **base,
    )
    extra = session.guard.received[1:] if session.guard.raised else session.guard.received
    if extra:
        execution.tell(SignalsHeld())
    if failed:
        message = (
            f"{failure}; the restore could not put back {len(failed)} paths: {listing(failed)} "
            "(everything else was restored; the snapshot is kept)"
        )
        hint = "make those paths writable (chattr -i, or as their owner), then run apply again: it restores them"
    elif taken is None:
        message = f"{failure}; {unchanged(session)}"
        hint = None
    elif exact:
        message = f"{failure}; the environment was restored ({changed} paths put back, distributions as before)"
        hint = "run again with -v to see the installer's output" if output else None
    else:
        left = ", ".join(str(c) for c in diff(installed, now)) or "files listed in a RECORD are missing"
        message = f"{failure}; the restore left differences: {left}"
        hint = "`ortprov doctor` explains them"
    raise ApplyFailed(message, result, output, exit_code, hint=hint)


def _relevant(blocked: tuple[str, ...], target: Target, touched: set[str]) -> list[str]:
    """The unchangeable paths an apply would touch: an install directory itself, or a path of a distribution it
    removes or replaces (its RECORD). A path elsewhere is no reason to stop: should the installer need it after
    all, it fails, and the apply restores."""
    if not blocked:
        return []
    dirs = {os.path.realpath(d) for d in target.install_dirs}
    owned = _owned_paths(target, touched)
    keep = []
    for item in blocked:
        path = item.split(": ", 1)[0]
        real = os.path.realpath(path)
        if real in dirs or any(real == p or real.startswith(p + os.sep) or p.startswith(real + os.sep) for p in owned):
            keep.append(item)
    return keep


def _owned_paths(target: Target, names: set[str]) -> set[str]:
    """The files (real paths) the RECORDs of these installed distributions list."""
    owned: set[str] = set()
    site = Path(target.site_packages)
    for info in site.glob("*.dist-info"):
        if canonical(info.name.split("-", 1)[0]) not in names:
            continue
        with contextlib.suppress(OSError):
            for line in (info / "RECORD").read_text(encoding="utf-8", errors="replace").splitlines():
                entry = line.split(",", 1)[0]
                if entry:
                    owned.add(os.path.realpath(site / entry))
    return owned


def plan_names(commands: list[Command]) -> frozenset[str]:
    """The canonical names of the distributions the plan's installer steps install or remove."""
    names: set[str] = set()
    for command in commands:
        step = command.step
        if step.kind == "uninstall":
            names.update(canonical(name) for name in step.packages)
        elif step.runs_installer:
            names.update(requirement_name(requirement) for requirement in step.packages)
    return frozenset(names)


def files_findings(
    target: Target, concerned: frozenset[str], execution: Execution, started: TargetProbe | None = None
) -> tuple[Finding, ...]:
    """`package-files-missing` for every distribution whose RECORD lists files missing on disk (told as it is
    found): an error for the distributions this apply installs, removes or changed (`concerned`), a warning for
    the others (this apply did not touch them: the finding is true, but it is not this apply's outcome)."""
    report = files_report(started.answer(strict=False)) if started is not None else check_files(target.python)
    found = []
    for dist in report.incomplete:
        ours = canonical(dist.name) in concerned
        finding = Finding(
            "package-files-missing",
            "error" if ours else "warning",
            f"{dist.name} {dist.version} is installed, but files it installed are missing"
            + ("" if ours else " (not part of this plan: left as it was)"),
            (f"{dist.name} {dist.version}: {dist.missing_files}",),
            f"{target.python} -m pip install --force-reinstall --no-deps {dist.name}=={dist.version}",
        )
        execution.tell(Said(f"{finding.title} (package-files-missing); fix: {finding.fix}", finding.severity))
        found.append(finding)
    return tuple(found)
