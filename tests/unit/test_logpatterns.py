"""analyze_log on real log texts (tests/data/logs, sources in SOURCES.md) and on single-line spellings."""

from __future__ import annotations

from pathlib import Path

import pytest

from provisioner.doctor import analyze_log

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


def codes(text: str) -> list[str]:
    return [f.code for f in analyze_log(text)]


@pytest.mark.parametrize(
    ("line", "code", "library"),
    [
        (
            "libcudnn.so.9: cannot open shared object file: No such file or directory",
            "cudnn-missing",
            "cudnn",
        ),
        (
            "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open "
            "shared "
            "object file",
            "cudnn-missing",
            "cudnn",
        ),
        (
            'Error loading "C:\\x\\onnxruntime_providers_cuda.dll" which depends on "cudnn64_9.dll" which is missing.',
            "cudnn-missing",
            "cudnn",
        ),
        (
            "libcublasLt.so.12: cannot open shared object file: No such file or directory",
            "cuda-library-missing",
            "cublas",
        ),
        ("libcudart.so.12: cannot open shared object file", "cuda-library-missing", "cudart"),
        (
            "libcudnn.so.9: file too short",
            "cudnn-missing",
            "cudnn",
        ),  # a file hidden by a /dev/null bind mount
        (
            "CUDNN failure 1001: CUDNN_STATUS_NOT_INITIALIZED ; GPU=0 ; expr=cudnnCreate(&h);",
            "cudnn-missing",
            "cudnn",
        ),
        ("libcufft.so.11: cannot open shared object file", "cuda-library-missing", "cufft"),
        ("libcurand.so.10: cannot open shared object file", "cuda-library-missing", "curand"),
        ("libnvrtc.so.12: cannot open shared object file", "cuda-library-missing", "nvrtc"),
        ('which depends on "cufft64_11.dll" which is missing', "cuda-library-missing", "cufft"),
        ("libnvinfer.so.10: cannot open shared object file", "tensorrt-missing", "nvinfer"),
        ('which depends on "nvinfer_10.dll" which is missing', "tensorrt-missing", "nvinfer"),
        ("libcuda.so.1: cannot open shared object file: No such file or directory", "no-driver", None),
        ('which depends on "VCRUNTIME140_1.dll" which is missing', "msvc-runtime-missing", None),
        (
            "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version",
            "driver-too-old",
            None,
        ),
        (
            "CUDA error cudaErrorNoKernelImageForDevice:no kernel image is available for execution on the device",
            "unsupported-gpu-arch",
            None,
        ),
        ("CUDA failure 100: no CUDA-capable device is detected ; GPU=0", "gpu-hidden", None),
        ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", "no-driver", None),
        ("Failed to initialize NVML: Driver/library version mismatch", "driver-library-mismatch", None),
        ("CUDA failure 2: out of memory ; GPU=0", "gpu-out-of-memory", None),
        (
            "Could not locate zlibwapi.dll. Please make sure it is in your library path!",
            "zlibwapi-missing",
            None,
        ),
        ("Cuda Runtime (invalid resource handle)", "cuda-context-conflict", None),
        ("ERROR: No matching distribution found for onnxruntime-gpu", "no-wheel-for-platform", None),
        (
            "Failed to create CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/...",
            "gpu-provider-failed",
            None,
        ),
        (
            "Some nodes were not assigned to the preferred execution providers which may or may not have "
            "an negative "
            "impact on performance.",
            "nodes-on-cpu",
            None,
        ),
    ],
)
def test_single_line_spellings(line: str, code: str, library: str | None):
    from provisioner.matrix.load import load_matrix

    findings = analyze_log(f"2025-01-01 00:00:00 [E:onnxruntime:Default] {line}", matrix=load_matrix(use_cache=False))
    assert findings, line
    assert findings[0].code == code
    assert findings[0].library == library
    assert line[:40] in findings[0].evidence[0]


def test_specific_cause_replaces_the_generic_symptom():
    text = (LOGS / "gh25609-pip-cudnn-not-on-path.log").read_text(encoding="utf-8")
    assert codes(text) == ["cudnn-missing"]
    assert codes("Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*") == ["gpu-provider-failed"]
    only = analyze_log("Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*")[0]
    assert "cuDNN 9.* and CUDA 12.*" in only.title


def test_windows_error_126_without_a_name_is_a_missing_dependency():
    text = (LOGS / "gh21825-loadlibrary-126.log").read_text(encoding="utf-8")
    findings = analyze_log(text)
    assert findings[0].code == "cuda-library-missing" and findings[0].library is None
    assert "PATH" in analyze_log(text)[0].fix or "preload_dlls" in findings[0].fix


def test_windows_fix_spelling_differs_from_linux():
    linux = analyze_log("libcuda.so.1: cannot open shared object file: No such file or directory")
    windows = analyze_log(
        'Error loading "C:\\a\\onnxruntime_providers_cuda.dll" which depends on "nvcuda.dll" which is missing.'
    )
    assert [f.code for f in linux] == [f.code for f in windows] == ["no-driver"]
    assert "--gpus all" in linux[0].fix
    assert "nvidia.com/Download" in windows[0].fix


