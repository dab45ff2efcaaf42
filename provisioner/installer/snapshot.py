"""Snapshot and restore of the directories an installer writes to, byte for byte and offline.

The snapshot is a hard-link copy of each install directory (site-packages, bin/) inside the target's prefix:
cheap (no file content is copied, even for a multi-GB torch environment) and exact, because pip and uv never
rewrite an installed file in place: they unlink or rename it and write a new one, so the snapshot's links keep
the old bytes. Restoring makes each live directory identical to its snapshot: files whose inode differs are
replaced by links to the snapshot, files the installer added are removed. A journal file next to the
snapshot lets a later run restore an environment whose `apply` was killed outright (SIGKILL, power loss).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

SNAPSHOT_DIRNAME = ".ortprov-apply"
JOURNAL = "journal.json"


@dataclass(frozen=True)
class Snapshot:
    """A taken snapshot: where it lives and which live directory each tree stands for."""

    root: Path
    trees: tuple[tuple[str, str], ...]  # (live directory, tree directory inside root)
    files: int
    linked: bool  # False: content was copied (no hard links on this filesystem)
    seconds: float


def snapshot_root(prefix: str) -> Path:
    """Where the snapshot of an environment with this prefix lives."""
    return Path(prefix) / SNAPSHOT_DIRNAME


def pending_journal(prefix: str) -> dict | None:
    """The journal of an earlier apply that never finished (it was killed), or None."""
    path = snapshot_root(prefix) / JOURNAL
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("state") == "applying" else None


def take(prefix: str, live_dirs: tuple[str, ...], distributions: dict[str, str]) -> Snapshot:
    """Hard-link copy every live directory under <prefix>/.ortprov-apply and write the journal."""
    start = time.monotonic()
    root = snapshot_root(prefix)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    trees = []
    files = 0
    linked = True
    for number, live in enumerate(live_dirs):
        tree = root / f"tree-{number}"
        count, all_linked = _link_copy(Path(live), tree, skip=root)
        files += count
        linked = linked and all_linked
        trees.append((live, str(tree)))
    journal = {
        "state": "applying",
        "pid": os.getpid(),
        "started": time.time(),
        "trees": trees,
        "distributions": distributions,
    }
    _write_json(root / JOURNAL, journal)
    return Snapshot(root, tuple(trees), files, linked, time.monotonic() - start)


def restore(snapshot_trees: tuple[tuple[str, str], ...] | list) -> int:
    """Make every live directory identical to its snapshot tree; returns the number of paths changed."""
    changed = 0
    for live, tree in snapshot_trees:
        changed += _sync(Path(tree), Path(live))
    return changed


def discard(root: Path) -> None:
    """Remove the snapshot (after success, or after a restore)."""
    shutil.rmtree(root, ignore_errors=True)


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def _link_or_copy(src: Path, dst: Path) -> bool:
    try:
        os.link(src, dst, follow_symlinks=False)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EACCES):
            raise
        shutil.copy2(src, dst, follow_symlinks=False)
        return False


def _link_copy(live: Path, tree: Path, skip: Path) -> tuple[int, bool]:
    count, linked = 0, True
    tree.mkdir(parents=True, exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(live):
        here = Path(dirpath)
        out = tree / here.relative_to(live)
        keep = []
        for name in dirnames:
            path = here / name
            if path == skip:
                continue
            if path.is_symlink():
                os.symlink(os.readlink(path), out / name)
                count += 1
            else:
                (out / name).mkdir()
                shutil.copystat(path, out / name)
                keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            path = here / name
            if path.is_symlink():
                os.symlink(os.readlink(path), out / name)
            else:
                linked = _link_or_copy(path, out / name) and linked
            count += 1
    return count, linked


def _same(snap: os.stat_result, live: os.stat_result) -> bool:
    if stat.S_ISLNK(snap.st_mode) or stat.S_ISLNK(live.st_mode):
        return False  # compared by target below
    return (snap.st_ino, snap.st_dev) == (live.st_ino, live.st_dev)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _sync(tree: Path, live: Path) -> int:
    """Make `live` identical to `tree` (files, symlinks, directories); returns paths changed."""
    changed = 0
    live.mkdir(parents=True, exist_ok=True)
    # 1. remove what the snapshot does not have, or has differently
    for dirpath, dirnames, filenames in os.walk(live):
        here = Path(dirpath)
        rel = here.relative_to(live)
        if here == live / SNAPSHOT_DIRNAME or (tree / rel).is_symlink():
            dirnames[:] = []
            continue
        keep = []
        for name in dirnames:
            path, snap = here / name, tree / rel / name
            if here == live and name == SNAPSHOT_DIRNAME:
                continue
            if path.is_symlink() or not snap.is_dir() or snap.is_symlink():
                if not (path.is_symlink() and snap.is_symlink() and os.readlink(path) == os.readlink(snap)):
                    _remove(path)
                    changed += 1
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            path, snap = here / name, tree / rel / name
            try:
                snap_stat = snap.lstat()
            except FileNotFoundError:
                path.unlink()
                changed += 1
                continue
            live_stat = path.lstat()
            if stat.S_ISLNK(snap_stat.st_mode) and stat.S_ISLNK(live_stat.st_mode):
                if os.readlink(snap) == os.readlink(path):
                    continue
            elif _same(snap_stat, live_stat):
                continue
            path.unlink()
            changed += 1
    # 2. bring back what is missing
    for dirpath, dirnames, filenames in os.walk(tree):
        here = Path(dirpath)
        out = live / here.relative_to(tree)
        for name in list(dirnames):
            src, dst = here / name, out / name
            if src.is_symlink():
                dirnames.remove(name)
                if not dst.is_symlink():
                    os.symlink(os.readlink(src), dst)
                    changed += 1
            elif not dst.exists():
                dst.mkdir()
                shutil.copystat(src, dst)
                changed += 1
        for name in filenames:
            src, dst = here / name, out / name
            if dst.is_symlink() or dst.exists():
                continue
            if src.is_symlink():
                os.symlink(os.readlink(src), dst)
            else:
                _link_or_copy(src, dst)
            changed += 1
    return changed
