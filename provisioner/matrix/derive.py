"""Derive `OrtBuild` records from an index: list a project's files (PEP 691 Simple API JSON, HTML as a
fallback), read each release's facts from its wheels by HTTP range requests, and turn them into records.

Shared by `provisioner.matrix.refresh` (ortprov matrix update) and the maintainer script bin/derive_release.py.
The pure part (`build_from_facts`) takes wheel names and `WheelFacts`; the rest talks HTTP (requests,
imported lazily).
"""

from __future__ import annotations

import html
import json
import re
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from provisioner.matrix.model import CudaMajor, OrtBuild, ProviderLibrary, WheelPlatform
from provisioner.serde import to_jsonable
from provisioner.standalone.libnames import linux_soname, soname_of
from provisioner.urls import masked
from provisioner.versions import major, vtuple
from provisioner.wheelfacts import ProviderRead, WheelFacts, WheelName, parse_wheel_name

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

PYPI_SIMPLE = "https://pypi.org/simple/"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{SIMPLE_JSON}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
# the libraries the matrix records for a build (keys of CudaMajor.pip_packages); cuBLASLt ships with cuBLAS
_MATRIX_LIBRARIES = {"cudart", "cublas", "cufft", "curand", "nvrtc", "cudnn", "nvjitlink"}


def _matrix_library(soname: str) -> tuple[str, str] | None:
    """('cublas', '12') for libcublasLt.so.12: the matrix library a linked soname belongs to, and its major."""
    found = soname_of(soname)
    if found is None:
        return None
    family, number = found
    library = "cublas" if family == "cublasLt" else family
    return (library, number) if library in _MATRIX_LIBRARIES else None


class IndexError_(Exception):
    """The index could not be read: `reason` in ortprov's words (one phrase), `detail` the library's own text
    (for -v); str() is `url: reason`. Named so as not to shadow the builtin."""

    def __init__(self, url: str, reason: str, detail: str = "") -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class IndexFile:
    """One file of a project as the Simple API lists it."""

    filename: str
    url: str
    requires_python: str | None = None
    yanked: bool = False
    sha256: str | None = None  # as the index lists it
    upload_time: str | None = None  # PEP 700's "upload-time", "2023-03-22T18:34:25Z" (JSON pages only)


def simple_project_url(index_url: str, project: str) -> str:
    """https://pypi.org/simple/ + onnxruntime-gpu -> https://pypi.org/simple/onnxruntime-gpu/."""
    base = index_url if index_url.endswith("/") else index_url + "/"
    return urljoin(base, re.sub(r"[-_.]+", "-", project).lower() + "/")


