"""Read members of a remote zip (a wheel) through HTTP range requests, without downloading it.

A wheel is a zip: its end-of-central-directory record sits in the last bytes, the central directory just
before it names every member with its offset. Three or four small range requests therefore give any small
member (METADATA, build_and_package_info.py), and a streamed prefix gives the start of a large one (the ELF
header and dynamic string table of a shared library). Used by `provisioner.matrix.refresh` and by the maintainer
script `bin/derive_release.py`. `requests` is imported lazily.
"""

from __future__ import annotations

import struct
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator

_EOCD_SIG = b"PK\x05\x06"
_EOCD64_LOCATOR_SIG = b"PK\x06\x07"
_EOCD64_SIG = b"PK\x06\x06"
_CDIR_SIG = b"PK\x01\x02"
_LOCAL_SIG = b"PK\x03\x04"
_TAIL_BYTES = 65536 + 22 + 20  # the longest possible zip comment + EOCD + ZIP64 locator


class ZipRangeError(Exception):
    """The remote file could not be read as a zip through range requests (with the reason)."""


class RangeSource(Protocol):
    """Something with a size that can return a byte range: a remote file, or bytes in a test."""

    size: int

    def read(self, offset: int, length: int) -> bytes: ...


@dataclass(frozen=True)
class ZipEntry:
    """One member as the central directory describes it."""

    name: str
    method: int  # 0 stored, 8 deflated
    compressed_size: int
    size: int
    header_offset: int
    crc32: int = 0  # of the uncompressed content: equal CRC and size across wheels => the same library


class BytesSource:
    """A RangeSource over bytes in memory (tests, and already-downloaded files)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self.size = len(data)

    def read(self, offset: int, length: int) -> bytes:
        return self._data[offset : offset + length]


class HttpRangeSource:
    """A remote file read with `Range: bytes=a-b` requests; retries transient failures."""

    def __init__(
        self, url: str, session: Any = None, timeout: float = 20.0, retries: int = 2, backoff: float = 0.5
    ) -> None:
        import requests

        self.url = url
        self.session = session or requests.Session()
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.bytes_read = 0
        self.requests_made = 0
        self.size = self._probe_size()

    def _get(self, headers: dict[str, str], stream: bool = False) -> Any:
        import requests

        last: Exception | None = None
        for attempt in range(self.retries + 1):
            try:
                self.requests_made += 1
                response = self.session.get(self.url, headers=headers, timeout=self.timeout, stream=stream)
                if response.status_code >= 500:
                    raise ZipRangeError(f"{self.url}: HTTP {response.status_code}")
                return response
            except (requests.ConnectionError, requests.Timeout, ZipRangeError) as exc:
                last = exc
                if attempt < self.retries:
                    time.sleep(self.backoff * (2**attempt))
        raise ZipRangeError(f"{self.url}: {last}")

    def _probe_size(self) -> int:
        response = self._get({"Range": "bytes=0-0"})
        if response.status_code != 206:
            response.close()
            raise ZipRangeError(f"{self.url}: the server does not honour Range requests (HTTP {response.status_code})")
        content_range = response.headers.get("Content-Range", "")
        try:
            return int(content_range.rsplit("/", 1)[1])
        except (IndexError, ValueError) as exc:
            raise ZipRangeError(f"{self.url}: no total size in Content-Range {content_range!r}") from exc

    def iter_range(self, offset: int, length: int, chunk: int = 1 << 20) -> Iterator[bytes]:
        """Bytes [offset, offset+length) as they arrive, in one streamed request (nothing is stored)."""
        if length <= 0:
            return
        end = min(offset + length, self.size) - 1
        response = self._get({"Range": f"bytes={offset}-{end}"}, stream=True)
        with response:
            if response.status_code != 206:
                raise ZipRangeError(f"{self.url}: range request answered HTTP {response.status_code}")
            got = 0
            for data in response.iter_content(chunk):
                got += len(data)
                self.bytes_read += len(data)
                yield data
        if got != end - offset + 1:
            raise ZipRangeError(f"{self.url}: streamed {got} of {end - offset + 1} bytes")

    def read(self, offset: int, length: int) -> bytes:
        if length <= 0:
            return b""
        end = min(offset + length, self.size) - 1
        response = self._get({"Range": f"bytes={offset}-{end}"})
        if response.status_code != 206:
            raise ZipRangeError(f"{self.url}: range request answered HTTP {response.status_code}")
        data = bytes(response.content)
        self.bytes_read += len(data)
        if len(data) != end - offset + 1:
            raise ZipRangeError(f"{self.url}: asked for {end - offset + 1} bytes, got {len(data)}")
        return data


def central_directory(source: RangeSource) -> dict[str, ZipEntry]:
    """Every member of the zip, by name, from the central directory (ZIP64 aware)."""
    tail_start = max(0, source.size - _TAIL_BYTES)
    tail = source.read(tail_start, source.size - tail_start)
    at = tail.rfind(_EOCD_SIG)
    if at < 0 or len(tail) - at < 22:
        raise ZipRangeError("no end-of-central-directory record: not a zip")
    (_, _, _, _, count, cd_size, cd_offset, _) = struct.unpack("<4sHHHHIIH", tail[at : at + 22])
    locator = at - 20
    if locator >= 0 and tail[locator : locator + 4] == _EOCD64_LOCATOR_SIG:
        (eocd64_offset,) = struct.unpack("<Q", tail[locator + 8 : locator + 16])
        record = source.read(eocd64_offset, 56)
        if record[:4] != _EOCD64_SIG:
            raise ZipRangeError("bad ZIP64 end-of-central-directory record")
        count, cd_size, cd_offset = struct.unpack("<QQQ", record[32:56])
    if cd_offset >= tail_start and cd_offset + cd_size <= source.size:
        directory = tail[cd_offset - tail_start : cd_offset - tail_start + cd_size]
    else:
        directory = source.read(cd_offset, cd_size)
    return _parse_directory(directory, count)


def _parse_directory(directory: bytes, count: int) -> dict[str, ZipEntry]:
    entries: dict[str, ZipEntry] = {}
    pos = 0
    for _ in range(count):
        if directory[pos : pos + 4] != _CDIR_SIG:
            raise ZipRangeError(f"bad central directory entry at byte {pos}")
        fields = struct.unpack("<4sHHHHHHIIIHHHHHII", directory[pos : pos + 46])
        method, crc, csize, usize = fields[4], fields[7], fields[8], fields[9]
        name_len, extra_len, comment_len, offset = fields[10], fields[11], fields[12], fields[16]
        name = directory[pos + 46 : pos + 46 + name_len].decode("utf-8", "replace")
        extra = directory[pos + 46 + name_len : pos + 46 + name_len + extra_len]
        usize, csize, offset = _zip64_extra(extra, usize, csize, offset)
        entries[name] = ZipEntry(name, method, csize, usize, offset, crc)
        pos += 46 + name_len + extra_len + comment_len
    return entries


def _zip64_extra(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[pos : pos + 4])
        if tag == 1:
            values = iter(struct.unpack(f"<{length // 8}Q", extra[pos + 4 : pos + 4 + (length // 8) * 8]))
            if usize == 0xFFFFFFFF:
                usize = next(values)
            if csize == 0xFFFFFFFF:
                csize = next(values)
            if offset == 0xFFFFFFFF:
                offset = next(values)
        pos += 4 + length
    return usize, csize, offset


def _data_start(source: RangeSource, entry: ZipEntry) -> int:
    """Where the member's (compressed) bytes begin: after its local file header, whose name and extra field
    may differ in length from the central directory's."""
    header = source.read(entry.header_offset, 30)
    if header[:4] != _LOCAL_SIG:
        raise ZipRangeError(f"{entry.name}: bad local file header")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return entry.header_offset + 30 + name_len + extra_len


