"""--tensorrt: whether a candidate's TensorRT provider can be served (the platform's wheel ships one, the TensorRT
wheels exist for the host, the system's TensorRT has the right major), and the plan's TensorRT version, source,
reason, notes and install step (the real wheels from their own index, never a stub build)."""

from __future__ import annotations

from provisioner.matrix.query import build_tensorrt, tensorrt_provider
from provisioner.plan import Request, Step, requirement_name
from provisioner.planner.common import short_label
from provisioner.versions import major

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.facts import HostFacts
    from provisioner.matrix.model import Matrix, OrtBuild, TensorRTRelease


def tensorrt_problems(build: OrtBuild, matrix: Matrix, request: Request) -> list[str]:
    """Why --tensorrt cannot be served for this build, whatever the host (empty when it can)."""
    if not build.tensorrt_version:
        return [f"--tensorrt: the matrix records no TensorRT version for {short_label(build)}"]
    wanted = major(build.tensorrt_version)
    if request.tensorrt_libraries not in ("wheels", "system"):
        found = sorted({soname_major for soname_major in map(_soname_major, request.tensorrt_sonames) if soname_major})
        if wanted not in found:
            have = ", ".join(f"libnvinfer.so.{m}" for m in found) or "no libnvinfer.so.N"
            return [
                f"--tensorrt-libraries {request.tensorrt_libraries}: the {build.ort_version} TensorRT provider "
                f"links libnvinfer.so.{wanted} (TensorRT {wanted}); the folder holds {have}"
            ]
        return []
    if request.tensorrt_libraries == "system":
        return []
    release = build_tensorrt(matrix, build)
    if release is None:
        return [
            f"--tensorrt: TensorRT {build.tensorrt_version} for CUDA {build.cuda_major}, which the "
            f"{build.ort_version} TensorRT provider needs, is not in the matrix"
        ]
    if not release.packages:
        why = f" ({release.notes})" if release.notes else ""
        return [
            f"--tensorrt: TensorRT {release.version} for CUDA {build.cuda_major}, which the "
            f"{build.ort_version} TensorRT provider needs, has no pip packages{why}"
        ]
    return []


def _soname_major(soname: str) -> int | None:
    tail = soname.rpartition(".so.")[2]
    return int(tail.split(".")[0]) if tail[:1].isdigit() else None


def tensorrt_host_problems(
    build: OrtBuild, host: HostFacts, who: str, matrix: Matrix, request: Request, notes: list[str]
) -> list[str]:
    """Why --tensorrt cannot be served on one host: its platform's wheel has no TensorRT provider, the TensorRT
    wheels exist only for other platforms or Pythons, the system's TensorRT is of another major."""
    tag = host.platform.tag
    provider = tensorrt_provider(matrix, build.ort_version, tag)
    if provider is None:
        notes.append(
            f"--tensorrt: whether the {tag} wheel of {build.ort_version} has a TensorRT provider is not recorded "
            f"in the matrix; `ortprov verify --provider tensorrt` proves it"
        )
    elif provider.library is None:
        return [f"--tensorrt: the {tag} wheel of {build.ort_version} has no TensorRT provider ({who} is {tag})"]
    if request.tensorrt_libraries == "system":
        found = {hit.major for hit in host.libraries if hit.library == "nvinfer" and hit.major}
        wanted = str(major(build.tensorrt_version)) if build.tensorrt_version else None
        if wanted and found and wanted not in found:
            return [
                f"--tensorrt-libraries system: {who} has TensorRT {', '.join(sorted(found))} on the loader path; "
                f"the {build.ort_version} TensorRT provider links libnvinfer.so.{wanted}"
            ]
        return []
    if request.tensorrt_libraries != "wheels":
        return []
    release = build_tensorrt(matrix, build)
    if release is None or not release.packages:
        return []
    if release.platforms and tag not in release.platforms:
        return [
            f"--tensorrt: {', '.join(release.packages)} has wheels for {', '.join(release.platforms)} only "
            f"({who} is {tag})"
        ]
    if release.python and host.python is not None and host.python.minor.rstrip("t") not in release.python:
        return [
            f"--tensorrt: {', '.join(release.packages)} has wheels for Python {release.python[0]} to "
            f"{release.python[-1]} only ({who} has Python {host.python.minor})"
        ]
    return []


