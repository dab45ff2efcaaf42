"""TensorRT's own failures, from a pasted log and from a verify report: evidence and rules in one module.

- tensorrt-install-failed: NVIDIA's source stub on PyPI could not fetch the real wheel ("This is a special
  placeholder package which downloads a real wheel package from ..."), or a TensorRT version requires a
  deprecated placeholder that refuses to build (tensorrt-cu13-libs 10.13.x needs nvidia-cuda-runtime-cu13).
- tensorrt-major-mismatch: TensorRT of another major than the provider links (TensorRT 11 installed for a build
  that links libnvinfer.so.10): its libraries have other sonames, so the provider cannot load.
- tensorrt-engine-cache-stale: an engine in the cache was built by another TensorRT or on another GPU; TensorRT
  refuses it ("The engine plan file is not compatible with this version of TensorRT", "... generated on an
  incompatible device ...", ORT's "TensorRT EP could not deserialize engine from cache").
- the CUDA context clash (code cuda-context-conflict, written by rules.py): this module adds the driver API's
  names for it (CUDA_ERROR_INVALID_HANDLE, pycuda's "cuLaunchKernel failed: invalid resource handle").

Pure: text and records in, findings out. Hooked into doctor by one call each (`log_findings` from rules.py's
analyze_log, `report_findings` from host.py's report rules); the facts it needs (which TensorRT major a release
links) come from the matrix.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from provisioner.findings import Finding
from provisioner.matrix.query import linked_tensorrt_major

if TYPE_CHECKING:
    from collections.abc import Iterable

    from provisioner.doctor.fixes import Fixes
    from provisioner.matrix.model import Matrix

_STUB = re.compile(
    r"special placeholder package which downloads a real wheel package|"
    r"This project is not functional and is a placeholder from NVIDIA|"
    r"The installation of (?P<dist>[\w.-]{1,60}) for version (?P<version>[\w.+-]{1,40}) failed|"
    r"Didn't find wheel for (?P<dist2>[\w.-]{1,60}) (?P<version2>[\w.+-]{1,40})|"
    r"Failed to open project URL (?P<url>\S{1,300})",
    re.I,
)
_STUB_INDEX = re.compile(r"downloads a real wheel package\s{0,4}(?:\n\s{0,8})?from (?P<index>\S{1,300}?)\.?\s", re.I)
_DEPRECATED = re.compile(r"THIS PROJECT '(?P<dist>nvidia-[\w-]{1,60})' IS DEPRECATED", re.I)
_TRT_WANTED = re.compile(r"\b(tensorrt[-_]cu\d{2}[-_]libs|tensorrt[-_]cu\d{2}|tensorrt)\b", re.I)
# the TensorRT provider's library loads a libnvinfer without a symbol it links (an older or newer TensorRT)
_PROVIDER_SYMBOL = re.compile(  # the provider's own file is the one lacking it (not a TensorRT library it loads)
    r"onnxruntime_providers_tensorrt\.(?:so|dll)[\w.]{0,12}:\s?(?:undefined symbol:\s?(?P<symbol>\w{2,120})|"
    r"version [`'\"]?(?P<version>[\w.]{2,40})[`'\"]? not found)",
    re.I,
)
_STALE = re.compile(
    r"engine plan file is not compatible with this version of TensorRT|"
    r"engine plan file is generated on an incompatible (?:device|version)|"
    r"Version tag does not match|Magic tag does not match|"
    # TensorRT's warning on an engine built on another GPU model
    r"Using an engine plan file across different models of devices|"
    r"TensorRT EP could not deserialize engine from cache",
    re.I,
)
_NVINFER_MISSING = re.compile(
    r"libnvinfer\.so\.(?P<major>\d{1,2})\S{0,20}: cannot open shared object|"
    r"Could not load dynamic library [\"']?libnvinfer\.so\.(?P<major2>\d{1,2})\b",
    re.I,
)
# another TensorRT major said present: "libnvinfer.so.6 is located at 'TensorRT-*/lib'"
_NVINFER_PRESENT = re.compile(
    r"(?<![\w.])(?P<name>libnvinfer\.so)\.(?P<version>\d{1,2})\s(?:is|was)\s(?:\w{1,10}\s)?(?:located|present|installed)",
    re.I,
)
_TRT_LISTED = re.compile(
    r"^[\s>+*-]{0,6}(?P<name>tensorrt(?:[-_]cu\d{2})?(?:[-_]libs)?)(?:\s{1,40}|==)v?(?P<version>\d{1,3}\.\d{1,3}[\w.+-]{0,20})",
    re.I | re.M,
)
# the context clash, in the driver API's and pycuda's words (rules.py already reads "invalid resource handle",
# "CUDA_ERROR_INVALID_CONTEXT" and "pycuda.autoinit")
_CONTEXT = re.compile(
    r"CUDA_ERROR_INVALID_HANDLE|CUDA_ERROR_CONTEXT_IS_DESTROYED|"
    r"cu(?:LaunchKernel|ModuleGetFunction|StreamSynchronize|MemcpyHtoDAsync|MemcpyDtoHAsync)[\w]{0,4} failed: invalid|"
    r"explicit_context_dependent failed|invalid device context",
    re.I,
)

CODES = ("tensorrt-install-failed", "tensorrt-major-mismatch", "tensorrt-engine-cache-stale")


def _lines(text: str, pattern: re.Pattern[str]) -> list[str]:
    """The lines (stripped, at most 300 characters) holding a match: one search of the whole text, not one a line."""
    found, end = [], -1
    for hit in pattern.finditer(text):
        if hit.start() <= end:
            continue  # this line is taken already
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.end())
        end = len(text) if end < 0 else end
        found.append(text[start:end].strip()[:300])
    return found


# words one of which a text must hold for each pattern to be tried (lower case): most logs say nothing of TensorRT
_WORDS = {
    "stub": ("placeholder", "installation of", "didn't find wheel", "project url"),
    "deprecated": ("deprecated",),
    "nvinfer": ("libnvinfer",),
    "stale": ("engine", "tag does not match"),
    "context": ("cuda_error_invalid", "failed: invalid", "explicit_context", "device context", "context_is_destroyed"),
}


_ALL_WORDS = (*dict.fromkeys(w for words in _WORDS.values() for w in words), "tensorrt", "nvinfer")


def _mentions(lower: str, topic: str) -> bool:
    return any(word in lower for word in _WORDS[topic])


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _relevant(text: str) -> str:
    """The lines naming anything TensorRT's rules read (each with the line after it: a message may go on there), in
    order: one `find` per word over the text instead of every pattern over every line."""
    lower = text.lower()
    spans: set[tuple[int, int]] = set()
    for word in _ALL_WORDS:
        pos = lower.find(word)
        while pos >= 0:
            start = lower.rfind("\n", 0, pos) + 1
            end = _line_end(lower, pos)
            spans.add((start, _line_end(lower, end + 1) if end < len(lower) else end))
            pos = lower.find(word, end)
    return "\n".join(text[start:end] for start, end in sorted(spans))


def _linked_major(matrix: Matrix | None, ort_version: str | None) -> int | None:
    """The TensorRT major the release's TensorRT provider links (from the matrix)."""
    if matrix is None or not ort_version:
        return None
    if (linked := linked_tensorrt_major(matrix.tensorrt_providers, ort_version)) is not None:
        return linked
    build = next((b for b in matrix.builds if b.ort_version == ort_version and b.tensorrt_version), None)
    return int(build.tensorrt_version.split(".")[0]) if build and build.tensorrt_version else None


