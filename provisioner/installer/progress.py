"""Progress of a long installer run (pip, uv, micromamba), on the stream the command gives (its stderr).

On a terminal, one status line is redrawn in place while the installer works: what it last said it is doing,
the bytes its processes have written so far (the download as it arrives, then the unpacking: /proc/PID/io of
the installer and its children) and the rate, and the time. A run shorter than a second draws nothing, and
the line is wiped when the run ends. Off a terminal nothing is added: the caller prints one line per step.
Stdout is never touched.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

SHOW_AFTER = 1.0  # seconds before the line appears: a quick command draws nothing
INTERVAL = 0.25  # seconds between redraws
RATE_WINDOW = 3.0  # seconds the rate is averaged over
_URL = re.compile(r"\bhttps?://\S*/([^/\s]+)(?=\s|$)")  # a URL the installer prints: its file name is enough


def watch(pid: int, stream: Any) -> Progress | None:
    """A started Progress of process `pid` on `stream` when it is a terminal; None otherwise. (apply's listener,
    commands/apply.py, passes its stderr: the installer itself never picks a stream.)"""
    if not _is_terminal(stream):
        return None
    progress = Progress(pid, stream)
    progress.start()
    return progress


class Progress:
    """The status line of one running installer; `saw` each line it prints, `stop` when it ends."""

    def __init__(self, pid: int, stream: Any) -> None:
        self.pid = pid
        self.stream = stream
        self.activity = ""
        self.began = time.monotonic()
        self._samples: deque[tuple[float, int]] = deque()
        self._drawn = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ortprov-progress", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def saw(self, line: str) -> None:
        """The installer printed `line`: it becomes the activity shown (blank lines are skipped)."""
        if line.strip():
            self.activity = _URL.sub(r"\1", " ".join(line.split()))

    def stop(self) -> None:
        """Stop drawing and wipe the line."""
        self._done.set()
        self._thread.join(timeout=2)
        if self._drawn:
            self._write("\r" + " " * self._drawn + "\r")

    def _run(self) -> None:
        if self._done.wait(SHOW_AFTER):
            return
        while not self._done.is_set():
            self._draw()
            self._done.wait(INTERVAL)

    def _draw(self) -> None:
        now = time.monotonic()
        written = bytes_written(self.pid)
        parts = [self.activity or "working"]
        if written is not None:
            self._samples.append((now, written))
            while len(self._samples) > 2 and now - self._samples[0][0] > RATE_WINDOW:
                self._samples.popleft()
            first_time, first_written = self._samples[0]
            rate = (written - first_written) / (now - first_time) if now - first_time > 0.2 else 0.0
            parts.append(f"{human_bytes(written)} written, {human_bytes(rate)}/s")
        elapsed = int(now - self.began)
        parts.append(f"{elapsed // 60}:{elapsed % 60:02d}")
        text = status_line(parts, _width(self.stream) - 1)
        padding = " " * max(0, self._drawn - len(text))
        self._write("\r" + text + padding)
        self._drawn = len(text)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or full terminal: progress is no result
            self._done.set()


def status_line(parts: list[str], width: int) -> str:
    """`  activity · 1.24 GB written, 40 MB/s · 0:31`, the activity cut in the middle to fit `width`."""
    tail = " · " + " · ".join(parts[1:]) if len(parts) > 1 else ""
    room = max(10, width - 2 - len(tail))
    activity = parts[0]
    if len(activity) > room:
        keep = room - 3
        activity = activity[: keep // 2] + "..." + activity[len(activity) - (keep - keep // 2) :]
    return ("  " + activity + tail)[:width]


def bytes_written(pid: int) -> int | None:
    """Bytes written so far by process `pid` and its descendants (wchar of /proc/PID/io): a download is
    written to disk as it arrives (what is received from a socket is not counted by the kernel), then the
    install unpacks it. None where /proc cannot tell (not Linux, the process gone)."""
    total, seen, found = 0, set(), False
    pending = [pid]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        proc = Path(f"/proc/{current}")
        try:
            io = (proc / "io").read_text()
        except OSError:
            continue
        for line in io.splitlines():
            if line.startswith("wchar:"):
                total += int(line.split()[1])
                found = True
        pending.extend(_children(proc))
    return total if found else None


def _children(proc: Path) -> list[int]:
    found: list[int] = []
    try:
        tasks = list((proc / "task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found.extend(int(child) for child in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return found


def human_bytes(count: float) -> str:
    """1.24 GB, 312 MB, 4.1 kB, 12 B (powers of 1000, as pip and uv print sizes)."""
    for unit in ("B", "kB", "MB"):
        if count < 1000:
            return f"{count:.0f} {unit}" if unit == "B" or count >= 10 else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.2f} GB"


def _width(stream: Any) -> int:
    """The columns of the terminal `stream` writes to (else $COLUMNS, else 80)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or shutil.get_terminal_size((80, 24)).columns


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
