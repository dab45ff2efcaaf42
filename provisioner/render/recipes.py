"""Render a Plan as a recipe: pip or uv commands, a requirements file, a conda environment.yml, a Dockerfile.

Pure text rendering (templates in the top-level `recipes/` folder, shipped in the wheel). `requirements
--hashes` pins the digests it is given (`index_digests`): reading them from the index is the network's job
(provisioner.hashes, called by the command), never this module's.

Every command is built with `plan.step_argv`, so what `plan --format pip` prints is what `apply` runs. Strings
from a plan end up either validated (requirements, names, versions, URLs), quoted (shell words, JSON exec-form
in Dockerfiles, YAML double-quoted scalars) or, for free text in comments, flattened to one line.

The shared parts (validation, quoting, the header, the templates) are render/recipe_parts.py's; the Dockerfile
is render/dockerfile.py's.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.errors import BadInput, DataError
from provisioner.plan import Plan, Step, canonical, requirement_name, step_argv, step_summary
from provisioner.render import DOCKERFILE_BASES, RECIPE_FORMATS
from provisioner.render.dockerfile import CHECK_SCRIPT_PATH, VENV_PYTHON, find_build, render_dockerfile
from provisioner.render.recipe_parts import (
    NAME,
    VERSION,
    command_line,
    header_lines,
    is_windows,
    one_line,
    powershell_quote,
    require_cuda_major,
    target_python,
    template,
    validate_plan,
    without_nvidia_wheels,
    yaml_str,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from provisioner.matrix.model import Matrix

FORMATS = RECIPE_FORMATS
BASES = DOCKERFILE_BASES


@dataclass(frozen=True)
class PinnedRequirement:
    """One distribution of a fully resolved install, with the sha256 of its files on the index."""

    name: str
    version: str
    sha256: tuple[str, ...]


def render(
    plan: Plan,
    fmt: str,
    *,
    matrix: Matrix | None = None,
    python: str = "python",
    index_digests: Sequence[PinnedRequirement] | None = None,
    base: str = "slim",
    base_image: str | None = None,
) -> str:
    """The plan as text in `fmt` (pip | uv | requirements | conda | dockerfile).

    python: the interpreter named in pip/uv commands. index_digests: the full resolved set with the sha256
    of its files (provisioner.hashes.pinned_digests): the requirements are pinned with them (`--hashes`).
    base / base_image: the Dockerfile's base ("slim" Python + NVIDIA wheels, or "cuda": nvidia/cuda image).
    matrix: needed for conda (package names) and dockerfile (libraries checked, nvidia/cuda images).
    """
    if fmt not in FORMATS:
        raise BadInput(f"unknown recipe format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
    validate_plan(plan)
    if fmt in ("pip", "uv"):
        return render_commands(plan, fmt, python=python)
    if fmt == "requirements":
        return render_requirements(plan, index_digests, python=python)
    if fmt == "conda":
        return render_conda(plan, _require(matrix, "conda"))
    return render_dockerfile(plan, _require(matrix, "dockerfile"), base=base, base_image=base_image)


def _require(matrix: Matrix | None, fmt: str) -> Matrix:
    if matrix is None:
        raise DataError(f"the {fmt} recipe needs the compatibility matrix", hint="pass matrix=load_matrix()")
    return matrix


def render_commands(plan: Plan, tool: str, *, python: str = "python") -> str:
    """The plan's steps as the exact pip or uv commands `apply` runs, one per line."""
    windows = is_windows(plan)
    shell = "PowerShell" if windows else "POSIX shell"
    lines = [*header_lines(plan), f"# {tool} commands for {shell}, in order:"]
    for step in plan.steps:
        if not step.runs_installer:
            lines += ortprov_step_comment(step)
            continue
        if step.description:
            lines.append(f"# {one_line(step.description)}")
        lines.append(environment_prefix(step, windows) + command_line(step_argv(step, tool, python), windows))
    return "\n".join(lines) + "\n"


