"""Which runnable candidate wins (rule 3), and the sentences that say why: the newest release, then full driver
support, the reuse of CUDA/cuDNN libraries already present (torch's NVIDIA wheels, system libraries), PyPI over
a side feed, the newest CUDA."""

from __future__ import annotations

from provisioner.matrix.query import cuda_major_libraries, library_of
from provisioner.planner.common import Existing, Verdict, short_label
from provisioner.planner.libraries import REUSED_PIN_REASON
from provisioner.planner.process import mixed_libraries, mixing_sentence, process_libraries
from provisioner.versions import major, vtuple

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.facts import HostFacts
    from provisioner.matrix.model import Matrix, OrtBuild
    from provisioner.plan import LibraryPin, Request


def existing_libraries(hosts: tuple[HostFacts, ...], matrix: Matrix) -> Existing:
    """The CUDA and cuDNN majors already in the environment, in the order the process meets them: torch's CUDA,
    the NVIDIA wheels, then every library the process would load (planner/process.py), whatever put it there."""
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
        for lib in process_libraries(host, matrix):
            hit = lib.hit
            if not hit.major or not hit.major.isdigit():
                continue
            if lib.library == "cudnn":
                found.add_cudnn(lib.cuda_major, hit.major, lib.where)
            if lib.cuda_major is not None:
                found.add_cuda(lib.cuda_major, lib.where)
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


def major_rank(build: OrtBuild, existing: Existing) -> int:
    """How early the build's CUDA major is met among those the environment loads (the first: highest); 0: none."""
    order = list(existing.cuda)
    return len(order) - order.index(build.cuda_major) if build.cuda_major in order else 0


def preference(verdict: Verdict, request: Request) -> tuple:
    build = verdict.build
    score = verdict.score if request.prefer_existing_libraries else 0
    # A build whose wheels were read to hold code for every GPU beats one judged by its CUDA release alone (a side
    # feed's, whose wheels cannot be read): the newest build that really runs wins. Same release: a build the
    # driver fully supports beats one that needs minor-version compatibility (JIT paths), then reuse of libraries
    # already present, then PyPI over a side feed, then newer CUDA.
    # The environment's CUDA comes before the release: a build of the CUDA major the process already loads
    # (the first met, where it loads several) beats a newer release of another, whose libraries would share the
    # process with those (libcudnn.so.9 of two CUDA majors is one library to the loader).
    return (
        not verdict.unread_code,
        verdict.major_rank if request.prefer_existing_libraries else 0,
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


def _majors_text(existing: Existing, skip: int | None = None) -> str:
    return " and ".join(f"CUDA {m}" for m in existing.cuda if m != skip)


def environment_lines(
    chosen: Verdict, runnable: list[Verdict], existing: Existing, hosts: tuple[HostFacts, ...], matrix: Matrix
) -> tuple[list[str], list[str]]:
    """(reasons, notes) on the CUDA the environment already loads: the newer release of another CUDA major that
    lost to it, and what it would have mixed into the process."""
    build = chosen.build
    newer = [
        v
        for v in runnable
        if v.major_rank < chosen.major_rank and vtuple(v.build.ort_version) > vtuple(build.ort_version)
    ]
    if not newer or not chosen.major_rank:
        return [], []
    best = max(newer, key=lambda v: vtuple(v.build.ort_version)).build
    sources = ", ".join(existing.cuda.get(build.cuda_major, [])[:3])
    mixed = mixed_libraries(hosts, best, matrix)
    what = (
        mixing_sentence(best, mixed, short_label(best))
        if mixed
        else f"it would load CUDA {best.cuda_major} libraries into the same process, next to those"
    )
    reason = (
        f"{short_label(best)} is newer and runs, but this environment's process already loads CUDA "
        f"{build.cuda_major} libraries ({sources}); {what}"
    )
    note = f"`--cuda {best.cuda_major}` plans {short_label(best)} anyway" + (
        f", at that risk: {', '.join(dict.fromkeys(lib.hit.filename for lib in mixed))} twice in one process"
        if mixed
        else ""
    )
    return [reason], [note]


def other_major_lines(
    chosen: Verdict, existing: Existing, hosts: tuple[HostFacts, ...], matrix: Matrix, request: Request
) -> tuple[list[str], list[str]]:
    """(problem, notes) for a chosen build of a CUDA major the environment does not load. The problem (the plan is
    refused) when no build of the environment's CUDA runs, the user did not ask for this CUDA with --cuda, and the
    build would put a second copy of a shared-name library (libcudnn.so.9) into the process; otherwise notes."""
    build = chosen.build
    if chosen.major_rank or not existing.cuda or not request.prefer_existing_libraries:
        return [], []
    mixed = mixed_libraries(hosts, build, matrix)
    present = _majors_text(existing, build.cuda_major)
    if not present:
        return [], []
    if mixed and not request.cuda:
        return [mixing_sentence(build, mixed, short_label(build))], []
    if mixed:
        return [], [f"--cuda {request.cuda}: {mixing_sentence(build, mixed, short_label(build))}"]
    sources = ", ".join(w for m in existing.cuda if m != build.cuda_major for w in existing.cuda[m][:2])
    return [], [
        f"this environment's process already loads {present} libraries ({sources}); {short_label(build)} loads "
        f"its own CUDA {build.cuda_major} libraries next to them (other names: the loader keeps both)"
    ]


def choice_reason(
    build: OrtBuild, hosts: tuple[HostFacts, ...], matrix: Matrix, request: Request, by_environment: bool = False
) -> str:
    who = "this host" if len(hosts) == 1 else f"all {len(hosts)} hosts"
    pins = [f"--ort {request.ort}" if request.ort else "", f"--cuda {request.cuda}" if request.cuda else ""]
    pinned = " and ".join(p for p in pins if p)
    if by_environment:
        return (
            f"{build.label} is the newest build for CUDA {build.cuda_major}, the CUDA this environment already "
            f"loads, that runs on {who}" + (f" (matching {pinned})" if pinned else "")
        )
    if pinned:
        return f"{build.label} is the newest build matching {pinned} that runs on {who}"
    return f"{build.label} is the newest build in the matrix (dated {matrix.date}) that runs on {who}"
