"""Does the candidate's GPU code run on each GPU of a host: the kernels and PTX read from the platform's wheel (a cubin
of the same major and a minor <= the GPU's, PTX JIT-compiled by a driver that supports the build's CUDA), or,
where the wheel was not read, the compute capabilities of its CUDA release."""

from __future__ import annotations

from provisioner.matrix.query import (
    build_gpu_code,
    code_summary,
    driver_gpu_gap,
    first_cuda_release_for_cc,
    gpu_code_for,
    pypi_twin,
)
from provisioner.planner.common import driver_cuda_version, short_label
from provisioner.versions import vtuple

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.facts import Gpu, HostFacts
    from provisioner.matrix.model import CudaRelease, Matrix, OrtBuild
    from provisioner.matrix.query import DriverGpuGap


def _gpus(host: HostFacts, who: str, notes: list[str]) -> tuple[Gpu, ...]:
    if host.gpus and not host.visible_gpus:
        notes.append(
            f"every GPU on {who} is hidden (CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES): planned for "
            f"all of them, but CUDA will see none until that is changed"
        )
        return host.gpus
    return host.visible_gpus


def driver_gpu_gaps(host: HostFacts, who: str, matrix: Matrix) -> list[tuple[DriverGpuGap, str]]:
    """(kind, sentence) for each GPU of the host that its driver cannot run at all (matrix/query.driver_gpu_gap):
    no onnxruntime build helps there. Nothing when the driver or the compute capability is unknown."""
    driver = host.driver
    if not driver.present or not (driver.version or driver.cuda_version):
        return []
    windows = host.platform.os == "windows"
    gaps: list[tuple[DriverGpuGap, str]] = []
    for cc in dict.fromkeys(g.compute_capability for g in host.gpus if g.compute_capability):
        gap = driver_gpu_gap(matrix, cc, driver.version, driver.cuda_version, windows)
        if gap is not None:
            cuda = driver_cuda_version(host, matrix)
            has = f"driver {driver.version or ''}".rstrip() + (f" (CUDA {cuda})" if cuda else "")
            gaps.append((gap, f"{has} on {who} cannot run its GPU: {gap.why}"))
    return gaps


def gpu_code_problems(
    build: OrtBuild,
    host: HostFacts,
    who: str,
    release: CudaRelease,
    matrix: Matrix,
    notes: list[str],
    reasons: list[str],
) -> tuple[list[str], list[str]]:
    """(problems, compute capabilities the build's wheels hold no code for) for the host's GPUs. What runs is
    read from the wheel for the host's platform (its kernels and PTX); where it was not read, from what the
    build's CUDA release supports."""
    gpus = _gpus(host, who, notes)
    if not gpus:
        if host.driver.present:
            notes.append(f"no GPU listed for {who}: compute capability not checked")
        return [], []
    problems: list[str] = []
    lacking: list[str] = []
    code = build_gpu_code(build, host.platform.tag)
    twin = pypi_twin(matrix, build, host.platform.tag) if code is None else None
    label = short_label(build)
    matched: list[str] = []
    for gpu in gpus:
        cc = gpu.compute_capability
        where = f"GPU {gpu.index}" + (f" ({gpu.name})" if gpu.name else "") + f" on {who}" if len(gpus) > 1 else who
        if not cc:
            notes.append(f"compute capability of GPU {gpu.index} on {who} unknown: not checked")
            continue
        if code is None and twin is not None:
            # the best evidence there is: its PyPI twin's wheels (same release, same build scripts), within
            # what its own CUDA release can target
            problem = _cc_problem(build, cc, release, matrix)
            if problem is None:
                twin_code = build_gpu_code(twin, host.platform.tag) or ((), ())
                problem, match = _code_problem(
                    build, host, cc, twin_code, notes, where, driver_cuda_version(host, matrix)
                )
                if problem is None and match:
                    matched.append(f"{cc}: {match}")
                elif problem is not None:
                    problem = f"{problem}, judged by its PyPI twin {short_label(twin)} (its own wheels were not read)"
            if problem is not None:
                lacking.append(cc)
        elif code is None:
            problem = _cc_problem(build, cc, release, matrix)
            if problem is None and build.wheel_platform(host.platform.tag) is not None:
                lacking.append(f"?{cc}")  # runs by its CUDA release's word, not by its wheels
        else:
            problem, match = _code_problem(build, host, cc, code, notes, where, driver_cuda_version(host, matrix))
            if problem is None and match:
                matched.append(f"{cc}: {match}")
            elif problem is not None:
                lacking.append(cc)
        if problem:
            problems.append(f"{problem} ({where} has {cc})" if len(gpus) > 1 else problem)
    if not problems:
        ccs = ", ".join(sorted({g.compute_capability for g in gpus if g.compute_capability}, key=vtuple))
        if matched and twin is not None:
            reasons.append(
                f"the GPU code in {label}'s {host.platform.tag} wheels was not read (its feed's wheels cannot be read "
                f"from here); judged by its PyPI twin {short_label(twin)} (same release, same build scripts), whose "
                f"wheels hold GPU code for {who} ({'; '.join(matched)}), within what CUDA {release.version} can "
                f"target: the best evidence there is (`ortprov verify` after installing proves it)"
            )
        elif matched:
            reasons.append(f"{label}'s {host.platform.tag} wheels hold GPU code for {who} ({'; '.join(matched)})")
        elif any(cc.startswith("?") for cc in lacking):
            unread = ", ".join(sorted({cc[1:] for cc in lacking if cc.startswith("?")}, key=vtuple))
            reasons.append(
                f"the GPU code in {label}'s {host.platform.tag} wheels was not read (its feed's wheels cannot be "
                f"read from here): CUDA {release.version} can target compute capability {unread}, but whether these "
                f"wheels hold code for it is unknown; if they do not, every session fails with 'no kernel image is "
                f"available for execution on the device' (`ortprov verify` after installing tells)"
            )
        elif ccs:
            reasons.append(f"compute capability {ccs} is supported by CUDA {build.cuda_version}")
    return problems, lacking


