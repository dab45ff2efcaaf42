"""sha256 digests for `plan --format requirements --hashes` (edge module: runs pip, talks to the index).

pip's `--require-hashes` mode needs every distribution, transitive ones included, pinned with `==` and hashed.
So the plan's requirements are first resolved for the *target* (its Python and platform, not this machine's)
with `pip install --dry-run --report --target TMP --only-binary=:all: --python-version --platform`. pip >=
PIP_METADATA_ONLY reads only metadata there (PEP 658 files where the index has them, else HTTP range requests:
fast-deps); older pip (>= PIP_FLOOR, checked first) downloads every wheel, and a note says so. Then every file
of each pinned version that suits the target is looked up on the index (PEP 691 Simple API JSON, else the
`#sha256=` fragments of the HTML page): pip accepts a file when one hash matches.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from provisioner import childproc
from provisioner.errors import BadInput, OrtprovError
from provisioner.matrix.derive import PYPI_SIMPLE
from provisioner.platforms import DEFAULT_GLIBC, pip_platform_tags
from provisioner.versions import at_least, vtuple

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import requests
    from packaging.tags import Tag

    from provisioner.plan import Plan
    from provisioner.render.recipes import PinnedRequirement

FAST_DEPS = "--use-feature=fast-deps"
PIP_FLOOR = "22.2"  # the first pip with `install --dry-run` and `--report`
PIP_METADATA_ONLY = "25.3"  # the first pip whose dry run does not download the wheels it resolves (pypa/pip#12603)
_HEX64 = re.compile(r"[0-9a-f]{64}")


def target_of(plan: Plan) -> tuple[str, list[str]]:
    """(python "3.12" / "3.13t", pip platform tags, most specific first) for the plan's target hosts."""

    if not plan.hosts or plan.hosts[0].python is None:
        raise BadInput(
            "hashes are resolved for the target Python, and the plan does not say which",
            hint="plan with --python X.Y",
        )
    python = plan.hosts[0].python.minor
    tag = plan.hosts[0].platform.tag
    if tag == "windows-amd64":
        return python, ["win_amd64"]
    if not tag.startswith("linux-"):
        raise BadInput(f"cannot resolve wheels for platform {tag}")
    glibcs = [h.platform.glibc for h in plan.hosts if h.platform.glibc]
    glibc = min(glibcs, key=vtuple) if glibcs else DEFAULT_GLIBC
    return python, pip_platform_tags(tag, glibc)


def pip_target_args(python: str, platforms: Sequence[str]) -> list[str]:
    """pip options that resolve for another interpreter and platform (binary wheels only)."""
    args = ["--python-version", python.rstrip("t"), "--implementation", "cp", "--only-binary=:all:"]
    if python.endswith("t"):
        args += ["--abi", f"cp{python.rstrip('t').replace('.', '')}t"]
    for platform in platforms:
        args += ["--platform", platform]
    return args


def pip_version(python_exe: str) -> str | None:
    """The version of `python_exe -m pip`, or None when that interpreter has no working pip."""
    try:
        done = childproc.run([python_exe, "-m", "pip", "--version"], timeout=60)
    except OSError:
        return None
    found = re.match(r"pip (\S+) ", done.stdout)
    return found.group(1) if done.returncode == 0 and found else None


def _version_below(version: str, floor: str) -> bool:
    try:
        return not at_least(version, floor)
    except ValueError:
        return False  # an unusual version string: let pip itself answer


def pip_is_too_old(version: str) -> bool:
    """True when that pip cannot resolve for a target: older than PIP_FLOOR."""
    return _version_below(version, PIP_FLOOR)


def pip_reads_metadata_only(version: str) -> bool:
    """True when that pip's dry run reads only the wheels' metadata; older ones download every wheel."""
    return not _version_below(version, PIP_METADATA_ONLY)


