"""Which runnable candidate wins (rule 3), and the sentences that say why: the newest release, then full driver
support, the reuse of CUDA/cuDNN libraries already present (torch's NVIDIA wheels, system libraries), PyPI over
a side feed, the newest CUDA."""

from __future__ import annotations

from provisioner.matrix.query import cuda_major_libraries, library_of
from provisioner.planner.common import Existing, Verdict, short_label
from provisioner.planner.libraries import REUSED_PIN_REASON
from provisioner.versions import major, vtuple

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.facts import HostFacts
    from provisioner.matrix.model import Matrix, OrtBuild
    from provisioner.plan import LibraryPin, Request


def existing_libraries(hosts: tuple[HostFacts, ...], matrix: Matrix) -> Existing:
    found = Existing()
    same_major = cuda_major_libraries(matrix)  # cudart, cublas, nvrtc: their major is the CUDA major
    for host in hosts:
        if host.torch and host.torch.cuda_version:
            found.add_cuda(major(host.torch.cuda_version), f"torch {host.torch.version}")
        for wheel in host.nvidia_wheels:
            found.wheels.setdefault(wheel.name, set()).add(wheel.version)
            if wheel.cuda_major is None:
                continue
            if wheel.library == "cudnn":
                found.add_cudnn(wheel.cuda_major, str(major(wheel.version)), f"{wheel.name} {wheel.version}")
            elif wheel.library and library_of(wheel.library, same_major):
                found.add_cuda(wheel.cuda_major, f"{wheel.name} {wheel.version}")
        for hit in host.libraries:
            if not hit.major or not hit.major.isdigit():
                continue
            where = f"{hit.filename} ({hit.source})"
            if library_of(hit.library, same_major):
                found.add_cuda(int(hit.major), where)
            elif hit.library == "cudnn":
                found.add_cudnn(None, hit.major, where)
    return found


def _cudnn_major(build: OrtBuild) -> str | None:
    return str(major(build.cudnn_version)) if build.cudnn_version else None


def reuse_score(build: OrtBuild, existing: Existing) -> int:
    if build.cuda_major not in existing.cuda:
        return 0
    cudnn = _cudnn_major(build)
    if cudnn and ((build.cuda_major, cudnn) in existing.cudnn or (None, cudnn) in existing.cudnn):
        return 2
    return 1


def preference(verdict: Verdict, request: Request) -> tuple:
    build = verdict.build
    score = verdict.score if request.prefer_existing_libraries else 0
    # A build whose wheels were read to hold code for every GPU beats one judged by its CUDA release alone (a side
    # feed's, whose wheels cannot be read): the newest build that really runs wins. Same release: a build the
    # driver fully supports beats one that needs minor-version compatibility (JIT paths), then reuse of libraries
    # already present, then PyPI over a side feed, then newer CUDA.
    return (
        not verdict.unread_code,
        vtuple(build.ort_version),
        not verdict.minor_compat,
        score,
        build.index_url is None,
        vtuple(build.cuda_version),
    )


def reuse_reasons(chosen: Verdict, existing: Existing, pins: list[LibraryPin]) -> list[str]:
    """Why the build matching the libraries already present won; "not installed twice" only when it is true."""
    if not chosen.score:
        return []
    build = chosen.build
    sources = existing.cuda.get(build.cuda_major, [])
    text = (
        f"the CUDA {build.cuda_major} build is preferred: CUDA {build.cuda_major} libraries are already "
        f"present ({', '.join(sources[:3])})"
    )
    cudnn = _cudnn_major(build)
    if chosen.score > 1 and cudnn:
        where = existing.cudnn.get((build.cuda_major, cudnn)) or existing.cudnn.get((None, cudnn)) or []
        text += f", and cuDNN {cudnn} ({', '.join(where[:2])})"
    reused = [f"{pin.package} {pin.version}" for pin in pins if pin.reason == REUSED_PIN_REASON]
    if len(reused) == len(pins):
        return [text + ", so they are not installed twice"]
    if reused:
        return [text + f"; the plan reuses {', '.join(reused)} and installs the other NVIDIA wheels it pins"]
    return [text + "; they are not reused as they are: the plan installs the NVIDIA wheels it pins"]


def missed_reuse_notes(chosen: Verdict, runnable: list[Verdict], existing: Existing, request: Request) -> list[str]:
    """Say when an older release would have reused the libraries already there."""
    if chosen.score or not existing.cuda or request.cuda:
        return []
    better = [v for v in runnable if v.score > 0]
    if not better:
        return []
    alt = better[0].build
    present = ", ".join(f"CUDA {m}" for m in sorted(existing.cuda))
    return [
        f"the {present} libraries already present are not reused: {chosen.build.ort_version} is built for "
        f"CUDA {chosen.build.cuda_version}; `--cuda {alt.cuda_major}` picks {short_label(alt)}, which reuses "
        f"them"
    ]


def choice_reason(build: OrtBuild, hosts: tuple[HostFacts, ...], matrix: Matrix, request: Request) -> str:
    who = "this host" if len(hosts) == 1 else f"all {len(hosts)} hosts"
    pins = [f"--ort {request.ort}" if request.ort else "", f"--cuda {request.cuda}" if request.cuda else ""]
    pinned = " and ".join(p for p in pins if p)
    if pinned:
        return f"{build.label} is the newest build matching {pinned} that runs on {who}"
    return f"{build.label} is the newest build in the matrix (dated {matrix.date}) that runs on {who}"
