"""Doctor on the live machine: findings from the host facts, a verify report, log text and the plan outcome. Pure.

`diagnose(facts, report, log, plan, matrix=...)` -> list[Finding], most important first. The fact rules it shares
with the log reader (driver, packages, driver vs build) live in rules.py. Evidence that a GPU session really worked
(a passing verify report) outranks inference from the facts: library guesses are not reported when verify proved
the session. Which libraries a build needs, and at which majors, comes from the matrix: the code knows no version
numbers.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from provisioner.doctor.factrules import HIDDEN_VALUES, driver_findings, driver_vs_build, library_code, package_findings
from provisioner.doctor.fixes import UNSET_PTX_JIT, Fixes, gpu_code_fix
from provisioner.doctor.rules import analyze_log
from provisioner.errors import NoCompatiblePlan
from provisioner.facts import PLATFORM_TAGS, HostFacts, LibraryHit, OrtDist, RuntimeEnvironment
from provisioner.findings import Finding, merge_findings, sort_findings
from provisioner.matrix.query import (
    build_gpu_code,
    builds_for,
    code_summary,
    common_libraries,
    driver_gpu_gap,
    gpu_code_for,
)
from provisioner.plan import LOADER_HOOK, Plan, step_argv
from provisioner.standalone.libnames import library_filename
from provisioner.versions import major

if TYPE_CHECKING:
    from collections.abc import Iterator

    from provisioner.facts import Gpu
    from provisioner.matrix.model import Matrix, OrtBuild
    from provisioner.matrix.query import DriverGpuGap
    from provisioner.verify.report import Failure, VerifyReport

__all__ = ["Finding", "diagnose", "is_healthy"]

# sources from which the dynamic loader finds a library without help (no preload_dlls(), no `import torch`)
LOADER_SOURCES = frozenset(
    {"ld_library_path", "ldconfig", "cuda_toolkit", "path", "cuda_path", "system", "wsl", "conda"}
)  # conda: the env's python carries RPATH $ORIGIN/../lib, which every dlopen in the process uses
# distributions that create their own CUDA context (pycuda; TensorRT's Python package, any CUDA major)
# where detect looks for a CUDA library, per platform (probe/libraries.py's places), for a finding's evidence
SEARCHED_LINUX = "pip wheels, torch, conda, LD_LIBRARY_PATH, the ld.so cache, CUDA toolkit"
SEARCHED_WINDOWS = "pip wheels, torch\\lib, python.exe's folder, System32, conda's Library\\bin, PATH, CUDA_PATH"
_CONTEXT_MAKERS = re.compile(r"^(pycuda|tensorrt(-cu\d+)?)$")


def is_healthy(findings: list[Finding]) -> bool:
    """No finding blocks the GPU (warnings and info are allowed)."""
    return not any(f.blocking for f in findings)


def diagnose(
    facts: HostFacts | None,
    report: VerifyReport | None = None,
    log: str | None = None,
    plan: Plan | NoCompatiblePlan | None = None,
    matrix: Matrix | None = None,
    plan_flags: str = "",
    environment: RuntimeEnvironment | None = None,
) -> list[Finding]:
    """All findings, merged per code and sorted, most important first. `matrix`: which CUDA libraries a
    build needs and the CUDA error numbers in logs (without it, only cuDNN is checked in the facts).
    `plan_flags`: what `ortprov plan`/`apply` need beside --python here (" --driver none" on a host without a
    driver, where `plan` is the plan those flags make): every command a fix suggests works as written.
    `environment`: the variables the verify child ran with, where there are no facts (`ortprov verify`): one fix
    per cause whichever command finds it (CUDA_FORCE_PTX_JIT set: unset it)."""
    python = facts.python.executable if facts and facts.python else (report.python if report else "python")
    windows = bool(facts and facts.platform.os == "windows") or bool(report and report.python.lower().endswith(".exe"))
    fixes = Fixes(python=python, windows=windows, plan_flags=plan_flags)
    found: list[Finding] = []
    if facts is not None:
        found += _from_facts(facts, report, fixes, matrix)
    if report is not None:
        found += _from_report(report, facts, fixes, matrix)
    if log:
        found += analyze_log(log, python=python, matrix=matrix)
    if isinstance(plan, NoCompatiblePlan) and plan.rejected:  # none rejected: no driver (its own finding)
        found += _from_no_plan(plan, fixes)
    if facts is not None and matrix is not None:
        found = [_with_gpu_code_fix(f, facts, matrix, fixes.python) for f in found]
    elif environment is not None:
        found = [_with_ptx_jit_fix(f, environment) for f in found]
    findings = merge_findings(found)
    if isinstance(plan, Plan):
        findings = [_with_plan_fix(f, plan, python, plan_flags) for f in findings]
    if facts is not None and _no_driver_seen(facts):
        return _one_cause_without_a_driver(findings, facts, fixes)
    return findings


# what follows from "no driver here": the software findings wait until a GPU can be seen
_WAITS_FOR_THE_DRIVER = frozenset({"cpu-package-only", "onnxruntime-not-installed"})


def _no_driver_seen(facts: HostFacts) -> bool:
    driver = facts.driver
    return not driver.present and not (driver.error and "mismatch" in driver.error.lower())


def _one_cause_without_a_driver(findings: list[Finding], facts: HostFacts, fixes: Fixes) -> list[Finding]:
    """No driver is seen: one cause (gpu-hidden in a container, no-driver elsewhere, their evidence pooled) and one
    safe next step. Nothing suggests installing a GPU build for a GPU that is not there (it would replace a CPU
    onnxruntime that works): the package findings become what to do once the driver is seen."""
    cause = "gpu-hidden" if facts.environment.container else "no-driver"
    other = "no-driver" if cause == "gpu-hidden" else "gpu-hidden"
    pooled = tuple(e for f in findings if f.code in (cause, other) for e in f.evidence)
    kept: list[Finding] = []
    for finding in findings:
        if finding.code == other and not _hidden_by_env(facts):
            continue  # the same cause, said once
        if finding.code == cause:
            finding = replace(finding, evidence=tuple(dict.fromkeys(pooled)))
        elif finding.code in _WAITS_FOR_THE_DRIVER:
            finding = replace(
                finding,
                severity="info",
                title=f"{finding.title}: it keeps working on the CPU until a driver is seen",
                fix=f"once `nvidia-smi` works here, run `ortprov doctor --python {fixes.python}` again: it then plans "
                "for the GPU it sees (installing a GPU build now would replace what works for a GPU that is not there)",
            )
        kept.append(finding)
    return sort_findings(kept)


# --- host facts ------------------------------------------------------------------------------------------


def _from_facts(facts: HostFacts, report: VerifyReport | None, fixes: Fixes, matrix: Matrix | None) -> list[Finding]:
    found: list[Finding] = []
    env = facts.environment
    if facts.platform.tag not in PLATFORM_TAGS:
        found.append(
            Finding(
                "no-wheel-for-platform",
                "error",
                f"onnxruntime-gpu publishes no wheels for {facts.platform.tag}",
                (f"platform: {facts.platform.tag}; wheels exist for {', '.join(PLATFORM_TAGS)}",),
                fixes.for_code("no-wheel-for-platform"),
            )
        )
        return found
    driver = facts.driver
    found += driver_findings(driver, env, fixes)
    if driver.present and not (driver.error and "mismatch" in driver.error.lower()):
        hidden = _hidden_by_env(facts)
        if hidden:
            found.append(
                Finding(
                    "gpu-hidden",
                    "error",
                    "the GPUs are hidden from CUDA programs",
                    hidden,
                    fixes.for_code("gpu-hidden"),
                )
            )
    if matrix is not None:
        found += driver_gpu_findings(facts, matrix, fixes)
    ort = facts.onnxruntime
    gpu_dists = [d for d in ort if d.is_gpu]
    cpu_dists = [d for d in ort if d.name == "onnxruntime"]
    if not ort:
        found.append(
            Finding(
                "onnxruntime-not-installed",
                "error",
                "onnxruntime is not installed in the target",
                (f"python: {facts.python.executable if facts.python else 'unknown'}",),
                fixes.for_code("onnxruntime-not-installed"),
            )
        )
    else:
        found += package_findings(ort, fixes)
    if gpu_dists and not cpu_dists and any(d.build_package_name == "onnxruntime" for d in gpu_dists):
        found.append(
            Finding(
                "cpu-and-gpu-installed",
                "error",
                "the onnxruntime folder holds the CPU build although onnxruntime-gpu is installed",
                tuple(f"{d.name} {d.version}: files say package_name={d.build_package_name!r}" for d in gpu_dists),
                fixes.for_code("cpu-and-gpu-installed"),
            )
        )
    found += _incomplete_findings(facts, fixes)
    from provisioner.doctor.known import known_issue_findings

    found += known_issue_findings(facts, fixes)
    gpu = gpu_dists[0] if gpu_dists else None
    if gpu is not None and gpu.cuda_version and driver.present and driver.cuda_version:
        found += driver_vs_build(gpu, driver.cuda_version, driver.version, fixes)
    if gpu is not None and matrix is not None:
        found += gpu_code_findings(facts, gpu, matrix, fixes)
    proven = report is not None and report.ok and report.mode == "session"
    if gpu is not None and not proven:
        if not gpu.cudnn_version and matrix is not None and (build := installed_build(matrix, gpu)) is not None:
            gpu = replace(gpu, cudnn_version=build.cudnn_version)  # a build_info without it (the Windows wheels')
        found += _library_findings(facts, gpu, fixes, _needed_libraries(gpu, matrix))
    return found


def _driver_gaps(facts: HostFacts, matrix: Matrix) -> Iterator[tuple[Gpu, DriverGpuGap]]:
    """Each GPU the host's driver cannot run, with why (matrix/query.driver_gpu_gap, on the host's OS)."""
    driver, windows = facts.driver, facts.platform.os == "windows"
    for gpu in facts.visible_gpus or facts.gpus:
        cc = gpu.compute_capability
        gap = driver_gpu_gap(matrix, cc, driver.version, driver.cuda_version, windows) if cc else None
        if gap is not None:
            yield gpu, gap


def driver_gpu_findings(facts: HostFacts, matrix: Matrix, fixes: Fixes) -> list[Finding]:
    """A driver that cannot run the host's GPU at all, whatever build is installed (the planner's rule 0,
    matrix/query.driver_gpu_gap): driver-too-old when its CUDA predates the GPU, unsupported-gpu-arch when its
    branch dropped the GPU's architecture."""
    driver = facts.driver
    if not driver.present or not (driver.version or driver.cuda_version):
        return []
    for gpu, gap in _driver_gaps(facts, matrix):
        cc = gpu.compute_capability
        code = "driver-too-old" if gap.kind == "too-old" else "unsupported-gpu-arch"
        has = f"driver {driver.version or '?'}" + (f" (CUDA {driver.cuda_version})" if driver.cuda_version else "")
        return [
            Finding(
                code,
                "error",
                f"the {has} cannot run the {gpu.name or 'GPU'} (compute capability {cc}), whatever onnxruntime is "
                f"installed",
                (f"GPU {gpu.index}: {gpu.name or '?'}, compute capability {cc}", f"{has}: {gap.why}"),
                f"install {gap.needed} (or use a newer GPU); then {fixes.plan} plans for it",
            )
        ]
    return []


