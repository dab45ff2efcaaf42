"""One target resolver: the same bad `--python` gets the same sentence (exit 2, no traceback) from every command
that has a target, within a few seconds, run through the real CLI."""

from __future__ import annotations

import os
import subprocess
import time
from typing import TYPE_CHECKING

import pytest

from provisioner.probe.target import START_TIMEOUT
from tests.support.cli import ortprov_argv
from tests.support.envs import REPO, clean_env

if TYPE_CHECKING:
    from pathlib import Path

COMMANDS = (("detect",), ("plan",), ("verify",), ("doctor",), ("apply", "--dry-run"))


def bad_target(kind: str, tmp_path: Path) -> str:
    """A --python value that is no working Python interpreter."""
    if kind == "missing":
        return str(tmp_path / "missing" / "python")
    if kind == "not-on-path":
        return "ortprov-no-such-python"
    if kind == "empty-folder":
        (tmp_path / "venv").mkdir()
        return str(tmp_path / "venv")
    path = tmp_path / "python"
    if kind == "true":
        return "/bin/true"  # runs, says nothing, exits 0
    if kind == "not-executable":
        path.write_text("#!/bin/sh\nexit 0\n")
    elif kind == "hangs":
        path.write_text("#!/bin/sh\nsleep 60\n")
    elif kind == "exits-1":
        path.write_text("#!/bin/sh\necho 'Fatal Python error: init_fs_encoding' >&2\nexit 1\n")
    elif kind == "not-a-program":
        path.write_bytes(b"\x00\x01\x02 not a program")
    if kind != "not-executable":
        path.chmod(0o755)
    return str(path)


@pytest.mark.skipif(os.name == "nt", reason="shell script interpreters")
@pytest.mark.parametrize(
    ("kind", "sentence"),
    [
        ("missing", "does not exist"),
        ("not-on-path", "does not exist"),
        ("empty-folder", "is a folder without a Python interpreter"),
        ("not-executable", "is not executable"),
        ("true", "is not a working Python interpreter: it gave no answer (exit code 0)"),
        ("exits-1", "is not a working Python interpreter: it gave no answer (exit code 1: Fatal Python error"),
        ("not-a-program", "is not a working Python interpreter: it could not be started (Exec format error)"),
        ("hangs", f"is not a working Python interpreter: it did not answer within {START_TIMEOUT:g} s (killed)"),
    ],
)
def test_a_bad_target_is_the_same_sentence_from_every_command(kind: str, sentence: str, tmp_path: Path) -> None:
    python = bad_target(kind, tmp_path)
    env = clean_env(tmp_path)
    started = time.monotonic()
    running = [
        subprocess.Popen(
            ortprov_argv(*command, "--python", python),
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in COMMANDS
    ]
    answers = {command[0]: process.communicate(timeout=120) for command, process in zip(COMMANDS, running, strict=True)}
    elapsed = time.monotonic() - started
    codes = {command[0]: process.returncode for command, process in zip(COMMANDS, running, strict=True)}
    assert codes == {command[0]: 2 for command in COMMANDS}, answers
    stderrs = {name: err for name, (_, err) in answers.items()}
    first = stderrs["detect"]
    assert first.startswith(f"error: --python {python!r} {sentence}"), first
    assert len(first.strip().splitlines()) == 2 and first.splitlines()[1].startswith("hint: ")  # a line and a hint
    assert all(err == first for err in stderrs.values()), stderrs  # the same sentence, word for word
    assert all(out == "" for out, _ in answers.values())
    assert elapsed < START_TIMEOUT + 15  # five CLIs at once on a small machine: a few seconds, not a minute
