"""`ortprov download`: fill a wheelhouse with every wheel a plan installs, for any target Python and platform.

Each install step becomes one `pip download --only-binary=:all: --python-version X.Y --platform TAG ...` with
the step's own requirements and sources. The plan is saved next to the wheels (plan.json) so that
`ortprov apply --wheelhouse DIR` on the air-gapped host installs exactly that plan with --no-index.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from provisioner.plan import Plan, Step, source_options

PLAN_FILE = "plan.json"

_LEGACY = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}


def platform_tags(platform: str, glibc: str | None = None) -> list[str]:
    """pip --platform tags a host accepts, newest first (platform: linux-x86_64, windows-amd64 ...)."""
    os_name, _, arch = platform.partition("-")
    if os_name == "windows":
        return ["win_amd64"] if arch in ("amd64", "x86_64") else [f"win_{arch}"]
    if os_name != "linux":
        raise ValueError(f"unsupported platform {platform!r}")
    major, _, minor = (glibc or "2.28").partition(".")
    newest = int(minor) if major == "2" and minor.isdigit() else 28
    tags = []
    for glibc_minor in range(newest, 4, -1):
        tags.append(f"manylinux_2_{glibc_minor}_{arch}")
        if glibc_minor in _LEGACY and (glibc_minor != 5 or arch == "x86_64"):
            tags.append(f"{_LEGACY[glibc_minor]}_{arch}")
    return [*tags, f"linux_{arch}"]


def download_argv(
    step: Step, dest: Path, python_version: str, platforms: list[str], python: str = sys.executable
) -> list[str]:
    """The `pip download` command for one install step, from the same sources (and --no-deps) as installing it."""
    argv = [
        python,
        "-m",
        "pip",
        "download",
        "--dest",
        str(dest),
        "--only-binary=:all:",
        "--python-version",
        python_version,
        "--implementation",
        "cp",
    ]
    for tag in platforms:
        argv += ["--platform", tag]
    # --only-binary=:all: covers the step's own --only-binary NAMEs; pip reads a later name list as replacing it
    return [*argv, *source_options(dataclasses.replace(step, only_binary=())), *step.packages]


def target_of(plan: Plan) -> tuple[str | None, str | None, str | None]:
    """(python X.Y, platform tag, glibc) of the plan's first host, where known."""
    if not plan.hosts:
        return None, None, None
    host = plan.hosts[0]
    minor = host.python.minor if host.python else None
    return minor, host.platform.tag, host.platform.glibc


def save_plan(plan: Plan, dest: Path) -> Path:
    """Write the plan next to the wheels."""
    path = dest / PLAN_FILE
    path.write_text(plan.to_json() + "\n", encoding="utf-8")
    return path
