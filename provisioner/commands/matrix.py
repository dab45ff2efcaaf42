"""`ortprov matrix check | show | update`: validate, browse and refresh the compatibility matrix."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import typer

matrix_app = typer.Typer(
    help=(
        "The compatibility matrix: onnxruntime-gpu builds, CUDA releases, NVIDIA wheels, TensorRT.\n\n"
        "Examples:\n\n"
        "  ortprov matrix show --cuda 12            # every build for CUDA 12\n\n"
        "  ortprov matrix show --ort 1.20 --json    # machine-readable\n\n"
        "  ortprov matrix check                     # validate the data in use\n\n"
        "  ortprov matrix update                    # add new releases from PyPI to the cache"
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    """Add `ortprov matrix ...` to the app."""
    app.add_typer(matrix_app, name="matrix")


def _notices(matrix: Any) -> None:
    from provisioner.output import style

    for notice in matrix.notices:
        sys.stderr.write(style("notice: ", "yellow", sys.stderr) + notice + "\n")


@matrix_app.command("check")
def check(
    directory: str | None = typer.Option(
        None, "--dir", help="Validate the matrices/*.yaml in this folder instead of the data in use."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Validate the matrix; print a summary, or every problem (file, entry, reason) and exit 1.

    Examples: `ortprov matrix check`, `ortprov matrix check --dir matrices/`.
    """
    from provisioner.errors import DataError
    from provisioner.matrix.load import load_matrix

    if directory is not None and not Path(directory).is_dir():
        from provisioner.errors import BadInput

        raise BadInput(
            f"--dir {directory} is not a folder",
            hint="point it at a folder holding onnxruntime-gpu.yaml, cuda.yaml ...",
        )
    try:
        matrix = load_matrix(Path(directory)) if directory is not None else load_matrix()
    except DataError as exc:
        problems = [str(p) for p in getattr(exc, "problems", [])] or [exc.message]
        if as_json:
            sys.stdout.write(json.dumps({"valid": False, "problems": problems}, indent=2) + "\n")
        else:
            from provisioner.output import error_line

            error_line(f"the matrix is invalid ({len(problems)} problem{'s' if len(problems) != 1 else ''}):")
            for problem in problems:
                sys.stderr.write(f"  {problem}\n")
        raise typer.Exit(1) from None
    summary = _summary(matrix)
    if as_json:
        sys.stdout.write(json.dumps({"valid": True, **summary}, indent=2) + "\n")
        return
    _notices(matrix)
    typer.echo(
        f"matrix OK ({summary['origin']}, {summary['date']}): {summary['builds']} builds of onnxruntime-gpu "
        f"{summary['ort_oldest']} .. {summary['ort_newest']} "
        f"({summary['unconfirmed']} from documentation only), "
        f"{summary['cuda_releases']} CUDA releases, {summary['library_wheels']} NVIDIA wheels, "
        f"{summary['tensorrt_releases']} TensorRT releases"
    )


def _summary(matrix: Any) -> dict[str, Any]:
    from provisioner.matrix.query import ort_versions

    versions = ort_versions(matrix)
    return {
        "origin": matrix.origin,
        "date": matrix.date,
        "builds": len(matrix.builds),
        "unconfirmed": sum(1 for b in matrix.builds if not b.confirmed),
        "ort_newest": versions[0] if versions else None,
        "ort_oldest": versions[-1] if versions else None,
        "cuda_releases": len(matrix.cuda_releases),
        "cuda_majors": [m.major for m in matrix.cuda_majors],
        "library_wheels": len(matrix.library_wheels),
        "tensorrt_releases": len(matrix.tensorrt),
        "notices": list(matrix.notices),
    }


def build_row(build: Any) -> dict[str, Any]:
    """One build as the JSON object `matrix show --json` prints."""
    from provisioner.serde import to_jsonable

    row = to_jsonable(build)
    row["platforms"] = [
        p["platform"] + (f" (glibc {p['glibc_min']}+)" if p.get("glibc_min") else "") for p in row["platforms"]
    ]
    row["platform_details"] = to_jsonable(build.platforms)
    row["cuda_major"] = build.cuda_major
    return row


def _validate_filters(ort: str | None, cuda: str | None) -> None:
    from provisioner.errors import BadInput

    if cuda is not None and not re.fullmatch(r"\d+(\.\d+)?", cuda):
        raise BadInput(f"--cuda {cuda!r} is not a CUDA major or minor", hint="use e.g. --cuda 12 or --cuda 12.4")
    if ort is not None:
        from provisioner.versions import ort_matcher

        try:
            ort_matcher(ort)
        except ValueError:
            raise BadInput(
                f"--ort {ort!r} is not a version or version specifier",
                hint="use e.g. --ort 1.20, --ort 1.20.1 or --ort '>=1.20,<1.23'",
            ) from None


