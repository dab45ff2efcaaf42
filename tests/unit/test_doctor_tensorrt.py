"""TensorRT's doctor rules (provisioner/doctor/tensorrt.py), the loader hook's TensorRT folders and the verify
child's engine-cache check. The log texts are the ones their sources print: wheel-stub's ERROR.txt (0.5.0),
the deprecated placeholder's setup.py (nvidia-cuda-runtime-cu13 0.0.1), TensorRT's and ONNX Runtime's engine
messages, pycuda's and the driver API's words for a handle of another context."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from provisioner.doctor import diagnose
from provisioner.doctor.fixes import Fixes
from provisioner.doctor.rules import analyze_log
from provisioner.doctor.tensorrt import log_findings
from provisioner.installer import hook_files as loader_hook
from provisioner.matrix.load import load_matrix
from provisioner.standalone import loader_hook as hook
from provisioner.standalone import verify_session, verify_tensorrt
from provisioner.verify.report import Failure, InstalledOrt, OrtImport, VerifyReport

if TYPE_CHECKING:
    from pathlib import Path

MATRIX = load_matrix(use_cache=False)

STUB_FAILED = """\
  Building wheel for tensorrt-cu13-libs (pyproject.toml): finished with status 'error'
  error: subprocess-exited-with-error
      wheel_stub.error.InstallFailedError:
      *******************************************************************************

      The installation of tensorrt-cu13-libs for version 10.16.1.11 failed.

      This is a special placeholder package which downloads a real wheel package
      from https://pypi.nvidia.com/. If https://pypi.nvidia.com/ is not reachable, we
      cannot download the real wheel file to install.
"""

DEPRECATED = """\
Collecting tensorrt-cu13-libs==10.13.2.6
Collecting nvidia-cuda-runtime-cu13 (from tensorrt-cu13-libs==10.13.2.6)
  Building wheel for nvidia-cuda-runtime-cu13 (setup.py): finished with status 'error'
      ⚠️ THIS PROJECT 'nvidia-cuda-runtime-cu13' IS DEPRECATED.
      Please use 'nvidia-cuda-runtime' instead.
