"""Issue 37: every URL-taking option is checked once (provisioner/urls.py), and a URL it accepts is one that the
HTTP library (requests, urllib3) and urllib read without an error; credentials are masked wherever a URL is shown."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provisioner.commands.options import OPTIONS, PLANNING
from provisioner.urls import masked, problem
from tests.unit.test_fuzz_cli import assert_one_error, commands, run_in_process

if TYPE_CHECKING:
    from pathlib import Path

SCHEMES = ("http", "https", "file")
BAD = (
    "http://[::1/simple/",  # ValueError: Invalid IPv6 URL
    "http://127.0.0.1:99999/simple/",  # InvalidURL
    "http://127.0.0.1:0/simple/",
    "http://127.0.0.1:8o/simple/",
    "http://a..b/simple/",
    "http://.example.com/",
    "http://:80/",
    "https:///simple/",
    "https://bob:s3cret@mirror example/simple/",
    "ftp://mirror/simple/",
)
PARTS = st.sampled_from(
    ["http://", "https://", "file://", "[", "]", "::1", ":", "@", "/", "..", ".", "127.0.0.1", "host", "99999"]
    + ["0", "8080", "%", "?", "#", "ü", "xn--", "-", "bob:pw@", "\u3002", "*", " ", "\t"]
)
URLISH = st.lists(PARTS, min_size=1, max_size=8).map("".join)


@given(url=URLISH | st.text(max_size=40))
@settings(max_examples=300 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 10_000)
def test_a_url_the_check_accepts_is_one_every_client_reads(url: str) -> None:
    from urllib.parse import urlsplit

    import requests
    import urllib3.util

    if problem(url, SCHEMES) is not None or not url.lower().startswith("http"):
        return
    parts = urlsplit(url)
    assert parts.hostname and parts.port != 0  # no ValueError above either
    requests.Request("GET", url + "onnxruntime-gpu/").prepare()  # InvalidURL, LocationParseError would raise
    assert urllib3.util.parse_url(url).host


def url_options() -> list[tuple[str, str]]:
    """(command, flag) of every option whose value is a URL, read from the declarations."""
    declared = {**PLANNING, **OPTIONS}
    found = []
    for name, command in commands():
        for param in command.params:
            each = declared.get(str(param.name))
            if each is not None and each.metavar == "URL":
                found.append((name, each.flags[-1]))
    return found


CHEAP = {
    "download": ("--dest", "{tmp}/wheels"),
    "apply": ("--dry-run", "--venv", "{tmp}/venv"),
    "matrix update": ("--retries", "0", "--timeout", "1"),
}


def test_every_url_option_is_known() -> None:
    flags = {flag for _, flag in url_options()}
    assert flags == {"--index-url", "--extra-index-url", "--tensorrt-index-url"}
    assert {name for name, _ in url_options()} >= {"plan", "apply", "download", "matrix update"}


@pytest.mark.parametrize(("command", "flag"), url_options())
@pytest.mark.parametrize("url", BAD)
def test_every_url_option_refuses_a_url_no_client_reads_in_one_line(
    tmp_path: Path, command: str, flag: str, url: str
) -> None:
    context = [arg.format(tmp=tmp_path) for arg in CHEAP.get(command, ())]
    code, _, stderr = run_in_process(*command.split(), *context, flag, url)
    assert_one_error(code, stderr, True, f"{command} {flag} {url}")
    assert f"error: {flag} " in stderr and "s3cret" not in stderr


def test_credentials_are_masked_in_any_text() -> None:
    assert masked("from https://bob:s3cret@mirror/simple/ and http://tok@h/") == (
        "from https://bob:****@mirror/simple/ and http://****@h/"
    )
    assert masked("mail bob@example.com, path /a@b") == "mail bob@example.com, path /a@b"


@pytest.mark.parametrize("fmt", ["text", "pip", "uv", "requirements", "conda", "dockerfile"])
@pytest.mark.parametrize("flag", ["--tensorrt-index-url", "--index-url", "--extra-index-url"])
def test_a_password_in_any_url_is_never_printed_for_a_person(fmt: str, flag: str) -> None:
    url = "https://bob:s3cret@mirror.example.com/simple/"
    args = ["plan", "--driver", "580", "--gpu-cc", "9.0", "--tensorrt", "--format", fmt, flag, url]
    code, stdout, stderr = run_in_process(*args)
    assert code in (0, 2), stderr
    assert "s3cret" not in stdout + stderr, f"{fmt} {flag}"
    if code == 0 and "****" in stdout:
        assert "passwords in URLs are shown as ****" in stderr
    code, stdout, stderr = run_in_process(*args[:-1], url.replace("/simple/", ":99999/simple/"))
    assert code == 2 and "s3cret" not in stdout + stderr
