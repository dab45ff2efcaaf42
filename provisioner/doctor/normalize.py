"""Pasted log lines -> the lines their program printed. Pure.

A pasted log carries what the paste added: per-line prefixes (timestamps, log levels, `[service]`, docker compose's
`name-1  | `, systemd's `Jun 17 15:04:37 host python3[2029]: `, `>>> `, a rich traceback's box borders), lines
wrapped by a terminal or an editor (`CUDAE` / `xecutionProvider`, `libcublasLt.so.1` / `1: cannot open ...`), and
typographic quotes. `logical_lines` removes the prefixes, joins the wrapped lines and unifies the quotes, and keeps
every other character (Chinese, Japanese and other locale text stay as they are).

Joining is by cause, never by wording: a line is continued by the next one when the paste cut it (it is exactly as
wide as the paste's other full lines, the name at its end only becomes a name with the next line's start, or it
ends in the space a soft wrap leaves), and the next line does not start a record of its own (a timestamp, a log
level, ONNX Runtime's `[E:onnxruntime:...]`).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass

JOIN_LIMIT = 4096  # characters of one joined line
WRAP_MIN = 60  # a terminal or editor wraps at this width or wider
TERMINAL_WIDTHS = frozenset((80, 100, 120))  # consoles' usual widths (Windows' console: 120; terminals: 80)
_PASSES = 4  # prefixes stripped one after another (a timestamp, then a level, then a logger name)

_ANSI = re.compile(r"\x1b\[[0-9;?]{0,20}[A-Za-z]")
# prefixes that start a new record: the next line cannot be the continuation of the one before
_RECORD_PREFIXES = (
    # 2024-06-15 03:51:08.7326342, 2023-10-12T14:55:40.727010349Z, [2022-06-26 18:42:25], 04/06/2025 19:27:09
    re.compile(
        r"^[\[(]?(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4})[ T_]\d{1,2}:\d{2}(?::\d{2})?"
        r"(?:[.,]\d{1,9})?(?:Z|\s?[+-]\d{2}:?\d{2}|\s?UTC)?[\])]?(?:\s{1,4}-\s|\s{0,4}\|\s?|:\s|\s{1,8}|$)"
    ),
    # 01:01:38-636041, 12:04:11.123, 01:12:46 -
    re.compile(r"^[\[(]?\d{2}:\d{2}:\d{2}(?:[.,-]\d{1,9})?[\])]?(?:\s{1,4}-\s|\s{1,8}|$)"),
    # systemd / syslog: "Jun 17 15:04:37 doks-gate-6 python3[2029]: "
    re.compile(r"^[A-Z][a-z]{2}\s{1,2}\d{1,2} \d{2}:\d{2}:\d{2} [\w.-]{1,64} [\w./-]{1,64}(?:\[\d{1,9}\])?:\s"),
    # glog: "F0524 09:04:15.975416  9945 common.cpp:152] "
    re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9}\s{1,8}\d{1,9} [\w.-]{1,80}:\d{1,6}\]\s"),
    # log levels: "INFO ", "WARNING: ", "ERROR - ", "INFO:memo:", "| ERROR    | ", "E/onnxruntime: "
    re.compile(
        r"^\|?\s{0,2}(?:INFO|INF|WARNING|WARN|WRN|ERROR|ERR|DEBUG|DBG|CRITICAL|FATAL|TRACE|STATUS|NOTICE)"
        r"(?:\s{0,8}\||:[\w.]{1,40}:|\s{0,4}[:\]-]\s{0,2}|\s{1,8}(?=\S))",
    ),
    # a logger's name before its level was stripped: "root - ", "__main__ - ", "memo: "
    re.compile(r"^[\w.]{1,40} - (?=(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\b)"),
)
# prefixes a program adds to every line (also to the continuation of a wrapped line)
_LINE_PREFIXES = (
    re.compile(r"^[\w.-]{0,80}[-_]\d{1,3}\s{1,40}\|\s?"),  # docker compose: "facefusion-cuda-1  | ", "app_1  | "
    re.compile(r"^\[(?!E:|W:|I:|V:|F:)[A-Za-z][\w.:/ -]{0,39}\]\s{1,4}(?=\S)"),  # "[ace-server] ", "[ReActor] "
    re.compile(r"^(?:>>>|\.\.\.)\s"),  # the Python prompt
    re.compile(r"^(?:In|Out)\s?\[\d{1,5}\]:\s"),  # IPython / Jupyter's prompt and output
    re.compile(r"^[│┃║]\s?"),  # a rich traceback's left border
)
_BORDERS = "│┃║"
_QUOTES = str.maketrans(
    {
        "‘": "'",
        "’": "'",
        "‛": "'",
        "′": "'",
        "`": "'",
        "“": '"',
        "”": '"',
        "„": '"',
        "″": '"',
        "：": ":",
        "，": ",",
        "（": "(",
        "）": ")",
        "\u00a0": " ",
        "\u3000": " ",
    }
)
# a name a wrap can cut: a provider, a library file, an onnxruntime identifier
_NAME = re.compile(
    r"^(?:\w{2,40}ExecutionProvider|(?:lib)?[\w+-]{2,80}\.(?:so(?:\.\d{1,6}){0,4}|dll|dylib)|onnxruntime_\w{2,60})$",
    re.I | re.ASCII,
)
_HEAD = re.compile(r"^[\w.+-]{1,120}", re.ASCII)
_TABLE_END = "|+│┃║─=-"  # a line ending in one of these is a table's or a box's, not a wrapped line
_GAP = re.compile(r"(?<=\S)\s{2,}(?=\S)")  # the space between a listing's columns (conda list, pip list)


@dataclass(frozen=True)
class Line:
    """One line of the log as its program printed it: where it starts and ends in the paste, and its text."""

    first: int  # index of its first physical line
    last: int  # index of its last physical line (after joining wrapped lines)
    text: str


_BOLD = re.compile(r"\*\*(?=\S)([^*\n]{1,120}?)(?<=\S)\*\*")  # markdown's **bold** around a word
_ESCAPED_UNDERSCORE = re.compile(r"(?<=[A-Za-z0-9])\\_(?=[A-Za-z0-9])")  # markdown's libcudnn\_ops\_infer.so.8
_ENTITY = re.compile(r"&(?:quot|#39|#x27|apos|lt|gt|amp|nbsp);")  # HTML's, in a page's copy of the log


def unify(text: str) -> str:
    """Typographic quotes and apostrophes as ASCII, full-width punctuation as ASCII, what a web page or markdown
    added undone (HTML entities, **bold** markers, escaped underscores in names); the text stays otherwise."""
    text = text.translate(_QUOTES)
    if "&" in text:
        text = _ENTITY.sub(lambda hit: html.unescape(hit.group(0)).replace("\xa0", " "), text)
    if "\\_" in text:
        text = _ESCAPED_UNDERSCORE.sub("_", text)
    return _BOLD.sub(r"\1", text) if "**" in text else text


def strip_prefixes(line: str) -> tuple[str, bool]:
    """The line without what the paste put before it, and whether a prefix showed that a new record starts."""
    record = False
    for _ in range(_PASSES):
        before = line
        if not _may_have_prefix(line):
            break
        for pattern in _RECORD_PREFIXES:
            hit = pattern.match(line)
            if hit and hit.end() < len(line):
                line, record = line[hit.end() :], True
        for pattern in _LINE_PREFIXES:
            hit = pattern.match(line)
            if hit and hit.end() < len(line):
                line = line[hit.end() :]
        line = line.lstrip()
        if line == before:
            break
    if line.startswith(("[E:", "[W:", "[I:", "[V:", "[F:")):
        record = True  # ONNX Runtime's own "[E:onnxruntime:Default, ...]"
    stripped = line.rstrip()
    if stripped[-1:] in _BORDERS:  # a rich box's right border
        line = stripped[:-1].rstrip()
    return line, record


_PREFIX_STARTS = frozenset("[(|>.│┃║")


def _may_have_prefix(line: str) -> bool:
    """A cheap test before the prefix patterns: every prefix starts with a digit, a capital letter (a month, a log
    level), a bracket, a bar, the prompt, a box border, or is a compose service's name followed by a bar."""
    first = line[:1]
    return first.isdigit() or first.isupper() or first in _PREFIX_STARTS or "|" in line[:140]


