"""The plan's steps: the uninstall of conflicting onnxruntime flavours (and of incomplete installs), the install
steps, the loader hook or what plain code must do without it; `retarget` recomputes the uninstall step for the
environment a plan is carried out in."""

from __future__ import annotations

from dataclasses import replace

from provisioner.plan import LOADER_HOOK, REMOVE_LOADER_HOOK, LibraryPin, Plan, Request, Step
from provisioner.versions import major_minor

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Protocol

    from provisioner.facts import HostFacts, MissingFiles, NvidiaWheel, OrtDist, PythonInfo
    from provisioner.matrix.model import OrtBuild, TensorRTRelease

    class Planned(Protocol):
        """The planned distribution: an OrtBuild while planning, a saved Plan when it is retargeted."""

        @property
        def package(self) -> str: ...
        @property
        def ort_version(self) -> str: ...
        @property
        def cuda_version(self) -> str: ...
        @property
        def index_url(self) -> str | None: ...

    class Installed(Protocol):
        """What one environment has installed: a HostFacts, or the package probe's report of a target."""

        @property
        def python(self) -> PythonInfo | None: ...
        @property
        def onnxruntime(self) -> tuple[OrtDist, ...]: ...
        @property
        def nvidia_wheels(self) -> tuple[NvidiaWheel, ...]: ...


def conflicting_flavours(
    build: Planned, targets: Sequence[Installed], pins: Sequence[LibraryPin] = ()
) -> list[tuple[str, str]]:
    """(distribution, why) for everything removed before the install steps run: every installed onnxruntime
    flavour that is not exactly the chosen build; the chosen build itself where its files are incomplete or
    where removing another flavour takes the onnxruntime/ files both list (the install step then reinstalls
    it: left installed, pip and uv would call it satisfied with its files gone); a pinned NVIDIA wheel whose
    files are incomplete."""
    found: dict[str, str] = {}
    pinned = {pin.package: pin.version for pin in pins}
    for target in targets:
        removed: dict[str, str] = {}
        planned: OrtDist | None = None
        for dist in target.onnxruntime:
            if dist.name == build.package:
                planned = dist
                replaced = _why_replaced(dist, build)
                if replaced:
                    removed[dist.name] = replaced
            elif dist.name == "onnxruntime":
                removed[dist.name] = (
                    f"the CPU package onnxruntime {dist.version} shadows {build.package}: both install the "
                    f"onnxruntime module"
                )
            else:
                removed[dist.name] = (
                    f"{dist.name} {dist.version} installs the same onnxruntime module as {build.package}"
                )
        if planned is not None and removed and planned.name not in removed:
            removed[planned.name] = (
                f"removing {' and '.join(sorted(removed))} deletes the onnxruntime/ files {planned.name} "
                f"{planned.version} shares with it: {planned.name} is removed too, and installed afresh"
            )
        for wheel in target.nvidia_wheels:
            if wheel.missing_files and pinned.get(wheel.name) == wheel.version:
                removed[wheel.name] = (
                    f"the installed {wheel.name} {wheel.version} is {_incomplete(wheel.missing_files)}"
                )
        for name, why in removed.items():
            found.setdefault(name, why)
    return sorted(found.items())


def _why_replaced(dist: OrtDist, build: Planned) -> str | None:
    """Why the installed distribution of the planned package must go (None: it is exactly the planned one)."""
    if dist.version != build.ort_version:
        return f"{dist.name} {dist.version} is replaced by {build.ort_version}"
    if dist.missing_files:
        return f"the installed {dist.name} {dist.version} is {_incomplete(dist.missing_files)}"
    if dist.cuda_version and major_minor(dist.cuda_version) != major_minor(build.cuda_version):
        return (
            f"the installed {dist.name} {dist.version} is the CUDA {dist.cuda_version} build; pip would "
            f"keep it as 'already satisfied'"
        )
    if not dist.cuda_version and build.index_url:
        return (
            f"the installed {dist.name} {dist.version} may be another CUDA build; the planned one comes "
            f"from {build.index_url}"
        )
    return None


def _incomplete(missing: MissingFiles) -> str:
    return f"incomplete ({missing}): removed and installed afresh"


