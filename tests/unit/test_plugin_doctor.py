"""doctor on what a plugin EP's verify shows (the core older than the EP's minimum, onnxruntime-gpu beside it, a
bundled library the loader cannot find) and on one CUDA library mapped twice into one process (two real ELF files of
one soname, loaded by a real interpreter: as torch's cuDNN and a pip wheel's are)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from provisioner.doctor.fixes import Fixes
from provisioner.doctor.host import _from_failure, library_twice
from provisioner.verify.report import Failure, LoadedLibrary, OrtImport, PluginCheck, VerifyReport
from provisioner.verify.runner import plugin_core_check
from tests.support.elf import build_so

FIXES = Fixes(python="/srv/venv/bin/python")
MODULE = "onnxruntime_ep_nv_tensorrt_rtx"


def report(core: str, ep: str = "0.5.0", failures: tuple[Failure, ...] = ()) -> VerifyReport:
    return VerifyReport(
        ok=not failures,
        status="passed" if not failures else "failed",
        mode="static",
        provider="tensorrt-rtx",
        python="/srv/venv/bin/python",
        failures=failures,
        ort=OrtImport(version=core),
        plugin=PluginCheck(module=MODULE, version=ep, ep_name="NvTensorRTRTXExecutionProvider"),
    )


def test_a_core_older_than_the_eps_minimum_fails_and_names_both_versions() -> None:
    judged = plugin_core_check(report("1.23.2"))
    assert not judged.ok and judged.failure_kinds == ("plugin-core-too-old",)
    assert ">= 1.24" in judged.failures[0].message and "1.23.2 is installed" in judged.failures[0].message
    assert plugin_core_check(report("1.32.0")).ok
    assert plugin_core_check(report("1.23.2", ep="9.9.9")).ok  # an EP release the matrix does not know: not judged


@pytest.mark.parametrize(
    ("kind", "code", "fix"),
    [
        ("plugin-core-too-old", "plugin-core-too-old", "--provider tensorrt-rtx"),
        ("plugin-beside-gpu-core", "plugin-beside-gpu-core", "reinstalls the CPU onnxruntime core"),
        ("library-missing", "plugin-library-missing", "loader hook loads the libraries"),
        ("plugin-no-device", "plugin-no-device", "/sys/class/drm"),
    ],
)
def test_a_plugin_eps_failures_get_its_own_codes_and_fixes(kind: str, code: str, fix: str) -> None:
    failure = Failure(kind, "what the child saw", library="cudart" if kind == "library-missing" else None)
    (finding,) = _from_failure(failure, report("1.32.0", failures=(failure,)), FIXES)
    assert finding.code == code and fix in finding.fix
    assert "pip install onnxruntime-gpu" not in finding.fix  # never the GPU package beside a plugin EP


@pytest.mark.skipif(shutil.which("gcc") is None or not sys.platform.startswith("linux"), reason="gcc, Linux")
def test_one_library_loaded_twice_from_two_places_is_said(tmp_path: Path) -> None:
    first = build_so(tmp_path / "torch" / "lib", "libcudnn.so.9")
    second = build_so(tmp_path / "site" / "nvidia" / "cudnn" / "lib", "libcudnn.so.9")
    code = (
        "import ctypes, json, sys; sys.path.insert(0, sys.argv[3]);"
        "from provisioner.standalone import verify_libraries as v;"
        "ctypes.CDLL(sys.argv[1]); ctypes.CDLL(sys.argv[2]); print(json.dumps(v.loaded_libraries()))"
    )
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-c", code, str(first), str(second), root], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    loaded = tuple(LoadedLibrary(**entry) for entry in json.loads(done.stdout))
    assert len([lib for lib in loaded if lib.filename == "libcudnn.so.9"]) == 2  # the loader kept both
    (finding,) = library_twice(
        VerifyReport(True, "passed", "session", "cuda", "python", loaded_libraries=loaded), FIXES
    )
    assert finding.code == "cuda-library-twice" and finding.library == "cudnn"
    assert {Path(line.split(" (")[0]) for line in finding.evidence} == {first, second}
    one = tuple(lib for lib in loaded if lib.path != str(second))
    assert library_twice(VerifyReport(True, "passed", "session", "cuda", "python", loaded_libraries=one), FIXES) == []


def test_a_plugin_eps_load_error_in_a_log_is_the_plugins() -> None:
    """The line the H100 printed (docs/gpu/h100-plugin-ep.txt, the CUDA toolkit hidden): the plugin's library could
    not be loaded, not onnxruntime-gpu's CUDA library missing, nor TensorRT ("tensorrt" is in the EP's name)."""
    from provisioner.doctor.rules import analyze_log

    line = (
        "Fail: [ONNXRuntimeError] : 1 : FAIL : Failed to load library /root/epsite/onnxruntime_ep_nv_tensorrt_rtx/"
        "libonnxruntime_providers_nv_tensorrt_rtx.so with error: libcudart.so.13: cannot open shared object file: "
        "No such file or directory"
    )
    findings = analyze_log(line)
    assert [f.code for f in findings] == ["plugin-library-missing"]
    assert "libcudart.so.13" in findings[0].title and "--provider tensorrt-rtx" in findings[0].fix
    cuda = analyze_log(line.replace("onnxruntime_ep_nv_tensorrt_rtx/libonnxruntime_providers_nv_tensorrt_rtx", "x"))
    assert cuda[0].code == "cuda-library-missing"  # the same error from another library stays what it was