def _table_end(raw: str) -> bool:
    """The line ends as a table's row or border does ("| x |", "+---+"), not as a word cut after a hyphen ("site-")."""
    stripped = raw.rstrip()
    if not stripped or stripped[-1] not in _TABLE_END:
        return False
    return len(stripped) == 1 or stripped[-2] in _TABLE_END or stripped[-2].isspace()


def _columns(raw: str) -> set[int]:
    """Where a listing's columns start (after a run of spaces inside the line)."""
    return {hit.end() for hit in _GAP.finditer(raw)} if "  " in raw else set()


def _rows(raw_a: str, raw_b: str) -> bool:
    """Two rows of one listing: columns start at the same places (aligned rows are as wide as each other without
    being cut)."""
    return bool(_columns(raw_a) & _columns(raw_b))


def _tail(text: str) -> str:
    """The name-like run at the end of a line ([\\w.+-], at most 120 characters)."""
    start = len(text)
    while (
        start > 0
        and len(text) - start < 120
        and (text[start - 1].isascii() and text[start - 1].isalnum() or text[start - 1] in "_.+-")
    ):
        start -= 1
    return text[start:]


def _wrap_width(raws: list[str]) -> int | None:
    """The width the paste was wrapped at: the most common length of its long lines, seen at least twice in lines
    that differ (a line the program printed again and again is not cut at a width)."""
    distinct = dict.fromkeys(raws)
    lengths = Counter(len(r) for r in distinct if len(r) >= WRAP_MIN and not _table_end(r) and len(_columns(r)) < 2)
    if not lengths:
        return None
    width, count = lengths.most_common(1)[0]
    return width if count >= 2 else None


