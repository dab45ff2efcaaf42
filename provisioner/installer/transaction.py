"""Carry out a plan in one target, all or nothing: predict, confirm, snapshot, run each step, restore
on any failure."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from provisioner.errors import BadInput, OrtprovError
from provisioner.findings import Finding
from provisioner.installer import faults, loader_hook, snapshot
from provisioner.installer.lock import UV_LOCK, ApplyLock, Busy, remove_unheld
from provisioner.installer.lock import acquire as acquire_lock
from provisioner.installer.runner import (
    CommandResult,
    Interrupted,
    SignalGuard,
    diagnose,
    print_err,
    run_command,
    tail,
)
from provisioner.installer.steps import Command, commands_for, dry_run_argv, parse_dry_run
from provisioner.installer.target import Distributions, Target, distributions
from provisioner.plan import (
    LOADER_HOOK,
    REMOVE_LOADER_HOOK,
    Plan,
    canonical,
    requirement_name,
    step_environment,
    step_summary,
)
from provisioner.probe.target import check_files


@dataclass(frozen=True)
class Change:
    """One distribution added, removed or changed in version."""

    name: str
    before: str | None
    after: str | None

    def __str__(self) -> str:
        if self.before == self.after:
            return f"~ {self.name}=={self.before} (removed and installed afresh)"
        if self.before is None:
            return f"+ {self.name}=={self.after}"
        if self.after is None:
            return f"- {self.name}=={self.before}"
        return f"~ {self.name} {self.before} -> {self.after}"


@dataclass(frozen=True)
class StepRun:
    """One step as it ran (or was skipped)."""

    number: int
    kind: str
    argv: tuple[str, ...]
    returncode: int | None = None
    seconds: float = 0.0
    skipped: str | None = None


@dataclass(frozen=True)
class ApplyResult:
    """What `apply` did. outcome: applied | unchanged | dry-run | restored."""

    outcome: str
    python: str
    installer: str
    steps: tuple[StepRun, ...] = ()
    changes: tuple[Change, ...] = ()  # done, or (dry-run) predicted
    failure: str | None = None  # why it failed, when outcome == "restored"
    restored_exactly: bool | None = None
    snapshot_files: int = 0
    snapshot_seconds: float = 0.0
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)
    findings: tuple[Finding, ...] = ()  # package-files-missing: a RECORD that does not match the disk
    not_restored: tuple[str, ...] = ()  # "path: why" for each path the restore could not put back


class ApplyFailed(OrtprovError):
    """A step failed or ortprov was interrupted; the environment was restored (or says it could not be)."""

    def __init__(
        self, message: str, result: ApplyResult, output: str = "", exit_code: int = 1, hint: str | None = None
    ) -> None:
        super().__init__(message, hint)
        self.result = result
        self.output = output
        self.exit_code = exit_code


def diff(before: Distributions, after: Distributions) -> tuple[Change, ...]:
    """Distributions added, removed or changed between two sets."""
    names = sorted(set(before) | set(after))
    return tuple(Change(n, before.get(n), after.get(n)) for n in names if before.get(n) != after.get(n))


@dataclass(frozen=True)
class ApplySettings:
    """How to apply: which tool, how talkative, whether to ask."""

    tool: str  # uv | pip
    uv: list[str] | None = None
    verbose: bool = False
    dry_run: bool = False
    yes: bool = False
    system: bool = False
    confirm: Callable[[str], bool] | None = None  # asks the user; None: there is no terminal
    env: dict[str, str] | None = None  # extra environment for the installer
    hook_files: dict[str, bytes] | None = None  # the loader hook's files (installer/loader_hook.hook_files)
    # run after the steps, before the snapshot goes: None keeps the change, a sentence restores it
    check: Callable[[], str | None] | None = None


def _say(text: str) -> None:
    print_err(text)


def predict(commands: list[Command], installed: Distributions, settings: ApplySettings) -> tuple[Change, ...] | None:
    """What the steps would change, from the installers' own dry runs; None when it cannot be known.

    pip before 25.3 downloads every wheel in a dry run (pypa/pip#12603): its prediction is only asked for
    under `--dry-run`; the real run then says what changed afterwards.
    """
    from provisioner.hashes import pip_reads_metadata_only  # the one home of pip's version facts

    if settings.tool == "pip" and not settings.dry_run and not pip_reads_metadata_only(installed.get("pip", "0")):
        return None
    after = dict(installed)
    removed: Distributions = {}
    reinstalled: list[Change] = []
    for command in commands:
        if command.skipped or command.step.done_by_ortprov:
            continue
        if command.step.kind == "uninstall":
            for name in command.step.packages:
                removed[canonical(name)] = after.pop(canonical(name), "")
            continue
        argv = dry_run_argv(command, settings.tool)
        result = run_command(argv, env={**(settings.env or {}), **step_environment(command.step)})
        if not result.ok and "no such option" in result.output:
            return None  # a pip older than 22.2
        if not result.ok:
            raise OrtprovError(
                f"the installer's dry run of step {command.number} failed: {diagnose(result)}",
                hint="\n" + tail(result.output) if result.output else None,
            )
        try:
            after.update(parse_dry_run(settings.tool, result.output))
        except ValueError:
            return None
        # the dry run ran before the removals: what it found satisfied, a removed distribution, is installed again
        for name in map(requirement_name, command.step.packages):
            if name in removed and name not in after:
                after[name] = removed[name]
                reinstalled.append(Change(name, removed[name], removed[name]))
    return tuple(sorted((*diff(installed, after), *reinstalled), key=lambda change: change.name))


@dataclass(frozen=True)
class Session:
    """A locked target: the apply lock (installer/lock.py), the signal guard, and what settling an earlier
    apply's leftovers said (`recovered`: an environment was restored, so what is installed must be read again)."""

    target: Target
    guard: SignalGuard
    lock: ApplyLock | None  # None: a dry run that may not write the lock file (it reads only)
    notes: tuple[str, ...] = ()
    recovered: bool = False

    def installer_fds(self) -> tuple[int, ...]:
        """The lock's descriptor, handed to each installer: one that outlived ortprov still holds the lock."""
        return (self.lock.fd,) if self.lock is not None and self.lock.fd is not None else ()


@contextlib.contextmanager
def locked(target: Target, *, dry_run: bool = False) -> Iterator[Session]:
    """Lock the target before anything of it is read, then settle what an earlier apply left (a dry run only
    says what the next apply will do). A signal before the snapshot stops the apply with nothing changed."""
    with SignalGuard() as guard:
        lock = None
        try:
            with guard.interruptible():
                try:
                    lock = acquire_lock(target.prefix)
                except Busy:
                    raise
                except OrtprovError:
                    if not dry_run:
                        raise
            faults.reached("locked")
            notes, recovered = settle(target, guard, dry_run)
            yield Session(target, guard, lock, notes, recovered)
        except Interrupted as exc:
            raise ApplyFailed(
                f"interrupted by {exc}; nothing was changed",
                ApplyResult("unchanged", python=target.python, installer=""),
                exit_code=128 + exc.signum,
            ) from None
        finally:
            if lock is not None:
                lock.release()


def settle(target: Target, guard: SignalGuard, dry_run: bool) -> tuple[tuple[str, ...], bool]:
    """Deal with what an earlier apply left in the target, as docs/transaction.md says; (notes, restored).

    The same journal gets the same words in a dry run (what the next apply does) and in an apply (what it did)."""
    left = snapshot.leftover(target.prefix)
    if left.kind == "none":
        return (), False
    pid = left.journal.pid if left.journal is not None else None
    who = f"an earlier apply (pid {pid})" if pid else "an earlier apply"
    root = left.root
    if left.kind == "damaged":
        faults.reached("recovering")
        why = (
            f"its journal says the snapshot is complete, but {left.missing} entries are missing from it"
            if left.missing
            else "its journal cannot be read (damaged, or written by another version of ortprov)"
        )
        raise OrtprovError(
            f"{who} left {root}, which cannot be restored: {why}",
            hint=f"check the environment with `ortprov doctor`, then remove {root} by hand and run again",
        )
    if dry_run:
        said = {
            "leftover": f"{who} left {root} behind while removing it; the next apply removes it",
            "incomplete": f"{who} was killed while taking its snapshot, before it changed anything; "
            "the next apply removes that partial snapshot",
            "complete": f"{who} was killed before it finished; the next apply restores its snapshot first",
        }[left.kind]
        _say(f"note: {said}")
        return (said,), False
    faults.reached("recovering")
    if left.kind in ("leftover", "incomplete"):
        with guard.held():
            snapshot.discard(root)
        said = (
            f"{who} left {root} behind while removing it; it was removed"
            if left.kind == "leftover"
            else f"{who} was killed while taking its snapshot, before it changed anything; that partial "
            "snapshot was removed"
        )
        _say(f"note: {said}")
        return (said,), False
    assert left.journal is not None
    with guard.held():
        restored = snapshot.restore(left.journal.trees)
        if not restored.failed:
            snapshot.discard(root)
            if not left.journal.uv_lock_existed:
                remove_unheld(Path(target.prefix) / UV_LOCK)
    if restored.failed:
        raise OrtprovError(
            f"{who} was killed before it finished; restoring its snapshot could not put back "
            f"{len(restored.failed)} paths: {_listing(restored.failed)}",
            hint="make those paths writable (chattr -i, or as their owner), then run again: the snapshot is kept",
        )
    said = f"{who} was killed before it finished; its snapshot was restored"
    _say(f"note: {said}")
    return (said,), True


def _listing(paths: tuple[str, ...] | list[str], shown: int = snapshot.BLOCKED_SHOWN) -> str:
    more = f" (and {len(paths) - shown} more)" if len(paths) > shown else ""
    return "; ".join(paths[:shown]) + more


def hook_work(command: Command, target: Target, settings: ApplySettings) -> list[str]:
    """What an ortprov step (the loader hook) would write or remove in the target; empty: nothing to do."""
    if command.step.kind == LOADER_HOOK:
        if settings.hook_files is None:
            raise OrtprovError("internal error: the loader hook's files were not prepared")
        return loader_hook.pending(target.site_packages, settings.hook_files)
    if command.step.kind == REMOVE_LOADER_HOOK:
        present = loader_hook.installed(target.site_packages)
        return [loader_hook.PTH_FILE, loader_hook.PACKAGE_DIR + "/"] if present else []
    raise OrtprovError(f"internal error: ortprov does not carry out {command.step.kind!r} steps")


def carry_out(command: Command, target: Target, settings: ApplySettings) -> str:
    """Do an ortprov step (write or remove the loader hook) and say what changed."""
    if command.step.kind == LOADER_HOOK:
        assert settings.hook_files is not None
        written = loader_hook.write(target.site_packages, settings.hook_files, target.python)
        return f"wrote {', '.join(written)} in {target.site_packages}" if written else "already up to date"
    removed = loader_hook.remove(target.site_packages)
    return f"removed {', '.join(removed)} from {target.site_packages}" if removed else "not installed"


def apply_plan(
    plan: Plan, target: Target, installed: Distributions, settings: ApplySettings, session: Session | None = None
) -> ApplyResult:
    """Run the plan's steps in the target, or (dry run) say what they would change. `session`: the target
    locked and settled (flow.run_apply holds it from before the plan was made); None: lock it here."""
    if session is None:
        with locked(target, dry_run=settings.dry_run) as session:
            if session.recovered:
                installed = distributions(target.python)
            return apply_plan(plan, target, installed, settings, session)
    start = time.monotonic()
    with session.guard.interruptible():
        commands = commands_for(plan, target, installed, settings.tool, settings.uv, system=settings.system)
        predicted = predict(commands, installed, settings)
        hooks = {c.number: hook_work(c, target, settings) for c in commands if c.step.done_by_ortprov}
    base: dict[str, Any] = {"python": target.python, "installer": settings.tool, "notes": session.notes}
    if settings.dry_run:
        _say(f"dry run: would apply to {target.python} with {settings.tool}:")
        for command in commands:
            if command.number in hooks:
                work = hooks[command.number]
                state = f"would change {', '.join(work)}" if work else "already up to date"
                _say(f"  [{command.number}/{len(commands)}] {step_summary(command.step)}: {state}")
                continue
            _say(f"  [{command.number}/{len(commands)}] " + (command.skipped or shlex.join(command.argv)))
        if predicted is None:
            _say("  changes: unknown (the installer has no dry run)")
        elif not predicted:
            _say("  changes: none (already satisfied)")
        for change in predicted or ():
            _say(f"  {change}")
        steps = tuple(StepRun(c.number, c.step.kind, c.argv, skipped=c.skipped or "dry run") for c in commands)
        return ApplyResult("dry-run", steps=steps, changes=predicted or (), seconds=time.monotonic() - start, **base)
    if predicted == () and not any(hooks.values()):
        findings = files_findings(target, plan_names(commands))
        # what the plan installs is listed but not all there: "already satisfied" would be a lie
        if any(finding.blocking for finding in findings):
            steps = tuple(StepRun(c.number, c.step.kind, c.argv, skipped="files missing") for c in commands)
            return ApplyResult("unchanged", steps=steps, seconds=time.monotonic() - start, findings=findings, **base)
        _say(f"already satisfied: {target.python} has everything the plan installs; nothing changed")
        steps = tuple(StepRun(c.number, c.step.kind, c.argv, skipped="already satisfied") for c in commands)
        return ApplyResult("unchanged", steps=steps, seconds=time.monotonic() - start, findings=findings, **base)
    removals = [str(c) for c in (predicted or ()) if c.before is not None]
    if predicted is None:  # no prediction: at least the uninstall steps are known to remove
        removals = uninstall_removals(commands, installed)
    confirm_removals(removals, settings)
    touched = None if predicted is None else {c.name for c in predicted if c.before is not None}
    return _transaction(commands, target, installed, settings, start, base, session, touched)


def uninstall_removals(commands: list[Command], installed: Distributions) -> list[str]:
    """ "- name==version" for each package the uninstall steps that will run remove."""
    return [
        f"- {name}=={installed[canonical(name)]}"
        for command in commands
        if command.step.kind == "uninstall" and not command.skipped
        for name in command.step.packages
    ]


def confirm_removals(removals: list[str], settings: ApplySettings) -> None:
    """Ask before removing or replacing installed distributions, unless --yes; refuse with no terminal."""
    if not removals or settings.yes:
        return
    listing = ", ".join(removals)
    if settings.confirm is None:
        raise BadInput(
            f"the plan removes or replaces installed distributions ({listing})",
            hint="review with --dry-run, then confirm with --yes (there is no terminal to ask on)",
        )
    if not settings.confirm(f"This removes or replaces: {listing}. Continue?"):
        raise OrtprovError("cancelled: nothing was changed", hint="review the plan with --dry-run")


def run_commands(
    commands: list[Command], target: Target, installed: Distributions, settings: ApplySettings
) -> ApplyResult:
    """Run prepared commands transactionally (used by the conda installer)."""
    base: dict[str, Any] = {"python": target.python, "installer": settings.tool, "notes": ()}
    with locked(target) as session:
        if session.recovered:
            installed = distributions(target.python)
        base["notes"] = session.notes
        return _transaction(commands, target, installed, settings, time.monotonic(), base, session, None)


def _transaction(
    commands: list[Command],
    target: Target,
    installed: Distributions,
    settings: ApplySettings,
    start: float,
    base: dict,
    session: Session,
    touched: set[str] | None,
) -> ApplyResult:
    """Snapshot, steps, check, then commit or restore (docs/transaction.md: the states). Signals cut short only
    the interruptible parts; everything after them runs to its end and says what happened."""
    guard, lock = session.guard, session.lock
    runs: list[StepRun] = []
    taken: snapshot.Snapshot | None = None
    failure: str | None = None
    output = ""
    exit_code = 1
    # uv's `.lock`, as it was before this apply (its dry runs may have made one since)
    uv_lock_existed = lock.uv_lock_existed if lock is not None else (Path(target.prefix) / UV_LOCK).exists()
    verifying = False
    changing = False  # a step started: from here on, a failure restores
    try:
        with guard.interruptible():
            faults.reached("planned")
            taken = snapshot.take(
                target.prefix, target.install_dirs, installed, held=guard.held, uv_lock_existed=uv_lock_existed
            )
            how = "hard links" if taken.linked else "copies"
            _say(f"snapshot: {taken.files} files of {target.prefix} ({how}, {taken.seconds:.1f}s)")
            faults.reached("snapshot-taken")
            blocked = _relevant(taken.blocked, target, touched)
            if blocked:
                failure = f"cannot change {len(blocked)} paths the plan touches: {_listing(blocked)}"
            for command in [] if blocked else commands:
                packages = " ".join(command.step.packages)
                label = f"[{command.number}/{len(commands)}] {command.step.kind} {packages}"
                if command.skipped:
                    _say(f"{label}: skipped, {command.skipped}")
                    runs.append(StepRun(command.number, command.step.kind, (), skipped=command.skipped))
                    continue
                changing = True
                if command.step.done_by_ortprov:
                    did = carry_out(command, target, settings)
                    _say(f"[{command.number}/{len(commands)}] {step_summary(command.step)}: {did}")
                    runs.append(StepRun(command.number, command.step.kind, (), 0))
                    faults.reached("hook-written")
                    continue
                _say(f"{label}\n      $ {shlex.join(command.argv)}")
                began = time.monotonic()
                echo = (lambda line: print_err(f"      | {line}")) if settings.verbose else None

                def started(pid: int) -> None:
                    if lock is not None:
                        lock.note_installer(pid)
                    faults.reached("installer-started")

                result: CommandResult = run_command(
                    list(command.argv),
                    echo=echo,
                    env={**(settings.env or {}), **step_environment(command.step)},
                    pass_fds=session.installer_fds(),
                    on_start=started,
                )
                if lock is not None:
                    lock.note_installer(None)
                faults.reached("installer-finished")
                seconds = time.monotonic() - began
                runs.append(StepRun(command.number, command.step.kind, command.argv, result.returncode, seconds))
                if not result.ok:
                    failure = f"step {command.number} ({command.step.kind}) failed: {diagnose(result)}"
                    output = result.output
                    break
                _say(f"      done in {seconds:.1f}s")
            if failure is None and settings.check is not None:
                verifying = True
                failure = settings.check()
                faults.reached("verified")
    except Interrupted as exc:
        failure = f"interrupted by {exc}" + (" during verification" if verifying else "")
        exit_code = 128 + exc.signum
    except Exception as exc:  # noqa: BLE001 - any failure must restore the environment
        failure = f"ortprov failed: {type(exc).__name__}: {exc}"
    # from here on, signals are only recorded: the apply ends in one of two states and says which
    if failure is None and taken is not None:
        return _commit(taken, target, installed, runs, start, base, session, plan_names(commands))
    return _roll_back(
        failure or "failed",
        output,
        exit_code,
        taken if changing else None,
        target,
        installed,
        runs,
        start,
        base,
        settings,
        session,
        plan_names(commands),
    )


def _commit(
    taken: snapshot.Snapshot,
    target: Target,
    installed: Distributions,
    runs: list[StepRun],
    start: float,
    base: dict,
    session: Session,
    concerned: frozenset[str],
) -> ApplyResult:
    faults.reached("committing")
    snapshot.discard(taken.root)  # its journal goes first: from then on the change is final
    after = distributions(target.python)
    changes = diff(installed, after)
    findings = files_findings(target, concerned | {canonical(c.name) for c in changes})
    faults.reached("files-checked")
    notes = list(base.pop("notes"))
    if session.guard.received:
        name = signal.Signals(session.guard.received[0]).name
        notes.append(f"{name} came after the change was complete: it is kept")
        _say(f"note: {notes[-1]}")
    if changes:
        _say("changed: " + ", ".join(str(c) for c in changes))
    elif not findings:
        _say("already satisfied: nothing changed")
    return ApplyResult(
        "applied" if changes else "unchanged",
        steps=tuple(runs),
        changes=changes,
        snapshot_files=taken.files,
        snapshot_seconds=taken.seconds,
        seconds=time.monotonic() - start,
        findings=findings,
        notes=tuple(notes),
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
    settings: ApplySettings,
    session: Session,
    concerned: frozenset[str],
) -> ApplyResult:
    if output and not settings.verbose:
        _say("installer output (last lines):\n" + "\n".join(f"      | {line}" for line in tail(output).splitlines()))
    failed: tuple[str, ...] = ()
    changed = 0
    if taken is not None:
        _say(f"{failure}; restoring the environment from the snapshot ...")
        faults.reached("restoring")
        restored = snapshot.restore(taken.trees)
        faults.reached("restored")
        changed, failed = restored.changed, restored.failed
        if not failed:  # otherwise the journal stays: the next apply tries again, once the paths are writable
            snapshot.discard(taken.root)
    else:
        snapshot.discard(snapshot.snapshot_root(target.prefix))  # no step ran: nothing to put back
    now = distributions(target.python)
    findings = files_findings(target, concerned)
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
        _say("(signals received during the restore were held until it finished)")
    if failed:
        message = (
            f"{failure}; the restore could not put back {len(failed)} paths: {_listing(failed)} "
            "(everything else was restored; the snapshot is kept)"
        )
        hint = "make those paths writable (chattr -i, or as their owner), then run apply again: it restores them"
    elif taken is None:
        message = f"{failure}; nothing was changed"
        hint = None
    elif exact:
        message = f"{failure}; the environment was restored ({changed} paths put back, distributions as before)"
        hint = "run again with -v to see the installer's output" if output else None
    else:
        left = ", ".join(str(c) for c in diff(installed, now)) or "files listed in a RECORD are missing"
        message = f"{failure}; the restore left differences: {left}"
        hint = "`ortprov doctor` explains them"
    raise ApplyFailed(message, result, output, exit_code, hint=hint)


def _relevant(blocked: tuple[str, ...], target: Target, touched: set[str] | None) -> list[str]:
    """The unchangeable paths an apply would touch: an install directory itself, or a path of a distribution it
    removes or replaces (its RECORD); every one when what it changes is not known."""
    if not blocked or touched is None:
        return list(blocked)
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


def files_findings(target: Target, concerned: frozenset[str]) -> tuple[Finding, ...]:
    """`package-files-missing` for every distribution whose RECORD lists files missing on disk (said on stderr):
    an error for the distributions this apply installs, removes or changed (`concerned`), a warning for the others
    (this apply did not touch them: the finding is true, but it is not this apply's outcome)."""
    report = check_files(target.python)
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
        _say(f"{finding.severity}: {finding.title} (package-files-missing); fix: {finding.fix}")
        found.append(finding)
    return tuple(found)
