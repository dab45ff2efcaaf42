"""run_verify and `ortprov verify` for real: the CPU onnxruntime of the dev environment, fake onnxruntime-gpu
packages in real venvs (fallback, hang, crash, preload), and --static against ELF libraries built here with gcc."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from provisioner.errors import BadInput
from provisioner.installer import hook_files as loader_hook
from provisioner.matrix.load import load_matrix
from provisioner.matrix.query import sonames_by_cuda_major
from provisioner.standalone.elf import read_dynamic_file
from provisioner.standalone.verify_child import classify_source
from provisioner.verify import VerifyReport, run_verify
from tests.support.cli import cli_env, ortprov_argv, run_ortprov
from tests.support.elf import build_so
from tests.support.envs import DEV_PYTHON, REPO
from tests.support.fake_ort import make_fake_venv, site_packages

if TYPE_CHECKING:
    from pathlib import Path

CHECK_MODEL = REPO / "provisioner" / "verify" / "models" / "check.onnx"


@pytest.fixture(scope="module")
def fake_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(make_fake_venv(tmp_path_factory.mktemp("fake") / "venv"))


# --- the real CPU onnxruntime: the silent-fallback case fails loudly ----------------------------------------


def test_cpu_onnxruntime_fails_with_cpu_package_only():
    report = run_verify(DEV_PYTHON, timeout=60)
    assert not report.ok and report.status == "failed"
    assert report.failure_kinds[0] == "cpu-package-only"
    # the session fell back to the CPU; on a machine without an NVIDIA driver, that is the reason given
    assert ("no-driver" if _no_driver_here() else "cpu-fallback") in report.failure_kinds
    assert report.ort is not None and report.ort.device == "CPU"
    assert report.ort.build_package_name == "onnxruntime"
    check = report.main_check
    assert check is not None and check.providers_session == ("CPUExecutionProvider",) and not check.gpu_first
    assert check.cpu is not None and check.cpu.runs >= 3 and check.cpu.median_run_ms > 0
    assert report.stage == "done"
    assert any("not in available provider names" in m for m in report.ort_messages)
    assert VerifyReport.from_json(report.to_json()) == report


def test_cli_verify_on_cpu_onnxruntime_exits_1_and_names_the_code():
    result = run_ortprov("verify", "--python", DEV_PYTHON)
    assert result.returncode == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith("FAIL: ") and "CUDAExecutionProvider" in first
    assert "[cpu-package-only]" in result.stdout
    assert "NOT the GPU" in result.stdout


def test_cli_verify_json_is_only_json():
    result = run_ortprov("verify", "--python", DEV_PYTHON, "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False and data["failures"][0]["kind"] == "cpu-package-only"
    assert VerifyReport.from_dict(data).python == DEV_PYTHON


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dim", "batch"], "is not NAME=N"),
        (["--model", "/nonexistent.onnx"], "does not exist"),
        (["--provider", "rocm"], "is not cuda, tensorrt, tensorrt-rtx"),
        (["--python", "/nonexistent/python"], "does not exist"),
        (["--timeout", "0"], "must be positive"),
        (["--static", "--model", str(CHECK_MODEL)], "do not go together"),
        (["--dim", "batch=1"], "sizes the inputs of --model"),
    ],
)
def test_cli_verify_bad_input_exits_2(args: list[str], message: str):
    result = run_ortprov("verify", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_run_verify_rejects_an_interpreter_that_is_not_one():
    """The runner checks what it runs in; the provider, the model, --dim and --timeout are checked once, by
    their declarations (commands/options.py: the CLI cases above)."""
    with pytest.raises(BadInput):
        run_verify("/nonexistent/python")


# --- fake onnxruntime-gpu in a real venv --------------------------------------------------------------------


def test_fake_gpu_that_works_passes(fake_python: str):
    report = run_verify(fake_python, env={"FAKE_ORT_MODE": "pass"}, timeout=60)
    assert report.ok and report.status == "passed", report.failures
    assert [c.model for c in report.checks] == ["builtin:check", "builtin:fft"]
    assert all(c.gpu_first for c in report.checks)
    assert report.checks[0].comparison is not None and report.checks[0].comparison.agrees
    assert report.checks[0].tf32 == "disabled (use_tf32=0)"
    assert report.checks[1].comparison is not None and report.checks[1].comparison.detail == "against numpy.fft.rfft"
    assert report.ort is not None and report.ort.build_cuda_version == "13.0"
    assert report.preload is not None and report.preload.available and not report.preload.called


@pytest.fixture(scope="module")
def driver_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A stand-in for the NVIDIA driver's libcuda.so.1 on LD_LIBRARY_PATH: the child only dlopen()s it."""
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    folder = tmp_path_factory.mktemp("driver")
    build_so(folder, "libcuda.so.1")
    return {"LD_LIBRARY_PATH": str(folder)}


