"""The plan: what to uninstall and install, in order, and why; plus the Request that asked for it.

A Plan is data. `recipes` renders it as text (pip, uv, conda, Dockerfile ...); `installer` carries out the
same `steps`, building each command with `step_argv` so that what `plan --format pip` prints is exactly
what `apply` runs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from provisioner.facts import HostFacts  # noqa: TC001 - serde reads Plan's field types at run time
from provisioner.serde import from_jsonable, to_jsonable

PLAN_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Request:
    """What the user asked for, beyond the host facts."""

    ort: str | None = None  # a version or specifier: "1.20", "==1.20.1", ">=1.18,<1.21"
    cuda: str | None = None  # "12" or "12.4"
    tensorrt: bool = False
    prefer_existing_libraries: bool = True
    cuda_libraries: str = "wheels"  # wheels: NVIDIA pip wheels; system: CUDA/cuDNN already on the loader path
    loader_hook: bool = True  # let plain `import onnxruntime` find the NVIDIA wheels' libraries (a .pth hook)
    # where TensorRT comes from (with `tensorrt`): "wheels" (pip packages from their index), "system" (the
    # loader path: a TensorRT container, a tarball in ld.so.conf), or a folder holding libnvinfer.so.N
    tensorrt_libraries: str = "wheels"
    tensorrt_index_url: str | None = None  # a mirror of the index that serves the real TensorRT wheels
    tensorrt_sonames: tuple[str, ...] = ()  # the libnvinfer.so.N files found in the tensorrt_libraries folder
    provider: str = "cuda"  # cuda | tensorrt | a plugin EP (tensorrt-rtx): planned as the CPU core + its package


@dataclass(frozen=True)
class Rejection:
    """A candidate build that lost, and why, in words a user acts on."""

    candidate: str  # "onnxruntime-gpu 1.31.1 (CUDA 13.0)"
    reason: str


@dataclass(frozen=True)
class LibraryPin:
    """An exact NVIDIA library version chosen for the plan, and why."""

    package: str  # nvidia-cudnn-cu12
    version: str  # 9.1.0.70
    reason: str


def canonical(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """The canonical distribution name of a requirement string ("onnxruntime-gpu[cuda,cudnn]==1.31.1")."""
    from packaging.requirements import Requirement

    return canonical(Requirement(requirement).name)


PLUGIN_PROVIDERS = ("tensorrt-rtx",)  # --provider values planned as the CPU core + a plugin EP package
PROVIDERS = ("cuda", "tensorrt", *PLUGIN_PROVIDERS)

INSTALLER_KINDS = ("uninstall", "install")
LOADER_HOOK = "loader-hook"  # write the loader hook into the target's site-packages (ortprov does it)
REMOVE_LOADER_HOOK = "remove-loader-hook"
ORTPROV_KINDS = (LOADER_HOOK, REMOVE_LOADER_HOOK)  # carried out by ortprov itself, not by an installer
STEP_KINDS = (*INSTALLER_KINDS, *ORTPROV_KINDS)


@dataclass(frozen=True)
class PluginEp:
    """The plugin execution provider a plan installs beside the CPU core (matrices/plugin-eps.yaml)."""

    provider: str  # ortprov's name: tensorrt-rtx
    package: str  # the variant installed: onnxruntime-ep-nv-tensorrt-rtx-cu13
    version: str
    ep_name: str  # what it registers: NvTensorRTRTXExecutionProvider
    module: str  # onnxruntime_ep_nv_tensorrt_rtx (get_library_path, get_ep_name)
    library: str  # libonnxruntime_providers_nv_tensorrt_rtx.so
    cuda_major: int


@dataclass(frozen=True)
class Step:
    """One action. kind: "uninstall" (packages are distribution names) or "install" (packages are requirement
    strings), run by pip or uv; or LOADER_HOOK / REMOVE_LOADER_HOOK (no packages), carried out by ortprov
    itself: its description says what it does and what code without ortprov must do instead."""

    kind: str
    packages: tuple[str, ...]
    description: str = ""
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()  # --find-links DIR|URL (a wheelhouse, a mirror)
    no_index: bool = False  # --no-index: only find_links (air-gapped installs)
    no_deps: bool = False  # --no-deps: this package alone (a build from a side feed)
    only_binary: tuple[str, ...] = ()  # --only-binary NAME: never build these from source (TensorRT's stubs)
    environment: tuple[str, ...] = ()  # NAME=value the installer runs with (WHEEL_STUB_PIP_INDEX_URL=...)

    @property
    def runs_installer(self) -> bool:
        """True for the pip/uv steps (step_argv builds their command)."""
        return self.kind in INSTALLER_KINDS

    @property
    def done_by_ortprov(self) -> bool:
        """True for the loader-hook steps, which ortprov carries out itself."""
        return self.kind in ORTPROV_KINDS


@dataclass(frozen=True)
class Plan:
    """The chosen build for one or more hosts, the steps that install it, and the losers."""

    ort_version: str
    package: str  # onnxruntime-gpu
    cuda_version: str
    cudnn_version: str | None
    steps: tuple[Step, ...]
    tensorrt_version: str | None = None
    # where TensorRT comes from: the index of its wheels, "PyPI", "system" or a folder (None: no TensorRT)
    tensorrt_source: str | None = None
    index_url: str | None = None  # None: PyPI
    pins: tuple[LibraryPin, ...] = ()
    reasons: tuple[str, ...] = ()  # why this build was chosen
    notes: tuple[str, ...] = ()  # warnings worth reading
    rejected: tuple[Rejection, ...] = ()
    hosts: tuple[HostFacts, ...] = ()
    schema_version: int = PLAN_SCHEMA_VERSION
    plugin: PluginEp | None = None  # a plugin EP plan (--provider tensorrt-rtx): `package` is then the CPU core

    @property
    def uninstall(self) -> tuple[str, ...]:
        """Distribution names removed, in order."""
        return tuple(p for s in self.steps if s.kind == "uninstall" for p in s.packages)

    @property
    def install(self) -> tuple[str, ...]:
        """Requirement strings installed, in order."""
        return tuple(p for s in self.steps if s.kind == "install" for p in s.packages)

    def to_dict(self) -> dict:
        """The documented JSON contract (docs/json.md): the fields plus `uninstall`, `install`, `host`."""
        data = to_jsonable(self)
        data["uninstall"] = list(self.uninstall)
        data["install"] = list(self.install)
        data["host"] = to_jsonable(self.hosts[0]) if len(self.hosts) == 1 else [to_jsonable(h) for h in self.hosts]
        return data

    def to_json(self) -> str:
        """Pretty JSON."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict) -> Plan:
        """Inverse of to_dict (derived keys are ignored)."""
        return from_jsonable(cls, data)


