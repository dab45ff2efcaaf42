"""`ortprov matrix check | show | update`: validate, browse and refresh the compatibility matrix."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from provisioner.commands.options import command
from provisioner.errors import BadInput

if TYPE_CHECKING:
    from provisioner.render.matrix import CheckResult, ShowResult, UpdateOutcome

MATRIX_HELP = """The compatibility matrix: onnxruntime-gpu builds, CUDA releases, NVIDIA wheels, TensorRT.

Examples:

\b
  ortprov matrix show --cuda 12            # every build for CUDA 12
  ortprov matrix show --ort 1.20 --json    # machine-readable
  ortprov matrix check                     # validate the data in use
  ortprov matrix update                    # new releases from PyPI"""

CHECK_HELP = """Validate the matrix; print a summary, or every problem (file, entry, reason) and exit 1.

Examples:

\b
  ortprov matrix check
  ortprov matrix check --dir matrices/"""

SHOW_HELP = """The builds of onnxruntime-gpu: CUDA, cuDNN, TensorRT, Python, platforms, index.

Exit codes: 0 builds listed, 2 bad input (no build matches the filters, as for `ortprov plan`).

Examples:

\b
  ortprov matrix show --cuda 13
  ortprov matrix show --ort '>=1.20,<1.23' --json"""

UPDATE_HELP = """Add onnxruntime-gpu releases that are new on the index to the cached matrix.

Each new wheel's facts are read with HTTP range requests (no download). The result is validated and
written to the user cache dir (ORTPROV_CACHE_DIR overrides); offline, the data in use stays.
Exit 0 updated or already current, 1 index unreachable or not an index (data unchanged).

Examples:

\b
  ortprov matrix update
  ortprov matrix update --index-url https://mirror.example/simple/ --timeout 5"""


def register(app: typer.Typer) -> None:
    """Add `ortprov matrix ...` to the app."""
    matrix_app = typer.Typer(help=MATRIX_HELP, no_args_is_help=True, rich_markup_mode=None)
    matrix_app.command("check", help=CHECK_HELP)(command(check))
    matrix_app.command("show", help=SHOW_HELP)(command(show))
    matrix_app.command("update", help=UPDATE_HELP)(command(update))
    app.add_typer(matrix_app, name="matrix")


def _notices(matrix: Any) -> None:
    from provisioner.render.output import note

    for notice in matrix.notices:
        note(notice, "notice")


def check(directory: str | None, json_output: bool) -> CheckResult:
    """Validate the matrix in use, or the one in --dir."""
    from provisioner.errors import DataError
    from provisioner.matrix.load import load_matrix
    from provisioner.matrix.query import ort_versions
    from provisioner.render.matrix import CheckResult, summary

    if directory is not None and not Path(directory).is_dir():
        raise BadInput(
            f"--dir {directory} is not a folder",
            hint="point it at a folder holding onnxruntime-gpu.yaml, cuda.yaml ...",
        )
    try:
        matrix = load_matrix(Path(directory)) if directory is not None else load_matrix()
    except DataError as exc:
        problems = [str(p) for p in getattr(exc, "problems", [])] or [exc.message]
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        invalid = DataError("\n  ".join([f"the matrix is invalid ({count}):", *problems]))
        invalid.details = {"valid": False, "problems": problems}
        raise invalid from None
    if not json_output:
        _notices(matrix)
    return CheckResult(summary(matrix, ort_versions(matrix)))


def show(ort: str | None, cuda: str | None, json_output: bool) -> ShowResult:
    """The builds that match --ort and --cuda, newest first; none is bad input, as for `ortprov plan`."""
    from provisioner.matrix.load import load_matrix
    from provisioner.matrix.query import builds_for
    from provisioner.plan import Request
    from provisioner.planner import candidates
    from provisioner.render.matrix import ShowResult

    matrix = load_matrix()
    candidates(matrix, Request(ort=ort, cuda=cuda))  # the planner's own sentence when a filter names nothing
    if not json_output:
        _notices(matrix)
    return ShowResult(
        builds_for(matrix, ort, cuda), matrix.origin, matrix.date, eps=matrix.ep_releases, cores=matrix.core_releases
    )


def update(
    matrix_index_url: str, http_timeout: float, retries: int, limit: int | None, json_output: bool, verbose: bool
) -> UpdateOutcome:
    """Add the releases that are new on the index to the cached matrix."""
    from provisioner.matrix.refresh import update_matrix
    from provisioner.render.matrix import UpdateOutcome
    from provisioner.render.output import error_line, note

    result = update_matrix(
        index_url=matrix_index_url,
        timeout=http_timeout,
        retries=retries,
        limit=limit,
        progress=lambda line: note(line, "reading"),
    )
    if result.reason is not None:  # the index could not be read: an error, which -q does not hide
        error_line(f"could not read the index {result.reason}", hint=" ".join(result.notices) or None)
        if verbose and result.detail:
            note(result.detail, "detail")
        return UpdateOutcome(result)
    if not json_output:
        for notice in result.notices:
            note(notice, "notice")
        for skipped in result.skipped:
            note(skipped, "skipped")
    return UpdateOutcome(result)
