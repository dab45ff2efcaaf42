"""doctor --log reasons from causes (issue 22): each test states a cause and the evidence that shows it, in words
no corpus log was written from (the corpus' own scores are tests/unit/test_log_corpus.py and test_log_heldout.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provisioner.doctor import analyze_log
from provisioner.doctor.evidence import read_evidence
from provisioner.doctor.fixes import FIXES, Fixes
from provisioner.doctor.rules import RULES, library_code
from provisioner.findings import CODES
from provisioner.matrix.load import load_matrix
from tests.support.cli import run_ortprov

MATRIX = load_matrix(use_cache=False)

# the log of issue 22: onnxruntime-gpu without cuDNN
ISSUE_22 = """\
[E:onnxruntime:Default, provider_bridge_ort.cc:2167 TryGetProviderInfo_CUDA] ... Failed to load library \
libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object file: No such file or directory
[W:onnxruntime:Default, onnxruntime_pybind_state.cc:1064 CreateExecutionProviderInstance] Failed to create \
CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*. ...
['CPUExecutionProvider']
"""


def codes(text: str) -> list[str]:
    return [f.code for f in analyze_log(text, matrix=MATRIX)]


def test_the_issue_log_is_cudnn_missing_with_the_fix_that_installs_cudnn():
    findings = analyze_log(ISSUE_22, matrix=MATRIX)
    assert [f.code for f in findings] == ["cudnn-missing"]
    fix = findings[0].fix
    assert "cudnn" in fix.lower() and "nvidia-cudnn-cu12" in fix  # the build needs CUDA 12: its cuDNN wheel
    assert "uninstall" not in fix  # not the package swap
    assert "libcudnn.so.9" in findings[0].evidence[0]


def test_a_loaded_cuda_provider_proves_the_gpu_package():
    # the same CPU-only session list after a provider that loaded and failed: never the CPU package first
    text = ISSUE_22.replace("libcudnn.so.9", "libcublasLt.so.12")
    assert codes(text)[0] == "cuda-library-missing"
    # without the provider's failure, the same list is a CPU build
    assert codes("print(ort.get_available_providers())\n['CPUExecutionProvider']") == ["cpu-package-only"]


def test_the_missing_dependency_outranks_the_library_that_needed_it():
    line = "Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file"
    findings = analyze_log(line, matrix=MATRIX)
    assert [(f.code, f.library) for f in findings] == [("cuda-library-missing", "nvrtc")]
    windows = 'Error loading "C:\\x\\cudnn_ops64_9.dll" which depends on "cublasLt64_12.dll" which is missing.'
    assert [(f.code, f.library) for f in analyze_log(windows, matrix=MATRIX)] == [("cuda-library-missing", "cublas")]


def test_a_required_cudnn_major_is_compared_with_the_stated_one():
    require = "Failed to create CUDAExecutionProvider. Require cuDNN 8.* and CUDA 12.*. Please install"
    assert codes(f"{require}\nJetPack 6.1: cuda 12.6, cudnn 9.3") == ["cuda-major-mismatch"]
    # a build needing a newer cuDNN than installed lacks cuDNN: installing it is the fix
    newer = "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*.\ncuDNN version: 8.9.7"
    assert codes(newer) == ["cudnn-missing"]
    assert codes(require) == ["gpu-provider-failed"]  # nothing stated: nothing to compare


def test_a_cuda12_library_asked_by_a_package_said_to_be_cuda13():
    text = (
        "installed onnxruntime-gpu (CUDA 13.1)\n"
        'Error loading "onnxruntime_providers_cuda.dll" which depends on "cublasLt64_12.dll" which is missing.'
    )
    assert codes(text)[0] == "cuda-major-mismatch"
    stated = 'I have CUDA 13.1 installed\nwhich depends on "cublasLt64_12.dll" which is missing.'
    assert codes(stated)[0] == "cuda-major-mismatch"


def test_the_cuda_provider_failure_outranks_an_optional_providers():
    text = (
        "EP Error ... Failed to load library libonnxruntime_providers_tensorrt.so with error: libnvinfer.so.10: cannot "
        "open shared object file\n when using ['TensorrtExecutionProvider', 'CUDAExecutionProvider', "
        "'CPUExecutionProvider']\nFalling back to ['CUDAExecutionProvider', 'CPUExecutionProvider'] and retrying.\n"
        "Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object"
    )
    findings = analyze_log(text, matrix=MATRIX)
    assert [f.code for f in findings] == ["cudnn-missing", "tensorrt-missing"]
    assert findings[1].severity == "warning"
    # when CUDA went on working, TensorRT's failure is the finding
    worked = text.split("\nFailed to load library libonnxruntime_providers_cuda")[0]
    worked += "\nApplied providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']"
    assert [(f.code, f.severity) for f in analyze_log(worked, matrix=MATRIX)] == [("tensorrt-missing", "error")]


ERROR_35 = "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=0 ; hostname=box"


@pytest.mark.parametrize(
    ("context", "code"),
    [
        ("docker run --gpus all my-image", "driver-too-old"),  # flags passed: the GPU is in, the driver is old
        ("running in a docker container", "gpu-hidden"),  # nothing says the GPU is inside
        ("inside the docker container nvidia-smi works fine", "driver-too-old"),  # the user says it is inside
        (
            "docker exec -it app nvidia-smi\n| NVIDIA-SMI 470.57   Driver Version: 470.57   CUDA Version: 11.4 |",
            "driver-too-old",
        ),
        ("docker container on a machine with a Radeon RX 6800 XT", "no-driver"),  # no NVIDIA GPU at all
        ("I'm using an integrated Intel GPU (iris xe graphics), Windows 11", "no-driver"),
        ("Windows 11 desktop", "driver-too-old"),
    ],
)
def test_cuda_error_35_is_read_with_what_else_the_log_says(context: str, code: str):
    assert codes(f"{context}\n{ERROR_35}")[0] == code


def test_cuda_error_35_with_a_gpu_too_new_for_the_images_cuda():
    text = (
        "inside the container nvidia-smi shows the GPU: NVIDIA GeForce RTX 5090\n"
        "Failed to create CUDAExecutionProvider. Require cuDNN 8.* and CUDA 11.*\n" + ERROR_35
    )
    findings = analyze_log(text, matrix=MATRIX)
    assert findings[0].code == "unsupported-gpu-arch" and "12.0" in findings[0].title


@pytest.mark.parametrize(
    "line",
    [
        "CUDA error cudaErrorNoKernelImageForDevice:no kernel image is available for execution on the device",
        "CUBLAS failure 14: CUBLAS_STATUS_INTERNAL_ERROR ; GPU=0 ; expr=cublasCreate(&cublas_handle_);",
        "CUBLAS failure 14 ; GPU=0 ; expr=cublasCreate(&cublas_handle_);",
    ],
)
def test_no_kernels_for_the_gpu_names_its_compute_capability_in_the_fix(line: str):
    findings = analyze_log(f"GPU: NVIDIA GeForce RTX 5090\n{line}", matrix=MATRIX)
    assert findings[0].code == "unsupported-gpu-arch"
    assert "12.0" in findings[0].title
    # the fix names the newest build whose wheels hold code for 12.0 (fixes.gpu_code_fix, from the wheels' facts)
    assert "for compute capability 12.0: ortprov plan --python python --ort " in findings[0].fix


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (
            "System.EntryPointNotFoundException: Unable to find an entry point named "
            "'OrtSessionOptionsAppendExecutionProvider_CUDA' in DLL 'onnxruntime'.",
            "cpu-package-only",
        ),
        ("ai.onnxruntime.OrtException: CUDA is not enabled in this build", "cpu-package-only"),
        ("GPU is not supported by your ONNXRuntime build. Fallback to CPU.", "cpu-package-only"),
        (
            "error: Distribution `onnxruntime-gpu==1.23.2 @ registry+https://pypi.org/simple` can't be installed "
            "because it doesn't have a source distribution or wheel for the current platform",
            "no-wheel-for-platform",
        ),
        (
            "I installed onnxruntime-gpu 1.18\nrequirements: Ultralytics requirement ['onnxruntime'] not found, "
            "attempting AutoUpdate...",
            "cpu-and-gpu-installed",
        ),
        (
            # thrown when the provider's DLL did not load (onnxruntime_pybind_state.cc): a DLL it links is missing
            "CUDA_PATH is set but CUDA wasnt able to be loaded. Please install the correct version",
            "cuda-library-missing",
        ),
        (
            "CUDA 12.4 and onnxruntime-gpu 11.8\nCUDA_PATH is set but CUDA wasn't able to be loaded. Please install",
            "cuda-major-mismatch",
        ),
        (
            "ImportError: DLL load failed while importing onnxruntime_pybind11_state: 找不到指定的模块。",
            "msvc-runtime-missing",
        ),
        ("Could not load library zlibwapi.dll. Error code 193", "zlibwapi-missing"),
        ("CUDA failure 999: unknown error ; GPU=0", "driver-library-mismatch"),
        (
            "from multiprocessing import Process\nCUDA error executing cudaSetDevice(GetDeviceId())",
            "cuda-context-conflict",
        ),
        ("The results differ from the CPU at the fifth decimal place on the GPU", None),
    ],
)
def test_wordings_of_other_callers_installers_and_apps(text: str, code: str | None):
    assert (codes(text) or [None])[0] == code


@pytest.mark.parametrize(
    "text",
    [
        # listings of both flavours in other tools' formats
        "onnxruntime               1.15.1                   pypi_0    pypi\n"
        "onnxruntime-gpu           1.15.1                   pypi_0    pypi\nonly the CPU is used",
        "rembg==2.0.50\n  - onnxruntime [required: Any, installed: 1.16.0]\nonnxruntime-gpu      1.16.0",
        "├── insightface v0.7.3\n│   ├── onnxruntime v1.20.1\n├── onnxruntime-gpu v1.20.1",
        "Requirement already satisfied: onnxruntime in c:\\venv\\site-packages (from rembg) (1.17.1)\n"
        "Requirement already satisfied: onnxruntime-gpu in c:\\venv\\site-packages (1.17.1)",
        # pip fetching both in one install, or the CPU one as a dependency before the GPU one
        "Collecting onnxruntime-gpu==1.17.1\nCollecting onnxruntime (from rembg==2.0.55)",
        "Installing collected packages: flatbuffers, onnxruntime-gpu, onnxruntime, rembg",
        "Using cached onnxruntime-1.16.3-cp311-cp311-manylinux_2_17_x86_64.whl\n"
        "Successfully installed onnxruntime-gpu-1.16.3",
        "我同时装了onnxruntime和onnxruntime-gpu，结果只能用CPU",
    ],
)
def test_both_flavours_installed_in_any_tools_words(text: str):
    assert codes(text)[0] == "cpu-and-gpu-installed"


def test_the_gpu_package_listed_beside_a_cpu_builds_provider_list_is_both_installed():
    # onnxruntime-gpu's module always lists the CUDA provider: without it, the CPU package's files are what runs
    listed = "$ pip list | grep onnx\nonnxruntime-gpu      1.17.1\n>>> ort.get_available_providers()\n"
    assert codes(listed + "['AzureExecutionProvider', 'CPUExecutionProvider']")[0] == "cpu-and-gpu-installed"
    # installed by the user's own command, or said installed: the same (the GPU module would list CUDA)
    cpu_list = "\nAvailable providers: 'AzureExecutionProvider, CPUExecutionProvider'"
    for installed in ("I installed onnxruntime-gpu 1.17.1", "(venv) $ pip install onnxruntime-gpu==1.17.1"):
        assert codes(installed + cpu_list)[0] == "cpu-and-gpu-installed", installed
    # only advised (an app's hint, a check to make): nothing says it is installed, the CPU package is what runs
    for advice in ("Check onnxruntime-gpu is installed", "Please run pip install onnxruntime-gpu to use the GPU"):
        assert codes(advice + cpu_list)[0] == "cpu-package-only", advice


@pytest.mark.parametrize(
    "text",
    [
        "npm ls onnxruntime-node\n└── onnxruntime-node@1.13.1\nit is using my cpu instead of my gpu",
        "Error: no available backend found. ERR: [cuda] backend not found.",
        "WARN ort::execution_providers: CUDAExecutionProvider was not registered because its corresponding Cargo "
        "feature is not enabled.",
        "I had installed onnxruntime instead of onnxruntime-gpu",
        "原来装的是cpu版本的onnxruntime",
    ],
)
def test_a_cpu_build_said_by_other_callers_or_in_words(text: str):
    assert codes(text)[0] == "cpu-package-only"


def test_a_windows_abort_with_cudnn_8_is_the_missing_zlibwapi():
    abort = "Process finished with exit code -1073740791 (0xC0000409)"
    assert codes(f"Windows 10, CUDA 11.6, cuDNN 8.5.0\n{abort}") == ["zlibwapi-missing"]
    assert codes("CUDA 11.8\npython exited with code 3221226505") == ["zlibwapi-missing"]  # cuDNN 8 of CUDA 11
    assert "zlibwapi-missing" not in codes(f"CUDA 12.4, cuDNN 9.1\n{abort}")  # cuDNN 9 carries its zlib
    assert codes(abort) == []  # an abort alone: no cause shown


def test_libraries_named_by_cudnn_9_and_nvrtc():
    cudnn9 = "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}"
    assert [(f.code, f.library) for f in analyze_log(cudnn9, matrix=MATRIX)] == [("cudnn-missing", "cudnn")]
    assert codes("Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor") == ["cudnn-missing"]
    nvrtc = "nvrtc: error: failed to open libnvrtc-builtins.so.12.1."
    assert [(f.code, f.library) for f in analyze_log(nvrtc, matrix=MATRIX)] == [("cuda-library-missing", "nvrtc")]


def test_what_the_user_says_is_not_installed_names_the_missing_dependency():
    failed = "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*. Please install all dependencies"
    assert codes(f"{failed}\nI installed cuda 12.4 but not cudnn")[0] == "cudnn-missing"
    assert codes(f"{failed}\n没有安装cudnn")[0] == "cudnn-missing"
    assert codes(f"{failed}\nthe CUDA toolkit is not installed")[0] == "cuda-library-missing"
    msvc = 'LoadLibrary failed with error 126 "" when trying to load "C:\\ort\\onnxruntime_providers_cuda.dll"'
    assert codes(f"{msvc}\nInstalling the latest Visual C++ Redistributable fixed it") == ["msvc-runtime-missing"]


def test_the_only_cuda_shown_is_the_drivers_and_it_is_newer_than_the_builds():
    smi = "| NVIDIA-SMI 550.54.14   Driver Version: 550.54.14   CUDA Version: 12.4 |"
    text = f"{smi}\nonnxruntime-gpu 1.15.0\nFailed to create CUDAExecutionProvider."
    assert codes(text)[0] == "cuda-major-mismatch"  # 1.15 is a CUDA 11 build; the driver's 12.4 is all the log shows
    assert codes(text.replace("1.15.0", "1.20.1"))[0] == "gpu-provider-failed"  # a CUDA 12 build: no mismatch shown


@pytest.mark.parametrize(
    "text",
    [
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
        "$ docker exec -it app nvidia-smi\nFailed to initialize NVML: Unknown Error\nCUDA failure 999: unknown error",
        "kubectl logs pod/infer\nlibcuda.so.1: cannot open shared object file: No such file or directory",
        "singularity exec image.sif python run.py\nlibcuda.so.1: cannot open shared object file",
        'export CUDA_VISIBLE_DEVICES=""\nCUDA failure 100: no CUDA-capable device is detected ; GPU=0',
    ],
)
def test_a_gpu_kept_from_a_container_or_the_process(text: str):
    assert codes(text)[0] == "gpu-hidden"


def test_a_driver_whose_libraries_differ_looks_absent():
    text = "Failed to initialize NVML: Driver/library version mismatch\nFound no NVIDIA driver on your system."
    assert codes(text)[0] == "driver-library-mismatch"


def test_a_node_without_a_cuda_kernel_runs_on_the_cpu():
    line = "[I:onnxruntime:, cuda_execution_provider.cc:2400] CUDA kernel not found in registries for Op type: Foo"
    assert codes(line) == ["nodes-on-cpu"]


def test_timings_in_a_markdown_table():
    table = "| model | CPU (ms) | CUDA (ms) |\n|---|---|---|\n| det | 45.2 | 120.3 |\n| rec | 8.0 | 9.1 |\n"
    assert codes(table) == ["gpu-slower-than-cpu"]
    assert codes(table.replace("120.3", "12.3").replace("9.1", "2.1")) == []


def test_a_library_a_listing_shows_on_disk_is_not_on_the_path():
    text = (
        "Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn_adv.so.9: cannot open shared "
        "object file\n$ find ./venv -name 'libcudnn_adv.so.9'\n./venv/lib/python3.11/site-packages/nvidia/cudnn/lib/"
        "libcudnn_adv.so.9"
    )
    assert codes(text) == ["library-not-on-path"]


def test_every_code_has_one_rule_and_one_fix():
    assert [rule.code for rule in RULES] == list(CODES)
    assert set(FIXES) == set(CODES)
    fixes = Fixes(python="/srv/.venv/bin/python")
    for rule in RULES:
        assert rule.reads.strip() and rule.fix(fixes).strip(), rule.code


def test_the_live_doctor_and_the_log_share_the_library_rule():
    assert library_code("cudnn", "missing") == "cudnn-missing"
    assert library_code("cublas", "missing") == "cuda-library-missing"
    assert library_code("cudnn", "wrong-major") == "cuda-major-mismatch"
    assert library_code("cudart", "not-on-path") == "library-not-on-path"
    assert library_code("nvinfer", "missing") == "tensorrt-missing"
    host = (Path(__file__).resolve().parents[2] / "provisioner" / "doctor" / "host.py").read_text(encoding="utf-8")
    assert "library_code(" in host and '"cudnn-missing" if' not in host


def test_an_unrecognised_log_says_what_was_read_and_what_to_paste(tmp_path: Path):
    log = tmp_path / "question.log"
    log.write_text("my model runs with onnxruntime-gpu 1.19.2 on an RTX 3090, Ubuntu 22.04; is that right?\n")
    result = run_ortprov("doctor", "--log", str(log), timeout=60)
    assert result.returncode == 0
    out = result.stdout
    assert "no known failure recognised" in out
    assert "GeForce RTX 3090 (compute capability 8.6)" in out and "onnxruntime-gpu 1.19.2" in out
    assert "nvidia-smi" in out and "ortprov doctor" in out
    data = json.loads(run_ortprov("doctor", "--log", str(log), "--json", timeout=60).stdout)
    assert data["recognised"] is False and data["read"] and data["paste_next"]


def test_evidence_reads_the_facts_the_probe_fills():
    ev = read_evidence(
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n"
        "|   0  NVIDIA A100-SXM4-80GB   On  |\n"
        "onnxruntime-gpu           1.18.1\nnvidia-cudnn-cu12         9.1.0.70\n"
        "nvcc: Cuda compilation tools, release 12.1, V12.1.105\n",
        MATRIX,
    )
    assert ev.driver is not None and ev.driver.version == "535.104.05" and ev.driver.cuda_version == "12.2"
    assert ev.gpus and ev.gpus[0].compute_capability == "8.0"
    assert [d.name for d in ev.onnxruntime] == ["onnxruntime-gpu"]
    assert any(s.value == "12.1" for s in ev.cuda_installed)


# a Windows provider failure with no onnxruntime version named, and the CUDA toolkit the user has
_DATED_126 = """\
{day} 11:29:55.0674790 [E:onnxruntime:Default, provider_bridge_ort.cc:1131 onnxruntime::ProviderLibrary::Get] \
LoadLibrary failed with error 126 "" when trying to load \
"C:\\app\\venv\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"
nvcc: Cuda compilation tools, release 12.1, V12.1.66
"""


@pytest.mark.parametrize(
    ("day", "mismatch"),
    [
        ("2023-04-03", True),  # every onnxruntime-gpu out by then was built for CUDA 11: CUDA 12 cannot serve it
        ("2024-03-01", False),  # the CUDA 12 feed builds are out (1.17): either major may be installed
        ("2025-06-01", False),  # CUDA 12 builds on PyPI
    ],
)
def test_the_logs_date_tells_the_builds_cuda_major_when_no_version_is_named(day: str, mismatch: bool):
    findings = analyze_log(_DATED_126.format(day=day), matrix=MATRIX)
    assert (findings[0].code == "cuda-major-mismatch") is mismatch
    if mismatch:
        assert f"released by {day}" in findings[0].title and "CUDA 11" in findings[0].title


def test_the_logs_date_is_read_from_timestamps_and_nvidia_smi():
    text = (
        "2022-01-02 03:04:05.1 [E:onnxruntime:Default, x.cc:1] CUDA failure\n$ nvidia-smi\nMon Apr  3 12:31:03 2023\n"
    )
    ev = read_evidence(text, MATRIX)
    assert ev.dated is not None and ev.dated.value == "2023-04-03"  # the latest day shown
    ev = read_evidence("2024-06-15 03:51:08.73 [E:onnxruntime:Default, x.cc:1] CUDA failure\n", MATRIX)
    assert ev.dated is not None and ev.dated.value == "2024-06-15"


def test_answers_said_under_the_call_are_read():
    text = (
        "`onnxruntime.get_device()`\nI get GPU\n"
        "`sess = onnxruntime.InferenceSession(path, providers=['CUDAExecutionProvider'])\nsess.get_providers()`\n"
        "I get CPUExecutionProvider\n"
    )
    assert codes(text)[0] == "gpu-provider-failed"  # a GPU build whose session fell back: the provider failed
    assert codes("`onnxruntime.get_device()`\nit returns 'CPU'\n")[0] == "cpu-package-only"
    session = "`sess.get_providers()`\nI get CPUExecutionProvider\n"
    assert codes(session)[:1] == ["cpu-package-only"]  # CPU alone, no failure shown, no GPU package: a CPU build
    assert codes("$ pip install onnxruntime-gpu\n" + session)[:1] == ["gpu-provider-failed"]


def test_sessions_on_the_cpu_alone_are_read_with_what_is_installed():
    applied = "Applied providers: ['CPUExecutionProvider'], with options: {'CPUExecutionProvider': {}}\n"
    assert codes(applied * 3)[:1] == ["cpu-package-only"]  # insightface asks for every available provider
    assert codes("onnxruntime-gpu    1.17.1\n" + applied)[:1] == ["gpu-provider-failed"]
    failed = "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:1064 CreateExecutionProviderInstance] Failed to "
    failed += "create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*.\n"
    assert "cpu-package-only" not in codes(failed + applied)


_ENTRY_POINT = (
    "Unable to find an entry point named 'OrtSessionOptionsAppendExecutionProvider_CUDA' in DLL 'onnxruntime'."
)


@pytest.mark.parametrize(
    ("reference", "code"),
    [
        ('<PackageReference Include="Microsoft.ML.OnnxRuntime.Gpu" Version="1.29.0" />', "cpu-and-gpu-installed"),
        ("dotnet add package Microsoft.ML.OnnxRuntime.Gpu", "cpu-and-gpu-installed"),
        ("I installed NuGet package Microsoft.ML.OnnxRuntime.Gpu and another library", "cpu-and-gpu-installed"),
        ('<PackageReference Include="Microsoft.ML.OnnxRuntime" Version="1.29.0" />', "cpu-package-only"),
    ],
)
def test_a_cpu_runtime_loaded_although_the_gpu_package_is_referenced_is_two_packages(reference: str, code: str):
    findings = analyze_log(f"{reference}\n{_ENTRY_POINT}\n", matrix=MATRIX)
    assert findings[0].code == code
    if code == "cpu-and-gpu-installed":
        assert ".NET" in findings[0].fix and "Microsoft.ML.OnnxRuntime," in findings[0].fix


@pytest.mark.parametrize(
    ("gpu_row", "slower"),
    [
        ("| CUDA  | 0.12s | 11.26s |", True),  # the first column alone would say faster; the row's sum is slower
        ("| CUDA  | 0.12s | 0.30s  |", False),
    ],
)
def test_device_rows_of_a_timing_table_compare_by_their_sums(gpu_row: str, slower: bool):
    table = f"onnxruntime-gpu on an L4\n| CPU   | 0.96s | 1.66s  |\n{gpu_row}\n"
    assert (codes(table)[:1] == ["gpu-slower-than-cpu"]) is slower


def test_tensorrt_missing_from_a_list_that_has_cuda_is_no_cpu_build():
    warning = (
        "onnxruntime_inference_collection.py:69: UserWarning: Specified provider 'TensorrtExecutionProvider' is not "
        "in available provider names.Available providers: '{}'"
    )
    assert "cpu-package-only" not in codes(warning.format("CUDAExecutionProvider, CPUExecutionProvider"))
    assert codes(warning.format("CPUExecutionProvider"))[:1] == ["cpu-package-only"]


def test_a_provider_asked_for_by_a_wrong_name_is_no_cpu_build():
    text = (
        "EP Error Unknown Provider Type: cuda when using ['cuda']\nFalling back to ['CPUExecutionProvider'] and "
        "retrying.\nApplied providers: ['CPUExecutionProvider'], with options: {'CPUExecutionProvider': {}}\n"
    )
    assert codes(text) == []  # the caller's provider name, not the setup: nothing to install


def test_chinese_statements_of_the_version_and_the_failure_are_read():
    text = "使用tagger打标会显示CUDA路径已设置但无法加载CUDA\n本机安装的cuda是12.6, 要求onnxruntime-gpu的版本是1.17.1\n"
    assert codes(text)[:1] == ["cuda-major-mismatch"]  # 1.17.1's PyPI wheel is a CUDA 11 build


def test_onnxruntime_with_gpu_support_said_is_no_cpu_build():
    text = "I have onnxruntime with GPU support set up; TensorRT initialization failed"
    assert "cpu-package-only" not in codes(text)
    assert codes("you need to compile onnxruntime with GPU support")[:1] == ["cpu-package-only"]


def test_results_said_to_differ_with_the_device_on_the_next_line():
    assert codes("1.12.1 inference result differs from 1.11.0\nThe bug only with CUDA.\n")[:1] == ["gpu-results-differ"]
    assert codes("1.12.1 inference result differs from 1.11.0\n") == []  # no device: versions, not the GPU


def test_a_gpu_said_to_take_forever_is_slower():
    text = "nvtop confirms the gpu is being utilized, but it takes forever\nwith rembg[cpu] it takes 23 seconds!"
    assert codes(text)[:1] == ["gpu-slower-than-cpu"]


def test_onnxruntime_gpu_failing_to_install_on_a_jetson_is_no_wheel_for_it():
    text = "How to install onnxruntime-gpu on a Jetson Orin NX\n$ pip3 install onnxruntime-gpu\nBut it's not installing"
    assert codes(text)[:1] == ["no-wheel-for-platform"]
    assert codes("$ pip3 install onnxruntime-gpu\nBut it's not installing\n") != ["no-wheel-for-platform"]


def test_a_cudnn8_part_that_is_there_but_will_not_load_needs_zlibwapi():
    error = "Could not load library cudnn_cnn_infer64_8.dll. Error code 126\n"
    present = "I double checked, and the cudnn_cnn_infer64_8.dll directory is there.\n"
    assert codes(error + present)[:1] == ["zlibwapi-missing"]
    assert codes(error)[:1] == ["cudnn-missing"]  # not shown to be there: cuDNN (or that part) is missing


@pytest.mark.parametrize(
    ("text", "slower"),
    [
        ("# gpu is 4 times slower than cpu on jetson xavier\nmy expectation gpu is faster than cpu but no", True),
        ("The execution time with the CUDA provider is very slow (a little slower than CPU)", True),
        ("Why is the performance over GPU or CPU the same?", True),
        ("First inference with CUDAExecutionProvider is slow (12 sec)", True),
        ("CPU\nTime taken for Onnx model 0:00:00.178522\nGPU\nTime taken for Onnx model 0:00:00.617351\n", True),
        ("CPU\nTime taken for Onnx model 0:00:00.617351\nGPU\nTime taken for Onnx model 0:00:00.178522\n", False),
        ("the GPU is 3x faster than the CPU now", False),
        ("I am getting something more than twice slower with GPU", True),
        ("I tested it in GPU mode and CPU mode, and found it ran faster in CPU mode", True),
        ("onnxruntime: the CPU is 3x slower than GPU here", False),  # the CPU's run is the slow one
    ],
)
def test_the_gpu_compared_with_the_cpu_in_its_many_wordings(text: str, slower: bool):
    assert ("gpu-slower-than-cpu" in codes(text)) is slower


def test_versions_of_two_runs_in_sentences_are_not_both_packages_listed():
    text = "CPU run: onnxruntime 1.2.0\nwith onnxruntime gpu 1.2.0 the GPU run\n"
    assert "cpu-and-gpu-installed" not in codes(text)
    assert codes("onnxruntime 1.2.0\nonnxruntime-gpu 1.2.0\n")[:1] == ["cpu-and-gpu-installed"]


def test_a_silent_exit_on_win11_with_cudnn_8_3_stated_is_zlibwapi():
    text = "W1105 21:43:25.534201  9656 device_context.cc:422] device: 0, cuDNN Version: 8.3.\n"
    text += "系统 win11\n但是开始的时候就闪退了\n"
    assert codes(text)[:1] == ["zlibwapi-missing"]
    assert "zlibwapi-missing" not in codes("it is compatible with CUDA12.*, cuDNN 8.*\n系统 win11\n闪退\n")  # required


def test_cuda_error_500_at_the_first_call_is_an_incomplete_driver():
    error = (
        "[E:onnxruntime:Default, cuda_call.cc:118 CudaCall] CUDA failure 500: named symbol not found ; GPU=-1 ; "
        "hostname=0ec3d2c5f698 ; expr=cudaGetDeviceCount(&num_devices);\n"
    )
    assert codes("facefusion-cuda-1  | Container image Copyright (c) NVIDIA\n" + error)[:1] == ["gpu-hidden"]
    assert codes("docker run --rm my-image\n" + error)[:1] == ["gpu-hidden"]
    assert codes(error.replace("0ec3d2c5f698", "workstation"))[:1] == ["driver-library-mismatch"]


# causes read from their evidence, one log each (text -> the first finding's code); what each teaches in its comment
READ_AS = [
    # said in words: a CPU-only build, which flavour is installed, both flavours listed in other forms
    pytest.param(
        "the CUDA image results in ONNX Runtime (ORT) without CUDA EP, so OCR runs on CPU", "cpu-package-only"
    ),
    pytest.param("No CUDAExecutionProvider available (while PyTorch does see CUDA).", "cpu-package-only"),
    pytest.param("我装的是onnxruntime不是onnxruntime-gpu，所以只能用CPU", "cpu-package-only"),
    pytest.param("it turned out I had onnxruntime, not onnxruntime-gpu", "cpu-package-only"),
    pytest.param(  # an application's choices are the available providers
        "run.py: error: argument --execution-provider: invalid choice: 'cuda' (choose from 'azure', 'cpu')",
        "cpu-package-only",
    ),
    pytest.param("Both onnxruntime 1.17.0 and onnxruntime-gpu 1.17.0 show up in pip list", "cpu-and-gpu-installed"),
    pytest.param("pip list shows onnxruntime 1.16.0 and onnxruntime-gpu 1.16.0", "cpu-and-gpu-installed"),
    pytest.param(  # poetry show: padded columns, then the description
        "onnxruntime        1.16.3 ONNX Runtime is a runtime accelerator for Machine Learning models\n"
        "onnxruntime-gpu    1.16.3 ONNX Runtime is a runtime accelerator for Machine Learning models",
        "cpu-and-gpu-installed",
    ),
    pytest.param(
        "installing rembg[gpu] also installed the CPU onnxruntime next to onnxruntime-gpu", "cpu-and-gpu-installed"
    ),
    pytest.param(  # get_device() answered in a sentence after the GPU package's install
        '!pip install rembg[cli,gpu]\nimport onnxruntime as ort\nort.get_device()\n\nWill return "CPU". But:\n'
        "!pip uninstall onnxruntime-gpu --yes\n!pip install onnxruntime-gpu\n",
        "cpu-and-gpu-installed",
    ),
    pytest.param(  # the CPU package pip names while removing it is no longer installed: what is left is broken
        "Found existing installation: onnxruntime 1.16.3\nUninstalling onnxruntime-1.16.3:\n"
        "  Successfully uninstalled onnxruntime-1.16.3\n"
        "AttributeError: module 'onnxruntime' has no attribute 'SessionOptions'",
        "package-files-missing",
    ),
    pytest.param(  # an installer finding the package without its files
        "npm error Error: Failed to find runtimes/win-x64/native/libonnxruntime_providers_cuda.so in NuGet package",
        "package-files-missing",
    ),
    # .NET / Java: the managed API without a native runtime; onnxruntime's own DLL failing to start
    pytest.param(
        "EntryPointNotFoundException: Unable to find an entry point named 'OrtGetApiBase' in DLL 'onnxruntime'.",
        "onnxruntime-not-installed",
    ),
    pytest.param(
        "Exception thrown: 'System.EntryPointNotFoundException' in Microsoft.ML.OnnxRuntime.dll",
        "onnxruntime-not-installed",
    ),
    pytest.param(
        "java.lang.UnsatisfiedLinkError: C:\\Users\\me\\AppData\\Local\\Temp\\onnxruntime-java745\\onnxruntime.dll: "
        "Dynamic Link Library (DLL) initialization routine failed.\n"
        "\tat ai.onnxruntime.OnnxRuntime.load(OnnxRuntime.java:387)\n",
        "msvc-runtime-missing",
    ),
    # error 1114 is read by which DLL failed: a provider's alone (onnxruntime's own loaded), or onnxruntime's
    pytest.param(
        'LoadLibrary failed with error 1114 "" when trying to load "C:\\app\\onnxruntime_providers_cuda.dll"',
        "gpu-provider-failed",
    ),
    pytest.param(
        "ImportError: DLL load failed while importing onnxruntime_pybind11_state: A dynamic link library (DLL) "
        "initialization routine failed.",
        "msvc-runtime-missing",
    ),
    # libraries: a traceback cut at _ld_preload's CDLL(...), a CUDA major asked for (not installed)
    pytest.param(
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.7/site-packages/onnxruntime/capi/_ld_preload.py", line 12, in <module>\n'
        '    _libcublas = CDLL("libcublas.so.10", mo\n'
        "Cuda compilation tools, release 11.1, V11.1.105\n",
        "cuda-major-mismatch",  # the build wants CUDA 10's cuBLAS; CUDA 11 is installed
    ),
    pytest.param(
        "sherpa-onnx is looking for CUDA 11 file (libcublasLt.so.11: cannot open shared object file: No such file or "
        "directory)\nI have CUDA 12 installed\n",
        "cuda-major-mismatch",
    ),
    # hosts: NVIDIA's container images started without GPU access
    pytest.param(
        "== CUDA ==\nCUDA Version 11.4.3\nContainer image Copyright (c) 2016-2023, NVIDIA CORPORATION\n"
        "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n"
        "   Use the NVIDIA Container Toolkit to start this container with GPU support\n",
        "gpu-hidden",
    ),
    pytest.param("bash: /usr/bin/nvidia-smi: No such file or directory\n", "no-driver"),
    pytest.param(  # a machine said to have no GPU: error 100 there is no driver (nothing to hide)
        "CUDA failure 100: no CUDA-capable device is detected ; GPU=-1\n- GPU model and memory: CPU-only machine\n",
        "no-driver",
    ),
    pytest.param(  # TensorRT 8 said installed, its libnvinfer.so.8 not found: not where the loader looks
        "im using tensorrt 8.2.1.8, cuda 11.5\nImportError: libnvinfer.so.8: cannot open shared object file: No such "
        "file or directory\n",
        "library-not-on-path",
    ),
    pytest.param(  # forward compatibility is tried only when the host's driver is older than the image's runtime
        "CUDA failure 804: forward compatibility was attempted on non supported HW ; GPU=0 ; hostname=9407c20fa6b6 ; "
        "expr=cudaSetDevice(info_.device_id);",
        "driver-too-old",
    ),
    pytest.param(  # a pod of a runtime without NVIDIA's hook: no driver library inside
        "kubectl describe pods\nloading NVML\nFailed to start nvml with error:  could not load NVML library\n",
        "gpu-hidden",
    ),
    # TensorRT: the provider's own library lacks a symbol of the TensorRT it finds (another TensorRT than its own)
    pytest.param(
        "FAIL : Failed to load library libonnxruntime_providers_tensorrt.so with error: "
        "/opt/ort/lib/libonnxruntime_providers_tensorrt.so: undefined symbol: getBuilderPluginRegistry",
        "tensorrt-major-mismatch",
    ),
    pytest.param(  # TensorRT's own plugin library lacking a symbol: TensorRT's install is broken, not another major
        "FAIL : Failed to load library libonnxruntime_providers_tensorrt.so with error: "
        "/usr/lib/libnvinfer_plugin.so.8: undefined symbol: _ZN5pwgen18nvrtcCreateProgramE",
        "tensorrt-missing",
    ),
    # Windows: a crash inside an older Visual C++ runtime while onnxruntime.dll starts
    pytest.param(
        "Exception thrown at 0x00007FFFBCA03080 (msvcp140.dll) in App.exe: 0xC0000005: Access violation reading "
        "location 0x0000000000000000.",
        "msvc-runtime-missing",
    ),
    pytest.param("msvcp140!mtx_do_lock+0x74\nonnxruntime+0x5cd1\nucrtbase!_initterm+0x2d", "msvc-runtime-missing"),
    # CPU-only builds of applications built on ONNX Runtime, said their own way
    pytest.param(
        "session.cc:GetSessionOptionsImpl:49 Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON. Fallback to cpu!",
        "cpu-package-only",
    ),
    pytest.param("1.3.1   EXECUTION PROVIDERS only azure  and cpu,not have cuda and tensorrt", "cpu-package-only"),
    # one provider's outputs said to be bad
    pytest.param("# Conv + Q/DQ produces bad output in CPUExecutionProvider\n", "gpu-results-differ"),
    pytest.param("garbage images with the CUDA provider, fine on the CPU\n", "gpu-results-differ"),
]


@pytest.mark.parametrize(("text", "code"), READ_AS)
def test_a_cause_is_read_from_its_evidence(text: str, code: str):
    assert codes(text)[:1] == [code]


# --- issue 35: facts said in words, a fix told as steps, an undefined symbol's pair ---------------------------------


def test_the_builds_cuda_said_in_words_is_compared_with_the_cuda_installed():
    said = "My onnxruntime-gpu wheel was compiled for CUDA 11, and the container has CUDA 12.4 installed.\n"
    findings = analyze_log(said + "None of the GPU libraries it wants are found.\n", matrix=MATRIX)
    assert findings[0].code == "cuda-major-mismatch"
    assert "in words" in findings[0].title  # a fact from prose, said to be one
    # the same words beside the build's own CUDA major: nothing mismatched
    assert "cuda-major-mismatch" not in codes(said.replace("CUDA 12.4", "CUDA 11.8"))
    # a record of the release outranks the words: onnxruntime-gpu 1.20.0 on PyPI is a CUDA 12 build
    listed = "onnxruntime-gpu           1.20.0\n" + said.replace("wheel was compiled", "package, I think, is built")
    assert "cuda-major-mismatch" not in codes(listed)


def test_installing_a_cuda_of_another_major_than_the_one_shown_fixed_it():
    shown = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.3, V12.3.52\n"
    other = analyze_log(shown + "What finally fixed it was installing CUDA 11.8 next to it.\n", matrix=MATRIX)
    assert other[0].code == "cuda-major-mismatch" and "CUDA 11" in other[0].title and "CUDA 12" in other[0].title
    same = codes(shown + "What finally fixed it was installing CUDA 12.3 again.\n")
    assert same[0] == "cuda-library-missing"  # the same major reinstalled: its libraries were what was missing


def test_a_fix_told_as_numbered_steps_names_what_was_missing():
    steps = "I got it to work, these are the steps that fixed it:\n1. removed the old venv\n2. installed cuDNN 9.1\n"
    assert codes(steps)[0] == "cudnn-missing"
    # steps to reproduce are no fix
    assert "cudnn-missing" not in codes("To reproduce, follow these steps:\n1. install cuDNN 9.1\n2. run it\n")


@pytest.mark.parametrize(
    ("line", "family"),
    [
        (
            "OSError: /srv/app/lib/libonnxruntime_providers_cuda.so: undefined symbol: cublasLtMatmulAlgoGetHeuristic",
            "cublasLt",
        ),
        ("libcudnn_graph.so.9: undefined symbol: _ZN5cudnn7backend12DescriptorD2Ev", "cudnn"),
        ("/opt/ort/libonnxruntime_providers_cuda.so: undefined symbol: cudaGraphInstantiateWithFlags", "cudart"),
    ],
)
def test_an_undefined_symbol_of_a_cuda_library_names_the_pair_that_meets(line: str, family: str):
    findings = analyze_log(line, matrix=MATRIX)
    assert [(f.code, f.library) for f in findings[:1]] == [("library-not-on-path", family)]
    needing = line.split(": undefined")[0].rsplit("/", 1)[-1].split(" ")[-1]
    assert needing in findings[0].title and family in findings[0].title  # both libraries of the pair are named


def test_advice_naming_the_gpu_package_is_no_install_of_it():
    text = (
        "Applied providers: ['CPUExecutionProvider'], so it runs on the CPU.\n"
        "The README says you have to install onnxruntime-gpu for GPU inference,\n"
        "but our requirements.txt has only onnxruntime.\n"
    )
    assert codes(text)[0] == "cpu-package-only"


def test_only_the_cpu_used_beside_a_build_for_another_cuda_major():
    text = "onnxruntime-gpu 1.14.1\nnvcc: Cuda compilation tools, release 12.0, V12.0.76\nOnly the CPU is used.\n"
    assert codes(text)[0] == "cuda-major-mismatch"  # 1.14.1 on PyPI is a CUDA 11 build (the matrix's record)


def test_another_onnxruntime_build_for_the_cuda_there_fixed_it():
    assert (
        codes("Switching onnxruntime-gpu to the build matching my CUDA 12 toolkit did it.")[0] == "cuda-major-mismatch"
    )
    assert "cuda-major-mismatch" not in codes("I upgraded onnxruntime-gpu to the latest version, it still fails.")


FAILED_ALONE = (
    "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:640 CreateExecutionProviderInstance] Failed to create "
    "CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/execution-providers/"
    "CUDA-ExecutionProvider.html#requirements to ensure all dependencies are met.\n"
)


def test_a_failure_naming_no_library_ranks_the_candidates_by_what_else_the_log_shows():
    # the build (1.20.0: CUDA 12, cuDNN 9) and its CUDA major shown installed, no cuDNN shown: cuDNN first
    shown = FAILED_ALONE + "onnxruntime-gpu 1.20.0\nnvcc: Cuda compilation tools, release 12.4, V12.4.131\n"
    first = analyze_log(shown, matrix=MATRIX)[0]
    assert first.code == "gpu-provider-failed"
    assert first.title.index("cuDNN 9 missing") < first.title.index("off the loader's path")
    assert "ortprov verify --static" in first.fix  # the one command that tells the candidates apart
    # no release named, CUDA 12 shown: a build for another major comes first
    other = analyze_log(FAILED_ALONE + "nvcc: Cuda compilation tools, release 12.4, V12.4.131\n", matrix=MATRIX)[0]
    assert "most likely a build for another CUDA major than the 12 installed" in other.title
    # Windows' 126 with an empty name gets the same ranking, the Visual C++ runtime last
    win = (
        'LoadLibrary failed with error 126 "" when trying to load "C:\\\\env\\\\Lib\\\\site-packages\\\\onnxruntime\\\\'
        'capi\\\\onnxruntime_providers_cuda.dll"\nonnxruntime-gpu 1.20.0\nnvcc: release 12.4, V12.4.131\n'
    )
    found = analyze_log(win, matrix=MATRIX)[0]
    assert found.code == "cuda-library-missing" and found.title.endswith("runtime (`ortprov verify --static` decides)")
    assert "cuDNN 9 missing" in found.title


def test_nothing_recognised_puts_the_paste_that_decides_first(tmp_path: Path):
    log = tmp_path / "question.log"
    log.write_text("I use onnxruntime-gpu 1.20.0 and it is fine?\n")
    data = json.loads(run_ortprov("doctor", "--log", str(log), "--json", timeout=60).stdout)
    assert data["recognised"] is False
    assert data["paste_next"][0].startswith("the program's whole error output")  # the release is known: the error
    log.write_text("it does not work\n")
    data = json.loads(run_ortprov("doctor", "--log", str(log), "--json", timeout=60).stdout)
    assert "get_available_providers" in data["paste_next"][0]  # nothing known: which onnxruntime runs, and how


def test_a_conda_environment_pins_its_cuda_and_its_onnxruntime_build_names_one():
    listing = (
        "# Name                    Version                   Build  Channel\n"
        "onnxruntime               1.18.0          cuda120py311h8b2e4f5_200    conda-forge\n"
        "cudatoolkit               11.8.0              h6a678d5_0\n"
    )
    failed = "Failed to load library libonnxruntime_providers_cuda.so with error: libcublas.so.12: cannot open shared"
    assert codes(listing + failed + " object file: No such file or directory\n")[0] == "cuda-major-mismatch"
    same = listing.replace("cudatoolkit               11.8.0", "cuda-version              12.4  ")
    assert "cuda-major-mismatch" not in codes(same + failed + " object file: No such file or directory\n")


def test_a_distribution_building_with_its_own_cuda_said_in_words():
    text = "nixpkgs' onnxruntime is built with cudaPackages_12, but this host only has CUDA 11.8\nFailed to create "
    assert codes(text + "CUDAExecutionProvider\n")[0] == "cuda-major-mismatch"


WRAPPED = "Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object"


@pytest.mark.parametrize(
    "text",
    [
        f"ai.onnxruntime.OrtException: Error code - ORT_RUNTIME_EXCEPTION - message: {WRAPPED} file\n"
        "\tat ai.onnxruntime.OrtSession$SessionOptions.addCUDA(Native Method)\n",
        f'Error: Error {{ code: GenericFailure, message: "{WRAPPED} file: No such file or directory\\n", ptr: 0x1 }}\n',
        f"Error: {WRAPPED} file: No such file or directory\n    at new OnnxruntimeSessionHandler "
        "(/srv/node_modules/onnxruntime-node/dist/backend.js:27:92)\n",
        f"Unhandled exception. Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:RuntimeException] {WRAPPED} "
        "file\n   at Microsoft.ML.OnnxRuntime.SessionOptions.AppendExecutionProvider_CUDA(Int32 deviceId)\n",
        f"terminate called after throwing an instance of 'Ort::Exception'\n  what():  {WRAPPED} file\n",
    ],
)
def test_another_bindings_exception_around_the_message_leaves_the_cause(text: str):
    assert codes(text)[0] == "cudnn-missing"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (
            "onnxruntime-gpu 1.20.0 complains about the absence of libcudnn.so.9 when the session starts",
            "cudnn-missing",
        ),
        ("Creating the session fails, file not found: 'libcufft.so.11'", "cuda-library-missing"),
        ("libcurand.so.10 is missing in the container, so the CUDA provider is skipped", "cuda-library-missing"),
    ],
)
def test_a_library_file_said_missing_in_words_is_missing(text: str, code: str):
    assert codes(text)[0] == code


def test_an_images_cuda_against_the_cuda_the_build_needs():
    said = "Our service ran on an image with CUDA 12.2, and ONNX Runtime could not find the CUDA 11 libraries.\n"
    assert codes(said)[0] == "cuda-major-mismatch"
    fixed = "The old image with CUDA 12.4 failed; it was fixed by moving to a base image that ships CUDA 11.8.\n"
    found = analyze_log(fixed, matrix=MATRIX)[0]
    assert found.code == "cuda-major-mismatch" and "CUDA 11 fixed it" in found.title