def log_findings(text: str, fixes: Fixes, matrix: Matrix | None = None) -> list[Finding]:
    """TensorRT findings a pasted log shows (empty when none)."""
    found: list[Finding] = []
    text = _relevant(text)
    lower = text.lower()
    stub = _lines(text, _STUB) if _mentions(lower, "stub") else []
    deprecated = _DEPRECATED.search(text) if _mentions(lower, "deprecated") else None
    if stub:
        names = [
            m.group("dist") or m.group("dist2") for m in _STUB.finditer(text) if m.group("dist") or m.group("dist2")
        ]
        index = _STUB_INDEX.search(text)
        where = index.group("index").rstrip(".") if index else "NVIDIA's index"
        what = f"{names[0]} on PyPI" if names else "the TensorRT package on PyPI"
        found.append(
            Finding(
                "tensorrt-install-failed",
                "error",
                f"{what} is NVIDIA's placeholder (a source stub): building it downloads the real wheel from "
                f"{where}, which could not be reached",
                tuple(dict.fromkeys(stub))[:6],
                fixes.for_code("tensorrt-install-failed"),
                "nvinfer",
            )
        )
    elif deprecated and _TRT_WANTED.search(text):
        found.append(
            Finding(
                "tensorrt-install-failed",
                "error",
                f"the TensorRT version asked for requires {deprecated.group('dist')}, a deprecated placeholder that "
                "refuses to build (TensorRT 10.13.x for CUDA 13)",
                tuple(dict.fromkeys(_lines(text, _DEPRECATED) + _lines(text, _TRT_WANTED)[:2]))[:6],
                fixes.for_code("tensorrt-install-failed"),
                "nvinfer",
            )
        )
    missing = _NVINFER_MISSING.search(text) if _mentions(lower, "nvinfer") else None
    if missing:
        wanted = int(missing.group("major") or missing.group("major2"))
        present = [*_TRT_LISTED.finditer(text), *_NVINFER_PRESENT.finditer(text)]
        other = [m for m in present if int(m.group("version").split(".")[0]) != wanted]
        if other:
            listed = other[0]
            theirs = listed.group("version").split(".")[0]
            found.append(
                Finding(
                    "tensorrt-major-mismatch",
                    "error",
                    f"the TensorRT provider links libnvinfer.so.{wanted} (TensorRT {wanted}), but "
                    f"{listed.group('name')} {listed.group('version')} is installed: TensorRT "
                    f"{theirs} ships libnvinfer.so.{theirs}",
                    (missing.group(0), listed.group(0).strip()),
                    fixes.for_code("tensorrt-major-mismatch"),
                    "nvinfer",
                )
            )
    symbol = _PROVIDER_SYMBOL.search(text) if "providers_tensorrt" in lower else None
    if symbol:  # the TensorRT it found is not the one it was built against (a symbol of that TensorRT is absent)
        found.append(
            Finding(
                "tensorrt-major-mismatch",
                "error",
                "the TensorRT provider finds a TensorRT other than the one it was built against ("
                + (
                    f"its symbol {symbol.group('symbol')}"
                    if symbol.group("symbol")
                    else f"version {symbol.group('version')}"
                )
                + " is absent from the libnvinfer loaded)",
                (symbol.group(0).strip()[:300],),
                fixes.for_code("tensorrt-major-mismatch"),
                "nvinfer",
            )
        )
    stale = _lines(text, _STALE) if _mentions(lower, "stale") else []
    if stale:
        found.append(
            Finding(
                "tensorrt-engine-cache-stale",
                "error",
                "a cached TensorRT engine was built by another TensorRT version or on another GPU: TensorRT "
                "refuses to load it",
                tuple(dict.fromkeys(stale))[:6],
                fixes.for_code("tensorrt-engine-cache-stale"),
                "nvinfer",
            )
        )
    context = _lines(text, _CONTEXT) if _mentions(lower, "context") else []
    if context:
        found.append(
            Finding(
                "cuda-context-conflict",
                "error",
                "CUDA context conflict: work made in one CUDA context (pycuda.autoinit's own) ran while another "
                "(the device's primary context, which ONNX Runtime and TensorRT use) was current",
                tuple(dict.fromkeys(context))[:6],
                fixes.for_code("cuda-context-conflict"),
            )
        )
    return found


