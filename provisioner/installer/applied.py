"""What the last apply into a prefix carried out, saved there: `<prefix>/.ortprov-applied.json`, the plan with the
sources it was installed from (a wheelhouse: --no-index --find-links DIR; a mirror; more indexes).

Doctor's fixes re-apply this plan (`ortprov apply --python P --plan FILE`), so that a fix runs where the user is
(offline, from the same wheelhouse) and pins what that apply pinned, not whatever is newest on the index today.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from provisioner.plan import Plan

APPLIED_FILE = ".ortprov-applied.json"


def applied_path(prefix: str | Path) -> Path:
    """Where an apply into `prefix` saves its plan."""
    return Path(prefix) / APPLIED_FILE


def save_applied(prefix: str | Path, plan: Plan) -> None:
    """Save the plan an apply carried out into `prefix` (whole, or not at all: a failure to write is no reason to
    fail an apply that worked)."""
    path = applied_path(prefix)
    temporary = path.with_name(f".{APPLIED_FILE}.tmp")
    with contextlib.suppress(OSError):
        temporary.write_text(plan.to_json() + "\n", encoding="utf-8")
        os.replace(temporary, path)


__all__ = ["APPLIED_FILE", "applied_path", "save_applied"]
