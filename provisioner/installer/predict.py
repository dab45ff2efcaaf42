"""What the steps would change, before anything changes: the installers' own dry runs (`predict`), what an
ortprov step (the loader hook) would write or remove (`hook_work`), and `apply --dry-run`'s result (`dry_run`),
made from the same commands as the real run and stopping before the first change."""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

from provisioner.errors import OrtprovError
from provisioner.installer import hook_files
from provisioner.installer.command import diagnose, run_command, tail
from provisioner.installer.events import ApplyResult, Change, StepRun
from provisioner.installer.steps import dry_run_argv, parse_dry_run
from provisioner.plan import (
    LOADER_HOOK,
    REMOVE_LOADER_HOOK,
    canonical,
    requirement_name,
    step_environment,
    step_summary,
)

if TYPE_CHECKING:
    from provisioner.installer.session import Execution, Session
    from provisioner.installer.steps import Command
    from provisioner.installer.venv import Distributions, Target


def diff(before: Distributions, after: Distributions) -> tuple[Change, ...]:
    """Distributions added, removed or changed between two sets."""
    names = sorted(set(before) | set(after))
    return tuple(Change(n, before.get(n), after.get(n)) for n in names if before.get(n) != after.get(n))


def predict(commands: list[Command], installed: Distributions, execution: Execution, dry_run: bool) -> str | tuple:
    """What the steps would change, from the installers' own dry runs: the changes, or (a string) why that
    cannot be known (UNKNOWN_CHANGES).

    pip before 25.3 downloads every wheel in a dry run (pypa/pip#12603): its prediction is only asked for
    under `--dry-run`; the real run then says what changed afterwards.
    """
    from provisioner.hashes import pip_reads_metadata_only  # the one home of pip's version facts

    if execution.tool not in ("uv", "pip"):
        return "conda"
    if execution.tool == "pip" and not dry_run and not pip_reads_metadata_only(installed.get("pip", "0")):
        return "no-dry-run"
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
        argv = dry_run_argv(command, execution.tool)
        result = run_command(argv, env={**(execution.env or {}), **step_environment(command.step)})
        if not result.ok and "no such option" in result.output:
            return "no-dry-run"  # a pip older than 22.2
        if not result.ok:
            raise OrtprovError(
                f"the installer's dry run of step {command.number} failed: {diagnose(result)}; nothing was changed",
                hint="\n" + tail(result.output) if result.output else None,
            )
        try:
            after.update(parse_dry_run(execution.tool, result.output))
        except ValueError:
            return "no-dry-run"
        # the dry run ran before the removals: what it found satisfied, a removed distribution, is installed again
        for name in map(requirement_name, command.step.packages):
            if name in removed and name not in after:
                after[name] = removed[name]
                reinstalled.append(Change(name, removed[name], removed[name]))
    return tuple(sorted((*diff(installed, after), *reinstalled), key=lambda change: change.name))


def hook_work(command: Command, target: Target, execution: Execution) -> list[str]:
    """What an ortprov step (the loader hook) would write or remove in the target; empty: nothing to do."""
    if command.step.kind == LOADER_HOOK:
        if execution.hook_files is None:
            raise OrtprovError("internal error: the loader hook's files were not prepared")
        if not target.site_packages:  # a venv still to be created: every file
            return list(execution.hook_files)
        return hook_files.pending(target.site_packages, execution.hook_files)
    if command.step.kind == REMOVE_LOADER_HOOK:
        present = bool(target.site_packages) and hook_files.installed(target.site_packages)
        return [hook_files.PTH_FILE, hook_files.PACKAGE_DIR + "/"] if present else []
    raise OrtprovError(f"internal error: ortprov does not carry out {command.step.kind!r} steps")


def dry_run(
    commands: list[Command],
    target: Target,
    installed: Distributions,
    execution: Execution,
    session: Session | None,
    create_venv: str | None = None,
    create_python: str | None = None,
) -> ApplyResult:
    """What the real run would do, from the same commands, stopping before the first change: each step's
    command (or why it is skipped, or what ortprov's own step would change) and the predicted changes."""
    start = time.monotonic()
    with session.guard.interruptible() if session is not None else contextlib.nullcontext():
        predicted = "new-venv" if create_venv else predict(commands, installed, execution, dry_run=True)
        hooks = {c.number: hook_work(c, target, execution) for c in commands if c.step.done_by_ortprov}
    steps = []
    for c in commands:
        detail = None
        if c.number in hooks:
            detail = f"would change {', '.join(hooks[c.number])}" if hooks[c.number] else "already up to date"
        summary = step_summary(c.step) if c.step.done_by_ortprov else None
        steps.append(
            StepRun(
                c.number,
                c.step.kind,
                c.argv,
                skipped=c.skipped,
                packages=c.step.packages,
                detail=f"{summary}: {detail}" if summary else None,
            )  # fmt: skip
        )
    return ApplyResult(
        "dry-run",
        python=target.python,
        installer=execution.tool,
        steps=tuple(steps),
        changes=predicted if isinstance(predicted, tuple) else (),
        prediction="known" if isinstance(predicted, tuple) else predicted,
        seconds=time.monotonic() - start,
        notes=session.notes if session is not None else (),
        create_venv=create_venv,
        create_python=create_python,
    )