def test_silent_cpu_fallback_fails(fake_python: str, driver_env: dict[str, str]):
    report = run_verify(fake_python, env={"FAKE_ORT_MODE": "fallback", **driver_env}, timeout=60)
    assert not report.ok
    assert report.failure_kinds == ("cpu-fallback",)
    assert report.main_check is not None and report.main_check.providers_session == ("CPUExecutionProvider",)


def test_cpu_fallback_without_a_driver_says_no_driver(fake_python: str, tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"FAKE_ORT_MODE": "fallback", "LD_LIBRARY_PATH": str(empty)}
    report = run_verify(fake_python, env=env, timeout=60)
    if not _no_driver_here():
        pytest.skip("this machine has an NVIDIA driver")
    assert not report.ok and report.failure_kinds == ("no-driver",)
    assert "libcuda.so.1 cannot be loaded" in report.failures[0].message


def test_cli_verify_exit_0_on_a_working_gpu(fake_python: str):
    result = run_ortprov("verify", "--python", fake_python, env=cli_env(FAKE_ORT_MODE="pass"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("PASS: CUDAExecutionProvider ran the checks")


def test_working_only_after_preload_is_a_failure(fake_python: str, driver_env: dict[str, str]):
    """The verdict is what a plain program gets: CPU fallback. The retry with preload_dlls() only explains."""
    report = run_verify(fake_python, env={"FAKE_ORT_MODE": "needs-preload", **driver_env}, timeout=60)
    assert not report.ok and report.preload_required
    assert report.failure_kinds == ("cpu-fallback", "library-not-on-path")
    assert report.preload is not None and not report.preload.called  # the report is the plain run's
    assert len(report.attempts) == 2 and "plain" in report.attempts[0] and "failed" in report.attempts[0]
    assert "passed" in report.attempts[1]
    assert any("libcudnn.so.9" in m for m in report.ort_messages)
    result = run_ortprov("verify", "--python", fake_python, env=cli_env(FAKE_ORT_MODE="needs-preload", **driver_env))
    assert result.returncode == 1 and "library-not-on-path" in result.stdout


def test_code_that_calls_preload_dlls_is_verified_with_it(fake_python: str, driver_env: dict[str, str]):
    report = run_verify(fake_python, env={"FAKE_ORT_MODE": "needs-preload", **driver_env}, timeout=60, preload=True)
    assert report.ok and not report.attempts and not report.preload_required
    assert report.preload is not None and report.preload.requested and report.preload.called
    result = run_ortprov(
        "verify", "--preload", "--python", fake_python, env=cli_env(FAKE_ORT_MODE="needs-preload", **driver_env)
    )
    assert result.returncode == 0, result.stdout


def test_hang_becomes_a_timeout_report(fake_python: str):
    started = time.monotonic()
    report = run_verify(fake_python, env={"FAKE_ORT_MODE": "hang"}, timeout=4)
    assert time.monotonic() - started < 15
    assert report.status == "timeout" and not report.ok
    assert report.failure_kinds == ("timeout",)
    assert report.stage == "session:builtin:check"


def test_crash_becomes_a_report_with_the_signal(fake_python: str):
    report = run_verify(fake_python, env={"FAKE_ORT_MODE": "abort"}, timeout=60)
    assert report.status == "crashed" and not report.ok
    assert report.signal == "SIGABRT"
    assert report.stage == "session:builtin:check"
    assert "fake: CUDA library crashed" in report.stderr
    assert VerifyReport.from_json(report.to_json()) == report


def test_user_model_with_dims(fake_python: str, tmp_path: Path):
    model = tmp_path / "user.onnx"
    model.write_bytes(b"fake model: the fake onnxruntime reads only the file name")
    report = run_verify(fake_python, env={"FAKE_ORT_MODE": "pass"}, model=str(model), dims={"batch": 2, "seq": 7})
    assert report.ok, report.failures
    assert [c.model for c in report.checks] == ["model"]
    assert [tuple(s.shape) for s in report.inputs["model"]] == [(2, 7), (2, 7)]
    unsized = run_verify(fake_python, env={"FAKE_ORT_MODE": "pass"}, model=str(model), dims={"batch": 2})
    assert any("'seq' not sized by --dim" in w for w in unsized.warnings)


def test_cpu_and_gpu_packages_together_fail(tmp_path: Path):
    python = str(make_fake_venv(tmp_path / "both", with_cpu_dist=True))
    report = run_verify(python, env={"FAKE_ORT_MODE": "pass"}, timeout=60)
    assert "cpu-and-gpu-installed" in report.failure_kinds and not report.ok


# --- --static: ELF libraries built with gcc -----------------------------------------------------------------

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@needs_gcc
def test_elf_reader_reads_needed_and_runpath(tmp_path: Path):
    stubs = tmp_path / "stubs"
    for name in ("libcudart.so.13", "libcublas.so.13"):
        build_so(stubs, name)
    lib = build_so(tmp_path, "libprov.so", ["libcudart.so.13", "libcublas.so.13"], [stubs], "$ORIGIN/../x")
    info = read_dynamic_file(str(lib))
    assert info.needed[:2] == ["libcudart.so.13", "libcublas.so.13"]
    assert info.runpath == ["$ORIGIN/../x"] and info.rpath == []
    with pytest.raises(ValueError):
        read_dynamic_file(__file__)


def static_venv(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A fake onnxruntime-gpu venv whose provider library is a real ELF file linking stub CUDA libraries.

    libcudart: only in the pip wheel folder (found by preload_dlls); libcublas: on LD_LIBRARY_PATH;
    libcurand: in the (fake) ld.so cache; libcuda.so.1: nowhere (no driver); lazy libcufft: pip folder only;
    lazy libcudnn.so.9: nowhere. Returns (python, site-packages, env for the child).
    """
    stubs = tmp_path / "stubs"
    needed = ["libcudart.so.13", "libcublas.so.13", "libcurand.so.10", "libcuda.so.1"]
    for name in needed:
        build_so(stubs, name)
    provider = build_so(tmp_path / "built", "libonnxruntime_providers_cuda.so", needed, [stubs])
    python = make_fake_venv(tmp_path / "venv", provider_library=provider.read_bytes())
    site = site_packages(python)
    (site / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    shutil.copy(stubs / "libcudart.so.13", site / "nvidia" / "cu13" / "lib")
    build_so(site / "nvidia" / "cu13" / "lib", "libcufft.so.12")
    on_path = tmp_path / "ld_path"
    on_path.mkdir()
    shutil.copy(stubs / "libcublas.so.13", on_path)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    shutil.copy(stubs / "libcurand.so.10", cache_dir)
    ldconfig = tmp_path / "ldconfig.txt"
    ldconfig.write_text(f"3 libs found in cache\n\tlibcurand.so.10 (libc6,x86-64) => {cache_dir}/libcurand.so.10\n")
    env = {
        "ORTPROV_VERIFY_LDCONFIG": str(ldconfig),
        "ORTPROV_VERIFY_DEFAULT_DIRS": "",
        "LD_LIBRARY_PATH": str(on_path),
    }
    return python, site, env


@needs_gcc
def test_static_resolves_like_the_loader(tmp_path: Path):
    python, site, env = static_venv(tmp_path)
    report = run_verify(str(python), static=True, env=env, timeout=60)
    assert report.static is not None
    status = {r.soname: (r.status, r.via, r.needed) for r in report.static.libraries}
    assert status["libcudart.so.13"] == ("preload-only", None, "linked")
    assert status["libcublas.so.13"] == ("ok", "ld_library_path", "linked")
    assert status["libcurand.so.10"] == ("ok", "ldconfig", "linked")
    assert status["libcuda.so.1"] == ("driver-missing", None, "linked")
    assert status["libcudnn.so.9"] == ("missing", None, "lazy")
    assert status["libcufft.so.12"] == ("preload-only", None, "lazy")
    assert "libc.so.6" not in status
    # found only in site-packages/nvidia: a plain program's loader does not look there
    assert [(f.kind, f.library) for f in report.failures] == [
        ("library-not-on-path", "cudart"),
        ("library-not-on-path", "cufft"),
        ("library-missing", "cudnn"),
    ]

    # an empty file (what a /dev/null mask looks like) is not a library
    masked = tmp_path / "ld_path" / "libcudnn.so.9"
    masked.write_bytes(b"")
    masked_report = run_verify(str(python), static=True, env=env, timeout=60)
    assert masked_report.static is not None
    assert {r.soname: r.status for r in masked_report.static.libraries}["libcudnn.so.9"] == "missing"
    masked.unlink()

    # cuDNN installed as a pip wheel: it resolves only for preload_dlls(), like libcudart and libcufft ...
    (site / "nvidia" / "cudnn" / "lib").mkdir(parents=True)
    build_so(site / "nvidia" / "cudnn" / "lib", "libcudnn.so.9")
    report = run_verify(str(python), static=True, env=env, timeout=60)
    assert set(report.failure_kinds) == {"library-not-on-path"}
    # ... until the loader hook is installed: a plain program then gets every library (libcuda.so.1 is
    # expected missing without a driver)
    loader_hook.write(str(site), loader_hook.hook_files(sonames_by_cuda_major(load_matrix())))
    report = run_verify(str(python), static=True, env=env, timeout=60)
    assert report.ok, report.failures
    assert report.static is not None and report.loader_hook is not None and report.loader_hook.state == "loaded"
    status = {r.soname: (r.status, r.via) for r in report.static.libraries}
    assert status["libcudart.so.13"] == ("ok", "loaded") and status["libcudnn.so.9"] == ("ok", "loaded")
    assert status["libcublas.so.13"] == ("ok", "ld_library_path")  # not in a wheel: the loader's own search
    result = run_ortprov("verify", "--static", "--python", str(python), env=cli_env(**env))
    assert result.returncode == 0, result.stdout
    assert "libcuda.so.1" in result.stdout and "driver-missing" in result.stdout


@needs_gcc
def test_hide_cudnn_script_hides_cudnn_in_a_mount_namespace(tmp_path: Path):
    """tests/gpu/hide_cudnn.sh (used on the GPU host) really hides cuDNN from the child, and only there."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare")
    python, site, env = static_venv(tmp_path)
    cudnn_dir = site / "nvidia" / "cudnn" / "lib"
    cudnn_dir.mkdir(parents=True)
    build_so(cudnn_dir, "libcudnn.so.9")
    shared = tmp_path / "ld_path"  # a folder with other libraries too: hidden through an overlay
    build_so(shared, "libcudnn_ops.so.9")
    script = REPO / "tests" / "gpu" / "hide_cudnn.sh"
    argv = [str(script), *ortprov_argv("verify", "--static", "--json", "--python", str(python))]
    full_env = {**os.environ, **env, "HIDE_CUDNN_ROOTS": str(tmp_path)}
    hidden = subprocess.run(argv, capture_output=True, text=True, env=full_env, cwd=REPO, timeout=120)
    if hidden.returncode not in (0, 1):
        pytest.skip(f"mount namespace not available here: {hidden.stderr.strip()[-200:]}")
    data = json.loads(hidden.stdout)
    status = {r["soname"]: r["status"] for r in data["static"]["libraries"]}
    assert status["libcudnn.so.9"] == "missing"
    assert (cudnn_dir / "libcudnn.so.9").is_file() and (shared / "libcudnn_ops.so.9").is_file()
    assert (shared / "libcublas.so.13").is_file()
    unhidden = run_verify(str(python), static=True, env=env, timeout=60)
    assert unhidden.static is not None
    assert {r.soname: r.status for r in unhidden.static.libraries}["libcudnn.so.9"] == "preload-only"


def test_static_without_the_provider_library_is_cpu_package_only(tmp_path: Path):
    python = make_fake_venv(tmp_path / "venv", provider_library=None)
    report = run_verify(str(python), static=True, timeout=60)
    assert not report.ok and report.failure_kinds[0] == "cpu-package-only"


# --- pure helpers of the child ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("/v/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13", "pip"),
        ("/v/lib/python3.12/site-packages/torch/lib/libcudnn.so.9", "torch"),
        ("/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13", "cuda_toolkit"),
        ("/lib/x86_64-linux-gnu/libcudnn.so.9", "system"),
        ("/usr/local/nvidia/lib64/libcuda.so.1", "driver"),
        (
            "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin\\cublas64_12.dll",
            "cuda_toolkit",
        ),
    ],
)
def test_classify_source(path: str, source: str):
    assert classify_source(path) == source


