"""Render a Plan as a recipe: pip or uv commands, a requirements file, a conda environment.yml, a Dockerfile.

Pure text rendering (templates in the top-level `recipes/` folder, shipped in the wheel). `requirements
--hashes` pins the digests it is given (`index_digests`): reading them from the index is the network's job
(provisioner.hashes, called by the command), never this module's.

Every command is built with `plan.step_argv`, so what `plan --format pip` prints is what `apply` runs. Strings
from a plan end up either validated (requirements, names, versions, URLs), quoted (shell words, JSON exec-form
in Dockerfiles, YAML double-quoted scalars) or, for free text in comments, flattened to one line.
"""

from __future__ import annotations

import json
import re
import shlex
import string
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from provisioner import standalone
from provisioner.errors import BadInput, DataError, NoCompatiblePlan
from provisioner.plan import STEP_KINDS, Plan, Step, canonical, requirement_name, step_argv, step_summary
from provisioner.render import DOCKERFILE_BASES, RECIPE_FORMATS
from provisioner.resources import data_dir

if TYPE_CHECKING:
    from collections.abc import Sequence

    from provisioner.matrix.model import CudaMajor, DockerImage, Matrix, OrtBuild

FORMATS = RECIPE_FORMATS
BASES = DOCKERFILE_BASES

VENV_PYTHON = "/opt/venv/bin/python"
CHECK_PROGRAM = "check_cuda_libs.py"  # provisioner/standalone/, written into the image with its siblings
CHECK_DIR = "/opt/ortprov"
CHECK_SCRIPT_PATH = f"{CHECK_DIR}/{CHECK_PROGRAM}"
LD_CONF_PATH = "/etc/ld.so.conf.d/ortprov-nvidia-wheels.conf"

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")  # always fullmatch: "$" allows "\n"
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")
_SONAME = re.compile(r"lib[A-Za-z0-9_+.-]+\.so(?:\.[0-9]+)*")
_IMAGE = re.compile(r"[a-z0-9][a-z0-9._/:@-]*", re.IGNORECASE)
_URL = re.compile(r"(?:https?|file)://[^\s\"'<>\\`]+")
_PS_SAFE = re.compile(r"[A-Za-z0-9_./\\][A-Za-z0-9_./\\:=-]*|--?[A-Za-z][A-Za-z0-9-]*")
_PS_QUOTES = "'\u2018\u2019\u201a\u201b"  # PowerShell treats all of these as single quotes


@dataclass(frozen=True)
class PinnedRequirement:
    """One distribution of a fully resolved install, with the sha256 of its files on the index."""

    name: str
    version: str
    sha256: tuple[str, ...]


# -- public entry point -------------------------------------------------------------------------------------


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


# -- validation and quoting ---------------------------------------------------------------------------------


def validate_plan(plan: Plan) -> None:
    """BadInput unless every name, version, requirement and URL of the plan is safe to write into a recipe."""
    if not _NAME.fullmatch(plan.package):
        raise BadInput(f"plan package {plan.package!r} is not a distribution name")
    for label, maybe in (
        ("ort_version", plan.ort_version),
        ("cuda_version", plan.cuda_version),
        ("cudnn_version", plan.cudnn_version),
        ("tensorrt_version", plan.tensorrt_version),
    ):
        if maybe is not None and not _VERSION.fullmatch(maybe):
            raise BadInput(f"plan {label} {maybe!r} is not a version", hint="re-create the plan with ortprov")
    if plan.index_url is not None:
        _check_url(plan.index_url)
    for step in plan.steps:
        _check_step(step)


def _check_step(step: Step) -> None:
    if step.kind not in STEP_KINDS:
        raise BadInput(f"unknown plan step kind {step.kind!r}")
    if not step.runs_installer and step.packages:
        raise BadInput(f"a {step.kind} step names no packages")
    for package in step.packages:
        if step.kind == "uninstall":
            if not _NAME.fullmatch(package):
                raise BadInput(f"cannot uninstall {package!r}: not a distribution name")
        else:
            _check_requirement(package)
    for url in (*((step.index_url,) if step.index_url else ()), *step.extra_index_urls):
        _check_url(url)
    for location in step.find_links:
        if not location or _CONTROL.search(location) or location.startswith("-"):
            raise BadInput(f"find-links location {location!r} is not a path or URL")
    for name in step.only_binary:
        if not _NAME.fullmatch(name):
            raise BadInput(f"--only-binary {name!r} is not a distribution name")
    for item in step.environment:
        name, equals, value = item.partition("=")
        if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or _CONTROL.search(value):
            raise BadInput(f"step environment {item!r} is not NAME=value on one line")


