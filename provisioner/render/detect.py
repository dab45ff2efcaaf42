"""HostFacts rendered: the compact summary of `ortprov detect`, or the host file (its JSON)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from provisioner.facts import HostFacts, LibraryHit


@dataclass(frozen=True)
class DetectResult:
    """`ortprov detect`: the facts of the host and the target interpreter."""

    facts: HostFacts
    exit_code: int = 0

    def text(self) -> str:
        return render_summary(self.facts)

    def data(self) -> Any:
        return self.facts.to_dict()


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _gpu_lines(facts: HostFacts) -> list[str]:
    lines = []
    for gpu in facts.gpus:
        details = [f"cc {gpu.compute_capability}" if gpu.compute_capability else "cc unknown"]
        if gpu.memory_mib is not None:
            details.append(f"{gpu.memory_mib} MiB")
        if gpu.mig_uuids:
            details.append(f"MIG on, {len(gpu.mig_uuids)} instance(s)")
        if not gpu.visible:
            details.append("HIDDEN by CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES")
        lines.append(f"  GPU {gpu.index}: {gpu.name}, " + ", ".join(details))
    return lines


def _driver_lines(facts: HostFacts) -> list[str]:
    driver = facts.driver
    if not driver.present:
        reason = f" ({driver.error})" if driver.error else ""
        return [f"driver:      no NVIDIA driver found{reason}"]
    cuda = f", supports CUDA up to {driver.cuda_version}" if driver.cuda_version else ", CUDA version unknown"
    lines = [f"driver:      {driver.version or 'unknown version'}{cuda} (from {driver.source})"]
    if driver.error:
        lines.append(f"  ! {driver.error}")
    lines.extend(_gpu_lines(facts) or ["  no GPU listed"])
    return lines


def _python_lines(facts: HostFacts) -> list[str]:
    py = facts.python
    if py is None:
        return ["python:      not read (see probe errors)"]
    kind = "conda env" if py.is_conda else "venv" if py.is_venv else "system interpreter"
    lines = [f"python:      {py.version} {py.implementation} ({py.abi}), {kind}: {py.executable}"]
    if py.free_threaded:
        lines.append("  free-threaded build: wheels need a 't' ABI tag")
    if py.externally_managed:
        lines.append("  externally managed (PEP 668): pip refuses to install here, use a venv")
    return lines


def _ort_lines(facts: HostFacts) -> list[str]:
    if not facts.onnxruntime:
        return ["onnxruntime: not installed"]
    lines = []
    for index, dist in enumerate(facts.onnxruntime):
        built = []
        if dist.cuda_version:
            built.append(f"CUDA {dist.cuda_version}")
        if dist.cudnn_version:
            built.append(f"cuDNN {dist.cudnn_version}")
        kind = "GPU" if dist.is_gpu else "CPU" if dist.name == "onnxruntime" else "other"
        suffix = f" built for {', '.join(built)}" if built else ""
        label = "onnxruntime:" if index == 0 else "            "
        lines.append(f"{label} {dist.name} {dist.version} ({kind}){suffix}")
        if dist.build_package_name and dist.build_package_name != dist.name:
            lines.append(f"  ! its files on disk belong to {dist.build_package_name} (installed after it)")
        if dist.missing_files:
            lines.append(f"  ! INCOMPLETE: {dist.missing_files}; `ortprov apply` installs it afresh")
    names = {dist.name for dist in facts.onnxruntime}
    if len(names) > 1:
        lines.append(
            "  ! CONFLICT: " + " and ".join(sorted(names)) + " are all installed and share one onnxruntime/ folder; "
            "keep exactly one (pip uninstall the others, then reinstall it)"
        )
    return lines


def _library_lines(facts: HostFacts) -> list[str]:
    if not facts.libraries:
        return ["libraries:   no CUDA libraries found"]
    grouped: dict[tuple[str, str | None], list[LibraryHit]] = {}
    for hit in facts.libraries:
        grouped.setdefault((hit.library, hit.major), []).append(hit)
    lines = ["libraries:"]
    for (library, major), hits in grouped.items():
        name = f"{library} {major}" if major else library
        also = sorted({hit.source for hit in hits[1:]})
        extra = f"  (also: {', '.join(also)})" if also else ""
        first = hits[0]
        said = [first.package or "", f"CUDA {first.cuda_major}" if first.cuda_major is not None else ""]
        said += ["not on a search path"] if not first.searched else []
        known = f"  [{', '.join(part for part in said if part)}]" if any(said) else ""
        lines.append(f"  {name:<12} {first.source:<15} {first.path}{known}{extra}")
    return lines


def render_summary(facts: HostFacts) -> str:
    """The compact human summary of `ortprov detect`."""
    platform = facts.platform
    env = facts.environment
    lines = _driver_lines(facts)
    glibc = f", glibc {platform.glibc}" if platform.glibc else ""
    release = f", {platform.os_release}" if platform.os_release else ""
    lines.append(f"platform:    {platform.tag}{glibc}{release}")
    lines.append(f"container:   {env.container or 'no'}, WSL2: {_yes(env.wsl)}")
    for variable, value in (
        ("CUDA_VISIBLE_DEVICES", env.cuda_visible_devices),
        ("NVIDIA_VISIBLE_DEVICES", env.nvidia_visible_devices),
        ("CUDA_DEVICE_ORDER", env.cuda_device_order),
        ("CUDA_FORCE_PTX_JIT", env.cuda_force_ptx_jit),
    ):
        if value is not None:
            lines.append(f"  {variable}={value!r}")
    lines.extend(_python_lines(facts))
    lines.extend(_ort_lines(facts))
    torch = facts.torch
    if torch is None:
        lines.append("torch:       not installed")
    else:
        lines.append(
            f"torch:       {torch.version}, " + (f"CUDA {torch.cuda_version}" if torch.cuda_version else "CPU build")
        )
    if facts.nvidia_wheels:
        lines.append("NVIDIA wheels:")
        lines.extend(
            f"  {wheel.name} {wheel.version}"
            + (f" (CUDA {wheel.cuda_major})" if wheel.cuda_major else "")
            + (f"  ! INCOMPLETE: {wheel.missing_files}" if wheel.missing_files else "")
            for wheel in facts.nvidia_wheels
        )
    else:
        lines.append("NVIDIA wheels: none")
    lines.extend(_library_lines(facts))
    lines.extend(f"probe error: {error}" for error in facts.probe_errors)
    return "\n".join(lines)