def test_child_runs_on_the_oldest_supported_python_syntax():
    """The child must parse on Python 3.8: compile it with feature_version=(3, 8)."""
    import ast

    source = (REPO / "provisioner" / "standalone" / "verify_child.py").read_text(encoding="utf-8")
    ast.parse(source, feature_version=(3, 8))
    assert sys.version_info >= (3, 8)


def test_a_child_that_dies_without_a_report_is_an_error_report(tmp_path: Path):
    """An interpreter that cannot run the child (too old, broken) gives status 'error' with its last words."""
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'SyntaxError: invalid syntax' >&2\nexit 3\n")
    broken.chmod(0o755)
    report = run_verify(str(broken), timeout=30)
    assert report.status == "error" and not report.ok
    assert report.exit_code == 3
    assert report.failure_kinds == ("child-error",)
    assert "SyntaxError: invalid syntax" in report.failures[0].message


def test_cli_shows_the_signal_and_stage_of_a_crash(fake_python: str):
    result = run_ortprov("verify", "--python", fake_python, env=cli_env(FAKE_ORT_MODE="abort"))
    assert result.returncode == 1
    assert result.stdout.startswith("FAIL: the verify child was killed by SIGABRT")
    assert "SIGABRT at stage session:builtin:check" in result.stdout
    assert "[verify-crashed]" in result.stdout


