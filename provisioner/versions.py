"""Every version helper of ortprov: parse, compare, sort, match (numeric versions and `--ort` specifiers).

Driver, CUDA, glibc, compute-capability, library and onnxruntime versions are dotted numbers; comparing them
as integer tuples is exact and costs nothing at start-up. Specifiers with operators use PEP 440 (via
`packaging`, imported only when a clause is not a plain numeric one). Nothing else in the tree parses or
compares versions by hand: `vtuple` is the sort key, `at_least` the comparison, `in_series` the prefix match.
"""

from __future__ import annotations

import re
from functools import lru_cache

TYPE_CHECKING = False  # `typing` costs ~7 ms to import; the start-up of `ortprov plan` does without it
if TYPE_CHECKING:
    from collections.abc import Callable

_NUMERIC = re.compile(r"^\d+(\.\d+)*$")
# a Python version as `--python` takes it: 3.12, 3.12.4, 3.13t (free-threaded); ASCII digits (see validate.py)
PYTHON_VERSION = re.compile(r"^(\d{1,2})\.(\d{1,2})(?:\.\d{1,3})?(t?)$", re.ASCII)
_RELEASE = re.compile(r"^(\d+(?:\.\d+)*)")


@lru_cache(maxsize=4096)
def vtuple(version: str) -> tuple[int, ...]:
    """(535, 104, 5) for "535.104.05"; the numeric release of anything else ("1.20.0rc1" -> (1, 20, 0),
    "3.13t" -> (3, 13), "9.1.0.70.post1" -> (9, 1, 0, 70)). ValueError when it does not start with a number."""
    match = _RELEASE.match(version.strip())
    if not match:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(part) for part in match.group(1).split("."))


@lru_cache(maxsize=4096)
def at_least(version: str, floor: str) -> bool:
    """version >= floor, comparing dotted numbers ("535.104" >= "525.60.13"; "580" == "580.0.0")."""
    return _padded(vtuple(version), vtuple(floor)) >= _padded(vtuple(floor), vtuple(version))


def driver_at_least(version: str, floor: str) -> bool:
    """A driver meets a floor; a bare branch number ("580", from `--driver 580`) stands for that whole
    branch, so only the branches are compared."""
    if "." not in version.strip():
        return vtuple(version)[0] >= vtuple(floor)[0]
    return at_least(version, floor)


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return a + (0,) * max(0, len(b) - len(a))


def major(version: str | int) -> int:
    """12 for "12.4.1" (and for 12)."""
    return vtuple(str(version))[0]


def major_minor(version: str) -> str:
    """ "12.4" for "12.4.127"."""
    return ".".join(version.split(".")[:2])


def in_series(version: str, series: str | int) -> bool:
    """The version belongs to the series: "12.4.1" to 12 and to "12.4", not to "12.8"."""
    wanted = vtuple(str(series))
    return vtuple(version)[: len(wanted)] == wanted


@lru_cache(maxsize=256)
def ort_matcher(spec: str) -> Callable[[str], bool]:
    """A predicate for onnxruntime releases (`--ort`, `matrix show --ort`): a bare major or minor names that
    series ("1" is 1.*, "1.20" is 1.20.*), a longer version that release ("1.20.1"); anything with an
    operator is a PEP 440 specifier (">=1.18,<1.21", "~=1.19.0"). ValueError if malformed."""
    text = spec.strip()
    if _NUMERIC.match(text):
        parts = vtuple(text)
        if len(parts) <= 2:
            return lambda version: in_series(version, text)
        return lambda version: _padded(vtuple(version), parts) == _padded(parts, vtuple(version))
    return specifier_matcher(text)


@lru_cache(maxsize=256)
def specifier_matcher(spec: str) -> Callable[[str], bool]:
    """A predicate for a PEP 440 specifier ("~=13.0", ">=9,<10", "==12.*"); numeric clauses are matched here,
    the rest by `packaging` (pre-releases included). ValueError if malformed."""
    text = spec.strip()
    if not text:
        raise ValueError("empty specifier")
    clauses = _simple_clauses(text)
    if clauses is not None:
        return lambda version: _simple_contains(clauses, version)
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifiers = SpecifierSet(text)
    except InvalidSpecifier:
        raise ValueError(f"not a version or specifier: {spec!r}") from None
    return lambda version: specifiers.contains(version, prereleases=True)


def satisfies(version: str, spec: str) -> bool:
    """The version meets a requirement's specifier ("" and a malformed specifier: any version does)."""
    if not spec:
        return True
    try:
        return specifier_matcher(spec)(version)
    except ValueError:
        return True


_CLAUSE = re.compile(r"^(==|!=|>=|<=|~=|>|<)\s*(\d+(?:\.\d+)*)(\.\*)?$")
Clause = tuple[str, tuple[int, ...], bool]


def _simple_clauses(text: str) -> tuple[Clause, ...] | None:
    """Numeric PEP 440 clauses ("~=13.0", ">=9,<10", "==12.*"), or None to let `packaging` decide."""
    clauses = []
    for part in text.split(","):
        match = _CLAUSE.match(part.strip())
        if not match:
            return None
        op, number, star = match.group(1), vtuple(match.group(2)), bool(match.group(3))
        if (star and op not in ("==", "!=")) or (op == "~=" and len(number) < 2):
            return None
        clauses.append((op, number, star))
    return tuple(clauses)


_RELEASE_POST = re.compile(r"^(\d+(?:\.\d+)*)(?:\.post(\d+))?$")


def _simple_contains(clauses: tuple[Clause, ...], version: str) -> bool:
    match = _RELEASE_POST.match(version)
    if not match:  # pre-releases, local versions ...: let packaging decide
        from packaging.specifiers import SpecifierSet

        text = ",".join(f"{op}{'.'.join(map(str, n))}{'.*' if star else ''}" for op, n, star in clauses)
        return SpecifierSet(text).contains(version, prereleases=True)
    have = vtuple(match.group(1))
    post = match.group(2) is not None  # 9.1.0.70.post1: after 9.1.0.70, before 9.1.0.71
    for op, number, star in clauses:
        a, b = _padded(have, number), _padded(number, have)
        if star:
            ok = have[: len(number)] == number
            ok = ok if op == "==" else not ok
        elif op == "~=":
            ok = a >= b and have[: len(number) - 1] == number[:-1]
        elif op in ("==", "!="):
            ok = (a == b and not post) == (op == "==")
        elif op == "<=":
            ok = a < b or (a == b and not post)
        else:
            ok = {">=": a >= b, ">": a > b, "<": a < b}[op]
        if not ok:
            return False
    return True
