"""The one reader of the files a user names: host files (`--host`), saved plans (`--plan`, a wheelhouse's
plan.json), logs (`doctor --log`), `tune --shapes` files, models (checked here, read by the child that runs
them), and the matrix files (`matrix check --dir`, the cache of `matrix update`). An edge: it opens, bounds
and decodes; the core gets text or data (HostFacts.from_dict, Plan.from_dict, tune.shapes, doctor's rules).

Every file is refused in one line that names it (BadInput, exit 2; the matrix's own readers turn `Unreadable`
into a DataError or a notice) when it is missing, a folder, a named pipe, a device or a socket (reading one
could wait for a writer forever, or never end: stdin is read only where `-` asks for it), larger than its
limit, or not UTF-8 text; JSON is held to the limits of provisioner/validate.py (nesting, digits, NaN). A log
alone is read leniently (its first and last READ_LIMIT/2 bytes; UTF-16 with a byte-order mark or GB18030
where it is not UTF-8): it is whatever a program printed.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from provisioner.errors import BadInput
from provisioner.validate import json_value, utf8_text

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; loading the matrix reads its files here
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO

    from provisioner.facts import HostFacts
    from provisioner.plan import Plan
    from provisioner.tune.report import Feed

MIB = 1024 * 1024
HOST_FILE_LIMIT = 8 * MIB  # a detect of a big machine is tens of KB
PLAN_FILE_LIMIT = 8 * MIB  # a plan is a few KB
SHAPES_FILE_LIMIT = 8 * MIB  # a few thousand runs
MATRIX_FILE_LIMIT = 64 * MIB  # the shipped YAML is a few hundred KB
STREAM_LIMIT = 1024 * MIB  # bytes of a log read from stdin before it is cut off
NODELIST_LIMIT = 1024 * MIB  # `kubectl get nodes -o json`: ~6 KB a node, 5,000 nodes ~30 MB
CHUNK = 1 * MIB  # what user_chunks reads at a time
_BINARY_PROBE = 64 * 1024  # bytes of a log looked at for NUL bytes


class Unreadable(Exception):
    """Why a file cannot be read, as a phrase that follows its name ("does not exist", "is a folder")."""

    def __init__(self, reason: str, hint: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hint = hint


def shown(path: str | Path) -> str:
    """A path as an error line quotes it: repr, cut short at its start (the file's name stays); `-` is "on
    stdin"."""
    text = str(path)
    if text == "-":
        return "on stdin"
    return repr(text if len(text) <= 80 else "..." + text[-70:])


def expand_user(path: str | Path, flag: str) -> Path:
    """`~` and `~user` expanded as the shell does; BadInput naming `flag` for a `~user` with no such user
    (pathlib raises RuntimeError there, and a literal `~user` folder would surprise everyone)."""
    text = str(path)
    expanded = os.path.expanduser(text)
    if text.startswith("~") and expanded == text:
        user = text[1:].split(os.sep, 1)[0]
        raise BadInput(f"{flag} {shown(text)}: there is no user {user!r} for ~{user}", hint="write the path in full")
    return Path(expanded)


# -- opening: regular files only ----------------------------------------------------------------------------


def _special(mode: int) -> str | None:
    """The phrase for a file that is not a regular one; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "is a pipe (FIFO), not a file: reading it could wait for a writer forever"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file"
    return "is not a regular file"


def check_regular(path: str | Path) -> os.stat_result:
    """The stat of `path`, a regular file (links followed); Unreadable otherwise. Nothing is opened."""
    if not str(path):
        raise Unreadable("is an empty name: it names no file")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise Unreadable("does not exist") from None
    except NotADirectoryError:
        raise Unreadable("does not exist (a part of its path is a file)") from None
    except (OSError, ValueError) as exc:  # a name too long, a loop of links, a NUL byte, no permission
        raise Unreadable(f"cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    special = _special(info.st_mode)
    if special:
        raise Unreadable(special)
    return info


def _open(path: str | Path) -> int:
    """A descriptor of the regular file at `path`, opened without blocking (a FIFO swapped in after the check
    cannot hang the open) and then checked again; Unreadable otherwise."""
    check_regular(path)
    nonblocking = getattr(os, "O_NONBLOCK", 0)
    flags = os.O_RDONLY | nonblocking | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:
        raise Unreadable(f"cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    special = _special(os.fstat(fd).st_mode)
    if special:
        os.close(fd)
        raise Unreadable(special)
    if nonblocking:
        os.set_blocking(fd, True)
    return fd


def read_bytes(path: str | Path, limit: int) -> bytes:
    """The whole of a regular file of at most `limit` bytes; Unreadable otherwise."""
    with os.fdopen(_open(path), "rb") as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:  # EIO (/proc/self/mem), EISDIR on odd file systems
            raise Unreadable(f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise Unreadable(f"is larger than {_size(limit)}: not what ortprov reads there")
    return data


def read_text(path: str | Path, limit: int) -> str:
    """A regular file of at most `limit` bytes, decoded strictly as UTF-8; Unreadable otherwise."""
    try:
        return utf8_text(read_bytes(path, limit))
    except ValueError as exc:
        raise Unreadable(str(exc)) from None


def _size(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit} bytes"


def user_text(path: str | Path, what: str, limit: int, hint: str | None = None) -> str:
    """A file a user named, as text, or stdin for `-` (`ortprov detect --json | ortprov plan --host -`);
    BadInput naming it (`what`: "host file", "plan file", ...) otherwise."""
    if str(path) == "-":
        return _stdin_text(what, limit, hint)
    try:
        return read_text(path, limit)
    except Unreadable as exc:
        if "pipe" in exc.reason:
            hint = f"pipe it into stdin and pass -, e.g. `ortprov detect --json | ortprov plan --host -`; {hint}"
        raise BadInput(f"{what} {shown(path)} {exc.reason}", hint=hint) from None


def _stdin_text(what: str, limit: int, hint: str | None) -> str:
    """`-`: the whole of stdin, bounded and strictly UTF-8; refused when stdin is closed or a terminal."""
    stream = sys.stdin.buffer if sys.stdin is not None and not sys.stdin.closed else None
    if stream is None or sys.stdin.isatty():
        state = "closed" if stream is None else "a terminal"
        raise BadInput(f"{what} - reads stdin, but stdin is {state}", hint=f"pipe it in, or pass a file; {hint}")
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise BadInput(f"{what} on stdin is larger than {_size(limit)}: not what ortprov reads there", hint=hint)
    if not data.strip():
        raise BadInput(f"{what} on stdin is empty", hint=f"pipe it in, or pass a file; {hint}")
    try:
        return utf8_text(data)
    except ValueError as exc:
        raise BadInput(f"{what} on stdin {exc}", hint=hint) from None


def user_chunks(path: str | Path, what: str, limit: int, hint: str | None = None) -> Iterator[str]:
    """A file a user named (or stdin for `-`), as UTF-8 text in chunks of about CHUNK bytes, for a document too
    large to hold whole (a cluster's NodeList); BadInput naming it as soon as it is unreadable, larger than
    `limit` or not UTF-8. The checks of the file come before the first chunk."""
    import codecs

    if str(path) == "-":
        stream = sys.stdin.buffer if sys.stdin is not None and not sys.stdin.closed else None
        if stream is None or sys.stdin.isatty():
            state = "closed" if stream is None else "a terminal"
            raise BadInput(f"{what} - reads stdin, but stdin is {state}", hint=f"pipe it in, or pass a file; {hint}")
        handle: BinaryIO = stream
        name = f"{what} on stdin"
    else:
        try:
            handle = os.fdopen(_open(path), "rb")
        except Unreadable as exc:
            raise BadInput(f"{what} {shown(path)} {exc.reason}", hint=hint) from None
        name = f"{what} {shown(path)}"
    return _chunks(handle, name, limit, hint, codecs.getincrementaldecoder("utf-8-sig")(errors="strict"))


def _chunks(handle: BinaryIO, name: str, limit: int, hint: str | None, decoder: Any) -> Iterator[str]:
    total = 0
    try:
        while True:
            try:
                data = handle.read(CHUNK)
            except OSError as exc:
                raise BadInput(f"{name} cannot be read: {exc.strerror or exc}", hint=hint) from None
            total += len(data)
            if total > limit:
                raise BadInput(f"{name} is larger than {_size(limit)}: not what ortprov reads there", hint=hint)
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                raise BadInput(
                    f"{name} is not UTF-8 text (near byte {total - len(data) + exc.start})", hint=hint
                ) from None
            if text:
                yield text
            if not data:
                if total == 0:
                    raise BadInput(f"{name} is empty", hint=hint)
                return
    finally:
        if handle is not getattr(sys.stdin, "buffer", None):
            handle.close()


def user_json(path: str | Path, what: str, limit: int, hint: str | None = None) -> Any:
    """A JSON file a user named, held to validate's limits; BadInput naming it otherwise."""
    text = user_text(path, what, limit, hint)
    try:
        return json_value(text)
    except ValueError as exc:
        raise BadInput(f"{what} {shown(path)} {exc}", hint=hint) from None


# -- the files, one reader each -------------------------------------------------------------------------------

_HOST_HINT = "create one with `ortprov detect --json > host.json`"
_PLAN_HINT = "create one with `ortprov plan --json > plan.json`"


def read_host_file(path: str | Path) -> HostFacts:
    """A host file saved by `ortprov detect --json`."""
    from provisioner.facts import HostFacts

    data = user_json(path, "host file", HOST_FILE_LIMIT, _HOST_HINT)
    return HostFacts.from_dict(data, origin=f"host file {shown(path)}")


def read_plan_file(path: str | Path) -> Plan:
    """A plan saved by `ortprov plan --json` (or by `ortprov download` next to its wheels)."""
    from provisioner.plan import Plan

    data = user_json(path, "plan file", PLAN_FILE_LIMIT, _PLAN_HINT)
    if isinstance(data, dict) and "error" in data and "steps" not in data:
        raise BadInput(f"plan file {shown(path)} holds an error, not a plan: {data['error']}", hint=_PLAN_HINT)
    try:
        plan = Plan.from_dict(data)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise BadInput(
            f"plan file {shown(path)} is malformed: {exc}", hint="re-create it with `ortprov plan --json`"
        ) from None
    from provisioner.render.recipe_parts import validate_plan

    try:  # refused on load, whatever prints or runs it later (text, --json, a recipe, apply)
        validate_plan(plan)
    except BadInput as exc:
        raise BadInput(f"plan file {shown(path)}: {exc.message}", hint=_PLAN_HINT) from None
    return plan


def read_shapes_file(path: str | Path) -> tuple[Feed, ...]:
    """The runs of a `tune --shapes FILE`."""
    from provisioner.tune.shapes import parse_shapes_file

    text = user_text(path, "--shapes", SHAPES_FILE_LIMIT, 'a JSON list of runs, e.g. [{"x": [1, 3, 640, 480]}]')
    return parse_shapes_file(text, str(path))


def model_file(path: str, flag: str) -> str:
    """A model a user named (read by the child that runs it): a regular file; BadInput naming `flag` otherwise."""
    if not path:
        raise BadInput(f"{flag} is empty: it names no model", hint="pass the path of an .onnx file")
    try:
        check_regular(path)
    except Unreadable as exc:
        raise BadInput(f"model file {shown(path)} {exc.reason}", hint="pass the path of an .onnx file") from None
    return path


# -- logs: bounded, decoded leniently -------------------------------------------------------------------------


@dataclass(frozen=True)
class LogText:
    """A log as read: its text (at most READ_LIMIT bytes of it), how many bytes the source had, whether cut."""

    text: str
    size: int  # bytes in the source (for a stream: bytes read before stopping)
    cut: bool
    encoding: str = "utf-8"

    @property
    def note(self) -> str | None:
        """One line for the reader when the log was not read whole."""
        if not self.cut:
            return None
        from provisioner.doctor.evidence import READ_LIMIT

        half = READ_LIMIT // 2 // MIB
        return f"the log has {self.size / MIB:.0f} MiB: read its first and last {half} MiB only"


_PIPE_HINT = "pipe a log in (`python app.py 2>&1 | ortprov doctor --log -`) or pass a file: --log error.txt"


def read_log(source: str) -> LogText:
    """The text of --log FILE, or stdin for '-', bounded (the first and last READ_LIMIT/2 bytes); BadInput when
    empty, missing, not a regular file, unreadable, binary, or stdin is a terminal or closed."""
    if source == "-":
        stream = sys.stdin.buffer if sys.stdin is not None and not sys.stdin.closed else None
        if stream is None:
            raise BadInput("--log - reads the log from stdin, but stdin is closed", hint=_PIPE_HINT)
        if sys.stdin.isatty():
            raise BadInput("--log - reads the log from stdin, but stdin is a terminal", hint=_PIPE_HINT)
        data, size, cut = _read_stream(stream)
        name = "on stdin"
    else:
        if not source:
            raise BadInput("--log is empty: it names no file", hint="pass a file, or - to read stdin")
        try:
            with os.fdopen(_open(source), "rb") as handle:
                data, size, cut = _read_file(handle, os.fstat(handle.fileno()).st_size)
        except Unreadable as exc:
            hint = _PIPE_HINT if "pipe" in exc.reason else "pass a file, or - to read stdin"
            raise BadInput(f"log file {shown(source)} {exc.reason}", hint=hint) from None
        except OSError as exc:
            raise BadInput(f"log file {shown(source)} cannot be read: {exc.strerror or exc}") from None
        name = shown(source)
    text, encoding = _decode_log(data, name)
    if not text.strip():
        raise BadInput(
            f"the log {name} is empty",
            hint="paste the error output, e.g. `python app.py 2>&1 | ortprov doctor --log -`",
        )
    return LogText(text, size, cut, encoding)


def _read_file(handle: BinaryIO, size: int) -> tuple[bytes, int, bool]:
    from provisioner.doctor.evidence import READ_LIMIT

    if size <= READ_LIMIT:
        data = handle.read(READ_LIMIT + 1)  # a /proc file says 0 bytes and has some
        return data[:READ_LIMIT], max(size, len(data)), len(data) > READ_LIMIT
    head = handle.read(READ_LIMIT // 2)
    handle.seek(_aligned(size - READ_LIMIT // 2))  # on a code unit of UTF-16 and UTF-32 too
    return _joined(head, handle.read(READ_LIMIT // 2)), size, True


def _read_stream(handle: BinaryIO) -> tuple[bytes, int, bool]:
    """Head and a rolling tail of a stream; stops at STREAM_LIMIT bytes; refuses binary from the first chunk."""
    from provisioner.doctor.evidence import READ_LIMIT

    head = handle.read(READ_LIMIT // 2)
    if _bom(head) is None and b"\0" in head[:_BINARY_PROBE]:
        return head[:_BINARY_PROBE], len(head), False  # _decode_log refuses it
    size, tail = len(head), b""
    while size < STREAM_LIMIT:
        chunk = handle.read(MIB)
        if not chunk:
            break
        size += len(chunk)
        tail = (tail + chunk)[-(READ_LIMIT // 2) :]
        tail = tail[(size - len(tail)) % 4 and 4 - (size - len(tail)) % 4 :]  # starts on a code unit
    cut = size > len(head) + len(tail) or size >= STREAM_LIMIT
    return (_joined(head, tail) if tail else head), size, cut


def _aligned(offset: int) -> int:
    """`offset` rounded up to a multiple of 4: the start of a code unit in UTF-16 and UTF-32 alike."""
    return offset + -offset % 4


# byte-order marks, longest first (UTF-32 LE starts with UTF-16 LE's)
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
)


def _bom(data: bytes) -> tuple[bytes, str] | None:
    """The byte-order mark `data` starts with and its codec, or None."""
    return next(((bom, codec) for bom, codec in _BOMS if data.startswith(bom)), None)


def _joined(head: bytes, tail: bytes) -> bytes:
    """The head and the tail of a log with a line break between, in the log's own encoding (by its BOM)."""
    found = _bom(head)
    if found is None or found[1] == "utf-8-sig":
        return head + b"\n" + tail
    bom, codec = found
    unit = 4 if codec == "utf-32" else 2
    order = "le" if bom.startswith(b"\xff\xfe") else "be"
    head = head[: len(head) - len(head) % unit]
    return head + "\n".encode(f"{codec}-{order}") + tail  # "\n" in the BOM's byte order


def _decode_log(data: bytes, name: str) -> tuple[str, str]:
    """By its byte-order mark (UTF-32, UTF-16, UTF-8), else UTF-8, else GB18030 (logs pasted from a Chinese
    Windows console); binary refused, and a log that its BOM does not decode is refused saying so."""
    found = _bom(data)
    if found is not None:
        bom, codec = found
        try:
            text = data.decode(codec)
        except UnicodeDecodeError as exc:
            label = {"utf-32": "UTF-32", "utf-16": "UTF-16", "utf-8-sig": "UTF-8"}[codec]
            raise BadInput(
                f"the log {name} starts with a {label} byte-order mark but is not {label} text "
                f"(cannot decode byte offset {exc.start})",
                hint="save it again as UTF-8, or paste the text: `... 2>&1 | ortprov doctor --log -`",
            ) from None
        return text, codec.replace("-sig", "")
    if b"\0" in data[:_BINARY_PROBE]:
        raise BadInput(f"the log {name} is binary, not text", hint="pass the text a program printed")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030"), "gb18030"
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), "utf-8"


__all__ = [
    "HOST_FILE_LIMIT",
    "MATRIX_FILE_LIMIT",
    "PLAN_FILE_LIMIT",
    "SHAPES_FILE_LIMIT",
    "LogText",
    "Unreadable",
    "check_regular",
    "model_file",
    "read_bytes",
    "read_host_file",
    "read_log",
    "read_plan_file",
    "read_shapes_file",
    "read_text",
    "user_json",
    "user_text",
]