def step_argv(step: Step, tool: str, python: str = "python", *, break_system_packages: bool = False) -> list[str]:
    """The exact command for one step. tool: "pip" (python -m pip) or "uv" (uv pip --python PY).

    break_system_packages: add --break-system-packages (an externally managed interpreter, `apply --system`).
    """
    bsp = ["--break-system-packages"] if break_system_packages else []
    if tool == "pip":
        base = [python, "-m", "pip"]
        if step.kind == "uninstall":
            return [*base, "uninstall", "-y", *bsp, *step.packages]
        argv = [*base, "install", *bsp]
    elif tool == "uv":
        base = ["uv", "pip"]
        if step.kind == "uninstall":
            return [*base, "uninstall", "--python", python, *bsp, *step.packages]
        argv = [*base, "install", "--python", python, *bsp]
    else:
        raise ValueError(f"unknown installer {tool!r}")
    if step.kind != "install":
        raise ValueError(f"step kind {step.kind!r} is not run by an installer")
    return [*argv, *source_options(step), *step.packages]


def source_options(step: Step) -> list[str]:
    """Where an install step's packages come from, as pip/uv options (pip download takes the same)."""
    options = ["--index-url", step.index_url] if step.index_url else []
    for url in step.extra_index_urls:
        options += ["--extra-index-url", url]
    if step.no_deps:
        options.append("--no-deps")
    for name in step.only_binary:
        options += ["--only-binary", name]
    if step.no_index:
        options.append("--no-index")
    for location in step.find_links:
        options += ["--find-links", location]
    return options


def step_environment(step: Step) -> dict[str, str]:
    """The environment variables an installer step runs with (NAME=value pairs of `step.environment`)."""
    return dict(item.split("=", 1) for item in step.environment if "=" in item)


def step_summary(step: Step, tool: str = "pip", python: str = "python") -> str:
    """One line for people: the exact command of an installer step, or what an ortprov step does."""
    if step.runs_installer:
        import shlex

        prefix = "".join(f"{shlex.quote(item)} " for item in step.environment)
        return prefix + shlex.join(step_argv(step, tool, python))
    if step.kind == LOADER_HOOK:
        return "ortprov: install the loader hook in site-packages (ortprov-loader.pth, _ortprov_loader/)"
    if step.kind == REMOVE_LOADER_HOOK:
        return "ortprov: remove the loader hook from site-packages (ortprov-loader.pth, _ortprov_loader/)"
    raise ValueError(f"unknown step kind {step.kind!r}")


__all__ = [
    "Request",
    "Rejection",
    "LibraryPin",
    "PluginEp",
    "Step",
    "Plan",
    "step_argv",
    "step_summary",
    "source_options",
    "step_environment",
    "LOADER_HOOK",
    "REMOVE_LOADER_HOOK",
    "STEP_KINDS",
]
