"""apply's and download's results rendered. Both tell their progress on stderr as they work; apply's story ends
there (its text result is that narration), download's result is the wheelhouse it filled."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from provisioner.installer.flow import Wheelhouse


@dataclass(frozen=True)
class Applied:
    """`ortprov apply`: what the transaction did (installer.transaction.ApplyResult, or the dry run's plan of a
    venv still to be created) and the verify report; exit 1 when the verification failed or files are missing."""

    apply: Any
    verify: Any = None  # VerifyReport | None

    @property
    def exit_code(self) -> int:
        if any(finding.blocking for finding in getattr(self.apply, "findings", ())):
            return 1  # a distribution's RECORD does not match the disk (package-files-missing)
        return 1 if self.verify is not None and not self.verify.ok else 0

    def text(self) -> str:
        return ""  # told on stderr as it happened

    def data(self) -> Any:
        return {"apply": self.apply, "verify": self.verify}


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
