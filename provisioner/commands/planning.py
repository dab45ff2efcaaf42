"""The planner's inputs from the user's flags: the hosts (host files, a machine described by flags, or this
machine probed) and the Request. An edge: it reads files and probes the machine, then calls the pure planner.

`ortprov plan`, `dockerfile`, `apply` and `download` get a checked PlanningOptions (commands/options.py) and
call `plan_for` (or `resolve_hosts` + `make_plan`).

Where the hosts come from:
- `--host FILE` (repeatable): each file is a host; flags override the same fact in every file.
- no `--host`, but both `--driver` and `--gpu-cc`: a described machine, nothing is probed (a build server
  planning for another box); platform defaults to this machine's, Python to `--python X.Y` or this
  interpreter's version.
- otherwise: this machine is probed (`--python PATH` picks the target interpreter), then flags override.

A host with no NVIDIA driver (this machine, or a host file saved on one) has no GPU to plan for: unless
`--driver` says what the GPU machine has (or `--driver none`: plan without a driver check), `plan_for` refuses
with exit 3 and shows how to plan for the GPU machine (`without_driver`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from provisioner.commands.options import (
    CUDA_LIBRARY_SOURCES,
    NONE_WORDS,
    PlanningOptions,
    python_version_parts,
)
from provisioner.errors import BadInput
from provisioner.facts import DriverInfo, Gpu, HostFacts, PlatformInfo, PythonInfo
from provisioner.plan import Plan, Request
from provisioner.userfiles import read_host_file

if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix

Detect = Callable[..., HostFacts]


def matrix_in_use() -> Matrix:
    """The matrix (matrix/load.py), its notices on stderr as warnings (a cached copy of `ortprov matrix update`
    ignored, naming the file and why): every command that plans or diagnoses loads it here, so that a broken
    cache is named wherever it is met."""
    from provisioner.matrix.load import load_matrix
    from provisioner.render.output import note

    matrix = load_matrix()
    for notice in matrix.notices:
        note(notice, "warning")
    return matrix


def request_from(options: PlanningOptions) -> Request:
    """The Request part of the options."""
    return Request(
        ort=options.ort,
        cuda=options.cuda,
        tensorrt=options.tensorrt,
        prefer_existing_libraries=options.prefer_existing_libraries,
        cuda_libraries=options.cuda_libraries or CUDA_LIBRARY_SOURCES[0],
        loader_hook=options.loader_hook,
        tensorrt_libraries=options.tensorrt_libraries or "wheels",
        tensorrt_index_url=options.tensorrt_index_url,
        tensorrt_sonames=tensorrt_sonames_in(options.tensorrt_libraries),
        provider=options.provider or ("tensorrt" if options.tensorrt else "cuda"),
    )


def tensorrt_sonames_in(folder: str | None) -> tuple[str, ...]:
    """The libnvinfer.so.N files of a --tensorrt-libraries folder (BadInput when it is not a folder)."""
    if folder in (None, "wheels", "system"):
        return ()
    import os

    if not os.path.isdir(str(folder)):
        raise BadInput(
            f"--tensorrt-libraries {folder!r} is not a folder",
            hint="name the lib folder of a TensorRT tarball (it holds libnvinfer.so.10), or use system",
        )
    return tuple(sorted(n for n in os.listdir(str(folder)) if re.fullmatch(r"libnvinfer\.so\.\d+", n)))


def describes_machine(options: PlanningOptions) -> bool:
    """True when the flags describe the machine and nothing needs probing."""
    return not options.host_files and not options.target_python and bool(options.driver and options.gpu_cc)


def resolve_hosts(options: PlanningOptions, detect: Detect | None = None) -> tuple[HostFacts, ...]:
    """The hosts to plan for: host files, a machine described by flags, or this machine probed; flags
    override what the files or the probe say."""
    if options.host_files:
        hosts = [_labelled(read_host_file(path), path) for path in options.host_files]
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


def plan_for(
    options: PlanningOptions, matrix: Matrix | None = None, detect: Detect | None = None, command: str = "plan"
) -> Plan:
    """Resolve the hosts, load the matrix (unless given) and plan. NoCompatiblePlan when a host has no NVIDIA
    driver and --driver did not name one (`command` is the command the hint shows)."""
    hosts = resolve_hosts(options, detect)
    if matrix is None:
        from provisioner.matrix.load import load_matrix

        matrix = load_matrix()
    return plan_hosts(hosts, matrix, options, command)


def plan_hosts(hosts: tuple[HostFacts, ...], matrix: Matrix, options: PlanningOptions, command: str = "plan") -> Plan:
    """The planner's verdict for these hosts, as `ortprov plan` gives it (doctor asks here too: one answer):
    the plan, or NoCompatiblePlan, a host without a driver included (unless --driver names one)."""
    from provisioner.errors import NoCompatiblePlan
    from provisioner.planner import make_plan

    try:  # first: bad input (`--cuda 99`) is exit 2 on every machine
        plan = make_plan(hosts, matrix, request_from(options))
    except NoCompatiblePlan:
        without_driver(hosts, options, command)  # the missing driver explains it better
        raise
    without_driver(hosts, options, command)
    return plan


def without_driver(hosts: tuple[HostFacts, ...], options: PlanningOptions, command: str = "plan") -> None:
    """NoCompatiblePlan (exit 3) for the first host with no NVIDIA driver, unless --driver was given: a plan
    for a machine without a GPU would follow from whatever CUDA folder happens to be there. The hint shows how
    to plan for the machine that has the GPU."""
    from provisioner.errors import NoCompatiblePlan

    if options.driver is not None:
        return
    for index, host in enumerate(hosts):
        if host.driver.present:
            continue
        where = f"host file {options.host_files[index]!r}" if options.host_files else "this machine"
        why = f" ({host.driver.error})" if host.driver.error else ""
        run = f"ortprov {command}"
        raise NoCompatiblePlan(
            f"{where} has no NVIDIA driver{why}, so there is no GPU to plan for",
            hint="plan for the machine that has the GPU, by its driver and compute capability\n"
            "      (on it: nvidia-smi --query-gpu=driver_version,compute_cap --format=csv):\n"
            f"        {run} --driver VERSION --gpu-cc {options.gpu_cc or 'X.Y'}\n"
            "      or by its facts, saved there with `ortprov detect --json > gpu.json`:\n"
            f"        {run} --host gpu.json\n"
            f"      or for {'that host' if options.host_files else 'this machine'} anyway "
            "(a build server; the driver is not checked):\n"
            f"        {run} --driver none",
        )


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
    major, minor, free = python_version_parts(value)
    return PythonInfo(
        executable="",
        version=f"{major}.{minor}",
        abi=f"cp{major}{minor}{'t' if free else ''}",
        free_threaded=free,
    )


def _platform_info(tag: str) -> PlatformInfo:
    os_name, arch = tag.split("-", 1)
    return PlatformInfo(os=os_name, arch=arch)


def _local_platform() -> PlatformInfo:
    from provisioner.probe.system import read_platform

    return read_platform()


def described_python(options: PlanningOptions) -> PythonInfo:
    """The Python a described host (or a cluster's image) has: --python X.Y, else this interpreter's version."""
    if options.python_version:
        return _python_info(options.python_version)
    info = sys.version_info
    free = "t" if not getattr(sys, "_is_gil_enabled", lambda: True)() else ""
    return _python_info(f"{info.major}.{info.minor}{free}")


def _described_host(options: PlanningOptions) -> HostFacts:
    """A host made from flags alone: nothing installed, nothing probed."""
    platform = _platform_info(options.platform) if options.platform else _local_platform()
    return HostFacts(
        platform=platform,
        driver=_driver_info(options.driver or "none"),
        python=described_python(options),
        gpus=_gpus(options.gpu_cc or "none"),
        label="described by flags",
        captured_by="flags",
    )


__all__ = [
    "matrix_in_use",
    "request_from",
    "describes_machine",
    "described_python",
    "resolve_hosts",
    "apply_overrides",
    "plan_for",
    "plan_hosts",
    "without_driver",
]
