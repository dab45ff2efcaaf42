"""A VerifyReport rendered: the verdict first, then the evidence, then what blocks the GPU and its fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from provisioner.render.style import style

if TYPE_CHECKING:
    from provisioner.findings import Finding
    from provisioner.verify.report import ModelCheck, VerifyReport


@dataclass(frozen=True)
class VerifyResult:
    """`ortprov verify`: the report; when it failed, the findings that block the GPU (doctor's reasoning)."""

    report: VerifyReport
    blocking: tuple[Finding, ...] = ()

    @property
    def exit_code(self) -> int:
        return 0 if self.report.ok else 1

    def text(self) -> str:
        lines = [render_report(self.report)]
        if self.blocking:
            lines.append("")
        for finding in self.blocking:
            lines.append(f"  [{finding.code}] {finding.title}")
            lines.append(f"      fix: {finding.fix}")
        return "\n".join(lines)

    def data(self) -> Any:
        return self.report.to_dict()


def verdict_line(report: VerifyReport) -> str:
    """One line: PASS/FAIL and why."""
    if report.ok:
        if report.mode == "static":
            what = "every library the GPU provider needs resolves"
            if report.plugin is not None:
                what = f"every library the {report.plugin.ep_name or report.provider} plugin EP links resolves"
        else:
            check = report.main_check
            provider = check.providers_session[0] if check and check.providers_session else report.provider
            what = f"{provider} ran the checks and agrees with the CPU"
        extra = " (only after onnxruntime.preload_dlls())" if report.preload_required else ""
        return style("PASS", "green") + f": {what}{extra}"
    first = report.failures[0].message if report.failures else report.status
    return style("FAIL", "red") + f": {first}"


def _plugin_rows(report: VerifyReport) -> list[tuple[str, str]]:
    """A plugin EP's evidence: the EP and its library, what ortprov's hook loaded, registration and devices."""
    plugin = report.plugin
    assert plugin is not None
    rows = [("plugin EP", f"{plugin.module} {plugin.version or '?'}: {plugin.ep_name or '?'} ({plugin.library})")]
    loaded = (plugin.hook or {}).get("loaded") or []
    if loaded:
        rows.append(("loader hook", "loaded " + ", ".join(str(path).rsplit("/", 1)[-1] for path in loaded)))
    missing = [e.soname for e in plugin.closure if e.status == "missing"]
    driver = [e.soname for e in plugin.closure if e.status == "driver-missing"]
    if plugin.closure:
        links = f"{len(plugin.closure)} libraries" + (f"; not found: {', '.join(missing)}" if missing else "")
        links += f"; the driver's, absent here: {', '.join(driver)}" if driver else ""
        rows.append(("links", links))
    if report.mode == "session":
        devices = ", ".join(f"{d.type or '?'} {d.device_id}" for d in plugin.devices) or "none"
        rows.append(("registered", f"{'yes' if plugin.registered else 'no'}; EP devices: {devices}"))
    return rows


def render_report(report: VerifyReport) -> str:
    """Verdict, failures, then the evidence: package, sessions, timings, libraries."""
    lines = [verdict_line(report)]
    for failure in report.failures[1:]:
        lines.append(f"  also: {failure.message}")
    for warning in report.warnings:
        lines.append(style("  warning: ", "yellow") + warning)
    rows: list[tuple[str, str]] = []
    ort = report.ort
    rows.append(("python", f"{report.python} ({report.python_version or '?'})"))
    if ort is not None:
        dists = ", ".join(f"{d.name} {d.version}" for d in ort.dists) or "none"
        rows.append(("installed", dists))
        if ort.version:
            build = f", built for CUDA {ort.build_cuda_version}" if ort.build_cuda_version else ""
            rows.append(("imported", f"{ort.build_package_name or '?'} {ort.version}{build} from {ort.package_dir}"))
        if ort.available_providers is not None:
            rows.append(("providers", ", ".join(ort.available_providers) + f"  (get_device: {ort.device})"))
    if report.preload is not None and report.mode == "session":
        p = report.preload
        state = "called" if p.called else ("not called" if p.available else "not available")
        if p.error:
            state += f" ({p.error})"
        rows.append(("preload_dlls", f"{'requested' if p.requested else 'not requested'}, {state}"))
    if report.plugin is not None:
        rows += _plugin_rows(report)
    for attempt in report.attempts:
        rows.append(("attempt", attempt))
    for check in report.checks:
        rows += _check_rows(check)
    trt = report.tensorrt
    if trt is not None:
        rows.append(("libnvinfer", f"{trt.libnvinfer or 'not loaded'} [{trt.libnvinfer_source or '-'}]"))
        hit = "hit" if trt.cache_hit else "MISS (wrote " + (", ".join(trt.written_by_second) or "nothing") + ")"
        rows.append(
            (
                "engine cache",
                f"{hit}: {trt.engine_files} file(s) after the first session (created in {trt.first_create_s} s), "
                f"second session created in {trt.second_create_s} s",
            )
        )
    if report.loaded_libraries:
        for lib in report.loaded_libraries:
            rows.append((f"loaded {lib.library}", f"{lib.path} [{lib.source}]"))
    if report.static is not None:
        rows.append(("provider lib", report.static.provider_library))
        for res in report.static.libraries:
            where = res.path or res.preload_path or "not found"
            how = res.via or ("preload_dlls" if res.preload_path else "-")
            rows.append((f"{res.soname}", f"{res.status:<14} {where} [{how}, {res.needed}]"))
    if report.signal:
        rows.append(("signal", f"{report.signal} at stage {report.stage}"))
    rows.append(("duration", f"{report.duration_s} s" if report.duration_s is not None else "?"))
    width = max(len(key) for key, _ in rows)
    lines.append("")
    lines += [f"  {key:<{width}}  {value}" for key, value in rows]
    return "\n".join(lines)


def _check_rows(check: ModelCheck) -> list[tuple[str, str]]:
    rows = [
        (
            check.model,
            f"session providers: {', '.join(check.providers_session) or 'none'}"
            + ("" if check.gpu_first or not check.providers_session else "  <- NOT the GPU"),
        )
    ]
    if check.error:
        rows.append(("  error", check.error))
    if check.gpu:
        rows.append(
            (
                "  gpu" if check.gpu_first else "  asked for gpu",
                _timing(check.gpu.create_s, check.gpu.first_run_s, check.gpu.median_run_ms),
            )
        )
    if check.cpu:
        rows.append(("  cpu", _timing(check.cpu.create_s, check.cpu.first_run_s, check.cpu.median_run_ms)))
    if check.comparison:
        c = check.comparison
        diff = f"{c.max_rel_diff:.2e}" if c.max_rel_diff is not None else "?"
        rows.append(
            (
                "  agreement",
                f"{'ok' if c.agrees else 'DIFFERS'}: max relative {diff} (tolerance {c.tolerance:g}"
                + (f", TF32 {check.tf32}" if check.tf32 else "")
                + ")",
            )
        )
    if check.libraries_after:
        rows.append(("  libraries", ", ".join(check.libraries_after)))
    return rows


def _timing(create: float, first: float, median_ms: float | None) -> str:
    steady = f"{median_ms:.2f} ms/run" if median_ms is not None else "?"
    return f"create {create:.3f} s, first run {first:.3f} s, steady {steady}"
