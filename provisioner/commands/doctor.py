"""`ortprov doctor`: detect, plan and verify, then list what stops the GPU from being used, with fixes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from provisioner.commands.options import command
from provisioner.errors import BadInput, OrtprovError

STREAM_LIMIT = 1024 * 1024 * 1024  # bytes read from a stream (stdin, a pipe) before it is cut off

if TYPE_CHECKING:
    import typer

    from provisioner.render.doctor import DoctorResult, PlanSummary

DOCTOR_HELP = """Why is my GPU not used? Detect the host, plan, verify a real session, and list the findings.

Each finding has a stable code (cudnn-missing, cpu-package-only, driver-too-old, ...), the evidence, and the
exact fix: a command, or the ortprov command that does it. Most important first.

Examples:

\b
  ortprov doctor
  ortprov doctor --python .venv/bin/python --json
  ortprov doctor --log error.txt     # explain a pasted log; touches nothing
  python app.py 2>&1 | ortprov doctor --log -
  ortprov doctor --model det.onnx    # also: GPU slower than the CPU here?

Exit codes: 0 healthy, 1 a finding blocks the GPU, 2 bad input.
"""


def register(app: typer.Typer) -> None:
    """Add the command(s) of this module to the app."""
    app.command("doctor", help=DOCTOR_HELP)(command(doctor))


@dataclass(frozen=True)
class LogText:
    """A log as read: its text (at most READ_LIMIT bytes of it), how many bytes the source had, whether cut."""

    text: str
    size: int  # bytes in the source (for a stream: bytes read before stopping)
    cut: bool
    encoding: str = "utf-8"

    @property
    def note(self) -> str | None:
        """One line for the reader when the log was not read whole."""
        if not self.cut:
            return None
        from provisioner.doctor.evidence import READ_LIMIT

        half = READ_LIMIT // 2 // (1024 * 1024)
        return f"the log has {self.size / (1024 * 1024):.0f} MiB: read its first and last {half} MiB only"


def read_log(source: str) -> LogText:
    """The text of --log FILE, or stdin for '-', bounded (the first and last READ_LIMIT/2 bytes); BadInput when
    missing, unreadable, empty, binary, or stdin is a terminal or closed."""
    if source == "-":
        stream = sys.stdin.buffer if sys.stdin is not None and not sys.stdin.closed else None
        if stream is None:
            raise BadInput("--log - reads the log from stdin, but stdin is closed", hint=_PIPE_HINT)
        if sys.stdin.isatty():
            raise BadInput("--log - reads the log from stdin, but stdin is a terminal", hint=_PIPE_HINT)
        data, size, cut = _read_stream(stream)
        name = "on stdin"
    else:
        path = Path(source)
        try:
            if path.is_dir():
                raise BadInput(f"log {source!r} is a folder", hint="pass a file, or - to read stdin")
            with open(path, "rb") as handle:
                if path.is_file():
                    data, size, cut = _read_file(handle, path.stat().st_size)
                else:  # a pipe or a device (/dev/zero): read as a stream
                    data, size, cut = _read_stream(handle)
        except FileNotFoundError:
            raise BadInput(f"log file {source!r} does not exist", hint="pass a file, or - to read stdin") from None
        except OSError as exc:
            raise BadInput(f"cannot read log file {source!r}: {exc.strerror}") from None
        name = repr(source)
    text, encoding = _decode(data, name)
    if not text.strip():
        raise BadInput(
            f"the log {name} is empty",
            hint="paste the error output, e.g. `python app.py 2>&1 | ortprov doctor --log -`",
        )
    return LogText(text, size, cut, encoding)


_PIPE_HINT = "pipe a log in (`python app.py 2>&1 | ortprov doctor --log -`) or pass a file: --log error.txt"
_BINARY_PROBE = 64 * 1024  # bytes looked at for NUL bytes


def _read_file(handle: BinaryIO, size: int) -> tuple[bytes, int, bool]:
    from provisioner.doctor.evidence import READ_LIMIT

    if size <= READ_LIMIT:
        return handle.read(READ_LIMIT + 1), size, False
    head = handle.read(READ_LIMIT // 2)
    handle.seek(size - READ_LIMIT // 2)
    return head + b"\n" + handle.read(READ_LIMIT // 2), size, True


def _read_stream(handle: BinaryIO) -> tuple[bytes, int, bool]:
    """Head and a rolling tail of a stream; stops at STREAM_LIMIT bytes; refuses binary from the first chunk."""
    from provisioner.doctor.evidence import READ_LIMIT

    head = handle.read(READ_LIMIT // 2)
    if b"\0" in head[:_BINARY_PROBE]:
        return head[:_BINARY_PROBE], len(head), False  # _decode refuses it
    size, tail = len(head), b""
    while size < STREAM_LIMIT:
        chunk = handle.read(1024 * 1024)
        if not chunk:
            break
        size += len(chunk)
        tail = (tail + chunk)[-(READ_LIMIT // 2) :]
    return (head + b"\n" + tail if tail else head), size, size > len(head) + len(tail) or size >= STREAM_LIMIT


def _decode(data: bytes, name: str) -> tuple[str, str]:
    """UTF-8 (or UTF-16 with a BOM, or GB18030: logs pasted from a Chinese Windows console); binary refused."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace"), "utf-16"
    if b"\0" in data[:_BINARY_PROBE]:
        raise BadInput(f"the log {name} is binary, not text", hint="pass the text a program printed")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030"), "gb18030"
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), "utf-8"


