"""diagnose(): one test per finding code from host facts (built here and from tests/hosts), verify reports and
plan outcomes; ordering; fixes that are exact commands."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from provisioner import doctor
from provisioner.doctor import is_healthy
from provisioner.errors import NoCompatiblePlan
from provisioner.facts import (
    DriverInfo,
    Gpu,
    HostFacts,
    LibraryHit,
    MissingFiles,
    NvidiaWheel,
    OrtDist,
    PlatformInfo,
    PythonInfo,
    RuntimeEnvironment,
)
from provisioner.findings import CODES, Finding
from provisioner.matrix.load import load_matrix
from provisioner.plan import Plan, Rejection, Step
from provisioner.userfiles import read_host_file
from provisioner.verify.report import (
    Comparison,
    Failure,
    InstalledOrt,
    LoaderHookStatus,
    ModelCheck,
    OrtImport,
    ResolvedLibrary,
    StaticCheck,
    Timing,
    VerifyReport,
)


def diagnose(*args: object, **kwargs: object) -> list[Finding]:
    """doctor.diagnose with the shipped matrix, as `ortprov doctor` calls it."""
    kwargs.setdefault("matrix", load_matrix(use_cache=False))
    return doctor.diagnose(*args, **kwargs)  # type: ignore[arg-type]


HOSTS = Path(__file__).resolve().parents[1] / "hosts"
PY = "/srv/app/.venv/bin/python"
GPU_ORT = OrtDist(
    "onnxruntime-gpu", "1.31.1", cuda_version="13.0", cudnn_version="9", build_package_name="onnxruntime-gpu"
)


def lib(library: str, major: str | None, source: str = "ldconfig") -> LibraryHit:
    name = {"cudnn": f"libcudnn.so.{major}", "cuda": "libcuda.so.1"}.get(library, f"lib{library}.so.{major}")
    return LibraryHit(library, major, name, f"/usr/lib/x86_64-linux-gnu/{name}", source)


ALL_LIBS = (
    lib("cudnn", "9"),
    lib("cudart", "13"),
    lib("cublas", "13"),
    lib("cublasLt", "13"),
    lib("cufft", "12"),
    lib("curand", "10"),
    lib("nvrtc", "13"),
    lib("cuda", "1"),
)


def host(**changes: object) -> HostFacts:
    """A healthy H100 host with onnxruntime-gpu 1.31.1 and every library on the loader path."""
    base = HostFacts(
        platform=PlatformInfo("linux", "x86_64", glibc="2.36"),
        driver=DriverInfo(True, "580.159.04", "13.0", "nvml"),
        python=PythonInfo(PY, "3.12.3", abi="cp312", is_venv=True),
        gpus=(Gpu(0, "NVIDIA H100 80GB HBM3", "9.0", 81559),),
        onnxruntime=(GPU_ORT,),
        libraries=ALL_LIBS,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def report(ok: bool = True, **changes: object) -> VerifyReport:
    check = ModelCheck(
        "builtin:check",
        "check.onnx",
        ("CUDAExecutionProvider", "CPUExecutionProvider"),
        ("CUDAExecutionProvider", "CPUExecutionProvider"),
        True,
        "disabled (use_tf32=0)",
        Timing(0.4, 0.2, 1.7, 20),
        Timing(0.01, 0.01, 7.8, 20),
        Comparison(True, 1e-4, 0.01, 3e-6),
    )
    base = VerifyReport(
        ok=ok,
        status="passed" if ok else "failed",
        mode="session",
        provider="cuda",
        python=PY,
        checks=(check,),
        ort=OrtImport(version="1.31.1", build_package_name="onnxruntime-gpu"),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def codes(findings: list) -> list[str]:
    return [f.code for f in findings]


def test_healthy_host_with_passing_verify_has_no_findings():
    findings = diagnose(host(), report())
    assert findings == []
    assert is_healthy(findings)


def test_no_driver():
    findings = diagnose(host(driver=DriverInfo(False, source="none", error="NVML: library not found"), gpus=()))
    assert codes(findings)[0] == "no-driver"
    assert "NVML: library not found" in findings[0].evidence


def test_no_driver_in_a_container_is_gpu_hidden():
    facts = host(driver=DriverInfo(False), gpus=(), environment=RuntimeEnvironment(container="docker"))
    findings = diagnose(facts)
    assert codes(findings)[0] == "gpu-hidden"
    assert "--gpus all" in findings[0].fix


@pytest.mark.parametrize("value", ["", "-1", "none"])
def test_gpu_hidden_by_cuda_visible_devices(value: str):
    facts = host(
        environment=RuntimeEnvironment(cuda_visible_devices=value),
        gpus=(Gpu(0, "H100", "9.0", visible=False),),
    )
    findings = diagnose(facts)
    assert codes(findings) == ["gpu-hidden"]
    assert f"CUDA_VISIBLE_DEVICES={value!r}" in findings[0].evidence


def test_driver_library_mismatch():
    facts = host(driver=DriverInfo(False, error="NVML: Driver/library version mismatch"))
    assert codes(diagnose(facts))[0] == "driver-library-mismatch"


def test_driver_too_old_for_the_build():
    facts = host(driver=DriverInfo(True, "535.104.12", "12.2", "nvml"))
    findings = diagnose(facts)
    assert codes(findings)[0] == "driver-too-old"
    assert "CUDA 12.2" in findings[0].title and "13.0" in findings[0].title


def test_same_major_older_minor_is_not_too_old():
    facts = host(
        driver=DriverInfo(True, "580.0", "13.0", "nvml"),
        onnxruntime=(dataclasses.replace(GPU_ORT, cuda_version="13.1"),),
    )
    assert "driver-too-old" not in codes(diagnose(facts))


def test_cpu_package_only():
    facts = host(onnxruntime=(OrtDist("onnxruntime", "1.22.1", build_package_name="onnxruntime"),))
    findings = diagnose(facts)
    assert codes(findings) == ["cpu-package-only"]
    assert f"{PY} -m pip uninstall -y onnxruntime" in findings[0].fix


def test_cpu_and_gpu_installed():
    facts = host(onnxruntime=(OrtDist("onnxruntime", "1.22.1"), GPU_ORT))
    findings = diagnose(facts)
    assert codes(findings) == ["cpu-and-gpu-installed"]
    assert "uninstall -y onnxruntime onnxruntime-gpu" in findings[0].fix


def test_gpu_dist_whose_files_are_the_cpu_build_is_shadowed():
    facts = host(onnxruntime=(dataclasses.replace(GPU_ORT, build_package_name="onnxruntime"),))
    findings = diagnose(facts)
    assert codes(findings)[0] == "cpu-and-gpu-installed"
    assert "package_name='onnxruntime'" in findings[0].evidence[0]


def test_an_onnxruntime_flavour_whose_files_are_gone_is_package_files_missing():
    # what removing the CPU flavour left behind: the GPU distribution, without its onnxruntime/ folder
    missing = MissingFiles(57, 60, ("onnxruntime/__init__.py", "onnxruntime/capi/_pybind_state.py"))
    gone = OrtDist("onnxruntime-gpu", "1.31.1", missing_files=missing)
    findings = diagnose(host(onnxruntime=(gone,)))
    assert codes(findings)[0] == "package-files-missing" and findings[0].severity == "error"
    assert findings[0].evidence == (
        "onnxruntime-gpu 1.31.1: 57 of the 60 files its RECORD lists are missing, e.g. onnxruntime/__init__.py",
    )
    assert findings[0].fix.startswith(f"ortprov apply --python {PY}  (removes it and installs it afresh)")
    assert f"{PY} -m pip install --force-reinstall --no-deps onnxruntime-gpu==1.31.1" in findings[0].fix
    assert not is_healthy(findings)


def test_an_incomplete_nvidia_wheel_is_a_warning_naming_it():
    wheel = NvidiaWheel("nvidia-cudnn-cu13", "9.13.0.50", "cudnn", 13, missing_files=MissingFiles(1, 40))
    findings = diagnose(host(nvidia_wheels=(wheel,)), report())
    assert codes(findings) == ["package-files-missing"]
    assert findings[0].severity == "warning" and findings[0].library == "cudnn"
    assert findings[0].fix == f"{PY} -m pip install --force-reinstall --no-deps nvidia-cudnn-cu13==9.13.0.50"


def test_package_files_missing_ranks_after_the_flavour_conflicts_before_the_libraries():
    assert CODES.index("cpu-and-gpu-installed") < CODES.index("package-files-missing") < CODES.index("cudnn-missing")


def test_onnxruntime_not_installed():
    assert codes(diagnose(host(onnxruntime=())))[0] == "onnxruntime-not-installed"


def test_cudnn_missing():
    facts = host(libraries=tuple(h for h in ALL_LIBS if h.library != "cudnn"))
    findings = diagnose(facts)
    assert codes(findings) == ["cudnn-missing"]
    assert findings[0].library == "cudnn"
    assert f"ortprov apply --python {PY}" in findings[0].fix


@pytest.mark.parametrize("missing", ["cudart", "cublas", "cufft", "curand"])
def test_cuda_library_missing(missing: str):
    facts = host(libraries=tuple(h for h in ALL_LIBS if h.library != missing))
    findings = diagnose(facts)
    assert codes(findings) == ["cuda-library-missing"]
    assert findings[0].library == missing


def test_nvrtc_missing_from_a_log():
    findings = diagnose(host(), None, "libnvrtc.so.13: cannot open shared object file: No such file or directory")
    assert [(f.code, f.library) for f in findings] == [("cuda-library-missing", "nvrtc")]


def test_unknown_build_cuda_version_still_checks_presence():
    unknown = dataclasses.replace(GPU_ORT, cuda_version=None, cudnn_version=None)
    facts = host(onnxruntime=(unknown,), libraries=tuple(h for h in ALL_LIBS if h.library != "cudnn"))
    assert [(f.code, f.library) for f in diagnose(facts)] == [("cudnn-missing", "cudnn")]
    assert diagnose(host(onnxruntime=(unknown,))) == []


def test_cuda_major_mismatch():
    libraries = tuple(h for h in ALL_LIBS if h.library not in ("cudart",)) + (lib("cudart", "12"),)
    findings = diagnose(host(libraries=libraries))
    assert codes(findings) == ["cuda-major-mismatch"]
    assert "cudart 13" in findings[0].title


def test_cudnn_of_the_wrong_major_is_a_mismatch():
    libraries = tuple(h for h in ALL_LIBS if h.library != "cudnn") + (lib("cudnn", "8"),)
    assert codes(diagnose(host(libraries=libraries))) == ["cuda-major-mismatch"]


def test_library_not_on_path_when_only_pip_or_torch_has_it():
    libraries = tuple(h for h in ALL_LIBS if h.library != "cudnn") + (
        LibraryHit(
            "cudnn",
            "9",
            "libcudnn.so.9",
            "/v/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
            "pip",
        ),
    )
    findings = diagnose(host(libraries=libraries))
    assert [(f.code, f.library) for f in findings] == [("library-not-on-path", "cudnn")]
    assert "preload_dlls" in findings[0].fix and "LD_LIBRARY_PATH" in findings[0].fix


def test_a_passing_verify_overrides_library_guesses():
    libraries = tuple(h for h in ALL_LIBS if h.library != "cudnn")
    assert diagnose(host(libraries=libraries), report()) == []


def test_no_wheel_for_platform():
    findings = diagnose(host(platform=PlatformInfo("darwin", "arm64")))
    assert codes(findings) == ["no-wheel-for-platform"]


def test_unsupported_gpu_arch_from_the_plan():
    error = NoCompatiblePlan(
        "no onnxruntime-gpu build runs on this host",
        rejected=[
            Rejection("onnxruntime-gpu 1.31.1 (CUDA 13.0)", "CUDA 13 builds do not support compute capability 5.2"),
            Rejection("onnxruntime-gpu 1.20.1 (CUDA 12.2)", "1.20.1 has no kernels for compute capability 5.2"),
        ],
    )
    findings = diagnose(host(), None, None, error)
    assert codes(findings)[0] == "unsupported-gpu-arch"
    assert "compute capability 5.2" in " ".join(findings[0].evidence)


def test_no_wheel_from_the_plan():
    error = NoCompatiblePlan("no build", rejected=[Rejection("x", "no onnxruntime-gpu wheel for Python 3.14t")])
    assert codes(diagnose(host(), None, None, error))[0] == "no-wheel-for-platform"


def test_plan_steps_become_the_exact_fix():
    plan = Plan(
        "1.31.1",
        "onnxruntime-gpu",
        "13.0",
        "9",
        steps=(
            Step("uninstall", ("onnxruntime",)),
            Step("install", ("onnxruntime-gpu[cuda,cudnn]==1.31.1",)),
        ),
    )
    facts = host(onnxruntime=(OrtDist("onnxruntime", "1.32.0"),))
    findings = diagnose(facts, None, None, plan)
    assert findings[0].code == "cpu-package-only"
    assert f"{PY} -m pip uninstall -y onnxruntime" in findings[0].fix
    assert f'{PY} -m pip install "onnxruntime-gpu[cuda,cudnn]==1.31.1"' in findings[0].fix


def test_gpu_slower_than_cpu_from_timings():
    slow = report()
    check = dataclasses.replace(slow.checks[0], gpu=Timing(0.4, 0.2, 9.5, 20), cpu=Timing(0.01, 0.01, 3.0, 20))
    findings = diagnose(host(), dataclasses.replace(slow, checks=(check,)))
    assert codes(findings) == ["gpu-slower-than-cpu"]
    assert findings[0].severity == "warning"
    assert is_healthy(findings)


def test_cpu_fallback_with_cudnn_error_in_stderr_is_cudnn_missing():
    stderr = (
        "[E:onnxruntime:Default, provider_bridge_ort.cc:2195 TryGetProviderInfo_CUDA] Failed to load library "
        "libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object file: No such "
        "file or directory\n"
    )
    failed = report(False, failures=(Failure("cpu-fallback", "fell back"),), stderr=stderr)
    findings = diagnose(host(), failed)
    assert codes(findings)[0] == "cudnn-missing"
    assert "gpu-provider-failed" not in codes(findings)


def test_cpu_fallback_without_explanation_is_gpu_provider_failed():
    failed = report(False, failures=(Failure("cpu-fallback", "fell back to ['CPUExecutionProvider']"),))
    assert codes(diagnose(host(), failed)) == ["gpu-provider-failed"]


def test_session_failure_where_cudnn_never_loaded_is_cudnn_missing():
    message = "builtin:check: Fail: Non-zero status code returned while running Conv node (cuDNN was never loaded)"
    failed = report(False, failures=(Failure("session-failed", message, "cudnn"),))
    findings = diagnose(host(), failed)
    assert [(f.code, f.library) for f in findings] == [("cudnn-missing", "cudnn")]


def test_fft_check_failure_is_cufft_missing():
    message = "builtin:fft (cuFFT): Fail: Failed to load libcufft.so.12"
    failed = report(False, failures=(Failure("session-failed", message, "cufft"),))
    assert [(f.code, f.library) for f in diagnose(host(), failed)] == [("cuda-library-missing", "cufft")]


def test_run_failure_message_is_analysed_too():
    message = "builtin:check: Fail: CUDA error cudaErrorNoKernelImageForDevice:no kernel image is available"
    failed = report(False, failures=(Failure("session-failed", message),))
    assert codes(diagnose(host(), failed))[0] == "unsupported-gpu-arch"


def test_crash_and_timeout():
    crashed = report(
        False,
        status="crashed",
        signal="SIGSEGV",
        stage="session:builtin:check",
        failures=(Failure("crashed", "killed by SIGSEGV at stage 'session:builtin:check'"),),
    )
    assert codes(diagnose(None, crashed))[0] == "verify-crashed"
    hung = report(False, status="timeout", failures=(Failure("timeout", "did not finish within 120 s"),))
    assert codes(diagnose(None, hung)) == ["verify-timeout"]


def test_results_differ():
    failed = report(False, failures=(Failure("results-differ", "differ"),))
    assert codes(diagnose(None, failed)) == ["gpu-results-differ"]


def test_working_only_after_preload_is_an_error():
    """What a plain program gets decides: a session that needs preload_dlls() leaves plain code on the CPU."""
    only_with_help = report(
        False,
        preload_required=True,
        attempts=("plain (as your code runs): failed", "with onnxruntime.preload_dlls(): passed"),
        failures=(Failure("library-not-on-path", "works only after onnxruntime.preload_dlls()"),),
    )
    findings = diagnose(host(), only_with_help)
    assert ("library-not-on-path", "error") in [(f.code, f.severity) for f in findings]
    assert not is_healthy(findings)
    assert "loader hook" in next(f.fix for f in findings if f.code == "library-not-on-path")


def test_a_failed_loader_hook_is_loud():
    hook = LoaderHookStatus("failed", version=1, error="OSError: boom")
    failed = report(False, loader_hook=hook, failures=(Failure("cpu-fallback", "fell back"),))
    codes = {(f.code, f.severity) for f in diagnose(host(), failed)}
    assert ("loader-hook-failed", "error") in codes
    passed_anyway = report(loader_hook=LoaderHookStatus("loaded", errors=("libcufft.so.12: bad ELF",)))
    assert ("loader-hook-failed", "warning") in {(f.code, f.severity) for f in diagnose(host(), passed_anyway)}


def test_static_report_missing_libraries():
    static = StaticCheck(
        "/x/libonnxruntime_providers_cuda.so",
        libraries=(
            ResolvedLibrary("libcudnn.so.9", "lazy", "missing", "cudnn"),
            ResolvedLibrary("libcuda.so.1", "linked", "driver-missing", "cuda"),
        ),
    )
    failed = report(
        False,
        mode="static",
        checks=(),
        static=static,
        failures=(
            Failure(
                "library-missing",
                "libcudnn.so.9 (lazy) is found neither by the loader nor by preload_dlls()",
                "cudnn",
            ),
        ),
    )
    assert codes(diagnose(None, failed)) == ["cudnn-missing"]
    trt = report(False, mode="static", checks=(), failures=(Failure("library-missing", "libnvinfer.so.10", "nvinfer"),))
    assert codes(diagnose(None, trt)) == ["tensorrt-missing"]


def test_pycuda_next_to_onnxruntime_gpu_is_a_context_conflict_risk():
    ort = OrtImport(
        version="1.31.1", related_dists=(InstalledOrt("pycuda", "2024.1"), InstalledOrt("tensorrt", "10.9"))
    )
    findings = diagnose(host(), report(ort=ort))
    assert [(f.code, f.severity) for f in findings] == [("cuda-context-conflict", "info")]


def test_root_cause_comes_first():
    facts = host(driver=DriverInfo(False), gpus=(), onnxruntime=(OrtDist("onnxruntime", "1.22.1"),))
    found = codes(diagnose(facts, None, "libcudnn.so.9: cannot open shared object file"))
    # without a driver the CPU package is what works until one is seen (info, issue 37): errors first
    assert found == ["no-driver", "cudnn-missing", "cpu-package-only"]
    assert all(code in CODES for code in found)


# --- the saved host files (tests/hosts), one per seed report ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a100-driver535-container-no-cudnn.json", ["cudnn-missing"]),  # seed 002
        ("windows-cuda12.9-cpu-onnxruntime-only.json", ["cpu-package-only"]),  # seed 003
        (
            "windows-rtx3070-driver522-cuda11.8.json",
            ["library-not-on-path"],
        ),  # seed 000: cuDNN only in torch/lib
        ("cpu-dev-machine.json", ["gpu-hidden", "cpu-package-only"]),
        ("h100-driver580.json", ["cpu-package-only"]),  # captured on the H100 host: torch venv, CPU onnxruntime
    ],
)
def test_host_files(name: str, expected: list[str]):
    findings = diagnose(read_host_file(HOSTS / name))
    assert codes(findings) == expected
    for finding in findings:
        assert finding.evidence and finding.fix


@pytest.mark.parametrize("name", ["linux-rtx3090.json", "windows-gtx1660super.json"])
def test_seed001_hosts_with_a_slow_gpu_report(name: str):
    """Seed 001: the GPU was slower than the CPU. The machine state alone is healthy; the timings say it."""
    facts = read_host_file(HOSTS / name)
    assert diagnose(facts) == []
    slow = report()
    check = dataclasses.replace(slow.checks[0], gpu=Timing(0.9, 0.5, 2.57, 20), cpu=Timing(0.1, 0.1, 1.18, 20))
    assert codes(diagnose(facts, dataclasses.replace(slow, checks=(check,)))) == ["gpu-slower-than-cpu"]


def test_every_host_file_diagnoses_without_error():
    for path in sorted(HOSTS.glob("*.json")):
        for finding in diagnose(read_host_file(path)):
            assert finding.code in CODES, path.name


def test_the_libraries_checked_come_from_the_matrix():
    """Which CUDA libraries every build needs (and whether their major is the CUDA major) is read from the
    matrix's build records: a matrix whose every build also opens libnvrtc makes doctor check NVRTC too."""
    shipped = load_matrix(use_cache=False)
    with_nvrtc = dataclasses.replace(
        shipped,
        builds=tuple(
            dataclasses.replace(b, libraries_lazy=(*b.libraries_lazy, f"libnvrtc.so.{b.cuda_major}"))
            for b in shipped.builds
        ),
    )
    no_nvrtc = host(libraries=tuple(h for h in ALL_LIBS if h.library != "nvrtc"))
    assert diagnose(no_nvrtc) == []
    found = diagnose(no_nvrtc, matrix=with_nvrtc)
    assert [(f.code, f.library) for f in found] == [("cuda-library-missing", "nvrtc")]
    wrong_major = host(libraries=tuple(h for h in ALL_LIBS if h.library != "nvrtc") + (lib("nvrtc", "12"),))
    assert [(f.code, f.library) for f in diagnose(wrong_major, matrix=with_nvrtc)] == [("cuda-major-mismatch", "nvrtc")]


