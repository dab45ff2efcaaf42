"""Stage markers of apply's transaction, for fault-injection tests (docs/transaction.md lists them).

`reached(stage)` does nothing unless ORTPROV_FAULT_AT names the stage: ORTPROV_FAULT_AT=STAGE[#N][:ACTION],...
makes apply, the N-th time (default: the first) it reaches STAGE, do ACTION to itself:

  stop       SIGSTOP (the default): it pauses there, as after Ctrl-Z; the test signals, kills or resumes it
  SIGINT, SIGTERM, SIGHUP, SIGKILL   that signal, to its own PID
  killgroup  SIGKILL to its whole process group (only when it leads one: start it in a new session)
"""

from __future__ import annotations

import os
import signal

VARIABLE = "ORTPROV_FAULT_AT"

# In the order an apply reaches them; the failure path's own after `verified`.
STAGES = (
    "locked",  # the lock is held; nothing of the target has been read
    "recovering",  # an earlier apply's journal is about to be settled (only when there is one)
    "planned",  # the plan and its prediction are made; nothing changed yet
    "journal-writing",  # the snapshot folder is made and its first journal written, not yet renamed into place
    "snapshot-started",  # the journal says `snapshotting`; the snapshot folder is being filled
    "snapshot-linking",  # the first install directory is linked, the others not yet
    "snapshot-taken",  # the journal says `complete`, durably; no step has run
    "installer-started",  # an installer step's process has started (#N: the N-th)
    "installer-finished",  # it printed its last line and exited; ortprov has not looked at the result yet
    "hook-written",  # ortprov's own step (the loader hook) is done
    "files-checked",  # every distribution's RECORD was checked against the disk
    "verified",  # the verification ran (with verify)
    "committing",  # about to discard the journal: the change is complete
    "journal-discarded",  # the journal is gone (renamed, synced): the outcome is final whatever happens next
    "discard-partial",  # half of the snapshot's first tree is deleted
    "discarded",  # the snapshot folder is gone; the lock is still held
    "restoring",  # the failure path: about to restore from the snapshot
    "restore-partial",  # the first install directory is restored, the others not yet
    "restored",  # every directory is restored; the journal is still there
)

_counts: dict[str, int] = {}


def reached(stage: str) -> None:
    """Act as ORTPROV_FAULT_AT says when this is the stage it names; otherwise (always, outside tests) nothing."""
    spec = os.environ.get(VARIABLE)
    if not spec:
        return
    _counts[stage] = _counts.get(stage, 0) + 1
    for item in spec.split(","):
        where, _, action = item.strip().partition(":")
        name, _, nth = where.partition("#")
        if name == stage and _counts[stage] == (int(nth) if nth else 1):
            _act(action or "stop")


def _act(action: str) -> None:
    if action == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif action == "killgroup":
        if os.getpgrp() != os.getpid():
            raise SystemExit(f"{VARIABLE}: killgroup needs ortprov to lead its process group (start it in a session)")
        os.killpg(os.getpgrp(), signal.SIGKILL)
    else:
        os.kill(os.getpid(), getattr(signal, action))
