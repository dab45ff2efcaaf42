"""Every command-line option, declared once: flags, type, default, help, placeholder and check.

typer builds a command from a function's signature; `command` writes that signature from these declarations.
A command function names the options it takes as its parameters (`fmt`, `json_output`, ...; `planning` stands
for all the planning options) and receives checked values: the planning options as one typed
`PlanningOptions`, built and validated by `planning_options`, the one function that does it. It returns a
result object, which provisioner.render.output prints (text or JSON); an OrtprovError it raises becomes one
error line (and, with --json, a JSON error object) and its exit code.

What a saved plan already decided (`PLANNING_FLAGS`, `refuse_beside_saved_plan`) is derived from the same
declarations, so a new planning option is refused beside `--plan FILE` without a second edit.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner.errors import BadInput
from provisioner.facts import PLATFORM_TAGS
from provisioner.render import DOCKERFILE_BASES, RECIPE_FORMATS
from provisioner.validate import ascii_digits, duration, whole_number
from provisioner.versions import PYTHON_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from provisioner.render.output import Result

NONE_WORDS = ("none", "no")
CUDA_LIBRARY_SOURCES = ("wheels", "system")
PLAN_FORMATS = ("text", "json", *RECIPE_FORMATS)  # text and json: the plan itself; the others: a recipe
PROVIDERS = ("cuda", "tensorrt")
INSTALLERS = ("auto", "uv", "pip", "conda")
INDEX_SCHEMES = ("http", "https", "file")  # what pip and uv take as an index URL

# ASCII digits: a value is first read through validate.ascii_digits (`８.６` is 8.6), then held to these
_DRIVER = re.compile(r"^\d{2,4}(\.\d{1,3}){0,2}$", re.ASCII)
_CC = re.compile(r"^\d{1,2}\.\d$", re.ASCII)
_PYTHON_VERSION = PYTHON_VERSION
_CUDA = re.compile(r"^\d{1,2}(\.\d{1,2})?$", re.ASCII)
_GLIBC = re.compile(r"^2\.\d{1,2}$", re.ASCII)


@dataclass(frozen=True)
class PlanningOptions:
    """Every planning input, checked (`planning_options` builds it from the flags)."""

    host_files: tuple[str, ...] = ()
    driver: str | None = None  # "535.104.05", "580", or "none" (no driver: a build server)
    gpu_cc: str | None = None  # "8.6", "8.0,9.0" (several GPUs), or "none"
    python_version: str | None = None  # "3.12", "3.13t"
    platform: str | None = None  # linux-x86_64 | linux-aarch64 | windows-amd64
    ort: str | None = None  # "1.20", "1.20.1", ">=1.18,<1.21"
    cuda: str | None = None  # "12", "12.4"
    tensorrt: bool = False
    target_python: str | None = None  # an interpreter to probe (path or command name)
    prefer_existing_libraries: bool = True
    cuda_libraries: str | None = None  # wheels | system; None: not given (wheels)
    loader_hook: bool = True  # False: --no-loader-hook
    tensorrt_libraries: str | None = None  # wheels | system | a folder; None: not given (wheels)
    tensorrt_index_url: str | None = None  # a mirror of the index of the TensorRT wheels


# -- the checks: BadInput (one line naming the flag, a hint with examples) ----------------------------------


def _folded(value: str | None) -> str | None:
    """A version-like value as the ASCII digits it shows (`８.６` -> 8.6), stripped."""
    return None if value is None else ascii_digits(value).strip()


def python_version_parts(value: str) -> tuple[str, str, bool]:
    """("3", "12", free-threaded) of a version given to --python; BadInput unless it is a Python 3 version."""
    match = _PYTHON_VERSION.match(ascii_digits(value).strip())
    if not match:
        raise BadInput(
            f"--python {_shown(value)} is not a Python version", hint="examples: --python 3.12, --python 3.13t"
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
            f"--python {_shown(value)} is not a Python version", hint="examples: --python 3.12, --python 3.13t"
        )
    return None, text


def _check_driver(value: str | None) -> str | None:
    folded = _folded(value)
    if folded is not None and folded.lower() not in NONE_WORDS and not _DRIVER.match(folded):
        raise BadInput(
            f"--driver {_shown(value)} is not an NVIDIA driver version",
            hint="examples: --driver 535.104.05, --driver 580, --driver none (no driver on that machine)",
        )
    return folded


def _check_gpu_cc(value: str | None) -> str | None:
    folded = _folded(value)
    if folded is None or folded.lower() in NONE_WORDS:
        return folded
    if not all(_CC.match(part.strip()) for part in folded.split(",")):
        raise BadInput(
            f"--gpu-cc {_shown(value)} is not a compute capability",
            hint="examples: --gpu-cc 8.6, --gpu-cc 8.0,9.0 (two GPUs), --gpu-cc none",
        )
    return ",".join(part.strip() for part in folded.split(","))


def _check_ort(value: str | None) -> str | None:
    folded = _folded(value)
    if folded is None:
        return None
    from provisioner.versions import ort_matcher

    try:
        ort_matcher(folded)
    except ValueError:
        raise BadInput(
            f"--ort {_shown(value)} is not a version or specifier",
            hint="examples: --ort 1.20, --ort 1.20.1, --ort '>=1.18,<1.21'",
        ) from None
    return folded


def _check_cuda(value: str | None) -> str | None:
    folded = _folded(value)
    if folded is not None and not _CUDA.match(folded):
        raise BadInput(f"--cuda {_shown(value)} is not a CUDA version", hint="examples: --cuda 12, --cuda 12.4")
    return folded


def _check_glibc(value: str | None) -> str | None:
    folded = _folded(value)
    if folded is not None and not _GLIBC.match(folded):
        raise BadInput(
            f"--glibc {_shown(value)} is not a glibc version",
            hint="examples: --glibc 2.28, --glibc 2.35 (`ldd --version` on the target says it)",
        )
    return folded


def _check_tensorrt_libraries(value: str | None) -> None:
    if value is None or value in ("wheels", "system"):
        return
    if not value.strip() or value.startswith("-"):
        raise BadInput(
            f"--tensorrt-libraries {value!r} is not wheels, system or a folder",
            hint="examples: --tensorrt-libraries system, --tensorrt-libraries /opt/TensorRT-10.16/lib",
        )


def _check_tensorrt_index_url(value: str | None) -> None:
    if value is not None and not re.match(r"^(https?|file)://\S+$", value):
        raise BadInput(
            f"--tensorrt-index-url {value!r} is not an http(s):// or file:// URL",
            hint="e.g. --tensorrt-index-url https://mirror.example.com/nvidia/simple/",
        )


class _OneOf:
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


def _one_of(choices: tuple[str, ...], message: str) -> _OneOf:
    return _OneOf(choices, message)


def _positive(flag: str) -> Callable[[Any], float]:
    """Seconds (a timeout, a budget): finite, positive, at most validate.MAX_SECONDS (a day)."""

    def check(value: float) -> float:
        return duration(value, flag)

    return check


def _between(flag: str, low: int, high: int) -> Callable[[Any], None]:
    def check(value: int | None) -> None:
        if value is not None and not low <= value <= high:
            raise BadInput(f"{flag} must be between {low} and {high}, got {value}", hint=f"example: {flag} {low + 1}")

    return check


def _url(flag: str, schemes: tuple[str, ...]) -> Callable[[Any], None]:
    """A URL (or each of a repeated option's) with one of `schemes`: an index is named by its URL."""
    pattern = re.compile(rf"^({'|'.join(schemes)})://\S+$", re.IGNORECASE)

    def check(value: str | list[str] | None) -> None:
        for each in value if isinstance(value, list) else [value]:
            if each is not None and not pattern.match(each):
                said = ", ".join(f"{scheme}://" for scheme in schemes[:-1]) + f" or {schemes[-1]}://"
                raise BadInput(
                    f"{flag} {_shown(each)} is not a URL ({said})", hint=f"e.g. {flag} https://pypi.org/simple/"
                )

    return check


def _http_url(value: str) -> None:
    _url("--index-url", ("http", "https"))(value)


def _not_empty(flag: str, what: str) -> Callable[[Any], None]:
    """A value that names something (`what`: "folder", "interpreter"): refused when empty or blank."""

    def check(value: str | list[str] | None) -> None:
        for each in value if isinstance(value, list) else [value]:
            if each is not None and not each.strip():
                raise BadInput(f"{flag} is empty: it names no {what}", hint=f"name one, or leave {flag} out")

    return check


def _path(flag: str, what: str, then: Callable[[Path], None] | None = None) -> Callable[[Any], Path | None]:
    """A path option: refused when empty (typer would read '' as '.', this folder), else a Path (checked by
    `then`)."""

    def check(value: str | None) -> Path | None:
        if value is None:
            return None
        from provisioner.userfiles import expand_user

        _not_empty(flag, what)(value)
        expand_user(value, flag)  # a `~user` without that user is refused here, not deep in the installer
        path = Path(value)
        if then is not None:
            then(path)
        return path

    return check


def _model(flag: str) -> Callable[[Any], str | None]:
    """A model file (the child that runs it reads it): a regular file (userfiles.model_file)."""

    def check(value: str | None) -> str | None:
        from provisioner.userfiles import model_file

        return None if value is None else model_file(value, flag)

    return check


def _dims(values: list[str] | None) -> dict[str, int]:
    """`--dim batch=1 --dim seq=128` -> {"batch": 1, "seq": 128}; BadInput on anything else."""
    dims: dict[str, int] = {}
    for value in values or []:
        name, sep, size = value.partition("=")
        name = name.strip()
        hint = "size a dynamic input dimension: --dim batch=1"
        if not sep or not name:
            raise BadInput(f"--dim {_shown(value)} is not NAME=N", hint=hint)
        try:
            dims[name] = whole_number(size, f"--dim {name}", 1, 2**31 - 1)
        except ValueError as exc:
            raise BadInput(str(exc), hint=hint) from None
    return dims


# what a value must not look like: an option (`--host --json` took `--json` as the host file's name)
_SHORT_FLAGS = ("-v", "-q", "-y", "-f", "-h")


def _refuse_an_option(declared: Declared, name: str, value: Any) -> None:
    """BadInput when a text value is an option (`--label --json`): the value the flag wanted is missing."""
    for each in value if isinstance(value, list) else [value]:
        if isinstance(each, str) and (each.startswith("--") or each in _SHORT_FLAGS):
            flag = _declared_flag(name)
            raise BadInput(
                f"{flag} got {_shown(each)}, an option, as its value: {flag} needs a value",
                hint=f"write {flag} {declared.metavar or 'VALUE'} (a file whose name starts with -: ./{each})",
            )


def _creatable_folder(flag: str) -> Callable[[Any], None]:
    """A folder that exists or can be made: not a file, and under a folder this user can write to."""

    def check(value: Path | None) -> None:
        if value is None:
            return
        try:
            str(value).encode("utf-8")
        except UnicodeEncodeError:
            raise BadInput(
                f"{flag} {_shown(value)} is not a UTF-8 name: venvs and installers need one", hint="pick another name"
            ) from None
        path = Path(os.path.expanduser(value)).absolute()
        try:
            path.stat()
        except (FileNotFoundError, NotADirectoryError):
            pass
        except (OSError, ValueError) as exc:  # a name too long, a loop of links
            raise BadInput(f"{flag} {_shown(value)}: {getattr(exc, 'strerror', None) or exc}") from None
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
        try:  # the real test (root passes os.access on /proc and the like): make a folder there, and remove it
            os.rmdir(tempfile.mkdtemp(prefix=".ortprov-", dir=parent))
        except OSError as exc:
            raise BadInput(
                f"{flag} {str(value)!r} cannot be created in {str(parent)!r}: {exc.strerror or exc}",
                hint="pick a folder you can write to",
            ) from None

    return check


def _given_path_error(exc: BaseException, values: dict[str, Any]) -> BadInput | None:
    """BadInput when `exc` is an OSError about a path the user gave (a name too long, a loop of links, a special
    file system): that path is the mistake, not ortprov."""
    if not isinstance(exc, OSError) or not exc.filename:
        return None
    failed = str(exc.filename)
    for name, value in values.items():
        for each in value if isinstance(value, list) else [value]:
            if isinstance(each, (str, Path)) and str(each) and str(each).rstrip("/") in failed:
                flag = _declared_flag(name)
                shown = str(each) if len(str(each)) <= 80 else str(each)[:60] + "..."
                return BadInput(f"{flag} {shown!r}: {exc.strerror or exc}", hint="pass another path")
    return None


def _declared_flag(name: str) -> str:
    """The flag of a declared option (its longest spelling); a positional argument's metavar (MODEL)."""
    declared = PLANNING.get(name) or OPTIONS.get(name)
    if declared is not None and declared.flags:
        return max(declared.flags, key=len)
    return declared.metavar or name if declared is not None else f"--{name.replace('_', '-')}"


def _shown(value: object) -> str:
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


# -- the declarations ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """One option: what typer shows and parses, and the check its value passes before a command runs."""

    flags: tuple[str, ...]
    annotation: Any  # the Python type typer converts to
    default: Any  # ... : required
    help: str
    metavar: str | None = None
    check: Callable[[Any], Any] | None = None  # BadInput, or None (the value stands), or the value to use
    old_flags: tuple[str, ...] = ()  # former spellings, still read, not shown in the help
    sets: tuple[str, ...] = ()  # planning options: the PlanningOptions fields it sets
    argument: bool = False  # a positional argument (flags: ()), named by its metavar

    def parameters(self, name: str) -> list[inspect.Parameter]:
        """The typer parameters of this option (and of its former spelling)."""
        import typer

        if self.argument:
            return [self._parameter(name, typer.Argument(self.default, help=self.help, metavar=self.metavar))]
        complete = getattr(self.check, "complete", None)  # the declared choices complete in the shell
        option = typer.Option(self.default, *self.flags, help=self.help, metavar=self.metavar, autocompletion=complete)
        found = [self._parameter(name, option)]
        if self.old_flags:
            old = typer.Option(None, *self.old_flags, metavar=self.metavar, hidden=True)
            found.append(self._parameter(_old(name), old, self.annotation | None))
        return found

    def _parameter(self, name: str, default: Any, annotation: Any = None) -> inspect.Parameter:
        kind = inspect.Parameter.KEYWORD_ONLY
        return inspect.Parameter(name, kind, default=default, annotation=annotation or self.annotation)

    def value(self, name: str, values: dict[str, Any]) -> Any:
        """The checked value (a former spelling, given, stands for the option)."""
        value = values[name]
        if self.old_flags and values.get(_old(name)) is not None:
            value = values[_old(name)]
        return self.checked(name, value)

    def checked(self, name: str, value: Any) -> Any:
        """`value` after its check: BadInput, or the value to use (a check returns None when the value stands,
        or the value converted: `８.６` read as 8.6, a path as a Path, --dim as sizes)."""
        _refuse_an_option(self, name, value)
        if self.check is None:
            return value
        converted = self.check(value)
        return value if converted is None else converted


def _old(name: str) -> str:
    return f"{name}__old_spelling"


# The planning options, in the order of the help (and of PLANNING_FLAGS).
PLANNING: dict[str, Declared] = {
    "host": Declared(
        ("--host",),
        list[str] | None,
        None,
        "A host file from `ortprov detect --json` (repeat for several hosts: one plan for all).",
        "FILE",
        sets=("host_files",),
    ),
    "driver": Declared(
        ("--driver",),
        str | None,
        None,
        "NVIDIA driver version (535.104.05, 580), or 'none'.",
        "VERSION",
        _check_driver,
        sets=("driver",),
    ),
    "gpu_cc": Declared(
        ("--gpu-cc",),
        str | None,
        None,
        "GPU compute capability (8.6); several: 8.0,9.0; or 'none'.",
        "X.Y",
        _check_gpu_cc,
        sets=("gpu_cc",),
    ),
    "python": Declared(
        ("--python",),
        str | None,
        None,
        "Target Python: a version (3.12, 3.13t) to plan for, or an interpreter / venv to probe.",
        "X.Y|PATH",
        sets=("python_version", "target_python"),  # named "--python X.Y" and "--python PATH" beside a saved plan
    ),
    "platform": Declared(
        ("--platform",),
        str | None,
        None,
        " | ".join(PLATFORM_TAGS) + ".",
        "PLATFORM",
        _one_of(PLATFORM_TAGS, "unknown platform {!r}"),
        sets=("platform",),
    ),
    "ort": Declared(
        ("--ort",),
        str | None,
        None,
        "onnxruntime-gpu release: 1.20, 1.20.1 or '>=1.18,<1.21'.",
        "SPEC",
        _check_ort,
        sets=("ort",),
    ),
    "cuda": Declared(
        ("--cuda",),
        str | None,
        None,
        "Only builds for this CUDA (12, 12.4).",
        "MAJOR[.MINOR]",
        _check_cuda,
        sets=("cuda",),
    ),
    "tensorrt": Declared(
        ("--tensorrt",),
        bool,
        False,
        "Add the TensorRT pip packages the release's TensorRT provider needs.",
        sets=("tensorrt",),
    ),
    "cuda_libraries": Declared(
        ("--cuda-libraries",),
        str | None,
        None,
        "Where CUDA and cuDNN come from: NVIDIA pip wheels (the default), or the system (an nvidia/cuda image, "
        "a CUDA toolkit + cuDNN install): then no NVIDIA wheels are installed.",
        "|".join(CUDA_LIBRARY_SOURCES),
        _one_of(CUDA_LIBRARY_SOURCES, "--cuda-libraries {!r} is not a library source"),
        sets=("cuda_libraries",),
    ),
    "tensorrt_libraries": Declared(
        ("--tensorrt-libraries",),
        str | None,
        None,
        "Where TensorRT comes from (implies --tensorrt): its pip wheels (the default), the system's loader path "
        "(a TensorRT container or tarball), or a folder holding libnvinfer.so.N.",
        "wheels|system|DIR",
        _check_tensorrt_libraries,
        sets=("tensorrt_libraries",),
    ),
    "tensorrt_index_url": Declared(
        ("--tensorrt-index-url",),
        str | None,
        None,
        "A mirror of the index that serves the real TensorRT wheels (implies --tensorrt); also handed to "
        "NVIDIA's source stubs as WHEEL_STUB_PIP_INDEX_URL.",
        "URL",
        _check_tensorrt_index_url,
        sets=("tensorrt_index_url",),
    ),
    "no_loader_hook": Declared(
        ("--no-loader-hook",),
        bool,
        False,
        "Do not install the loader hook that lets a plain `import onnxruntime` find the NVIDIA wheels' "
        "libraries; the plan then says the line your code must call instead.",
        sets=("loader_hook",),
    ),
}

PLANNING_HELP = """Where the hosts come from: --host FILE (repeatable; flags override the files), or, with
--driver and --gpu-cc, a machine described by flags (nothing is probed; platform and Python default to this
machine's), or else this machine, probed (--python PATH picks the interpreter), with flags overriding it.

--python takes a version (3.12, 3.13t: plan for it) or an interpreter / venv path (probe it)."""

TARGET_HELP = "default: $VIRTUAL_ENV, else $CONDA_PREFIX, else the Python running ortprov"

# Every other option, by the parameter name a command function gives it.
OPTIONS: dict[str, Declared] = {
    "json_output": Declared(
        ("--json",), bool, False, "Print the result as one JSON object on stdout (errors too: docs/json.md)."
    ),
    "verbose": Declared(
        ("-v", "--verbose"),
        bool,
        False,
        "Say more: every rejected candidate; the installer's output as it runs; a bug's traceback.",
    ),
    "quiet": Declared(
        ("-q", "--quiet"), bool, False, "Say less: no notes or progress on stderr (the result, and errors, only)."
    ),
    "target": Declared(
        ("--python",),
        str | None,
        None,
        f"The interpreter (or venv folder) to examine; a version (3.12) finds python3.12 on PATH; {TARGET_HELP}.",
        "PATH",
        _not_empty("--python", "interpreter"),
    ),
    "timeout": Declared(
        ("--timeout",),
        float,
        120.0,
        "Seconds before the GPU check (a child process of the target Python) is abandoned.",
        "SECONDS",
        _positive("--timeout"),
        old_flags=("--verify-timeout",),
    ),
    "probe_timeout": Declared(
        ("--timeout",),
        float,
        20.0,
        "Seconds to wait for the package probe (a child process of the target Python).",
        "SECONDS",
        _positive("--timeout"),
    ),
    "provider": Declared(
        ("--provider",),
        str,
        "cuda",
        "The GPU provider to prove.",
        "|".join(PROVIDERS),
        _one_of(PROVIDERS, "--provider {!r} is not cuda or tensorrt"),
    ),
    "tensorrt_provider": Declared(
        ("--tensorrt",),
        bool,
        False,
        "Prove the TensorRT provider (= --provider tensorrt): first in the session, the libnvinfer it loaded, "
        "and a second session that reuses the engine cache.",
    ),
    "preload": Declared(
        ("--preload",),
        bool,
        False,
        "Your code calls onnxruntime.preload_dlls() before creating sessions: do the same. Without it, the "
        "verdict is what a plain program gets.",
    ),
    # detect
    "label": Declared(("--label",), str, "", "A name stored in the host file, e.g. 'H100, driver 580'.", "TEXT"),
    # plan, dockerfile
    "fmt": Declared(
        ("--format", "-f"),
        str,
        "text",
        " | ".join(PLAN_FORMATS) + ".",
        "FORMAT",
        _one_of(PLAN_FORMATS, "unknown format {!r}"),
    ),
    "hashes": Declared(("--hashes",), bool, False, "requirements: pin sha256 digests read from the index."),
    "base": Declared(
        ("--base",),
        str,
        "slim",
        "The Dockerfile's base image: slim (Python, then the NVIDIA wheels) or cuda (nvidia/cuda with cuDNN).",
        "|".join(DOCKERFILE_BASES),
        _one_of(DOCKERFILE_BASES, "unknown --base {!r}"),
    ),
    # apply, download
    "plan_file": Declared(
        ("--plan",),
        str | None,
        None,
        "Use a plan saved by `ortprov plan --json` (what it removes is read from the target).",
        "FILE",
        _path("--plan", "file"),
    ),
    "venv": Declared(
        ("--venv",),
        str | None,
        None,
        "Target venv; created when missing (with --python X.Y's Python, else this one's).",
        "DIR",
        _path("--venv", "folder", _creatable_folder("--venv")),
    ),
    "system": Declared(("--system",), bool, False, "Allow an externally managed (PEP 668) interpreter."),
    "installer": Declared(
        ("--installer",),
        str,
        "auto",
        "auto: uv if available, else pip. conda: the conda recipe with micromamba/mamba/conda, then its pip part.",
        "|".join(INSTALLERS),
        _one_of(INSTALLERS, "unknown installer {!r}"),
    ),
    "index_url": Declared(
        ("--index-url",),
        str | None,
        None,
        "Package index for the install steps (a mirror).",
        "URL",
        _url("--index-url", INDEX_SCHEMES),
    ),
    "extra_index_url": Declared(
        ("--extra-index-url",),
        list[str] | None,
        None,
        "Additional index (repeatable).",
        "URL",
        _url("--extra-index-url", INDEX_SCHEMES),
    ),
    "find_links": Declared(
        ("--find-links",),
        list[str] | None,
        None,
        "Also look for wheels here (repeatable).",
        "DIR|URL",
        _not_empty("--find-links", "folder or URL"),
    ),
    "wheelhouse": Declared(
        ("--wheelhouse",),
        str | None,
        None,
        "Install offline from a folder filled by `ortprov download` (--no-index --find-links DIR; its plan.json "
        "unless flags ask for another plan).",
        "DIR",
        _path("--wheelhouse", "folder"),
    ),
    "dry_run": Declared(
        ("--dry-run",),
        bool,
        False,
        "Make the same checks and list the same commands as the real run, with what they would change; change nothing.",
    ),
    "yes": Declared(("--yes", "-y"), bool, False, "Do not ask before removing or replacing packages."),
    "no_verify": Declared(("--no-verify",), bool, False, "Skip verification after installing."),
    "verify_static": Declared(
        ("--verify-static",),
        bool,
        False,
        "Verify only that every library the CUDA provider needs resolves (no GPU needed).",
    ),
    "require_gpu_verify": Declared(
        ("--require-gpu-verify",),
        bool,
        False,
        "Fail (and restore) unless a CUDA session ran on the GPU: without an NVIDIA driver (a Docker build, CI), "
        "the static check alone is then not enough.",
    ),
    "keep": Declared(
        ("--keep",), bool, False, "Keep the installation when its verification fails (default: restore it)."
    ),
    "dest": Declared(
        ("--dest",),
        str,
        ...,
        "The wheelhouse folder (created when missing).",
        "DIR",
        _path("--dest", "folder", _creatable_folder("--dest")),
    ),
    "glibc": Declared(
        ("--glibc",), str | None, None, "Target glibc (default: the plan's host, else 2.28).", "X.Y", _check_glibc
    ),
    # verify, doctor
    "model": Declared(
        ("--model",), str | None, None, "Check your .onnx model instead of the built-in one.", "FILE", _model("--model")
    ),
    "static": Declared(
        ("--static",), bool, False, "Without a GPU: check that every library the provider needs resolves."
    ),
    "dim": Declared(
        ("--dim",),
        list[str] | None,
        None,
        "Size of a dynamic input dimension of --model (repeatable).",
        "NAME=N",
        _dims,
    ),
    "log": Declared(
        ("--log",), str | None, None, "Explain this error log only (- reads stdin); touches nothing.", "FILE|-"
    ),
    # tune, doctor --model
    "model_file": Declared((), str, ..., "The .onnx model to measure.", "MODEL", _model("MODEL"), argument=True),
    "shape": Declared(
        ("--shape",),
        list[str] | None,
        None,
        "An input shape of one run, e.g. x=1x3x640x480 (repeat: one run per value; an input given once keeps it).",
        "NAME=DIMS",
    ),
    "shapes": Declared(
        ("--shapes",),
        str | None,
        None,
        'The runs, a JSON list of {input: dims}, e.g. [{"x": [1, 3, 640, 480]}, {"x": "1x3x960x736"}].',
        "FILE",
        _not_empty("--shapes", "file"),
    ),
    "budget": Declared(
        ("--budget",),
        float,
        300.0,
        "Seconds the whole tune may take (variants beyond it are skipped).",
        "SECONDS",
        _positive("--budget"),
    ),  # fmt: skip
    "inputs_dir": Declared(
        ("--inputs",),
        str | None,
        None,
        "Feed your own inputs: a folder of .npy (one array per run), .npz (one array per input) or images (read "
        "with PIL or cv2 in the target, resized and normalised as RapidOCR does); default: generated ones.",
        "DIR",
    ),
    "allow_output_change": Declared(
        ("--allow-output-change",),
        bool,
        False,
        "Recommend the fastest variant even when its outputs differ from the CPU's beyond tolerance.",
    ),
    "tune_model": Declared(
        ("--model",),
        str | None,
        None,
        "Also measure this .onnx model on the CPU and on CUDA (as `ortprov tune`, --budget seconds) and report "
        "gpu-slower-than-cpu and a faster GPU variant that changes the results.",
        "FILE",
        _model("--model"),
    ),
    # matrix
    "directory": Declared(
        ("--dir",),
        str | None,
        None,
        "Validate the matrices/*.yaml in this folder instead of the data in use.",
        "DIR",
        _not_empty("--dir", "folder"),
    ),
    "matrix_index_url": Declared(
        ("--index-url",),
        str,
        "https://pypi.org/simple/",
        "Simple API root of PyPI or a mirror (PEP 691 JSON preferred).",
        "URL",
        _http_url,
    ),
    "http_timeout": Declared(
        ("--timeout",), float, 20.0, "Seconds per HTTP request.", "SECONDS", _positive("--timeout")
    ),
    "retries": Declared(
        ("--retries",), int, 2, "Retries per HTTP request on timeouts and 5xx.", "N", _between("--retries", 0, 10)
    ),
    "limit": Declared(
        ("--limit",), int | None, None, "Only the newest N new releases.", "N", _between("--limit", 1, 10_000)
    ),
}
# `matrix show` filters with the planning options' own --ort and --cuda: one spelling, one check
OPTIONS["ort"] = PLANNING["ort"]
OPTIONS["cuda"] = PLANNING["cuda"]


# -- planning options: one builder, and what a saved plan already decided -----------------------------------


def planning_options(
    *,
    host: list[str] | None = None,
    driver: str | None = None,
    gpu_cc: str | None = None,
    python: str | None = None,
    platform: str | None = None,
    ort: str | None = None,
    cuda: str | None = None,
    tensorrt: bool = False,
    cuda_libraries: str | None = None,
    no_loader_hook: bool = False,
    tensorrt_libraries: str | None = None,
    tensorrt_index_url: str | None = None,
) -> PlanningOptions:
    """The planning flags as one checked PlanningOptions: each flag's own check (PLANNING), `--python` split
    into a version or an interpreter, then the checks across flags. BadInput for the first bad input."""
    arguments = dict(locals())  # the parameters are named as the PLANNING declarations
    given = {name: PLANNING[name].checked(name, value) for name, value in arguments.items()}
    version, interpreter = split_python_option(given["python"])
    tensorrt_libraries, tensorrt_index_url = given["tensorrt_libraries"], given["tensorrt_index_url"]
    if tensorrt_index_url and tensorrt_libraries not in (None, "wheels"):
        raise BadInput(
            f"--tensorrt-index-url and --tensorrt-libraries {tensorrt_libraries} exclude each other: an index "
            "serves wheels, and TensorRT would come from elsewhere",
            hint="drop one of the two",
        )
    if tensorrt_libraries not in (None, "wheels", "system"):
        from provisioner.userfiles import expand_user

        tensorrt_libraries = str(expand_user(tensorrt_libraries, "--tensorrt-libraries").absolute())
    tensorrt = tensorrt or bool(tensorrt_libraries or tensorrt_index_url)
    if host and interpreter:
        raise BadInput(
            f"--python {interpreter!r} names an interpreter on this machine; it cannot be combined with --host",
            hint="to set the Python of the host files, pass a version: --python 3.12",
        )
    return PlanningOptions(
        host_files=tuple(given["host"] or ()),
        driver=given["driver"],
        gpu_cc=given["gpu_cc"],
        python_version=version,
        platform=given["platform"],
        ort=given["ort"],
        cuda=given["cuda"],
        tensorrt=tensorrt,
        target_python=interpreter,
        cuda_libraries=given["cuda_libraries"],
        loader_hook=not no_loader_hook,
        tensorrt_libraries=tensorrt_libraries,
        tensorrt_index_url=tensorrt_index_url,
    )


def _flag_labels() -> dict[str, str]:
    """PlanningOptions field -> how a refusal names its flag ("--python X.Y" and "--python PATH" for the two
    fields --python sets, from its metavar)."""
    labels = {}
    for declared in PLANNING.values():
        kinds = (declared.metavar or "").split("|") if len(declared.sets) > 1 else [""] * len(declared.sets)
        for field, kind in zip(declared.sets, kinds, strict=True):
            labels[field] = f"{declared.flags[0]} {kind}".rstrip()
    return labels


# Each planning input and the flag that sets it. A saved plan (`apply --plan FILE`, a wheelhouse's plan.json)
# has made every one of these choices: beside it, a command honours only those it reads as something else
# (apply: --python names the target; download: --python X.Y and --platform pick the wheels to fetch) and
# refuses the others.
PLANNING_FLAGS = _flag_labels()


def planning_flags_given(options: PlanningOptions, honoured: Collection[str] = ()) -> list[str]:
    """The planning flags the user gave (PLANNING_FLAGS), less the fields in `honoured`."""
    unset = PlanningOptions()
    return [
        flag
        for name, flag in PLANNING_FLAGS.items()
        if name not in honoured and getattr(options, name) != getattr(unset, name)
    ]


def refuse_beside_saved_plan(options: PlanningOptions, saved: str, honoured: Collection[str] = ()) -> None:
    """BadInput (one line) when a planning flag other than `honoured` was given beside a saved plan."""
    given = planning_flags_given(options, honoured)
    if given:
        flags = " and ".join(given)
        raise BadInput(
            f"{saved} already says what to install: {flags} cannot change it",
            hint=f"drop {flags}, or make a new plan with {'them' if len(given) > 1 else 'it'}: "
            "`ortprov plan ... --json > plan.json`",
        )


# -- from declarations to a typer command --------------------------------------------------------------------


# The options every command takes, declared once above: what a pip or uv user types everywhere
EVERY_COMMAND = ("verbose", "quiet")


def _declared(name: str) -> dict[str, Declared]:
    """The declarations a command function's parameter stands for."""
    if name == "planning":
        return PLANNING
    if name not in OPTIONS:
        raise TypeError(f"option {name!r} is not declared in provisioner/commands/options.py")
    return {name: OPTIONS[name]}


def wants_json(values: dict[str, Any]) -> bool:
    """--json, or plan's --format json (--json beside another --format is refused, in text)."""
    fmt = values.get("fmt")
    return fmt == "json" or (bool(values.get("json_output")) and fmt in (None, "text"))


def command(function: Callable[..., Result]) -> Callable[..., None]:
    """A typer command from a command function whose parameters are declared option names: typer reads the
    options from the signature written here; the command gets checked values and returns a result object,
    printed by provisioner.render.output with its exit code (an OrtprovError: the error, and its code)."""
    names = list(inspect.signature(function).parameters)
    every = [name for name in EVERY_COMMAND if name not in names]  # -q and -v, whether it names them or not
    parameters = [p for name in [*names, *every] for option, d in _declared(name).items() for p in d.parameters(option)]

    def run(**values: Any) -> None:
        from provisioner.render.output import be_quiet, show

        as_json = wants_json(values)
        verbose = bool(values.get("verbose"))
        try:
            if values.get("quiet"):
                if verbose:
                    raise BadInput("-q and -v exclude each other", hint="keep one of them")
                be_quiet()
            kwargs = {}
            for name in names:
                if name == "planning":
                    kwargs[name] = planning_options(**{option: values[option] for option in PLANNING})
                else:
                    kwargs[name] = OPTIONS[name].value(name, values)
            code = show(function(**kwargs), as_json=as_json)
        except SystemExit:
            raise
        except BaseException as exc:  # noqa: BLE001 - before click turns a Ctrl-C into Abort: commands/exits.py
            from provisioner.commands.exits import exit_code

            sys.exit(
                exit_code(
                    exc,
                    as_json=as_json,
                    verbose=verbose,
                    given_path=lambda error: _given_path_error(error, values),
                )
            )
        if code:
            sys.exit(code)

    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    run.__name__ = function.__name__
    run.__qualname__ = function.__qualname__
    run.__doc__ = function.__doc__
    run.__module__ = function.__module__
    return run


__all__ = [
    "OPTIONS",
    "PLANNING",
    "PLANNING_FLAGS",
    "PLANNING_HELP",
    "Declared",
    "PlanningOptions",
    "command",
    "planning_flags_given",
    "planning_options",
    "python_version_parts",
    "refuse_beside_saved_plan",
    "split_python_option",
]