def require_pip(python_exe: str) -> str:
    """The version of the pip that will resolve; refused, before anything is resolved, when it cannot."""
    version = pip_version(python_exe)
    if version is None or pip_is_too_old(version):
        found = f"pip {version}" if version else "no pip"
        raise OrtprovError(
            f"--hashes resolves the requirements with pip >= {PIP_FLOOR}, and {python_exe} has {found}",
            hint=f"run `{python_exe} -m pip install 'pip>={PIP_FLOOR}'`, or render without --hashes",
        )
    return version


def resolve_argv(
    python_exe: str, requirements: Path, report: Path, python: str, platforms: Sequence[str], *, fast_deps: bool = True
) -> list[str]:
    """`pip install --dry-run --report` of a requirements file for the target: it installs nothing, and the
    report names every distribution of the resolution. `--target` (a folder that is never created) lets pip
    older than 23.3 take the target's Python and platform options (pypa/pip#12215); --ignore-installed is
    implied by it, and said anyway."""
    return [
        python_exe,
        "-m",
        "pip",
        "install",
        *([FAST_DEPS] if fast_deps else []),
        "--dry-run",
        "--ignore-installed",
        "--target",
        str(report.parent / "target-never-written"),
        "--report",
        str(report),
        "--no-input",
        *pip_target_args(python, platforms),
        "-r",
        str(requirements),
    ]


def resolve(
    requirements_text: str,
    python: str,
    platforms: Sequence[str],
    *,
    python_exe: str = sys.executable,
    timeout: float = 600,
) -> list[dict]:
    """The `install` entries of pip's installation report for the requirements, resolved for the target."""
    with tempfile.TemporaryDirectory(prefix="ortprov-hashes-") as tmp:
        req = Path(tmp) / "requirements.txt"
        report = Path(tmp) / "report.json"
        req.write_text(requirements_text, encoding="utf-8")
        quiet = ["--quiet", "--timeout", "20", "--retries", "1"]
        try:
            # fast-deps: read METADATA through HTTP range requests where the index serves no PEP 658
            # metadata, instead of downloading each wheel (onnxruntime-gpu ~300 MB, cuDNN ~700 MB).
            argv = resolve_argv(python_exe, req, report, python, platforms)
            done = childproc.run([*argv, *quiet], timeout=timeout)
            if done.returncode != 0 and "fast-deps" in done.stderr and "invalid choice" in done.stderr:
                argv = resolve_argv(python_exe, req, report, python, platforms, fast_deps=False)
                done = childproc.run([*argv, *quiet], timeout=timeout)
            if done.timed_out:
                raise OrtprovError(
                    f"resolving the requirements took more than {timeout:.0f} s",
                    hint="check access to the package index, or render without --hashes",
                )
        except OSError as exc:
            raise OrtprovError(f"cannot run pip to resolve the requirements: {exc.strerror}") from None
        if done.returncode != 0 or not report.exists():
            lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
            last = next((ln for ln in reversed(lines) if "ERROR" in ln), lines[-1] if lines else "no output")
            raise OrtprovError(
                f"pip could not resolve the requirements for Python {python} on {platforms[0]}: {last.strip()}",
                hint="check access to the package index, or render without --hashes",
            )
        data = json.loads(report.read_text(encoding="utf-8"))
    return list(data.get("install", []))


def supported_tags(python: str, platforms: Sequence[str]) -> frozenset[Tag]:
    """The wheel tags pip accepts for that CPython and those platforms."""
    from packaging import tags

    version = vtuple(python)
    abis = [f"cp{version[0]}{version[1]}t"] if python.endswith("t") else None
    return frozenset(
        [
            *tags.cpython_tags(version, abis=abis, platforms=list(platforms)),
            *tags.compatible_tags(version, interpreter=f"cp{version[0]}{version[1]}", platforms=list(platforms)),
        ]
    )


