"""Snapshot and restore of the directories an installer writes to, byte for byte and offline, with a journal
that says, durably, what the snapshot is worth (docs/transaction.md: the states and what recovery does).

The snapshot is a hard-link copy of each install directory (site-packages, bin/) in `<prefix>/.ortprov-apply`:
cheap (no file content is copied, even for a multi-GB torch environment) and exact, because pip and uv never
rewrite an installed file in place: they unlink or rename it and write a new one, so the snapshot's links keep
the old bytes. Restoring makes each live directory identical to its snapshot: files whose inode differs are
replaced by links to the snapshot, files the installer added are removed.

`journal.json` says `snapshotting` while the links are made and `complete` (with each tree's entry count)
once they all are, written and synced before any installer runs. Only a complete journal whose trees still
hold that many entries is ever restored. The journal is the first thing to go when the snapshot is discarded
(renamed away and synced before anything else is deleted): a snapshot folder without a journal is a leftover
that nothing restores.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import struct
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provisioner.installer import faults

SNAPSHOT_DIRNAME = ".ortprov-apply"
LOCK_NAME = ".ortprov-apply.lock"  # installer/lock.py: never snapshotted nor restored (a conda prefix is one tree)
JOURNAL = "journal.json"
DISCARDED = "journal.discarded"
JOURNAL_VERSION = 2
BLOCKED_SHOWN = 5

# chattr flags (linux/fs.h): an immutable or append-only file cannot be unlinked or replaced, even by root
FS_IOC_GETFLAGS = 0x80086601
FS_IMMUTABLE_FL = 0x10
FS_APPEND_FL = 0x20

Held = Callable[[], AbstractContextManager[Any]]


@dataclass(frozen=True)
class Snapshot:
    """A taken snapshot: where it lives, which live directory each tree stands for, and the paths the apply
    could not change or put back (an immutable file, a folder this user may not write to)."""

    root: Path
    trees: tuple[tuple[str, str], ...]  # (live directory, tree directory inside root)
    files: int
    linked: bool  # False: some content was copied (no hard links on this filesystem)
    seconds: float
    blocked: tuple[str, ...] = ()  # "path: why"
    uv_lock_existed: bool = True


@dataclass(frozen=True)
class Journal:
    """What journal.json says."""

    state: str  # snapshotting | complete | unreadable (garbage, or written by an older ortprov)
    pid: int | None = None
    trees: tuple[tuple[str, str], ...] = ()
    entries: tuple[int, ...] = ()  # per tree, once complete
    uv_lock_existed: bool = True  # whether uv's `<prefix>/.lock` was there before the apply
    ended: str | None = None  # the apply ended (failed, interrupted) but its restore could not put back every path


@dataclass(frozen=True)
class Leftover:
    """What an earlier apply left in a target, and what recovery does with it (docs/transaction.md):
    kind none | leftover (a snapshot being removed: its journal already renamed away; delete) | incomplete (a
    snapshot being taken, its journal not yet complete or not yet written: delete, the environment was not
    touched yet) | complete (restore, then delete) | damaged (a complete journal whose trees miss entries, or an
    unreadable one: never restored)."""

    kind: str
    root: Path
    journal: Journal | None = None
    missing: int = 0  # damaged: entries its trees lack


@dataclass(frozen=True)
class Restored:
    """What a restore did: paths changed, and the paths it could not put back ("path: why")."""

    changed: int
    failed: tuple[str, ...] = ()


def snapshot_root(prefix: str) -> Path:
    """Where the snapshot of an environment with this prefix lives."""
    return Path(prefix) / SNAPSHOT_DIRNAME


def read_journal(root: Path) -> Journal | None:
    """The journal in a snapshot folder; None when it has none."""
    path = root / JOURNAL
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError:
        return Journal("unreadable")
    try:
        data = json.loads(text)
        if data.get("version") != JOURNAL_VERSION or data.get("state") not in ("snapshotting", "complete"):
            return Journal("unreadable", data.get("pid") if isinstance(data.get("pid"), int) else None)
        trees = tuple((str(live), str(tree)) for live, tree in data["trees"])
        entries = tuple(int(n) for n in data.get("entries") or ())
        pid = data["pid"] if isinstance(data.get("pid"), int) else None
        uv_lock_existed = data.get("uv_lock_existed") is not False
        ended = data["ended"] if isinstance(data.get("ended"), str) else None
    except (ValueError, TypeError, KeyError, AttributeError):
        return Journal("unreadable")
    if data["state"] == "complete" and len(entries) != len(trees):
        return Journal("unreadable", pid)
    return Journal(data["state"], pid, trees, entries, uv_lock_existed, ended)


def leftover(prefix: str) -> Leftover:
    """What an earlier apply left at `prefix` (read only; the caller holds the lock)."""
    root = snapshot_root(prefix)
    if not root.exists() and not root.is_symlink():
        return Leftover("none", root)
    journal = read_journal(root)
    if journal is None:  # discarding renames the journal first; taking writes it first (killed before it was)
        return Leftover("leftover" if (root / DISCARDED).exists() else "incomplete", root)
    if journal.state == "snapshotting":
        return Leftover("incomplete", root, journal)
    if journal.state != "complete":
        return Leftover("damaged", root, journal)
    counts = zip(journal.trees, journal.entries, strict=True)
    missing = sum(max(0, want - _count(Path(tree))) for (_, tree), want in counts)
    return Leftover("damaged" if missing else "complete", root, journal, missing)


def take(
    prefix: str,
    live_dirs: tuple[str, ...],
    distributions: dict[str, str],
    held: Held = contextlib.nullcontext,
    uv_lock_existed: bool = True,
) -> Snapshot:
    """Hard-link copy every live directory under <prefix>/.ortprov-apply, noting what cannot be changed; the
    journal says `snapshotting` first and `complete` (synced) last. `held` wraps the journal writes (signals
    wait)."""
    start = time.monotonic()
    root = snapshot_root(prefix)
    trees = tuple((live, str(root / f"tree-{number}")) for number, live in enumerate(live_dirs))
    journal: dict[str, Any] = {
        "version": JOURNAL_VERSION,
        "state": "snapshotting",
        "pid": os.getpid(),
        "started": time.time(),
        "trees": trees,
        "distributions": distributions,
        "uv_lock_existed": uv_lock_existed,
    }
    with held():
        if root.exists() or root.is_symlink():
            _remove_tree(root)
        root.mkdir(parents=True)
        _write_json(root / JOURNAL, journal, stage="journal-writing")
    faults.reached("snapshot-started")
    files, linked = 0, True
    entries: list[int] = []
    blocked: list[str] = []
    for number, (live, tree) in enumerate(trees):
        if number == 1:
            faults.reached("snapshot-linking")
        count, tree_entries, all_linked = _link_copy(Path(live), Path(tree), root, blocked)
        files += count
        entries.append(tree_entries)
        linked = linked and all_linked
    if len(trees) == 1:
        faults.reached("snapshot-linking")
    with held():
        _write_json(root / JOURNAL, {**journal, "state": "complete", "entries": entries, "files": files})
    return Snapshot(root, trees, files, linked, time.monotonic() - start, tuple(blocked), uv_lock_existed)


def restore(trees: tuple[tuple[str, str], ...]) -> Restored:
    """Make every live directory identical to its snapshot tree. Never raises for one path: what could not be
    put back is listed, and everything else is done."""
    changed, failed = 0, []
    for number, (live, tree) in enumerate(trees):
        if number == 1:
            faults.reached("restore-partial")
        done, errors = _sync(Path(tree), Path(live))
        changed += done
        failed += errors
    if len(trees) == 1:
        faults.reached("restore-partial")
    return Restored(changed, tuple(failed))


def mark_ended(root: Path, failure: str) -> None:
    """Say in the journal (durably) that its apply ended, with `failure`, and could not restore everything: the
    next apply then says it failed, not that it was killed. Best effort (the journal stays what it was)."""
    try:
        data = json.loads((root / JOURNAL).read_text(encoding="utf-8"))
        _write_json(root / JOURNAL, {**data, "ended": failure})
    except (OSError, ValueError):
        pass


def discard(root: Path) -> bool:
    """Remove a snapshot: its journal first (renamed away, synced), then the trees. True when all is gone (a
    folder left behind has no journal: the next apply removes it)."""
    journal = root / JOURNAL
    if journal.exists():
        os.replace(journal, root / DISCARDED)
        _fsync_dir(root)
    elif root.is_dir() and not (root / DISCARDED).exists():  # no journal yet: say "being removed" all the same
        with contextlib.suppress(OSError):
            (root / DISCARDED).touch()
            _fsync_dir(root)
    faults.reached("journal-discarded")
    trees = sorted(p for p in _listdir(root) if p.is_dir() and not p.is_symlink())
    for number, tree in enumerate(trees):
        if number == 0:
            entries = sorted(_listdir(tree))
            half = len(entries) // 2
            for entry in entries[:half]:
                _remove_tree(entry)
            faults.reached("discard-partial")
        _remove_tree(tree)
    if not trees:
        faults.reached("discard-partial")
    _remove_tree(root)
    gone = not root.exists()
    if gone:
        _fsync_dir(root.parent)
    faults.reached("discarded")
    return gone


# -- writing and removing -------------------------------------------------------------------------------------


def _write_json(path: Path, data: dict, stage: str | None = None) -> None:
    """Write `path` atomically and durably (the file, then its folder, synced). `stage`: the stage marker
    reached between the temporary file's write and its rename (the first journal's)."""
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(data, out)
        out.flush()
        os.fsync(out.fileno())
    if stage:
        faults.reached(stage)
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _listdir(path: Path) -> list[Path]:
    try:
        return list(path.iterdir())
    except OSError:
        return []


def _remove_tree(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _count(tree: Path) -> int:
    """Entries (files, symlinks, folders) under a tree, itself excluded."""
    total = 0
    for _, dirnames, filenames in os.walk(tree):
        total += len(dirnames) + len(filenames)
    return total


# -- taking -------------------------------------------------------------------------------------------------


def attribute_flags(path: Path) -> int:
    """The chattr flags of a file or folder (Linux; 0 elsewhere or when the file system has none)."""
    if not sys.platform.startswith("linux"):
        return 0
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return 0
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(8))[:4])[0])
    except OSError:
        return 0
    finally:
        os.close(fd)


def _unchangeable(path: Path, folder: bool) -> str | None:
    """Why the apply could not change (or put back) `path`, or None."""
    flags = attribute_flags(path)
    if flags & FS_IMMUTABLE_FL:
        return "immutable (chattr +i)"
    if flags & FS_APPEND_FL:
        return "append-only (chattr +a)"
    if folder and not os.access(path, os.W_OK | os.X_OK):
        try:
            owner = path.stat().st_uid
        except OSError:
            return "not writable by this user"
        return f"a folder of uid {owner} that this user (uid {os.geteuid()}) may not write to"
    return None


def _link_or_copy(src: Path, dst: Path) -> bool:
    try:
        os.link(src, dst, follow_symlinks=False)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EACCES):
            raise
        shutil.copy2(src, dst, follow_symlinks=False)
        return False


def _link_copy(live: Path, tree: Path, skip: Path, blocked: list[str]) -> tuple[int, int, bool]:
    """Link `live` into `tree`; (files, entries, all linked). Adds to `blocked` what cannot be changed."""
    count, entries, linked = 0, 0, True
    tree.mkdir(parents=True, exist_ok=True)
    if (why := _unchangeable(live, folder=True)) is not None:
        blocked.append(f"{live}: {why}")
    for dirpath, dirnames, filenames in os.walk(live):
        here = Path(dirpath)
        out = tree / here.relative_to(live)
        keep = []
        for name in dirnames:
            path = here / name
            if path == skip:
                continue
            entries += 1
            if path.is_symlink():
                os.symlink(os.readlink(path), out / name)
                count += 1
                continue
            (out / name).mkdir()
            shutil.copystat(path, out / name)
            if (why := _unchangeable(path, folder=True)) is not None:
                blocked.append(f"{path}: {why}")
            keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            path = here / name
            if here == skip.parent and name == LOCK_NAME:
                continue
            entries += 1
            count += 1
            if path.is_symlink():
                os.symlink(os.readlink(path), out / name)
                continue
            if not _link_or_copy(path, out / name):
                linked = False
                # link(2) refuses an immutable or append-only file with EPERM: such a file cannot be replaced
                if (why := _unchangeable(path, folder=False)) is not None:
                    blocked.append(f"{path}: {why}")
    return count, entries, linked


# -- restoring ------------------------------------------------------------------------------------------------


def _same(snap: os.stat_result, live: os.stat_result) -> bool:
    if stat.S_ISLNK(snap.st_mode) or stat.S_ISLNK(live.st_mode):
        return False  # compared by target
    return (snap.st_ino, snap.st_dev) == (live.st_ino, live.st_dev)


class _Failures:
    """Collects what a restore could not do, and carries on."""

    def __init__(self) -> None:
        self.items: list[str] = []

    @contextlib.contextmanager
    def attempt(self, path: Path) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            self.items.append(f"{path}: {exc.strerror or exc}")

    def rmtree(self, path: Path) -> None:
        def record(function: Any, failed: str, info: Any) -> None:
            exc = info[1] if isinstance(info, tuple) else info
            self.items.append(f"{failed}: {getattr(exc, 'strerror', None) or exc}")

        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=record)
        else:
            shutil.rmtree(path, onerror=record)


def _sync(tree: Path, live: Path) -> tuple[int, list[str]]:
    """Make `live` identical to `tree` (files, symlinks, folders): (paths changed, what could not be done)."""
    failures = _Failures()
    with failures.attempt(live):
        live.mkdir(parents=True, exist_ok=True)
    changed = _remove_what_differs(tree, live, failures)
    changed += _bring_back(tree, live, failures)
    return changed, failures.items


def _remove_what_differs(tree: Path, live: Path, failures: _Failures) -> int:
    """Remove from `live` what the snapshot `tree` does not have, or has differently (the snapshot's own folder,
    inside a conda prefix, and the lock stay): how many paths were removed."""
    changed = 0
    for dirpath, dirnames, filenames in os.walk(live):
        here = Path(dirpath)
        rel = here.relative_to(live)
        if here == live / SNAPSHOT_DIRNAME:  # a conda prefix is one tree: its snapshot lies inside it
            dirnames[:] = []
            continue
        keep = []
        for name in dirnames:
            path, snap = here / name, tree / rel / name
            if here == live and name == SNAPSHOT_DIRNAME:
                continue
            if not (path.is_symlink() or not snap.is_dir() or snap.is_symlink()):
                keep.append(name)  # a folder in both: walked into
            elif not (path.is_symlink() and snap.is_symlink() and os.readlink(path) == os.readlink(snap)):
                if path.is_symlink():
                    with failures.attempt(path):
                        path.unlink()
                else:
                    failures.rmtree(path)
                changed += 1
        dirnames[:] = keep
        for name in filenames:
            path = here / name
            if (path.parent == live and name == LOCK_NAME) or not _file_differs(path, tree / rel / name):
                continue
            with failures.attempt(path):
                path.unlink()
                changed += 1
    return changed


def _file_differs(path: Path, snap: Path) -> bool:
    """Whether the file (or link) `path` is not what the snapshot holds at `snap` (a path gone meanwhile is not)."""
    try:
        snap_stat = snap.lstat()
    except FileNotFoundError:
        return True
    try:
        live_stat = path.lstat()
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(snap_stat.st_mode) and stat.S_ISLNK(live_stat.st_mode):
        return os.readlink(snap) != os.readlink(path)
    return not _same(snap_stat, live_stat)


def _bring_back(tree: Path, live: Path, failures: _Failures) -> int:
    """Put back into `live` what the snapshot `tree` has and `live` lacks (folders, links, files hard-linked or
    copied): how many paths were put back."""
    changed = 0
    for dirpath, dirnames, filenames in os.walk(tree):
        here = Path(dirpath)
        out = live / here.relative_to(tree)
        for name in list(dirnames):
            src, dst = here / name, out / name
            if src.is_symlink():
                dirnames.remove(name)
                if not dst.is_symlink():
                    with failures.attempt(dst):
                        os.symlink(os.readlink(src), dst)
                        changed += 1
            elif not dst.is_dir() or dst.is_symlink():
                try:
                    dst.mkdir()
                    shutil.copystat(src, dst)
                    changed += 1
                except OSError as exc:
                    failures.items.append(f"{dst}: {exc.strerror or exc}")
                    dirnames.remove(name)  # nothing under it can be put back
        for name in filenames:
            src, dst = here / name, out / name
            if dst.is_symlink() or dst.exists():
                continue
            with failures.attempt(dst):
                if src.is_symlink():
                    os.symlink(os.readlink(src), dst)
                else:
                    _link_or_copy(src, dst)
                changed += 1
    return changed