def test_user_model_with_dynamic_dims_on_the_real_cpu_onnxruntime(tmp_path: Path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"])],
        "dyn",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["batch", "seq", 8]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [8, 4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "dyn.onnx"
    onnx.save(model, str(path))
    report = run_verify(DEV_PYTHON, model=str(path), dims={"batch": 3, "seq": 5}, timeout=60)
    assert [c.model for c in report.checks] == ["model"]
    assert [tuple(s.shape) for s in report.inputs["model"]] == [(3, 5, 8), (8, 4)]
    check = report.checks[0]
    assert check.comparison is not None and check.comparison.agrees
    # the CPU package: the session did not run on the GPU (and says why when there is no driver)
    assert ("no-driver" if _no_driver_here() else "cpu-fallback") in report.failure_kinds
    result = run_ortprov("verify", "--python", DEV_PYTHON, "--model", str(path), "--dim", "batch=3", "--dim", "seq=5")
    assert result.returncode == 1 and "model" in result.stdout


def test_child_records_packages_that_drive_cuda_themselves(tmp_path: Path):
    python = make_fake_venv(tmp_path / "venv")
    info = site_packages(python) / "pycuda-2024.1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pycuda\nVersion: 2024.1.2\n")
    report = run_verify(str(python), env={"FAKE_ORT_MODE": "pass"}, timeout=60)
    assert report.ort is not None
    assert [(d.name, d.version) for d in report.ort.related_dists] == [("pycuda", "2024.1.2")]
    from provisioner.doctor import diagnose

    found = [(f.code, f.severity) for f in diagnose(None, report)]
    assert ("cuda-context-conflict", "info") in found  # (the fake's timings may add gpu-slower-than-cpu)


def test_target_without_numpy_fails_with_an_exact_fix(tmp_path: Path):
    python = make_fake_venv(tmp_path / "venv")
    for name in ("numpy", "numpy.libs"):
        link = site_packages(python) / name
        if link.is_symlink():
            link.unlink()
    report = run_verify(str(python), env={"FAKE_ORT_MODE": "pass"}, timeout=60)
    assert not report.ok
    from provisioner.doctor import diagnose

    findings = diagnose(None, report)
    assert findings[0].fix.endswith("-m pip install numpy")


def test_a_gpu_slower_than_the_cpu_passes_with_a_warning(fake_python: str):
    report = run_verify(fake_python, env={"FAKE_ORT_MODE": "slow-gpu"}, timeout=60)
    assert report.ok
    from provisioner.doctor import diagnose, is_healthy

    findings = diagnose(None, report)
    assert [f.code for f in findings if f.code == "gpu-slower-than-cpu"] == ["gpu-slower-than-cpu"]
    assert is_healthy(findings)


def _no_driver_here() -> bool:
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return True
    return False
