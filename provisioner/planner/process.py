"""The CUDA libraries a process of the target interpreter will load, each with the CUDA major it belongs to, and
what a build of another CUDA major would mix with them in that one process.

Every library detect found where the process looks (pip wheels, torch/lib, the conda env, LD_LIBRARY_PATH, the
ld.so cache; on Windows the application folder, System32, conda's Library/bin, PATH) counts; a toolkit that no
search path names does not. Its CUDA major comes from, in order: its package (a conda record's build string or
cuda-version dependency, the pip wheel's -cuNN, torch's CUDA), its own name where only one CUDA major uses it
(libcudart.so.12, libcufft.so.11: `matrix/query.library_cuda_majors`), the other libraries of its folder. A name
several CUDA majors use (libcudnn.so.9, libcurand.so.10) is *shared*: whichever copy loads first serves every
later load of that name, so a second copy of another CUDA major in the same process is the risk.
"""

from __future__ import annotations

from dataclasses import dataclass

from provisioner.matrix.query import build_libraries, library_cuda_majors, library_of

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.facts import HostFacts, LibraryHit
    from provisioner.matrix.model import Matrix, OrtBuild


@dataclass(frozen=True)
class ProcessLibrary:
    """One CUDA library the process would load."""

    hit: LibraryHit
    library: str | None  # the matrix's library (cublasLt -> cublas), None for one the matrix has no name for
    cuda_major: int | None
    shared: bool  # its name is one several CUDA majors load (libcudnn.so.9)

    @property
    def where(self) -> str:
        """ "libcudnn.so.9 (conda cudnn 9.3.0.75 (cuda12_0))", "libcudart.so.12 (ldconfig)"."""
        return f"{self.hit.filename} ({self.hit.package or self.hit.source})"


def _names(matrix: Matrix) -> set[str]:
    return {name for record in matrix.cuda_majors for name in (record.pip_packages or {})}


def process_libraries(host: HostFacts, matrix: Matrix) -> tuple[ProcessLibrary, ...]:
    """The host's searched CUDA libraries (the driver's left out), in search order, each with its CUDA major."""
    table = library_cuda_majors(matrix)
    names = _names(matrix)
    first: list[tuple[LibraryHit, str | None, int | None, bool]] = []
    for hit in host.libraries:
        if not hit.searched or hit.library == "cuda":
            continue
        library = library_of(hit.library, names)
        majors = table.get((library, hit.major or "")) if library else None
        cuda = hit.cuda_major
        if cuda is None and majors is not None and len(majors) == 1:
            cuda = next(iter(majors))
        first.append((hit, library, cuda, bool(majors and len(majors) > 1)))
    by_folder: dict[str, set[int]] = {}
    for hit, _, cuda, _ in first:
        if cuda is not None:
            by_folder.setdefault(_folder(hit), set()).add(cuda)
    found = []
    for hit, library, cuda, shared in first:
        if cuda is None:
            around = by_folder.get(_folder(hit), set())
            cuda = next(iter(around)) if len(around) == 1 else None
        found.append(ProcessLibrary(hit, library, cuda, shared))
    return tuple(found)


def _folder(hit: LibraryHit) -> str:
    return hit.path.replace("\\", "/").rpartition("/")[0]


def mixed_with(build: OrtBuild, libraries: tuple[ProcessLibrary, ...], matrix: Matrix) -> list[ProcessLibrary]:
    """The libraries already loaded that the build would load a second copy of, under the same name but for
    another CUDA major (its libcudnn.so.9 for CUDA 13 next to conda's for CUDA 12)."""
    loads = build_libraries(matrix, build)
    return [
        lib
        for lib in libraries
        if lib.shared
        and lib.cuda_major is not None
        and lib.cuda_major != build.cuda_major
        and lib.library is not None
        and loads.get(lib.library) == lib.hit.major
    ]


def mixing_sentence(build: OrtBuild, mixed: list[ProcessLibrary], label: str) -> str:
    """What loading the build next to those libraries does, in one sentence."""
    names = ", ".join(dict.fromkeys(lib.hit.filename for lib in mixed))
    majors = "/".join(str(m) for m in sorted({lib.cuda_major for lib in mixed if lib.cuda_major is not None}))
    where = "; ".join(
        dict.fromkeys(
            f"{lib.hit.path}, " + (f"from {lib.hit.package}" if lib.hit.package else lib.hit.source)
            for lib in mixed[:3]
        )
    )
    return (
        f"{label} would load {names} for CUDA {build.cuda_major} into a process that already loads the CUDA "
        f"{majors} {names} ({where}): the loader keeps whichever copy loads first and serves it to both, so one "
        f"of onnxruntime and the code that loaded the first runs a library built for another CUDA major (failed "
        f"calls, wrong results or a crash)"
    )


def mixed_libraries(hosts: tuple[HostFacts, ...], build: OrtBuild, matrix: Matrix) -> list[ProcessLibrary]:
    """`mixed_with` over every host."""
    return [lib for host in hosts for lib in mixed_with(build, process_libraries(host, matrix), matrix)]


def with_cuda_majors(host: HostFacts, matrix: Matrix) -> HostFacts:
    """The host with each searched library's CUDA major filled in as the planner infers it (what detect shows)."""
    from dataclasses import replace

    inferred = {id(lib.hit): lib.cuda_major for lib in process_libraries(host, matrix)}
    hits = tuple(
        replace(hit, cuda_major=inferred[id(hit)]) if inferred.get(id(hit)) is not None else hit
        for hit in host.libraries
    )
    return replace(host, libraries=hits)
