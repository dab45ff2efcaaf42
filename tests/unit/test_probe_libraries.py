"""provisioner.probe.libraries: saved `ldconfig -p` text, and fake Linux / Windows trees (name matching:
test_standalone.py)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from provisioner.facts import NvidiaWheel, TorchInfo
from provisioner.probe import libraries

if TYPE_CHECKING:
    from pathlib import Path

# Saved from a Debian 12 container with the CUDA 13 toolkit and cuDNN 9 (trimmed), plus a 32-bit entry.
LDCONFIG_TEXT = """1247 libs found in cache `/etc/ld.so.cache'
\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1
\tlibnvrtc.so.13 (libc6,x86-64) => /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13
\tlibnvrtc-builtins.so.13.0 (libc6,x86-64) => /usr/local/cuda/lib64/libnvrtc-builtins.so.13.0
\tlibcudnn_ops.so.9 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn_ops.so.9
\tlibcudnn.so.9 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn.so.9
\tlibcudnn.so (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn.so
\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13
\tlibcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1
\tlibcuda.so.1 (libc6) => /lib/i386-linux-gnu/libcuda.so.1
\tlibcublasLt.so.13 (libc6,x86-64) => /usr/local/cuda/targets/x86_64-linux/lib/libcublasLt.so.13
\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6
"""


def test_parse_ldconfig_keeps_this_architecture() -> None:
    entries = libraries.parse_ldconfig(LDCONFIG_TEXT, "x86_64")
    assert ("libcuda.so.1", "/lib/x86_64-linux-gnu/libcuda.so.1") in entries
    assert ("libcuda.so.1", "/lib/i386-linux-gnu/libcuda.so.1") not in entries
    assert ("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6") in entries
    assert len(entries) == 10
    assert len(libraries.parse_ldconfig(LDCONFIG_TEXT, None)) == 11
    assert libraries.parse_ldconfig(LDCONFIG_TEXT, "aarch64") == []


def test_ldconfig_hits_are_cuda_libraries_only() -> None:
    hits = libraries.find_libraries([], libraries.parse_ldconfig(LDCONFIG_TEXT, "x86_64"))
    assert [(h.library, h.major, h.source) for h in hits] == [
        ("nvrtc", "13", "ldconfig"),
        ("cudnn", "9", "ldconfig"),
        ("cudart", "13", "ldconfig"),
        ("cuda", "1", "ldconfig"),
        ("cublasLt", "13", "ldconfig"),
    ]


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    return path


def linux_tree(root: Path) -> dict[str, Path]:
    """site-packages with torch's CUDA 13 wheels and a pip cuDNN, a toolkit, LD_LIBRARY_PATH, WSL folder."""
    site = root / "venv/lib/python3.12/site-packages"
    paths = {
        "pip_cudart": touch(site / "nvidia/cu13/lib/libcudart.so.13"),
        "pip_cublas": touch(site / "nvidia/cu13/lib/libcublas.so.13"),
        "pip_cudnn": touch(site / "nvidia/cudnn/lib/libcudnn.so.9"),
        "cudnn8": touch(site / "nvidia/cudnn8/lib/libcudnn.so.8"),
        "torch_lib": touch(site / "torch/lib/libcudnn.so.8"),
        "driver": touch(root / "usr/local/nvidia/lib64/libcuda.so.1"),
        "toolkit": touch(root / "usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12"),
        "toolkit64": touch(root / "usr/local/cuda-12.4/lib64/libcufft.so.11"),
        "wsl": touch(root / "usr/lib/wsl/lib/libcuda.so.1"),
    }
    (root / "usr/local/cuda").symlink_to(root / "usr/local/cuda-12.4")
    paths["site"] = site
    return paths


def test_linux_tree_sources_and_order(tmp_path: Path) -> None:
    paths = linux_tree(tmp_path)
    site = paths["site"]
    wheels = (
        NvidiaWheel("nvidia-cuda-runtime", "13.0.96", "cudart", 13, (str(site / "nvidia/cu13/lib"),)),
        NvidiaWheel("nvidia-cudnn-cu13", "9.13.0.50", "cudnn", 13, (str(site / "nvidia/cudnn/lib"),)),
        NvidiaWheel("nvidia-cudnn-cu11", "8.9.6", "cudnn", 11, (str(site / "nvidia/cudnn8/lib"),)),
    )
    torch = TorchInfo("2.11.0+cu130", "13.0", str(site))
    env = {"LD_LIBRARY_PATH": f"{tmp_path}/usr/local/nvidia/lib64::{tmp_path}/missing"}
    places = libraries.search_places(
        windows=False,
        wheels=wheels,
        torch=torch,
        torch_requires=("nvidia-cuda-runtime",),
        env=env,
        root=tmp_path,
    )
    sources = [place.source for place in places]
    assert sources.index("ld_library_path") < sources.index("ldconfig") < sources.index("cuda_toolkit")
    assert sources[-1] == "wsl"
    ldconfig = [("libcudnn.so.9", str(paths["pip_cudnn"])), ("libcuda.so.1", "/nonexistent/libcuda.so.1")]
    hits = {(h.library, h.major, h.source, h.path) for h in libraries.find_libraries(places, ldconfig)}
    assert hits == {
        ("cudart", "13", "torch", str(paths["pip_cudart"])),  # torch requires nvidia-cuda-runtime
        (
            "cudnn",
            "9",
            "pip",
            str(paths["pip_cudnn"]),
        ),  # installed on its own; the ldconfig duplicate is dropped
        ("cudnn", "8", "pip", str(paths["cudnn8"])),
        ("cudnn", "8", "torch", str(paths["torch_lib"])),  # bundled in torch/lib
        ("cuda", "1", "ld_library_path", str(paths["driver"])),
        ("cuda", "1", "ldconfig", "/nonexistent/libcuda.so.1"),
        ("cublas", "13", "torch", str(paths["pip_cublas"])),  # same folder: nvidia/cu13/lib
        # once each, though /usr/local/cuda links to /usr/local/cuda-12.4:
        (
            "cudart",
            "12",
            "cuda_toolkit",
            str(tmp_path / "usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.12"),
        ),
        ("cufft", "11", "cuda_toolkit", str(tmp_path / "usr/local/cuda/lib64/libcufft.so.11")),
        ("cuda", "1", "wsl", str(paths["wsl"])),
    }


def test_without_torch_wheels_are_pip(tmp_path: Path) -> None:
    paths = linux_tree(tmp_path)
    wheel = NvidiaWheel("nvidia-cuda-runtime", "13.0.96", "cudart", 13, (str(paths["site"] / "nvidia/cu13/lib"),))
    places = libraries.search_places(
        windows=False, wheels=[wheel], torch=None, torch_requires=("nvidia-cuda-runtime",), root=tmp_path
    )
    found = [h for h in libraries.find_libraries(places) if h.library == "cudart" and h.major == "13"]
    assert [h.source for h in found] == ["pip"]


def test_windows_tree(tmp_path: Path) -> None:
    """PATH, CUDA_PATH\\bin, System32 and a pip wheel's bin folder, with *64_N.dll names."""
    site = tmp_path / "Python312/Lib/site-packages"
    toolkit = tmp_path / "CUDA/v11.8"
    cudnn_zip = tmp_path / "tools/cuda/bin"
    files = [
        touch(site / "nvidia/cudnn/bin/cudnn64_9.dll"),
        touch(site / "nvidia/cudnn/bin/cudnn_ops64_9.dll"),
        touch(site / "torch/lib/cudnn64_8.dll"),
        touch(toolkit / "bin/cudart64_110.dll"),
        touch(toolkit / "bin/cublas64_11.dll"),
        touch(toolkit / "bin/cublasLt64_11.dll"),
        touch(toolkit / "bin/nvrtc64_112_0.dll"),
        touch(cudnn_zip / "cudnn64_8.dll"),
        touch(tmp_path / "Windows/System32/nvcuda.dll"),
    ]
    del files
    env = {
        "PATH": f"{toolkit / 'bin'};{cudnn_zip};C:\\nonexistent",
        "CUDA_PATH": str(toolkit),
        "CUDA_PATH_V11_8": str(toolkit),
        "SystemRoot": str(tmp_path / "Windows"),
    }
    wheel = NvidiaWheel("nvidia-cudnn-cu12", "9.1.0.70", "cudnn", 12, (str(site / "nvidia/cudnn/bin"),))
    torch = TorchInfo("2.1.2+cu118", "11.8", str(site))
    places = libraries.search_places(windows=True, wheels=[wheel], torch=torch, env=env)
    hits = [(h.library, h.major, h.filename, h.source) for h in libraries.find_libraries(places, windows=True)]
    assert hits == [
        ("cudnn", "9", "cudnn64_9.dll", "pip"),
        ("cudnn", "8", "cudnn64_8.dll", "torch"),
        ("cuda", None, "nvcuda.dll", "system"),  # System32 comes before PATH in Windows' search order
        ("cublas", "11", "cublas64_11.dll", "path"),
        ("cublasLt", "11", "cublasLt64_11.dll", "path"),
        ("cudart", "11", "cudart64_110.dll", "path"),
        ("nvrtc", "11", "nvrtc64_112_0.dll", "path"),
        ("cudnn", "8", "cudnn64_8.dll", "path"),
    ]


def test_cuda_path_alone_is_searched(tmp_path: Path) -> None:
    touch(tmp_path / "CUDA/v12.9/bin/cublas64_12.dll")
    places = libraries.search_places(windows=True, env={"CUDA_PATH": str(tmp_path / "CUDA/v12.9"), "PATH": ""})
    hits = libraries.find_libraries(places, windows=True)
    assert [(h.library, h.major, h.source) for h in hits] == [("cublas", "12", "cuda_path")]


def test_conda_env_lib_folder(tmp_path: Path) -> None:
    env_prefix = tmp_path / "miniconda3/envs/ocr"
    touch(env_prefix / "lib/libcudart.so.11.0")
    touch(env_prefix / "lib/libcudnn.so.8")
    places = libraries.search_places(windows=False, conda_prefix=str(env_prefix), root=tmp_path)
    hits = [(h.library, h.major, h.source) for h in libraries.find_libraries(places)]
    assert hits == [("cudart", "11", "conda"), ("cudnn", "8", "conda")]
    touch(env_prefix / "Library/bin/cudnn64_8.dll")
    places = libraries.search_places(windows=True, conda_prefix=str(env_prefix), env={})
    assert [(h.filename, h.source) for h in libraries.find_libraries(places, windows=True)] == [
        ("cudnn64_8.dll", "conda")
    ]


@pytest.mark.skipif(not os.path.exists("/etc/ld.so.cache"), reason="no ld.so cache")
def test_real_ldconfig_parses() -> None:
    text = libraries.read_ldconfig()
    entries = libraries.parse_ldconfig(text, os.uname().machine)
    assert entries and all(path.startswith("/") for _, path in entries)