_PACKAGE_ROW = re.compile(r"^[\w.-]{1,80}(?:==|\s{1,40}v?)\d", re.ASCII)  # "onnxruntime==1.22.0 at ...", pip list


def _continues(raw_a: str, raw_b: str, a: str, b: str, width: int | None) -> str | None:
    """The separator joining line a with the next line b when b continues a ("" or " "), else None."""
    separator = _cut(raw_a, raw_b, a, b, width)
    if separator is None or _rows(raw_a, raw_b) or (_PACKAGE_ROW.match(a) and _PACKAGE_ROW.match(b)):
        return None  # two rows of a listing (aligned, or each a package and its version) are as wide by chance
    return separator


def _cut(raw_a: str, raw_b: str, a: str, b: str, width: int | None) -> str | None:
    """The separator when the paste cut line a where b starts, before telling a listing's rows apart."""
    if not b or not a or _table_end(raw_a):
        return None
    if width is not None and len(raw_a) == width:  # a hard wrap at the paste's width: cut anywhere
        return " " if raw_a[-1:].isspace() or raw_b[:1].isspace() else ""
    if width is not None and len(raw_a) == width - 1 and b[:1].isalpha():
        return " "  # cut at a space, which the copy dropped
    # the one long line of a console of the usual width, cut inside a word or before a space: what follows is no
    # wider than the cut line (a wrap's every piece fits the width)
    console = width is None and len(raw_a) in TERMINAL_WIDTHS and len(raw_b.rstrip()) <= len(raw_a)
    if console and (raw_a[-1:].isalnum() or raw_a[-1:] in "-_./\\") and raw_b[:1].isalnum():
        return ""
    if console and raw_b[:1] == " " and raw_b[1:2].isalpha():
        return " "
    if console and raw_b[:1] in ".:" and _NAME.fullmatch(_tail(a)):
        return ""  # cut right after a library's name or inside its version: "libcuda.so.1" + ": cannot open"
    tail, found = _tail(a), _HEAD.match(b)
    head = found.group(0).rstrip(".") if found else ""
    cut_in_word = not raw_a[-1:].isspace() and not raw_b[:1].isspace()  # a space at the cut: between words
    if tail and head and cut_in_word:
        whole = tail + head
        halves = _NAME.fullmatch(tail), _NAME.fullmatch(head)
        if _NAME.fullmatch(whole) and not halves[0] and (not halves[1] or len(raw_a) >= WRAP_MIN):
            return ""  # "CUDAE" + "xecutionProvider"; a long line's "libcudnn_cnn_in" + "fer.so.8"
        cut_major = head.isdigit() and b[len(head) :].lstrip().startswith(":")
        if cut_major and _NAME.fullmatch(whole) and len(raw_a) >= WRAP_MIN:
            return ""  # "libcublasLt.so.1" + "1: cannot open shared object file"
    if raw_a.endswith(" ") and len(raw_a.rstrip()) >= WRAP_MIN:
        return " "  # a soft wrap leaves the space at the end of the cut line
    return None


def logical_lines(physical: list[tuple[int, str]]) -> list[Line]:
    """Physical lines (index in the paste, text; sorted, not necessarily consecutive) -> the program's lines:
    ANSI codes and prefixes removed, wrapped lines joined (only lines whose indices follow each other), quotes
    unified; empty lines dropped."""
    raws = [
        (index, _ANSI.sub("", text).rstrip("\r") if "\x1b" in text else text.rstrip("\r")) for index, text in physical
    ]
    width = _wrap_width([r for _, r in raws])
    out: list[Line] = []
    previous_raw = ""
    stripped: dict[str, tuple[str, bool]] = {}  # a log repeats its lines: each distinct one is stripped once
    joins: dict[tuple[str, str, str], str | None] = {}
    for index, raw in raws:
        if (known := stripped.get(raw)) is None:
            text, record = strip_prefixes(raw.strip())
            known = stripped[raw] = (unify(text), record)
        text, record = known
        joined = False
        if out and not record and out[-1].last == index - 1:
            key = (previous_raw, raw, out[-1].text)
            if key not in joins:
                joins[key] = _continues(previous_raw, raw, out[-1].text, text, width)
            separator = joins[key]
            if separator is not None and len(out[-1].text) + len(text) <= JOIN_LIMIT:
                last = out[-1]
                out[-1] = Line(last.first, index, last.text + separator + text)
                joined = True
        if not joined and text:
            out.append(Line(index, index, text))
        previous_raw = raw
    return out


def normalise(text: str) -> list[str]:
    """The program's lines of a whole (small) text: `logical_lines` of every line."""
    return [line.text for line in logical_lines(list(enumerate(text.split("\n"))))]