def get_with_retries(
    session: Any,
    url: str,
    timeout: float,
    retries: int,
    headers: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Any:
    """GET with retries on connection errors, timeouts and 5xx; raises IndexError_ with the reason. `progress`
    hears each try that failed and the wait before the next (a server that never answers is not silent)."""
    import requests

    reason = detail = ""
    for attempt in range(retries + 1):
        try:
            response = session.get(url, headers=headers or {}, timeout=timeout)
            if response.status_code < 500:
                return response
            reason = detail = f"HTTP {response.status_code}"
        except (requests.ConnectionError, requests.Timeout) as exc:
            reason, detail = failure_words(exc, timeout), type(exc).__name__ + (f": {exc}" if str(exc) else "")
        if attempt < retries:
            pause = 0.3 * (2**attempt)
            if progress is not None:
                progress(f"{reason}; try {attempt + 2} of {retries + 1} in {pause:.1f} s")
            time.sleep(pause)
    tries = f" ({retries + 1} tries)" if retries else ""
    raise IndexError_(url, reason + tries, detail)


def failure_words(exc: BaseException, timeout: float) -> str:
    """A failed request in one phrase of ours (the library's text is for -v)."""
    import requests

    text = str(exc)
    if isinstance(exc, requests.Timeout):
        return f"no answer within {timeout:g} s (--timeout)"
    if isinstance(exc, requests.exceptions.SSLError):
        return "its TLS certificate was not accepted"
    if "NameResolution" in text or "Name or service not known" in text or "getaddrinfo" in text:
        return "its host name does not resolve"
    if "Connection refused" in text or "Errno 111" in text:
        return "connection refused: nothing listens at that host and port"
    if "Network is unreachable" in text or "No route to host" in text:
        return "the network cannot reach it"
    return "the connection failed"


def list_project_files(
    session: Any,
    index_url: str,
    project: str,
    timeout: float = 20.0,
    retries: int = 2,
    progress: Callable[[str], None] | None = None,
) -> list[IndexFile]:
    """The files of a project, from the Simple API (JSON per PEP 691; HTML per PEP 503 as a fallback);
    IndexError_ when the answer is not such a page (a login page, a web server's default page)."""
    url = simple_project_url(index_url, project)
    if progress is not None:
        progress(f"{masked(url)} (--timeout {timeout:g} s, --retries {retries})")
    response = get_with_retries(session, url, timeout, retries, {"Accept": ACCEPT}, progress)
    if response.status_code == 404:
        raise IndexError_(url, f"the index has no project {project!r} (HTTP 404)")
    if response.status_code != 200:
        raise IndexError_(url, f"HTTP {response.status_code}")
    base = getattr(response, "url", None) or url
    content_type = response.headers.get("Content-Type", "")
    if SIMPLE_JSON in content_type or content_type.startswith("application/json"):
        try:
            files = parse_simple_json(json.loads(response.text), base)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise IndexError_(url, "answered with JSON that is not a Simple API project page", str(exc)) from None
    else:
        files = parse_simple_html(response.text, base)
    if not any(_names_project(file.filename, project) for file in files):
        kind = content_type.split(";")[0].strip() or "no content type"
        raise IndexError_(
            url,
            f"answered HTTP 200 with a page that lists no file of {project} ({kind}, {len(response.content)} "
            "bytes): not a package index's project page",
        )
    return files


def _names_project(filename: str, project: str) -> bool:
    """Whether a file's name is a wheel or sdist of `project` (names compared as PEP 503 normalises them)."""
    stem = re.sub(r"[-_.]+", "-", filename.lower())
    return stem.startswith(re.sub(r"[-_.]+", "-", project.lower()) + "-")


def parse_simple_json(data: dict[str, Any], base_url: str) -> list[IndexFile]:
    """Files from a PEP 691 JSON project page; relative URLs resolved against `base_url`."""
    files = []
    for item in data["files"]:
        yanked = item.get("yanked", False)
        hashes = item.get("hashes") or {}
        files.append(
            IndexFile(
                filename=item["filename"],
                url=urljoin(base_url, item["url"]),
                requires_python=item.get("requires-python"),
                yanked=bool(yanked),
                sha256=hashes.get("sha256") if isinstance(hashes, dict) else None,
                upload_time=item.get("upload-time"),
            )
        )
    return files


def parse_simple_html(text: str, base_url: str) -> list[IndexFile]:
    """Files from a PEP 503 HTML project page."""
    files = []
    for match in re.finditer(r"<a\s+([^>]*)>([^<]*)</a>", text, re.IGNORECASE):
        attrs, name = match.group(1), html.unescape(match.group(2).strip())
        href = re.search(r'href\s*=\s*"([^"]*)"', attrs)
        if not href:
            continue
        rp = re.search(r'data-requires-python\s*=\s*"([^"]*)"', attrs)
        url = urljoin(base_url, html.unescape(href.group(1)))
        digest = re.search(r"#sha256=([0-9a-f]{64})", url)
        files.append(
            IndexFile(
                filename=name,
                url=url,
                requires_python=html.unescape(rp.group(1)) if rp else None,
                yanked="data-yanked" in attrs,
                sha256=digest.group(1) if digest else None,
            )
        )
    return files


def wheels_by_version(
    files: list[IndexFile], project: str = "onnxruntime-gpu"
) -> dict[str, list[tuple[WheelName, IndexFile]]]:
    """Group the (not yanked) wheels of `project` by release version."""
    wanted = re.sub(r"[-_.]+", "_", project).lower()
    grouped: dict[str, list[tuple[WheelName, IndexFile]]] = {}
    for item in files:
        if item.yanked or not item.filename.endswith(".whl"):
            continue
        name = parse_wheel_name(item.filename)
        if name is None or name.distribution.lower() != wanted:
            continue
        grouped.setdefault(name.version, []).append((name, item))
    return grouped


def representative_wheels(
    wheels: list[tuple[WheelName, IndexFile]],
) -> dict[str, tuple[WheelName, IndexFile]]:
    """One wheel per platform (the newest non-free-threaded CPython), to read facts from."""
    chosen: dict[str, tuple[WheelName, IndexFile]] = {}
    for name, item in sorted(
        wheels,
        key=lambda w: (w[0].python.endswith("t"), [-part for part in vtuple(w[0].python)]),
    ):
        chosen.setdefault(name.platform, (name, item))
    return chosen


def _soname_majors(libs: tuple[str, ...] | None) -> dict[str, str]:
    majors: dict[str, str] = {}
    for lib in libs or ():
        found = _matrix_library(lib)
        if found:
            majors.setdefault(*found)
    return majors


def _requirement_major(requirement: str) -> str | None:
    found = re.search(r"(?:~=|==|>=)\s*(\d+)", requirement)
    return found.group(1) if found else None


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()


def build_from_facts(
    version: str,
    wheels: list[tuple[WheelName, IndexFile]],
    facts: dict[str, WheelFacts],
    majors: dict[int, CudaMajor],
    index_url: str | None = None,
    fallback: OrtBuild | None = None,
    extra_sources: tuple[str, ...] = (),
    contents: dict[str, PlatformContents] | None = None,
) -> tuple[OrtBuild | None, list[str]]:
    """An OrtBuild from one release's wheel names and the facts read per platform; plus notes.

    `fallback` (the existing record) supplies what older wheels do not say (the CUDA minor before
    build_and_package_info.py had cuda_version, the TensorRT minor); its majors must agree.
    Returns (None, [reason]) when the CUDA version cannot be determined.
    """
    notes: list[str] = []
    linux = facts.get("linux-x86_64") or facts.get("linux-aarch64")
    any_facts = linux or next(iter(facts.values()), None)
    if any_facts is None:
        return None, [f"{version}: no wheel facts could be read"]
    linked = _soname_majors(linux.cuda_provider_libraries if linux else None)
    trt_linked = _soname_majors(linux.tensorrt_provider_libraries if linux else None)
    cuda_version, failure = _cuda_version(version, facts, linked.get("cudart") or trt_linked.get("cudart"), fallback)
    if cuda_version is None:
        return None, failure
    notes += failure
    extras = any_facts.extras
    cudnn = _cudnn_version(any_facts, linked, trt_linked, fallback)
    platforms = platform_records(wheels, contents)
    reqs_from = linked or (trt_linked if linux and linux.cuda_provider_libraries is None else {})
    requirements, lazy, broken, extra_notes = _requirements(extras, reqs_from, major(cuda_version), cudnn, majors)
    notes += extra_notes
    if broken:
        notes.append(f"do not use the extra(s) {', '.join(broken)}: `requirements` lists the working packages")
    if linux and linux.cuda_provider_libraries is None and fallback and fallback.requirements:
        requirements, lazy = fallback.requirements, fallback.libraries_lazy
    libraries_linked = _libraries_linked(linux, platforms, trt_linked, notes)
    build = OrtBuild(
        ort_version=version,
        cuda_version=cuda_version,
        cudnn_version=cudnn,
        python=python_order(name.python for name, _ in wheels),
        platforms=platforms,
        sources=_sources(version, wheels, index_url, extra_sources),
        index_url=index_url,
        tensorrt_version=_tensorrt_version(linux, fallback),
        extras=tuple(e for e in ("cuda", "cudnn") if e in extras and e not in broken),
        requirements=requirements,
        libraries_linked=libraries_linked,
        libraries_lazy=lazy,
        preload_dlls=any(f.preload_dlls for f in facts.values()),
        released=_released(wheels) or (fallback.released if fallback else None),
        confirmed=True,
        notes="; ".join(notes) or None,
    )
    return build, notes


def _released(wheels: list[tuple[WheelName, IndexFile]]) -> str | None:
    """The day the index got the release's first wheel ("2023-03-22"), None where it lists no upload times."""
    days = [f.upload_time[:10] for _, f in wheels if f.upload_time]
    return min(days) if days else None


def _cuda_version(
    version: str, facts: dict[str, WheelFacts], cudart_major: str | None, fallback: OrtBuild | None
) -> tuple[str | None, list[str]]:
    """(the CUDA version the wheels were built for, notes), or (None, [why it cannot be told]): from
    build_and_package_info.py, checked against the libcudart the providers link; an older wheel's minor from
    the existing record (`fallback`), when its major agrees."""
    notes: list[str] = []
    cuda_versions = {f.cuda_version for f in facts.values() if f.cuda_version}
    if len(cuda_versions) > 1:
        notes.append(f"platforms disagree on cuda_version: {sorted(cuda_versions)}")
    cuda_version = sorted(cuda_versions)[0] if cuda_versions else None
    if cuda_version is None:
        if fallback and cudart_major and str(fallback.cuda_major) == cudart_major:
            cuda_version = fallback.cuda_version
            notes.append(
                f"CUDA major {cudart_major} read from the wheel (libcudart.so.{cudart_major}); the minor "
                f"{cuda_version} comes from documentation (build_and_package_info.py has no cuda_version)"
            )
        elif fallback and cudart_major:
            return None, [
                f"{version}: wheel links libcudart.so.{cudart_major} but the record says CUDA {fallback.cuda_version}"
            ]
        else:
            return None, [f"{version}: the wheels do not say which CUDA version they were built for"]
    elif cudart_major and str(major(cuda_version)) != cudart_major:
        notes.append(f"build info says CUDA {cuda_version} but the provider links libcudart.so.{cudart_major}")
    return cuda_version, notes


def _cudnn_version(
    any_facts: WheelFacts, linked: dict[str, str], trt_linked: dict[str, str], fallback: OrtBuild | None
) -> str | None:
    """The cuDNN version (or major): the build info, the libcudnn a provider links, the `cudnn` extra, else the
    existing record's."""
    cudnn = (
        any_facts.cudnn_version
        or linked.get("cudnn")
        or trt_linked.get("cudnn")
        or next((_requirement_major(r) for r in any_facts.extras.get("cudnn", ()) if "cudnn" in r), None)
    )
    if cudnn is None and fallback:
        cudnn = fallback.cudnn_version
    return cudnn


def _tensorrt_version(linux: WheelFacts | None, fallback: OrtBuild | None) -> str | None:
    """The TensorRT major the Linux provider links; the existing record's full version where its major agrees."""
    trt_major = linux.tensorrt_major if linux else None
    if trt_major is None:
        return None
    if fallback and fallback.tensorrt_version and major(fallback.tensorrt_version) == int(trt_major):
        return fallback.tensorrt_version
    return str(trt_major)


def _libraries_linked(
    linux: WheelFacts | None, platforms: tuple[WheelPlatform, ...], trt_linked: dict[str, str], notes: list[str]
) -> tuple[str, ...]:
    """The matrix libraries (and libcuda) the Linux CUDA provider links: from the first MBs of the wheel member,
    else from the whole library where it was streamed; `notes` says which, or why none."""
    linux_read = next(
        (p.provider("cuda") for p in platforms if p.platform.startswith("linux-") and p.provider("cuda")), None
    )
    linux_linked = linux.cuda_provider_libraries if linux else None
    if linux_linked is None and linux_read is not None and linux_read.needs is not None:
        linux_linked = linux_read.needs  # the whole library was read: its dynamic section, wherever it lies
        notes.append("libraries_linked read from the CUDA provider's dynamic section (the whole library streamed)")
    linked_libs = tuple(
        sorted(lib for lib in (linux_linked or ()) if _matrix_library(lib) or lib.startswith("libcuda.so"))
    )
    if linux and linux_linked is None:
        notes.append(
            "the CUDA provider's dynamic section could not be read from the first MBs of the wheel member "
            "(patchelf moved it to the end of the file): libraries_linked left empty"
        )
        if trt_linked:
            notes.append(
                "CUDA/cuDNN majors confirmed through the TensorRT provider's links "
                f"(libcudart.so.{trt_linked.get('cudart')}, libcudnn.so.{trt_linked.get('cudnn')})"
            )
    return linked_libs


def _sources(
    version: str, wheels: list[tuple[WheelName, IndexFile]], index_url: str | None, extra_sources: tuple[str, ...]
) -> tuple[str, ...]:
    """Where the record comes from: the release's page (or its index), the wheel read, and any other source."""
    url_read = next((item.url for name, item in wheels if name.platform == "linux-x86_64"), wheels[0][1].url)
    sources = (
        (f"https://pypi.org/project/onnxruntime-gpu/{version}/" if index_url is None else index_url),
        url_read,
    ) + extra_sources
    return tuple(dict.fromkeys(sources))


def fallback_build(builds: Iterable[OrtBuild], version: str) -> OrtBuild | None:
    """For a release not recorded yet: the newest recorded PyPI build older than it, with its per-release
    facts (TensorRT minor) cleared; `build_from_facts` takes what old wheels do not say (the CUDA minor,
    requirements) from it."""
    older = [b for b in builds if b.index_url is None and vtuple(b.ort_version) < vtuple(version)]
    if not older:
        return None
    best = max(older, key=lambda b: vtuple(b.ort_version))
    return replace(best, ort_version=version, tensorrt_version=None)


def _requirements(
    extras: dict[str, tuple[str, ...]],
    linked: dict[str, str],
    cuda_major_number: int,
    cudnn: str | None,
    majors: dict[int, CudaMajor],
) -> tuple[tuple[str, ...], tuple[str, ...], list[str], list[str]]:
    """(requirements, lazily opened sonames, extras that are broken, notes).

    Where the release declares `cuda`/`cudnn` extras they are used, completed with any linked library
    they leave out (cuBLAS); otherwise one `~=major.0` requirement per library the provider links.
    An extra naming a package that is not CUDA's pip package for that library (e.g. a deprecated
    -cu13 placeholder) is reported as broken and its requirement replaced by the right package.
    """
    major_record = majors.get(cuda_major_number)
    pip_names = (major_record.pip_packages or {}) if major_record else {}
    reverse = {package.lower(): library for library, package in pip_names.items()}
    by_library: dict[str, str] = {}
    broken: list[str] = []
    notes: list[str] = []
    for extra in ("cuda", "cudnn"):
        for requirement in extras.get(extra, ()):
            name = _requirement_name(requirement)
            library = reverse.get(name)
            if library is None:
                stem = re.sub(rf"-cu{cuda_major_number}$", "", name)
                library = reverse.get(stem) or reverse.get(f"{name}-cu{cuda_major_number}")
                if library is not None:
                    right = pip_names[library]
                    by_library[library] = requirement.replace(requirement[: len(name)], right, 1)
                    if extra not in broken:
                        broken.append(extra)
                    notes.append(
                        f"extra '{extra}' names {name}, but CUDA {cuda_major_number}'s {library} package is {right}"
                    )
                    continue
            by_library[library or name] = requirement
    wanted = dict(linked)
    if cudnn and "cudnn" not in wanted:
        wanted["cudnn"] = cudnn
    for library, number in wanted.items():
        if library not in by_library and library in pip_names:
            by_library[library] = f"{pip_names[library]}~={number}.0"
    lazy = []
    for library, requirement in by_library.items():
        if library in linked or library not in _MATRIX_LIBRARIES:
            continue
        soname_major = cudnn if library == "cudnn" else _requirement_major(requirement)
        soname = linux_soname(library, soname_major) if soname_major else None
        if soname:
            lazy.append(soname)
    return tuple(sorted(by_library.values())), tuple(sorted(lazy)), broken, notes


def read_release(
    version: str,
    wheels: list[tuple[WheelName, IndexFile]],
    open_source: Callable[[str], Any],
    read_libraries: bool = True,
) -> dict[str, WheelFacts]:
    """WheelFacts per platform for one release (libraries read from Linux wheels only)."""
    from provisioner.wheelfacts import read_wheel_facts

    facts = {}
    for platform, (_, item) in representative_wheels(wheels).items():
        source = open_source(item.url)
        facts[platform] = read_wheel_facts(source, read_libraries=read_libraries and platform.startswith("linux"))
    return facts


# --- what each platform's wheels hold (provider libraries: GPU code, imports) -------------------------------

PLATFORM_TAGS = ("linux-x86_64", "linux-aarch64", "windows-amd64")


@dataclass(frozen=True)
class PlatformContents:
    """What one platform's wheels of a release hold, read from them: the facts of `WheelPlatform` that a file
    name does not tell, and notes on what could not be read."""

    providers: tuple[ProviderLibrary, ...]
    wheel: str
    sha256: str | None
    wheels_alike: int
    notes: tuple[str, ...] = ()
    bytes_read: int = 0


def _provider_record(read: ProviderRead) -> ProviderLibrary:
    return ProviderLibrary(
        read.provider, read.needs, read.delay_loads, read.kernels, read.ptx, read.opens, read.preloads
    )


def _preloads(item: IndexFile, open_source: Callable[[str], Any], cache: Path | None) -> dict[str, tuple[str, ...]]:
    """provider -> what the wheel's `_ld_preload.py` loads for it (wheelfacts.read_ld_preload), cached per sha256."""
    from provisioner.wheelfacts import read_ld_preload

    key = f"{item.sha256}.preload" if item.sha256 else None
    cached = _cached(cache, key)
    if cached is None:
        cached = {name: list(libs) for name, libs in read_ld_preload(open_source(item.url)).items()}
        _store(cache, key, cached)
    return {name: tuple(libs) for name, libs in cached.items()}


def _provider_read(data: dict[str, Any]) -> ProviderRead:
    """A ProviderRead from its cached JSON (lists back to tuples)."""
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    return ProviderRead(**fields)


def _cached(cache: Path | None, key: str | None) -> dict[str, Any] | None:
    if cache is None or not key:
        return None
    try:
        data: dict[str, Any] = json.loads((cache / f"{key}.json").read_text(encoding="utf-8"))
        return data
    except (OSError, ValueError):
        return None


def _store(cache: Path | None, key: str | None, data: dict[str, Any]) -> None:
    if cache is None or not key:
        return
    cache.mkdir(parents=True, exist_ok=True)
    temporary = cache / f".{key}.json.tmp"
    temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
    temporary.replace(cache / f"{key}.json")


def _directory_digest(source: Any) -> dict[str, list[int]]:
    """provider -> [size, CRC-32] of its library, from the central directory alone."""
    from provisioner.wheelfacts import provider_members
    from provisioner.ziprange import central_directory

    return {name: [e.size, e.crc32] for name, e in provider_members(central_directory(source)).items()}


def read_platform_contents(
    wheels: list[tuple[WheelName, IndexFile]],
    open_source: Callable[[str], Any],
    cache: Path | None = None,
    every_wheel: bool = True,
) -> PlatformContents:
    """Read one platform's wheels of one release: every wheel's central directory (its provider libraries'
    sizes and CRC-32s), and the provider libraries of the first wheel, streamed once (GPU code, imports); every
    wheel whose libraries are other bytes is read too (each Python's wheel is built apart), and one that holds
    other facts is noted. `wheels_alike` counts the wheels that agree. Results are cached per wheel sha256."""
    from provisioner.wheelfacts import provider_members, read_provider
    from provisioner.ziprange import central_directory

    ordered = sorted(wheels, key=lambda w: (w[0].python.endswith("t"), [-part for part in vtuple(w[0].python)]))
    digests: dict[str, dict[str, list[int]]] = {}
    bytes_read = 0
    for name, item in ordered:
        cached = _cached(cache, f"{item.sha256}.directory" if item.sha256 else None)
        if cached is None:
            source = open_source(item.url)
            cached = _directory_digest(source)
            bytes_read += getattr(source, "bytes_read", 0)
            _store(cache, f"{item.sha256}.directory" if item.sha256 else None, cached)
        digests[name.filename] = cached

    def read_all(name: WheelName, item: IndexFile) -> list[ProviderRead]:
        nonlocal bytes_read
        cached = _cached(cache, item.sha256)
        if cached is not None and all("opens" in r for r in cached["providers"]):  # older reads lack `opens`
            return [_provider_read(r) for r in cached["providers"]]
        source = open_source(item.url)
        entries = central_directory(source)
        reads = [read_provider(source, entry, provider) for provider, entry in provider_members(entries).items()]
        bytes_read += getattr(source, "bytes_read", 0)
        _store(cache, item.sha256, {"wheel": name.filename, "providers": [to_jsonable(r) for r in reads]})
        return reads

    first_name, first_item = ordered[0]
    reads = read_all(first_name, first_item)
    notes = [f"{first_name.filename}: {r.provider}: {note}" for r in reads for note in r.notes]
    alike = 0
    for name, item in ordered:
        if digests[name.filename] == digests[first_name.filename]:
            alike += 1  # the same bytes
            continue
        if not every_wheel:
            continue  # one wheel per platform (ortprov matrix update): the others are not counted as read
        others = read_all(name, item)  # built apart (other build ids): read it too
        if [_provider_record(r) for r in others] == [_provider_record(r) for r in reads]:
            alike += 1
        else:
            notes.append(f"{name.filename}: its provider libraries hold other facts than {first_name.filename}'s")
    preloads = _preloads(first_item, open_source, cache) if first_name.platform.startswith("linux-") else {}
    return PlatformContents(
        providers=tuple(_provider_record(replace(r, preloads=preloads.get(r.provider, ()))) for r in reads),
        wheel=first_name.filename,
        sha256=first_item.sha256,
        wheels_alike=alike,
        notes=tuple(notes),
        bytes_read=bytes_read,
    )


def read_contents(
    wheels: list[tuple[WheelName, IndexFile]],
    open_source: Callable[[str], Any],
    cache: Path | None = None,
    every_wheel: bool = True,
) -> dict[str, PlatformContents]:
    """PlatformContents per platform (linux-x86_64, linux-aarch64, windows-amd64) of one release; with
    every_wheel=False the provider libraries of one wheel per platform only (the newest CPython's)."""
    per_platform: dict[str, list[tuple[WheelName, IndexFile]]] = {}
    for name, item in wheels:
        if name.platform in PLATFORM_TAGS:
            per_platform.setdefault(name.platform, []).append((name, item))
    return {
        tag: read_platform_contents(found, open_source, cache, every_wheel)
        for tag, found in sorted(per_platform.items())
    }


def platform_records(
    wheels: list[tuple[WheelName, IndexFile]], contents: dict[str, PlatformContents] | None = None
) -> tuple[WheelPlatform, ...]:
    """One WheelPlatform per platform with wheels: its glibc floor and Pythons from the file names, what its
    wheels hold from `contents` where they were read."""
    floors: dict[str, str | None] = {}
    pythons: dict[str, set[str]] = {}
    for name, _ in wheels:
        if name.platform not in PLATFORM_TAGS:
            continue
        floor = floors.get(name.platform)
        if name.glibc_min and (floor is None or vtuple(name.glibc_min) < vtuple(floor)):
            floors[name.platform] = name.glibc_min
        else:
            floors.setdefault(name.platform, name.glibc_min)
        pythons.setdefault(name.platform, set()).add(name.python)
    records = []
    for tag in sorted(floors):
        read = (contents or {}).get(tag)
        records.append(
            WheelPlatform(
                tag,
                floors[tag],
                python=python_order(pythons[tag]),
                providers=read.providers if read else None,
                wheel=read.wheel if read else None,
                sha256=read.sha256 if read else None,
                wheels_alike=read.wheels_alike if read else 0,
            )
        )
    return tuple(records)


def python_order(pythons: Iterable[str]) -> tuple[str, ...]:
    """ "3.10" < "3.13" < "3.13t" < "3.14"."""
    return tuple(sorted(set(pythons), key=lambda p: (vtuple(p), p.endswith("t"))))
