"""Libraries built byte by byte for the tests: an ELF shared object with a `.nv_fatbin` section and a PE DLL with a
`.nv_fatb` section, import and delay-import tables (what standalone/fatbin.py and pe.py read in real wheels)."""

from __future__ import annotations

import struct

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