def _tensorrt_dists(names_versions: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(n, v) for n, v in names_versions if re.fullmatch(r"tensorrt(-cu\d{2})?(-libs)?", n)]


def report_findings(report: object, fixes: Fixes, matrix: Matrix | None = None) -> list[Finding]:
    """TensorRT findings a verify report shows: TensorRT of another major installed than the provider links, a
    TensorRT session that fell back to CUDA, an engine cache the second session did not reuse."""
    found: list[Finding] = []
    ort = getattr(report, "ort", None)
    related = [(d.name, d.version) for d in getattr(ort, "related_dists", ()) or ()]
    linked = _linked_major(matrix, getattr(ort, "version", None))
    for name, version in _tensorrt_dists(related):
        installed = version.split(".")[0]
        if linked is not None and installed.isdigit() and int(installed) != linked:
            found.append(
                Finding(
                    "tensorrt-major-mismatch",
                    "error",
                    f"{name} {version} (TensorRT {installed}) is installed; onnxruntime-gpu {ort.version} "  # type: ignore[union-attr]
                    f"links libnvinfer.so.{linked} (TensorRT {linked})",
                    (f"installed: {name} {version}", f"the provider links libnvinfer.so.{linked} (ortprov's matrix)"),
                    fixes.for_code("tensorrt-major-mismatch"),
                    "nvinfer",
                )
            )
    for failure in getattr(report, "failures", ()):
        if failure.kind == "engine-cache-miss":
            found.append(
                Finding(
                    "tensorrt-engine-cache-stale",
                    "warning",
                    "TensorRT's engine cache was not reused by a second session: every session builds its engine "
                    "again (slow start)",
                    (failure.message,),
                    fixes.for_code("tensorrt-engine-cache-stale"),
                    "nvinfer",
                )
            )
        if failure.kind == "tensorrt-fallback":
            found.append(
                Finding(
                    "tensorrt-missing",
                    "error",
                    "the session asked for TensorRT but runs on CUDA: the TensorRT provider could not be created",
                    (failure.message,),
                    fixes.for_code("tensorrt-missing"),
                    "nvinfer",
                )
            )
    return found


__all__ = ["CODES", "log_findings", "report_findings"]
