"""What an earlier apply left in a target, settled under the lock before anything else (docs/transaction.md: the
states and what recovery does): a leftover or a partial snapshot removed, a complete one restored, a damaged one
refused; a dry run only says what the next apply will do. And how an apply that stopped before its first step
says what it changed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from provisioner.errors import OrtprovError
from provisioner.installer import faults, snapshot
from provisioner.installer.events import Said
from provisioner.installer.lock import UV_LOCK, remove_unheld

if TYPE_CHECKING:
    from provisioner.installer.command import SignalGuard
    from provisioner.installer.events import Listener
    from provisioner.installer.session import Session


def settle(prefix: str, guard: SignalGuard, dry_run: bool, listener: Listener) -> tuple[tuple[str, ...], bool]:
    """Deal with what an earlier apply left in the target, as docs/transaction.md says; (notes, restored).

    The same journal gets the same words in a dry run (what the next apply does) and in an apply (what it did)."""
    left = snapshot.leftover(prefix)
    if left.kind == "none":
        return (), False
    pid = left.journal.pid if left.journal is not None else None
    who = f"an earlier apply (pid {pid})" if pid else "an earlier apply"
    root = left.root
    ended = left.journal.ended if left.journal is not None else None
    # what became of it: killed (its journal says nothing more), or failed and could not restore everything
    # what became of it: killed (its journal says nothing more), or stopped and could not restore everything
    fate = (
        f"stopped ({ended}) and its restore could not put everything back" if ended else "was killed before it finished"
    )
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
            "complete": f"{who} {fate}; the next apply restores its snapshot first",
        }[left.kind]
        listener.tell(Said(said))
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
        listener.tell(Said(said))
        return (said,), False
    assert left.journal is not None
    with guard.held():
        restored = snapshot.restore(left.journal.trees)
        if not restored.failed:
            snapshot.discard(root)
            if not left.journal.uv_lock_existed:
                remove_unheld(Path(prefix) / UV_LOCK)
    if restored.failed:
        raise OrtprovError(
            f"{who} {fate}; restoring its snapshot could not put back "
            f"{len(restored.failed)} paths: {listing(restored.failed)}",
            hint="make those paths writable (chattr -i, or as their owner), then run again: the snapshot is kept",
        )
    said = f"{who} {fate}; its snapshot was restored"
    listener.tell(Said(said))
    return (said,), True


def unchanged(session: Session | None) -> str:
    """How an apply that stopped before its first step says what it changed: nothing, or (it recovered an
    earlier apply first) only that."""
    if session is not None and session.recovered:
        return "an earlier apply's snapshot was restored first, and nothing else was changed"
    return "nothing was changed"


def listing(paths: tuple[str, ...] | list[str], shown: int = snapshot.BLOCKED_SHOWN) -> str:
    more = f" (and {len(paths) - shown} more)" if len(paths) > shown else ""
    return "; ".join(paths[:shown]) + more
