"""The one way ortprov starts a child (provisioner/childproc.py) and the one way a standalone program answers
(provisioner/standalone/protocol.py)."""

from __future__ import annotations

import ast
import io
import os
import sys
import time
from pathlib import Path

import pytest

from provisioner import childproc
from provisioner.standalone import protocol

PACKAGE = Path(__file__).resolve().parents[2] / "provisioner"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def test_a_timeout_kills_the_child_and_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    script = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    ended = childproc.run([sys.executable, "-c", script], timeout=2)
    assert ended.timed_out and ended.signal == "SIGKILL"
    assert time.monotonic() - started < 20
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "the grandchild outlived the timeout"


def test_a_child_dies_with_ortprov(tmp_path: Path) -> None:
    """A process that started a child through childproc is SIGKILLed: the child gets the parent-death signal."""
    pid_file = tmp_path / "child"
    parent = (
        "import os, signal, sys, time\n"
        f"sys.path.insert(0, {str(PACKAGE.parent)!r})\n"
        "from provisioner import childproc\n"
        "p = childproc.start([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    ended = childproc.run([sys.executable, "-c", parent], timeout=30)
    assert ended.signal == "SIGKILL"
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the child outlived its parent"


def test_text_is_utf8_with_undecodable_bytes_replaced() -> None:
    ended = childproc.run(
        [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'caf\\xc3\\xa9 \\xff')"], timeout=30
    )
    assert ended.stdout == "café \ufffd" and ended.returncode == 0 and not ended.timed_out


def test_the_answer_is_the_last_message_and_other_lines_are_ignored() -> None:
    out = io.StringIO()
    out.write("a library printed this\n")
    protocol.send({"n": 1}, out)
    out.write('{"looks": "like json but has no marker"}\n')
    protocol.send({"n": 2, "text": "é"}, out)
    out.write(protocol.MARKER + "{not json\n")
    out.write(protocol.MARKER + "[1, 2]\n")
    text = out.getvalue()
    assert protocol.messages(text) == [{"n": 1}, {"n": 2, "text": "é"}]
    assert protocol.last(text) == {"n": 2, "text": "é"}
    assert protocol.last("nothing here\n") is None


def test_an_answer_comes_back_through_a_real_child() -> None:
    program = f"import sys; sys.path.insert(0, {str(PACKAGE / 'standalone')!r}); import protocol; " + (
        "print('noise'); protocol.send({'ok': True})"
    )
    assert childproc.run([sys.executable, "-c", program], timeout=30).answer() == {"ok": True}


def test_no_module_starts_a_process_but_childproc() -> None:
    """One home for starting children: subprocess.run/Popen/call/check_output appear only in childproc.py and in
    the standalone programs (which run elsewhere, with the standard library alone)."""
    starters = {"run", "Popen", "call", "check_call", "check_output"}
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "childproc.py" or path.parent.name == "standalone":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "subprocess"
                and node.func.attr in starters
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not found, found


@pytest.mark.parametrize(
    ("stderr", "gist"),
    [
        ("", ""),
        ("Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'numpy'\n",
         "ModuleNotFoundError: No module named 'numpy'"),
        ('  File "probe.py", line 3\n    x := 1\n      ^\nSyntaxError: invalid syntax\n',
         "SyntaxError: invalid syntax"),
        ("MemoryError\n", "MemoryError"),
        ("Fatal Python error: init_fs_encoding\nPython runtime state: core initialized\n",
         "Fatal Python error: init_fs_encoding"),
        ("pyenv: python3.12: command not found\n\nThe `python3.12' command exists in these Python versions:\n"
         "  3.12.1\n\nNote: See 'pyenv help global' for tips on allowing both\n"
         "      python2 and python3 to be found at the same time.\n",
         "pyenv: python3.12: command not found"),
    ],
)  # fmt: skip
def test_the_gist_of_a_dead_childs_stderr_is_the_line_that_says_why(stderr: str, gist: str) -> None:
    assert childproc.stderr_gist(stderr) == gist


def test_the_gist_is_bounded() -> None:
    gist = childproc.stderr_gist("x" * 10_000 + "\nmore\n")
    assert len(gist) == childproc.GIST_CHARS and gist.endswith("...")
