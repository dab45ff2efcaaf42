"""The options of a measured variant, three ways: Python (with the per-shape helper when the variant keeps state
per input shape), RapidOCR 1.4.4, and data (pure).

What the user pastes is what was measured: the per-shape variants ran through standalone/shape_sessions.py, the
file the Python and RapidOCR blocks tell them to copy; padding is printed as the pipeline's part (pad and crop).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from provisioner.tune import variants as plan
from provisioner.tune.shapes import bucket_levels

if TYPE_CHECKING:
    from provisioner.tune.report import TuneReport

HELPER_FILE = "shape_sessions.py"  # provisioner/standalone/shape_sessions.py: the helper the tune measured
HELPERS = {"graphs": "GraphPerShape", "sessions": "SessionPerShape"}
PAD_AND_CROP = (
    "your pipeline must pad every input to this shape and crop the outputs back to each input's size "
    "(an OCR pipeline can: the detector's map is cropped to the image)"
)
RAPIDOCR_SECTIONS = {"det": "Det", "rec": "Rec", "cls": "Cls"}
# where RapidOCR 1.4.4 keeps each model's InferenceSession (main.py, ch_ppocr_*/text_*.py: OrtInferSession.session)
RAPIDOCR_SESSIONS = {"Det": "engine.text_det.infer", "Rec": "engine.text_rec.session", "Cls": "engine.text_cls.infer"}
# RapidOCR 1.4.4, rapidocr_onnxruntime/utils/infer_engine.py, OrtInferSession._get_ep_list: the CUDA options
# every session gets when `use_cuda: true` (config.yaml has no key for them)
RAPIDOCR_HARD_CODED = {
    "device_id": "0",
    "arena_extend_strategy": "kNextPowerOfTwo",
    "cudnn_conv_algo_search": "EXHAUSTIVE",
    "do_copy_in_default_stream": "True",
}


@dataclass(frozen=True)
class Recommendation:
    """The winning options three ways: Python provider options (and the helper class when state is kept per
    input shape), RapidOCR's config.yaml (and what it cannot say), JSON."""

    variant: str
    label: str
    provider: str  # CUDAExecutionProvider | CPUExecutionProvider
    provider_options: dict[str, str] = field(default_factory=dict)
    session_options: dict[str, str] = field(default_factory=dict)
    io_binding: bool = False
    pad_to: dict[str, list[list[int]]] = field(default_factory=dict)  # input -> per dimension, the bucket sizes
    pad_mode: str = "zero"
    per_shape: str | None = None  # graphs | sessions
    helper: str | None = None  # GraphPerShape | SessionPerShape, from HELPER_FILE
    shared_arena: bool = False
    changes_results: str | None = None  # recommended although its outputs differ (--allow-output-change): how
    python: str = ""
    rapidocr: str = ""


def recommend(report: TuneReport, name: str, changes_results: str | None = None) -> Recommendation:
    """The options of the measured variant `name`, as Python, as RapidOCR configuration, and as data."""
    m = report.measurement(name)
    if m is None:
        raise KeyError(name)
    variant = m.variant
    cuda = variant.provider == "cuda"
    options = dict(variant.provider_options)
    if cuda and plan.ALGO not in options:
        options[plan.ALGO] = m.effective_options.get(plan.ALGO, "EXHAUSTIVE")  # say it: RapidOCR sets its own
    pad_to: dict[str, list[list[int]]] = {}
    which = plan.buckets_of(variant)
    if which is not None and plan.bucket_sequence(report, which):
        pad_to = bucket_levels(plan.bucket_sequence(report, which))
    if variant.pad_one and report.one_shape is not None:
        pad_to = bucket_levels((report.one_shape,))
    helper = HELPERS.get(variant.per_shape or "")
    provider = plan.CUDA if cuda else "CPUExecutionProvider"
    rec = Recommendation(
        variant=variant.name,
        label=variant.label,
        provider=provider,
        provider_options=options,
        session_options=dict(variant.session_options),
        io_binding=variant.binding != "none",
        pad_to=pad_to,
        pad_mode=variant.pad_mode,
        per_shape=variant.per_shape,
        helper=helper,
        shared_arena=variant.shared_arena,
        changes_results=changes_results,
    )
    model = Path(report.model).name
    return replace(rec, python=python_block(rec, model), rapidocr=rapidocr_block(rec, model))


def _py_dict(options: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in options.items()) + "}"


def _providers(rec: Recommendation) -> str:
    if rec.provider == "CPUExecutionProvider":
        return 'providers = ["CPUExecutionProvider"]'
    return f'providers = [("CUDAExecutionProvider", {_py_dict(rec.provider_options)}), "CPUExecutionProvider"]'


def _session_lines(rec: Recommendation) -> list[str]:
    lines = ["options = ort.SessionOptions()"]
    for key, value in rec.session_options.items():
        if key == "graph_optimization_level":
            lines.append(f"options.graph_optimization_level = ort.GraphOptimizationLevel.{value}")
        else:
            lines.append(f"options.{key} = {value!r}")
    return lines


def _helper_call(rec: Recommendation, model: str) -> str:
    shared = ", shared_arena=True" if rec.shared_arena else ""
    return f"{rec.helper}({model!r}, providers, options{shared})"