def test_unrecognised_text_gives_no_findings():
    assert analyze_log("hello\nworld\n") == []


def test_ansi_colour_codes_are_ignored():
    text = (
        "\x1b[0;93m2026-11-22 [W:onnxruntime:Default] Specified provider 'CUDAExecutionProvider' is not in "
        "available provider names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'\x1b[m"
    )
    findings = analyze_log(text)
    assert [f.code for f in findings] == ["cpu-package-only"]
    assert "\x1b" not in findings[0].evidence[0]


def test_findings_are_merged_and_ordered():
    text = "\n".join(
        [
            "libcudnn.so.9: cannot open shared object file",
            "libcudnn_ops.so.9: cannot open shared object file",
            "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version",
        ]
    )
    findings = analyze_log(text)
    assert [f.code for f in findings] == ["driver-too-old", "cudnn-missing"]
    assert len(findings[1].evidence) == 2


def test_fix_names_the_target_python():
    findings = analyze_log("libcudnn.so.9: cannot open shared object file", python="/opt/app/.venv/bin/python")
    assert "/opt/app/.venv/bin/python" in findings[0].fix


def test_cuda_error_numbers_come_from_the_matrix():
    """The rules name CUDA errors (cudaErrorInsufficientDriver); the number a log prints for one
    ("CUDA failure 35") is read from cuda.yaml's `errors`, so no number lives in the code."""
    import dataclasses

    from provisioner.matrix.load import load_matrix
    from provisioner.matrix.model import CudaError

    shipped = load_matrix(use_cache=False)
    line = "CUDA failure 35 ; GPU=0 ; hostname=box ; expr=cudaSetDevice(0);"
    assert [f.code for f in analyze_log(line, matrix=shipped)] == ["driver-too-old"]
    # without the data only the name and CUDA's message are recognised: the number is just a CUDA call that failed
    assert [f.code for f in analyze_log(line)] == ["gpu-provider-failed"]
    assert [f.code for f in analyze_log("cudaErrorInsufficientDriver")] == ["driver-too-old"]
    renumbered = dataclasses.replace(shipped, cuda_errors=(CudaError("cudaErrorInsufficientDriver", 36, ("test",)),))
    assert [f.code for f in analyze_log(line, matrix=renumbered)] == ["gpu-provider-failed"]
    assert [f.code for f in analyze_log("CUDA failure 36", matrix=renumbered)] == ["driver-too-old"]


def test_every_cuda_error_a_rule_names_is_in_the_matrix():
    """The rules name CUDA errors (cudaErrorNoDevice); their numbers and messages live in cuda.yaml only."""
    import re

    from provisioner.matrix.load import load_matrix

    doctor = Path(__file__).resolve().parents[2] / "provisioner" / "doctor"
    rules = "".join((doctor / name).read_text(encoding="utf-8") for name in ("rules.py", "logrules.py", "case.py"))
    named = set(re.findall(r"\bcudaError[A-Z]\w+", rules))
    assert named and named <= {e.name for e in load_matrix(use_cache=False).cuda_errors}


@pytest.mark.parametrize(
    ("number", "code"),
    [(2, "gpu-out-of-memory"), (100, "gpu-hidden"), (209, "unsupported-gpu-arch"), (400, "cuda-context-conflict")],
)
def test_cuda_failure_numbers(number: int, code: str):
    from provisioner.matrix.load import load_matrix

    assert [f.code for f in analyze_log(f"CUDA failure {number} ; GPU=0", matrix=load_matrix(use_cache=False))] == [
        code
    ]


# --- provider lists, wrapped pastes, ldd, old DLL names, the two packages timed (issue 11's last misses) ---------


@pytest.mark.parametrize(
    "text",
    [
        # the requested provider named in the same sentence is not in the list of available ones
        "WARNING: CUDAExecutionProvider is not in available providers (['AzureExecutionProvider', "
        "'CPUExecutionProvider']). Use AzureExecutionProvider inference by default.",
        "ValueError: Asked to use CUDAExecutionProvider, but the available execution providers are "
        "['AzureExecutionProvider', 'CPUExecutionProvider'].",
        # a list wrapped in the middle of a name
        "Please compile with GPU. Available providers: AzureExe\ncutionProvider, CPUExecutionProvider, . Fallback!",
        # printed on its own line
        ">>> ort.get_available_providers()\n['CPUExecutionProvider']",
    ],
)
def test_a_provider_list_without_cuda_is_a_cpu_build(text: str):
    assert codes(text)[:1] == ["cpu-package-only"]


def test_providers_passed_in_code_over_several_lines_are_not_the_available_list():
    code = "providers = [\n   ('CUDAExecutionProvider', {'device_id': 0}),\n   'CPUExecutionProvider',\n]"
    assert codes(code) == []
    built = "ValueError: This ORT build has ['CUDAExecutionProvider', 'CPUExecutionProvider'] enabled."
    assert codes(code + "\n" + built) == []