def test_without_a_matrix_only_cudnn_is_checked():
    facts = host(libraries=tuple(h for h in ALL_LIBS if h.library not in ("cudnn", "cufft")))
    assert [(f.code, f.library) for f in doctor.diagnose(facts)] == [("cudnn-missing", "cudnn")]


def test_tensorrt_of_any_cuda_major_is_a_context_maker():
    ort = OrtImport(version="1.31.1", related_dists=(InstalledOrt("tensorrt-cu14", "11.0"),))
    findings = diagnose(host(), report(ort=ort))
    # TensorRT 11 beside a 1.31.1 provider that links libnvinfer.so.10 is also a mismatch (doctor/tensorrt.py)
    assert [(f.code, f.severity) for f in findings] == [
        ("tensorrt-major-mismatch", "error"),
        ("cuda-context-conflict", "info"),
    ]
    assert "tensorrt-cu14 11.0" in findings[1].title
    libs_only = OrtImport(version="1.31.1", related_dists=(InstalledOrt("tensorrt-cu13-libs", "10.13.3.9"),))
    assert diagnose(host(), report(ort=libs_only)) == []


# --- GPU code: the installed build's wheels, and the build that has it (issue 20) ------------------------


def test_a_gpu_the_installed_build_has_no_code_for_is_found_before_anything_runs():
    b200 = host(gpus=(Gpu(0, "NVIDIA B200", "10.0", 183359),))
    findings = [f for f in diagnose(b200) if f.code == "unsupported-gpu-arch"]
    assert len(findings) == 1
    assert "compute capability 10.0" in findings[0].title
    assert any("sm_75 80 86 89 90a 120a, no PTX" in line for line in findings[0].evidence)
    assert findings[0].fix.startswith("onnxruntime-gpu 1.28.0 (CUDA 13.0) has sm_100a for compute capability 10.0")
    assert "--ort 1.28.0" in findings[0].fix
    assert "unsupported-gpu-arch" not in codes(diagnose(host()))  # the H100: sm_90a is there


