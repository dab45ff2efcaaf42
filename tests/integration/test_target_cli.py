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

# what a pyenv shim prints for a Python version it does not have (the last line is the end of its advice)
PYENV_SAYS = """pyenv: python3.12: command not found

The `python3.12' command exists in these Python versions:
  3.12.1

Note: See 'pyenv help global' for tips on allowing both
      python2 and python3 to be found at the same time.
"""
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
    elif kind == "pyenv-shim":  # a shim for a version pyenv does not have: an error, then advice, then 127
        path.write_text(f"#!/bin/sh\ncat >&2 <<'EOF'\n{PYENV_SAYS}EOF\nexit 127\n")
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
        (
            "pyenv-shim",
            "is not a working Python interpreter: it gave no answer (exit code 127: pyenv: python3.12: "
            "command not found)",
        ),
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


@pytest.mark.skipif(os.name == "nt", reason="shell script interpreters")
def test_a_version_found_on_path_that_fails_says_why_in_its_first_line(tmp_path: Path) -> None:
    """`verify --python 3.12` finds python3.12 on PATH; a pyenv shim there fails with a message of several lines:
    the error line carries its first (what failed), not the end of pyenv's advice."""
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python3.12"
    shim.write_text(f"#!/bin/sh\ncat >&2 <<'EOF'\n{PYENV_SAYS}EOF\nexit 127\n")
    shim.chmod(0o755)
    env = {**clean_env(tmp_path), "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        ortprov_argv("verify", "--python", "3.12"), env=env, cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2, result.stderr
    error = result.stderr.splitlines()[0]
    assert error == (
        f"error: --python 3.12 ({shim}, found on PATH) is not a working Python interpreter: it gave no answer "
        "(exit code 127: pyenv: python3.12: command not found)"
    )
    assert "at the same time" not in result.stderr
