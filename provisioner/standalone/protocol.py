"""How a standalone program talks to ortprov: JSON objects on stdout, one a line, each after one marker.

Standard library only, Python 3.8+. A program `send`s its answer (the verify child's report, the package probe's
facts, the CUDA order) or its events (the tune child's answers and progress); ortprov (provisioner/childproc.py)
reads them with `messages` / `last`; the verify child marks each stage on stderr (`stage`). The marker keeps a
line that a library prints on stdout (onnxruntime, a user's sitecustomize) from being taken for an answer, and
an answer from being lost among such lines.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MARKER = "ortprov-json: "
# the verify child's progress on stderr, one line a stage: where a crash or a hang happened (verify/runner.py)
STAGE_PREFIX = "ortprov-verify-stage: "


def send(message: dict, stream: Any = None) -> None:
    """Write one message (a JSON object) on `stream` (default: sys.stdout) and flush it."""
    out = sys.stdout if stream is None else stream
    out.write(MARKER + json.dumps(message, default=str) + "\n")
    out.flush()


def stage(name: str) -> None:
    """Mark progress on stderr so the parent knows where a crash or hang happened."""
    sys.stderr.write(STAGE_PREFIX + name + "\n")
    sys.stderr.flush()


def message(line: str) -> dict | None:
    """The message a line carries: a JSON object after the marker; None for any other line."""
    if not line.startswith(MARKER):
        return None
    try:
        data = json.loads(line[len(MARKER) :])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def messages(text: str) -> list:
    """Every message in a program's output, in order."""
    found = []
    for line in text.splitlines():
        data = message(line)
        if data is not None:
            found.append(data)
    return found


def last(text: str) -> dict | None:
    """The last message in a program's output (its answer), or None when it sent none."""
    found = messages(text)
    return found[-1] if found else None
