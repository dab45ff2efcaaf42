"""Before apply or download changes anything: can the TensorRT wheels a plan pins be had from where it says?

PyPI holds only NVIDIA's source stubs of the TensorRT 10+ libraries; the real wheels are on NVIDIA's index (or a
mirror of it). A plan installs them in a step of its own, from that index, with --only-binary (see the planner).
When that index cannot be reached, pip and uv fail half-way through the install; this preflight says so first, in
one message that lists every way that works, and nothing is changed. An edge: it reads a local folder and asks
an index over HTTP (PEP 503 project pages: the form every mirror serves).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urljoin

from provisioner.errors import OrtprovError
from provisioner.plan import Plan, Step, canonical

TIMEOUT_S = 10.0


class TensorRTSourceUnreachable(OrtprovError):
    """No source of the planned TensorRT wheels can be reached (apply/download exit 1, nothing changed)."""


@dataclass(frozen=True)
class Found:
    """Where one pinned TensorRT wheel was found."""

    requirement: str
    where: str  # the wheelhouse/find-links folder or the index URL


def tensorrt_steps(plan: Plan) -> tuple[Step, ...]:
    """The install steps of TensorRT wheels that live behind their own index (--only-binary from it)."""
    return tuple(s for s in plan.steps if s.kind == "install" and s.only_binary and s.index_url)


def preflight(plan: Plan, fetch: object = None) -> list[Found]:
    """Find every pinned TensorRT wheel in the step's find-links folders or on its index; raise
    TensorRTSourceUnreachable (one message, the ways that work) for the first that cannot be found."""
    found: list[Found] = []
    for step in tensorrt_steps(plan):
        for requirement in step.packages:
            name, _, version = requirement.partition("==")
            where = _in_folders(name, version, step.find_links)
            if where is None and not step.no_index:
                where, why = _on_index(step.index_url or "", name, version, fetch)
            elif where is None:
                why = f"no {_wheel_glob(name, version)} in {', '.join(step.find_links) or 'the wheelhouse'}"
            else:
                why = ""
            if where is None:
                raise unreachable(plan, step, requirement, why)
            found.append(Found(requirement, where))
    return found


def _wheel_glob(name: str, version: str) -> str:
    return f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}-*.whl"


def _matches(filename: str, name: str, version: str) -> bool:
    parts = filename[:-4].split("-") if filename.endswith(".whl") else []
    return len(parts) >= 5 and canonical(parts[0]) == canonical(name) and parts[1] == version


def _in_folders(name: str, version: str, locations: tuple[str, ...]) -> str | None:
    for location in locations:
        folder = location.removeprefix("file://")
        if os.path.isdir(folder) and any(_matches(f, name, version) for f in os.listdir(folder)):
            return folder
    return None


def _on_index(index_url: str, name: str, version: str, fetch: object) -> tuple[str | None, str]:
    """(the index URL, "") when its project page lists a wheel of the version; else (None, why)."""
    page_url = urljoin(index_url if index_url.endswith("/") else index_url + "/", canonical(name) + "/")
    try:
        status, text = (fetch or _get)(page_url)  # type: ignore[operator]
    except OSError as exc:
        return None, f"{page_url} cannot be reached ({_reason(exc)})"
    if status != 200:
        return None, f"{page_url} answered HTTP {status}"
    files = re.findall(r"([A-Za-z0-9_.+!-]+\.whl)", text)
    if any(_matches(f, name, version) for f in files):
        return index_url, ""
    return None, f"{page_url} lists no wheel of {name} {version}"


def _get(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Accept": "text/html"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310 - an index URL
            return response.status, response.read(4_000_000).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def _reason(exc: OSError) -> str:
    reason = getattr(exc, "reason", None) or exc
    return str(getattr(reason, "strerror", None) or reason)


def unreachable(plan: Plan, step: Step, requirement: str, why: str) -> TensorRTSourceUnreachable:
    """The one message: what could not be found, and every way that works."""
    major = (plan.tensorrt_version or "").split(".")[0] or "N"
    cuda = plan.cuda_version.split(".")[0]
    return TensorRTSourceUnreachable(
        f"the TensorRT wheel {requirement} cannot be had: {why}; nothing was changed",
        hint=(
            "ways that work: (1) fill a wheelhouse where the index is reachable, `ortprov download --dest DIR "
            "--plan plan.json`, and install from it here: `ortprov apply --wheelhouse DIR`; (2) a mirror of "
            f"{step.index_url}: `--tensorrt-index-url URL`; (3) a TensorRT {major} already on this machine (a "
            "tarball, a package): `--tensorrt-libraries system` or `--tensorrt-libraries DIR` (the folder with "
            f"libnvinfer.so.{major}); (4) a base image that carries TensorRT {major} for CUDA {cuda} (NVIDIA's "
            f"TensorRT container, nvcr.io/nvidia/tensorrt, of a release with TensorRT {major}) with "
            "`--tensorrt-libraries system`"
        ),
    )


__all__ = ["Found", "TensorRTSourceUnreachable", "preflight", "tensorrt_steps", "unreachable"]
