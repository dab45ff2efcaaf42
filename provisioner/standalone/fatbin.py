"""The GPU code inside a CUDA library: which architectures have kernels (cubin, `sm_90a`) and which have PTX
(`compute_90`), read from its fatbins; and, in the same single pass, what the library needs from the loader.

A CUDA library carries its device code as fatbin blobs in the ELF section `.nv_fatbin` (the PE section
`.nv_fatb` on Windows). A blob is a 16-byte header (magic 0xBA55ED50, version, header size, size of what follows)
and a run of entries, each with its own header: kind (1 PTX, 2 cubin), the architecture, flags (64-bit,
compressed, arch-specific `a`, ...) and the payload size. A compressed entry still carries its architecture in the
header, so the payloads are never decompressed or kept: they are skipped.

The library is read once, front to back, from an iterator of byte chunks (a member of a wheel as it is being
inflated, or a file), so a 500 MB library inside a remote wheel is never stored: `read_library` keeps only the
bytes it needs (the headers, the dynamic section or the import tables, the ELF section table at the end) and the
entry headers as they pass. NVIDIA's `cuobjdump --list-elf --list-ptx` gives the same lists (bin/read_wheels.py
compares them). Standard library only, like elf.py and pe.py, which it uses.
"""

from __future__ import annotations

import struct

if __package__:  # a package member: provisioner.standalone
    from . import elf, pe
else:  # run as a script: its folder is sys.path[0]
    import elf  # type: ignore[no-redef]
    import pe  # type: ignore[no-redef]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

MAGIC = struct.pack("<I", 0xBA55ED50)
KIND_PTX, KIND_CUBIN = 1, 2
# entry flag bits that name an architecture variant: sm_90a (arch-specific features, runs only on exactly 9.0);
# others are not known to this reader, and bin/read_wheels.py's cuobjdump cross-check would show a disagreement
ARCH_SUFFIX_FLAGS = ((0x100000, "a"),)
ELF_SECTION, PE_SECTION = ".nv_fatbin", ".nv_fatb"
PREFIX_BYTES = 16 << 20  # ELF headers, .dynsym/.dynstr: the first MBs of a library
TAIL_BYTES = 16 << 20  # the ELF section table (and a dynamic section patchelf moved there): the last MBs
_WINDOW = 4 << 20


class FatbinError(ValueError):
    """The bytes are not a library this reader understands."""


def arch_name(kind: int, arch: int, flags: int) -> str:
    """ "sm_90a" for a cubin entry of arch 90 with the arch-specific flag, "compute_90" for PTX."""
    suffix = "".join(letter for bit, letter in ARCH_SUFFIX_FLAGS if flags & bit)
    prefix = {KIND_PTX: "compute", KIND_CUBIN: "sm"}.get(kind, f"kind{kind}")
    return f"{prefix}_{arch}{suffix}"


def arch_key(name: str) -> tuple[int, str]:
    """Sort key: sm_75 < sm_80 < sm_90 < sm_90a < sm_100a."""
    tail = name.rsplit("_", 1)[-1]
    digits = "".join(c for c in tail if c.isdigit())
    return (int(digits) if digits else 0, tail[len(digits) :])


