"""The one way the tests run the ortprov CLI: as a user does, in a child process.

`run_ortprov(*args)` runs `python -m provisioner ARGS` with the interpreter running the tests (the dev
environment, tests/support/envs.DEV_PYTHON), from the checkout, with stdin not a terminal and no colour.
`env` is the whole environment of the run (default `cli_env()`: this one, less an active venv), `cache` its
ORTPROV_CACHE_DIR; `prefix` runs it under a wrapper (tests/gpu/hide_cudnn.sh ...). `ortprov_argv` is the same
command line, for a test that starts and signals the process itself.
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

from tests.support.envs import DEV_PYTHON, REPO

if TYPE_CHECKING:
    from pathlib import Path


def ortprov_argv(*args: str) -> list[str]:
    """The real CLI, run by the interpreter running the tests."""
    return [DEV_PYTHON, "-m", "provisioner", *args]


def cli_env(**extra: str) -> dict[str, str]:
    """This environment without an active venv (ortprov would target it), no colour, plus `extra`."""
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    return {**env, "NO_COLOR": "1", **extra}


def run_ortprov(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    input_text: str | None = None,
    prefix: tuple[str, ...] = (),
    cache: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `ortprov ARGS` to completion; stdin is `input_text` (default: empty), never a terminal. `cache`:
    the ORTPROV_CACHE_DIR of the run (a test's own matrix)."""
    env = cli_env() if env is None else dict(env)
    if cache is not None:
        env["ORTPROV_CACHE_DIR"] = str(cache)
    return subprocess.run(
        [*prefix, *ortprov_argv(*args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        input=input_text if input_text is not None else "",
    )
