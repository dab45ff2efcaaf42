"""The data of one apply's transaction, which transaction.py, predict.py and recovery.py share: how the steps run
(Execution), the locked target (Session), and the failure apply raises (ApplyFailed). Data only: it imports none of
them, so the installer reads top-down (flow -> transaction -> predict, recovery, snapshot, command -> this)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from provisioner.errors import OrtprovError

if TYPE_CHECKING:
    from collections.abc import Callable

    from provisioner.installer.command import SignalGuard
    from provisioner.installer.events import ApplyResult, Listener
    from provisioner.installer.lock import ApplyLock


class ApplyFailed(OrtprovError):
    """A step failed or ortprov was interrupted; the environment was restored (or says it could not be)."""

    def __init__(
        self, message: str, result: ApplyResult, output: str = "", exit_code: int = 1, hint: str | None = None
    ) -> None:
        super().__init__(message, hint)
        self.result = result
        self.output = output
        self.exit_code = exit_code


@dataclass(frozen=True)
class Execution:
    """How the steps run: which tool, who hears about it, whether to ask."""

    tool: str  # uv | pip | micromamba, mamba or conda (--installer conda)
    listener: Listener
    uv: tuple[str, ...] | None = None
    verbose: bool = False
    yes: bool = False
    env: dict[str, str] | None = None  # extra environment for the installer
    hook_files: dict[str, bytes] | None = None  # the loader hook's files (installer/hook_files.hook_files)
    # run after the steps, before the snapshot goes: None keeps the change, a sentence restores it
    check: Callable[[], str | None] | None = None

    def tell(self, event: Any) -> None:
        self.listener.tell(event)


@dataclass(frozen=True)
class Session:
    """A locked target: the apply lock (installer/lock.py), the signal guard, and what settling an earlier
    apply's leftovers said (`recovered`: an environment was restored)."""

    prefix: str
    guard: SignalGuard
    lock: ApplyLock | None  # None: a dry run that may not write the lock file (it reads only)
    notes: tuple[str, ...] = ()
    recovered: bool = False

    def installer_fds(self) -> tuple[int, ...]:
        """The lock's descriptor, handed to each installer: one that outlived ortprov still holds the lock (not on
        Windows, where subprocess hands no descriptors: there the installer dies with ortprov, its job's end)."""
        if os.name == "nt":
            return ()
        return (self.lock.fd,) if self.lock is not None and self.lock.fd is not None else ()


__all__ = ["ApplyFailed", "Execution", "Session"]
