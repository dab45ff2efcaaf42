"""The planning options shared by `ortprov plan`, `ortprov dockerfile` and `ortprov apply`.

A command declares them as parameters with these Annotated types, then calls
`provisioner.planning.options_from_flags(...)` (typer-free, so that the fast path of `ortprov plan` shares it):

    def apply(host: HostOpt = None, driver: DriverOpt = None, gpu_cc: GpuCcOpt = None,
              python: PythonOpt = None, platform: PlatformOpt = None, ort: OrtOpt = None,
              cuda: CudaOpt = None, tensorrt: TensorrtOpt = False, ...) -> None:
        from provisioner.planning import options_from_flags

        options = options_from_flags(host, driver, gpu_cc, python, platform, ort, cuda, tensorrt)
"""

from __future__ import annotations

from typing import Annotated

import typer

HostOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--host",
        metavar="FILE",
        help="A host file from `ortprov detect --json` (repeat for several hosts: one plan for all).",
    ),
]
DriverOpt = Annotated[
    str | None,
    typer.Option("--driver", metavar="VERSION", help="NVIDIA driver version (535.104.05, 580), or 'none'."),
]
GpuCcOpt = Annotated[
    str | None,
    typer.Option("--gpu-cc", metavar="X.Y", help="GPU compute capability (8.6); several: 8.0,9.0; or 'none'."),
]
PythonOpt = Annotated[
    str | None,
    typer.Option(
        "--python",
        metavar="X.Y|PATH",
        help="Target Python: a version (3.12, 3.13t) to plan for, or an interpreter / venv to probe.",
    ),
]
PlatformOpt = Annotated[
    str | None,
    typer.Option("--platform", metavar="PLATFORM", help="linux-x86_64 | linux-aarch64 | windows-amd64."),
]
OrtOpt = Annotated[
    str | None,
    typer.Option("--ort", metavar="SPEC", help="onnxruntime-gpu release: 1.20, 1.20.1 or '>=1.18,<1.21'."),
]
CudaOpt = Annotated[
    str | None, typer.Option("--cuda", metavar="MAJOR[.MINOR]", help="Only builds for this CUDA (12, 12.4).")
]
CudaLibrariesOpt = Annotated[
    str | None,
    typer.Option(
        "--cuda-libraries",
        metavar="wheels|system",
        help="Where CUDA and cuDNN come from: NVIDIA pip wheels (default), or the system (an nvidia/cuda image, "
        "a CUDA toolkit + cuDNN install): then no NVIDIA wheels are installed.",
    ),
]
NoLoaderHookOpt = Annotated[
    bool,
    typer.Option(
        "--no-loader-hook",
        help="Do not install the loader hook that lets a plain `import onnxruntime` find the NVIDIA wheels' "
        "libraries; the plan then says the line your code must call instead.",
    ),
]
TensorrtOpt = Annotated[
    bool,
    typer.Option("--tensorrt", help="Add the TensorRT pip packages the release's TensorRT provider needs."),
]


PLANNING_HELP = """Where the hosts come from: --host FILE (repeatable; flags override the files), or, with
--driver and --gpu-cc, a machine described by flags (nothing is probed; platform and Python default to this
machine's), or else this machine, probed (--python PATH picks the interpreter), with flags overriding it.

--python takes a version (3.12, 3.13t: plan for it) or an interpreter / venv path (probe it)."""
