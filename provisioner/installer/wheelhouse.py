"""`ortprov download`: fill a wheelhouse with every wheel a plan installs, for any target Python and platform.

Each install step becomes one `pip download --only-binary=:all: --python-version X.Y --platform TAG ...` with
the step's own requirements and sources. The plan is saved next to the wheels (plan.json) so that
`ortprov apply --wheelhouse DIR` on the air-gapped host installs exactly that plan with --no-index.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING

from provisioner.plan import Plan, Step, source_options
from provisioner.platforms import pip_platform_tags

if TYPE_CHECKING:
    from pathlib import Path

PLAN_FILE = "plan.json"


def platform_tags(platform: str, glibc: str | None = None) -> list[str]:
    """pip --platform tags a host accepts, newest first (platform: linux-x86_64, windows-amd64 ...)."""
    return pip_platform_tags(platform, glibc)


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


def unfit_for(folder: Path, names: frozenset[str], minor: str) -> dict[str, tuple[str, ...]]:
    """The distributions among `names` whose wheels in `folder` all need another Python than `minor` ("3.11"):
    name -> the Python tags its wheels have (cp312 ...). Read from the wheels' file names (their tags); a
    distribution with no wheel there is not judged here (the installer says what is missing)."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    wanted = tuple(int(part) for part in minor.rstrip("t").split(".")[:2])
    found: dict[str, list[str]] = {}
    fits: set[str] = set()
    for wheel in sorted(folder.glob("*.whl")):
        try:
            name, _, _, tags = parse_wheel_filename(wheel.name)
        except InvalidWheelFilename:
            continue
        if canonicalize_name(name) not in names:
            continue
        found.setdefault(str(name), []).extend(sorted({tag.interpreter for tag in tags}))
        if any(_python_fits(tag.interpreter, tag.abi, wanted) for tag in tags):
            fits.add(str(name))
    return {name: tuple(dict.fromkeys(tags)) for name, tags in found.items() if name not in fits}


def _python_fits(interpreter: str, abi: str, wanted: tuple[int, ...]) -> bool:
    """Whether a wheel's interpreter tag (py3, cp312, cp39 with abi3) runs on Python `wanted` (3, 11)."""
    digits = interpreter[2:]
    if interpreter.startswith("py"):
        return digits in ("", str(wanted[0])) or digits == "".join(map(str, wanted))
    if not interpreter.startswith("cp") or not digits.isdigit():
        return False
    tagged = (int(digits[0]), int(digits[1:] or 0))
    return tagged <= wanted if abi == "abi3" else tagged == wanted


def save_plan(plan: Plan, dest: Path) -> Path:
    """Write the plan next to the wheels."""
    path = dest / PLAN_FILE
    path.write_text(plan.to_json() + "\n", encoding="utf-8")
    return path