def _check_requirement(text: str) -> None:
    from packaging.requirements import InvalidRequirement, Requirement

    if _CONTROL.search(text) or text.strip() != text or text.startswith("-"):
        raise BadInput(f"requirement {text!r} contains control characters, edge spaces or an option")
    try:
        Requirement(text)
    except InvalidRequirement as exc:
        raise BadInput(f"requirement {text!r} is not a PEP 508 requirement: {exc}") from None


def _check_url(url: str) -> None:
    if not _URL.fullmatch(url):
        raise BadInput(f"index URL {url!r} is not an http(s):// or file:// URL without spaces or quotes")


def one_line(text: str) -> str:
    """Free text for a comment: control characters and line breaks shown as escapes, never as new lines."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def powershell_quote(word: str) -> str:
    """A PowerShell single-quoted string (each kind of single quote doubled), unless the word is plain."""
    if _PS_SAFE.fullmatch(word):
        return word
    return "'" + "".join(ch * 2 if ch in _PS_QUOTES else ch for ch in word) + "'"


def command_line(argv: Sequence[str], windows: bool) -> str:
    """argv as one line a POSIX shell (shlex.quote) or PowerShell (& 'python' ...) runs unchanged."""
    if windows:
        return "& " + " ".join(powershell_quote(word) for word in argv)
    return shlex.join(argv)


def _is_windows(plan: Plan) -> bool:
    return bool(plan.hosts) and plan.hosts[0].platform.tag.startswith("windows")


def _yaml_str(text: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(text)


# -- the header every recipe starts with --------------------------------------------------------------------


def header_lines(plan: Plan) -> list[str]:
    """Comment lines: the chosen build, why, pinned libraries, notes, the target hosts."""
    build = f"{plan.package} {plan.ort_version} for CUDA {plan.cuda_version}"
    if plan.cudnn_version:
        build += f", cuDNN {plan.cudnn_version}"
    if plan.tensorrt_version:
        build += f", TensorRT {plan.tensorrt_version}"
    lines = [f"ortprov plan: {build}", f"index: {plan.index_url or 'PyPI'}"]
    for host in plan.hosts:
        python = host.python.minor if host.python else "?"
        driver = host.driver.version or "no driver"
        label = f"{host.label}: " if host.label else ""
        lines.append(f"target: {label}{host.platform.tag}, Python {python}, NVIDIA driver {driver}")
    if plan.reasons:
        lines.append("why this build:")
        lines += [f"  - {reason}" for reason in plan.reasons]
    if plan.pins:
        lines.append("pinned NVIDIA libraries:")
        lines += [f"  - {pin.package}=={pin.version}: {pin.reason}" for pin in plan.pins]
    if plan.notes:
        lines.append("notes:")
        lines += [f"  - {note}" for note in plan.notes]
    import textwrap

    wrapped = []
    for line in lines:
        indent = " " * (len(line) - len(line.lstrip(" -")))
        parts = textwrap.wrap(one_line(line), 106, subsequent_indent=indent, break_on_hyphens=False) or [""]
        wrapped += [f"# {part}" for part in parts]
    return wrapped


# -- pip / uv -----------------------------------------------------------------------------------------------


def render_commands(plan: Plan, tool: str, *, python: str = "python") -> str:
    """The plan's steps as the exact pip or uv commands `apply` runs, one per line."""
    windows = _is_windows(plan)
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


# -- requirements.txt ---------------------------------------------------------------------------------------


def render_requirements(
    plan: Plan, pinned: Sequence[PinnedRequirement] | None = None, *, python: str = "python"
) -> str:
    """A requirements file. Uninstall steps cannot be expressed: they are listed as commands to run first.

    pinned: the full resolved set with digests (`--require-hashes` needs every distribution pinned with ==
    and hashed, transitive ones included); None renders the plan's requirements as they are.
    """
    windows = _is_windows(plan)
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
        if not _NAME.fullmatch(item.name) or not _VERSION.fullmatch(item.version):
            raise DataError(f"index returned an unusable name or version: {item.name!r} {item.version!r}")
        digests = [d for d in item.sha256 if re.fullmatch(r"[0-9a-f]{64}", d)]
        if not digests:
            raise DataError(f"no sha256 digest found for {item.name}=={item.version}")
        lines.append(f"{item.name}=={item.version} \\")
        lines += [f"    --hash=sha256:{d}" + (" \\" if i < len(digests) - 1 else "") for i, d in enumerate(digests)]
    return "\n".join(lines + after) + "\n"


