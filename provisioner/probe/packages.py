"""Installed packages of the *target* interpreter, read by a child process (standalone/packages_probe.py).

The child runs with a timeout and never imports onnxruntime or torch, so a broken CUDA install cannot hang or
crash ortprov. `start_probe` returns at once; `PackageProbe.result()` collects, so other probes run meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provisioner import standalone
from provisioner.errors import BadInput
from provisioner.facts import MissingFiles, NvidiaWheel, OrtDist, PythonInfo, TorchInfo

CHILD_SCRIPT = standalone.path("packages_probe.py")
MARKER = "ORTPROV-PROBE "

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


def resolve_python(python: str | None, env: dict[str, str] | None = None) -> str:
    """The target interpreter: --python (a path, a command on PATH, or a venv folder), else the active
    venv ($VIRTUAL_ENV), else the active conda env ($CONDA_PREFIX), else the interpreter running ortprov."""
    env = dict(os.environ) if env is None else env
    if python is None:
        for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
            prefix = env.get(variable)
            candidate = _interpreter_in(Path(prefix)) if prefix else None
            if candidate:
                return candidate
        return sys.executable
    path = Path(python).expanduser()
    if path.is_dir():
        inside = _interpreter_in(path)
        if inside:
            return inside
        raise BadInput(
            f"--python {python!r} is a folder without a Python interpreter", hint="pass bin/python of a venv"
        )
    if path.is_file():
        if not os.access(path, os.X_OK):
            raise BadInput(f"--python {python!r} is not executable", hint="pass the path of a Python interpreter")
        return str(path.absolute())
    found = shutil.which(python, path=env.get("PATH")) if os.sep not in python else None
    if found:
        return found
    raise BadInput(f"--python {python!r} does not exist", hint="pass a path such as .venv/bin/python, or python3.12")


def _interpreter_in(prefix: Path) -> str | None:
    for relative in ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe"):
        candidate = prefix / relative
        if candidate.is_file():
            return str(candidate)
    return None


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


class PackageProbe:
    """A running child probe; `result()` (or, for `--files`, `files_result()`) waits for it (up to the
    timeout) and never raises."""

    def __init__(self, python: str, timeout: float, args: tuple[str, ...] = ()) -> None:
        self.python = python
        self.timeout = timeout
        self._error: str | None = None
        self._process: subprocess.Popen[str] | None = None
        try:
            self._process = subprocess.Popen(
                [python, str(CHILD_SCRIPT), *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                env=_child_env(),
                start_new_session=os.name == "posix",  # so a timeout kills its children too
            )
        except OSError as exc:
            self._error = f"could not start {python}: {exc.strerror or exc}"

    def result(self) -> PackagesReport:
        """Collect the child's answer; problems become one-line errors in the report."""
        answer = self._answer()
        if isinstance(answer, str):
            return PackagesReport(python=None, errors=(answer,))
        return report_from_child(answer)

    def files_result(self) -> FilesReport:
        """Collect the answer of a child started with `--files`."""
        answer = self._answer()
        if isinstance(answer, str):
            return FilesReport(errors=(answer,))
        incomplete = tuple(
            IncompleteDist(item["name"], item["version"], item.get("location"), missing)
            for item in answer.get("incomplete") or []
            if (missing := _missing_files(item)) is not None
        )
        return FilesReport(incomplete, tuple(f"package probe: {line}" for line in answer.get("errors") or ()))

    def _answer(self) -> dict[str, Any] | str:
        """The child's JSON answer, or one error line."""
        if self._process is None:
            return f"package probe: {self._error}"
        try:
            stdout, stderr = self._process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_tree(self._process)
            return f"package probe: {self.python} did not answer within {self.timeout:g} s (killed)"
        return _parse_answer(stdout, stderr, self._process.returncode, self.python)


def _kill_tree(process: subprocess.Popen[str]) -> None:
    """Kill the probe and everything it started (its own session on POSIX), then reap it."""
    from provisioner.childproc import kill_group

    kill_group(process)
    with contextlib.suppress(subprocess.TimeoutExpired):  # a grandchild outside the session holds the pipes
        process.communicate(timeout=5)


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def start_probe(python: str, timeout: float = 20.0) -> PackageProbe:
    """Start the child probe in `python` and return without waiting."""
    return PackageProbe(python, timeout)


def check_files(python: str, timeout: float = 60.0) -> FilesReport:
    """Every distribution of `python`'s environment (its sys.path) whose RECORD lists files that are missing
    on disk: what an install, uninstall or restore must never leave behind. Never raises."""
    return PackageProbe(python, timeout, ("--files",)).files_result()


def parse_child_output(stdout: str, stderr: str, returncode: int, python: str) -> PackagesReport:
    """Turn the child's stdout into a PackagesReport; a crash or garbage becomes one error line."""
    answer = _parse_answer(stdout, stderr, returncode, python)
    if isinstance(answer, str):
        return PackagesReport(python=None, errors=(answer,))
    return report_from_child(answer)


def _parse_answer(stdout: str, stderr: str, returncode: int, python: str) -> dict[str, Any] | str:
    """The JSON after the child's marker line, or one error line (a crash, garbage, an old Python)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER) :])
            except json.JSONDecodeError as exc:
                return f"package probe: unreadable answer ({exc.msg})"
            if not isinstance(data, dict):
                return "package probe: unreadable answer (not an object)"
            return data
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    why = f"exit code {returncode}" + (f": {last}" if last else "")
    if "SyntaxError" in last:
        why += "; the probe needs Python 3.8 or newer"
    return f"package probe: {python} gave no answer ({why})"


def _missing_files(item: dict[str, Any]) -> MissingFiles | None:
    data = item.get("missing_files")
    if not data:
        return None
    return MissingFiles(int(data["count"]), int(data["listed"]), tuple(str(p) for p in data.get("sample") or ()))


def report_from_child(data: dict[str, Any]) -> PackagesReport:
    """Build the facts from the child's JSON."""
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
        nvidia_wheel(item["name"], item["version"], tuple(item.get("lib_dirs") or ()), _missing_files(item))
        for item in data.get("nvidia_wheels") or []
    )
    return PackagesReport(
        python=python,
        onnxruntime=onnxruntime,
        torch=torch,
        torch_requires=requires,
        nvidia_wheels=wheels,
        errors=tuple(f"package probe: {line}" for line in data.get("errors") or ()),
    )


def nvidia_wheel(
    name: str, version: str, lib_dirs: tuple[str, ...] = (), missing_files: MissingFiles | None = None
) -> NvidiaWheel:
    """An NvidiaWheel with the library it ships and the CUDA major it belongs to."""
    return NvidiaWheel(
        name=name,
        version=version,
        library=wheel_library(name),
        cuda_major=wheel_cuda_major(name, version, lib_dirs),
        lib_dirs=lib_dirs,
        missing_files=missing_files,
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
