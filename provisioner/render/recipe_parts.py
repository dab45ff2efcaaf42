"""What every recipe shares: a plan's strings validated (names, versions, requirements, URLs), quoted (POSIX shell,
PowerShell, YAML) or, for free text in comments, flattened to one line; the header every recipe starts with; the
templates in `recipes/`; and what a recipe asks of the plan and the matrix (the target Python, the CUDA major)."""

from __future__ import annotations

import json
import re
import shlex
import string
from functools import cache
from typing import TYPE_CHECKING

from provisioner.errors import BadInput, DataError
from provisioner.plan import STEP_KINDS, Plan, Step, canonical
from provisioner.resources import data_dir

if TYPE_CHECKING:
    from collections.abc import Sequence

    from provisioner.matrix.model import CudaMajor, Matrix


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")  # always fullmatch: "$" allows "\n"
VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")
_URL = re.compile(r"(?:https?|file)://[^\s\"'<>\\`]+")
_PS_SAFE = re.compile(r"[A-Za-z0-9_./\\][A-Za-z0-9_./\\:=-]*|--?[A-Za-z][A-Za-z0-9-]*")
_PS_QUOTES = "'\u2018\u2019\u201a\u201b"  # PowerShell treats all of these as single quotes


def validate_plan(plan: Plan) -> None:
    """BadInput unless every name, version, requirement and URL of the plan is safe to write into a recipe."""
    if not NAME.fullmatch(plan.package):
        raise BadInput(f"plan package {plan.package!r} is not a distribution name")
    for label, maybe in (
        ("ort_version", plan.ort_version),
        ("cuda_version", plan.cuda_version),
        ("cudnn_version", plan.cudnn_version),
        ("tensorrt_version", plan.tensorrt_version),
    ):
        if maybe is not None and not VERSION.fullmatch(maybe):
            raise BadInput(f"plan {label} {maybe!r} is not a version", hint="re-create the plan with ortprov")
    if plan.index_url is not None:
        _check_url(plan.index_url)
    for number, step in enumerate(plan.steps, 1):
        try:
            _check_step(step)
        except BadInput as exc:
            raise BadInput(f"step {number} ({one_line(step.kind)}): {exc.message}", hint=exc.hint) from None


def _check_step(step: Step) -> None:
    if step.kind not in STEP_KINDS:
        raise BadInput(f"unknown plan step kind {step.kind!r}")
    if not step.runs_installer and step.packages:
        raise BadInput(f"a {step.kind} step names no packages")
    for package in step.packages:
        if step.kind == "uninstall":
            if not NAME.fullmatch(package):
                raise BadInput(f"cannot uninstall {package!r}: not a distribution name")
        else:
            _check_requirement(package)
    for url in (*((step.index_url,) if step.index_url else ()), *step.extra_index_urls):
        _check_url(url)
    for location in step.find_links:
        if not location or _CONTROL.search(location) or location.startswith("-"):
            raise BadInput(f"find-links location {location!r} is not a path or URL")
    for name in step.only_binary:
        if not NAME.fullmatch(name):
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
        raise BadInput(f"requirement {text!r} is not a PEP 508 requirement: {str(exc).splitlines()[0]}") from None


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


def is_windows(plan: Plan) -> bool:
    return bool(plan.hosts) and plan.hosts[0].platform.tag.startswith("windows")


def yaml_str(text: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(text)


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
        by_reason: dict[str, list[str]] = {}  # each reason said once, for the pins it explains
        for pin in plan.pins:
            by_reason.setdefault(pin.reason, []).append(f"{pin.package}=={pin.version}")
        lines += [f"  - {', '.join(pins)}: {reason}" for reason, pins in by_reason.items()]
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


def require_cuda_major(plan: Plan, matrix: Matrix) -> CudaMajor:
    from provisioner.matrix.query import cuda_major

    record = cuda_major(matrix, plan.cuda_version)
    if record is None:
        raise DataError(f"the matrix has no entry for CUDA {plan.cuda_version.split('.')[0]}")
    return record


def target_python(plan: Plan) -> str | None:
    """ "3.12" (or "3.13t") of the first target host that names its Python."""
    for host in plan.hosts:
        if host.python:
            return host.python.minor
    return None


def required_python(plan: Plan) -> str:
    python = target_python(plan)
    if python is None:
        raise BadInput("the plan does not say which Python to target", hint="plan with --python X.Y")
    return python


def without_nvidia_wheels(packages: Sequence[str], ort_package: str) -> list[str]:
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


@cache
def template(name: str) -> string.Template:
    try:
        return string.Template((data_dir("recipes") / name).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"recipe template {name} cannot be read: {exc.strerror}", hint="reinstall ortprov") from None