def _one_run_options(installs: Sequence[Step], what: str) -> list[str]:
    """The install steps' --index-url / --extra-index-url / --no-index / --find-links lines. `what` (a
    requirements file, conda's pip section) is one pip run, with one set of options and no per-package
    --no-deps: steps that need separate runs (a side-feed build with --no-deps, then PyPI) are refused, since
    merged, the feed would serve every requirement, or PyPI's same-numbered build for another CUDA could win."""
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


# -- conda --------------------------------------------------------------------------------------------------


def render_conda(plan: Plan, matrix: Matrix) -> str:
    """environment.yml: conda-forge CUDA/cuDNN for the plan's CUDA era, then onnxruntime-gpu from pip."""
    cuda_major = _require_cuda_major(plan, matrix)
    if not cuda_major.conda_packages:
        raise DataError(f"the matrix lists no conda-forge packages for CUDA {cuda_major.major}")
    python = _target_python(plan)
    conda = ([f"python={python.rstrip('t')}"] if python else []) + [
        _conda_spec(name, plan) for name in cuda_major.conda_packages
    ]
    installs = [step for step in plan.steps if step.kind == "install"]
    pip_lines = _one_run_options(installs, "an environment.yml (its pip section is one pip run)") + [
        req for step in installs for req in _without_nvidia_wheels(step.packages, plan.package)
    ]
    era = "cudatoolkit + cudnn" if "cudatoolkit" in cuda_major.conda_packages else "cuda-version + split packages"
    text = _template("environment.yml.tmpl").substitute(
        header="\n".join(header_lines(plan)),
        cuda_era=f"CUDA {cuda_major.major}: {era}",
        env_name=_yaml_str(f"{plan.package}-{plan.ort_version}"),
        conda_dependencies="\n".join(f"  - {_yaml_str(spec)}" for spec in conda),
        pip_dependencies="\n".join(f"    - {_yaml_str(line)}" for line in pip_lines),
    )
    return text


def _conda_spec(name: str, plan: Plan) -> str:
    """A conda MatchSpec for one matrix package name, constrained by the plan's CUDA/cuDNN versions."""
    if not _NAME.fullmatch(name):
        raise DataError(f"matrix conda package {name!r} is not a package name")
    from provisioner.versions import major_minor

    cuda_minor = major_minor(plan.cuda_version)
    if name in ("cuda-version", "cudatoolkit"):
        return f"{name}={cuda_minor}"
    if name == "cudnn" and plan.cudnn_version:
        return f"cudnn={plan.cudnn_version.split('.')[0]}"
    return name


def _without_nvidia_wheels(packages: Sequence[str], ort_package: str) -> list[str]:
    """The requirements minus NVIDIA library wheels, and minus onnxruntime-gpu's extras that pull them."""
    from packaging.requirements import Requirement

    kept = []
    for text in packages:
        req = Requirement(text)
        if canonical(req.name).startswith("nvidia-"):
            continue
        if canonical(req.name) == canonical(ort_package) and req.extras:
            req.extras = set()
            text = str(req)
        kept.append(text)
    return kept


# -- Dockerfile ---------------------------------------------------------------------------------------------


