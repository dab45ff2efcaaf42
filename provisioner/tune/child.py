"""The tune child as a process: started in the target interpreter, asked one request at a time, stopped.

One child process (the target's Python, a new session group) runs standalone/tune_child.py and answers one JSON
request at a time. Every answer is awaited with a timeout; a child that hangs or dies is killed and its answer
becomes {"event": "lost", "status": "timeout"|"crashed"}; the next request starts a fresh one. ONNX Runtime's log
lines on the child's stderr are kept with the request they came in (the child marks each request's start and end
there): `last_log` after each answer.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
from typing import TYPE_CHECKING, Any

from provisioner import childproc, standalone
from provisioner.serde import from_jsonable
from provisioner.standalone import protocol
from provisioner.tune.report import Runtime, clean_log_text

if TYPE_CHECKING:
    from collections.abc import Callable

CHILD_SCRIPT = standalone.path("tune_child.py")
MARK = "ortprov-tune-mark: "
END = "ortprov-tune-end: "
START_TIMEOUT_S = 60.0  # importing onnxruntime (a GPU build loads its libraries later, at the first session)
LOG_LINES_KEPT = 12
FALLBACK_LINES_KEPT = 500  # cuDNN's fallback notices: one per Conv node, all kept (the analysis counts them)
_STAMP = re.compile(r"^\S*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ ")
_NOISE = re.compile(r"^\s*$")


class TuneChild:
    """The tune child: started, asked one request at a time, stopped; restarted after a timeout or a crash."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.process: subprocess.Popen[str] | None = None
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        self.lock = threading.Lock()
        self.next_id = 0
        self.last_log: list[tuple[str, int]] = []
        self.runtime: Runtime | None = None

    def start(self, timeout: float) -> Runtime:
        self.events = queue.Queue()
        self.stderr = []
        try:
            # its own group and the parent-death signal, like every child (provisioner/childproc.py)
            self.process = childproc.start(
                [self.python, str(CHILD_SCRIPT)], env=childproc.python_env(), stdin=childproc.PIPE, line_buffered=True
            )
        except OSError as exc:
            return Runtime(python=self.python, python_version="", error=f"cannot start it: {exc}")
        threading.Thread(target=self._read_events, args=(self.process,), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(self.process,), daemon=True).start()
        ready = self._wait(None, timeout)
        if ready.get("event") != "ready":
            why = ready.get("reason") or "no ready event"
            self.stop()
            return Runtime(python=self.python, python_version="", error=why)
        fields = {k: v for k, v in ready.items() if k not in ("event",)}
        self.runtime = from_jsonable(Runtime, fields)
        return self.runtime

    def ask(
        self, request: dict[str, Any], timeout: float, on_progress: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        """Send one request; its answer, or {"event": "lost", "status": "timeout"|"crashed", "reason": ...}."""
        if self.process is None or self.process.poll() is not None:
            self.start(START_TIMEOUT_S)
        if self.process is None or self.process.stdin is None:
            return {"event": "lost", "status": "crashed", "reason": "the tune child could not be started"}
        self.next_id += 1
        request_id = self.next_id
        with self.lock:
            mark = len(self.stderr)
        try:
            self.process.stdin.write(json.dumps({"id": request_id, **request}) + "\n")
            self.process.stdin.flush()
        except OSError:
            pass
        answer = self._wait(request_id, timeout, on_progress)
        time.sleep(0.05)  # the END mark and the last log lines trail the answer on the other pipe
        with self.lock:
            self.last_log = _log_lines(self.stderr[mark:], request_id)
        if answer.get("event") == "lost":
            self.stop()
        return answer

    def _wait(
        self, request_id: int | None, timeout: float, on_progress: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + max(timeout, 1.0)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return {"event": "lost", "status": "timeout", "reason": f"no answer within {timeout:.0f} s"}
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if event is None:
                return {"event": "lost", "status": "crashed", "reason": self._death()}
            if event.get("event") == "progress":
                if on_progress is not None:
                    on_progress(event)
                continue
            if request_id is None or event.get("id") == request_id:
                return event

    def _death(self) -> str:
        process = self.process
        code = process.wait(timeout=5) if process is not None else None
        with self.lock:
            tail = [line for line in self.stderr if line.strip() and not line.startswith((MARK, END))][-3:]
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        return f"the tune child died ({how})" + (f": {' | '.join(tail)}" if tail else "")

    def _read_events(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            event = protocol.message(line)
            if event is not None:
                self.events.put(event)
        self.events.put(None)

    def _read_stderr(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            with self.lock:
                self.stderr.append(line.rstrip("\n"))

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                if process.stdin is not None:
                    process.stdin.write(json.dumps({"op": "quit"}) + "\n")
                    process.stdin.flush()
                process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                childproc.kill_group(process)
                process.wait(timeout=5)


def _log_lines(lines: list[str], request_id: int) -> list[tuple[str, int]]:
    """ONNX Runtime's lines between the request's marks, time stamps stripped, counted, the first few kept."""
    inside = False
    counts: dict[str, int] = {}
    for line in lines:
        if line.startswith(MARK):
            inside = line[len(MARK) :].strip() == str(request_id)
            continue
        if line.startswith(END):
            inside = False
            continue
        if inside and not _NOISE.match(line):
            text = _STAMP.sub("", clean_log_text(line)).strip()
            cap = FALLBACK_LINES_KEPT if "Fallback mode" in text else LOG_LINES_KEPT
            if text in counts or len(counts) < cap:
                counts[text] = counts.get(text, 0) + 1
    return list(counts.items())