def test_no_kernel_image_in_the_live_session_names_the_build_that_has_the_code():
    message = "builtin:check: Fail: CUDA failure 209: no kernel image is available for execution on the device"
    failed = report(False, failures=(Failure("session-failed", message),))
    gb10 = host(gpus=(Gpu(0, "NVIDIA GB10", "12.1"),), platform=PlatformInfo("linux", "aarch64", glibc="2.39"))
    found = next(f for f in diagnose(gb10, failed) if f.code == "unsupported-gpu-arch")
    assert "has sm_121a for compute capability 12.1" in found.fix


def test_no_kernel_image_in_a_log_that_names_the_gpu_names_the_build_that_has_the_code():
    log = (
        "GPU 0: NVIDIA B200\n"
        "onnxruntime-gpu 1.31.1\n"
        "CUDA failure 209: no kernel image is available for execution on the device ; GPU=0 ; hostname=x ;\n"
    )
    found = [f for f in diagnose(None, log=log) if f.code == "unsupported-gpu-arch"]
    assert found and "for compute capability 10.0" in found[0].fix and "1.28.0" in found[0].fix


def test_a_gpu_no_release_holds_code_for_gets_the_source_build():
    from provisioner.doctor.fixes import gpu_code_fix

    fix = gpu_code_fix(load_matrix(use_cache=False), "8.0", "linux-aarch64", PY)
    assert "CMAKE_CUDA_ARCHITECTURES=80" in fix


def test_cuda_force_ptx_jit_leaves_only_the_wheels_ptx_and_the_fix_unsets_it():
    # the H100 session 5 capture (docs/gpu/h100-s5-no-kernel-2-plain-force-ptx.txt): CUDA_FORCE_PTX_JIT=1 makes the
    # driver ignore the compiled kernels; the 1.31.1 wheel has sm_90a but no PTX, so cublasCreate fails (status 14)
    forced = host(environment=RuntimeEnvironment(cuda_force_ptx_jit="1"))
    found = [f for f in diagnose(forced) if f.code == "unsupported-gpu-arch"]
    assert len(found) == 1 and found[0].severity == "error"
    assert "CUDA_FORCE_PTX_JIT=1" in found[0].title and "no PTX" in found[0].title
    assert found[0].fix.startswith("unset CUDA_FORCE_PTX_JIT")
    assert "CUDA_FORCE_PTX_JIT=1 in the environment" in found[0].evidence
    for harmless in ("0", ""):  # the driver honours the variable only when set to a non-zero value
        assert "unsupported-gpu-arch" not in codes(
            diagnose(host(environment=RuntimeEnvironment(cuda_force_ptx_jit=harmless)))
        )
