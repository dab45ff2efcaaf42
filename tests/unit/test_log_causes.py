"""doctor --log on logs it has never seen (issue 22, second round): each test states a cause, the ways a log can show
it, and what must not be taken for it, in words of my own (no corpus log was copied). The corpus scores are
tests/unit/test_log_corpus.py and test_log_heldout.py; the first round's causes are test_log_reasoning.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from provisioner.doctor import analyze_log
from provisioner.doctor.scan import candidate_lines, unspaced
from provisioner.matrix.load import load_matrix

MATRIX = load_matrix(use_cache=False)
CPU_LIST = "\n>>> ort.get_available_providers()\n['AzureExecutionProvider', 'CPUExecutionProvider']"


def first(text: str) -> str | None:
    found = analyze_log(text, matrix=MATRIX)
    return found[0].code if found else None


# --- which package runs: the CPU one alone, or both ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "(env) user@box:~/app$ pip install onnxruntime-gpu==1.18.0" + CPU_LIST,
        "I've installed onnxruntime-gpu 1.18 in this venv" + CPU_LIST,
        "onnxruntime-gpu 1.18.0 is already installed" + CPU_LIST,
        "pip uninstall -y onnxruntime onnxruntime-gpu" + CPU_LIST,
        "taking out the CPU package did it: after uninstalling onnxruntime everything works",
        "my venv has onnxruntime==1.18.0 and onnxruntime-gpu==1.18.0",
        "  - Installing onnxruntime (1.18.0)\n  - Installing onnxruntime-gpu (1.18.0)",
        "  ✔ Install onnxruntime 1.18.0 successful\n  ✔ Install onnxruntime-gpu 1.18.0 successful",
    ],
)
def test_the_gpu_package_installed_beside_a_cpu_build_is_both_packages(text: str):
    # the GPU package's module always lists CUDA: a CPU-only list where it was installed is the CPU package's files
    assert first(text) == "cpu-and-gpu-installed"


@pytest.mark.parametrize(
    "text",
    [
        "make sure onnxruntime-gpu is installed" + CPU_LIST,  # advice names it, nothing says it is there
        "get_available_providers() shows only CPUExecutionProvider and AzureExecutionProvider",
        "the available providers are just CPU",
        "WARN: CUDAExecutionProvider not available, falling back to CPUExecutionProvider",  # the app's own check
        "ort.get_device() returns CPU",
        "the installed onnxruntime is the CPU only build",
        "our setup.py pins onnxruntime>=1.16\nbut the GPU is not used at all",
        "implementation 'com.microsoft.onnxruntime:onnxruntime:1.17.0'\nand CUDA is not available in the JVM",
        '[tool.poetry.dependencies]\nonnxruntime = "^1.16"\nit only runs on the CPU',
    ],
)
def test_a_cpu_build_shown_in_any_form_is_the_cpu_package(text: str):
    assert first(text) == "cpu-package-only"


def test_a_session_without_cuda_where_the_build_lists_it_is_the_provider_failing():
    available = "available: ['CUDAExecutionProvider', 'CPUExecutionProvider']\n"
    assert first(available + "session.get_providers() -> ['CPUExecutionProvider']") == "gpu-provider-failed"
    # the CPU session of a timing comparison beside a CUDA session is no failure
    both = "cpu sess.get_providers(): ['CPUExecutionProvider']\ngpu sess.get_providers(): ['CUDAExecutionProvider']"
    assert first(available + both) is None
    # what code asks for is not what a session got
    assert first(available + 'InferenceSession(p, providers=["CPUExecutionProvider"])') is None


def test_the_ultralytics_autoupdate_that_failed_installed_nothing():
    text = (
        "I have onnxruntime-gpu\nrequirements: Ultralytics requirement ['onnxruntime'] not found, attempting "
        "AutoUpdate...\nRetry 1/2 failed: Command 'pip install onnxruntime' returned non-zero exit status 1."
    )
    assert first(text) is None


# --- libraries, by which one is missing and why ---------------------------------------------------------------------


def test_python_37s_bare_dll_load_failure_under_onnxruntimes_module_is_its_runtime():
    text = (
        '  File "D:\\py37\\lib\\site-packages\\onnxruntime\\capi\\_pybind_state.py", line 13, in <module>\n'
        "    from .onnxruntime_pybind11_state import *  # noqa\n"
        "ImportError: DLL load failed: The specified procedure could not be found."
    )
    assert first(text) == "msvc-runtime-missing"
    torch = 'File "x\\torch\\__init__.py"\nImportError: DLL load failed while importing _C: module not found'
    assert first(torch) != "msvc-runtime-missing"


def test_a_name_next_to_chinese_text_is_read_whole():
    text = "运行时程序在zlibwapi.dll这里报错, 找不到cublasLt64_11.dll文件"
    codes = [f.code for f in analyze_log(text, matrix=MATRIX)]
    assert "cuda-library-missing" in codes and "zlibwapi-missing" in codes


@pytest.mark.parametrize(
    "text",
    [
        "Windows event log: Faulting module name: cudnn_ops_infer64_8.dll, Exception code: 0xc0000409",
        "程序崩溃, 报错出现在cudnn64_8.dll里面",
        "python main.py --gpu\n(the window just closes without any error) Windows 11, cuDNN 8.6, CUDA 11.7",
    ],
)
def test_cudnn_8_aborting_on_windows_is_the_missing_zlibwapi(text: str):
    assert first(text) == "zlibwapi-missing"


def test_an_abort_code_is_read_wherever_it_is():
    # the scanner reads shapes with digits as 0: keywords with digits must be read the same way
    filler = "x" * 80 + "\n"
    text = filler * 30 + "exited with 0xC0000409\n" + filler * 30
    assert any("0xC0000409" in line for _, line in candidate_lines(text))


def test_a_fault_inside_cudnn_said_to_be_badly_installed_is_cudnn():
    text = "Exception thrown at 0x00007FF8 (cudnn_cnn_infer64_8.dll)\nturned out I hadn't installed cuDNN properly"
    assert first(text) == "cudnn-missing"


def test_what_is_only_guessed_or_given_as_an_example_is_no_evidence():
    assert first("Maybe zlibwapi.dll is missing?") is None
    example = "if it is showing Could not load dynamic library 'libcudart.so.10.0', you need CUDA 10.0"
    assert first(example) is None
    listing = "lib/\n  onnxruntime.dll  onnxruntime_providers_cuda.dll  onnxruntime_providers_shared.dll"
    assert first(listing) is None


def test_another_builds_copy_found_first_is_a_path_problem():
    text = "ImportError: version `libcublas.so.11' not defined in file libcublas.so.11 with link time reference"
    assert first(text) == "library-not-on-path"


@pytest.mark.parametrize(
    ("text", "library"),
    [
        ("Could not load dynamic library 'libcufft.so.10'", "cufft"),
        ("cupti64_2023.1.1.dll could not be located", "cupti"),
        ("the loader says lib_cudnn_graph.so.9 cannot be found", "cudnn"),
    ],
)
def test_a_missing_library_in_more_words(text: str, library: str):
    found = analyze_log(text, matrix=MATRIX)
    assert found and found[0].library == library


def test_cudnn_failing_while_a_session_starts_is_cudnn_and_any_other_cuda_call_the_provider():
    init = "Exception during initialization: cuda_call.cc:121 CudaCall CUDNN failure 4: CUDNN_STATUS_INTERNAL_ERROR"
    assert first(init) == "cudnn-missing"
    other = "Exception during initialization: cuda_call.cc:123 CUBLAS failure 1: CUBLAS_STATUS_NOT_INITIALIZED"
    assert first(other) == "gpu-provider-failed"


def test_a_frameworks_runtime_version_with_the_gpu_unused_and_a_build_of_another_major():
    text = (
        "onnxruntime-gpu      1.14.1\nW0101 gpu_resources.cc:61] Driver API Version: 11.7, Runtime API Version: 10.2\n"
        "the pipeline cannot use the GPU"
    )
    assert first(text) == "cuda-major-mismatch"


# --- the driver, the container, the device ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("CUDA error 222: the provided PTX was compiled with an unsupported toolchain", "driver-too-old"),
        ('kubectl describe pod\nFailed to parse provider option "device_id": invalid device ordinal', "gpu-hidden"),
        (
            "docker compose up\ninside the container I cannot run nvidia-smi\nCUDA failure 999: unknown error",
            "gpu-hidden",
        ),
        (
            "docker run app\ntorch.cuda.is_available() -> False\ncuda_call.cc:121 CudaCall CUDA failure 100",
            "gpu-hidden",
        ),
        ("nvidia-container-cli: initialization error: nvml error: driver not loaded", "no-driver"),
        (
            "kernel driver does not appear to be running on this host: /proc/driver/nvidia/version does not exist",
            "no-driver",
        ),
    ],
)
def test_the_driver_and_the_device_in_other_words(text: str, code: str):
    assert first(text) == code


def test_the_jetson_wheel_rule_is_for_python_only():
    said = "Jetson Orin, JetPack 6\nCUDA execution provider is not enabled in this build."
    assert first(said + "\nimport onnxruntime  # python3 app.py") == "no-wheel-for-platform"
    assert first(said + "\ngo run ./cmd/detect (onnxruntime_go with libonnxruntime.so)") == "cpu-package-only"


# --- TensorRT ---------------------------------------------------------------------------------------------------


def test_tensorrt_failing_on_the_model_is_not_tensorrt_missing():
    text = (
        "EP Error: [ONNXRuntimeError] : 1 : FAIL : TensorRT EP could not build engine for fused node\n"
        " when using ['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']\n"
        "Falling back to ['CUDAExecutionProvider', 'CPUExecutionProvider'] and retrying."
    )
    assert first(text) is None


def test_tensorrt_of_another_major_said_present():
    text = "Could not load dynamic library 'libnvinfer.so.7'\nmy libnvinfer.so.8 is located in /opt/TensorRT-8.6/lib"
    assert first(text) == "tensorrt-major-mismatch"


def test_the_tensorrt_placeholder_in_pypis_words():
    text = "pip install tensorrt\nWARNING: This project is not functional and is a placeholder from NVIDIA."
    assert first(text) == "tensorrt-install-failed"


# --- nodes, speed, results ----------------------------------------------------------------------------------------


def test_nodes_forced_to_the_cpu():
    line = (
        "[W:onnxruntime:Ort, fallback_cpu_capability.h:140 GetCpuPreferedNodes] Force fallback to CPU execution for "
        "node: 7"
    )
    assert first(line) == "nodes-on-cpu"


@pytest.mark.parametrize(
    "text",
    [
        "the GPU run is not faster than the CPU run at all",
        "with cuda there is no speed-up over the cpu",
        "VRAM fills up but the gpu inference is extremely slow",
        "我发现cpu居然比gpu快",
    ],
)
def test_no_speed_up_said_in_words(text: str):
    assert first(text) == "gpu-slower-than-cpu"


def test_the_gpu_said_faster_is_no_finding():
    assert first("on my RTX 3060 the GPU is 6x faster than the CPU") is None


@pytest.mark.parametrize(
    "text",
    [
        "CUDAExecutionProvider and CPUExecutionProvider produce different labels for the same image",
        "with the CUDA provider the accuracy drops from 91% to 84%",
        "GPU推理的结果是错误的, CPU正常",
    ],
)
def test_results_said_to_differ_in_more_words(text: str):
    assert first(text) == "gpu-results-differ"


def test_removing_the_cpu_package_beside_the_gpu_one_leaves_its_files_missing():
    text = (
        "$ pip uninstall -y onnxruntime\nSuccessfully uninstalled onnxruntime-1.17.1\n"
        "$ python app.py\nModuleNotFoundError: No module named 'onnxruntime'\n(onnxruntime-gpu 1.17.1 is still listed)"
    )
    assert first(text) == "package-files-missing"
    # no GPU package beside it: onnxruntime is simply not installed
    assert first(text.replace("(onnxruntime-gpu 1.17.1 is still listed)", "")) == "onnxruntime-not-installed"


def test_advice_to_update_the_driver_is_no_evidence_but_updating_it_fixing_it_is():
    failed = "Failed to create CUDAExecutionProvider\n"
    assert first(failed + "maintainer: please update your nvidia driver and try again") == "gpu-provider-failed"
    assert first(failed + "updating my nvidia driver to 551.23 fixed it") == "driver-too-old"


def test_a_windows_path_written_with_slashes_is_no_macos():
    text = 'session = InferenceSession("C:/Users/ana/model.onnx")\nCould not locate cudnn_ops_infer64_8.dll'
    assert first(text) == "cudnn-missing"


def test_onnxruntime_dll_itself_failing_to_load_needs_the_visual_cpp_runtime_since_1_9():
    failed = "System.DllNotFoundException: Unable to load DLL 'onnxruntime': The specified module could not be found."
    # since 1.9 CUDA is loaded from the provider's DLL: onnxruntime.dll needs only the VC++ runtime besides Windows
    assert first(f"Microsoft.ML.OnnxRuntime.Gpu 1.16.3\n{failed}") == "msvc-runtime-missing"
    assert first(failed) == "msvc-runtime-missing"  # no release named: one since 1.9 (the CPU package: always)
    # a release before 1.9 named: its onnxruntime.dll linked CUDA and cuDNN itself
    assert first(f"Microsoft.ML.OnnxRuntime.Gpu 1.5.2\n{failed}") == "cuda-library-missing"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("I installed onnxruntime 1.17 and my RTX 3060 is not used, everything runs on the CPU", "cpu-package-only"),
        ("a few ops (NonZero, Resize) fall back to the CPU", "nodes-on-cpu"),
        ("GridSample is not supported by the CUDA execution provider, so that part runs elsewhere", "nodes-on-cpu"),
        ("it fails to create the CUDA provider and quietly uses the CPU", "gpu-provider-failed"),
        ("the app prints: cuDNN not found, GPU acceleration disabled", "cudnn-missing"),
        ("missing cublas dll when I turn the GPU on", "cuda-library-missing"),
        (
            "onnxruntime-gpu 1.20.1 requires CUDA 12 but I have CUDA 11.8 installed; the provider fails",
            "cuda-major-mismatch",
        ),
    ],
)
def test_causes_told_in_prose(text: str, code: str):
    assert first(text) == code


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("after installing the CUDA 11.8 toolkit it works now", "cuda-library-missing"),
        ("Solved by installing cuDNN 8.9 and adding its bin folder to PATH", "cudnn-missing"),
        ("downloaded zlib123dllx64 and now the GPU run works", "zlibwapi-missing"),
        ("I fixed it by reinstalling the NVIDIA driver", "driver-library-mismatch"),
        (
            "I'm on the CPU version of onnxruntime; how do I get the GPU?".replace("on the", "using the"),
            "cpu-package-only",
        ),
        (
            "I had onnxruntime installed before installing onnxruntime-gpu, and only the CPU works",
            "cpu-and-gpu-installed",
        ),
        ("I have both the CPU and the GPU version of onnxruntime installed", "cpu-and-gpu-installed"),
    ],
)
def test_what_fixed_it_and_what_is_installed_said_in_prose(text: str, code: str):
    assert first(text) == code


def test_a_fix_that_did_not_work_is_no_evidence():
    assert first("installing CUDA 12.4 didn't fix it") is None


@pytest.mark.parametrize(
    "text",
    [
        "inference speed on GPU is lower than on CPU",
        "performance with CUDAExecutionProvider is worse than with CPUExecutionProvider",
        "the CPU outperforms the GPU on this model",
        "the GPU version takes more time than the CPU version",
        "using CUDA takes 3x longer than the CPU",
    ],
)
def test_the_gpu_slower_in_more_words(text: str):
    assert first(text) == "gpu-slower-than-cpu"


def test_an_entry_point_missing_from_the_cpp_runtime_or_onnxruntimes_module_is_an_old_visual_cpp_runtime():
    text = "The procedure entry point ?_Xbad@std@@YAXXZ could not be located in the dynamic link library MSVCP140.dll"
    assert first(text) == "msvc-runtime-missing"


def test_no_cuda_toolkit_said_with_the_gpu_unused_is_cuda_missing():
    assert first("I don't have the CUDA toolkit installed, and the GPU isn't used") == "cuda-library-missing"


@pytest.mark.parametrize(
    "text",
    [
        "I installed CUDA 12.4 and cuDNN 9.1, everything works fine with torch and onnxruntime-gpu",
        "Successfully installed flatbuffers-24.3.25 onnxruntime-gpu-1.20.1\n>>> ort.get_device()\n'GPU'",
        "[W:onnxruntime:, graph.cc:3593 CleanUnusedInitializersAndNodeArgs] Removing initializer 'x'. It is not used",
        "The GPU inference time is 5 ms and the CPU takes 50 ms, as expected.",
        "TensorRT warning: Device memory is insufficient to use tactic; skipping tactic 3",
        "the providers are ['CUDAExecutionProvider', 'CPUExecutionProvider'] and nvidia-smi shows 90% utilisation",
        "question: does onnxruntime-gpu 1.19 support IOBinding on the CUDA provider? everything else works",
        "The bug was fixed in CUDA 12.2, see the release notes",
    ],
)
def test_healthy_logs_and_questions_give_no_finding(text: str):
    assert first(text) is None


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("I ran the container without --gpus and onnxruntime falls back to the CPU", "gpu-hidden"),
        (
            "Failed to initialize NVML: Driver/library version mismatch\nafter a reboot it works again",
            "driver-library-mismatch",
        ),
        ("after the driver update CUDA failure 999 came; rebooting the machine fixed it", "driver-library-mismatch"),
        (
            "NVIDIA-SMI 470.57.02   Driver Version: 470.57.02\nonnxruntime-gpu 1.20.0\nFailed to create CUDA provider",
            "driver-too-old",
        ),
        (
            "RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
            "unsupported-gpu-arch",
        ),
        ("onnxruntime is not installed in this environment", "onnxruntime-not-installed"),
        ("restarting the pod resolves it; nvidia-container-cli: nvml error: driver not loaded", "no-driver"),
    ],
)
def test_the_driver_container_and_install_in_prose(text: str, code: str):
    assert first(text) == code


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (
            "onnxruntime-gpu is not installed\nAvailable providers: 'AzureExecutionProvider, CPUExecutionProvider'",
            "cpu-package-only",
        ),
        ("fixed by installing onnxruntime-gpu instead of onnxruntime", "cpu-package-only"),
        ("replace onnxruntime with onnxruntime-gpu in requirements.txt and it worked", "cpu-package-only"),
        ("rembg pulls in onnxruntime as a dependency and the GPU is not used", "cpu-package-only"),
        ("rembg pulls in onnxruntime as a dependency, and I also use onnxruntime-gpu", "cpu-and-gpu-installed"),
        ("my requirements.txt has both onnxruntime and onnxruntime-gpu", "cpu-and-gpu-installed"),
        ("onnxruntime conflicts with onnxruntime-gpu in the same venv", "cpu-and-gpu-installed"),
    ],
)
def test_the_two_packages_in_prose(text: str, code: str):
    assert first(text) == code


# --- third round: cuBLAS that cannot start, cuDNN's frontend, a machine run on the CPU alone ----------------------

_CUBLAS_14 = (
    "Exception during initialization: cuda_call.cc:146 CudaCall CUBLAS failure 14: an internal operation failed ; "
    "GPU=0 ; hostname=box ; file=cuda_execution_provider.cc ; line=245 ; expr=cublasCreate(&cublas_handle_);"
)


def _findings(text: str) -> list:
    return analyze_log(text, matrix=MATRIX)


def test_cublas_that_cannot_start_is_read_with_what_else_the_log_shows():
    # status 14 (CUBLAS_STATUS_INTERNAL_ERROR; cuBLAS 12+ prints "an internal operation failed") at cublasCreate:
    # alone it is most often no code the GPU may run, said as likely, with the other causes named
    alone = _findings(_CUBLAS_14)
    assert alone[0].code == "unsupported-gpu-arch"
    assert "most often" in alone[0].title and "memory" in alone[0].title
    # the same failure where the log shows the GPU's memory full: that is the cause
    full = _findings("nvidia-smi: 23900MiB / 24576MiB\nCUDA out of memory. Tried to allocate 2.00 GiB\n" + _CUBLAS_14)
    assert full[0].code == "gpu-out-of-memory"
    assert "unsupported-gpu-arch" not in [f.code for f in full]
    # with CUDA_FORCE_PTX_JIT=1 shown, the driver ignores the kernels: the fix unsets it, no other build is proposed
    forced = _findings("$ export CUDA_FORCE_PTX_JIT=1\n" + _CUBLAS_14)
    assert forced[0].code == "unsupported-gpu-arch" and "CUDA_FORCE_PTX_JIT" in forced[0].title
    assert forced[0].fix.startswith("unset CUDA_FORCE_PTX_JIT")
    no_image = _findings(
        "CUDA_FORCE_PTX_JIT=1 python run.py\nStatus Message: CUDA error cudaErrorNoKernelImageForDevice:no kernel "
        "image is available for execution on the device"
    )
    assert no_image[0].fix.startswith("unset CUDA_FORCE_PTX_JIT")
    assert first("CUDA_FORCE_PTX_JIT=0\n" + _CUBLAS_14) == "unsupported-gpu-arch"
    assert "unset" not in _findings("CUDA_FORCE_PTX_JIT=0\n" + _CUBLAS_14)[0].fix


def test_cudnn_frontend_failing_in_a_node_is_the_provider_failing_at_run_time():
    # cuDNN 9's graph API (ONNX Runtime's Conv) reports CUDNN_FE failures: the provider loaded, a kernel failed
    text = (
        "Non-zero status code returned while running Conv node. Name:'stem' Status Message: CUDNN_FE failure 11: "
        "CUDNN_BACKEND_API_FAILED ; GPU=0 ; file=conv.cc ; expr=s_.cudnn_fe_graph->execute(handle, pack, ws);"
    )
    assert first(text) == "gpu-provider-failed"


@pytest.mark.parametrize(
    "said", ["I am using the webui only with CPU.", "I'm running ComfyUI only on the CPU", "I use it only with CPU"]
)
def test_cuda_35_on_a_machine_the_user_runs_on_the_cpu_alone_is_no_driver(said: str):
    failure = (
        "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; "
        "expr=cudaSetDevice(info_.device_id);"
    )
    assert first(said + "\n" + failure) == "no-driver"
    # a program said to run only on the CPU is no machine without a GPU
    assert first("onnxruntime runs only on the CPU\n" + failure) == "driver-too-old"


# --- round 4: reader bugs --------------------------------------------------------------------------------------


def test_a_session_that_ran_on_cuda_proves_the_gpu_build_and_a_sentence_is_no_pip_row():
    # our H100 capture: "onnxruntime 1.31.1: session ran on CUDAExecutionProvider" was read as pip's row of the CPU
    # package; a pip row is a name and a version alone on the line (maybe a location, a build, a channel)
    log = (Path(__file__).parents[2] / "docs/gpu/h100-ctx-clash-private.log").read_text(encoding="utf-8")
    assert [f.code for f in analyze_log(log, matrix=MATRIX)][:1] == ["cuda-context-conflict"]
    assert "cpu-package-only" not in [f.code for f in analyze_log(log, matrix=MATRIX)]
    listed = "$ pip list\nPackage     Version\nonnxruntime 1.20.1\nnumpy       1.26.4\n"
    # a session's providers or an available list holding CUDA prove the GPU build whatever pip lists
    assert first(listed + "sess.get_providers(): ['CUDAExecutionProvider', 'CPUExecutionProvider']") != (
        "cpu-package-only"
    )
    assert first(listed + "the session runs on CUDAExecutionProvider and is slow") != "cpu-package-only"
    # the same listing beside a CPU build's providers is the CPU package
    assert first(listed + "print(ort.get_available_providers())\n['CPUExecutionProvider']") == "cpu-package-only"


def test_utf16_text_shown_letter_spaced_is_read():
    # UTF-16 shown one byte per character, its NULs as spaces (an original space becomes three)
    line = 'Error loading "C:\\app\\onnxruntime_providers_cuda.dll" which depends on "cudnn64_9.dll" which is missing.'
    spaced = "".join(ch + " " for ch in line)
    assert unspaced(spaced) == line
    assert first(spaced) == "cudnn-missing"
    truncated = "E r r o r ... o n n x r u n t i m e _ p r o v i d e r s _ c u d a . d l l"
    assert unspaced(truncated) == "Error...onnxruntime_providers_cuda.dll"
    # ordinary text, a short spaced run and a listing stay as they are
    for text in ("Hello world, this is a log line", "a b c", "torch    2.1.0", "numpy    1.26.4"):
        assert unspaced(text) == text
    # the scan finds such lines though no keyword is in them as written, the first line too
    assert [line for _, line in candidate_lines(spaced + "\nok\n" + spaced)] == [line, "ok", line]


def test_cuda_path_set_alone_is_a_dll_the_provider_links_missing():
    # onnxruntime_pybind_state.cc throws it exactly when TryGetProviderInfo_CUDA() found no provider (its DLL did not
    # load) and CUDA_PATH is set: the label convention of docs/verify-doctor.md
    text = (
        "onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasnt able to be loaded. "
        "Please install the correct version of CUDA and cuDNN as mentioned in the GPU requirements page"
    )
    assert first(text) == "cuda-library-missing"
    assert first(text + "\nI have CUDA 12.4 and cuDNN 8.9 installed, onnxruntime-gpu 1.20.1") != "gpu-provider-failed"
