"""verify and doctor on a real NVIDIA GPU (the H100 host), with onnxruntime-gpu installed in a venv.

    ORTPROV_GPU_PYTHON=/path/to/venv/bin/python \
        .venv/bin/python -m pytest -m gpu tests/gpu/test_verify_gpu.py -v -s

ORTPROV_GPU_PYTHON: an interpreter with onnxruntime-gpu (1.31.1 on the H100 host) and numpy.
ORTPROV_CPU_ORT_SITE: a site-packages holding the CPU `onnxruntime` package of the same Python version,
used to build the shadowed venv (default: /opt/torch/.venv/lib/python3.12/site-packages: onnxruntime 1.30.0).
The cuDNN test needs root (a private mount namespace, tests/gpu/hide_cudnn.sh).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from provisioner.verify import run_verify
from tests.support.cli import run_ortprov

pytestmark = pytest.mark.gpu
REPO = Path(__file__).resolve().parents[2]
GPU_PYTHON = os.environ.get("ORTPROV_GPU_PYTHON", "")
CPU_ORT_SITE = Path(os.environ.get("ORTPROV_CPU_ORT_SITE", "/opt/torch/.venv/lib/python3.12/site-packages"))

needs_gpu_python = pytest.mark.skipif(
    not GPU_PYTHON, reason="set ORTPROV_GPU_PYTHON to a python with onnxruntime-gpu installed"
)


def site_packages(python: str) -> Path:
    out = subprocess.run(
        [
            python,
            "-c",
            "import onnxruntime, os; print(os.path.dirname(os.path.dirname(onnxruntime.__file__)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return Path(out.strip())


@needs_gpu_python
def test_verify_passes_on_the_gpu():
    report = run_verify(GPU_PYTHON, timeout=300)
    assert report.ok, (report.failures, report.ort_messages)
    assert [c.model for c in report.checks] == ["builtin:check", "builtin:fft"]
    for check in report.checks:
        assert check.gpu_first and check.providers_session[0] == "CUDAExecutionProvider"
        assert check.comparison is not None and check.comparison.agrees
    main = report.checks[0]
    assert {"cudnn", "cublas", "cudart"} <= set(main.libraries_after), main.libraries_after
    assert "cufft" in report.checks[1].libraries_after
    assert main.gpu is not None and main.cpu is not None
    families = {lib.library for lib in report.loaded_libraries}
    assert {"cudnn", "cublas", "cublasLt", "cudart", "cufft", "curand", "cuda"} <= families
    assert all(lib.source != "other" for lib in report.loaded_libraries if lib.library != "cuda"), [
        (lib.path, lib.source) for lib in report.loaded_libraries
    ]
    print(f"\nverify took {report.duration_s} s; preload_required={report.preload_required}")
    print(f"GPU {main.gpu}\nCPU {main.cpu}\nagreement {main.comparison}")


@needs_gpu_python
def test_cli_verify_and_doctor_are_healthy():
    verify = run_ortprov("verify", "--python", GPU_PYTHON)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert verify.stdout.startswith("PASS: CUDAExecutionProvider")
    doctor = run_ortprov("doctor", "--python", GPU_PYTHON, "--json")
    data = json.loads(doctor.stdout)
    assert doctor.returncode == 0, [f["code"] for f in data["findings"]]
    assert data["verify"]["ok"] is True


@needs_gpu_python
def test_cpu_package_shadowing_the_gpu_one(tmp_path: Path):
    """pip installs the CPU wheel over onnxruntime-gpu: both dists, one onnxruntime/ folder with CPU files."""
    cpu_package = CPU_ORT_SITE / "onnxruntime"
    cpu_dists = sorted(CPU_ORT_SITE.glob("onnxruntime-*.dist-info"))
    if not cpu_package.is_dir() or not cpu_dists:
        pytest.skip(f"no CPU onnxruntime in {CPU_ORT_SITE} (set ORTPROV_CPU_ORT_SITE)")
    gpu_site = site_packages(GPU_PYTHON)
    venv = tmp_path / "shadowed"
    subprocess.run([GPU_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # the GPU install (package copied; dist-info, NVIDIA wheels, numpy linked), then the CPU wheel on top
    shutil.copytree(gpu_site / "onnxruntime", site / "onnxruntime", symlinks=True)
    for entry in gpu_site.iterdir():
        if entry.name.startswith(("onnxruntime_gpu-", "numpy", "nvidia")):
            os.symlink(entry, site / entry.name)
    shutil.copytree(cpu_package, site / "onnxruntime", symlinks=True, dirs_exist_ok=True)
    shutil.copytree(cpu_dists[0], site / cpu_dists[0].name)

    report = run_verify(python, timeout=300)
    assert not report.ok
    assert "cpu-and-gpu-installed" in report.failure_kinds
    assert "cpu-package-only" in report.failure_kinds
    doctor = run_ortprov("doctor", "--python", python, "--json")
    assert doctor.returncode == 1
    findings = json.loads(doctor.stdout)["findings"]
    codes = [f["code"] for f in findings]
    assert "cpu-and-gpu-installed" in codes, codes
    fix = next(f["fix"] for f in findings if f["code"] == "cpu-and-gpu-installed")
    assert "uninstall -y onnxruntime onnxruntime-gpu" in fix or "ortprov apply" in fix


@needs_gpu_python
def test_cudnn_hidden_from_the_loader():
    if os.geteuid() != 0:
        pytest.skip("hiding cuDNN needs root (unshare -m)")
    script = str(REPO / "tests" / "gpu" / "hide_cudnn.sh")
    doctor = run_ortprov("doctor", "--python", GPU_PYTHON, "--json", prefix=(script,))
    if doctor.returncode == 77:
        pytest.skip(doctor.stderr)
    assert doctor.returncode == 1, doctor.stderr
    data = json.loads(doctor.stdout)
    codes = [f["code"] for f in data["findings"]]
    assert "cudnn-missing" in codes, (codes, data["verify"]["ort_messages"], data["verify"]["failures"])
    assert data["verify"]["ok"] is False
    static = run_ortprov("verify", "--static", "--python", GPU_PYTHON, "--json", prefix=(script,))
    resolved = {r["soname"]: r["status"] for r in json.loads(static.stdout)["static"]["libraries"]}
    assert resolved.get("libcudnn.so.9") == "missing", resolved
