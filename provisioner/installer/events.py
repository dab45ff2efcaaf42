"""apply's and download's data: what they tell while they work, and what apply returns. Each moment is one
small frozen event, handed to the Listener the command supplies. The installer never writes to stderr itself;
render/apply.py says each event in words (`event_line`), and the command decides where that goes (stderr) and
how to ask the user.

A Listener also answers the one question apply asks (`ask`: remove these packages?) and may draw a live status
line while an installer runs (`watch`). `Recorder` is the listener of code that runs apply without a terminal
(tests, a library caller): it keeps the events and asks nobody.

What apply did (ApplyResult, with its Changes and StepRuns) and what it proved (Verdict) live here too: data of
the core, rendered by render/apply.py, which imports no edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from provisioner.findings import Finding
    from provisioner.verify.report import VerifyReport


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
    """One step as it ran (or was skipped, or, in a dry run, would run)."""

    number: int
    kind: str
    argv: tuple[str, ...]
    returncode: int | None = None
    seconds: float = 0.0
    skipped: str | None = None
    packages: tuple[str, ...] = ()
    detail: str | None = None  # ortprov's own step: what it did or would do ("wrote ...", "already up to date")


# why a dry run cannot say what would change (ApplyResult.prediction)
UNKNOWN_CHANGES = {
    "no-dry-run": "the installer has no dry run",
    "new-venv": "the venv does not exist yet; its installer resolves the requirements once it does",
    "conda": "conda's part is resolved when it runs",
}


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
    own_files: tuple[str, ...] = ()  # files ortprov's own steps (the loader hook) wrote or removed
    prediction: str = "known"  # dry run: known, or why the changes are unknown (UNKNOWN_CHANGES)
    create_venv: str | None = None  # dry run: the venv the real run creates first
    create_python: str | None = None  # ... with this Python (X.Y)


@dataclass(frozen=True)
class Verdict:
    """What the apply proved about the environment it leaves (README: exit codes).

    proven: session (a CUDA session ran on the GPU and agreed with the CPU) | static (every library the CUDA
    provider needs resolves in the target; no session ran) | none. unproven: why no CUDA session was proven:
    no-driver (this machine has no NVIDIA driver) | verify-static | no-verify | failed | dry-run | None (one was).
    failure: why the verification failed (the installation was restored, or kept with --keep: exit 1)."""

    proven: str
    unproven: str | None = None
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


class Watch(Protocol):
    """A live status line of one running installer (installer/progress.py draws one on a terminal)."""

    def saw(self, line: str) -> None:
        """The installer printed `line`."""
        ...

    def stop(self) -> None:
        """The installer ended: wipe the line."""
        ...


class Listener(Protocol):
    """What the command hands apply and download: where their events go, and who answers their question."""

    def tell(self, event: Event) -> None:
        """Something happened (see the event types below)."""
        ...

    def ask(self, question: str) -> bool | None:
        """A yes/no question to the user; None when there is nobody to ask (no terminal)."""
        ...

    def watch(self, pid: int) -> Watch | None:
        """A status line for the installer process `pid` while it runs; None draws nothing."""
        ...


@dataclass(frozen=True)
class Said:
    """A sentence of its own. level: note | warning | error (a finding) | "" (said as it is)."""

    text: str
    level: str = "note"


@dataclass(frozen=True)
class VenvCreated:
    venv: str
    version: str


@dataclass(frozen=True)
class VenvRemoved:
    """The venv apply created is removed again: no plan could be made for it."""

    venv: str


@dataclass(frozen=True)
class Planned:
    package: str
    version: str
    cuda: str
    cudnn: str | None
    python: str


@dataclass(frozen=True)
class SnapshotTaken:
    files: int
    prefix: str
    linked: bool  # False: some content had to be copied
    seconds: float


@dataclass(frozen=True)
class StepStarted:
    """An installer step starts: its number of `total`, and the exact command."""

    number: int
    total: int
    kind: str
    packages: tuple[str, ...]
    argv: tuple[str, ...]


@dataclass(frozen=True)
class StepSkipped:
    number: int
    total: int
    kind: str
    packages: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class StepFinished:
    """An installer step succeeded after `seconds`."""

    seconds: float


@dataclass(frozen=True)
class OwnStepDone:
    """ortprov's own step (the loader hook): what it changed, or why nothing."""

    number: int
    total: int
    summary: str
    did: str


@dataclass(frozen=True)
class InstallerLine:
    """A line the installer printed (told as it comes with -v)."""

    line: str


@dataclass(frozen=True)
class InstallerTail:
    """The last lines of a failed installer's output (without -v, where they were not shown)."""

    tool: str
    text: str


@dataclass(frozen=True)
class AlreadySatisfied:
    python: str


@dataclass(frozen=True)
class Committed:
    """The change is final: the distributions that changed, and ortprov's own files (the loader hook)."""

    changes: tuple[Change, ...]
    own_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Restoring:
    failure: str


@dataclass(frozen=True)
class SignalsHeld:
    """Signals came during the restore and waited for it to finish."""


@dataclass(frozen=True)
class VerifyStarted:
    static: bool
    python: str
    provider: str = "cuda"  # cuda | tensorrt (a plan with TensorRT from wheels or a folder)


@dataclass(frozen=True)
class VerifyEnded:
    report: VerifyReport


@dataclass(frozen=True)
class DownloadStarted:
    number: int
    total: int
    packages: tuple[str, ...]
    python_version: str
    platform: str


Event = (
    Said
    | VenvCreated
    | VenvRemoved
    | Planned
    | SnapshotTaken
    | StepStarted
    | StepSkipped
    | StepFinished
    | OwnStepDone
    | InstallerLine
    | InstallerTail
    | AlreadySatisfied
    | Committed
    | Restoring
    | SignalsHeld
    | VerifyStarted
    | VerifyEnded
    | DownloadStarted
)


class Recorder:
    """A Listener that keeps every event and asks nobody (tests, callers without a terminal)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def tell(self, event: Event) -> None:
        self.events.append(event)

    def ask(self, question: str) -> bool | None:
        return None

    def watch(self, pid: int) -> Watch | None:
        return None
