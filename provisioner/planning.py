"""Planning inputs: validate the user's strings, turn host files, flags and detection into hosts + Request.

CLI-agnostic: `ortprov plan`, `ortprov dockerfile` and `ortprov apply` build a `PlanningOptions` from their
flags and call `plan_for` (or `resolve_hosts` + `make_plan`). Every malformed string becomes one BadInput
line naming the flag and an example.

Where the hosts come from:
- `--host FILE` (repeatable): each file is a host; flags override the same fact in every file.
- no `--host`, but both `--driver` and `--gpu-cc`: a described machine, nothing is probed (a build server
  planning for another box); platform defaults to this machine's, Python to `--python X.Y` or this
  interpreter's version.
- otherwise: this machine is probed (`--python PATH` picks the target interpreter), then flags override.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

from provisioner.errors import BadInput
from provisioner.facts import (
    PLATFORM_TAGS,
    DriverInfo,
    Gpu,
    HostFacts,
    PlatformInfo,
    PythonInfo,
    load_host_file,
)
from provisioner.matrix.model import Matrix
from provisioner.plan import Plan, Request

_DRIVER = re.compile(r"^\d{2,4}(\.\d{1,3}){0,2}$")
_CC = re.compile(r"^\d{1,2}\.\d$")
_PYTHON_VERSION = re.compile(r"^(\d+)\.(\d{1,2})(?:\.\d{1,3})?(t?)$")
_CUDA = re.compile(r"^\d{1,2}(\.\d{1,2})?$")
NONE_WORDS = ("none", "no")

Detect = Callable[..., HostFacts]


@dataclass(frozen=True)
class PlanningOptions:
    """Every planning input, as the user typed it (validated by `validate`)."""

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


def split_python_option(value: str | None) -> tuple[str | None, str | None]:
    """`--python` is a version ("3.12", "3.13t") or an interpreter ("/opt/venv/bin/python", "python3.12"):
    (version, path). A value that parses as a version is a version; anything else is an interpreter."""
    if value is None:
        return None, None
    text = value.strip()
    if not text:
        raise BadInput("--python is empty", hint="pass a version (--python 3.12) or an interpreter path")
    if _PYTHON_VERSION.match(text):
        return text, None
    if re.match(r"^\d", text):
        raise BadInput(f"--python {value!r} is not a Python version", hint="examples: --python 3.12, --python 3.13t")
    return None, text


def options_from_flags(
    host: list[str] | None,
    driver: str | None,
    gpu_cc: str | None,
    python: str | None,
    platform: str | None,
    ort: str | None,
    cuda: str | None,
    tensorrt: bool,
    cuda_libraries: str | None = None,
    no_loader_hook: bool = False,
) -> PlanningOptions:
    """PlanningOptions from the shared command-line flags, `--python` split into a version or an interpreter."""
    version, interpreter = split_python_option(python)
    return PlanningOptions(
        host_files=tuple(host or ()),
        driver=driver,
        gpu_cc=gpu_cc,
        python_version=version,
        platform=platform,
        ort=ort,
        cuda=cuda,
        tensorrt=tensorrt,
        target_python=interpreter,
        cuda_libraries=cuda_libraries,
        loader_hook=not no_loader_hook,
    )


CUDA_LIBRARY_SOURCES = ("wheels", "system")


def validate(options: PlanningOptions) -> None:
    """BadInput (one line, the flag, an example) for the first malformed or impossible input."""
    driver = (options.driver or "").strip()
    if options.driver is not None and driver.lower() not in NONE_WORDS and not _DRIVER.match(driver):
        raise BadInput(
            f"--driver {options.driver!r} is not an NVIDIA driver version",
            hint="examples: --driver 535.104.05, --driver 580, --driver none (no driver on that machine)",
        )
    if options.gpu_cc is not None and options.gpu_cc.strip().lower() not in NONE_WORDS:
        for part in options.gpu_cc.split(","):
            if not _CC.match(part.strip()):
                raise BadInput(
                    f"--gpu-cc {options.gpu_cc!r} is not a compute capability",
                    hint="examples: --gpu-cc 8.6, --gpu-cc 8.0,9.0 (two GPUs), --gpu-cc none",
                )
    if options.python_version is not None:
        _python_info(options.python_version)
    if options.platform is not None and options.platform not in PLATFORM_TAGS:
        raise BadInput(f"unknown platform {options.platform!r}", hint=f"use one of: {', '.join(PLATFORM_TAGS)}")
    if options.ort is not None:
        from provisioner.versions import ort_matcher

        try:
            ort_matcher(options.ort)
        except ValueError:
            raise BadInput(
                f"--ort {options.ort!r} is not a version or specifier",
                hint="examples: --ort 1.20, --ort 1.20.1, --ort '>=1.18,<1.21'",
            ) from None
    if options.cuda_libraries is not None and options.cuda_libraries not in CUDA_LIBRARY_SOURCES:
        raise BadInput(
            f"--cuda-libraries {options.cuda_libraries!r} is not a library source",
            hint=f"use one of: {', '.join(CUDA_LIBRARY_SOURCES)}",
        )
    if options.cuda is not None and not _CUDA.match(options.cuda.strip()):
        raise BadInput(f"--cuda {options.cuda!r} is not a CUDA version", hint="examples: --cuda 12, --cuda 12.4")
    if options.host_files and options.target_python:
        raise BadInput(
            f"--python {options.target_python!r} names an interpreter on this machine; it cannot be combined "
            "with --host",
            hint="to set the Python of the host files, pass a version: --python 3.12",
        )


def request_from(options: PlanningOptions) -> Request:
    """The Request part of the options."""
    return Request(
        ort=options.ort.strip() if options.ort else None,
        cuda=options.cuda.strip() if options.cuda else None,
        tensorrt=options.tensorrt,
        prefer_existing_libraries=options.prefer_existing_libraries,
        cuda_libraries=options.cuda_libraries or CUDA_LIBRARY_SOURCES[0],
        loader_hook=options.loader_hook,
    )


# Each planning input and the flag that sets it. A saved plan (`apply --plan FILE`, a wheelhouse's plan.json)
# has made every one of these choices: beside it, a command honours only those it reads as something else
# (apply: --python names the target; download: --python X.Y and --platform pick the wheels to fetch) and
# refuses the others.
PLANNING_FLAGS = {
    "host_files": "--host",
    "driver": "--driver",
    "gpu_cc": "--gpu-cc",
    "python_version": "--python X.Y",
    "target_python": "--python PATH",
    "platform": "--platform",
    "ort": "--ort",
    "cuda": "--cuda",
    "tensorrt": "--tensorrt",
    "cuda_libraries": "--cuda-libraries",
    "loader_hook": "--no-loader-hook",
}


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


def describes_machine(options: PlanningOptions) -> bool:
    """True when the flags describe the machine and nothing needs probing."""
    return not options.host_files and not options.target_python and bool(options.driver and options.gpu_cc)


def resolve_hosts(options: PlanningOptions, detect: Detect | None = None) -> tuple[HostFacts, ...]:
    """The hosts to plan for: host files, a machine described by flags, or this machine probed; flags
    override what the files or the probe say."""
    validate(options)
    if options.host_files:
        hosts = [_labelled(load_host_file(path), path) for path in options.host_files]
    elif describes_machine(options):
        hosts = [_described_host(options)]
    else:
        if detect is None:
            from provisioner.probe import detect_host

            detect = detect_host
        hosts = [detect(python=options.target_python)]
    return tuple(apply_overrides(host, options) for host in hosts)


def apply_overrides(host: HostFacts, options: PlanningOptions) -> HostFacts:
    """Replace the facts the flags name; keep everything else."""
    if options.driver is not None:
        host = replace(host, driver=_driver_info(options.driver))
    if options.gpu_cc is not None:
        host = replace(host, gpus=_gpus(options.gpu_cc))
    if options.python_version is not None:
        wanted = _python_info(options.python_version)
        if host.python is None or host.python.minor != wanted.minor:
            host = replace(host, python=wanted)
    if options.platform is not None and host.platform.tag != options.platform:
        host = replace(host, platform=_platform_info(options.platform))
    return host


def plan_for(options: PlanningOptions, matrix: Matrix | None = None, detect: Detect | None = None) -> Plan:
    """Validate, resolve the hosts, load the matrix (unless given) and plan."""
    from provisioner.planner import make_plan

    validate(options)
    request = request_from(options)
    hosts = resolve_hosts(options, detect)
    if matrix is None:
        from provisioner.matrix.load import load_matrix

        matrix = load_matrix()
    return make_plan(hosts, matrix, request)


# --- building facts from flags --------------------------------------------------------------------------


def _labelled(host: HostFacts, path: str) -> HostFacts:
    label = f"{host.label} ({path})" if host.label else path
    return replace(host, label=label)


def _driver_info(value: str) -> DriverInfo:
    text = value.strip()
    if text.lower() in NONE_WORDS:
        return DriverInfo(present=False, source="flags")
    return DriverInfo(present=True, version=text, source="flags")


def _gpus(value: str) -> tuple[Gpu, ...]:
    if value.strip().lower() in NONE_WORDS:
        return ()
    return tuple(Gpu(index=i, name="", compute_capability=cc.strip()) for i, cc in enumerate(value.split(",")))


def _python_info(value: str) -> PythonInfo:
    match = _PYTHON_VERSION.match(value.strip())
    if not match:
        raise BadInput(f"--python {value!r} is not a Python version", hint="examples: --python 3.12, --python 3.13t")
    major, minor, free = match.group(1), match.group(2), match.group(3)
    if major != "3":
        raise BadInput(f"--python {value}: onnxruntime-gpu has wheels only for Python 3", hint="example: --python 3.12")
    return PythonInfo(
        executable="",
        version=f"{major}.{minor}",
        abi=f"cp{major}{minor}{free}",
        free_threaded=bool(free),
    )


def _platform_info(tag: str) -> PlatformInfo:
    os_name, arch = tag.split("-", 1)
    return PlatformInfo(os=os_name, arch=arch)


def _local_platform() -> PlatformInfo:
    from provisioner.probe.system import read_platform

    return read_platform()


def _described_host(options: PlanningOptions) -> HostFacts:
    """A host made from flags alone: nothing installed, nothing probed."""
    platform = _platform_info(options.platform) if options.platform else _local_platform()
    if options.python_version:
        python = _python_info(options.python_version)
    else:
        info = sys.version_info
        free = "t" if not getattr(sys, "_is_gil_enabled", lambda: True)() else ""
        python = _python_info(f"{info.major}.{info.minor}{free}")
    return HostFacts(
        platform=platform,
        driver=_driver_info(options.driver or "none"),
        python=python,
        gpus=_gpus(options.gpu_cc or "none"),
        label="described by flags",
        captured_by="flags",
    )


__all__ = [
    "PlanningOptions",
    "split_python_option",
    "validate",
    "request_from",
    "PLANNING_FLAGS",
    "planning_flags_given",
    "refuse_beside_saved_plan",
    "describes_machine",
    "resolve_hosts",
    "apply_overrides",
    "plan_for",
]
