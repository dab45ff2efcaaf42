"""Issue 14: a long installer run shows its progress on stderr when it is a terminal (a real pty here), and
nothing more than the caller's step lines otherwise. The installer is a real child process that writes a file
(as a download does) while it prints what it is doing."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import sys
import termios
from typing import TYPE_CHECKING

from provisioner.installer import progress
from provisioner.installer.command import run_command

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

# what an installer does, in small: says what it downloads, writes 6 MB over ~2 s, says it is done
INSTALLER = """
import sys, time
print("Downloading http://127.0.0.1:1234/simple/nvidia-cublas/nvidia_cublas_cu12-12.4.5.8-py3-none-any.whl (6.0 MB)")
with open(sys.argv[1], "wb") as out:
    for _ in range(12):
        out.write(bytes(500_000)); out.flush(); time.sleep(0.17)
print("Successfully installed nvidia-cublas-cu12-12.4.5.8")
"""


def drain(fd: int) -> bytes:
    got = b""
    while select.select([fd], [], [], 0.2)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    return got


def test_a_terminal_sees_the_activity_the_bytes_and_the_rate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))  # a terminal 160 wide
    terminal = os.fdopen(follower, "w", encoding="utf-8")
    monkeypatch.setattr(sys, "stderr", terminal)
    result = run_command(
        [sys.executable, "-c", INSTALLER, str(tmp_path / "wheel")], watch=lambda pid: progress.watch(pid, terminal)
    )
    terminal.flush()
    shown = drain(leader).decode()
    terminal.close()
    os.close(leader)
    assert result.ok and "Successfully installed" in result.output  # the output is still captured whole
    frames = [frame for frame in shown.split("\r") if frame.strip()]
    assert frames, shown
    # the URL is cut to its file name; bytes written and the rate are counted from /proc
    assert any("Downloading nvidia_cublas_cu12-12.4.5.8-py3-none-any.whl (6.0 MB)" in f for f in frames), frames
    assert any(" MB written, " in f and "MB/s" in f for f in frames), frames
    assert all(len(frame) <= 159 for frame in frames)  # within the terminal's width
    assert "\n" not in shown  # one line, redrawn in place
    assert shown.endswith("\r") and not shown.rstrip("\r").strip(" ").split("\r")[-1]  # wiped at the end


def test_a_pipe_gets_nothing_and_a_quick_command_draws_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    assert run_command(
        [sys.executable, "-c", INSTALLER, str(tmp_path / "wheel")], watch=lambda pid: progress.watch(pid, piped)
    ).ok
    assert piped.getvalue() == ""
    leader, follower = pty.openpty()
    terminal = os.fdopen(follower, "w", encoding="utf-8")
    monkeypatch.setattr(sys, "stderr", terminal)
    assert run_command([sys.executable, "-c", "print('quick')"], watch=lambda pid: progress.watch(pid, terminal)).ok
    terminal.flush()
    assert drain(leader) == b""
    terminal.close()
    os.close(leader)


def test_the_status_line_fits_the_width() -> None:
    line = progress.status_line(["Downloading " + "x" * 200 + ".whl (1.6 GB)", "1.24 GB written, 40 MB/s", "0:31"], 80)
    assert len(line) <= 80 and line.endswith("· 1.24 GB written, 40 MB/s · 0:31") and "(1.6 GB)" in line
    assert [progress.human_bytes(n) for n in (12, 4_100, 312_000_000, 1_240_000_000)] == [
        "12 B",
        "4.1 kB",
        "312 MB",
        "1.24 GB",
    ]
