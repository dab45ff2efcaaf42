"""The oldest typer pyproject.toml allows, with the click pip picks for it today: the CLI and its options work.

typer 0.12-0.15.3 do not exclude click 8.2+, and with it `ortprov plan --help` dies in click's make_metavar
(and 0.12 turns every option into a flag); the dev venv has the newest typer allowed, this test the oldest.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _typer_floor() -> str:
    found = re.search(r'"typer>=([0-9.]+),', (REPO / "pyproject.toml").read_text())
    assert found, "pyproject.toml names no typer floor"
    return found.group(1)


@pytest.mark.e2e
@pytest.mark.network
def test_the_oldest_allowed_typer_runs_the_cli(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    install = [str(python), "-m", "pip", "install", "-q", str(REPO), f"typer=={_typer_floor()}", "pytest"]
    subprocess.run(install, check=True, env=env, timeout=600)
    versions = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('typer'), m.version('click'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert versions[0].startswith(_typer_floor())
    tests = ["tests/unit/test_options.py", "tests/unit/test_cli_commands.py"]
    result = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=REPO,
        env=env | {"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"typer {versions[0]}, click {versions[1]}:\n{result.stdout[-3000:]}"