def _code_problem(
    build: OrtBuild,
    host: HostFacts,
    cc: str,
    code: tuple[tuple[str, ...], tuple[str, ...]],
    notes: list[str],
    where: str,
    driver_cuda: str | None,
) -> tuple[str | None, str | None]:
    """(why the build's GPU code does not run on `cc`, or None; the code that runs). PTX runs by JIT only
    under a driver that supports the build's CUDA (`driver_cuda`, None: unknown)."""
    kernels, ptx = code
    cubin, jit = gpu_code_for(kernels, ptx, cc)
    if cubin:
        return None, cubin
    tag = host.platform.tag
    if not kernels and not ptx:
        return f"{build.ort_version}'s {tag} wheels hold no CUDA provider with GPU code", None
    if jit is None:
        return (
            f"{build.ort_version} has no kernels for compute capability {cc} ({code_summary(kernels, ptx)}"
            f"{'' if tag == 'linux-x86_64' else ', ' + tag})",
            None,
        )
    full = driver_cuda is not None and vtuple(driver_cuda)[:2] >= vtuple(build.cuda_version)[:2]
    if host.driver.present and driver_cuda and not full:
        return (
            f"{build.ort_version} has no kernels for compute capability {cc}, only {jit} PTX, which the driver "
            f"JIT-compiles only when it supports CUDA {build.cuda_version}; {where}'s supports CUDA "
            f"{driver_cuda} (PTX does not run through minor-version compatibility)",
            None,
        )
    notes.append(
        f"{build.ort_version} has no kernels for compute capability {cc} ({where}): the driver JIT-compiles its "
        f"{jit} PTX on the first session (slow once, then cached)"
        + ("" if full else f"; that needs a driver for CUDA {build.cuda_version} or newer")
    )
    return None, jit


def _cc_problem(build: OrtBuild, cc: str, release: CudaRelease, matrix: Matrix) -> str | None:
    supported = release.compute_capabilities
    if not supported or cc in supported:
        return None
    ordered = sorted(supported, key=vtuple)
    if vtuple(cc) < vtuple(ordered[0]):
        return (
            f"CUDA {build.cuda_major} builds do not support compute capability {cc} (CUDA {release.version} "
            f"supports {ordered[0]} to {ordered[-1]})"
        )
    if vtuple(cc) > vtuple(ordered[-1]):
        first = first_cuda_release_for_cc(matrix, cc)
        later = f"; CUDA {first.version} is the first release that does" if first else ""
        return (
            f"{short_label(build)} predates compute capability {cc}: CUDA {release.version} supports up to "
            f"{ordered[-1]}{later}"
        )
    return f"CUDA {release.version} does not support compute capability {cc}"
