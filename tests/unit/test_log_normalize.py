"""doctor --log's normalisation (provisioner/doctor/normalize.py): the lines a program printed, from a paste."""

from __future__ import annotations

import pytest

from provisioner.doctor.normalize import normalise, strip_prefixes, unify


@pytest.mark.parametrize(
    ("pasted", "printed"),
    [
        ("facefusion-docker-facefusion-cuda-1  | Could not load library x.so", "Could not load library x.so"),
        ("app_1    | libcudnn.so.9: cannot open", "libcudnn.so.9: cannot open"),
        ("2023-10-12T14:55:40.727010349Z Could not load library x.so", "Could not load library x.so"),
        ("[2022-06-26 18:42:25] device: GPU", "device: GPU"),
        ("04/06/2025 19:27:09 - ERROR - root - Failed to execute", "root - Failed to execute"),
        (
            "Jun 17 15:04:37 doks-gate-6 python3[2029]: UserWarning: Specified provider",
            "UserWarning: Specified provider",
        ),
        ("[ace-server] INFO: Failed to create CUDAExecutionProvider", "Failed to create CUDAExecutionProvider"),
        ("INFO:memo:Processing image /home/memo/a.png", "Processing image /home/memo/a.png"),
        (">>> ort.get_available_providers()", "ort.get_available_providers()"),
        ("F0524 09:04:15.975416  9945 common.cpp:152] Check failed", "Check failed"),
        ("│ ❱ 463 │   sess.initialize_session(providers)        │", "❱ 463 │   sess.initialize_session(providers)"),
    ],
)
def test_prefixes_are_stripped(pasted: str, printed: str):
    assert normalise(pasted) == [printed]


def test_onnxruntime_own_severity_prefix_is_kept_and_starts_a_record():
    text, record = strip_prefixes("[E:onnxruntime:Default, provider_bridge_ort.cc:1745] Failed")
    assert text.startswith("[E:onnxruntime") and record


def test_quotes_and_apostrophes_are_ascii_and_other_scripts_stay():
    assert unify("CUDA wasn’t able to be loaded “x” ‘y’") == "CUDA wasn't able to be loaded \"x\" 'y'"
    assert normalise("动态链接库(DLL)初始化例程失败。") == ["动态链接库(DLL)初始化例程失败。"]
    assert normalise("当前可用的 ONNX Runtime 提供程序只有：[CPU]") == ["当前可用的 ONNX Runtime 提供程序只有:[CPU]"]


def test_a_name_cut_by_a_wrap_is_joined():
    assert normalise("] Failed to create CUDAE\nxecutionProvider. Require cuDNN 9.*") == [
        "] Failed to create CUDAExecutionProvider. Require cuDNN 9.*"
    ]
    long = "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.1"
    assert normalise(f"{long}\n1: cannot open shared object file") == [f"{long}1: cannot open shared object file"]


def test_a_hard_wrap_at_the_paste_width_is_joined_as_it_was():
    lines = [
        "965 onnxruntime::python::CreateExecutionProviderInstance] Failed to create CUDAE",
        "xecutionProvider. Require cuDNN 9.* and CUDA 12.*, and the latest MSVC runtime.",
        "Please install all dependencies as mentioned in the GPU requirements page (https",
        "://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requireme",
        "nts), make sure they're in the PATH.",
    ]
    joined = normalise("\n".join(lines))
    assert joined[0].endswith(
        "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*, and the latest "
        "MSVC runtime. Please install all dependencies as mentioned in the GPU requirements page "
        "(https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements), "
        "make sure they're in the PATH."
    )


def test_a_soft_wrap_leaves_its_space_and_is_joined():
    first = "2025-11-08 19:02:18.488327179 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:861] Failed to create "
    assert normalise(f"{first}\nCUDAExecutionProvider. Please reference") == [
        "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:861] Failed to create CUDAExecutionProvider. Please "
        "reference"
    ]


def test_lines_that_are_not_wrapped_stay_apart():
    # a line ending in a complete name and a new record; two error lines; a table's rows; a new timestamped record
    assert len(normalise("libcudnn.so.9: cannot open shared object file\nlibcudnn_ops.so.9: cannot open")) == 2
    table = "| NVIDIA-SMI 515.48.07    Driver Version: 515.48.07    CUDA Version: 11.7     |\n" * 3
    assert len(normalise(table.strip())) == 3
    # aligned rows of a listing are as wide as each other without being cut (conda list, pip list)
    rows = "onnxruntime               1.15.1                   pypi_0    pypi\n" * 3
    assert len(normalise(rows.strip())) == 3
    record = "2024-01-01 10:00:00 [E:onnxruntime:x] Failed to create " + "x" * 60
    assert len(normalise(f"{record}\n2024-01-01 10:00:01 second record")) == 2


def test_a_line_printed_again_and_again_sets_no_wrap_width():
    applied = "Applied providers: ['CPUExecutionProvider'], with options: {'CPUExecutionProvider': {}}"
    text = "\n".join(f"{applied}\nfind model: /m/{name}.onnx landmark" for name in ("a", "b", "c"))
    assert normalise(text).count(applied) == 3  # each record stays a line of its own


@pytest.mark.parametrize(
    ("pasted", "printed"),
    [
        (
            "Specified provider &#39;CUDAExecutionProvider&#39; is not",
            "Specified provider 'CUDAExecutionProvider' is not",
        ),
        ("when trying to load &quot;x.dll&quot;", 'when trying to load "x.dll"'),
        ("libcudnn\\_cnn\\_infer.so.8: cannot open", "libcudnn_cnn_infer.so.8: cannot open"),
        ("Out[3]: 'CPU'", "'CPU'"),
    ],
)
def test_what_a_web_page_markdown_or_a_notebook_added_is_undone(pasted: str, printed: str):
    assert normalise(pasted) == [printed]