def _padding_lines(rec: Recommendation) -> list[str]:
    if not rec.pad_to:
        return []
    how = "with each input's own edge values (np.pad mode='edge')" if rec.pad_mode == "edge" else "with zeros"
    if all(len(sizes) == 1 for dims in rec.pad_to.values() for sizes in dims):
        return [
            f"# pad every input {how}, at the end of each dimension, to one shape {rec.pad_to}:",
            f"# {PAD_AND_CROP}",
        ]
    return [f"# pad each input {how}, at the end of each dimension, up to its bucket: {rec.pad_to}"]


def python_block(rec: Recommendation, model: str) -> str:
    lines = []
    if rec.changes_results:
        lines.append(f"# CHANGES THE RESULTS (recommended with --allow-output-change): {rec.changes_results}")
    lines += ["import onnxruntime as ort"]
    if rec.helper:
        lines.append(f"from shape_sessions import {rec.helper}  # {HELPER_FILE}: copy it from ortprov (below)")
    lines += ["", *_session_lines(rec), _providers(rec)]
    if rec.helper:
        lines.append(f"session = {_helper_call(rec, model)}")
        lines.append("outputs = session.run(None, feed)  # as InferenceSession.run; one state per input shape")
    else:
        lines.append(f"session = ort.InferenceSession({model!r}, sess_options=options, providers=providers)")
    lines += _padding_lines(rec)
    if rec.io_binding:
        lines.append("# run with I/O binding (session.io_binding(), bind_ortvalue_input, run_with_iobinding)")
    return "\n".join(lines)


def rapidocr_block(rec: Recommendation, model: str) -> str:
    stem = model.lower()
    section = next((v for k, v in RAPIDOCR_SECTIONS.items() if f"_{k}" in stem), "Det")
    if rec.provider == "CPUExecutionProvider":
        return f"# config.yaml (rapidocr-onnxruntime 1.4.4)\n{section}:\n    use_cuda: false"
    if rec.helper:
        return _rapidocr_helper(rec, model, section)
    lines = [
        "# config.yaml (rapidocr-onnxruntime 1.4.4): use_cuda is the only CUDA key",
        f"{section}:",
        "    use_cuda: true",
        "",
        "# RapidOCR 1.4.4 hard-codes the CUDA provider options in rapidocr_onnxruntime/utils/infer_engine.py",
        "# (OrtInferSession._get_ep_list: "
        + ", ".join(f"{k}={v}" for k, v in RAPIDOCR_HARD_CODED.items())
        + "); config.yaml cannot change them.",
        "# Replace them before building RapidOCR (this applies to every model with use_cuda: true):",
        "from rapidocr_onnxruntime.utils.infer_engine import OrtInferSession",
        "",
        f"TUNED = {_py_dict(rec.provider_options)}",
        "_ep_list = OrtInferSession._get_ep_list",
        "",
        "",
        "def _tuned_ep_list(self):",
        "    return [",
        '        (name, {"device_id": opts.get("device_id", 0), **TUNED}) if name == "CUDAExecutionProvider"'
        " else (name, opts)",
        "        for name, opts in _ep_list(self)",
        "    ]",
        "",
        "",
        "OrtInferSession._get_ep_list = _tuned_ep_list",
        "# then: from rapidocr_onnxruntime import RapidOCR; engine = RapidOCR(config_path=...)",
    ]
    if rec.session_options:
        lines.append(
            "# the session options ("
            + ", ".join(f"{k}={v}" for k, v in rec.session_options.items())
            + ") are set in OrtInferSession._init_sess_opts (graph_optimization_level ORT_ENABLE_ALL there): "
            "patch it the same way"
        )
    if rec.pad_to:
        lines.append(
            f"# padding ({rec.pad_to}) is not a RapidOCR setting: pad the resized image in your own "
            "pre-processing (TextDetector's resize rounds each side to a multiple of 32) and crop the map back"
        )
    return "\n".join(lines)


def _rapidocr_helper(rec: Recommendation, model: str, section: str) -> str:
    """RapidOCR with the measured helper in place of the model's session (RapidOCR calls session.run,
    get_inputs, get_outputs and get_modelmeta, which the helper answers)."""
    holder = RAPIDOCR_SESSIONS[section]
    lines = [
        "# config.yaml (rapidocr-onnxruntime 1.4.4)",
        f"{section}:",
        "    use_cuda: false  # RapidOCR's own session stays on the CPU; the one below replaces it",
        "",
        "from pathlib import Path",
        "",
        "import onnxruntime as ort",
        "import rapidocr_onnxruntime",
        "from rapidocr_onnxruntime import RapidOCR",
        f"from shape_sessions import {rec.helper}  # {HELPER_FILE}, copied from ortprov",
        "",
        'engine = RapidOCR(config_path="config.yaml")',
        f'model = str(Path(rapidocr_onnxruntime.__file__).parent / "models" / {model!r})',
        *_session_lines(rec),
        _providers(rec),
        f"{holder}.session = {_helper_call(rec, 'MODEL').replace(repr('MODEL'), 'model')}",
    ]
    return "\n".join(lines)