def environment_prefix(step: Step, windows: bool) -> str:
    """The step's environment (WHEEL_STUB_PIP_INDEX_URL=...) before its command: `NAME=value ` in a POSIX
    shell, `$env:NAME = 'value'; ` in PowerShell."""
    out = ""
    for item in step.environment:
        name, _, value = item.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise BadInput(f"environment variable name {name!r} is not a name")
        out += f"$env:{name} = {powershell_quote(value)}; " if windows else f"{name}={shlex.quote(value)} "
    return out


def ortprov_step_comment(step: Step) -> list[str]:
    """A step only ortprov carries out (the loader hook), as comment lines: what it does, and what to do
    where ortprov does not run."""
    import textwrap

    text = f"{step_summary(step)}: {one_line(step.description)}" if step.description else step_summary(step)
    return [f"# {line}" for line in textwrap.wrap(text, 106, break_on_hyphens=False, break_long_words=False)]


def render_requirements(
    plan: Plan, pinned: Sequence[PinnedRequirement] | None = None, *, python: str = "python"
) -> str:
    """A requirements file. Uninstall steps cannot be expressed: they are listed as commands to run first.

    pinned: the full resolved set with digests (`--require-hashes` needs every distribution pinned with ==
    and hashed, transitive ones included); None renders the plan's requirements as they are.
    """
    windows = is_windows(plan)
    lines = header_lines(plan)
    for step in plan.steps:
        if step.kind == "uninstall":
            lines.append("# a requirements file cannot remove packages; run this first:")
            lines.append(f"#   {one_line(command_line(step_argv(step, 'pip', python), windows))}")
    installs = [step for step in plan.steps if step.kind == "install"]
    lines += _one_run_options(installs, "a requirements file")
    after = [line for step in plan.steps if not step.runs_installer for line in ortprov_step_comment(step)]
    if after:
        after.insert(0, "# after installing:")
    if pinned is None:
        for step in installs:
            if step.description:
                lines.append(f"# {one_line(step.description)}")
            lines += list(step.packages)
        return "\n".join(lines + after) + "\n"
    _check_pinned_covers(plan, pinned)
    lines.append("# every distribution of the resolved install, pinned, with the sha256 of each of its files")
    lines.append("# on the index for the target platform: pip install --require-hashes -r requirements.txt")
    for item in sorted(pinned, key=lambda p: canonical(p.name)):
        if not NAME.fullmatch(item.name) or not VERSION.fullmatch(item.version):
            raise DataError(f"index returned an unusable name or version: {item.name!r} {item.version!r}")
        digests = [d for d in item.sha256 if re.fullmatch(r"[0-9a-f]{64}", d)]
        if not digests:
            raise DataError(f"no sha256 digest found for {item.name}=={item.version}")
        lines.append(f"{item.name}=={item.version} \\")
        lines += [f"    --hash=sha256:{d}" + (" \\" if i < len(digests) - 1 else "") for i, d in enumerate(digests)]
    return "\n".join(lines + after) + "\n"


