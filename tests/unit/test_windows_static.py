"""The Windows static check (standalone/verify_static_pe.py) on a Windows layout built from PE files, the DLL
names a Windows finding gives, and apply's echoed commands in PowerShell's quoting. The same code runs inside
the Windows CPython under wine in tests/windows/ (marked `windows`); here it runs on Linux over the same layout
(the loader's search order is the check's own code; only the already-loaded-modules lookup is Windows-only)."""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest

from provisioner.doctor import diagnose
from provisioner.facts import PlatformInfo
from provisioner.matrix.load import load_matrix
from provisioner.render.apply import shell_line
from provisioner.standalone import verify_static_pe
from provisioner.standalone.libnames import library_filename
from tests.support.binaries import pe_library
from tests.unit.test_doctor import ALL_LIBS, host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

LAZY = {"13": ["libcudnn.so.9", "libcufft.so.12"]}


def dll(folder: Path, name: str, imports: list[str] = (), delayed: list[str] = ()) -> Path:  # type: ignore[assignment]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(pe_library(list(imports), list(delayed), b""))
    return path


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """site-packages as the Windows wheels lay it out (onnxruntime-gpu 1.31.1, CUDA 13), a Windows folder with
    the Visual C++ runtime's MSVCP140.dll only, and the loader hook's folders at the front of PATH."""
    site = tmp_path / "site-packages"
    capi = site / "onnxruntime" / "capi"
    cuda = site / "nvidia" / "cu13" / "bin" / "x86_64"
    cudnn = site / "nvidia" / "cudnn" / "bin"
    imports = ["cublasLt64_13.dll", "cublas64_13.dll", "onnxruntime_providers_shared.dll", "KERNEL32.dll"]
    dll(capi, "onnxruntime_providers_cuda.dll", [*imports, "MSVCP140.dll", "VCRUNTIME140_1.dll"])
    dll(capi, "onnxruntime_providers_shared.dll", ["KERNEL32.dll"])
    dll(cuda, "cublasLt64_13.dll", ["KERNEL32.dll"])
    dll(cuda, "cublas64_13.dll", ["cublasLt64_13.dll"])
    dll(cuda, "cufft64_12.dll")
    dll(cuda, "cufft64_11.dll")  # another CUDA major's cuFFT: not what this build opens
    dll(cuda, "nvblas64_13.dll")
    dll(cudnn, "cudnn64_9.dll")
    dll(cudnn, "cudnn_ops64_9.dll")
    windows = tmp_path / "Windows"
    dll(windows / "System32", "MSVCP140.dll")
    monkeypatch.setenv("SYSTEMROOT", str(windows))  # Windows reads it in any case
    monkeypatch.setenv("PATH", f"{cuda}:{cudnn}")
    monkeypatch.chdir(tmp_path)
    hook = types.ModuleType("_ortprov_loader")
    hook.STATUS = {"state": "loaded", "folders": [str(cuda), str(cudnn)]}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "_ortprov_loader", hook)
    return {"ort": str(site / "onnxruntime"), "cuda": cuda, "cudnn": cudnn}


def check(layout: dict) -> dict:
    result: dict = {"failures": [], "warnings": [], "ort": {"build_cuda_version": "13.0"}}
    verify_static_pe.static_check_windows("cuda", layout["ort"], result, LAZY)
    return result


def test_the_closure_is_found_through_the_hooks_folders_and_only_the_driver_and_the_runtime_are_missing(layout):
    result = check(layout)
    statuses = {e["soname"]: e["status"] for e in result["static"]["libraries"]}
    assert statuses["cublasLt64_13.dll"] == statuses["cublas64_13.dll"] == "ok"
    assert statuses["cudnn64_9.dll"] == statuses["cudnn_ops64_9.dll"] == statuses["cufft64_12.dll"] == "ok"
    assert "cufft64_11.dll" not in statuses and "nvblas64_13.dll" not in statuses  # not what a CUDA 13 build opens
    assert statuses["nvcuda.dll"] == "driver-missing"
    assert "KERNEL32.dll" not in statuses  # Windows' own
    # the Visual C++ runtime: MSVCP140.dll is in System32, VCRUNTIME140_1.dll nowhere
    assert statuses["MSVCP140.dll"] == "ok" and statuses["VCRUNTIME140_1.dll"] == "missing"
    assert [(f["kind"], f.get("library")) for f in result["failures"]] == [
        ("msvc-runtime-missing", "VCRUNTIME140_1.dll")
    ]


def test_without_the_hooks_folders_the_first_nvidia_dll_is_missing(layout, monkeypatch):
    monkeypatch.setenv("PATH", "")
    result = check(layout)
    missing = [e["soname"] for e in result["static"]["libraries"] if e["status"] == "missing"]
    assert missing[0] == "cublasLt64_13.dll"
    assert ("library-missing", "cublasLt") in [(f["kind"], f.get("library")) for f in result["failures"]]


def test_a_cudnn_removed_is_named_by_its_dll(layout):
    for path in layout["cudnn"].iterdir():
        path.unlink()
    result = check(layout)
    statuses = {e["soname"]: e["status"] for e in result["static"]["libraries"]}
    assert not any(name.startswith("cudnn") for name in statuses)  # nothing of cuDNN left to open
    windows_host = host(
        platform=PlatformInfo("windows", "amd64"), libraries=tuple(h for h in ALL_LIBS if h.library != "cudnn")
    )
    findings = diagnose(windows_host, matrix=load_matrix(use_cache=False))
    cudnn = next(f for f in findings if f.code == "cudnn-missing")
    assert "cudnn64_9.dll" in cudnn.title and "PATH" in cudnn.evidence[0] and "ld.so" not in cudnn.evidence[0]
    linux = next(f for f in diagnose(dataclasses.replace(windows_host, platform=host().platform)))
    assert "libcudnn.so.9" in linux.title


@pytest.mark.parametrize(
    ("family", "major", "windows", "name"),
    [
        ("cudnn", "9", True, "cudnn64_9.dll"),
        ("cudnn", "8", True, "cudnn64_8.dll"),
        ("cufft", "12", True, "cufft64_12.dll"),
        ("cudnn", "9", False, "libcudnn.so.9"),
        ("cudart", "12", False, "libcudart.so.12"),
        ("nvrtc", "13", True, None),  # nvrtc64_130_0.dll carries the minor too: not from the major alone
        ("zlibwapi", "1", False, None),
    ],
)
def test_library_filename(family, major, windows, name):
    assert library_filename(family, major, windows) == name


def test_apply_echoes_powershell_on_windows_and_posix_elsewhere():
    argv = ["C:\\Users\\Ann Lee\\venv\\Scripts\\python.exe", "-m", "pip", "install", "onnxruntime-gpu==1.31.1"]
    assert shell_line(argv, windows=True) == (
        "& 'C:\\Users\\Ann Lee\\venv\\Scripts\\python.exe' -m pip install onnxruntime-gpu==1.31.1"
    )
    assert shell_line(["/srv/a b/python", "-m", "pip"], windows=False) == "'/srv/a b/python' -m pip"