"""


def codes(text: str) -> list[str]:
    return [f.code for f in analyze_log(text, matrix=MATRIX)]


def test_the_stubs_placeholder_error_names_the_package_and_the_index() -> None:
    (finding,) = [f for f in analyze_log(STUB_FAILED, matrix=MATRIX) if f.code == "tensorrt-install-failed"]
    assert "tensorrt-cu13-libs on PyPI is NVIDIA's placeholder" in finding.title
    assert "https://pypi.nvidia.com/" in finding.title
    assert "--tensorrt-index-url" in finding.fix and "--wheelhouse" in finding.fix and "system|DIR" in finding.fix


def test_a_deprecated_placeholder_requirement() -> None:
    (finding,) = [f for f in analyze_log(DEPRECATED, matrix=MATRIX) if f.code == "tensorrt-install-failed"]
    assert "nvidia-cuda-runtime-cu13, a deprecated placeholder" in finding.title
    assert codes("THIS PROJECT 'nvidia-cuda-runtime-cu13' IS DEPRECATED.") == []  # not about TensorRT


def test_tensorrt_11_beside_a_provider_linking_so_10() -> None:
    log = (
        "tensorrt-cu13-libs     11.4.0.106\n"
        "EP Error: libnvinfer.so.10: cannot open shared object file: No such file or directory\n"
    )
    assert "tensorrt-major-mismatch" in codes(log)
    assert "tensorrt-major-mismatch" not in codes(log.replace("11.4.0.106", "10.16.1.11"))


def test_stale_engines_from_another_tensorrt_or_gpu() -> None:
    for line in (
        "[TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting compute 8.6 got "
        "compute 9.0, please rebuild.",
        "[TRT] [E] The engine plan file is not compatible with this version of TensorRT, expecting library "
        "version 10.16.1.11 got 10.9.0.34, please rebuild.",
        "Error Code 1: Serialization (Serialization assertion stdVersionRead == serializationVersion failed."
        "Version tag does not match.)",
        "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : TensorRT EP could not "
        "deserialize engine from cache: /cache/TensorrtExecutionProvider_TRTKernel_graph_main_1_0_sm90.engine",
    ):
        assert codes(line)[:1] == ["tensorrt-engine-cache-stale"], line


def test_the_context_clash_in_the_driver_apis_and_pycudas_words() -> None:
    for line in (
        "  own work after onnxruntime, same thread, no push: cuLaunchKernel failed: CUDA_ERROR_INVALID_HANDLE "
        "(invalid resource handle)",
        "pycuda._driver.LogicError: cuLaunchKernel failed: invalid resource handle",
        "pycuda._driver.LogicError: explicit_context_dependent failed: invalid device context - no currently "
        "active context?",
        "[TRT] [E] 1: [checkMacros.cpp::catchCudaError::272] Error Code 1: Cuda Runtime (invalid resource handle)",
    ):
        findings = analyze_log(line, matrix=MATRIX)
        assert findings and findings[0].code == "cuda-context-conflict", line
        fix = findings[0].fix
        assert "pycuda.autoprimaryctx" in fix and "retain_primary_context()" in fix
        assert "Not `make_context()` with push/pop" in fix


def test_no_tensorrt_finding_on_a_clean_log() -> None:
    assert log_findings("everything ran on CUDAExecutionProvider\n", Fixes(), MATRIX) == []


def test_report_rules_mismatch_fallback_and_cache_miss() -> None:
    report = VerifyReport(
        ok=False,
        status="failed",
        mode="session",
        provider="tensorrt",
        python="python",
        failures=(
            Failure("tensorrt-fallback", "asked for TensorrtExecutionProvider first but ..."),
            Failure("engine-cache-miss", "a second session ... built its engine again"),
        ),
        ort=OrtImport(version="1.31.1", related_dists=(InstalledOrt("tensorrt-cu13-libs", "11.4.0.106"),)),
    )
    found = {f.code: f for f in diagnose(None, report, matrix=MATRIX)}
    assert "libnvinfer.so.10" in found["tensorrt-major-mismatch"].title
    assert "tensorrt-missing" in found and "tensorrt-engine-cache-stale" in found


def test_the_hook_indexes_tensorrt_folders_from_the_matrix_and_a_given_folder(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for folder, name in (("tensorrt_libs", "libnvinfer.so.10"), ("tensorrt", "libnvinfer.so.8")):
        (site / folder).mkdir(parents=True)
        (site / folder / name).write_bytes(b"")
    outside = tmp_path / "TensorRT-10" / "lib"
    outside.mkdir(parents=True)
    (outside / "libnvonnxparser.so.10").write_bytes(b"")
    index = hook.wheel_libraries([str(site)], ["tensorrt", "tensorrt_libs"], [str(outside)])
    assert index["libnvinfer.so.10"] == os.path.join(site, "tensorrt_libs", "libnvinfer.so.10")
    assert index["libnvinfer.so.8"] == os.path.join(site, "tensorrt", "libnvinfer.so.8")
    assert index["libnvonnxparser.so.10"] == os.path.join(outside, "libnvonnxparser.so.10")
    assert "libnvinfer.so.8" not in hook.wheel_libraries([str(site)])  # older hook.json: tensorrt_libs only


def test_hook_json_carries_the_tensorrt_tables() -> None:
    from provisioner.matrix.query import sonames_by_cuda_major, tensorrt_library_dirs, tensorrt_opened_later

    files = loader_hook.hook_files(
        sonames_by_cuda_major(MATRIX), tensorrt_library_dirs(MATRIX), ["/opt/trt/lib"], tensorrt_opened_later(MATRIX)
    )
    table = json.loads(files["_ortprov_loader/hook.json"])
    assert table["tensorrt_library_dirs"] == ["tensorrt", "tensorrt_libs"]
    assert table["tensorrt_folders"] == ["/opt/trt/lib"]
    assert "libnvinfer_plugin.so.10" in table["tensorrt_opened_later"]


def test_verify_asks_tensorrt_for_an_engine_cache_and_reads_what_it_wrote(tmp_path: Path) -> None:
    providers = verify_session.gpu_provider_list("tensorrt", 0, True, str(tmp_path))
    name, options = providers[0]
    assert name == "TensorrtExecutionProvider"
    assert options["trt_engine_cache_enable"] == "True" and options["trt_engine_cache_path"] == str(tmp_path)
    assert verify_tensorrt.cache_files(str(tmp_path)) == {}
    (tmp_path / "model_sm90.engine").write_bytes(b"plan")
    assert list(verify_tensorrt.cache_files(str(tmp_path))) == ["model_sm90.engine"]