def render_dockerfile(plan: Plan, matrix: Matrix, *, base: str = "slim", base_image: str | None = None) -> str:
    """A Dockerfile: pinned base, a layer per concern, non-root user, a GPU-free build-time library check."""
    if base not in BASES:
        raise BadInput(f"unknown Dockerfile base {base!r}", hint=f"use one of: {', '.join(BASES)}")
    if _is_windows(plan):
        raise BadInput(
            "a Dockerfile recipe builds a Linux image; this plan is for windows-amd64",
            hint="plan with --platform linux-x86_64 (or linux-aarch64)",
        )
    _refuse_credentials(plan)
    if base_image is not None and not _IMAGE.fullmatch(base_image):
        raise BadInput(f"base image {base_image!r} is not an image reference")
    build = find_build(plan, matrix)
    bases = _bases()
    if base == "slim":
        target = _required_python(plan)
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
            replace(s, packages=tuple(_without_nvidia_wheels(s.packages, plan.package)))
            for s in plan.steps
            if s.kind == "install"
        )
    if not _IMAGE.fullmatch(default_image):
        raise DataError(f"base image {default_image!r} from the data is not an image reference")
    sonames = [s for s in (*build.libraries_linked, *build.libraries_lazy) if s]
    for soname in sonames:
        if not _SONAME.fullmatch(soname):
            raise DataError(f"matrix library {soname!r} is not a soname")
    check_argv = [VENV_PYTHON, CHECK_SCRIPT_PATH, *sonames] + (["--tensorrt"] if plan.tensorrt_version else [])
    return _template("Dockerfile.tmpl").substitute(
        header="\n".join(header_lines(plan)),
        base_choice=_wrap_comment(choice),
        image_name=f"onnxruntime-gpu:{plan.ort_version}-cuda{plan.cuda_version}",
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
        checked_sonames=_wrap_comment(", ".join(sonames) or "(none listed)", width=70, prefix="#     "),
        check_layer=_check_layer(shlex.join(check_argv), loader=base == "slim"),
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


def _check_layer(check_command: str, *, loader: bool) -> str:
    """One RUN: write the check program and the siblings it imports (provisioner/standalone: the same files
    ortprov runs, each line a single-quoted printf argument), register the NVIDIA wheel folders with the
    loader (slim base), run the check."""
    lines = [f"RUN mkdir -p {CHECK_DIR} \\"]
    for name, content in standalone.sources(CHECK_PROGRAM).items():
        words = [shlex.quote(line) for line in content.decode("utf-8").splitlines()]
        lines += [" && printf '%s\\n' \\", *(f"    {w} \\" for w in words), f"    > {CHECK_DIR}/{name} \\"]
    if loader:
        lines += [
            f" && {VENV_PYTHON} {CHECK_SCRIPT_PATH} --write-ld-conf {LD_CONF_PATH} \\",
            " && ldconfig \\",
        ]
    lines.append(f" && {check_command}")
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


def _require_cuda_major(plan: Plan, matrix: Matrix) -> CudaMajor:
    from provisioner.matrix.query import cuda_major

    record = cuda_major(matrix, plan.cuda_version)
    if record is None:
        raise DataError(f"the matrix has no entry for CUDA {plan.cuda_version.split('.')[0]}")
    return record


def _cuda_image(plan: Plan, matrix: Matrix) -> tuple[DockerImage, str]:
    """The nvidia/cuda cuDNN runtime image for the plan, and a note on how it runs on the target drivers.

    In order: the plan's own CUDA minor; the lowest newer minor every target driver supports; the lowest
    newer minor that runs through CUDA minor-version compatibility (each driver at or above the major's
    floor; code JIT-compiled from PTX then needs a driver that knows the newer minor)."""
    from provisioner.matrix.query import cuda_images
    from provisioner.planner import driver_cuda_version
    from provisioner.versions import driver_at_least, vtuple

    record = _require_cuda_major(plan, matrix)
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


def _target_python(plan: Plan) -> str | None:
    """ "3.12" (or "3.13t") of the first target host that names its Python."""
    for host in plan.hosts:
        if host.python:
            return host.python.minor
    return None


def _required_python(plan: Plan) -> str:
    python = _target_python(plan)
    if python is None:
        raise BadInput("the plan does not say which Python to target", hint="plan with --python X.Y")
    return python


@cache
def _template(name: str) -> string.Template:
    try:
        return string.Template((data_dir("recipes") / name).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"recipe template {name} cannot be read: {exc.strerror}", hint="reinstall ortprov") from None


@cache
def _bases() -> dict[str, dict[str, str]]:
    try:
        data: dict[str, dict[str, str]] = json.loads((data_dir("recipes") / "bases.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"recipes/bases.json cannot be read: {exc}", hint="reinstall ortprov") from None
    return data


__all__ = [
    "FORMATS",
    "BASES",
    "PinnedRequirement",
    "render",
    "validate_plan",
    "command_line",
    "one_line",
    "powershell_quote",
    "header_lines",
    "find_build",
]