def doctor(
    target: str | None,
    log: str | None,
    provider: str,
    timeout: float,
    json_output: bool,
    preload: bool,
    tune_model: str | None,
    budget: float,
) -> DoctorResult:
    """Why is my GPU not used? Detect, plan, verify, and list findings with exact fixes."""
    if tune_model is not None:
        if log is not None:
            raise BadInput("--model and --log do not go together", hint="--log explains a log; it runs nothing")
        if not Path(tune_model).is_file():
            raise BadInput(f"model file {tune_model!r} does not exist", hint="pass the path of an .onnx file")
    from provisioner.doctor import diagnose, is_healthy
    from provisioner.render.doctor import DoctorResult

    if log is not None:
        from provisioner.doctor.evidence import paste_next
        from provisioner.doctor.rules import read_log_text

        read = read_log(log)
        found, evidence = read_log_text(read.text, python=target or "python", matrix=_matrix())
        findings = tuple(found)
        return DoctorResult(
            findings,
            is_healthy(found),
            log_note=read.note,
            log_read=evidence.summary(),
            paste_next=paste_next(evidence),
        )

    from provisioner.probe import detect_host
    from provisioner.probe.target import find_interpreter
    from provisioner.verify import run_verify

    facts = detect_host(python=target, timeout=min(timeout, 60.0))
    plan_outcome, plan_note = _plan(facts)
    python = facts.python.executable if facts.python else find_interpreter(target)
    report = run_verify(python, provider=provider, timeout=timeout, preload=preload)
    findings = tuple(diagnose(facts, report, None, plan_outcome, matrix=_matrix()))
    if tune_model is not None:
        from provisioner.findings import merge_findings

        findings = tuple(merge_findings([*_model_findings(python, tune_model, budget), *findings]))
    return DoctorResult(findings, is_healthy(list(findings)), report, _plan_summary(plan_outcome, plan_note), facts)


def _matrix() -> Any:
    """The matrix (libraries and CUDA error numbers doctor checks against); None if it cannot be loaded."""
    from provisioner.matrix.load import load_matrix

    try:
        return load_matrix()
    except OrtprovError:
        return None


def _plan(facts: Any) -> tuple[Any, str | None]:
    """make_plan for this host: a Plan, a NoCompatiblePlan, or (None, why it was skipped)."""
    try:
        from provisioner.matrix.load import load_matrix
        from provisioner.plan import Request
        from provisioner.planner import make_plan
    except ImportError as exc:  # the planner is optional for doctor
        return None, f"planner not available ({exc})"
    from provisioner.errors import NoCompatiblePlan

    try:
        return make_plan([facts], load_matrix(), Request()), None
    except NoCompatiblePlan as exc:
        return exc, None
    except OrtprovError as exc:
        return None, f"not planned: {exc.message.splitlines()[0]}"
    except Exception as exc:  # noqa: BLE001 - a planner bug must not hide the verify findings
        return None, f"not planned: the planner failed ({type(exc).__name__}: {exc})"


def _plan_summary(outcome: Any, note: str | None) -> PlanSummary:
    from provisioner.errors import NoCompatiblePlan
    from provisioner.plan import Plan
    from provisioner.render.doctor import PlanSummary

    if isinstance(outcome, Plan):
        label = f"{outcome.package} {outcome.ort_version} (CUDA {outcome.cuda_version})"
        return PlanSummary(True, f"{label} fits this host (`ortprov plan` for the steps)", label)
    if isinstance(outcome, NoCompatiblePlan):
        return PlanSummary(False, f"no compatible build: {outcome.message}")
    return PlanSummary(None, note or "not planned")


def _model_findings(python: str, model: str, budget: float) -> tuple[Any, ...]:
    """`--model`: tune the model (as `ortprov tune`, within --budget) and report what it found."""
    from provisioner.tune.analysis import analyse
    from provisioner.tune.findings import tune_findings
    from provisioner.tune.preflight import TargetCannotRun
    from provisioner.tune.runner import run_tune

    def progress(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    try:
        report = run_tune(python, model, budget_s=budget, progress=progress)
    except TargetCannotRun as exc:  # no onnxruntime: the findings of the checks above say so, with the fix
        progress(f"tune: not run: {exc.message}")
        return ()
    return tuple(tune_findings(analyse(report), model))