def installed_build(matrix: Matrix, dist: OrtDist) -> OrtBuild | None:
    """The matrix's record of an installed onnxruntime-gpu: its release, of its CUDA major where it says it."""
    builds = [b for b in builds_for(matrix) if b.package == dist.name and b.ort_version == dist.version]
    if dist.cuda_version:
        builds = [b for b in builds if b.cuda_major == _major(dist.cuda_version)] or builds
    return builds[0] if builds else None


def gpu_code_findings(facts: HostFacts, dist: OrtDist, matrix: Matrix, fixes: Fixes) -> list[Finding]:
    """unsupported-gpu-arch before anything runs: the installed build's wheels for this platform (as the matrix
    read them) hold neither a kernel nor PTX for a visible GPU's compute capability, so every CUDA kernel fails
    with "no kernel image is available for execution on the device"."""
    build = installed_build(matrix, dist)
    code = build_gpu_code(build, facts.platform.tag) if build is not None else None
    if build is None or code is None:
        return []
    found = []
    if forced_ptx_jit(facts.environment.cuda_force_ptx_jit):
        found += _ptx_only_findings(facts, dist, code)
    for gpu in facts.visible_gpus:
        cc = gpu.compute_capability
        if not cc or any(gpu_code_for(code[0], code[1], cc)):
            continue
        found.append(
            Finding(
                "unsupported-gpu-arch",
                "error",
                f"onnxruntime-gpu {dist.version} holds no GPU code for the {gpu.name or 'GPU'} (compute capability "
                f"{cc}): its CUDA kernels fail with 'no kernel image is available for execution on the device'",
                (
                    f"GPU {gpu.index}: {gpu.name or '?'}, compute capability {cc}",
                    f"onnxruntime-gpu {dist.version} {facts.platform.tag} wheels: {code_summary(code[0], code[1])}",
                ),
                gpu_code_fix(matrix, cc, facts.platform.tag, fixes.python),
            )
        )
    return found[:1]


