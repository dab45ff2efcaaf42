"""Read what the dynamic loader reads from an ELF shared object: DT_NEEDED, RPATH, RUNPATH and SONAME; and the
section table (where `.nv_fatbin`, the GPU code, lies).

Standard library only (Python 3.8+): it runs in ortprov (wheelfacts.py), in the target interpreter
(verify_child.py, and loader_hook.py once `apply` installed it) and inside Docker builds (check_cuda_libs.py),
always the same file. It reads the program headers and the PT_DYNAMIC
segment, as ld.so does (section headers may be stripped), through `read(offset, length)`, so a 1 GB library
costs a few small reads, and a library inside a remote wheel can be read from a prefix of its bytes.
"""

from __future__ import annotations

import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Reader = Callable[[int, int], bytes]


class Dynamic:
    """The dynamic section's answers: what the object needs, where it asks the loader to look, its name."""

    __slots__ = ("needed", "rpath", "runpath", "soname")

    def __init__(
        self,
        needed: list[str] | None = None,
        rpath: list[str] | None = None,
        runpath: list[str] | None = None,
        soname: str | None = None,
    ) -> None:
        self.needed = needed or []
        self.rpath = rpath or []
        self.runpath = runpath or []
        self.soname = soname

    def __repr__(self) -> str:
        return f"Dynamic(needed={self.needed}, rpath={self.rpath}, runpath={self.runpath}, soname={self.soname!r})"


PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 14, 15, 29
MAX_DYNAMIC_BYTES = 1 << 20  # a dynamic segment is a few hundred entries; anything larger is not a library
MAX_STRING_BYTES = 4096


class ElfError(ValueError):
    """Not an ELF file, or its dynamic segment cannot be read."""


def layout(head: bytes) -> tuple[bool, str]:
    """(64-bit, byte order for struct: "<" or ">") of an ELF header."""
    return head[4] == 2, "<" if head[5] == 1 else ">"


def _ident(read: Reader) -> tuple[bytes, bool, str]:
    """The ELF header (the first 64 bytes) and its layout; ElfError when it is not one."""
    ident = read(0, 64)
    if len(ident) < 52 or ident[:4] != b"\x7fELF":
        raise ElfError("not an ELF file")
    is64, endian = layout(ident)
    return ident, is64, endian


def program_table(head: bytes, is64: bool, endian: str) -> tuple[int, int, int]:
    """(file offset, entry size, count) of the program header table, from the ELF header."""
    if is64:
        (phoff,) = struct.unpack_from(endian + "Q", head, 0x20)
        phentsize, phnum = struct.unpack_from(endian + "HH", head, 0x36)
    else:
        (phoff,) = struct.unpack_from(endian + "I", head, 0x1C)
        phentsize, phnum = struct.unpack_from(endian + "HH", head, 0x2A)
    return phoff, phentsize, phnum


def program_header(table: bytes, at: int, is64: bool, endian: str) -> tuple[int, int, int, int]:
    """(p_type, p_offset, p_vaddr, p_filesz) of the program header at `at` of `table`."""
    if is64:
        p_type, _flags, offset, vaddr, _paddr, filesz = struct.unpack_from(endian + "IIQQQQ", table, at)
    else:
        p_type, offset, vaddr, _paddr, filesz = struct.unpack_from(endian + "IIIII", table, at)
    return p_type, offset, vaddr, filesz


