"""The limits every number, duration and text the CLI reads is held to: one home for them. Pure (no I/O).

A value a user typed or a file a user named reaches the core only through these: a duration is finite,
positive and at most MAX_SECONDS (what every wait of ortprov can honour: the operating system's timers stop
at ~24.8 days, and "no limit" is refused, not guessed: a GPU check that hangs must end); a whole number has at
most a few digits before it is converted (Python refuses integers of more than 4300 digits, with a ValueError
nobody expected); text is UTF-8, decoded strictly; JSON is nested at most MAX_JSON_DEPTH deep and holds no
integer of more than MAX_JSON_DIGITS digits and no NaN or Infinity. Unicode digits (full-width `８.６`,
Arabic-Indic, ...) are read as the digits they are, everywhere (`ascii_digits`).

`userfiles.py` (the edge that opens the files) and `commands/options.py` (the flags) call these; each raises
ValueError with the reason as a phrase ("is nested deeper than 100 levels"), and its caller names the flag or
the file in the one error line, or BadInput naming the flag directly.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata

from provisioner.errors import BadInput

TYPE_CHECKING = False  # `typing` costs ~7 ms to import
if TYPE_CHECKING:
    from typing import Any

MAX_SECONDS = 86_400.0  # a day: the longest wait (timeout, budget) ortprov accepts
MAX_JSON_DEPTH = 100  # a host file is 5 deep, a plan 6
MAX_JSON_DIGITS = 30  # digits of one integer in a JSON file (an int64 has 19)
MAX_DIGITS = 12  # digits of a whole number typed on the command line (a size, a count)

_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # unrolled: linear on megabytes
_BRACKETS = re.compile(r"[\[\]{}]")


def ascii_digits(text: str) -> str:
    """`text` with every Unicode decimal digit as its ASCII digit and compatibility forms folded (NFKC: the
    full-width `８．６` is `8.6`): a value is read as the digits it shows, or refused whole by an ASCII check."""
    folded = unicodedata.normalize("NFKC", text)
    if folded.isascii():
        return folded
    return "".join(str(unicodedata.decimal(c)) if unicodedata.category(c) == "Nd" else c for c in folded)


def duration(value: float, flag: str) -> float:
    """A number of seconds: finite, positive, at most MAX_SECONDS; BadInput naming the flag otherwise."""
    example = f"example: {flag} 60"
    if math.isnan(value) or value <= 0:
        raise BadInput(f"{flag} must be positive, got {value}", hint=example)
    if value > MAX_SECONDS:
        shown = "infinity" if math.isinf(value) else f"{value:.0f}" if value < 1e15 else f"{value:g}"
        raise BadInput(
            f"{flag} {shown} is longer than ortprov waits: at most {MAX_SECONDS:.0f} seconds (a day)",
            hint=f"there is no 'no limit' (a GPU check that hangs must end): pass {flag} {MAX_SECONDS:.0f} or less",
        )
    return value


def whole_number(text: str, what: str, low: int = 1, high: int = 10**MAX_DIGITS - 1) -> int:
    """`text` as an integer in [low, high] (Unicode digits read as digits); ValueError with the reason, the
    digits counted before anything converts them."""
    digits = ascii_digits(text.strip())
    if not digits.isascii() or not digits.isdigit():
        raise ValueError(f"{what} {text.strip()!r} is not a whole number")
    if len(digits.lstrip("0")) > len(str(high)):
        raise ValueError(f"{what} has {len(digits)} digits: at most {high} fits")
    number = int(digits)
    if not low <= number <= high:
        raise ValueError(f"{what} {number} is out of range: {low} to {high}")
    return number


def utf8_text(data: bytes) -> str:
    """`data` decoded as UTF-8 (a leading byte-order mark dropped); ValueError saying where it is not text."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise ValueError("is UTF-16 text, not UTF-8 (save it as UTF-8)") from None
        raise ValueError(f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def json_value(text: str) -> Any:
    """The JSON document in `text`, held to the limits (nesting, integer digits, no NaN or Infinity); ValueError
    with the reason. The nesting is measured before the parser recurses (a scan of the brackets outside strings)."""
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"is nested {depth} levels deep (at most {MAX_JSON_DEPTH}): not what ortprov writes")
    try:
        return json.loads(text, parse_int=_json_int, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:  # the scan above makes this unreachable; kept so that no input is a bug
        raise ValueError(f"is nested too deeply (at most {MAX_JSON_DEPTH})") from None


def json_depth(text: str) -> int:
    """The deepest nesting of brackets in a JSON text, strings skipped (linear; tolerant of malformed text)."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub('""', text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_JSON_DIGITS:
        raise ValueError(f"holds an integer of {len(text.lstrip('-'))} digits (at most {MAX_JSON_DIGITS})")
    return int(text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"holds {name}, which is not JSON")


def json_decoder() -> json.JSONDecoder:
    """A decoder held to the same limits on integers and constants (ValueError), for a document read a value at
    a time (`JSONDecoder.raw_decode`: a NodeList's nodes, provisioner/cluster/nodelist.py)."""
    return json.JSONDecoder(parse_int=_json_int, parse_constant=_no_constant)


__all__ = [
    "MAX_DIGITS",
    "MAX_JSON_DEPTH",
    "MAX_JSON_DIGITS",
    "MAX_SECONDS",
    "ascii_digits",
    "duration",
    "json_depth",
    "json_decoder",
    "json_value",
    "utf8_text",
    "whole_number",
]