def forced_ptx_jit(value: str | None) -> bool:
    """CUDA_FORCE_PTX_JIT set to a value the driver honours (any but empty and "0"): it then ignores the compiled
    kernels (cubins) of every library and JIT-compiles PTX; code with no PTX for the GPU cannot run."""
    return value is not None and value.strip() not in ("", "0")


def _ptx_only_findings(facts: HostFacts, dist: OrtDist, code: tuple[tuple[str, ...], tuple[str, ...]]) -> list[Finding]:
    """With CUDA_FORCE_PTX_JIT=1 only the wheels' PTX counts: a visible GPU with no PTX it may JIT fails (cuBLAS's
    handle first, `CUBLAS failure 14 ... cublasCreate`, else "no kernel image"), although its kernels are there."""
    for gpu in facts.visible_gpus:
        cc = gpu.compute_capability
        if not cc or gpu_code_for((), code[1], cc)[1]:
            continue
        return [
            Finding(
                "unsupported-gpu-arch",
                "error",
                f"CUDA_FORCE_PTX_JIT={facts.environment.cuda_force_ptx_jit} makes the driver ignore compiled kernels, "
                f"and onnxruntime-gpu {dist.version} holds no PTX the {gpu.name or 'GPU'} (compute capability {cc}) "
                "may JIT: its CUDA provider fails (cuBLAS first: 'CUBLAS failure 14 ... cublasCreate', or 'no kernel "
                "image is available')",
                (
                    f"CUDA_FORCE_PTX_JIT={facts.environment.cuda_force_ptx_jit} in the environment",
                    f"onnxruntime-gpu {dist.version} {facts.platform.tag} wheels: {code_summary(code[0], code[1])}",
                ),
                UNSET_PTX_JIT,
            )
        ]
    return []


