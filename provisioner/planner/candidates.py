"""The candidates: the matrix's builds that match `--ort` and `--cuda` (rule 1), newest first."""

from __future__ import annotations

from provisioner.errors import BadInput
from provisioner.matrix.query import cuda_versions, ort_versions
from provisioner.planner.common import short_label
from provisioner.versions import in_series, ort_matcher, vtuple

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it
if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix, OrtBuild
    from provisioner.plan import Request


def candidates(matrix: Matrix, request: Request) -> list[OrtBuild]:
    """Builds matching --ort and --cuda; BadInput when a pin names nothing in the matrix (`matrix show` too)."""
    builds = list(matrix.builds)
    if not builds:
        raise BadInput(
            f"the matrix ({matrix.origin}) lists no onnxruntime-gpu builds",
            hint="run `ortprov matrix update`",
        )
    if request.ort:
        try:
            matches = ort_matcher(request.ort)
        except ValueError:
            raise BadInput(
                f"--ort {request.ort!r} is not a version or specifier",
                hint="examples: --ort 1.20, --ort 1.20.1, --ort '>=1.18,<1.21'",
            ) from None
        builds = [b for b in builds if matches(b.ort_version)]
        if not builds:
            versions = ort_versions(matrix)
            raise BadInput(
                f"onnxruntime-gpu {request.ort} is not in the matrix (dated {matrix.date}; it knows "
                f"{versions[-1]} to {versions[0]})",
                hint="`ortprov matrix update` refreshes the matrix from PyPI",
            )
    if request.cuda:
        wanted = request.cuda.strip()
        known = cuda_versions(matrix)
        if not any(in_series(v, wanted) for v in known):
            raise BadInput(
                f"no onnxruntime-gpu build in the matrix targets CUDA {wanted}",
                hint=f"builds exist for CUDA {', '.join(known)}",
            )
        pinned = [b for b in builds if in_series(b.cuda_version, wanted)]
        if not pinned:
            offered = ", ".join(sorted({short_label(b) for b in builds}, key=vtuple))
            raise BadInput(
                f"--ort {request.ort} and --cuda {wanted} exclude each other: the matrix has {offered}",
                hint="drop one of the two pins",
            )
        builds = pinned
    return sorted(builds, key=lambda b: (vtuple(b.ort_version), vtuple(b.cuda_version)), reverse=True)
