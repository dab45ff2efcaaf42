"""`ortprov plan` and `ortprov dockerfile`: plan for the hosts the flags describe; the plan, or a recipe."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from provisioner.commands.options import PLAN_FORMATS, PLANNING_HELP, PlanningOptions, command

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from provisioner.render.output import Result

PLAN_HELP = f"""Pick the onnxruntime-gpu build for a host and say why; print it as text, JSON or a recipe.

The newest release that runs on every host (driver, compute capability, Python, platform) unless pinned,
preferring CUDA/cuDNN majors already installed (torch's), with exact NVIDIA library pins and the
conflicting onnxruntime flavours removed first.

{PLANNING_HELP}

A Kubernetes cluster is planned from its nodes' GPU Feature Discovery labels (--kube-nodes: the NodeList of
`kubectl get nodes -o json`; --kube: the live cluster, through kubectl; docs/cluster.md): one plan per class of
nodes, each class's node affinity (--format kubernetes) and Dockerfile; --one-image: one plan for every class.

Examples:

\b
  ortprov plan                                   # for this machine
  ortprov plan --host gpu-box.json --format pip
  ortprov plan --driver 535.104 --gpu-cc 8.0 --python 3.11 --json
  ortprov plan --host a.json --host b.json -v    # one plan for both
  ortprov plan --ort 1.20 --cuda 12 --format requirements --hashes
  ortprov plan --kube-nodes nodes.json --python 3.12
  ortprov plan --kube-nodes nodes.json --format kubernetes
  ortprov plan --kube-nodes nodes.json -f dockerfile --output-dir img/
  ortprov plan --kube --kube-context prod --one-image

Exit codes: 0 a plan, 2 bad input, 3 no compatible build (the reasons are listed), or a host with no NVIDIA
driver (the hint shows how to plan for the GPU machine; --driver none plans without one)."""

DOCKERFILE_HELP = f"""Print a Dockerfile for the planned build (same as `ortprov plan --format dockerfile`).

--context DIR writes it into DIR with ortprov-check/ (its build-time check, which it COPYs); then
`docker build DIR`. Printed alone, the Dockerfile needs ortprov-check/ beside it.

{PLANNING_HELP}

Examples:

\b
  ortprov dockerfile --driver 550 --gpu-cc 8.6 --python 3.12 --context image/
  ortprov dockerfile --host gpu-box.json --base cuda --context image/"""


def register(app: typer.Typer) -> None:
    """Add `plan` and `dockerfile`."""
    app.command("plan", help=PLAN_HELP)(command(plan))
    app.command("dockerfile", help=DOCKERFILE_HELP)(command(dockerfile))


def plan(
    planning: PlanningOptions,
    fmt: str,
    json_output: bool,
    hashes: bool,
    base: str,
    kube_nodes: str | None,
    kube: bool,
    kube_context: str | None,
    one_image: bool,
    output_dir: Path | None,
    verbose: bool,
) -> Result:
    """Pick the onnxruntime-gpu build for a host (or a cluster's classes of nodes) and say why."""
    from provisioner.commands.cluster import ClusterOptions, check_cluster_flags, plan_cluster_command
    from provisioner.errors import BadInput

    if json_output and fmt not in ("text", "json"):
        raise BadInput(f"--json and --format {fmt} exclude each other", hint="keep one of them")
    cluster = ClusterOptions(kube_nodes, kube, kube_context, one_image, output_dir)
    check_cluster_flags(cluster, planning, fmt, hashes)
    if cluster.wanted:
        return plan_cluster_command(cluster, planning, "json" if json_output else fmt, base, verbose)
    if hashes and fmt != "requirements":
        raise BadInput("--hashes applies to --format requirements", hint="add --format requirements")
    return planned(planning, "json" if json_output else fmt, hashes=hashes, base=base, verbose=verbose)


def dockerfile(planning: PlanningOptions, base: str, build_context: Path | None) -> Result:
    """A Dockerfile for the planned build: on stdout, or with --context DIR written there with ortprov-check/."""
    result = planned(planning, "dockerfile", base=base, context=build_context is not None)
    if build_context is None:
        return result
    from provisioner.buildcontext import write_context
    from provisioner.render.dockerfile import context_files
    from provisioner.render.plan import RecipeResult

    text = result.text()
    written = write_context(str(build_context), text, context_files())
    tag = next((line.split("-t ", 1)[1].split()[0] for line in text.splitlines() if "docker build -t" in line), "IMAGE")
    lines = [f"wrote {path}" for path in written] + [f"build: docker build -t {tag} {build_context}"]
    return RecipeResult("\n".join(lines))


def planned(
    options: PlanningOptions,
    fmt: str,
    *,
    hashes: bool = False,
    base: str = "slim",
    verbose: bool = False,
    context: bool = False,
) -> Result:
    """Plan (the matrix's notices on stderr) and hand back the plan, or the recipe in `fmt`."""
    from provisioner.commands.planning import describes_machine, matrix_in_use, plan_for
    from provisioner.render.output import note
    from provisioner.render.plan import PlanResult, RecipeResult

    if base == "cuda":
        # the nvidia/cuda image supplies CUDA and cuDNN: the plan installs no NVIDIA wheels, and every rendering of
        # it says so (`plan --json --base cuda` is what the --base cuda Dockerfile installs: one plan, rendered)
        options = dataclasses.replace(options, cuda_libraries="system")
        if fmt != "dockerfile":  # not silently: this plan is for that image only
            note(
                "--base cuda: planned for the nvidia/cuda image, which supplies CUDA and cuDNN, so no NVIDIA "
                "wheels are installed; outside that image, leave --base out"
            )
    matrix = matrix_in_use()
    the_plan = plan_for(options, matrix, command="dockerfile" if fmt == "dockerfile" else "plan")
    assumed = the_plan.hosts[0].python
    if describes_machine(options) and options.python_version is None and assumed is not None:
        note(f"planned for Python {assumed.minor} (this interpreter's); pass --python X.Y for another")
    python = options.target_python or "python"
    if fmt in ("text", "json"):
        return PlanResult(the_plan, verbose=verbose, python=python)
    from provisioner.render import recipes

    digests = None
    if hashes:
        from provisioner.hashes import pinned_digests

        digests = pinned_digests(the_plan, progress=_progress)
    text = recipes.render(the_plan, fmt, matrix=matrix, python=python, index_digests=digests, base=base)
    if fmt == "dockerfile" and not context:
        note(
            "the Dockerfile COPYs ortprov-check/ (its build-time check) from the build context: "
            "`ortprov dockerfile --context DIR` writes both"
        )
    return RecipeResult(text)


def _progress(line: str) -> None:
    """A progress line on stderr (-q drops it)."""
    import sys

    sys.stderr.write(line + "\n")
    sys.stderr.flush()


__all__ = ["PLAN_FORMATS", "register", "plan", "dockerfile", "planned"]
