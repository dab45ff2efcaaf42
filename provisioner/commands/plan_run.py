"""What `ortprov plan` and `ortprov dockerfile` do, without typer.

commands/plan.py declares the options (typer); provisioner/fastpath.py parses well-formed ones without
importing typer. Both call `plan_command` / `dockerfile_command` here with the same keyword arguments.
"""

from __future__ import annotations

import dataclasses
import sys

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the fast path of `ortprov plan` does without it

if TYPE_CHECKING:
    from provisioner.planning import PlanningOptions

FORMATS = ("text", "json", "pip", "requirements", "uv", "conda", "dockerfile")


def plan_command(
    *,
    host: list[str] | None = None,
    driver: str | None = None,
    gpu_cc: str | None = None,
    python: str | None = None,
    platform: str | None = None,
    ort: str | None = None,
    cuda: str | None = None,
    tensorrt: bool = False,
    cuda_libraries: str = "wheels",
    no_loader_hook: bool = False,
    fmt: str = "text",
    json_output: bool = False,
    hashes: bool = False,
    base: str = "slim",
    verbose: bool = False,
) -> None:
    """`ortprov plan`: plan for the hosts the flags describe and print it in `fmt`."""
    from provisioner.errors import BadInput
    from provisioner.planning import options_from_flags

    if json_output:
        if fmt not in ("text", "json"):
            raise BadInput(f"--json and --format {fmt} exclude each other", hint="keep one of them")
        fmt = "json"
    options = options_from_flags(
        host, driver, gpu_cc, python, platform, ort, cuda, tensorrt, cuda_libraries, no_loader_hook
    )
    run_plan(options, fmt, hashes=hashes, base=base, verbose=verbose)


def dockerfile_command(
    *,
    host: list[str] | None = None,
    driver: str | None = None,
    gpu_cc: str | None = None,
    python: str | None = None,
    platform: str | None = None,
    ort: str | None = None,
    cuda: str | None = None,
    tensorrt: bool = False,
    cuda_libraries: str = "wheels",
    base: str = "slim",
) -> None:
    """`ortprov dockerfile`: the plan as a Dockerfile."""
    from provisioner.planning import options_from_flags

    options = options_from_flags(host, driver, gpu_cc, python, platform, ort, cuda, tensorrt, cuda_libraries)
    run_plan(options, "dockerfile", base=base)


def run_plan(
    options: PlanningOptions, fmt: str, *, hashes: bool = False, base: str = "slim", verbose: bool = False
) -> None:
    """Plan and print in `fmt`; errors go to cli.main (one line, exit 2/3), with JSON on stdout for --json."""
    from provisioner.errors import BadInput, NoCompatiblePlan, OrtprovError
    from provisioner.planning import describes_machine, plan_for

    try:
        if fmt not in FORMATS:
            raise BadInput(f"unknown format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
        if hashes and fmt != "requirements":
            raise BadInput("--hashes applies to --format requirements", hint="add --format requirements")
        if base not in ("slim", "cuda"):
            raise BadInput(f"unknown --base {base!r}", hint="use slim or cuda")
        if fmt == "dockerfile" and base == "cuda":
            # the nvidia/cuda image supplies CUDA and cuDNN: the plan installs no NVIDIA wheels
            options = dataclasses.replace(options, cuda_libraries="system")
        from provisioner.matrix.load import load_matrix

        matrix = load_matrix()
        for notice in matrix.notices:
            sys.stderr.write(f"note: {notice}\n")
        the_plan = plan_for(options, matrix)
    except NoCompatiblePlan as exc:
        if fmt == "json":
            _emit_error(exc)
            raise
        from provisioner.output import error_line
        from provisioner.plan_text import render_no_plan

        error_line(exc.message, exc.hint)
        sys.stderr.write(render_no_plan(exc, verbose) + "\n")
        sys.exit(exc.exit_code)
    except OrtprovError as exc:
        if fmt == "json":
            _emit_error(exc)
        raise
    assumed = the_plan.hosts[0].python
    if describes_machine(options) and options.python_version is None and assumed is not None:
        sys.stderr.write(
            f"note: planned for Python {assumed.minor} (this interpreter's); pass --python X.Y for another\n"
        )
    if fmt == "json":
        import json

        sys.stdout.write(json.dumps(the_plan.to_dict(), indent=2) + "\n")
    elif fmt == "text":
        from provisioner.plan_text import render_text

        sys.stdout.write(render_text(the_plan, verbose=verbose, python=options.target_python or "python") + "\n")
    else:
        from provisioner import recipes

        text = recipes.render(
            the_plan, fmt, matrix=matrix, python=options.target_python or "python", hashes=hashes, base=base
        )
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _emit_error(exc: Exception) -> None:
    import json

    from provisioner.serde import to_jsonable

    data = {
        "error": getattr(exc, "message", str(exc)),
        "hint": getattr(exc, "hint", None),
        "exit_code": getattr(exc, "exit_code", 1),
        "rejected": to_jsonable(list(getattr(exc, "rejected", []))),
    }
    sys.stdout.write(json.dumps(data, indent=2) + "\n")
