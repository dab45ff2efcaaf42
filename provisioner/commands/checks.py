"""The checks and conversions of option values, one per kind of value: each returns None (the value stands), the
value to use (`８.６` read as 8.6, a path as a Path, --dim as sizes), or raises BadInput (one line naming the flag,
a hint with examples). The declarations (commands/options.py) name them: `checks.driver`, `checks.path(...)`.
The limits are validate.py's."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner.errors import BadInput
from provisioner.validate import ascii_digits, duration, whole_number
from provisioner.versions import PYTHON_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable

NONE_WORDS = ("none", "no")

# ASCII digits: a value is first read through validate.ascii_digits (`８.６` is 8.6), then held to these
_DRIVER = re.compile(r"^\d{2,4}(\.\d{1,3}){0,2}$", re.ASCII)
_CC = re.compile(r"^\d{1,2}\.\d$", re.ASCII)
_PYTHON_VERSION = PYTHON_VERSION
_CUDA = re.compile(r"^\d{1,2}(\.\d{1,2})?$", re.ASCII)
_GLIBC = re.compile(r"^2\.\d{1,2}$", re.ASCII)


def ascii_folded(value: str | None) -> str | None:
    """A version-like value as the ASCII digits it shows (`８.６` -> 8.6), stripped."""
    return None if value is None else ascii_digits(value).strip()


def python_version_parts(value: str) -> tuple[str, str, bool]:
    """("3", "12", free-threaded) of a version given to --python; BadInput unless it is a Python 3 version."""
    match = _PYTHON_VERSION.match(ascii_digits(value).strip())
    if not match:
        raise BadInput(
            f"--python {shown(value)} is not a Python version", hint="examples: --python 3.12, --python 3.13t"
        )
    major, minor, free = match.group(1), match.group(2), match.group(3)
    if major != "3":
        raise BadInput(f"--python {value}: onnxruntime-gpu has wheels only for Python 3", hint="example: --python 3.12")
    return major, minor, bool(free)


def split_python_option(value: str | None) -> tuple[str | None, str | None]:
    """`--python` of the planning commands is a version ("3.12", "3.13t") or an interpreter
    ("/opt/venv/bin/python", "python3.12"): (version, path). What parses as a version is a version."""
    if value is None:
        return None, None
    text, folded = value.strip(), ascii_digits(value).strip()
    if not text:
        raise BadInput("--python is empty", hint="pass a version (--python 3.12) or an interpreter path")
    if _PYTHON_VERSION.match(folded):
        python_version_parts(folded)
        return folded, None
    if re.match(r"^\d", folded, re.ASCII):
        raise BadInput(
            f"--python {shown(value)} is not a Python version", hint="examples: --python 3.12, --python 3.13t"
        )
    return None, text


_DRIVER_MAJOR_MIN = 100  # NVIDIA's driver branches are numbered R100 and up (R470, R580); "12.2" is a CUDA version


def driver(value: str | None) -> str | None:
    folded = ascii_folded(value)
    if folded is not None and folded.lower() not in NONE_WORDS and not _DRIVER.match(folded):
        raise BadInput(
            f"--driver {shown(value)} is not an NVIDIA driver version",
            hint="examples: --driver 535.104.05, --driver 580, --driver none (no driver on that machine)",
        )
    if folded is not None and _DRIVER.match(folded) and int(folded.split(".")[0]) < _DRIVER_MAJOR_MIN:
        raise BadInput(
            f"--driver {shown(value)} looks like a CUDA version, not an NVIDIA driver version",
            hint="--driver takes nvidia-smi's 'Driver Version' (535.104.05, 580); to pin the CUDA major: --cuda 12",
        )
    return folded


def gpu_cc(value: str | None) -> str | None:
    folded = ascii_folded(value)
    if folded is None or folded.lower() in NONE_WORDS:
        return folded
    if not all(_CC.match(part.strip()) for part in folded.split(",")):
        raise BadInput(
            f"--gpu-cc {shown(value)} is not a compute capability",
            hint="examples: --gpu-cc 8.6, --gpu-cc 8.0,9.0 (two GPUs), --gpu-cc none",
        )
    return ",".join(part.strip() for part in folded.split(","))


def ort(value: str | None) -> str | None:
    folded = ascii_folded(value)
    if folded is None:
        return None
    from provisioner.versions import ort_matcher

    try:
        ort_matcher(folded)
    except ValueError:
        raise BadInput(
            f"--ort {shown(value)} is not a version or specifier",
            hint="examples: --ort 1.20, --ort 1.20.1, --ort '>=1.18,<1.21'",
        ) from None
    return folded


def cuda(value: str | None) -> str | None:
    folded = ascii_folded(value)
    if folded is not None and not _CUDA.match(folded):
        raise BadInput(f"--cuda {shown(value)} is not a CUDA version", hint="examples: --cuda 12, --cuda 12.4")
    return folded


def glibc(value: str | None) -> str | None:
    folded = ascii_folded(value)
    if folded is not None and not _GLIBC.match(folded):
        raise BadInput(
            f"--glibc {shown(value)} is not a glibc version",
            hint="examples: --glibc 2.28, --glibc 2.35 (`ldd --version` on the target says it)",
        )
    return folded


def tensorrt_libraries(value: str | None) -> None:
    if value is None or value in ("wheels", "system"):
        return
    if not value.strip() or value.startswith("-"):
        raise BadInput(
            f"--tensorrt-libraries {value!r} is not wheels, system or a folder",
            hint="examples: --tensorrt-libraries system, --tensorrt-libraries /opt/TensorRT-10.16/lib",
        )


class OneOf:
    """A check that the value is one of `choices` (`message` names the flag, {!r} the value); the choices are
    also what the shell completes for the option (`Declared.parameters`)."""

    def __init__(self, choices: tuple[str, ...], message: str) -> None:
        self.choices = choices
        self.message = message

    def __call__(self, value: str | None) -> None:
        if value is not None and value not in self.choices:
            raise BadInput(self.message.format(value), hint=f"use one of: {', '.join(self.choices)}")

    def complete(self, incomplete: str) -> list[str]:
        return [choice for choice in self.choices if choice.startswith(incomplete)]


def one_of(choices: tuple[str, ...], message: str) -> OneOf:
    return OneOf(choices, message)


def positive(flag: str) -> Callable[[Any], float]:
    """Seconds (a timeout, a budget): finite, positive, at most validate.MAX_SECONDS (a day)."""

    def check(value: float) -> float:
        return duration(value, flag)

    return check


def between(flag: str, low: int, high: int) -> Callable[[Any], None]:
    def check(value: int | None) -> None:
        if value is not None and not low <= value <= high:
            raise BadInput(f"{flag} must be between {low} and {high}, got {value}", hint=f"example: {flag} {low + 1}")

    return check


def url(flag: str, schemes: tuple[str, ...]) -> Callable[[Any], None]:
    """A URL (or each of a repeated option's) with one of `schemes` that every client reads alike
    (`urls.problem`: a host, a port that exists, no spaces): an index is named by its URL."""
    from provisioner.urls import masked, problem

    def check(value: str | list[str] | None) -> None:
        for each in value if isinstance(value, list) else [value]:
            reason = None if each is None else problem(each, schemes)
            if reason is not None:
                raise BadInput(
                    f"{flag} {shown(masked(str(each)))} {reason}", hint=f"e.g. {flag} https://pypi.org/simple/"
                )

    return check


def http_url(value: str) -> None:
    url("--index-url", ("http", "https"))(value)


def not_empty(flag: str, what: str) -> Callable[[Any], None]:
    """A value that names something (`what`: "folder", "interpreter"): refused when empty or blank."""

    def check(value: str | list[str] | None) -> None:
        for each in value if isinstance(value, list) else [value]:
            if each is not None and not each.strip():
                raise BadInput(f"{flag} is empty: it names no {what}", hint=f"name one, or leave {flag} out")

    return check


def path(flag: str, what: str, then: Callable[[Path], None] | None = None) -> Callable[[Any], Path | None]:
    """A path option: refused when empty (typer would read '' as '.', this folder), else a Path (checked by
    `then`)."""

    def check(value: str | None) -> Path | None:
        if value is None:
            return None
        from provisioner.userfiles import expand_user

        not_empty(flag, what)(value)
        expand_user(value, flag)  # a `~user` without that user is refused here, not deep in the installer
        path = Path(value)
        if then is not None:
            then(path)
        return path

    return check


def model(flag: str) -> Callable[[Any], str | None]:
    """A model file (the child that runs it reads it): a regular file (userfiles.model_file)."""

    def check(value: str | None) -> str | None:
        from provisioner.userfiles import model_file

        return None if value is None else model_file(value, flag)

    return check


def dims(values: list[str] | None) -> dict[str, int]:
    """`--dim batch=1 --dim seq=128` -> {"batch": 1, "seq": 128}; BadInput on anything else."""
    dims: dict[str, int] = {}
    for value in values or []:
        name, sep, size = value.partition("=")
        name = name.strip()
        hint = "size a dynamic input dimension: --dim batch=1"
        if not sep or not name:
            raise BadInput(f"--dim {shown(value)} is not NAME=N", hint=hint)
        try:
            dims[name] = whole_number(size, f"--dim {name}", 1, 2**31 - 1)
        except ValueError as exc:
            raise BadInput(str(exc), hint=hint) from None
    return dims


def creatable_folder(flag: str) -> Callable[[Any], None]:
    """A folder that exists or can be made: not a file, and under a folder this user can write to."""

    def check(value: Path | None) -> None:
        if value is None:
            return
        try:
            str(value).encode("utf-8")
        except UnicodeEncodeError:
            raise BadInput(
                f"{flag} {shown(value)} is not a UTF-8 name: venvs and installers need one", hint="pick another name"
            ) from None
        path = Path(os.path.expanduser(value)).absolute()
        try:
            path.stat()
        except (FileNotFoundError, NotADirectoryError):
            pass
        except (OSError, ValueError) as exc:  # a name too long, a loop of links
            raise BadInput(f"{flag} {shown(value)}: {getattr(exc, 'strerror', None) or exc}") from None
        if path.exists():
            if not path.is_dir():
                raise BadInput(f"{flag} {str(value)!r} is a file, not a folder")
            return
        parent = path.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise BadInput(f"{flag} {str(value)!r} cannot be created: {str(parent)!r} is a file, not a folder")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise BadInput(
                f"{flag} {str(value)!r} cannot be created: {str(parent)!r} is not writable",
                hint="pick a folder you can write to",
            )
        import tempfile  # here, not at the top: it costs `ortprov plan` ~1 ms of start-up

        try:  # the real test (root passes os.access on /proc and the like): make a folder there, and remove it
            os.rmdir(tempfile.mkdtemp(prefix=".ortprov-", dir=parent))
        except OSError as exc:
            raise BadInput(
                f"{flag} {str(value)!r} cannot be created in {str(parent)!r}: {exc.strerror or exc}",
                hint="pick a folder you can write to",
            ) from None

    return check


def shown(value: object) -> str:
    """A value as an error line quotes it: repr, cut short."""
    text = str(value)
    return repr(text if len(text) <= 80 else text[:60] + "...")


def make_folder(flag: str, path: Path) -> None:
    """Create `path` (and its parents) now; BadInput naming the flag when that fails or it is not writable."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(
            f"{flag} {str(path)!r}: cannot create the folder: {exc.strerror or exc}",
            hint="pick a folder you can write to",
        ) from None
    if not os.access(path, os.W_OK):
        raise BadInput(f"{flag} {str(path)!r} is not writable (a read-only file system?)", hint="pick another folder")
