"""What the planner's steps share: the verdict on one candidate, the CUDA libraries already present, how a build
and a host are named in sentences, and the CUDA version a host's driver supports."""

from __future__ import annotations

from dataclasses import dataclass, field

from provisioner.matrix.query import newest_cuda_for_driver

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.facts import HostFacts
    from provisioner.matrix.model import Matrix, OrtBuild


@dataclass
class Existing:
    """CUDA / cuDNN libraries already present on the hosts, and where they come from."""

    cuda: dict[int, list[str]] = field(default_factory=dict)  # CUDA major -> descriptions
    cudnn: dict[tuple[int | None, str], list[str]] = field(default_factory=dict)  # (CUDA major, cuDNN major)
    wheels: dict[str, set[str]] = field(default_factory=dict)  # installed NVIDIA wheel -> versions

    def add_cuda(self, major: int, where: str) -> None:
        items = self.cuda.setdefault(major, [])
        if where not in items:
            items.append(where)

    def add_cudnn(self, cuda_major: int | None, cudnn_major: str, where: str) -> None:
        items = self.cudnn.setdefault((cuda_major, cudnn_major), [])
        if where not in items:
            items.append(where)


@dataclass(frozen=True)
class Verdict:
    """One candidate judged against every host."""

    build: OrtBuild
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    reasons: tuple[str, ...]
    blocking_hosts: tuple[int, ...]  # indexes of hosts that reject it
    score: int = 0
    minor_compat: bool = False  # some host runs it only through CUDA minor-version compatibility
    missing_code: tuple[tuple[int, str], ...] = ()  # (host index, compute capability) its wheels hold no code for
    unread_code: tuple[tuple[int, str], ...] = ()  # (host index, cc) judged by the CUDA release: wheels not read
    major_rank: int = 0  # its CUDA major among those the environment already loads: first met highest, 0 none


def short_label(build: OrtBuild) -> str:
    """ "1.31.1 (CUDA 13.0)"."""
    return f"{build.ort_version} (CUDA {build.cuda_version})"


def host_name(host: HostFacts, index: int, count: int) -> str:
    """ "this host" for one host, else "host 'a.json'" (the label, or its position)."""
    if count == 1:
        return "this host"
    return f"host {host.label or '#' + str(index + 1)!r}"


def driver_cuda_version(host: HostFacts, matrix: Matrix) -> str | None:
    """The newest CUDA version the host's driver supports: as reported, else derived from matrix floors."""
    driver = host.driver
    if driver.cuda_version:
        return driver.cuda_version
    if not driver.present or not driver.version:
        return None
    release = newest_cuda_for_driver(matrix, driver.version, windows=host.platform.os == "windows")
    return release.version if release else None


def found_libraries(host: HostFacts) -> str:
    found = sorted({f"{hit.library} {hit.major}" for hit in host.libraries if hit.major and hit.library != "cuda"})
    return ", ".join(found) or "no CUDA library"


def unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