def read_member(source: RangeSource, entry: ZipEntry, max_bytes: int | None = None) -> bytes:
    """The member's content, decompressed; with `max_bytes`, only (about) that many leading bytes.

    A prefix of a deflated member is read by fetching compressed bytes in growing chunks and
    decompressing as a stream until `max_bytes` of output exist.
    """
    start = _data_start(source, entry)
    if entry.method == 0:
        length = entry.size if max_bytes is None else min(entry.size, max_bytes)
        return source.read(start, length)
    if entry.method != 8:
        raise ZipRangeError(f"{entry.name}: unsupported compression method {entry.method}")
    if max_bytes is None or max_bytes >= entry.size:
        return zlib.decompress(source.read(start, entry.compressed_size), -15)
    inflater = zlib.decompressobj(-15)
    out = bytearray()
    fetched = 0
    chunk = max(65536, max_bytes // 4)
    while len(out) < max_bytes and fetched < entry.compressed_size:
        take = min(chunk, entry.compressed_size - fetched)
        out += inflater.decompress(source.read(start + fetched, take))
        fetched += take
        chunk *= 2
    return bytes(out[:max_bytes])


def _compressed_chunks(source: RangeSource, start: int, length: int, chunk: int) -> Iterator[bytes]:
    stream = getattr(source, "iter_range", None)
    if stream is not None:
        yield from stream(start, length, chunk)
        return
    for at in range(start, start + length, chunk):
        yield source.read(at, min(chunk, start + length - at))


def stream_member(source: RangeSource, entry: ZipEntry, chunk: int = 1 << 20) -> Iterator[bytes]:
    """The member's decompressed bytes, front to back, as they arrive: a 500 MB library is read without being
    stored (one streamed range request where the source can stream, else `chunk`-sized reads)."""
    start = _data_start(source, entry)
    if entry.method == 0:
        yield from _compressed_chunks(source, start, entry.size, chunk)
        return
    if entry.method != 8:
        raise ZipRangeError(f"{entry.name}: unsupported compression method {entry.method}")
    inflater = zlib.decompressobj(-15)
    crc = 0
    for data in _compressed_chunks(source, start, entry.compressed_size, chunk):
        out = inflater.decompress(data)
        if out:
            crc = zlib.crc32(out, crc)
            yield out
    tail = inflater.flush()
    if tail:
        crc = zlib.crc32(tail, crc)
        yield tail
    if entry.crc32 and crc != entry.crc32:
        raise ZipRangeError(f"{entry.name}: CRC-32 mismatch after decompression")
