"""Which lines of a (possibly huge) log are worth reading in detail: bounded, linear, fast. Pure.

The caller passes at most READ_LIMIT characters (the first and last half: `bounded`). `candidate_lines` groups lines
by shape (lower case, digits as 0: a run log's lines differ only in their numbers), scans each shape once per
keyword with `bytes.find`, and returns at most SHAPE_LIMIT lines of each shape that holds a keyword, with their
neighbours: the line after each (a wrapped line's continuation, a provider list under its header) and the lines
under a short header ("GPU Test result", "### ONNX Runtime Version or Commit ID") or a table's header row. A line
longer than LINE_LIMIT is kept as its two ends (a megabyte line is a data dump).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

READ_LIMIT = 20 * 1024 * 1024  # bytes read from a log: the first 10 MB and the last 10 MB
LINE_LIMIT = 4096  # characters: a longer line is read at its two ends
SHAPE_LIMIT = 8  # lines read per shape (lines that differ only in their digits: a warning repeated per frame)
HEADER_WIDTH = 48  # bytes: a keyword line this short may be a header over the lines that follow it
HEADER_SPAN = 8  # lines read under a header

# lower case; a line holding one is read in detail (each costs one scan of the log's distinct shapes)
KEYWORDS = (
    *("cuda", "cudnn", "cublas", "nvidia", "nvinfer", "tensorrt", "provider", "onnxruntime", "dll", ".so"),
    *("driver", "gpu", "cpu", "geforce", "quadro", "tesla", "radeon", "intel", "rtx", "gtx", "python", "pip"),
    *("wheel", "docker", "container", "unraid", "hostname=", "wsl", "nvcc", "error", "fail", "missing"),
    *("not found", "no module", "找不到", "显卡", "耗时", "结果", "误差", "macos", "darwin", "/users/", "/volumes/"),
    *("aarch64", "arm64", "jetson", "windows", "linux", "ubuntu", "torch", "memory", "memcpy", "[+]", "[x]"),
    *("cp3", "result", "output", "diff", "slow", "faster", "stable", "tolerance", "version", "platform", "kernel"),
    *("entry point", "入口点", "autoupdate", "32 bit", "32-bit", "installed", "commit id", "速度", "inference"),
    *("multiprocessing", "fork(", "zlib", "nvml", "find ", "locate "),
    *("c0000409", "1073740791", "3221226505", "stack_buffer", "kubectl", "kubernetes", "k8s", "podman"),
    *("singularity", "apptainer", "enroot", "root@", "ordinal", "initializ", "slow", "speed", "exit", "quit", "crash"),
    *("silent", "闪退", "退出", "requirement", "close", "fix", "solv", "resolv", "reboot", "restart", "works"),
    *("performance", "outperform", "op ", "ops ", "operator", "node", "toolkit", "zlib"),
    *("get_device", "get_providers", "get_available_providers"),  # a REPL's calls: their answer is the next line
    # TensorRT's own messages (doctor/tensorrt.py reads the candidate lines too): its stubs, engines, contexts
    *("placeholder", "deprecated", "engine", "tag does not match", "deserializ", "context"),
)
_DIGITS = bytes.maketrans(b"0123456789", b"0000000000")
# the shapes are scanned with their digits as 0: so are the keywords ("c0000409", "cp3", "32-bit")
_KEYWORD_BYTES = tuple(dict.fromkeys(k.encode("utf-8").translate(_DIGITS) for k in KEYWORDS))


def bounded(text: str, limit: int = READ_LIMIT) -> tuple[str, bool]:
    """At most `limit` characters: the first and last half of a longer text, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    half = limit // 2
    return text[:half] + "\n" + text[-half:], True


# a line that starts letter spaced ("E r r o r   l o a d i n g"): UTF-16 text shown as one byte per character, its
# NUL bytes turned into spaces (a paste from a Windows console log or PowerShell's `>` redirection); found among the
# shapes ("\n" first: a fast literal scan), each such line read back
_SPACED_SHAPE = re.compile(rb"\n[ \t]{0,40}(?:\xef\xbb\xbf|\xc3\xbf\xc3\xbe)?(?:[^ \t\r\n] {1,3}){4}")
_ARTIFACT = re.compile(r"(?<=\S) (?=\S)")  # the shown NUL between two characters
_SPACE = re.compile(r" {2,3}")  # an original space, with the NUL shown beside it
SPACED_MIN = 12  # characters of a letter-spaced line, spaces included
SPACED_SHARE = 0.8  # of its other characters followed by one space (three: an original space)


