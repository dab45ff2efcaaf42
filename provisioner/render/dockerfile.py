"""The Dockerfile recipe: a pinned base (`slim`: Python, then the NVIDIA wheels the plan pins; `cuda`: the nvidia/cuda
cuDNN runtime image the matrix lists for the plan and its drivers), a layer per install step in JSON exec form, a
non-root user, and a GPU-free build-time check that every library the CUDA provider needs resolves (the check
program and its siblings from provisioner/standalone, COPYed from the build context: `context_files()`)."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING

from provisioner import standalone
from provisioner.errors import BadInput, DataError, NoCompatiblePlan
from provisioner.plan import Plan, Step, step_argv
from provisioner.render import DOCKERFILE_BASES
from provisioner.render.recipe_parts import (
    header_lines,
    is_windows,
    one_line,
    require_cuda_major,
    required_python,
    template,
    without_nvidia_wheels,
)
from provisioner.resources import data_dir

if TYPE_CHECKING:
    from collections.abc import Sequence

    from provisioner.matrix.model import DockerImage, Matrix, OrtBuild

VENV_PYTHON = "/opt/venv/bin/python"
CHECK_PROGRAM = "check_cuda_libs.py"  # provisioner/standalone/, written into the image with its siblings
CHECK_DIR = "/opt/ortprov"
CONTEXT_DIR = "ortprov-check"  # beside the Dockerfile, in its build context: the files of `context_files()`
CHECK_SCRIPT_PATH = f"{CHECK_DIR}/{CHECK_PROGRAM}"
LD_CONF_PATH = "/etc/ld.so.conf.d/ortprov-nvidia-wheels.conf"
_SONAME = re.compile(r"lib[A-Za-z0-9_+.-]+\.so(?:\.[0-9]+)*")
_IMAGE = re.compile(r"[a-z0-9][a-z0-9._/:@-]*", re.IGNORECASE)


def render_dockerfile(plan: Plan, matrix: Matrix, *, base: str = "slim", base_image: str | None = None) -> str:
    """A Dockerfile: pinned base, a layer per concern, non-root user, a GPU-free build-time library check."""
    if base not in DOCKERFILE_BASES:
        raise BadInput(f"unknown Dockerfile base {base!r}", hint=f"use one of: {', '.join(DOCKERFILE_BASES)}")
    if is_windows(plan):
        raise BadInput(
            "a Dockerfile recipe builds a Linux image; this plan is for windows-amd64",
            hint="plan with --platform linux-x86_64 (or linux-aarch64)",
        )
    _refuse_credentials(plan)
    if base_image is not None and not _IMAGE.fullmatch(base_image):
        raise BadInput(f"base image {base_image!r} is not an image reference")
    if plan.plugin and base != "slim":
        raise BadInput(
            f"--base cuda supplies CUDA for onnxruntime-gpu; the {plan.plugin.provider} EP bundles its runtime",
            hint="leave --base out (slim)",
        )
    build = find_build(plan, matrix) if plan.plugin is None else None
    bases = _bases()
    if base == "slim":
        target = required_python(plan)
        python = target.rstrip("t")
        default_image = bases["slim"]["image"].replace("{python}", python)
        choice = f"{default_image}: {bases['slim']['summary']}."
        if target != python:
            choice += f" Note: the official image runs the standard (not free-threaded) Python {python}."
        # the image lists the NVIDIA wheels' folders in an ld.so.conf.d file (the check layer): no loader hook
        python_layer, steps = _VENV_LAYER, tuple(s for s in plan.steps if s.runs_installer)
    else:
        image, compat = _cuda_image(plan, matrix)
        default_image = image.tag
        size = f" (~{image.size_mb} MB)" if image.size_mb else ""
        choice = f"{image.tag}{size}: {bases['cuda']['summary']}." + (f" Note: {compat}." if compat else "")
        python_layer = _OS_PYTHON_LAYER
        steps = tuple(
            replace(s, packages=tuple(without_nvidia_wheels(s.packages, plan.package)))
            for s in plan.steps
            if s.kind == "install"
        )
    if not _IMAGE.fullmatch(default_image):
        raise DataError(f"base image {default_image!r} from the data is not an image reference")
    sonames = [s for s in (*build.libraries_linked, *build.libraries_lazy) if s] if build else []
    for soname in sonames:
        if not _SONAME.fullmatch(soname):
            raise DataError(f"matrix library {soname!r} is not a soname")
    check_argv = [VENV_PYTHON, CHECK_SCRIPT_PATH, *sonames] + (["--tensorrt"] if plan.tensorrt_version else [])
    plugin = ["--plugin", plan.plugin.module] if plan.plugin else []
    none_listed = f"(none: the plugin EP's {plan.plugin.library} names them)" if plan.plugin else "(none listed)"
    return template("Dockerfile.tmpl").substitute(
        header="\n".join(header_lines(plan)),
        base_choice=_wrap_comment(choice),
        image_name=f"{plan.plugin.package}:{plan.plugin.version}"
        if plan.plugin
        else f"onnxruntime-gpu:{plan.ort_version}-cuda{plan.cuda_version}",
        base_image=base_image or default_image,
        ort_version=plan.ort_version,
        cuda_version=plan.cuda_version,
        python_layer=python_layer,
        install_layers=_install_layers(steps, base),
        loader_note=(
            "\n#   - lists the lib folders of the NVIDIA wheels in an ld.so.conf.d file for the loader,"
            if base == "slim"
            else ""
        ),
        checked_sonames=_wrap_comment(", ".join(sonames) or none_listed, width=70, prefix="#     "),
        check_layer=_check_layer(shlex.join(check_argv + plugin), loader=base == "slim", plugin=plugin),
    )


_VENV_LAYER = """# Layer: a virtual environment for the application (owned by root: the app cannot change it).
RUN ["python3", "-m", "venv", "/opt/venv"]
"""


_OS_PYTHON_LAYER = """\
# Layer: Python from the OS (nvidia/cuda images have none; its version follows the Ubuntu release of the
# image), and a virtual environment for the application (owned by root: the app cannot change it).
# hadolint ignore=DL3008
RUN apt-get update \\
 && apt-get install -y --no-install-recommends python3 python3-venv \\
 && rm -rf /var/lib/apt/lists/* \\
 && python3 -m venv /opt/venv
"""


def _refuse_credentials(plan: Plan) -> None:
    """An index URL with user:password would be stored in the image history for anyone to read."""
    from urllib.parse import urlsplit

    urls = [plan.index_url or ""] + [u for s in plan.steps for u in (s.index_url or "", *s.extra_index_urls)]
    urls += [item.partition("=")[2] for s in plan.steps for item in s.environment]
    for url in urls:
        if url and (urlsplit(url).username or urlsplit(url).password):
            raise BadInput(
                "an index URL carries credentials, which a Dockerfile would keep in the image history",
                hint="pass the index with a build secret (RUN --mount=type=secret) instead",
            )


def _install_layers(steps: Sequence[Step], base: str) -> str:
    blocks = []
    for step in steps:
        if step.kind == "uninstall":
            blocks.append(f"# (plan step not needed in a fresh image: {one_line(shlex.join(step_argv(step, 'pip')))})")
            continue
        what = one_line(step.description) if step.description else "the plan's install step"
        if base == "cuda":
            what += " (without the NVIDIA wheels: the base image supplies CUDA and cuDNN)"
        if step.find_links:
            what += "; find-links folders must exist inside the image"
        env = ["env", *step.environment] if step.environment else []
        blocks.append(
            f"# Layer: {what}\n# hadolint ignore=DL3059\nRUN {json.dumps([*env, *step_argv(step, 'pip', VENV_PYTHON)])}"
        )
    return "\n\n".join(blocks)


def context_files() -> dict[str, bytes]:
    """The files the Dockerfile COPYs from its build context (path in the context -> content): the check
    program and the siblings it imports, the very files of provisioner/standalone that ortprov runs."""
    return {f"{CONTEXT_DIR}/{name}": content for name, content in standalone.sources(CHECK_PROGRAM).items()}


def _check_layer(check_command: str, *, loader: bool, plugin: list[str] | None = None) -> str:
    """COPY the check program and its siblings from the build context (`ortprov dockerfile --context DIR` writes
    them there), then one RUN: register the NVIDIA wheel folders with the loader (slim base), run the check."""
    lines = [f'COPY ["{CONTEXT_DIR}/", "{CHECK_DIR}/"]']
    listed = " ".join([f"--write-ld-conf {LD_CONF_PATH}", *(plugin or [])])
    run = [f"{VENV_PYTHON} {CHECK_SCRIPT_PATH} {listed}", "ldconfig"] if loader else []
    run.append(check_command)
    lines.append("# hadolint ignore=DL3059")
    lines.append("RUN " + " \\\n && ".join(run))
    return "\n".join(lines)


def _wrap_comment(text: str, width: int = 104, prefix: str = "# ") -> str:
    """Free text wrapped for a comment that the template has already opened with `prefix`."""
    import textwrap

    return f"\n{prefix}".join(textwrap.wrap(one_line(text), width))


def find_build(plan: Plan, matrix: Matrix) -> OrtBuild:
    """The matrix's record of the planned build (package, release, CUDA version, index)."""
    from provisioner.matrix.query import find_build as lookup

    build = lookup(matrix, plan.package, plan.ort_version, plan.cuda_version, plan.index_url)
    if build is not None:
        return build
    raise DataError(
        f"the matrix has no record of {plan.package} {plan.ort_version} (CUDA {plan.cuda_version})",
        hint="refresh the matrix (`ortprov matrix update`) or plan again",
    )


def _cuda_image(plan: Plan, matrix: Matrix) -> tuple[DockerImage, str]:
    """The nvidia/cuda cuDNN runtime image for the plan, and a note on how it runs on the target drivers.

    In order: the plan's own CUDA minor; the lowest newer minor every target driver supports; the lowest
    newer minor that runs through CUDA minor-version compatibility (each driver at or above the major's
    floor; code JIT-compiled from PTX then needs a driver that knows the newer minor)."""
    from provisioner.matrix.query import cuda_images
    from provisioner.planner import driver_cuda_version
    from provisioner.versions import driver_at_least, vtuple

    record = require_cuda_major(plan, matrix)
    cudnn = plan.cudnn_version.split(".")[0] if plan.cudnn_version else None
    images = cuda_images(matrix, plan.cuda_version, plan.cudnn_version)
    hosts = [h for h in plan.hosts if h.driver.present and h.driver.version]
    # the CUDA each driver supports: as reported, else from the matrix's driver floors (`--driver 580` names
    # no CUDA version; the planner reads it the same way)
    supports = [vtuple(driver_cuda_version(h, matrix) or "0")[:2] for h in hosts]
    supported = [i for i in images if all(vtuple(i.cuda_version)[:2] <= cuda for cuda in supports)]
    if supported:
        return supported[0], ""
    floor = record.minor_compat_driver_linux
    if images and floor and all(driver_at_least(h.driver.version or "0", floor) for h in hosts):
        image = images[0]
        return image, (
            f"CUDA {image.cuda_version} is newer than the target driver supports; it runs through CUDA "
            f"minor-version compatibility (driver >= {floor}), except code JIT-compiled from PTX"
        )
    raise NoCompatiblePlan(
        f"the matrix lists no nvidia/cuda image with cuDNN {cudnn} for CUDA {plan.cuda_version} "
        "that the target driver can run",
        hint="use --base slim",
    )


@cache
def _bases() -> dict[str, dict[str, str]]:
    try:
        data: dict[str, dict[str, str]] = json.loads((data_dir("recipes") / "bases.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"recipes/bases.json cannot be read: {exc}", hint="reinstall ortprov") from None
    return data