def _with_gpu_code_fix(finding: Finding, facts: HostFacts, matrix: Matrix, python: str) -> Finding:
    """A "no kernel image" from a log or the live session, on a host whose GPU is known: the fix names the build
    that holds code for that GPU (the log rules alone know no compute capability)."""
    if finding.code != "unsupported-gpu-arch" or "build onnxruntime from source" in finding.fix:
        return finding
    if next(_driver_gaps(facts, matrix), None):
        return finding  # the driver cannot run this GPU: no build's code helps (driver_gpu_findings says which driver)
    if forced_ptx_jit(facts.environment.cuda_force_ptx_jit):  # another build would not help: the variable is the cause
        return _with_ptx_jit_fix(finding, facts.environment)
    cc = next((g.compute_capability for g in facts.visible_gpus if g.compute_capability), None)
    if cc is None or finding.fix.startswith("onnxruntime-gpu "):
        return finding
    fix = gpu_code_fix(matrix, cc, facts.platform.tag, python)
    return Finding(finding.code, finding.severity, finding.title, finding.evidence, fix, finding.library)


def _with_ptx_jit_fix(finding: Finding, environment: RuntimeEnvironment) -> Finding:
    """unsupported-gpu-arch while CUDA_FORCE_PTX_JIT is set: the variable is the cause, unsetting it the fix."""
    if finding.code != "unsupported-gpu-arch" or not forced_ptx_jit(environment.cuda_force_ptx_jit):
        return finding
    if finding.fix.startswith("unset "):
        return finding
    evidence = (*finding.evidence, f"CUDA_FORCE_PTX_JIT={environment.cuda_force_ptx_jit} in the environment")
    return Finding(finding.code, finding.severity, finding.title, evidence, UNSET_PTX_JIT, finding.library)


def _incomplete_findings(facts: HostFacts, fixes: Fixes) -> list[Finding]:
    """Installed distributions whose RECORD lists files that are missing on disk: an onnxruntime flavour
    (typically after removing another flavour took the onnxruntime/ folder both list) or an NVIDIA wheel."""
    found: list[Finding] = []
    flavours = [d for d in facts.onnxruntime if d.missing_files]
    if flavours:
        first = flavours[0]
        by_hand = " ".join(f"{d.name}=={d.version}" for d in flavours)
        found.append(
            Finding(
                "package-files-missing",
                "error",
                f"{first.name} {first.version} is installed, but files it installed are missing: onnxruntime is "
                "broken until it is installed afresh",
                tuple(f"{d.name} {d.version}: {d.missing_files}" for d in flavours),
                fixes.for_code("package-files-missing", subject=by_hand),
            )
        )
    for wheel in facts.nvidia_wheels:
        if wheel.missing_files:
            found.append(
                Finding(
                    "package-files-missing",
                    "warning",
                    f"the NVIDIA wheel {wheel.name} {wheel.version} is installed, but files it installed are missing",
                    (f"{wheel.name} {wheel.version}: {wheel.missing_files}",),
                    fixes.for_code(
                        "package-files-missing", wheel.library or wheel.name, f"{wheel.name}=={wheel.version}"
                    ),
                    wheel.library or wheel.name,
                )
            )
    return found


