"""What the target probe (standalone/packages_probe.py, run in the target by provisioner.probe.target) found,
as facts: the interpreter, its onnxruntime flavours, torch, NVIDIA wheels, every distribution. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from provisioner import childproc
from provisioner.facts import MissingFiles, NvidiaWheel, OrtDist, PythonInfo, TorchInfo
from provisioner.standalone import protocol

_CU_SUFFIX = re.compile(r"-cu(\d+)(?=-|$)")
_CU_DIR = re.compile(r"^cu(\d+)$")
_LIBRARY_ALIASES = {
    "cuda-runtime": "cudart",
    "cuda-nvrtc": "nvrtc",
    "cuda-cupti": "cupti",
    "cuda-nvcc": "nvcc",
}
# Unsuffixed CUDA 13 wheels whose own version major is the CUDA major (cufft 12 / curand 10 are not).
_TRACKS_CUDA_VERSION = ("cudart", "nvrtc", "cublas", "cupti", "nvcc", "nvjitlink", "cuda-cccl", "nvtx")


@dataclass(frozen=True)
class PackagesReport:
    """What the child found: the interpreter, its onnxruntime flavours, torch and NVIDIA wheels."""

    python: PythonInfo | None
    onnxruntime: tuple[OrtDist, ...] = ()
    torch: TorchInfo | None = None
    torch_requires: tuple[str, ...] = ()  # normalised names torch depends on (its NVIDIA wheels)
    nvidia_wheels: tuple[NvidiaWheel, ...] = ()
    errors: tuple[str, ...] = ()
    distributions: tuple[tuple[str, str], ...] = ()  # (normalised name, version) of each, first on sys.path
    purelib: str = ""  # where the interpreter installs: site-packages (the loader hook goes there)
    platlib: str = ""
    scripts: str = ""
    interpreter: str = ""  # the path ortprov ran the probe with (what pip, uv and the verify child are given)


@dataclass(frozen=True)
class IncompleteDist:
    """An installed distribution whose RECORD lists files that are missing on disk."""

    name: str
    version: str
    location: str | None
    missing_files: MissingFiles


@dataclass(frozen=True)
class FilesReport:
    """`check_files`: the incomplete distributions of an environment, and what could not be read."""

    incomplete: tuple[IncompleteDist, ...] = ()
    errors: tuple[str, ...] = ()


def parse_child_output(stdout: str, stderr: str, returncode: int, python: str) -> PackagesReport:
    """Turn the child's stdout into a PackagesReport; a crash or garbage becomes one error line."""
    answer = parse_answer(stdout, stderr, returncode, python)
    if isinstance(answer, str):
        return PackagesReport(python=None, errors=(answer,), interpreter=python)
    return report_from_child(answer, python)


def parse_answer(stdout: str, stderr: str, returncode: int, python: str) -> dict[str, Any] | str:
    """The probe's answer (its last protocol message), or one error line (a crash, garbage, an old Python)."""
    answer = protocol.last(stdout)
    if answer is not None:
        return answer
    if any(line.startswith(protocol.MARKER) for line in stdout.splitlines()):
        return "package probe: unreadable answer (not a JSON object)"
    return f"package probe: {python} gave no answer ({exit_reason(stderr, returncode)})"


def exit_reason(stderr: str, returncode: int | None) -> str:
    """'exit code 1: <the line of stderr that says why>' (childproc.stderr_gist), for a child that ended without an
    answer."""
    gist = childproc.stderr_gist(stderr)
    why = f"exit code {returncode}" + (f": {gist}" if gist else "")
    if gist.startswith("SyntaxError"):
        why += "; the probe needs Python 3.8 or newer"
    return why


def _missing_files(item: dict[str, Any]) -> MissingFiles | None:
    data = item.get("missing_files")
    if not data:
        return None
    return MissingFiles(int(data["count"]), int(data["listed"]), tuple(str(p) for p in data.get("sample") or ()))


