"""URLs a user gives (an index, a mirror): the one check every URL-taking option makes, and credentials masked in
every URL ortprov prints for a person. Pure (no I/O, no network).

`problem(url, schemes)` says, as a phrase, why a URL cannot be used ("has port 99999, out of 1 to 65535"), or
None: what it accepts is what urllib, requests and pip read as the same URL (a host, a port that exists, no
spaces, quotes or control characters). `masked(text)` shows every `scheme://user:password@` in a text as
`scheme://user:****@` (pip's way): a password typed into `--tensorrt-index-url` is no one else's to read.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[\s\"'<>\\`\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$")
# scheme://user:password@ or scheme://token@ (the userinfo of RFC 3986: no '/', '@' or space inside)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/@\s:'\"`]*)(?::([^/@\s'\"`]*))?@")


def problem(url: str, schemes: tuple[str, ...]) -> str | None:
    """Why `url` is not a URL of one of `schemes` that every client reads alike, as a phrase; None when it is."""
    from urllib.parse import urlsplit

    said = ", ".join(f"{scheme}://" for scheme in schemes[:-1]) + f" or {schemes[-1]}://"
    if _UNSAFE.search(url):
        return f"is not a URL ({said}): it holds spaces, quotes or control characters"
    start = _SCHEME.match(url)
    if start is None or start.group(1).lower() not in schemes:
        return f"is not a URL ({said})"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535", "Port could not be cast ..."
        reason = str(exc)
        if "port" in reason.lower():
            return f"has a port that is not one ({parts_netloc(url)!r}): a port is a number from 1 to 65535"
        return f"has a host that is not one ({parts_netloc(url)!r}: {reason})"
    if parts.scheme.lower() == "file":
        return None if parts.path else "names no path (e.g. file:///srv/wheels/simple/)"
    host = parts.hostname or ""
    if not host:
        return "names no host (e.g. https://pypi.org/simple/)"
    if port == 0:
        return "has port 0, which no server listens on: a port is a number from 1 to 65535"
    if not host.startswith("[") and ":" not in host and not _host_ok(host):
        return f"has a host name that is not one ({host!r})"
    return None


def parts_netloc(url: str) -> str:
    """The authority of a URL (what follows `scheme://` up to the path), credentials masked."""
    rest = url.split("://", 1)[-1]
    return masked("x://" + rest.split("/", 1)[0])[4:]


def _host_ok(host: str) -> bool:
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return False
    labels = ascii_host.rstrip(".").split(".")
    return len(ascii_host) <= 253 and all(_LABEL.match(label) for label in labels)


def masked(text: str) -> str:
    """`text` with the password (or a lone token) of every URL in it shown as `****`."""

    def mask(match: re.Match[str]) -> str:
        scheme, user, password = match.group(1), match.group(2), match.group(3)
        if password is None:
            return f"{scheme}****@"
        return f"{scheme}{user}:****@"

    return _USERINFO.sub(mask, text) if "@" in text else text


__all__ = ["masked", "problem"]
