"""Every command-line option, declared once: flags, type, default, help, placeholder and check.

typer builds a command from a function's signature; `command` writes that signature from these declarations.
A command function names the options it takes as its parameters (`fmt`, `json_output`, ...; `planning` stands
for all the planning options) and receives checked values: the planning options as one typed
`PlanningOptions`, built and validated by `planning_options`, the one function that does it. It returns a
result object, which provisioner.render.output prints (text or JSON); an OrtprovError it raises becomes one
error line (and, with --json, a JSON error object) and its exit code.

What a saved plan already decided (`PLANNING_FLAGS`, `refuse_beside_saved_plan`) is derived from the same
declarations, so a new planning option is refused beside `--plan FILE` without a second edit.

This module is the table; the machinery it is bound to is commands/declare.py (the `Declared` type, the typer
command, the PlanningOptions builder), and each value's check is commands/checks.py's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from provisioner.commands import checks
from provisioner.commands.checks import NONE_WORDS, make_folder, python_version_parts, split_python_option
from provisioner.commands.declare import (
    EVERY_COMMAND,
    Declared,
    PlanningOptions,
    checked_planning,
    flag_labels,
    flags_given,
    json_in_args,
    refuse_given,
    typer_command,
)
from provisioner.facts import PLATFORM_TAGS
from provisioner.plan import PROVIDERS
from provisioner.render import DOCKERFILE_BASES, RECIPE_FORMATS

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from provisioner.render.output import Result

CUDA_LIBRARY_SOURCES = ("wheels", "system")
CLUSTER_FORMATS = ("kubernetes",)  # a cluster's plans only (--kube-nodes, --kube): each class's node affinity
PLAN_FORMATS = ("text", "json", *RECIPE_FORMATS, *CLUSTER_FORMATS)  # text and json: the plan; the others: recipes
INSTALLERS = ("auto", "uv", "pip", "conda")
INDEX_SCHEMES = ("http", "https", "file")  # what pip and uv take as an index URL


# The planning options, in the order of the help (and of PLANNING_FLAGS).
PLANNING: dict[str, Declared] = {
    "host": Declared(
        ("--host",),
        list[str] | None,
        None,
        "A host file from `ortprov detect --json` (repeat for several hosts: one plan for all).",
        "FILE",
        sets=("host_files",),
    ),
    "driver": Declared(
        ("--driver",),
        str | None,
        None,
        "NVIDIA driver version (535.104.05, 580), or 'none'.",
        "VERSION",
        checks.driver,
        sets=("driver",),
    ),
    "gpu_cc": Declared(
        ("--gpu-cc",),
        str | None,
        None,
        "GPU compute capability (8.6); several: 8.0,9.0; or 'none'.",
        "X.Y",
        checks.gpu_cc,
        sets=("gpu_cc",),
    ),
    "python": Declared(
        ("--python",),
        str | None,
        None,
        "Target Python: a version (3.12, 3.13t) to plan for, or an interpreter / venv to probe.",
        "X.Y|PATH",
        sets=("python_version", "target_python"),  # named "--python X.Y" and "--python PATH" beside a saved plan
    ),
    "platform": Declared(
        ("--platform",),
        str | None,
        None,
        " | ".join(PLATFORM_TAGS) + ".",
        "PLATFORM",
        checks.one_of(PLATFORM_TAGS, "unknown platform {!r}"),
        sets=("platform",),
    ),
    "ort": Declared(
        ("--ort",),
        str | None,
        None,
        "onnxruntime-gpu release: 1.20, 1.20.1 or '>=1.18,<1.21'.",
        "SPEC",
        checks.ort,
        sets=("ort",),
    ),
    "cuda": Declared(
        ("--cuda",),
        str | None,
        None,
        "Only builds for this CUDA (12, 12.4).",
        "MAJOR[.MINOR]",
        checks.cuda,
        sets=("cuda",),
    ),
    "tensorrt": Declared(
        ("--tensorrt",),
        bool,
        False,
        "Add the TensorRT pip packages the release's TensorRT provider needs.",
        sets=("tensorrt",),
    ),
    "cuda_libraries": Declared(
        ("--cuda-libraries",),
        str | None,
        None,
        "Where CUDA and cuDNN come from: NVIDIA pip wheels (the default), or the system (an nvidia/cuda image, "
        "a CUDA toolkit + cuDNN install): then no NVIDIA wheels are installed.",
        "|".join(CUDA_LIBRARY_SOURCES),
        checks.one_of(CUDA_LIBRARY_SOURCES, "--cuda-libraries {!r} is not a library source"),
        sets=("cuda_libraries",),
    ),
    "plan_provider": Declared(
        ("--provider",),
        str | None,
        None,
        "The GPU provider to plan for: cuda (onnxruntime-gpu, the default), tensorrt (= --tensorrt), or a plugin "
        "EP installed beside the CPU onnxruntime core: tensorrt-rtx (NVIDIA's TensorRT-RTX EP, its runtime "
        "bundled; GeForce RTX / RTX PRO GPUs).",
        "|".join(PROVIDERS),
        checks.one_of(PROVIDERS, "--provider {!r} is not " + ", ".join(PROVIDERS)),
        sets=("provider",),
    ),
    "tensorrt_libraries": Declared(
        ("--tensorrt-libraries",),
        str | None,
        None,
        "Where TensorRT comes from (implies --tensorrt): its pip wheels (the default), the system's loader path "
        "(a TensorRT container or tarball), or a folder holding libnvinfer.so.N.",
        "wheels|system|DIR",
        checks.tensorrt_libraries,
        sets=("tensorrt_libraries",),
    ),
    "tensorrt_index_url": Declared(
        ("--tensorrt-index-url",),
        str | None,
        None,
        "A mirror of the index that serves the real TensorRT wheels (implies --tensorrt); also handed to "
        "NVIDIA's source stubs as WHEEL_STUB_PIP_INDEX_URL.",
        "URL",
        checks.url("--tensorrt-index-url", INDEX_SCHEMES),
        sets=("tensorrt_index_url",),
    ),
    "no_loader_hook": Declared(
        ("--no-loader-hook",),
        bool,
        False,
        "Do not install the loader hook that lets a plain `import onnxruntime` find the NVIDIA wheels' "
        "libraries; the plan then says the line your code must call instead.",
        sets=("loader_hook",),
    ),
}

PLANNING_HELP = """Where the hosts come from: --host FILE (repeatable; flags override the files), or, with
--driver and --gpu-cc, a machine described by flags (nothing is probed; platform and Python default to this
machine's), or else this machine, probed (--python PATH picks the interpreter), with flags overriding it.

--python takes a version (3.12, 3.13t: plan for it) or an interpreter / venv path (probe it)."""

TARGET_HELP = "default: $VIRTUAL_ENV, else $CONDA_PREFIX, else the Python running ortprov"

# Every other option, by the parameter name a command function gives it.
OPTIONS: dict[str, Declared] = {
    "json_output": Declared(
        ("--json",), bool, False, "Print the result as one JSON object on stdout (errors too: docs/json.md)."
    ),
    "verbose": Declared(
        ("-v", "--verbose"),
        bool,
        False,
        "Say more: every rejected candidate; the installer's output as it runs; a bug's traceback.",
    ),
    "quiet": Declared(
        ("-q", "--quiet"), bool, False, "Say less: no notes or progress on stderr (the result, and errors, only)."
    ),
    "target": Declared(
        ("--python",),
        str | None,
        None,
        f"The interpreter (or venv folder) to examine; a version (3.12) finds python3.12 on PATH; {TARGET_HELP}.",
        "PATH",
        checks.not_empty("--python", "interpreter"),
    ),
    "timeout": Declared(
        ("--timeout",),
        float,
        120.0,
        "Seconds before the GPU check (a child process of the target Python) is abandoned.",
        "SECONDS",
        checks.positive("--timeout"),
        old_flags=("--verify-timeout",),
    ),
    "probe_timeout": Declared(
        ("--timeout",),
        float,
        20.0,
        "Seconds to wait for the package probe (a child process of the target Python).",
        "SECONDS",
        checks.positive("--timeout"),
    ),
    "provider": Declared(
        ("--provider",),
        str | None,
        None,
        "The GPU provider to prove (default: cuda).",
        "|".join(PROVIDERS),
        checks.one_of(PROVIDERS, "--provider {!r} is not " + ", ".join(PROVIDERS)),
    ),
    "tensorrt_provider": Declared(
        ("--tensorrt",),
        bool,
        False,
        "Prove the TensorRT provider (= --provider tensorrt): first in the session, the libnvinfer it loaded, "
        "and a second session that reuses the engine cache.",
    ),
    "preload": Declared(
        ("--preload",),
        bool,
        False,
        "Your code calls onnxruntime.preload_dlls() before creating sessions: do the same. Without it, the "
        "verdict is what a plain program gets.",
    ),
    # detect
    "label": Declared(("--label",), str, "", "A name stored in the host file, e.g. 'H100, driver 580'.", "TEXT"),
    # plan, dockerfile
    "fmt": Declared(
        ("--format", "-f"),
        str,
        "text",
        " | ".join(PLAN_FORMATS) + ".",
        "FORMAT",
        checks.one_of(PLAN_FORMATS, "unknown format {!r}"),
    ),
    "hashes": Declared(("--hashes",), bool, False, "requirements: pin sha256 digests read from the index."),
    # plan: a Kubernetes cluster (docs/cluster.md)
    "kube_nodes": Declared(
        ("--kube-nodes",),
        str | None,
        None,
        "Plan a Kubernetes cluster from its nodes' GPU Feature Discovery labels: the NodeList `kubectl get nodes "
        "-o json` prints (- reads stdin). One plan per class of nodes.",
        "FILE|-",
        checks.not_empty("--kube-nodes", "file"),
    ),
    "kube": Declared(
        ("--kube",), bool, False, "Plan the live cluster: ortprov runs `kubectl get nodes -o json` (current context)."
    ),
    "kube_context": Declared(
        ("--kube-context",),
        str | None,
        None,
        "The kubeconfig context kubectl reads the cluster from (implies --kube).",
        "NAME",
        checks.not_empty("--kube-context", "context"),
    ),
    "one_image": Declared(
        ("--one-image",),
        bool,
        False,
        "With a cluster: one plan that runs on every class of nodes, or the class that blocks it.",
    ),
    "output_dir": Declared(
        ("--output-dir",),
        str | None,
        None,
        "With a cluster and --format dockerfile: write one Dockerfile per class here (Dockerfile.CLASS; created).",
        "DIR",
        checks.path("--output-dir", "folder", checks.creatable_folder("--output-dir")),
    ),
    "base": Declared(
        ("--base",),
        str,
        "slim",
        "The Dockerfile's base image: slim (Python, then the NVIDIA wheels) or cuda (nvidia/cuda with cuDNN; the "
        "plan, in every format, then installs no NVIDIA wheels).",
        "|".join(DOCKERFILE_BASES),
        checks.one_of(DOCKERFILE_BASES, "unknown --base {!r}"),
    ),
    "build_context": Declared(
        ("--context",),
        str | None,
        None,
        "Write the Dockerfile and ortprov-check/ (the build-time check it COPYs) into this folder, the build "
        "context: then `docker build DIR`.",
        "DIR",
        checks.path("--context", "folder", checks.creatable_folder("--context")),
    ),
    # apply, download
    "plan_file": Declared(
        ("--plan",),
        str | None,
        None,
        "Use a plan saved by `ortprov plan --json` (what it removes is read from the target).",
        "FILE",
        checks.path("--plan", "file"),
    ),
    "venv": Declared(
        ("--venv",),
        str | None,
        None,
        "Target venv; created when missing (with --python X.Y's Python, else this one's).",
        "DIR",
        checks.path("--venv", "folder", checks.creatable_folder("--venv")),
    ),
    "system": Declared(("--system",), bool, False, "Allow an externally managed (PEP 668) interpreter."),
    "installer": Declared(
        ("--installer",),
        str,
        "auto",
        "auto: uv if available, else pip. conda: the conda recipe with micromamba/mamba/conda, then its pip part.",
        "|".join(INSTALLERS),
        checks.one_of(INSTALLERS, "unknown installer {!r}"),
    ),
    "index_url": Declared(
        ("--index-url",),
        str | None,
        None,
        "Package index for the install steps (a mirror).",
        "URL",
        checks.url("--index-url", INDEX_SCHEMES),
    ),
    "extra_index_url": Declared(
        ("--extra-index-url",),
        list[str] | None,
        None,
        "Additional index (repeatable).",
        "URL",
        checks.url("--extra-index-url", INDEX_SCHEMES),
    ),
    "find_links": Declared(
        ("--find-links",),
        list[str] | None,
        None,
        "Also look for wheels here (repeatable).",
        "DIR|URL",
        checks.not_empty("--find-links", "folder or URL"),
    ),
    "wheelhouse": Declared(
        ("--wheelhouse",),
        str | None,
        None,
        "Install offline from a folder filled by `ortprov download` (--no-index --find-links DIR; its plan.json "
        "unless flags ask for another plan).",
        "DIR",
        checks.path("--wheelhouse", "folder"),
    ),
    "dry_run": Declared(
        ("--dry-run",),
        bool,
        False,
        "Make the same checks and list the same commands as the real run, with what they would change; change nothing.",
    ),
    "yes": Declared(("--yes", "-y"), bool, False, "Do not ask before removing or replacing packages."),
    "no_verify": Declared(("--no-verify",), bool, False, "Skip verification after installing."),
    "verify_static": Declared(
        ("--verify-static",),
        bool,
        False,
        "Verify only that every library the CUDA provider needs resolves (no GPU needed).",
    ),
    "require_gpu_verify": Declared(
        ("--require-gpu-verify",),
        bool,
        False,
        "Fail (and restore) unless a CUDA session ran on the GPU: without an NVIDIA driver (a Docker build, CI), "
        "the static check alone is then not enough.",
    ),
    "keep": Declared(
        ("--keep",), bool, False, "Keep the installation when its verification fails (default: restore it)."
    ),
    "dest": Declared(
        ("--dest",),
        str,
        ...,
        "The wheelhouse folder (created when missing).",
        "DIR",
        checks.path("--dest", "folder", checks.creatable_folder("--dest")),
    ),
    "glibc": Declared(
        ("--glibc",), str | None, None, "Target glibc (default: the plan's host, else 2.28).", "X.Y", checks.glibc
    ),
    # verify, doctor
    "model": Declared(
        ("--model",),
        str | None,
        None,
        "Check your .onnx model instead of the built-in one.",
        "FILE",
        checks.model("--model"),
    ),
    "static": Declared(
        ("--static",), bool, False, "Without a GPU: check that every library the provider needs resolves."
    ),
    "dim": Declared(
        ("--dim",),
        list[str] | None,
        None,
        "Size of a dynamic input dimension of --model (repeatable).",
        "NAME=N",
        checks.dims,
    ),
    "log": Declared(
        ("--log",), str | None, None, "Explain this error log only (- reads stdin); touches nothing.", "FILE|-"
    ),
    # tune, doctor --model
    "model_file": Declared((), str, ..., "The .onnx model to measure.", "MODEL", checks.model("MODEL"), argument=True),
    "shape": Declared(
        ("--shape",),
        list[str] | None,
        None,
        "An input shape of one run, e.g. x=1x3x640x480 (repeat: one run per value; an input given once keeps it).",
        "NAME=DIMS",
    ),
    "shapes": Declared(
        ("--shapes",),
        str | None,
        None,
        'The runs, a JSON list of {input: dims}, e.g. [{"x": [1, 3, 640, 480]}, {"x": "1x3x960x736"}].',
        "FILE",
        checks.not_empty("--shapes", "file"),
    ),
    "budget": Declared(
        ("--budget",),
        float,
        300.0,
        "Seconds the whole tune may take (variants beyond it are skipped).",
        "SECONDS",
        checks.positive("--budget"),
    ),  # fmt: skip
    "inputs_dir": Declared(
        ("--inputs",),
        str | None,
        None,
        "Feed your own inputs: a folder of .npy (one array per run), .npz (one array per input) or images (read "
        "with PIL or cv2 in the target, resized and normalised as RapidOCR does); default: generated ones.",
        "DIR",
        checks.not_empty("--inputs", "folder"),
    ),
    "allow_output_change": Declared(
        ("--allow-output-change",),
        bool,
        False,
        "Recommend the fastest variant even when its outputs differ from the CPU's beyond tolerance.",
    ),
    "tune_model": Declared(
        ("--model",),
        str | None,
        None,
        "Also measure this .onnx model on the CPU and on CUDA (as `ortprov tune`, --budget seconds) and report "
        "gpu-slower-than-cpu and a faster GPU variant that changes the results.",
        "FILE",
        checks.model("--model"),
    ),
    # matrix
    "directory": Declared(
        ("--dir",),
        str | None,
        None,
        "Validate the matrices/*.yaml in this folder instead of the data in use.",
        "DIR",
        checks.not_empty("--dir", "folder"),
    ),
    "matrix_index_url": Declared(
        ("--index-url",),
        str,
        "https://pypi.org/simple/",
        "Simple API root of PyPI or a mirror (PEP 691 JSON preferred).",
        "URL",
        checks.http_url,
    ),
    "http_timeout": Declared(
        ("--timeout",), float, 20.0, "Seconds per HTTP request.", "SECONDS", checks.positive("--timeout")
    ),
    "retries": Declared(
        ("--retries",), int, 2, "Retries per HTTP request on timeouts and 5xx.", "N", checks.between("--retries", 0, 10)
    ),
    "limit": Declared(
        ("--limit",), int | None, None, "Only the newest N new releases.", "N", checks.between("--limit", 1, 10_000)
    ),
}
# `matrix show` filters with the planning options' own --ort and --cuda: one spelling, one check
OPTIONS["ort"] = PLANNING["ort"]
OPTIONS["cuda"] = PLANNING["cuda"]


# -- bound to the table: the planning options, what a saved plan already decided, the typer command ---------


def planning_options(
    *,
    host: list[str] | None = None,
    driver: str | None = None,
    gpu_cc: str | None = None,
    python: str | None = None,
    platform: str | None = None,
    ort: str | None = None,
    cuda: str | None = None,
    tensorrt: bool = False,
    plan_provider: str | None = None,
    cuda_libraries: str | None = None,
    no_loader_hook: bool = False,
    tensorrt_libraries: str | None = None,
    tensorrt_index_url: str | None = None,
) -> PlanningOptions:
    """The planning flags as one checked PlanningOptions: each flag's own check (PLANNING), `--python` split
    into a version or an interpreter, then the checks across flags (declare.checked_planning). BadInput for the
    first bad input."""
    return checked_planning(PLANNING, dict(locals()))  # the parameters are named as the PLANNING declarations


# Each planning input and the flag that sets it. A saved plan (`apply --plan FILE`, a wheelhouse's plan.json)
# has made every one of these choices: beside it, a command honours only those it reads as something else
# (apply: --python names the target; download: --python X.Y and --platform pick the wheels to fetch) and
# refuses the others.
PLANNING_FLAGS = flag_labels(PLANNING)


def planning_flags_given(options: PlanningOptions, honoured: Collection[str] = ()) -> list[str]:
    """The planning flags the user gave (PLANNING_FLAGS), less the fields in `honoured`."""
    return flags_given(options, PLANNING_FLAGS, honoured)


def refuse_beside_saved_plan(options: PlanningOptions, saved: str, honoured: Collection[str] = ()) -> None:
    """BadInput (one line) when a planning flag other than `honoured` was given beside a saved plan."""
    refuse_given(planning_flags_given(options, honoured), saved)


def command(function: Callable[..., Result]) -> Callable[..., None]:
    """A typer command from a command function whose parameters are declared option names (declare.typer_command
    over these declarations): the command gets checked values and returns a result object, printed with its exit
    code."""
    return typer_command(function, PLANNING, OPTIONS, planning_options)


def asks_for_json(args: list[str]) -> bool:
    """Whether a command line asks for JSON (--json, --format json): how cli.main says a usage error of the
    parser, which comes before any value is checked."""
    return json_in_args(args, OPTIONS["json_output"].flags, OPTIONS["fmt"].flags)


__all__ = [
    "CLUSTER_FORMATS",
    "CUDA_LIBRARY_SOURCES",
    "EVERY_COMMAND",
    "INDEX_SCHEMES",
    "INSTALLERS",
    "NONE_WORDS",
    "OPTIONS",
    "PLANNING",
    "PLANNING_FLAGS",
    "PLANNING_HELP",
    "PLAN_FORMATS",
    "PROVIDERS",
    "TARGET_HELP",
    "Declared",
    "PlanningOptions",
    "command",
    "make_folder",
    "planning_flags_given",
    "planning_options",
    "python_version_parts",
    "refuse_beside_saved_plan",
    "split_python_option",
]