def tensorrt_version(release: TensorRTRelease | None, request: Request) -> str | None:
    """The TensorRT version the plan installs (its packages' version); the major a system/folder TensorRT has."""
    if release is None:
        return None
    if request.tensorrt_libraries == "wheels":
        return release.version
    return str(release.major)


def tensorrt_source(release: TensorRTRelease | None, request: Request) -> str | None:
    if release is None:
        return None
    if request.tensorrt_libraries != "wheels":
        return request.tensorrt_libraries
    return request.tensorrt_index_url or release.index_url or "PyPI"


def tensorrt_reason(build: OrtBuild, release: TensorRTRelease, request: Request) -> str:
    linked = f"the {build.ort_version} TensorRT provider was built against TensorRT {build.tensorrt_version}"
    if request.tensorrt_libraries == "system":
        return f"--tensorrt: TensorRT {release.major} from the system's loader path; {linked}"
    if request.tensorrt_libraries != "wheels":
        return f"--tensorrt: TensorRT {release.major} from {request.tensorrt_libraries}; {linked}"
    where = request.tensorrt_index_url or release.index_url or "PyPI"
    return (
        f"--tensorrt: {', '.join(release.packages)} (exact pins, the newest installable TensorRT "
        f"{release.major} for CUDA {release.cuda_major}, from {where}); {linked}, and TensorRT keeps its ABI "
        f"within a major (never TensorRT {release.major + 1} for a provider that links "
        f"libnvinfer.so.{release.major})"
    )


def tensorrt_notes(
    build: OrtBuild, release: TensorRTRelease, hosts: tuple[HostFacts, ...], matrix: Matrix, request: Request
) -> list[str]:
    if request.tensorrt_libraries == "system":
        return [
            f"--tensorrt-libraries system: libnvinfer.so.{release.major} and libnvonnxparser.so.{release.major} must "
            f"be on the loader path (a TensorRT {release.major} container or tarball in ld.so.conf / "
            "LD_LIBRARY_PATH); nothing of TensorRT is installed"
        ]
    if request.tensorrt_libraries != "wheels":
        return [
            f"--tensorrt-libraries {request.tensorrt_libraries}: the loader hook loads libnvinfer.so."
            f"{release.major} and its siblings from that folder when onnxruntime is imported"
        ]
    plain = (
        f"onnxruntime.preload_dlls() does not load TensorRT: where the loader hook is not installed, code must "
        f"`import {release.library_dir}` (its __init__ loads the libraries) before creating the session"
        if release.library_dir == "tensorrt_libs"
        else f"onnxruntime.preload_dlls() does not load TensorRT: where the loader hook is not installed, the "
        f"folder site-packages/{release.library_dir or 'tensorrt'} must be on LD_LIBRARY_PATH"
    )
    if not release.index_url:
        return [plain]
    mirror = request.tensorrt_index_url
    return [
        plain,
        f"--tensorrt: PyPI holds only source stubs of {', '.join(release.packages)} (they download the real "
        f"wheel from {release.index_url} while pip builds them); the plan installs the real wheels from "
        f"{mirror or release.index_url} with --only-binary, so an unreachable index fails at once instead of "
        "in a stub build"
        + (f"; the mirror is also handed to any stub as WHEEL_STUB_PIP_INDEX_URL={mirror}" if mirror else ""),
    ]


def tensorrt_steps(release: TensorRTRelease | None, request: Request) -> tuple[Step, ...]:
    """The TensorRT packages that live behind another index: a step of their own, from that index only, never
    built from a stub (the CLI form of uv's explicit index pinned to those packages). PyPI's real wheels
    (TensorRT 8) go with the main step."""
    if release is None or not release.packages or not release.index_url:
        return ()
    source = request.tensorrt_index_url or release.index_url
    names = tuple(requirement_name(package) for package in release.packages)
    return (
        Step(
            "install",
            release.packages,
            f"TensorRT {release.version} for CUDA {release.cuda_major}: the real wheels, from {source} only "
            "(PyPI has only source stubs of them)",
            index_url=source,
            only_binary=names,
            environment=(f"WHEEL_STUB_PIP_INDEX_URL={request.tensorrt_index_url}",)
            if request.tensorrt_index_url
            else (),
        ),
    )
