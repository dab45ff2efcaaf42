"""The matrix rendered: `matrix check`'s summary or problems, `matrix show`'s table or rows, `matrix update`'s
outcome."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from provisioner.matrix.query import build_gpu_code, code_summary

if TYPE_CHECKING:
    from provisioner.matrix.model import CoreRelease, EpRelease, Matrix, OrtBuild
    from provisioner.matrix.refresh import UpdateResult


@dataclass(frozen=True)
class CheckResult:
    """`matrix check` of a valid matrix: its summary (an invalid one is an error listing its problems)."""

    summary: dict[str, Any]
    exit_code: int = 0

    def text(self) -> str:
        s = self.summary
        return (
            f"matrix OK ({s['origin']}, {s['date']}): {s['builds']} builds of onnxruntime-gpu "
            f"{s['ort_oldest']} .. {s['ort_newest']} ({s['unconfirmed']} from documentation only), "
            f"{s['cuda_releases']} CUDA releases, {s['library_wheels']} NVIDIA wheels, "
            f"{s['tensorrt_releases']} TensorRT releases"
        )

    def data(self) -> Any:
        return {"valid": True, **self.summary}


def summary(matrix: Matrix, ort_versions: tuple[str, ...]) -> dict[str, Any]:
    """The facts `matrix check` reports about a valid matrix (ort_versions: newest first)."""
    return {
        "origin": matrix.origin,
        "date": matrix.date,
        "builds": len(matrix.builds),
        "unconfirmed": sum(1 for b in matrix.builds if not b.confirmed),
        "ort_newest": ort_versions[0] if ort_versions else None,
        "ort_oldest": ort_versions[-1] if ort_versions else None,
        "cuda_releases": len(matrix.cuda_releases),
        "cuda_majors": [m.major for m in matrix.cuda_majors],
        "library_wheels": len(matrix.library_wheels),
        "tensorrt_releases": len(matrix.tensorrt),
        "notices": list(matrix.notices),
    }


@dataclass(frozen=True)
class ShowResult:
    """`matrix show`: the builds that match, newest first."""

    builds: tuple[OrtBuild, ...]
    origin: str
    date: str
    exit_code: int = 0
    eps: tuple[EpRelease, ...] = ()  # plugin execution provider packages (text only: the JSON lists builds)
    cores: tuple[CoreRelease, ...] = ()

    def text(self) -> str:
        table = (
            render_table(self.builds) + f"\n\n{len(self.builds)} builds; * = from documentation only (not read from "
            f"the wheel); data: {self.origin}, {self.date}"
        )
        return table + ("\n\n" + render_eps(self.eps, self.cores) if self.eps else "")

    def data(self) -> Any:
        return [build_row(build) for build in self.builds]


def build_row(build: OrtBuild) -> dict[str, Any]:
    """One build as the JSON object `matrix show --json` prints."""
    from provisioner.serde import to_jsonable

    row = to_jsonable(build)
    row["platforms"] = [
        p["platform"] + (f" (glibc {p['glibc_min']}+)" if p.get("glibc_min") else "") for p in row["platforms"]
    ]
    row["platform_details"] = to_jsonable(build.platforms)
    row["cuda_major"] = build.cuda_major
    return row


def _platform_cell(build: OrtBuild) -> str:
    short = {"linux-x86_64": "linux-x86_64", "linux-aarch64": "linux-aarch64", "windows-amd64": "win-amd64"}
    return ", ".join(
        short.get(p.platform, p.platform) + (f"({p.glibc_min})" if p.glibc_min else "") for p in build.platforms
    )


def _python_cell(build: OrtBuild) -> str:
    plain = [p for p in build.python if not p.endswith("t")]
    free = [p for p in build.python if p.endswith("t")]
    text = f"{plain[0]}-{plain[-1]}" if len(plain) > 1 else ", ".join(plain)
    return text + (f" +{','.join(free)}" if free else "")


def _code_cell(build: OrtBuild) -> str:
    """ "sm_75 80 86 89 90a 120a, no PTX" for the Linux x86_64 wheels ("-": not read from them)."""
    code = build_gpu_code(build, "linux-x86_64")
    return code_summary(*code) if code is not None else "-"


def render_table(builds: tuple[OrtBuild, ...]) -> str:
    """A plain-text table of builds (no colour, fits ~150 columns)."""
    header = (
        "onnxruntime-gpu",
        "CUDA",
        "cuDNN",
        "TensorRT",
        "Python",
        "platforms (glibc)",
        "extras",
        "index",
        "GPU code (linux-x86_64)",
    )
    rows = [header]
    for b in builds:
        index = (
            "PyPI"
            if b.index_url is None
            else re.sub(r"^https?://[^/]+/.*?_packaging/([^/]+)/.*$", r"feed \1", b.index_url)
        )
        rows.append(
            (
                b.ort_version + ("" if b.confirmed else " *"),
                b.cuda_version,
                b.cudnn_version or "-",
                b.tensorrt_version or "-",
                _python_cell(b),
                _platform_cell(b),
                ",".join(b.extras) or "-",
                index,
                _code_cell(b),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


@dataclass(frozen=True)
class UpdateOutcome:
    """`matrix update`: what the refresh did (offline: exit 1, the data in use unchanged)."""

    result: UpdateResult

    @property
    def exit_code(self) -> int:
        return 1 if self.result.status == "offline" else 0

    def text(self) -> str:
        result = self.result
        if result.status == "updated":
            return (
                f"added {len(result.added)} release(s) ({', '.join(result.added)}): {result.builds_after} builds, "
                f"written to {result.written_to}"
            )
        if result.status == "unchanged":
            return (
                f"the matrix is current: no new onnxruntime-gpu release on {result.index_url} "
                f"({result.builds_after} builds)"
            )
        if result.status == "kept":
            return f"kept the cached matrix ({result.builds_after} builds)"
        return f"matrix not refreshed; using data from {result.data_date}"

    def data(self) -> Any:
        return self.result


def render_eps(eps: tuple[EpRelease, ...], cores: tuple[CoreRelease, ...]) -> str:
    """The plugin execution provider packages (one row per CUDA variant) and the newest core releases."""
    rows = [("plugin EP (--provider)", "package", "CUDA", "platforms", "core", "GPUs (documented)", "registers")]
    for ep in eps:
        for variant in ep.variants:
            rows.append(
                (
                    f"{ep.package} {ep.version} ({ep.provider})",
                    variant.package + (" (default)" if variant.package == ep.default_variant else ""),
                    str(variant.cuda_major),
                    ", ".join(variant.platforms) or "-",
                    f"{ep.core}>={ep.core_min}" + (f", not {', '.join(ep.conflicts)}" if ep.conflicts else ""),
                    " ".join(ep.compute_capabilities) or "-",
                    ep.ep_name,
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    newest = cores[:3]
    if newest:
        lines.append("")
        lines.append(
            "CPU core (what plugin EPs register into): "
            + "; ".join(
                f"{c.package} {c.version} (Python {c.python[0]}-{c.python[-1]}, {', '.join(c.platforms)})"
                for c in newest
            )
            + (f"; {len(cores) - len(newest)} older" if len(cores) > len(newest) else "")
        )
    return "\n".join(lines)