def report_from_child(data: dict[str, Any], interpreter: str = "") -> PackagesReport:
    """Build the facts from the child's JSON (the probe ran in `interpreter`)."""
    py = data.get("python") or {}
    python = PythonInfo(
        executable=str(py.get("executable", "")),
        version=str(py.get("version", "")),
        implementation=str(py.get("implementation", "cpython")),
        abi=str(py.get("abi", "")),
        free_threaded=bool(py.get("free_threaded")),
        is_venv=bool(py.get("is_venv")),
        is_conda=bool(py.get("is_conda")),
        externally_managed=bool(py.get("externally_managed")),
        prefix=str(py.get("prefix", "")),
        loader_hook=py.get("loader_hook") or None,
    )
    onnxruntime = tuple(
        OrtDist(
            name=item["name"],
            version=item["version"],
            location=item.get("location"),
            cuda_version=item.get("cuda_version"),
            cudnn_version=item.get("cudnn_version"),
            build_package_name=item.get("build_package_name"),
            missing_files=_missing_files(item),
        )
        for item in data.get("onnxruntime") or []
    )
    torch_data = data.get("torch")
    torch = None
    requires: tuple[str, ...] = ()
    if torch_data:
        torch = TorchInfo(
            version=torch_data["version"],
            cuda_version=torch_data.get("cuda_version"),
            location=torch_data.get("location"),
        )
        requires = tuple(torch_data.get("requires") or ())
    wheels = tuple(
        nvidia_wheel(
            item["name"],
            item["version"],
            tuple(item.get("lib_dirs") or ()),
            _missing_files(item),
            tuple(str(path) for path in item["files"]) if item.get("files") is not None else None,
        )
        for item in data.get("nvidia_wheels") or []
    )
    paths = data.get("paths") or {}
    return PackagesReport(
        python=python,
        onnxruntime=onnxruntime,
        torch=torch,
        torch_requires=requires,
        nvidia_wheels=wheels,
        errors=tuple(f"package probe: {line}" for line in data.get("errors") or ()),
        distributions=tuple((str(name), str(version)) for name, version in data.get("distributions") or ()),
        purelib=str(paths.get("purelib") or ""),
        platlib=str(paths.get("platlib") or ""),
        scripts=str(paths.get("scripts") or ""),
        interpreter=interpreter,
    )


def files_report(answer: dict[str, Any] | str) -> FilesReport:
    """The answer of a probe run with `--files` (or one error line) as a FilesReport."""
    if isinstance(answer, str):
        return FilesReport(errors=(answer,))
    incomplete = tuple(
        IncompleteDist(item["name"], item["version"], item.get("location"), missing)
        for item in answer.get("incomplete") or []
        if (missing := _missing_files(item)) is not None
    )
    return FilesReport(incomplete, tuple(f"package probe: {line}" for line in answer.get("errors") or ()))


def nvidia_wheel(
    name: str,
    version: str,
    lib_dirs: tuple[str, ...] = (),
    missing_files: MissingFiles | None = None,
    files: tuple[str, ...] | None = None,
) -> NvidiaWheel:
    """An NvidiaWheel with the library it ships and the CUDA major it belongs to."""
    return NvidiaWheel(
        name=name,
        version=version,
        library=wheel_library(name),
        cuda_major=wheel_cuda_major(name, version, lib_dirs),
        lib_dirs=lib_dirs,
        missing_files=missing_files,
        files=files,
    )


def wheel_library(name: str) -> str | None:
    """'nvidia-cudnn-cu12' -> 'cudnn', 'nvidia-cuda-runtime' -> 'cudart', 'tensorrt-libs' -> 'tensorrt'."""
    if name.startswith("tensorrt"):
        return "tensorrt"
    if not name.startswith("nvidia-"):
        return None
    stem = _CU_SUFFIX.sub("", name[len("nvidia-") :])
    return _LIBRARY_ALIASES.get(stem, stem) or None


def wheel_cuda_major(name: str, version: str, lib_dirs: tuple[str, ...] = ()) -> int | None:
    """From the -cuNN suffix, else a nvidia/cuNN/ install folder (CUDA 13 wheels), else - for wheels whose
    version follows CUDA's (cuda-runtime, cublas, nvrtc) - the version's major."""
    suffix = _CU_SUFFIX.search(name)
    if suffix:
        return int(suffix.group(1))
    for folder in lib_dirs:
        for part in re.split(r"[\\/]", folder):
            match = _CU_DIR.match(part)
            if match:
                return int(match.group(1))
    library = wheel_library(name)
    if library in _TRACKS_CUDA_VERSION:
        major = version.split(".", 1)[0]
        if major.isdigit():
            return int(major)
    return None
