"""The GPU-code reader (standalone/fatbin.py), the PE reader (standalone/pe.py) and the streamed member of a zip
(ziprange.stream_member), on libraries built here byte by byte: an ELF shared object with a `.nv_fatbin` section
and a PE DLL with a `.nv_fatb` section, import and delay-import tables. The real wheels are read by
bin/derive_release.py and tests/integration/test_closure_pypi.py."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from provisioner.closure import DRIVER, MSVC, ONNXRUNTIME, OS, closure
from provisioner.matrix.query import arch_runs_on, code_summary, gpu_code_for
from provisioner.standalone.fatbin import FatbinError, read_library
from provisioner.standalone.pe import read_imports
from provisioner.ziprange import BytesSource, ZipRangeError, central_directory, stream_member
from tests.support.binaries import GPU_CODE, elf_library, pe_library  # noqa: E402


def chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [7, 64, 4096, 1 << 20])
def test_an_elf_library_read_in_any_chunking_gives_its_code_and_needs(size: int) -> None:
    decoy = struct.pack("<I", 0xBA55ED50) + b"\x07\x00\x99\x00"  # the magic inside code, not a blob
    library = elf_library(["libcublas.so.13", "libcudart.so.13", "libc.so.6"], GPU_CODE, decoy)
    code = read_library(chunks(library, size), len(library))
    assert code.format == "elf"
    assert code.kernels == ["sm_75", "sm_90a", "sm_120a"]
    assert code.ptx == ["compute_90"]
    assert code.blobs == 2 and code.blobs_outside == 1  # __nv_relfatbin's blob is not run: not counted
    assert code.needed == ["libcublas.so.13", "libcudart.so.13", "libc.so.6"]


def test_a_library_without_gpu_code_has_none() -> None:
    library = elf_library(["libnvinfer.so.10"], b"")
    code = read_library(chunks(library, 100), len(library))
    assert code.kernels == [] and code.ptx == [] and code.needed == ["libnvinfer.so.10"]


def test_a_pe_dll_gives_its_imports_delay_loads_and_code() -> None:
    dll = pe_library(["cublasLt64_13.dll", "KERNEL32.dll"], ["cudnn64_9.dll"], GPU_CODE)
    code = read_library(chunks(dll, 33), len(dll))
    assert code.format == "pe"
    assert code.needed == ["cublasLt64_13.dll", "KERNEL32.dll"]
    assert code.delay_loaded == ["cudnn64_9.dll"]
    assert code.kernels == ["sm_75", "sm_90a", "sm_120a"] and code.ptx == ["compute_90"]
    assert read_imports(lambda o, n: dll[o : o + n]) == (["cublasLt64_13.dll", "KERNEL32.dll"], ["cudnn64_9.dll"])


def test_neither_elf_nor_pe_is_refused() -> None:
    with pytest.raises(FatbinError):
        read_library([b"#!/bin/sh\n" + b"\0" * 100], 110)


def test_a_member_is_streamed_out_of_a_zip_and_checked_against_its_crc() -> None:
    library = elf_library(["libcudart.so.12"], GPU_CODE)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("onnxruntime/capi/libonnxruntime_providers_cuda.so", library)
    data = buffer.getvalue()
    member = central_directory(BytesSource(data))["onnxruntime/capi/libonnxruntime_providers_cuda.so"]
    streamed = list(stream_member(BytesSource(data), member, chunk=97))
    assert b"".join(streamed) == library and len(streamed) > 1
    assert read_library(stream_member(BytesSource(data), member, chunk=97), member.size).kernels[0] == "sm_75"
    corrupt = bytearray(data)
    corrupt[data.index(b"PK\x01\x02") + 16] ^= 0xFF  # the CRC-32 the central directory records
    bad = central_directory(BytesSource(bytes(corrupt)))["onnxruntime/capi/libonnxruntime_providers_cuda.so"]
    with pytest.raises(ZipRangeError, match="CRC"):
        list(stream_member(BytesSource(bytes(corrupt)), bad))


@pytest.mark.parametrize(
    ("arch", "cc", "runs"),
    [
        ("sm_86", "8.9", True),  # a cubin runs on the same major, newer minor
        ("sm_86", "8.0", False),
        ("sm_86", "9.0", False),  # not on another major
        ("sm_90a", "9.0", True),
        ("sm_90a", "9.1", False),  # arch-specific: exactly 9.0
        ("sm_120a", "12.1", False),
        ("sm_100f", "10.3", True),  # family: the same major, newer minor
        ("compute_90", "12.1", True),  # PTX: JIT on every newer GPU
        ("compute_90", "8.9", False),
        ("compute_100a", "10.3", False),
        ("compute_120", "12.1", True),
    ],
)
def test_which_code_runs_on_which_gpu(arch: str, cc: str, runs: bool) -> None:
    assert arch_runs_on(arch, cc) is runs


def test_the_best_code_and_its_summary() -> None:
    kernels, ptx = ("sm_75", "sm_80", "sm_86", "sm_90a", "sm_120a"), ()
    assert gpu_code_for(kernels, ptx, "8.9") == ("sm_86", None)
    assert gpu_code_for(kernels, ("compute_80",), "10.0") == (None, "compute_80")
    assert code_summary(kernels, ptx) == "sm_75 80 86 90a 120a, no PTX"
    assert code_summary((), ("compute_90",)) == "no kernels, PTX compute_90"


def test_the_closure_names_what_supplies_each_import() -> None:
    linux = closure(
        "linux-x86_64",
        ["libcublas.so.13", "libcuda.so.1", "libstdc++.so.6", "libonnxruntime_providers_shared.so", "libfoo.so.1"],
        {"nvidia-cublas 13.1.0.3": ["nvidia/cu13/lib/libcublas.so.13"]},
    )
    by = {s.name: s.by for s in linux.supplied}
    assert by == {
        "libcublas.so.13": "nvidia-cublas 13.1.0.3",
        "libcuda.so.1": DRIVER,
        "libstdc++.so.6": OS,
        "libonnxruntime_providers_shared.so": ONNXRUNTIME,
    }
    assert linux.missing == ("libfoo.so.1",) and not linux.complete
    windows = closure(
        "windows-amd64",
        ["CUBLASLT64_13.dll", "MSVCP140.dll", "api-ms-win-crt-heap-l1-1-0.dll", "KERNEL32.dll"],
        {"nvidia-cublas 13.1.0.3": ["nvidia/cu13/bin/x86_64/cublasLt64_13.dll"]},
    )
    assert windows.complete
    assert {s.name: s.by for s in windows.supplied}["MSVCP140.dll"] == MSVC