def _one_run_options(installs: Sequence[Step], what: str) -> list[str]:
    """The install steps' --index-url / --extra-index-url / --no-index / --find-links lines. `what` names the
    format ("a requirements file", "an environment.yml's pip section"): one pip run, with one set of options and
    no per-package --no-deps: steps that need separate runs (a side-feed build with --no-deps, then PyPI) are
    refused, since merged, the feed would serve every requirement, or PyPI's same-numbered build for another
    CUDA could win."""
    if not installs:
        return []
    behind = next((s for s in installs if s.only_binary and s.index_url), None)
    if behind is not None and len(installs) > 1:
        raise BadInput(
            f"this plan installs {', '.join(behind.packages)} from {behind.index_url} only, in a pip run of its "
            f"own (PyPI holds only source stubs of them, which download the real wheel while they build): {what} "
            "is one pip run, and would let PyPI's stub or another index serve them",
            hint="use --format pip, uv or dockerfile (they run the steps in order), or fill a wheelhouse with "
            "`ortprov download` and install from it",
        )
    options = {(s.index_url, s.extra_index_urls, s.find_links, s.no_index) for s in installs}
    if len(installs) > 1 and (len(options) > 1 or any(s.no_deps for s in installs)):
        alone = next((s for s in installs if s.no_deps), None) or next(
            (s for s in installs if s.index_url), installs[0]
        )
        where = f"from {alone.index_url}" if alone.index_url else "on its own"
        deps = " with --no-deps" if alone.no_deps else ""
        raise BadInput(
            f"this plan installs {', '.join(alone.packages)} {where}{deps}, then the rest in another pip run: "
            f"{what} cannot say that",
            hint="use --format pip, uv or dockerfile (they run the steps in order), or a build from PyPI "
            "(a newer --ort, or another --cuda)",
        )
    step = installs[0]
    lines = [f"--index-url {step.index_url}"] if step.index_url else []
    lines += [f"--extra-index-url {url}" for url in dict.fromkeys(step.extra_index_urls)]
    if step.no_index:
        lines.append("--no-index")
    return lines + [f"--find-links {location}" for location in dict.fromkeys(step.find_links)]


def _check_pinned_covers(plan: Plan, pinned: Sequence[PinnedRequirement]) -> None:
    names = {canonical(p.name) for p in pinned}
    missing = [req for req in plan.install if requirement_name(req) not in names]
    if missing:
        raise DataError(f"the resolved set lacks {', '.join(missing)}", hint="resolve the plan's requirements again")


def render_conda(plan: Plan, matrix: Matrix) -> str:
    """environment.yml: conda-forge CUDA/cuDNN for the plan's CUDA era, then onnxruntime-gpu from pip."""
    cuda_major = require_cuda_major(plan, matrix)
    if not cuda_major.conda_packages and not plan.plugin:
        raise DataError(f"the matrix lists no conda-forge packages for CUDA {cuda_major.major}")
    python = target_python(plan)
    packages = () if plan.plugin else cuda_major.conda_packages  # a plugin EP bundles its CUDA runtime
    conda = ([f"python={python.rstrip('t')}"] if python else []) + [_conda_spec(name, plan) for name in packages]
    installs = [step for step in plan.steps if step.kind == "install"]
    pip_lines = _one_run_options(installs, "an environment.yml's pip section") + [
        req for step in installs for req in without_nvidia_wheels(step.packages, plan.package)
    ]
    era = "cudatoolkit + cudnn" if "cudatoolkit" in cuda_major.conda_packages else "cuda-version + split packages"
    text = template("environment.yml.tmpl").substitute(
        header="\n".join(header_lines(plan)),
        cuda_era=f"CUDA {cuda_major.major}: {era}"
        if not plan.plugin
        else f"CUDA {cuda_major.major}: bundled by the EP",
        env_name=yaml_str(f"{plan.package}-{plan.ort_version}"),
        conda_dependencies="\n".join(f"  - {yaml_str(spec)}" for spec in conda),
        pip_dependencies="\n".join(f"    - {yaml_str(line)}" for line in pip_lines),
    )
    return text


def _conda_spec(name: str, plan: Plan) -> str:
    """A conda MatchSpec for one matrix package name, constrained by the plan's CUDA/cuDNN versions."""
    if not NAME.fullmatch(name):
        raise DataError(f"matrix conda package {name!r} is not a package name")
    from provisioner.versions import major_minor

    cuda_minor = major_minor(plan.cuda_version)
    if name in ("cuda-version", "cudatoolkit"):
        return f"{name}={cuda_minor}"
    if name == "cudnn" and plan.cudnn_version:
        return f"cudnn={plan.cudnn_version.split('.')[0]}"
    return name


__all__ = [
    "FORMATS",
    "BASES",
    "CHECK_SCRIPT_PATH",
    "VENV_PYTHON",
    "PinnedRequirement",
    "render",
    "validate_plan",
    "command_line",
    "one_line",
    "powershell_quote",
    "header_lines",
    "find_build",
]
