""".ci/run runs the README's "Set up" and "The full suite" commands as written: it reads them from README.md, so
they cannot drift."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

from tests.support.cli import run_ortprov

REPO = Path(__file__).resolve().parents[2]
CI_RUN = REPO / ".ci" / "run"


def ci_commands(root: Path) -> subprocess.CompletedProcess[str]:
    """`.ci/run --commands` in a checkout at `root`: the commands it would run, each ended by a NUL byte."""
    return subprocess.run(
        [str(root / ".ci" / "run"), "--commands"], capture_output=True, text=True, timeout=60, check=False
    )


def readme_blocks(readme: str, heading: str = "Set up") -> list[str]:
    """The fenced bash blocks of a README section, as a reader sees them."""
    section = readme.split(f"\n## {heading}\n")[1].split("\n## ")[0]
    return [part.split("\n```")[0] for part in section.split("```bash\n")[1:]]


def checkout_with(tmp_path: Path, readme: str) -> Path:
    """A copy of .ci/run beside another README.md."""
    (tmp_path / ".ci").mkdir(parents=True)
    shutil.copy2(CI_RUN, tmp_path / ".ci" / "run")
    (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    return tmp_path


def test_ci_runs_exactly_the_readme_setup_blocks() -> None:
    done = ci_commands(REPO)
    assert done.returncode == 0, done.stderr
    commands = done.stdout.split("\0")[:-1]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert commands == readme_blocks(readme) + readme_blocks(readme, "The full suite")
    install, tests, full = commands
    assert "pip install ." in install and "ortprov plan" in install
    assert "pip install -e '.[dev]'" in tests and "python -m pytest" in tests
    assert "python -m pytest" in full and "-m e2e" in full


def test_the_readme_leads_with_a_plan_that_works_on_any_machine() -> None:
    """The first `ortprov` command a newcomer runs plans for a described GPU host: exit 0 here, with no GPU (the
    plan for this machine comes after it, and exits 3 where there is no driver)."""
    install = ci_commands(REPO).stdout.split("\0")[0]
    lines = [line for line in install.splitlines() if line.startswith("ortprov ")]
    assert lines[-1] == "ortprov plan" and len(lines) >= 2
    first = run_ortprov(*shlex.split(lines[0])[1:])
    assert first.returncode == 0 and "onnxruntime-gpu" in first.stdout, first.stderr


def test_ci_follows_the_readme_when_it_changes(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    changed = readme.replace("python -m pytest -q -n auto", "python -m pytest -q -n auto -x")
    assert changed != readme
    done = ci_commands(checkout_with(tmp_path, changed))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\0")[1].endswith("python -m pytest -q -n auto -x")


def test_ci_refuses_a_readme_whose_setup_it_cannot_read(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    extra = readme.replace("## The full suite", "```bash\necho a third block\n```\n\n## The full suite", 1)
    done = ci_commands(checkout_with(tmp_path / "three", extra))
    assert done.returncode == 2 and "found 3" in done.stderr and not done.stdout
    done = ci_commands(checkout_with(tmp_path / "none", readme.replace("## Set up", "## Setup")))
    assert done.returncode == 2 and 'no "## Set up" section' in done.stderr and not done.stdout
    done = ci_commands(checkout_with(tmp_path / "nofull", readme.replace("## The full suite", "## Full")))
    assert done.returncode == 2 and 'no "## The full suite" section' in done.stderr and not done.stdout


def test_ci_uses_the_pip_that_venv_bundles() -> None:
    """A newcomer's `python3 -m venv` has the bundled pip: CI must not upgrade it and so hide what fails there."""
    script = CI_RUN.read_text(encoding="utf-8")
    assert "python3 -m venv" in script
    assert not any(words in script for words in ("--upgrade pip", "-U pip", "install pip"))