def _hidden_by_env(facts: HostFacts) -> tuple[str, ...]:
    env = facts.environment
    evidence = []
    if env.cuda_visible_devices is not None and env.cuda_visible_devices.strip().lower() in HIDDEN_VALUES:
        evidence.append(f"CUDA_VISIBLE_DEVICES={env.cuda_visible_devices!r}")
    if env.nvidia_visible_devices is not None and env.nvidia_visible_devices.strip().lower() in HIDDEN_VALUES:
        evidence.append(f"NVIDIA_VISIBLE_DEVICES={env.nvidia_visible_devices!r}")
    if facts.gpus and not facts.visible_gpus:
        evidence.append(f"{len(facts.gpus)} GPU(s) present, none visible")
    return tuple(evidence)


def _major(version: str | None) -> int | None:
    try:
        return major(str(version))
    except ValueError:
        return None


def _needed_libraries(gpu: OrtDist, matrix: Matrix | None) -> dict[str, bool]:
    """The CUDA libraries (cuDNN aside) every onnxruntime-gpu build needs, each with whether its soname major
    is the CUDA major (cudart, cublas) rather than its own (cufft, curand): from the matrix."""
    needed = common_libraries(matrix) if matrix is not None else {}
    return {library: same for library, same in needed.items() if library != "cudnn"}


def _library_findings(facts: HostFacts, gpu: OrtDist, fixes: Fixes, needed: dict[str, bool]) -> list[Finding]:
    """cuDNN / CUDA libraries the installed build needs: missing, wrong major, or present but not findable."""
    found: list[Finding] = []
    build_major = _major(gpu.cuda_version)  # None when the build does not record it: presence is still checked
    wanted = {lib: str(build_major) for lib, same in needed.items() if same} if build_major is not None else {}
    if gpu.cudnn_version:
        wanted["cudnn"] = str(_major(gpu.cudnn_version))
    for library in ("cudnn", *needed):
        hits = [h for h in facts.libraries if h.library == library]
        major = wanted.get(library)
        matching = [h for h in hits if major is None or h.major is None or h.major == major]
        code = library_code(library, "missing")
        if not hits:
            windows = facts.platform.os == "windows"
            filename = library_filename(library, major, windows) if major else None
            searched = SEARCHED_WINDOWS if windows else SEARCHED_LINUX
            found.append(
                Finding(
                    code,
                    "error",
                    f"no {library} library ({filename or 'any version'}) was found for {gpu.name} {gpu.version}",
                    (f"searched: {searched}; no {filename or library}",),
                    fixes.for_code(code, library),
                    library,
                )
            )
            continue
        if not matching:
            majors = sorted({h.major or "?" for h in hits})
            found.append(
                Finding(
                    library_code(library, "wrong-major"),
                    "error",
                    f"{library} is present only for major {', '.join(majors)}; {gpu.name} {gpu.version} "
                    f"(CUDA {gpu.cuda_version}) needs {library} {major}",
                    tuple(_hit_line(h) for h in hits[:4]),
                    fixes.for_code("cuda-major-mismatch"),
                    library,
                )
            )
            continue
        reachable = LOADER_SOURCES | ({"pip"} if facts.python and facts.python.loader_hook else set())
        if not any(h.source in reachable for h in matching):
            found.append(
                Finding(
                    library_code(library, "not-on-path"),
                    "error",
                    f"{library} is installed ({', '.join(sorted({h.source for h in matching}))}) but the "
                    "loader does not search there: only preload_dlls() or `import torch` finds it",
                    tuple(_hit_line(h) for h in matching[:4]),
                    fixes.for_code("library-not-on-path"),
                    library,
                )
            )
    return found


def _hit_line(hit: LibraryHit) -> str:
    return f"{hit.filename} at {hit.path} ({hit.source})"


# --- verify report ---------------------------------------------------------------------------------------


def _from_report(report: VerifyReport, facts: HostFacts | None, fixes: Fixes, matrix: Matrix | None) -> list[Finding]:
    """What the verify report shows: each failure's finding, TensorRT's, what its log explains; then what a
    report shows whether or not it failed (a CUDA context maker beside onnxruntime, preload_dlls() needed, the
    loader hook failed, the driver's library missing, the GPU slower than the CPU)."""
    from provisioner.doctor.tensorrt import report_findings  # TensorRT's rules, in their own module

    found = [finding for failure in report.failures for finding in _from_failure(failure, report, fixes)]
    found += report_findings(report, fixes, matrix)
    found += _what_the_log_adds(report, found, fixes, matrix)
    found += _context_makers(report, fixes)
    found += _preload_or_hook(report, fixes)
    found += _driver_library_missing(report, facts, fixes)
    found += _gpu_slower(report, fixes)
    found += library_twice(report, fixes)
    return found