@matrix_app.command("show")
def show(
    ort: str | None = typer.Option(None, "--ort", help="onnxruntime-gpu version or specifier: 1.20, 1.20.1, '>=1.22'."),
    cuda: str | None = typer.Option(None, "--cuda", help="CUDA major (12) or minor (12.4)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list, one object per build."),
) -> None:
    """The builds of onnxruntime-gpu: CUDA, cuDNN, TensorRT, Python, platforms, index.

    Examples: `ortprov matrix show --cuda 13`, `ortprov matrix show --ort '>=1.20,<1.23' --json`.
    """
    from provisioner.matrix.load import load_matrix
    from provisioner.matrix.query import builds_for

    _validate_filters(ort, cuda)
    matrix = load_matrix()
    builds = builds_for(matrix, ort, cuda)
    if as_json:
        sys.stdout.write(json.dumps([build_row(b) for b in builds], indent=2) + "\n")
        return
    _notices(matrix)
    if not builds:
        typer.echo("no build matches" + (f" --ort {ort}" if ort else "") + (f" --cuda {cuda}" if cuda else ""))
        raise typer.Exit(1)
    typer.echo(render_table(builds))
    typer.echo(
        f"\n{len(builds)} builds; * = from documentation only (not read from the wheel); "
        f"data: {matrix.origin}, {matrix.date}"
    )


def _platform_cell(build: Any) -> str:
    short = {"linux-x86_64": "linux-x86_64", "linux-aarch64": "linux-aarch64", "windows-amd64": "win-amd64"}
    return ", ".join(
        short.get(p.platform, p.platform) + (f"({p.glibc_min})" if p.glibc_min else "") for p in build.platforms
    )


def _python_cell(build: Any) -> str:
    plain = [p for p in build.python if not p.endswith("t")]
    free = [p for p in build.python if p.endswith("t")]
    text = f"{plain[0]}-{plain[-1]}" if len(plain) > 1 else ", ".join(plain)
    return text + (f" +{','.join(free)}" if free else "")


def render_table(builds: Any) -> str:
    """A plain-text table of builds (no colour, fits ~150 columns)."""
    header = (
        "onnxruntime-gpu",
        "CUDA",
        "cuDNN",
        "TensorRT",
        "Python",
        "platforms (glibc)",
        "extras",
        "index",
    )
    rows = [header]
    for b in builds:
        index = (
            "PyPI"
            if b.index_url is None
            else re.sub(r"^https?://[^/]+/.*?_packaging/([^/]+)/.*$", r"feed \1", b.index_url)
        )
        rows.append(
            (
                b.ort_version + ("" if b.confirmed else " *"),
                b.cuda_version,
                b.cudnn_version or "-",
                b.tensorrt_version or "-",
                _python_cell(b),
                _platform_cell(b),
                ",".join(b.extras) or "-",
                index,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


@matrix_app.command("update")
def update(
    index_url: str = typer.Option(
        "https://pypi.org/simple/",
        "--index-url",
        help="Simple API root of PyPI or a mirror (PEP 691 JSON preferred).",
    ),
    timeout: float = typer.Option(20.0, "--timeout", min=0.1, help="Seconds per HTTP request."),
    retries: int = typer.Option(2, "--retries", min=0, help="Retries per HTTP request on timeouts and 5xx."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the newest N new releases."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Add onnxruntime-gpu releases that are new on the index to the cached matrix.

    Each new wheel's facts are read with HTTP range requests (no download). The result is validated and
    written to the user cache dir (ORTPROV_CACHE_DIR overrides); offline, the data in use stays.
    Exit 0 updated or already current, 1 index unreachable (data unchanged).

    Examples: `ortprov matrix update`,
    `ortprov matrix update --index-url https://mirror.example/simple/ --timeout 5`.
    """
    from provisioner.errors import BadInput
    from provisioner.matrix.refresh import update_matrix

    if not re.match(r"^https?://", index_url):
        raise BadInput(
            f"--index-url {index_url!r} is not an http(s) URL",
            hint="e.g. --index-url https://pypi.org/simple/",
        )
    result = update_matrix(index_url=index_url, timeout=timeout, retries=retries, limit=limit)
    if as_json:
        from provisioner.output import emit_json

        emit_json(result)
    else:
        from provisioner.output import style

        for notice in result.notices:
            sys.stderr.write(style("notice: ", "yellow", sys.stderr) + notice + "\n")
        for skipped in result.skipped:
            sys.stderr.write(style("skipped: ", "yellow", sys.stderr) + skipped + "\n")
        if result.status == "updated":
            typer.echo(
                f"added {len(result.added)} release(s) ({', '.join(result.added)}): "
                f"{result.builds_after} builds, "
                f"written to {result.written_to}"
            )
        elif result.status == "unchanged":
            typer.echo(
                f"the matrix is current: no new onnxruntime-gpu release on {result.index_url} "
                f"({result.builds_after} builds)"
            )
        elif result.status == "kept":
            typer.echo(f"kept the cached matrix ({result.builds_after} builds)")
        else:
            typer.echo(f"matrix not refreshed; using data from {result.data_date}")
    if result.status == "offline":
        raise typer.Exit(1)