def unspaced(line: str) -> str:
    """The line read back when it is letter spaced (each character followed by one space: those spaces dropped, an
    original space, shown as three, one), else the line itself."""
    body = line.strip(" \t\r\ufeffÿþ")
    if len(body) < SPACED_MIN or not _letter_spaced(body):
        return line
    return _SPACE.sub(" ", _ARTIFACT.sub("", body)) + ("\r" if line.endswith("\r") else "")


def _letter_spaced(body: str) -> bool:
    """Most of the line's characters are followed by exactly one space (words have one at their end only)."""
    chars = [i for i, ch in enumerate(body) if ch != " "]
    spaced = sum(1 for i in chars if i == len(body) - 1 or _run(body, i + 1) in (1, 3))
    return spaced >= SPACED_SHARE * len(chars)


def _run(body: str, start: int) -> int:
    """How many spaces follow from `start` (at most 4 counted)."""
    count = 0
    while count < 4 and body[start + count : start + count + 1] == " ":
        count += 1
    return count


def candidate_lines(text: str) -> list[tuple[int, str]]:
    """(index, line) of the lines worth reading, in order: see the module's docstring."""
    shapes = text.encode("utf-8", "replace").lower().translate(_DIGITS).split(b"\n")
    count = len(shapes)
    groups: dict[bytes, list[int]] = {}
    for index, shape in enumerate(shapes):
        groups.setdefault(shape, []).append(index)
    del shapes
    distinct = list(groups)
    starts = list(accumulate((len(shape) + 1 for shape in distinct), initial=0))
    joined = b"\n".join(distinct)
    wanted: set[int] = set()
    for keyword in _KEYWORD_BYTES:  # bytes.find: a fast scan per keyword, one step per shape that holds it
        pos = joined.find(keyword)
        while pos >= 0:
            number = bisect_right(starts, pos) - 1
            shape = distinct[number]
            members = groups[shape][:SHAPE_LIMIT]
            header = len(shape.strip()) <= HEADER_WIDTH or shape.lstrip().startswith(b"|")  # a table's header too
            span = HEADER_SPAN if header else 1
            wanted.update(i + step for i in members for step in range(span + 1) if i + step < count)
            pos = joined.find(keyword, starts[number + 1])
    spaced: set[int] = set()
    if _SPACED_SHAPE.match(b"\n" + joined[:256]):  # the first shape (no newline before it in `joined`)
        spaced.update(groups[distinct[0]][:SHAPE_LIMIT])
    for hit in _SPACED_SHAPE.finditer(joined):  # letter-spaced lines hold no keyword as such: read them all
        spaced.update(groups[distinct[bisect_right(starts, hit.start() + 1) - 1]][:SHAPE_LIMIT])
    wanted.update(i + step for i in spaced for step in (0, 1) if i + step < count)
    out: list[tuple[int, str]] = []
    for index, line in zip(sorted(wanted), _lines_at(text, sorted(wanted)), strict=True):
        if len(line) > LINE_LIMIT:
            line = line[: LINE_LIMIT // 2] + " ... " + line[-LINE_LIMIT // 2 :]
        out.append((index, unspaced(line) if index in spaced else line))
    return out


def candidate_text(lines: list[tuple[int, str]]) -> str:
    """The candidate lines as one text: lines that follow each other in the log stay adjacent, a gap between them
    is an empty line (for readers of the whole text: a 20 MB run log shrinks to its few relevant lines)."""
    out: list[str] = []
    previous = -2
    for index, line in lines:
        if out and index != previous + 1:
            out.append("")
        out.append(line)
        previous = index
    return "\n".join(out)


def _lines_at(text: str, indices: list[int]) -> list[str]:
    """The lines (split at "\\n") at these sorted indices, without splitting the whole text."""
    out, pos, current = [], 0, 0
    for index in indices:
        while current < index:
            pos = text.find("\n", pos) + 1
            current += 1
        end = text.find("\n", pos)
        out.append(text[pos : end if end >= 0 else len(text)])
    return out