def library_twice(report: VerifyReport, fixes: Fixes) -> list[Finding]:
    """cuda-library-twice: two files of one CUDA library (one soname) mapped into the verify child, e.g. torch's
    cuDNN and a pip wheel's: whichever the loader bound first serves every caller of its symbols."""
    import os

    from provisioner.standalone.libnames import match_library

    groups: dict[tuple[str, str], dict[str, str]] = {}
    for loaded in report.loaded_libraries:
        matched = match_library(loaded.filename, loaded.filename.lower().endswith(".dll"))
        if matched is None or matched[0] == "cuda":
            continue
        real = os.path.realpath(loaded.path)
        groups.setdefault((loaded.filename, matched[0]), {}).setdefault(real, loaded.source)
    found = []
    for (filename, library), paths in sorted(groups.items()):
        if len(paths) < 2:
            continue
        where = tuple(f"{path} ({source})" for path, source in paths.items())
        found.append(
            Finding(
                "cuda-library-twice",
                "warning",
                f"{filename} is loaded twice into one process, from {len(paths)} places",
                where,
                fixes.for_code("cuda-library-twice", library, filename),
                library,
            )
        )
    return found


def _what_the_log_adds(
    report: VerifyReport, found: list[Finding], fixes: Fixes, matrix: Matrix | None
) -> list[Finding]:
    """The findings of the report's log (its stderr, ONNX Runtime's messages, the failures' words): after a
    failed session every one (and, while nothing `found` blocks, the library a failure names, else
    gpu-provider-failed); otherwise only those that do not block."""
    kinds = set(report.failure_kinds)
    texts = (report.stderr, *report.ort_messages, *(f.message for f in report.failures))
    explained = analyze_log("\n".join(texts), python=fixes.python, matrix=matrix)
    if not (kinds & {"session-failed", "cpu-fallback", "import-failed", "crashed"} and "no-driver" not in kinds):
        return [f for f in explained if not f.blocking]
    added = [f for f in explained if f.code != "gpu-provider-failed"]
    for failure in report.failures:
        if failure.kind == "session-failed" and failure.library and not any(f.blocking for f in (*found, *added)):
            added += _library_failure(failure, fixes)
    if not any(f.blocking for f in (*found, *added)):
        messages = tuple(m for m in report.ort_messages[:6]) or tuple(f.message for f in report.failures[:3])
        added.append(
            Finding(
                "gpu-provider-failed",
                "error",
                "the GPU session could not be created; ONNX Runtime fell back to the CPU",
                messages,
                fixes.for_code("gpu-provider-failed"),
            )
        )
    return added


def _context_makers(report: VerifyReport, fixes: Fixes) -> list[Finding]:
    """cuda-context-conflict: a package that makes CUDA contexts of its own installed beside onnxruntime-gpu."""
    related = {d.name: d.version for d in (report.ort.related_dists if report.ort else ())}
    drivers = [f"{name} {version}" for name, version in sorted(related.items()) if _CONTEXT_MAKERS.match(name)]
    if not drivers or report.provider != "cuda":
        return []
    return [
        Finding(
            "cuda-context-conflict",
            "info",
            f"{', '.join(drivers)} installed next to onnxruntime-gpu: using both in one process needs "
            "explicit CUDA context management",
            tuple(f"installed: {d}" for d in drivers),
            fixes.for_code("cuda-context-conflict"),
        )
    ]


def _preload_or_hook(report: VerifyReport, fixes: Fixes) -> list[Finding]:
    """How the libraries were found: only after preload_dlls() (library-not-on-path), or not by ortprov's loader
    hook, which failed (loader-hook-failed)."""
    found = []
    if report.preload_required:
        found.append(
            Finding(
                "library-not-on-path",
                "error",
                "a plain program runs on the CPU: the GPU session works only after onnxruntime.preload_dlls(), "
                "the loader alone does not find the NVIDIA libraries",
                report.attempts,
                fixes.for_code("library-not-on-path"),
            )
        )
    hook = report.loader_hook
    if hook is not None and hook.failed:
        found.append(
            Finding(
                "loader-hook-failed",
                "error" if not report.ok else "warning",
                "ortprov's loader hook failed while onnxruntime was imported"
                + ("" if not report.ok else " (the session found its libraries elsewhere)"),
                tuple(x for x in (hook.error, *hook.errors) if x),
                fixes.for_code("loader-hook-failed"),
            )
        )
    return found


