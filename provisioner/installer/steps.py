"""Turn a plan's steps into the exact commands for one target and installer (via plan.step_argv)."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.plan import Plan, Step, canonical, step_argv

if TYPE_CHECKING:
    from provisioner.installer.venv import Distributions, Target


def with_sources(
    plan: Plan,
    *,
    index_url: str | None = None,
    extra_index_urls: tuple[str, ...] = (),
    find_links: tuple[str, ...] = (),
    no_index: bool = False,
) -> Plan:
    """The plan with package sources set on its install steps (mirrors, test indexes, a wheelhouse). A step
    pinned to its own index (TensorRT's wheels, --only-binary from NVIDIA's index or --tensorrt-index-url) keeps
    it: a PyPI mirror has only the stubs. A wheelhouse (find-links, --no-index) serves every step."""
    if not (index_url or extra_index_urls or find_links or no_index):
        return plan
    steps = tuple(
        dataclasses.replace(
            step,
            index_url=step.index_url if pinned else (index_url or step.index_url),
            extra_index_urls=step.extra_index_urls if pinned else (*step.extra_index_urls, *extra_index_urls),
            find_links=(*step.find_links, *find_links),
            no_index=no_index or step.no_index,
        )
        if step.kind == "install"
        else step
        for step in plan.steps
        for pinned in [bool(step.only_binary and step.index_url)]
    )
    return dataclasses.replace(plan, steps=steps)


@dataclass(frozen=True)
class Command:
    """One step as it will run: the argv, or why it is skipped."""

    number: int
    step: Step
    argv: tuple[str, ...]
    skipped: str | None = None  # "nothing to uninstall: onnxruntime is not installed"


def commands_for(
    plan: Plan,
    target: Target,
    installed: Distributions,
    tool: str,
    uv: tuple[str, ...] | None,
    *,
    system: bool = False,
) -> list[Command]:
    """The commands for every step; uninstall steps keep only distributions the target has."""
    out = []
    bsp = system and target.externally_managed
    for number, step in enumerate(plan.steps, 1):
        if step.done_by_ortprov:
            out.append(Command(number, step, ()))  # carried out by ortprov itself (the loader hook)
            continue
        if step.kind == "uninstall":
            present = tuple(p for p in step.packages if canonical(p) in installed)
            if not present:
                names = ", ".join(step.packages)
                out.append(Command(number, step, (), f"nothing to uninstall: {names} not installed"))
                continue
            step = dataclasses.replace(step, packages=present)
        argv = step_argv(step, tool, target.python, break_system_packages=bsp)
        if tool == "uv" and uv:
            argv = [*uv, *argv[1:]]
        out.append(Command(number, step, tuple(argv)))
    return out


def dry_run_argv(command: Command, tool: str) -> list[str]:
    """The install command with the installer's own dry-run flags, inserted before the requirements."""
    argv = list(command.argv)
    at = len(argv) - len(command.step.packages)
    flags = ["--dry-run"] if tool == "uv" else ["--dry-run", "--quiet", "--report", "-"]
    return [*argv[:at], *flags, *argv[at:]]


def parse_dry_run(tool: str, output: str) -> dict[str, str]:
    """name -> version the installer would install (pip --report JSON, or uv's `+ name==version` lines)."""
    found: dict[str, str] = {}
    if tool == "pip":
        start = output.find("{")
        if start < 0:
            return found
        report, _ = json.JSONDecoder().raw_decode(output[start:])
        for item in report.get("install", []):
            meta = item.get("metadata", {})
            found[canonical(meta.get("name", ""))] = meta.get("version", "")
        return found
    for line in output.splitlines():
        match = re.match(r"^\s*\+\s+([A-Za-z0-9_.\-]+)==(\S+)", line)
        if match:
            found[canonical(match.group(1))] = match.group(2)
    return found
