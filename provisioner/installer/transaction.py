"""Carry out a plan in one target, all or nothing: predict, confirm, snapshot, run each step, restore
on any failure."""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from provisioner.errors import BadInput, OrtprovError
from provisioner.installer import loader_hook, snapshot
from provisioner.installer.runner import (
    CommandResult,
    Interrupted,
    diagnose,
    print_err,
    run_command,
    signals_as_exceptions,
    signals_deferred,
    tail,
)
from provisioner.installer.steps import Command, canonical, commands_for, dry_run_argv, parse_dry_run, requirement_name
from provisioner.installer.target import Distributions, Target, distributions
from provisioner.plan import LOADER_HOOK, REMOVE_LOADER_HOOK, Plan, step_summary


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
        result = run_command(argv, env=settings.env)
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


def recover_interrupted(target: Target) -> str | None:
    """Restore an environment left half-changed by an apply that was killed; says what it did."""
    journal = snapshot.pending_journal(target.prefix)
    if journal is None:
        return None
    pid = journal.get("pid")
    if isinstance(pid, int) and pid != os.getpid() and _alive(pid):
        raise OrtprovError(
            f"another `ortprov apply` (pid {pid}) is changing {target.prefix}", hint="wait for it to finish"
        )
    with signals_deferred():
        snapshot.restore(journal["trees"])
        snapshot.discard(snapshot.snapshot_root(target.prefix))
    return f"an earlier apply (pid {pid}) was killed before it finished; its snapshot was restored"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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


def apply_plan(plan: Plan, target: Target, installed: Distributions, settings: ApplySettings) -> ApplyResult:
    """Run the plan's steps in the target, or (dry run) say what they would change."""
    start = time.monotonic()
    notes = []
    pending = snapshot.pending_journal(target.prefix)
    if pending is not None and settings.dry_run:
        note = (
            f"an earlier apply (pid {pending.get('pid')}) was killed before it finished; "
            "the next apply restores its snapshot first"
        )
        _say(f"note: {note}")
        notes.append(note)
    recovered = None if settings.dry_run else recover_interrupted(target)
    if recovered:
        _say(f"note: {recovered}")
        notes.append(recovered)
        installed = distributions(target.python)
    commands = commands_for(plan, target, installed, settings.tool, settings.uv, system=settings.system)
    predicted = predict(commands, installed, settings)
    hooks = {c.number: hook_work(c, target, settings) for c in commands if c.step.done_by_ortprov}
    base: dict[str, Any] = {"python": target.python, "installer": settings.tool, "notes": tuple(notes)}
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
        _say(f"already satisfied: {target.python} has everything the plan installs; nothing changed")
        steps = tuple(StepRun(c.number, c.step.kind, c.argv, skipped="already satisfied") for c in commands)
        return ApplyResult("unchanged", steps=steps, seconds=time.monotonic() - start, **base)
    removals = [str(c) for c in (predicted or ()) if c.before is not None]
    if predicted is None:  # no prediction: at least the uninstall steps are known to remove
        removals = uninstall_removals(commands, installed)
    confirm_removals(removals, settings)
    return _transaction(commands, target, installed, settings, start, base)


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
    return _transaction(commands, target, installed, settings, time.monotonic(), base)


def _transaction(
    commands: list[Command],
    target: Target,
    installed: Distributions,
    settings: ApplySettings,
    start: float,
    base: dict,
) -> ApplyResult:
    runs: list[StepRun] = []
    taken: snapshot.Snapshot | None = None
    failure: str | None = None
    output = ""
    exit_code = 1
    try:
        with signals_as_exceptions():
            taken = snapshot.take(target.prefix, target.install_dirs, installed)
            how = "hard links" if taken.linked else "copies"
            _say(f"snapshot: {taken.files} files of {target.prefix} ({how}, {taken.seconds:.1f}s)")
            for command in commands:
                packages = " ".join(command.step.packages)
                label = f"[{command.number}/{len(commands)}] {command.step.kind} {packages}"
                if command.skipped:
                    _say(f"{label}: skipped, {command.skipped}")
                    runs.append(StepRun(command.number, command.step.kind, (), skipped=command.skipped))
                    continue
                if command.step.done_by_ortprov:
                    did = carry_out(command, target, settings)
                    _say(f"[{command.number}/{len(commands)}] {step_summary(command.step)}: {did}")
                    runs.append(StepRun(command.number, command.step.kind, (), 0))
                    continue
                _say(f"{label}\n      $ {shlex.join(command.argv)}")
                began = time.monotonic()
                echo = (lambda line: print_err(f"      | {line}")) if settings.verbose else None
                result: CommandResult = run_command(list(command.argv), echo=echo, env=settings.env)
                seconds = time.monotonic() - began
                runs.append(StepRun(command.number, command.step.kind, command.argv, result.returncode, seconds))
                if not result.ok:
                    failure = f"step {command.number} ({command.step.kind}) failed: {diagnose(result)}"
                    output = result.output
                    break
                _say(f"      done in {seconds:.1f}s")
    except Interrupted as exc:
        failure = f"interrupted by {exc}"
        exit_code = 128 + exc.signum
    except Exception as exc:  # noqa: BLE001 - any failure must restore the environment
        failure = f"ortprov failed: {type(exc).__name__}: {exc}"
    if failure is None and taken is not None and settings.check is not None:
        try:
            with signals_as_exceptions():
                failure = settings.check()
        except Interrupted as exc:
            failure, exit_code = f"interrupted by {exc} during verification", 128 + exc.signum
    if failure is None and taken is not None:
        after = distributions(target.python)
        snapshot.discard(taken.root)
        changes = diff(installed, after)
        if changes:
            _say("changed: " + ", ".join(str(c) for c in changes))
        else:
            _say("already satisfied: nothing changed")
        return ApplyResult(
            "applied" if changes else "unchanged",
            steps=tuple(runs),
            changes=changes,
            snapshot_files=taken.files,
            snapshot_seconds=taken.seconds,
            seconds=time.monotonic() - start,
            **base,
        )
    return _roll_back(
        failure or "failed", output, exit_code, taken, target, installed, runs, start, base, settings.verbose
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
    verbose: bool,
) -> ApplyResult:
    if output and not verbose:
        _say("installer output (last lines):\n" + "\n".join(f"      | {line}" for line in tail(output).splitlines()))
    with signals_deferred() as received:
        if taken is not None:
            _say(f"{failure}; restoring the environment from the snapshot ...")
            changed = snapshot.restore(taken.trees)
            snapshot.discard(taken.root)
        else:
            changed = 0
            snapshot.discard(snapshot.snapshot_root(target.prefix))  # a half-taken one
        now = distributions(target.python)
    exact = now == installed
    result = ApplyResult(
        "restored",
        steps=tuple(runs),
        failure=failure,
        restored_exactly=exact,
        snapshot_files=taken.files if taken else 0,
        snapshot_seconds=taken.seconds if taken else 0.0,
        seconds=time.monotonic() - start,
        changes=diff(installed, now),
        **base,
    )
    if received:
        _say("(signals received during the restore were held until it finished)")
    if exact:
        message = f"{failure}; the environment was restored ({changed} paths put back, distributions as before)"
    else:
        left = ", ".join(str(c) for c in diff(installed, now))
        message = f"{failure}; the restore left differences: {left}"
    raise ApplyFailed(
        message,
        result,
        output,
        exit_code,
        hint="run again with -v to see the installer's output" if output else None,
    )