def _driver_library_missing(report: VerifyReport, facts: HostFacts | None, fixes: Fixes) -> list[Finding]:
    """no-driver: the static check found no libcuda although this host has a driver."""
    if report.static is None or facts is None or not facts.driver.present:
        return []
    return [
        Finding(
            "no-driver",
            "error",
            f"{lib.soname} (the driver's CUDA library) is not found",
            (f"{lib.soname}: not found by the loader",),
            fixes.for_code("no-driver"),
        )
        for lib in report.static.libraries
        if lib.status == "driver-missing"
    ]


def _gpu_slower(report: VerifyReport, fixes: Fixes) -> list[Finding]:
    """gpu-slower-than-cpu: a check whose session ran on the GPU, slower per run than on the CPU."""
    found = []
    for check in report.checks:
        gpu, cpu = check.gpu, check.cpu
        if not (check.gpu_first and gpu and cpu and gpu.median_run_ms and cpu.median_run_ms):
            continue
        if gpu.median_run_ms > cpu.median_run_ms:
            found.append(
                Finding(
                    "gpu-slower-than-cpu",
                    "warning",
                    f"{check.model}: the GPU session is slower than the CPU "
                    f"({gpu.median_run_ms:.2f} ms vs {cpu.median_run_ms:.2f} ms per run)",
                    (
                        f"{check.model}: GPU median {gpu.median_run_ms} ms over {gpu.runs} runs, CPU "
                        f"{cpu.median_run_ms} ms over {cpu.runs} runs",
                    ),
                    fixes.for_code("gpu-slower-than-cpu"),
                )
            )
    return found


def _from_failure(failure: Failure, report: VerifyReport, fixes: Fixes) -> list[Finding]:
    kind, message = failure.kind, failure.message
    evidence = (message,)
    if report.plugin is not None and kind in _PLUGIN_TITLES:
        code = "plugin-library-missing" if kind == "library-missing" else kind
        title = _PLUGIN_TITLES[kind].format(module=report.plugin.module, library=failure.library or "a library")
        return [Finding(code, "error", title, evidence, fixes.for_code(code, subject=report.provider), failure.library)]
    if kind in ("cpu-package-only", "cpu-and-gpu-installed"):
        title = (
            "`import onnxruntime` loads the CPU package: no GPU provider"
            if kind == "cpu-package-only"
            else "the CPU and GPU onnxruntime packages are both installed (they share one folder)"
        )
        return [Finding(kind, "error", title, evidence, fixes.for_code(kind))]
    if kind == "not-installed":
        return [
            Finding(
                "onnxruntime-not-installed",
                "error",
                "onnxruntime is not installed in the target",
                evidence,
                fixes.for_code("onnxruntime-not-installed"),
            )
        ]
    if kind in ("library-missing", "library-not-on-path"):
        return _library_failure(failure, fixes)
    if kind == "no-driver":
        return [Finding("no-driver", "error", "no NVIDIA driver is loaded", evidence, fixes.for_code("no-driver"))]
    if kind == "msvc-runtime-missing":
        title = f"{failure.library or 'the Microsoft Visual C++ runtime'} (Microsoft Visual C++ runtime) is missing"
        return [Finding(kind, "error", title, evidence, fixes.for_code(kind), failure.library)]
    return _other_failure(failure, report, fixes)


_PLUGIN_TITLES = {  # a plugin EP's verify failures (verify_plugin.py) -> their findings
    "library-missing": "the plugin EP's provider cannot load: {library} is not found by the loader",
    "plugin-register-failed": "the plugin EP {module} did not register into onnxruntime",
    "plugin-no-device": "the plugin EP {module} registered but offers no device here",
    "plugin-beside-gpu-core": "onnxruntime-gpu is installed beside the plugin EP {module}, which needs the CPU core",
    "plugin-core-too-old": "the onnxruntime core is older than the plugin EP {module} needs",
}


