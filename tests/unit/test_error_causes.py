"""Issue 23: error lines that state the cause. Each case used to end in a line that blamed something else (a
resolver conflict, a missing file, a folder), or in a value silently replaced (`--glibc abc` became 2.28) or
half-understood (`--gpu-cc ８.６`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import cli_env, run_ortprov
from tests.unit.test_fuzz_cli import run_in_process

if TYPE_CHECKING:
    from pathlib import Path

PLANNED = ("--driver", "580", "--gpu-cc", "9.0", "--python", "3.12")


@pytest.mark.parametrize(
    ("args", "cause"),
    [
        (("download", "--dest", "{tmp}/w", "--index-url", "notaurl", *PLANNED), "--index-url 'notaurl' is not a URL"),
        (
            ("apply", "--dry-run", "--extra-index-url", "pypi.org", *PLANNED),
            "--extra-index-url 'pypi.org' is not a URL",
        ),
        (("download", "--dest", "{tmp}/w", "--glibc", "abc", *PLANNED), "--glibc 'abc' is not a glibc version"),
        (("verify", "--model", "{tmp}"), "is a folder, not a file"),
        (("tune", "{tmp}"), "is a folder, not a file"),
        (("doctor", "--log", ""), "--log is empty: it names no file"),
        (("apply", "--dry-run", "--venv", ""), "--venv is empty: it names no folder"),
        (("plan", "--host", "--json"), "--host got '--json', an option, as its value"),
        (("verify", "--timeout", "99999999"), "--timeout 99999999 is longer than ortprov waits: at most 86400"),
        (("tune", "{tmp}/m", "--budget", "inf"), "--budget infinity is longer than ortprov waits"),
        (("verify", "--model", "{tmp}/m", "--dim", "batch=" + "9" * 5000), "--dim batch has 5000 digits"),
        (("matrix", "update", "--retries", "99999"), "--retries must be between 0 and 10"),
        (("tune", "{tmp}/m", "--shape", "x=1x" + "9" * 5000), "a size has 5000 digits"),
    ],
)
def test_the_error_line_names_the_cause(tmp_path: Path, args: tuple[str, ...], cause: str) -> None:
    (tmp_path / "m").write_bytes(b"\x08")
    code, _, stderr = run_in_process(*(arg.format(tmp=tmp_path) for arg in args))
    [line] = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert code == 2 and cause in line, stderr


@pytest.mark.parametrize("digits", ["８.６", "٨.٦", "８．６"])
def test_unicode_digits_are_read_as_the_digits_they_are(digits: str) -> None:
    code, out, stderr = run_in_process(
        "plan", "--json", "--driver", "５８０", "--gpu-cc", digits, "--python", "３.１２"
    )
    assert code == 0, stderr
    assert '"compute_capability": "8.6"' in out and '"version": "580"' in out and '"version": "3.12"' in out


@pytest.mark.parametrize("command", ["detect", "verify", "doctor"])
def test_python_x_y_names_that_python_on_path_where_a_command_examines_an_interpreter(
    tmp_path: Path, command: str
) -> None:
    """`--python 3.12` on detect/verify/doctor/tune: python3.12 on PATH (as uv reads it), or a line that says
    there is none and that `plan --python 3.12` plans for a version."""
    missing = run_ortprov(command, "--python", "3.99")
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: --python 3.99: no Python 3.99 here (python3.99 is not on PATH)")
    assert "`ortprov plan --python 3.12` plans for a version" in missing.stderr
    if command != "detect":
        return
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3.42").symlink_to(sys.executable)
    env = cli_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    found = run_ortprov("detect", "--python", "3.42", "--json", env=env)
    assert found.returncode == 0, found.stderr
    assert '"executable": "' + str(bin_dir / "python3.42") in found.stdout
