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

A_FLAG = 0x100000


def entry(kind: int, arch: int, payload: bytes, flags: int = 0x11) -> bytes:
    """One fatbin entry: a 64-byte header (kind, header size, payload size, arch, flags), then the payload."""
    head = struct.pack("<HHIQ", kind, 0x0101, 64, len(payload))
    head += struct.pack("<IIHHIIIQQQ", 0, 0, 8, 1, arch, 0, 0, flags, 0, len(payload))
    return head + payload


def blob(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


GPU_CODE = blob(
    entry(2, 75, b"\x01" * 300),
    entry(2, 90, b"\x02" * 50, 0x11 | A_FLAG),
    entry(1, 90, b"ptx text" * 10),
) + blob(entry(2, 120, b"\x03" * 40, 0x1108011))


def elf_library(needed: list[str], fatbin: bytes, decoy: bytes = b"") -> bytes:
    """A 64-bit little-endian shared object: PT_LOAD + PT_DYNAMIC, .dynstr, .text (with `decoy`), .nv_fatbin,
    __nv_relfatbin (a blob outside the GPU-code section), .dynamic, and the section table at the end."""
    dynstr = b"\0" + b"".join(name.encode() + b"\0" for name in needed)
    offsets, at = [], 1
    for name in needed:
        offsets.append(at)
        at += len(name) + 1
    layout: dict[str, tuple[int, bytes]] = {}
    cursor = 0x200
    for name, data in (
        (".dynstr", dynstr),
        (".text", b"\x90" * 64 + decoy + b"\x90" * 64),
        (".nv_fatbin", fatbin),
        ("__nv_relfatbin", blob(entry(2, 52, b"\x04" * 16))),
    ):
        layout[name] = (cursor, data)
        cursor += len(data) + (-(len(data)) % 8)
    dynamic = b"".join(struct.pack("<qQ", 1, o) for o in offsets)
    dynamic += struct.pack("<qQ", 5, layout[".dynstr"][0]) + struct.pack("<qQ", 0, 0)
    layout[".dynamic"] = (cursor, dynamic)
    cursor += len(dynamic)
    shstrtab = b"\0" + b"".join(n.encode() + b"\0" for n in layout) + b".shstrtab\0"
    layout[".shstrtab"] = (cursor, shstrtab)
    cursor += len(shstrtab) + (-(len(shstrtab)) % 8)
    shoff = cursor
    image = bytearray(shoff + 64 * (len(layout) + 1))
    names_at, position = {}, 1
    for name in layout:
        names_at[name] = position
        position += len(name) + 1
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    header = ident + struct.pack(
        "<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, shoff, 0, 64, 56, 2, 64, len(layout) + 1, len(layout)
    )
    image[: len(header)] = header
    image[64 : 64 + 56] = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, shoff, shoff, 0x1000)
    image[120 : 120 + 56] = struct.pack(
        "<IIQQQQQQ", 2, 6, layout[".dynamic"][0], layout[".dynamic"][0], 0, len(dynamic), len(dynamic), 8
    )
    for offset, data in layout.values():
        image[offset : offset + len(data)] = data
    for index, (name, (offset, data)) in enumerate(layout.items(), start=1):
        row = struct.pack("<IIQQQQIIQQ", names_at[name], 1, 2, offset, offset, len(data), 0, 0, 1, 0)
        image[shoff + 64 * index : shoff + 64 * (index + 1)] = row
    return bytes(image)


def pe_library(imports: list[str], delayed: list[str], fatbin: bytes) -> bytes:
    """A PE32+ DLL: .text, .rdata (import and delay-import tables and names), .nv_fatb."""
    rdata_rva, rdata_raw = 0x2000, 0x400
    names = b"".join(n.encode() + b"\0" for n in imports + delayed)
    table = len(imports) * 20 + 20 + len(delayed) * 32 + 32
    name_rvas, at = [], rdata_rva + table
    for n in imports + delayed:
        name_rvas.append(at)
        at += len(n) + 1
    rdata = b"".join(struct.pack("<IIIII", 1, 0, 0, name_rvas[i], 1) for i in range(len(imports))) + b"\0" * 20
    rdata += (
        b"".join(
            struct.pack("<IIIIIIII", 1, name_rvas[len(imports) + i], 0, 0, 0, 0, 0, 0) for i in range(len(delayed))
        )
        + b"\0" * 32
    )
    rdata += names
    fat_rva, fat_raw = 0x10000, rdata_raw + len(rdata) + (-(len(rdata)) % 0x200)
    sections = [(b".text", 0x1000, 0x100, 0x200, 0x200), (b".rdata", rdata_rva, len(rdata), rdata_raw, len(rdata))]
    sections.append((b".nv_fatb", fat_rva, len(fatbin), fat_raw, len(fatbin)))
    optional = bytearray(240)
    struct.pack_into("<H", optional, 0, 0x20B)
    struct.pack_into("<Q", optional, 24, 0x180000000)
    struct.pack_into("<I", optional, 108, 16)
    struct.pack_into("<II", optional, 112 + 8 * 1, rdata_rva, len(imports) * 20 + 20)
    struct.pack_into("<II", optional, 112 + 8 * 13, rdata_rva + len(imports) * 20 + 20, len(delayed) * 32 + 32)
    head = bytearray(0x80)
    head[:2] = b"MZ"
    struct.pack_into("<I", head, 0x3C, 0x80)
    coff = b"PE\0\0" + struct.pack("<HHIIIHH", 0x8664, len(sections), 0, 0, 0, len(optional), 0x2022)
    table_bytes = b"".join(struct.pack("<8sIIII", n, vs, va, rs, ro) + b"\0" * 16 for n, va, vs, ro, rs in sections)
    image = bytearray(fat_raw + len(fatbin))
    header = bytes(head) + coff + bytes(optional) + table_bytes
    image[: len(header)] = header
    image[rdata_raw : rdata_raw + len(rdata)] = rdata
    image[fat_raw:] = fatbin
    return bytes(image)


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