def file_digests(files: Sequence[tuple[str, str]], name: str, version: str, supported: frozenset[Tag]) -> list[str]:
    """sha256 of the (filename, sha256) files that are wheels of `name==version` for the supported tags."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
    from packaging.version import Version

    found = []
    for filename, digest in files:
        try:
            wheel_name, wheel_version, _, wheel_tags = parse_wheel_filename(filename)
        except (InvalidWheelFilename, ValueError):
            continue
        if (
            canonicalize_name(wheel_name) == canonicalize_name(name)
            and wheel_version == Version(version)
            and wheel_tags & supported
            and _HEX64.fullmatch(digest)
        ):
            found.append(digest)
    return found


def index_files(session: requests.Session, index_url: str, name: str) -> list[tuple[str, str]]:
    """(filename, sha256) of every file of a project on a simple index (PEP 691 JSON, else PEP 503 HTML)."""
    import requests
    from packaging.utils import canonicalize_name

    url = f"{index_url.rstrip('/')}/{canonicalize_name(name)}/"
    try:
        response = session.get(
            url, timeout=(5, 30), headers={"Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1"}
        )
    except requests.RequestException as exc:
        raise OrtprovError(
            f"cannot reach the package index at {url} to read sha256 digests ({type(exc).__name__})",
            hint="run with network access, or without --hashes",
        ) from None
    if response.status_code == 404:
        return []
    if not response.ok:
        raise OrtprovError(
            f"the package index answered {response.status_code} for {url}",
            hint="run again later, or without --hashes",
        )
    if "json" in response.headers.get("Content-Type", ""):
        return [(f["filename"], f.get("hashes", {}).get("sha256", "")) for f in response.json().get("files", [])]
    pairs = re.findall(r'href="[^"#]*/([^/"#]+)#sha256=([0-9a-f]{64})"', response.text)
    return [(filename, digest) for filename, digest in pairs]


def pinned_digests(
    plan: Plan, *, python_exe: str = sys.executable, progress: Callable[[str], None] | None = None
) -> tuple[PinnedRequirement, ...]:
    """The full resolved set of the plan's install steps for its target, each with its files' sha256.
    `progress` gets a line per stage and per distribution (the resolve alone takes tens of seconds)."""
    import time

    import requests

    from provisioner.render.recipes import PinnedRequirement, render_requirements

    say = progress or (lambda _line: None)
    python, platforms = target_of(plan)
    pip = require_pip(python_exe)
    if not pip_reads_metadata_only(pip):
        sys.stderr.write(
            f"note: pip {pip} downloads every wheel it resolves in full (onnxruntime-gpu and the NVIDIA libraries: "
            f"GBs); pip >= {PIP_METADATA_ONLY} reads only their metadata: `{python_exe} -m pip install -U pip`\n"
        )
    say(f"hashes: resolving the plan for Python {python} on {platforms[0]} with pip {pip}")
    started = time.monotonic()
    entries = resolve(render_requirements(plan), python, platforms, python_exe=python_exe)
    say(f"hashes: {len(entries)} distributions resolved in {time.monotonic() - started:.0f} s; reading their digests")
    installs = [s for s in plan.steps if s.kind == "install"]
    indexes = list(
        dict.fromkeys(
            [s.index_url or PYPI_SIMPLE for s in installs] + [u for s in installs for u in s.extra_index_urls]
        )
    ) or [PYPI_SIMPLE]
    supported = supported_tags(python, platforms)
    pinned = []
    with requests.Session() as session:
        for number, entry in enumerate(entries, 1):
            name, version = entry["metadata"]["name"], entry["metadata"]["version"]
            say(f"hashes: [{number}/{len(entries)}] {name} {version}")
            reported = entry.get("download_info", {}).get("archive_info", {}).get("hashes", {}).get("sha256")
            digests: list[str] = []
            for index in indexes:
                digests = file_digests(index_files(session, index, name), name, version, supported)
                if digests:
                    break
            if reported and _HEX64.fullmatch(reported) and reported not in digests:
                digests.append(reported)
            pinned.append(PinnedRequirement(name, version, tuple(digests)))
    return tuple(pinned)