def _library_failure(failure: Failure, fixes: Fixes) -> list[Finding]:
    """A failure about one named library -> its code by the shared rule (factrules.library_code)."""
    library = failure.library or "?"
    base = "cublas" if library == "cublasLt" else ("nvinfer" if library == "nvonnxparser" else library)
    state = "not-on-path" if failure.kind == "library-not-on-path" else "missing"
    code = library_code(base, state)
    titles = {
        "library-not-on-path": f"{library} is installed but cannot be found",
        "cudnn-missing": "cuDNN is not installed where the loader can find it",
        "tensorrt-missing": "TensorRT is not installed",
        "no-driver": "no NVIDIA driver is loaded",
    }
    title = titles.get(code, f"the CUDA library {base} is not installed")
    shown = None if code == "no-driver" else base
    return [Finding(code, "error", title, (failure.message,), fixes.for_code(code, shown), shown)]


def _other_failure(failure: Failure, report: VerifyReport, fixes: Fixes) -> list[Finding]:
    """Timeouts, crashes, disagreements and unknown kinds; session failures are explained by the caller."""
    kind, message = failure.kind, failure.message
    evidence = (message,)
    if kind == "timeout":
        return [
            Finding(
                "verify-timeout",
                "error",
                "the GPU check hung",
                evidence,
                fixes.for_code("verify-timeout"),
            )
        ]
    if kind == "crashed":
        return [
            Finding(
                "verify-crashed",
                "error",
                f"the GPU check crashed ({report.signal or 'signal'})",
                (message, *report.ort_messages[-3:]),
                fixes.for_code("verify-crashed"),
            )
        ]
    if kind == "results-differ":
        return [
            Finding(
                "gpu-results-differ",
                "error",
                "GPU results disagree with the CPU beyond the TF32 tolerance",
                evidence,
                fixes.for_code("gpu-results-differ"),
            )
        ]
    if kind == "numpy-missing":
        return [
            Finding(
                "verify-failed",
                "error",
                "numpy is not installed in the target, so the check could not run",
                evidence,
                fixes.for_code("verify-failed", subject="numpy"),
            )
        ]
    missing_module = re.search(r"No module named '([\w.]+)'", message) if kind == "import-failed" else None
    if missing_module:
        module = missing_module.group(1).split(".")[0]
        return [
            Finding(
                "verify-failed",
                "error",
                f"`import onnxruntime` fails: the module {module!r} is not installed in the target",
                evidence,
                fixes.for_code("verify-failed", subject=module),
            )
        ]
    if kind in ("session-failed", "cpu-fallback", "import-failed"):
        return []  # explained from the captured stderr by the caller
    return [
        Finding(
            "verify-failed",
            "error",
            f"verify failed: {kind}",
            evidence,
            fixes.for_code("verify-failed"),
        )
    ]


# --- plan outcome ----------------------------------------------------------------------------------------


def _from_no_plan(error: NoCompatiblePlan, fixes: Fixes) -> list[Finding]:
    reasons = [getattr(r, "reason", str(r)) for r in error.rejected]
    text = " ".join(reasons).lower()
    if "compute capability" in text or "no kernels" in text:
        code, title = (
            "unsupported-gpu-arch",
            "no onnxruntime-gpu build supports this GPU's compute capability",
        )
    elif "no wheel" in text or "glibc" in text:
        code, title = (
            "no-wheel-for-platform",
            "no onnxruntime-gpu build has a wheel for this platform or Python",
        )
    elif "driver" in text:
        code, title = "driver-too-old", "the driver is too old for every onnxruntime-gpu build"
    else:
        code, title = "no-wheel-for-platform", "no onnxruntime-gpu build runs on this host"
    return [Finding(code, "error", title, (error.message, *reasons[:3]), fixes.for_code(code))]


_PLAN_FIXED = frozenset(
    {
        "cpu-package-only",
        "cpu-and-gpu-installed",
        "cudnn-missing",
        "cuda-library-missing",
        "cuda-major-mismatch",
        "onnxruntime-not-installed",
        "tensorrt-missing",
    }
)


def _with_plan_fix(finding: Finding, plan: Plan, python: str, plan_flags: str = "") -> Finding:
    """Where the plan's steps fix the finding, show them as the exact commands."""
    if finding.code not in _PLAN_FIXED or not plan.steps:
        return finding
    commands = " && ".join(
        " ".join(_quote(a) for a in step_argv(s, "pip", python)) for s in plan.steps if s.runs_installer
    )
    hook = " and installs the loader hook" if any(s.kind == LOADER_HOOK for s in plan.steps) else ""
    fix = f"ortprov apply --python {python}{plan_flags}  (runs: {commands}{hook})"
    return Finding(finding.code, finding.severity, finding.title, finding.evidence, fix, finding.library)


def _quote(arg: str) -> str:
    return f'"{arg}"' if any(c in arg for c in " <>[]*") else arg
