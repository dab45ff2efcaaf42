"""`--base cuda`: one plan, rendered (DESIGN principle 4). The nvidia/cuda image supplies CUDA and cuDNN, so the
plan for that base installs no NVIDIA wheels, and `plan --json --base cuda` says exactly what the `--base cuda`
Dockerfile installs: each of its pip RUN lines is the JSON's install step, as `plan.step_argv` writes it."""

from __future__ import annotations

import io
import json

import pytest

from provisioner.plan import Plan, step_argv
from provisioner.render.recipes import VENV_PYTHON
from tests.support.cli import run_ortprov

H100 = ("--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-x86_64")
CASES = {
    "h100": H100,
    "h100 --tensorrt": (*H100, "--tensorrt"),
    "aarch64": ("--driver", "580", "--gpu-cc", "9.0", "--python", "3.12", "--platform", "linux-aarch64"),
    "cuda 12, older driver": ("--driver", "550.54.15", "--gpu-cc", "8.6", "--python", "3.11", "--cuda", "12"),
    "torch host file": ("--host", "tests/hosts/linux-l4-driver580-torch28-cu12.json"),
}


def _pip_runs(dockerfile: str) -> list[list[str]]:
    """The exec-form RUN lines that run pip, as argv (the `env NAME=value` prefix left out)."""
    from dockerfile_parse import DockerfileParser

    parser = DockerfileParser(fileobj=io.BytesIO(dockerfile.encode()))
    found = []
    for item in parser.structure:
        if item["instruction"] != "RUN" or not item["value"].startswith("["):
            continue
        argv = json.loads(item["value"])
        while argv and (argv[0] == "env" or "=" in argv[0]):
            argv = argv[1:]
        if argv[:3] == [VENV_PYTHON, "-m", "pip"]:
            found.append(argv)
    return found


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_plan_json_for_base_cuda_is_what_its_dockerfile_installs(case: str) -> None:
    flags = CASES[case]
    shown = run_ortprov("plan", "--json", "--base", "cuda", *flags)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    built = run_ortprov("dockerfile", "--base", "cuda", *flags)
    assert built.returncode == 0, built.stderr
    plan = Plan.from_dict(data)
    installs = [step for step in plan.steps if step.kind == "install"]
    assert installs and _pip_runs(built.stdout) == [step_argv(step, "pip", VENV_PYTHON) for step in installs]
    packages = [p for step in installs for p in step.packages]
    assert not any(p.lower().startswith("nvidia-") for p in packages), packages  # the image supplies them
    assert data["pins"] == [] and not any("[" in p for p in packages)  # no extras that pull NVIDIA wheels


def test_base_slim_keeps_the_nvidia_wheels() -> None:
    """Only the cuda base changes the plan: the default plans the NVIDIA wheels (what the slim image installs)."""
    data = json.loads(run_ortprov("plan", "--json", *H100).stdout)
    assert data["pins"] and any(p.startswith("nvidia-") for s in data["steps"] for p in s["packages"])
    assert data == json.loads(run_ortprov("plan", "--json", "--base", "slim", *H100).stdout)