class ForwardStream:
    """Bytes read front to back from an iterator of chunks, holding only what the reader still needs.

    `read(pos, n)` works for any position not yet released; `release(pos)` drops everything before `pos`
    (skipping forward without keeping anything when `pos` lies ahead); ranges registered with `keep` are copied
    aside as they pass, for readers that come back to them later."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._buf = bytearray()
        self._base = 0  # the absolute offset of _buf[0]
        self.total = 0  # bytes pulled so far
        self.exhausted = False
        self._keep: list[tuple[int, int]] = []
        self._kept: dict[int, bytearray] = {}

    def keep(self, start: int, end: int) -> bool:
        """Copy [start, end) aside as it passes; False when part of it was already released."""
        if start >= end:
            return True
        if start < self._base:
            return False
        held = self._buf[start - self._base : min(end, self.total) - self._base] if start < self.total else b""
        self._kept[start] = bytearray(held)
        self._keep.append((start, end))
        return True

    def _pull(self) -> bool:
        if self.exhausted:
            return False
        chunk = next(self._chunks, None)
        if chunk is None:
            self.exhausted = True
            return False
        start, end = self.total, self.total + len(chunk)
        for low, high in self._keep:
            held = self._kept[low]
            piece_from = max(low + len(held), start)
            if piece_from < min(high, end):
                held += chunk[piece_from - start : min(high, end) - start]
        self.total = end
        self._buf += chunk
        return True

    def read(self, pos: int, length: int) -> bytes:
        """Bytes [pos, pos+length) (fewer at the end of the stream)."""
        if pos < self._base:
            raise FatbinError(f"byte {pos} was already released")
        while self.total < pos + length and self._pull():
            pass
        return bytes(self._buf[pos - self._base : pos - self._base + length])

    def release(self, pos: int) -> None:
        """Forget everything before `pos`, pulling (and dropping) chunks up to it."""
        while self.total < pos:
            self._buf.clear()
            self._base = self.total
            if not self._pull():
                return
        if pos > self._base:
            del self._buf[: pos - self._base]
            self._base = pos

    def find(self, needle: bytes, pos: int, end: int | None = None) -> int:
        """The first position >= pos (and < end) where `needle` starts, releasing what it scanned; -1 if none."""
        while True:
            pos = max(pos, self._base)
            limit = pos + _WINDOW if end is None else min(pos + _WINDOW, end)
            while self.total < limit and self._pull():
                pass
            stop = self.total if end is None else min(self.total, end)
            found = self._buf.find(needle, pos - self._base, max(stop - self._base, 0))
            if found >= 0:
                return self._base + found
            if self.exhausted and self.total <= limit or (end is not None and stop >= end):
                return -1
            pos = max(pos, stop - len(needle) + 1)
            self.release(pos)

    def drain(self) -> None:
        """Read to the end (what was registered with `keep` is captured on the way)."""
        while self._pull():
            self._buf.clear()
            self._base = self.total

    def kept_reader(self) -> Callable[[int, int], bytes]:
        """A `read(offset, length)` over the bytes kept aside (and those still held)."""
        kept = sorted(self._kept.items())
        buf, base = bytes(self._buf), self._base

        def read(offset: int, length: int) -> bytes:
            for start, data in kept:
                if start <= offset < start + len(data):
                    return bytes(data[offset - start : offset - start + length])
            if base <= offset < base + len(buf):
                return buf[offset - base : offset - base + length]
            return b""

        return read


class Blob:
    """One fatbin blob: where it starts, and its entries as (kind, arch name)."""

    __slots__ = ("offset", "size", "entries")

    def __init__(self, offset: int, size: int, entries: list[tuple[int, str]]) -> None:
        self.offset = offset
        self.size = size
        self.entries = entries


def _parse_blob(stream: ForwardStream, at: int, limit: int | None) -> Blob | None:
    """The blob whose magic is at `at`, its payloads skipped; None when the bytes there are not one."""
    header = stream.read(at, 16)
    if len(header) < 16:
        return None
    _, version, header_size, size = struct.unpack("<IHHQ", header)
    end = at + header_size + size
    if version != 1 or header_size < 16 or size < 64 or (limit is not None and end > limit):
        return None
    entries: list[tuple[int, str]] = []
    pos = at + header_size
    while pos < end:
        head = stream.read(pos, 64)
        if len(head) < 64:
            return None
        kind, _, entry_header, payload = struct.unpack_from("<HHIQ", head, 0)
        (arch,) = struct.unpack_from("<I", head, 28)
        (flags,) = struct.unpack_from("<Q", head, 40)
        if not 1 <= kind <= 16 or not 64 <= entry_header <= 4096 or not 10 <= arch <= 4000 or pos + entry_header > end:
            return None
        entries.append((kind, arch_name(kind, arch, flags)))
        pos += entry_header + payload
        stream.release(pos)
    return Blob(at, size + header_size, entries) if pos == end and entries else None


def scan_blobs(stream: ForwardStream, start: int = 0, end: int | None = None) -> list[Blob]:
    """Every fatbin blob between `start` and `end`, walking from one to the next."""
    blobs: list[Blob] = []
    pos = start
    while True:
        hit = stream.find(MAGIC, pos, end)
        if hit < 0:
            return blobs
        blob = _parse_blob(stream, hit, end)
        if blob is None:
            pos = hit + 1  # the magic's bytes inside code or data: not a blob
            stream.release(pos)
            continue
        blobs.append(blob)
        pos = blob.offset + blob.size


class LibraryCode:
    """What one pass over a library found: its format, GPU code, and what it needs from the loader."""

    def __init__(self) -> None:
        self.format = "unknown"  # elf | pe
        self.kernels: list[str] = []  # sm_75 ... (cubin)
        self.ptx: list[str] = []  # compute_90 ...
        self.other: list[str] = []  # entries of other kinds (LTO IR ...), as kindN_arch
        self.entries = 0
        self.blobs = 0
        self.section: tuple[int, int] | None = None  # the fatbin section (offset, size), when the table says
        self.blobs_outside = 0  # blobs found outside that section (relocatable device code ...), not counted
        self.needed: list[str] | None = None  # DT_NEEDED / PE imports; None: could not be read
        self.delay_loaded: list[str] = []  # PE delay-load imports
        self.notes: list[str] = []
        self.size = 0

    def to_dict(self) -> dict:
        """Plain data (JSON)."""
        return {name: getattr(self, name) for name in vars(self)}


def _summarise(result: LibraryCode, blobs: list[Blob]) -> None:
    kernels: set[str] = set()
    ptx: set[str] = set()
    other: set[str] = set()
    for blob in blobs:
        for kind, name in blob.entries:
            (kernels if kind == KIND_CUBIN else ptx if kind == KIND_PTX else other).add(name)
            result.entries += 1
    result.blobs = len(blobs)
    result.kernels = sorted(kernels, key=arch_key)
    result.ptx = sorted(ptx, key=arch_key)
    result.other = sorted(other, key=arch_key)


def read_library(chunks: Iterable[bytes], size: int) -> LibraryCode:
    """One pass over an ELF shared object or a PE DLL of `size` bytes, given as chunks in order."""
    result = LibraryCode()
    result.size = size
    stream = ForwardStream(chunks)
    head = stream.read(0, 4096)
    if head[:4] == b"\x7fELF":
        result.format = "elf"
        _read_elf(stream, size, result)
    elif pe.is_pe(head):
        result.format = "pe"
        _read_pe(stream, result)
    else:
        raise FatbinError("neither an ELF shared object nor a PE image")
    return result


def _read_elf(stream: ForwardStream, size: int, result: LibraryCode) -> None:
    stream.keep(0, min(PREFIX_BYTES, size))
    stream.keep(max(0, size - TAIL_BYTES), size)
    head = stream.read(0, 4096)
    dynamic = _elf_dynamic_range(head)
    if dynamic is not None:
        stream.keep(*dynamic)
    blobs = scan_blobs(stream)
    stream.drain()
    read = stream.kept_reader()
    try:
        sections = elf.read_sections(read)
    except (elf.ElfError, struct.error) as exc:
        sections = {}
        result.notes.append(f"section table not read ({exc}): every fatbin blob found is counted")
    section = sections.get(ELF_SECTION)
    if section is not None:
        result.section = section
        low, high = section[0], section[0] + section[1]
        inside = [b for b in blobs if low <= b.offset and b.offset + b.size <= high]
        result.blobs_outside = len(blobs) - len(inside)
        blobs = inside
    elif sections:
        blobs = []  # no GPU-code section: no GPU code (a TensorRT provider)
    _summarise(result, blobs)
    try:
        result.needed = elf.read_dynamic(read).needed
    except (elf.ElfError, struct.error) as exc:
        result.notes.append(f"dynamic section not read ({exc})")


def _elf_dynamic_range(head: bytes) -> tuple[int, int] | None:
    """(offset, end) of the PT_DYNAMIC segment, from the program headers in the first KBs."""
    if len(head) < 64:
        return None
    is64, endian = elf.layout(head)
    phoff, phentsize, phnum = elf.program_table(head, is64, endian)
    for index in range(phnum):
        at = phoff + index * phentsize
        if at + phentsize > len(head):
            return None
        p_type, offset, _vaddr, filesz = elf.program_header(head, at, is64, endian)
        if p_type == elf.PT_DYNAMIC:
            return offset, offset + filesz
    return None


def _read_pe(stream: ForwardStream, result: LibraryCode) -> None:
    try:
        headers = pe.read_headers(stream.read)
    except (pe.PeError, struct.error) as exc:
        raise FatbinError(f"PE headers not read: {exc}") from None
    wanted = headers.import_sections()
    for section in wanted:
        stream.keep(section.raw_offset, section.raw_offset + section.raw_size)
    fat = headers.section(PE_SECTION)
    blobs: list[Blob] = []
    if fat is not None:
        result.section = (fat.raw_offset, fat.raw_size)
        stream.release(fat.raw_offset)  # the import sections are kept as they pass
        blobs = scan_blobs(stream, fat.raw_offset, fat.raw_offset + fat.raw_size)
    # read on until the import sections have passed (they may follow the GPU code), not to the end
    last = max((s.raw_offset + s.raw_size for s in wanted), default=0)
    if stream.total < last:
        stream.release(last)
    _summarise(result, blobs)
    read = stream.kept_reader()
    try:
        imported, delayed = pe.read_imports(read, headers)
    except (pe.PeError, struct.error) as exc:
        result.notes.append(f"import tables not read ({exc})")
        return
    result.needed = imported
    result.delay_loaded = delayed


def file_chunks(path: str, chunk: int = 1 << 20) -> Iterator[bytes]:
    """A file's bytes in chunks (for `read_library` on a library on disk)."""
    with open(path, "rb") as handle:
        while True:
            data = handle.read(chunk)
            if not data:
                return
            yield data
