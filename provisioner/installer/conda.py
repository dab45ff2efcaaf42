"""`apply --installer conda`: the plan's conda recipe (environment.yml) carried out with micromamba, mamba or
conda, then its pip part with pip, in the active conda environment, in one transaction (the same one as pip's
and uv's: installer/flow.py opens the target and runs these commands).

The conda and pip parts come from `render.recipes.render(plan, "conda")`, the same text `ortprov plan --format conda`
prints, so the conda path is as what-you-see-is-what-runs as the pip/uv one.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from provisioner.errors import BadInput
from provisioner.installer.steps import Command
from provisioner.installer.tools import find_conda_tool
from provisioner.plan import Plan, Step, canonical, step_argv

if TYPE_CHECKING:
    from provisioner.installer.venv import Target


@dataclass(frozen=True)
class CondaRecipe:
    """The two halves of an environment.yml: conda specs (with channels) and pip lines."""

    channels: tuple[str, ...]
    specs: tuple[str, ...]
    pip_requirements: tuple[str, ...]
    pip_index_url: str | None = None
    pip_extra_index_urls: tuple[str, ...] = ()
    pip_find_links: tuple[str, ...] = ()
    pip_no_index: bool = False


def parse_environment_yml(text: str) -> CondaRecipe:
    """Split an environment.yml into conda specs and pip lines (python= is left out: never swap the
    environment's Python)."""
    import yaml

    data = yaml.safe_load(text) or {}
    channels = tuple(c for c in data.get("channels", ()) if c != "nodefaults")
    specs: list[str] = []
    pip_lines: list[str] = []
    for item in data.get("dependencies", ()):
        if isinstance(item, dict):
            pip_lines += [str(line) for line in item.get("pip", ())]
        elif isinstance(item, str) and item != "pip" and not item.startswith("python="):
            specs.append(item)
    requirements, index_url, extras, links, no_index = [], None, [], [], False
    for line in pip_lines:
        words = shlex.split(line)
        if words and words[0] == "--index-url":
            index_url = words[1]
        elif words and words[0] == "--extra-index-url":
            extras.append(words[1])
        elif words and words[0] == "--find-links":
            links.append(words[1])
        elif words == ["--no-index"]:
            no_index = True
        elif words:
            requirements.append(line)
    return CondaRecipe(channels, tuple(specs), tuple(requirements), index_url, tuple(extras), tuple(links), no_index)


def conda_recipe(plan: Plan) -> CondaRecipe:
    """The plan's conda recipe, as `ortprov plan --format conda` renders it."""
    from provisioner.matrix.load import load_matrix
    from provisioner.render.recipes import render

    return parse_environment_yml(render(plan, "conda", matrix=load_matrix()))


def conda_install_argv(tool: list[str], prefix: str, recipe: CondaRecipe) -> list[str]:
    """`<tool> install --yes --prefix P --override-channels -c CH ... SPECS` (the same words for micromamba,
    mamba and conda)."""
    argv = [*tool, "install", "--yes", "--prefix", prefix, "--override-channels"]
    for channel in recipe.channels or ("conda-forge",):
        argv += ["-c", channel]
    return [*argv, *recipe.specs]


def conda_commands(
    plan: Plan, recipe: CondaRecipe, tool: list[str], target: Target, installed: dict[str, str]
) -> list[Command]:
    """The plan's uninstall steps (pip), the conda install, then the pip part."""
    commands: list[Command] = []
    number = 0
    for step in plan.steps:
        if step.kind != "uninstall":
            continue
        present = tuple(p for p in step.packages if canonical(p) in installed)
        number += 1
        if present:
            step = replace(step, packages=present)
            commands.append(Command(number, step, tuple(step_argv(step, "pip", target.python))))
        else:
            commands.append(Command(number, step, (), f"nothing to uninstall: {', '.join(step.packages)}"))
    number += 1
    conda_step = Step("conda", recipe.specs, "CUDA libraries from conda")
    commands.append(Command(number, conda_step, tuple(conda_install_argv(tool, target.prefix, recipe))))
    if recipe.pip_requirements:
        pip_step = Step(
            "install",
            recipe.pip_requirements,
            "pip part",
            index_url=recipe.pip_index_url,
            extra_index_urls=recipe.pip_extra_index_urls,
            find_links=recipe.pip_find_links,
            no_index=recipe.pip_no_index,
        )
        commands.append(Command(number + 1, pip_step, tuple(step_argv(pip_step, "pip", target.python))))
    return commands


def conda_tool() -> list[str]:
    """micromamba, mamba or conda; BadInput when none is installed."""
    tool = find_conda_tool()
    if tool is None:
        raise BadInput(
            "--installer conda: none of micromamba, mamba or conda is installed",
            hint="install one, or use --installer uv|pip with the NVIDIA pip wheels",
        )
    return tool
