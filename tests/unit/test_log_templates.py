"""doctor --log reads the message space, not a sample of it (issue 22, round 4).

Every message template of provisioner/doctor/messages.yaml (taken from the code that prints it: onnxruntime's
provider bridge, pybind state, cuda_call.cc, the Windows and glibc loaders, the Python package, the .NET, Java and
Node bindings) is filled in each way its slots list (other libraries, versions, paths, Windows and Linux, the loader's
words in other languages) and pasted the ways users paste (a timestamp and level before it, docker compose's prefix,
ANSI colours, CRLF, hard wrapping at a terminal's width, another language's exception around it, UTF-16 shown letter
spaced); the first finding must be the template's cause.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from provisioner.doctor import analyze_log
from provisioner.findings import CODES
from provisioner.matrix.load import load_matrix

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

MATRIX = load_matrix(use_cache=False)
DATA = yaml.safe_load((Path(__file__).parents[2] / "provisioner/doctor/messages.yaml").read_text(encoding="utf-8"))
SLOT = re.compile(r"\{(\w+)\}")


def _values(template: dict, slot: str) -> dict[str, str | None]:
    """A slot's values, each with the code it implies (None: the template's own code)."""
    if slot.startswith("msg") and slot[3:].isdigit():
        return dict.fromkeys(DATA["windows_errors"][int(slot[3:])])
    given = template.get(slot, DATA["slots"].get(slot))
    assert given is not None, f"{template['id']}: no values for {{{slot}}}"
    return dict(given) if isinstance(given, dict) else dict.fromkeys(given)


def fillings(template: dict) -> Iterator[tuple[str, str]]:
    """(line, code): every value of the slot with the most values, the other slots taken in turn."""
    slots = list(dict.fromkeys(SLOT.findall(template["text"])))
    values = {slot: _values(template, slot) for slot in slots}
    widest = max(slots, key=lambda s: len(values[s]), default=None)
    count = len(values[widest]) if widest else 1
    for i in range(count):
        text, code = template["text"], template["code"]
        for slot in slots:
            options = list(values[slot].items())
            value, implied = options[i % len(options)]
            text = text.replace("{" + slot + "}", value)
            if code == f"${slot}":
                code = implied
        assert code in CODES, f"{template['id']}: {code} is no finding code"
        yield text, code


def _wrap(text: str, width: int = 80) -> str:
    return "\n".join(
        "\n".join(line[i : i + width] for i in range(0, len(line), width)) or line for line in text.split("\n")
    )


def _utf16_spaced(text: str) -> str:
    # UTF-16 read as a one-byte encoding with its NULs shown as spaces: "E r r o r   l o a d i n g"
    return "\n".join(" ".join(line) + " " for line in text.split("\n"))


PASTES: dict[str, Callable[[str], str]] = {
    "plain": lambda t: t,
    "timestamp": lambda t: "\n".join(f"2024-06-15 03:51:08.732 ERROR {line}" for line in t.split("\n")),
    "compose": lambda t: "\n".join(f"app-worker-1  | {line}" for line in t.split("\n")),
    "ansi": lambda t: "\n".join(f"\x1b[1;31m{line}\x1b[0m" for line in t.split("\n")),
    "crlf": lambda t: "Loading model...\r\n" + t.replace("\n", "\r\n") + "\r\nDone.\r\n",
    "wrapped": _wrap,
    "python": lambda t: (
        'Traceback (most recent call last):\n  File "C:\\app\\run.py", line 12, in <module>\n'
        "    sess = ort.InferenceSession(path, providers=providers)\n"
        f"onnxruntime.capi.onnxruntime_pybind11_state.Fail: {t}"
    ),
    "dotnet": lambda t: (
        f"Unhandled exception. {t}\n   at Microsoft.ML.OnnxRuntime.NativeApiStatus.VerifySuccess(IntPtr nativeStatus)\n"
        "   at Microsoft.ML.OnnxRuntime.SessionOptions.AppendExecutionProvider_CUDA(Int32 deviceId)"
    ),
    "java": lambda t: f'Exception in thread "main" {t}\n\tat ai.onnxruntime.OrtSession.createSession(Native Method)',
    "node": lambda t: f"Error: {t}\n    at InferenceSession.create (inference-session-impl.js:198:34)",
    "utf16": _utf16_spaced,
    # a web page's copy (HTML entities for quotes and brackets) and markdown's escaped underscores
    "html": lambda t: t.replace("&", "&amp;").replace('"', "&quot;").replace("'", "&#39;").replace("<", "&lt;"),
    "markdown": lambda t: re.sub(r"(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])", r"\\_", t),
    "ipython": lambda t: (
        "In [3]: sess = ort.InferenceSession(path, providers=providers)\n"
        + "\n".join(f"Out[3]: {line}" if i == 0 else line for i, line in enumerate(t.split("\n")))
    ),
}

CASES = [
    pytest.param(line, code, paste, id=f"{template['id']}-{n}-{paste}")
    for template in DATA["templates"]
    for n, (line, code) in enumerate(fillings(template))
    for paste in PASTES
    if paste not in template.get("not_pasted", ())  # a wrapper that would contradict the message
]


@pytest.mark.parametrize(("line", "code", "paste"), CASES)
def test_each_template_pasted_any_way_is_read_as_its_cause(line: str, code: str, paste: str):
    text = PASTES[paste](line)
    found = [f.code for f in analyze_log(text, matrix=MATRIX)]
    assert found[:1] == [code], f"{found} for:\n{text}"


def test_the_templates_cover_every_source_and_cause():
    sources = {t["source"].split(" ")[0] for t in DATA["templates"]}
    codes = {code for t in DATA["templates"] for _, code in fillings(t)}
    assert len(DATA["templates"]) >= 30 and len(sources) >= 10
    assert {"cudnn-missing", "cuda-library-missing", "cpu-package-only", "gpu-provider-failed", "no-driver"} <= codes
    assert all(len(words) >= 7 for words in DATA["windows_errors"].values())  # the loader's words, in languages
    assert sum(1 for _ in itertools.chain.from_iterable(fillings(t) for t in DATA["templates"])) >= 100


def test_every_code_a_log_can_show_has_templates():
    """Each finding code with a log rule (rules.RULES) or read by doctor/tensorrt.py has the messages of its cause."""
    from provisioner.doctor.rules import RULES
    from provisioner.doctor.tensorrt import CODES as TENSORRT_CODES

    readable = {r.code for r in RULES if r.on_log is not None} | set(TENSORRT_CODES)
    covered = {code for t in DATA["templates"] for _, code in fillings(t)}
    assert readable - covered == set()
