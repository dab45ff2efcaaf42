"""Read what the Windows loader reads from a PE image (a DLL): its sections, the DLLs it imports, and the DLLs
it delay-loads (opened on first use, as ONNX Runtime's CUDA provider does with some CUDA libraries).

Standard library only, like elf.py beside it (the one ELF reader): it runs in ortprov (reading wheels by range
requests, bin/ scripts) and may run in the target interpreter. Everything is read through `read(offset, length)`,
so a 400 MB DLL inside a remote wheel costs its headers and the one section that holds the import tables.
"""

from __future__ import annotations

import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Reader = Callable[[int, int], bytes]

IMPORT_DIRECTORY, DELAY_IMPORT_DIRECTORY = 1, 13
MAX_IMPORTS = 4096  # a real DLL imports tens of DLLs; more is a corrupt table
MAX_NAME_BYTES = 512


class PeError(ValueError):
    """Not a PE image, or the part asked for lies beyond the bytes that could be read."""


class Section:
    """One entry of the section table: where its bytes are in the file and in memory."""

    __slots__ = ("name", "virtual_address", "virtual_size", "raw_offset", "raw_size")

    def __init__(self, name: str, virtual_address: int, virtual_size: int, raw_offset: int, raw_size: int) -> None:
        self.name = name
        self.virtual_address = virtual_address
        self.virtual_size = virtual_size
        self.raw_offset = raw_offset
        self.raw_size = raw_size

    def __repr__(self) -> str:
        return f"Section({self.name!r}, raw {self.raw_offset:#x}+{self.raw_size:#x})"


class Headers:
    """What the headers say: the machine, the image base, the sections and the data directories."""

    __slots__ = ("machine", "image_base", "sections", "directories")

    def __init__(self, machine: int, image_base: int, sections: list[Section], directories: list[tuple[int, int]]):
        self.machine = machine
        self.image_base = image_base
        self.sections = sections
        self.directories = directories  # (rva, size) per data directory

    def section(self, name: str) -> Section | None:
        """The section named `name` (".nv_fatb", ".rdata"), if any."""
        return next((s for s in self.sections if s.name == name), None)

    def section_at(self, rva: int) -> Section | None:
        """The section whose memory image holds `rva`."""
        for section in self.sections:
            if section.virtual_address <= rva < section.virtual_address + max(section.virtual_size, section.raw_size):
                return section
        return None

    def file_offset(self, rva: int) -> int:
        """The file offset of an RVA (PeError when no section maps it)."""
        section = self.section_at(rva)
        if section is None:
            raise PeError(f"RVA {rva:#x} lies in no section")
        return rva - section.virtual_address + section.raw_offset

    def import_sections(self) -> list[Section]:
        """The sections holding the import and delay-import tables (what `read_imports` reads)."""
        found = []
        for index in (IMPORT_DIRECTORY, DELAY_IMPORT_DIRECTORY):
            if index < len(self.directories) and self.directories[index][0]:
                section = self.section_at(self.directories[index][0])
                if section is not None and section not in found:
                    found.append(section)
        return found


def is_pe(prefix: bytes) -> bool:
    """True when the bytes start a PE image (an MZ header pointing at a PE signature)."""
    if prefix[:2] != b"MZ" or len(prefix) < 0x40:
        return False
    (at,) = struct.unpack_from("<I", prefix, 0x3C)
    return prefix[at : at + 4] == b"PE\0\0"


def read_headers(read: Reader) -> Headers:
    """The COFF and optional headers and the section table (the first KBs of the file)."""
    dos = read(0, 0x40)
    if len(dos) < 0x40 or dos[:2] != b"MZ":
        raise PeError("not a PE image (no MZ header)")
    (at,) = struct.unpack_from("<I", dos, 0x3C)
    coff = read(at, 24)
    if len(coff) < 24 or coff[:4] != b"PE\0\0":
        raise PeError("not a PE image (no PE signature)")
    machine, sections, _, _, _, optional_size, _ = struct.unpack_from("<HHIIIHH", coff, 4)
    optional = read(at + 24, optional_size)
    if len(optional) < optional_size or optional_size < 2:
        raise PeError("truncated optional header")
    (magic,) = struct.unpack_from("<H", optional, 0)
    if magic == 0x20B:  # PE32+
        (image_base,) = struct.unpack_from("<Q", optional, 24)
        count_at, first = 108, 112
    elif magic == 0x10B:  # PE32
        (image_base,) = struct.unpack_from("<I", optional, 28)
        count_at, first = 92, 96
    else:
        raise PeError(f"unknown optional header magic {magic:#x}")
    (count,) = struct.unpack_from("<I", optional, count_at)
    count = min(count, (optional_size - first) // 8)
    directories = [struct.unpack_from("<II", optional, first + 8 * i) for i in range(count)]
    table = read(at + 24 + optional_size, 40 * sections)
    if len(table) < 40 * sections:
        raise PeError("truncated section table")
    parsed = []
    for index in range(sections):
        raw_name, vsize, vaddr, raw_size, raw_offset = struct.unpack_from("<8sIIII", table, 40 * index)
        parsed.append(Section(raw_name.rstrip(b"\0").decode("ascii", "replace"), vaddr, vsize, raw_offset, raw_size))
    return Headers(machine, image_base, parsed, directories)


def _string(read: Reader, offset: int) -> str:
    raw = read(offset, MAX_NAME_BYTES)
    end = raw.find(b"\0")
    if end < 0:
        raise PeError("an import name lies beyond the bytes that could be read")
    return raw[:end].decode("ascii", "replace")


def read_imports(read: Reader, headers: Headers | None = None) -> tuple[list[str], list[str]]:
    """(imported DLLs, delay-loaded DLLs), in table order, as the image names them ("cudart64_12.dll")."""
    headers = headers or read_headers(read)
    imported: list[str] = []
    delayed: list[str] = []
    if len(headers.directories) > IMPORT_DIRECTORY and headers.directories[IMPORT_DIRECTORY][0]:
        at = headers.file_offset(headers.directories[IMPORT_DIRECTORY][0])
        for index in range(MAX_IMPORTS):
            entry = read(at + 20 * index, 20)
            if len(entry) < 20:
                raise PeError("the import table lies beyond the bytes that could be read")
            lookup, _, _, name_rva, thunk = struct.unpack("<IIIII", entry)
            if not (lookup or name_rva or thunk):
                break
            imported.append(_string(read, headers.file_offset(name_rva)))
    if len(headers.directories) > DELAY_IMPORT_DIRECTORY and headers.directories[DELAY_IMPORT_DIRECTORY][0]:
        at = headers.file_offset(headers.directories[DELAY_IMPORT_DIRECTORY][0])
        for index in range(MAX_IMPORTS):
            entry = read(at + 32 * index, 32)
            if len(entry) < 32:
                raise PeError("the delay-import table lies beyond the bytes that could be read")
            attributes, name, *_ = struct.unpack("<IIIIIIII", entry)
            if not name:
                break
            rva = name if attributes & 1 else name - headers.image_base  # old tables hold addresses, not RVAs
            delayed.append(_string(read, headers.file_offset(rva)))
    return imported, delayed
