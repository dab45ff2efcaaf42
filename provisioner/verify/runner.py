"""Run the verify child in the target interpreter, with a timeout, and turn whatever happens into a report.

A hang becomes a `timeout` report, a crash (segfault, abort) a `crashed` report naming the signal and the
stage the child had reached; the parent never raises for what the child does. Bad arguments (no such
interpreter, no such model, an unknown provider) raise BadInput before anything runs.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from provisioner import childproc, standalone
from provisioner.errors import BadInput
from provisioner.plan import PLUGIN_PROVIDERS
from provisioner.standalone.protocol import STAGE_PREFIX
from provisioner.verify.report import Failure, VerifyReport

CHILD_SCRIPT = standalone.path("verify_child.py")
MODELS_DIR = Path(__file__).resolve().parent / "models"  # the built-in check models
STDERR_TAIL_CHARS = 20000

# stderr lines worth keeping as evidence for doctor
_MESSAGE_LINE = re.compile(
    r"(\[[EWF]:onnxruntime|Failed to|cannot open shared object|LoadLibrary|error 126|depends on|"
    r"CUDA failure|CUDNN failure|CUBLAS failure|no kernel image|out of memory|zlibwapi|insufficient|"
    r"is not in available provider|not assigned to the preferred|Microsoft Visual C\+\+|Traceback|Error:)",
    re.I,
)
# a session failure the preload_dlls() retry can fix: a library the loader could not find
_LOADER_TROUBLE = re.compile(
    r"cannot open shared object|Failed to load library|LoadLibrary failed|error 126|"
    r"which is missing|Failed to create CUDAExecutionProvider|"
    r"Failed to create TensorrtExecutionProvider",
    re.I,
)


def run_verify(
    python: str,
    *,
    provider: str = "cuda",
    model: str | None = None,
    static: bool = False,
    dims: dict[str, int] | None = None,
    timeout: float = 120.0,
    preload: bool = False,
    env: dict[str, str] | None = None,
    plugin_module: str | None = None,
) -> VerifyReport:
    """Prove a GPU session in `python` (a path to the target interpreter) and return the report.

    The verdict is what a plain program gets in that interpreter: no preload_dlls(), no `import torch`, no
    variable it would not have (the loader hook, where installed, does its work as it would for the program).
    preload=True: the user's code calls onnxruntime.preload_dlls() before its sessions, so the child does too.
    A plain run that fails because the loader found no library is run once more with preload_dlls(), only to
    tell the user what would help: the verdict stays FAIL, with a `library-not-on-path` failure.
    """
    _validate(python)
    argv = _child_argv(python, provider, model, static, dims or {})
    if provider in PLUGIN_PROVIDERS:  # the EP's module, which names its library and EP (verify_plugin.py)
        argv += ["--plugin-module", plugin_module or plugin_module_of(provider)]
    child_env = {**os.environ, **(env or {}), "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1"}
    deadline = time.monotonic() + timeout
    first = _run_child(argv + ["--preload", "yes" if preload else "no"], timeout, child_env, provider, static, python)
    if provider in PLUGIN_PROVIDERS:
        return plugin_core_check(first)
    left = deadline - time.monotonic()
    if preload or static or not _preload_may_help(first) or left < 5:
        return first
    second = _run_child(argv + ["--preload", "yes"], left, child_env, provider, static, python)
    attempts = (
        f"plain (as your code runs): {first.status} ({_kinds(first)})",
        f"with onnxruntime.preload_dlls(): {second.status} ({_kinds(second)})",
    )
    if not second.ok:
        return _replace(first, attempts=attempts, duration_s=_sum(first.duration_s, second.duration_s))
    failure = Failure(
        "library-not-on-path",
        "the GPU session works only after onnxruntime.preload_dlls(): a plain program does not find the NVIDIA "
        "libraries and runs on the CPU",
    )
    return _replace(
        first,
        attempts=attempts,
        preload_required=True,
        failures=(*first.failures, failure),
        ort_messages=first.ort_messages + second.ort_messages,
        duration_s=_sum(first.duration_s, second.duration_s),
    )


def _validate(python: str) -> None:
    """The interpreter to run the child in (the provider, model, --dim sizes and timeout are checked once, by
    their declarations in commands/options.py)."""
    if not python or not (Path(python).is_file() and os.access(python, os.X_OK)):
        raise BadInput(
            f"python interpreter {python!r} does not exist or is not executable",
            hint="pass the target's interpreter, e.g. --python .venv/bin/python",
        )


def _child_argv(python: str, provider: str, model: str | None, static: bool, dims: dict[str, int]) -> list[str]:
    argv = [python, str(CHILD_SCRIPT), "--provider", provider, "--models", str(MODELS_DIR)]
    if model:
        argv += ["--model", str(Path(model).resolve())]
    if static:
        argv.append("--static")
        for major, sonames in lazy_sonames().items():
            argv += ["--lazy-sonames", f"{major}={','.join(sonames)}"]
    for name, size in dims.items():
        argv += ["--dim", f"{name}={size}"]
    return argv


def plugin_module_of(provider: str) -> str:
    """The Python module of a plugin EP provider (tensorrt-rtx: onnxruntime_ep_nv_tensorrt_rtx), from the matrix."""
    from provisioner.matrix.load import load_matrix

    modules = [e.module for e in load_matrix().ep_releases if e.provider == provider]
    if not modules:
        raise BadInput(f"the matrix records no {provider} EP package", hint="ortprov matrix update reads them")
    return modules[0]


def plugin_core_check(report: VerifyReport) -> VerifyReport:
    """The report with a plugin-core-too-old failure where the installed CPU core is older than the installed EP's
    minimum (the matrix's row of that EP release; an EP release the matrix does not know is not judged)."""
    from provisioner.matrix.load import load_matrix
    from provisioner.versions import vtuple

    plugin, core = report.plugin, report.ort.version if report.ort else None
    if plugin is None or not plugin.version or not core:
        return report
    rows = [e for e in load_matrix().ep_releases if e.module == plugin.module and e.version == plugin.version]
    if not rows or vtuple(core) >= vtuple(rows[0].core_min):
        return report
    failure = Failure(
        "plugin-core-too-old",
        f"{rows[0].package} {plugin.version} needs the {rows[0].core} core >= {rows[0].core_min} "
        f"({rows[0].core_source}); {core} is installed",
    )
    return _replace(report, failures=(*report.failures, failure), ok=False, status="failed")


def lazy_sonames() -> dict[str, tuple[str, ...]]:
    """CUDA major -> the cuDNN and cuFFT sonames its builds open at run time, from the matrix: what the static
    check looks for when the installed onnxruntime is too old to say (it has no _get_nvidia_dll_paths)."""
    from provisioner.matrix.load import load_matrix
    from provisioner.matrix.query import sonames_by_cuda_major
    from provisioner.standalone.libnames import library_family

    return {
        major: tuple(name for name in sonames if library_family(name) in ("cudnn", "cufft"))
        for major, sonames in sonames_by_cuda_major(load_matrix()).items()
    }


def _run_child(
    argv: list[str], timeout: float, env: dict[str, str], provider: str, static: bool, python: str
) -> VerifyReport:
    mode = "static" if static else "session"
    try:
        # its own group and the parent-death signal: a CUDA session that hangs dies with ortprov, even a killed one
        ended = childproc.run(argv, timeout=timeout, env=env)
    except OSError as exc:
        return _failed_report(
            "error",
            mode,
            provider,
            python,
            Failure("child-error", f"cannot start {python}: {exc}"),
            timeout=timeout,
        )
    timed_out, duration, stderr_text = ended.timed_out, ended.seconds, ended.stderr
    stage, clean_stderr = _split_stages(stderr_text)
    common = {
        "stage": stage,
        "stderr": clean_stderr[-STDERR_TAIL_CHARS:],
        "ort_messages": _messages(clean_stderr),
        "exit_code": ended.returncode,
        "duration_s": duration,
        "timeout_s": timeout,
    }
    if timed_out:
        failure = Failure("timeout", f"the verify child did not finish within {timeout:g} s (stuck at stage {stage!r})")
        return _replace(_failed_report("timeout", mode, provider, python, failure), **common)
    if ended.signal is not None:
        name = ended.signal
        failure = Failure("crashed", f"the verify child was killed by {name} at stage {stage!r}")
        return _replace(_failed_report("crashed", mode, provider, python, failure), signal=name, **common)
    data = ended.answer()
    if data is None or "failures" not in data:
        why = childproc.stderr_gist(clean_stderr) or "no output"
        failure = Failure("child-error", f"the verify child exited with {ended.returncode} and no report: {why}")
        return _replace(_failed_report("error", mode, provider, python, failure), **common)
    data.update({k: v for k, v in common.items()})
    data.pop("duration_s", None)
    data["duration_s"] = duration
    failures = data.get("failures") or []
    data["ok"] = not failures
    data["status"] = "passed" if not failures else "failed"
    try:
        return VerifyReport.from_dict(data)
    except ValueError as exc:
        failure = Failure("child-error", f"the verify child wrote a report ortprov cannot read: {exc}")
        return _replace(_failed_report("error", mode, provider, python, failure), **common)


def _failed_report(
    status: str, mode: str, provider: str, python: str, failure: Failure, timeout: float | None = None
) -> VerifyReport:
    return VerifyReport(
        ok=False,
        status=status,
        mode=mode,
        provider=provider,
        python=python,
        failures=(failure,),
        timeout_s=timeout,
    )


def _replace(report: VerifyReport, **changes: object) -> VerifyReport:
    import dataclasses

    return dataclasses.replace(report, **changes)  # type: ignore[arg-type]


def _split_stages(text: str) -> tuple[str | None, str]:
    stage = None
    kept = []
    for line in text.splitlines():
        if line.startswith(STAGE_PREFIX):
            stage = line[len(STAGE_PREFIX) :].strip()
        else:
            kept.append(line)
    return stage, "\n".join(kept) + ("\n" if kept else "")


def _messages(text: str) -> tuple[str, ...]:
    seen: list[str] = []
    for line in text.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        if line and _MESSAGE_LINE.search(line) and line not in seen:
            seen.append(line[:2000])
    return tuple(seen[:50])


def _preload_may_help(report: VerifyReport) -> bool:
    if report.ok or report.preload is None or not report.preload.available:
        return False
    if "cpu-package-only" in report.failure_kinds:
        return False
    if not {"session-failed", "cpu-fallback"} & set(report.failure_kinds):
        return False
    evidence = "\n".join((report.stderr, *(f.message for f in report.failures)))
    return bool(_LOADER_TROUBLE.search(evidence)) or any(f.library for f in report.failures)


def _kinds(report: VerifyReport) -> str:
    return ", ".join(report.failure_kinds) or "no failures"


def _sum(a: float | None, b: float | None) -> float | None:
    return round((a or 0.0) + (b or 0.0), 3)