def retarget(plan: Plan, targets: Sequence[Installed]) -> Plan:
    """A plan for the environment it is carried out in (a saved one, or one made from flags or host files
    without looking at the target): its uninstall step recomputed from what `targets` have installed, by the
    rules `make_plan` uses, and a loader hook the plan does not install removed. No targets: nothing is
    installed (a venv about to be created), so nothing is removed."""
    removals = conflicting_flavours(plan, targets, plan.pins)
    uninstall = uninstall_step(removals)
    others = tuple(step for step in plan.steps if step.kind not in ("uninstall", REMOVE_LOADER_HOOK))
    installs_hook = any(step.kind == LOADER_HOOK for step in plan.steps)
    if not installs_hook and any(target.python is not None and target.python.loader_hook for target in targets):
        others += (hook_removal("the plan installs no loader hook"),)
    return replace(plan, steps=(uninstall, *others) if uninstall else others)


def install_steps(
    build: OrtBuild,
    uninstall: list[tuple[str, str]],
    libraries: list[str],
    tensorrt: TensorRTRelease | None,
    *,
    extras: bool = True,
) -> tuple[Step, ...]:
    first = uninstall_step(uninstall)
    steps: list[Step] = [first] if first else []
    extras_text = f"[{','.join(build.extras)}]" if build.extras and extras else ""
    ort = f"{build.package}{extras_text}=={build.ort_version}"
    on_pypi = tensorrt.packages if tensorrt and not tensorrt.index_url else ()  # behind an index: its own step
    extra_packages = [*libraries, *on_pypi]
    if build.index_url is None:
        steps.append(
            Step(
                "install",
                (ort, *extra_packages),
                f"{build.label} with exactly pinned NVIDIA libraries" if libraries else build.label,
            )
        )
        return tuple(steps)
    # PyPI publishes a same-numbered build for another CUDA major: taken from both indexes, pip could pick
    # either. So the package comes from its feed alone, without dependencies; the next step, from PyPI, finds
    # it installed and adds its dependencies and the NVIDIA libraries.
    steps.append(
        Step(
            "install",
            (f"{build.package}=={build.ort_version}",),
            f"{build.label} from its own package index only (PyPI has a same-numbered build for another CUDA)",
            index_url=build.index_url,
            no_deps=True,
        )
    )
    steps.append(
        Step(
            "install",
            (ort, *extra_packages),
            "its dependencies" + (" and the exactly pinned NVIDIA libraries" if libraries else "") + ", from PyPI",
        )
    )
    return tuple(steps)


def plain_code_line(build: OrtBuild, windows: bool) -> str:
    """What code without the loader hook must do so that onnxruntime finds the NVIDIA wheels' libraries."""
    if build.preload_dlls:
        return "`import onnxruntime; onnxruntime.preload_dlls()` before the first InferenceSession"
    listing = (
        "import glob, os, sysconfig; print(os.pathsep.join(glob.glob(os.path.join("
        f"sysconfig.get_paths()['purelib'], 'nvidia', '*', '{'bin' if windows else 'lib'}'))))"
    )
    if windows:
        return f'before starting Python (PowerShell): `$env:PATH = (python -c "{listing}") + ";" + $env:PATH`'
    return f'before starting Python: `export LD_LIBRARY_PATH="$(python -c "{listing}"):$LD_LIBRARY_PATH"`'


def loader_hook(build: OrtBuild, hosts: tuple[HostFacts, ...], request: Request) -> tuple[tuple[Step, ...], list[str]]:
    """The loader-hook step (NVIDIA wheels planned), its removal (a hook no longer wanted), or a note saying
    what plain code must do instead (--no-loader-hook)."""
    has_hook = any(host.python is not None and host.python.loader_hook for host in hosts)
    windows = bool(hosts) and hosts[0].platform.os == "windows"
    line = plain_code_line(build, windows)
    if request.cuda_libraries == "wheels" and request.loader_hook:
        description = (
            "a plain `import onnxruntime` then finds the NVIDIA wheels' libraries (the CUDA provider has no path "
            "to site-packages/nvidia): no change to your code, no environment variable, no `import torch`. "
            f"Where ortprov does not run, the code must do it itself: {line}"
        )
        return (Step(LOADER_HOOK, (), description),), []
    notes = []
    if request.cuda_libraries == "wheels":
        notes.append(
            "--no-loader-hook: a plain `import onnxruntime` does not find the NVIDIA wheels' libraries and runs "
            f"on the CPU; your code must do this itself: {line}"
        )
    if not has_hook:
        return (), notes
    why = "CUDA and cuDNN come from the system" if request.cuda_libraries == "system" else "--no-loader-hook"
    return (hook_removal(why),), notes


def hook_removal(why: str) -> Step:
    return Step(REMOVE_LOADER_HOOK, (), f"{why}: the loader hook an earlier apply installed goes")


def uninstall_step(removals: list[tuple[str, str]]) -> Step | None:
    if not removals:
        return None
    return Step("uninstall", tuple(name for name, _ in removals), "; ".join(why for _, why in removals))