def test_ldd_not_found_names_the_missing_libraries():
    found = analyze_log("$ ldd libonnxruntime_providers_cuda.so\n  libcublasLt.so.11 => not found\n")
    assert [(f.code, f.library) for f in found] == [("cuda-library-missing", "cublas")]


def test_old_windows_dll_suffixes_are_major_and_minor():
    """cublas64_91.dll is CUDA 9.1: with CUDA 9.1 installed it is a missing library, not another major."""
    text = "I use cuda 9.1.\nkernel32.LoadLibrary():'cublas64_91.dll' not found."
    assert [(f.code, f.library) for f in analyze_log(text)] == [("cuda-library-missing", "cublas")]
    other = "I use cuda 10.0.\nkernel32.LoadLibrary():'cublas64_91.dll' not found."
    assert codes(other)[:1] == ["cuda-major-mismatch"]


def test_a_dll_which_is_missing_without_depends_on_is_read():
    """A Chinese-locale message garbled in the paste keeps only the English tail."""
    assert codes('FAIL : Error loading "x.dll" N0Rc歔 "cudnn64_9.dll" which is missing. (Error 126')[:1] == [
        "cudnn-missing"
    ]


def test_the_gpu_package_timed_beside_the_cpu_package():
    slower = "onnxruntime-gpu   runtime is 0.66s\nonnxruntime           runtime is 0.1s"
    assert codes(slower) == ["gpu-slower-than-cpu"]
    assert codes("onnxruntime-gpu   runtime is 0.05s\nonnxruntime           runtime is 0.1s") == []
    # torch's timings are not onnxruntime's: the GPU is faster than the CPU here
    torch = "- onnx gpu: 0.5579626560211182 s\n- onnx cpu: 1.3775670528411865 s\n- pytorch gpu: 0.0085 s\n"
    assert codes("# onnxruntime model slower on gpu than pytorch\n" + torch) == []


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "Microsoft Visual C++ Redistributable is not installed, this may lead to the DLL load failure.",
            "msvc-runtime-missing",
        ),
        ("ReActor preheating... Error: The onnxruntime-gpu distribution was not found", "onnxruntime-not-installed"),
        (
            "ImportError: cannot import name 'get_all_providers' from 'onnxruntime.capi._pybind_state'",
            "cuda-library-missing",
        ),
        (
            "WARNING: The installed PyTorch 2.5.1+cu121 uses CUDA 12.x, but onnxruntime-gpu is built with CUDA 13.x.",
            "cuda-major-mismatch",
        ),
        ("RegisterTensorRTPluginsAsCustomOps] Please install TensorRT libraries as mentioned", "tensorrt-missing"),
        (
            "# AMD cuda error\nCUDA failure 35: CUDA driver version is insufficient for CUDA runtime version",
            "no-driver",
        ),
        (
            "onnxruntime-gpu>=1.15.0,<=1.16.3 has no wheels with a\n    matching Python ABI tag (e.g., `cp312`)",
            "no-wheel-for-platform",
        ),
        ("I have AMD GPU and get this:\nlibcublasLt.so.11: cannot open shared object file", "no-driver"),
    ],
)
def test_more_spellings(line: str, code: str):
    from provisioner.matrix.load import load_matrix

    assert [f.code for f in analyze_log(line, matrix=load_matrix(use_cache=False))][:1] == [code]


def test_a_pip_list_row_is_no_container_hint():
    from provisioner.doctor.evidence import read_evidence

    assert read_evidence("docker-pycreds           0.4.0\nonnxruntime 1.17.0").environment.container is None
    assert read_evidence("running in docker with --gpus all").environment.container == "docker"


def test_a_wrapped_pip_list_row_lists_both_packages():
    assert codes("onnxruntime               1.17.3 onnxruntime-gpu           1.17.1") == ["cpu-and-gpu-installed"]


def test_the_text_names_the_gpu_and_shows_the_lines_each_finding_used(tmp_path: Path):
    """The GPU as the log names it (a ticked form box is "an Intel GPU", a product its full name), and under each
    finding the log lines it was decided from, each once."""
    from tests.support.cli import run_ortprov

    log = tmp_path / "report.log"
    error = "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=0"
    log.write_text(f"**Which GPU?**\n- [ ] NVIDIA\n- [+] Intel\n\n{error}\n{error}\n", encoding="utf-8")
    out = run_ortprov("doctor", "--log", str(log), timeout=60).stdout
    assert "[no-driver]" in out and "an Intel GPU" in out and "[+] Intel, " not in out
    assert out.count(f"evidence: {error}") == 1 and "evidence: - [+] Intel" in out
    old = tmp_path / "old.log"
    old.write_text("CUDA error: no kernel image is available for execution on the device\nmy GPU: GTX 780\n")
    out = run_ortprov("doctor", "--log", str(old), timeout=60).stdout
    assert "NVIDIA GeForce GTX 780 (compute capability 3.5)" in out
    assert "evidence: my GPU: GTX 780" in out