def read_dynamic(read: Reader) -> Dynamic:
    """The dynamic section of an ELF object, read through `read(offset, length)`."""
    ident, is64, endian = _ident(read)
    phoff, phentsize, phnum = program_table(ident, is64, endian)
    table = read(phoff, phentsize * phnum)
    if len(table) < phentsize * phnum:
        raise ElfError("truncated program headers")
    loads = []
    dynamic = None
    for number in range(phnum):
        p_type, offset, vaddr, filesz = program_header(table, number * phentsize, is64, endian)
        if p_type == PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (offset, filesz)
    if dynamic is None:
        return Dynamic()  # a static object: it needs nothing
    offset, size = dynamic
    data = read(offset, min(size, MAX_DYNAMIC_BYTES))
    if len(data) < min(size, MAX_DYNAMIC_BYTES):
        raise ElfError("the dynamic segment lies beyond the bytes that could be read")
    entry = 16 if is64 else 8
    fmt = endian + ("qQ" if is64 else "iI")
    entries = []
    for at in range(0, len(data) - entry + 1, entry):
        tag, value = struct.unpack_from(fmt, data, at)
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    strtab = next((value for tag, value in entries if tag == DT_STRTAB), None)
    if strtab is None:
        return Dynamic()
    base = _file_offset(strtab, loads)

    def string(position: int) -> str:
        raw = read(base + position, MAX_STRING_BYTES)
        end = raw.find(b"\0")
        if end < 0:
            raise ElfError("a dynamic string lies beyond the bytes that could be read")
        return raw[:end].decode("utf-8", "replace")

    needed: list[str] = []
    rpath: list[str] = []
    runpath: list[str] = []
    soname: str | None = None
    for tag, value in entries:
        if tag == DT_NEEDED:
            needed.append(string(value))
        elif tag == DT_RPATH:
            rpath += [part for part in string(value).split(":") if part]
        elif tag == DT_RUNPATH:
            runpath += [part for part in string(value).split(":") if part]
        elif tag == DT_SONAME:
            soname = string(value)
    return Dynamic(needed, rpath, runpath, soname)


def read_sections(read: Reader) -> dict[str, tuple[int, int]]:
    """Section name -> (file offset, size), from the section header table (often at the end of the file, and
    absent from stripped objects: then empty). ElfError when it lies beyond the bytes that could be read."""
    ident, is64, endian = _ident(read)
    if is64:
        (shoff,) = struct.unpack_from(endian + "Q", ident, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", ident, 0x3A)
        entry = endian + "IIQQQQ"
    else:
        (shoff,) = struct.unpack_from(endian + "I", ident, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", ident, 0x2E)
        entry = endian + "IIIIII"
    if not shoff or not shnum or shstrndx >= shnum:
        return {}
    table = read(shoff, shentsize * shnum)
    if len(table) < shentsize * shnum:
        raise ElfError("the section header table lies beyond the bytes that could be read")
    rows = [struct.unpack_from(entry, table, i * shentsize) for i in range(shnum)]
    names_offset, names_size = rows[shstrndx][4], rows[shstrndx][5]
    names = read(names_offset, names_size)
    if len(names) < names_size:
        raise ElfError("the section names lie beyond the bytes that could be read")
    sections: dict[str, tuple[int, int]] = {}
    for name, _type, _flags, _addr, offset, size in rows:
        end = names.find(b"\0", name)
        label = names[name : end if end >= 0 else len(names)].decode("utf-8", "replace")
        if label:
            sections.setdefault(label, (offset, size))
    return sections


def _file_offset(vaddr: int, loads: list) -> int:
    for seg_vaddr, seg_offset, seg_size in loads:
        if seg_vaddr <= vaddr < seg_vaddr + max(seg_size, 1):
            return vaddr - seg_vaddr + seg_offset
    return vaddr


def read_dynamic_file(path: str) -> Dynamic:
    """read_dynamic of a file on disk (OSError when it cannot be opened)."""
    with open(path, "rb") as handle:

        def read(offset: int, length: int) -> bytes:
            handle.seek(offset)
            return handle.read(length)

        try:
            return read_dynamic(read)
        except struct.error as exc:
            raise ElfError(f"{path}: {exc}") from None


def read_dynamic_bytes(data: bytes) -> Dynamic:
    """read_dynamic of bytes in memory (a prefix of a library read from a wheel); ElfError when too short."""
    try:
        return read_dynamic(lambda offset, length: data[offset : offset + length])
    except struct.error as exc:
        raise ElfError(str(exc)) from None
