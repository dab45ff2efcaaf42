"""The tune's reasoning on measurements: a recorded CPU run (tests/data/tune/cls-cpu-recorded.json, a real run on
this GPU-less machine) and HAND-MADE GPU-shaped measurements (labelled as such below: no GPU here; their numbers
follow the shape of issue 12's H100 table, not a recording)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from provisioner import standalone
from provisioner.errors import BadInput
from provisioner.render.tune import TuneResult, render_tune
from provisioner.tune import preflight, recommend, shapes, variants
from provisioner.tune.analysis import analyse
from provisioner.tune.findings import tune_findings
from provisioner.tune.report import (
    Check,
    LogLine,
    Measurement,
    Memory,
    NodeGroup,
    OutputAgreement,
    Placement,
    Runtime,
    Switch,
    TensorSpec,
    TuneReport,
    Variant,
)
from provisioner.tune.variants import ALGO

RECORDED = Path(__file__).resolve().parents[1] / "data" / "tune" / "cls-cpu-recorded.json"
# recorded on the H100 (`ortprov tune` of PP-OCRv4's detector, 24 image sizes; docs/gpu/h100-tune-2-det.txt)
H100_DET = Path(__file__).resolve().parents[2] / "docs" / "gpu" / "h100-tune-2-det.json"
DET_INPUT = TensorSpec("x", "tensor(float)", ("p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", None))
DET_OUTPUT = TensorSpec("sigmoid_0.tmp_0", "tensor(float)", ("p2o.DynamicDimension.0", 1, None, None))
GPU_RUNTIME = Runtime(
    "/venv/bin/python", "3.12.3", "1.31.1", "onnxruntime-gpu", ("CUDAExecutionProvider", "CPUExecutionProvider")
)


def recorded() -> TuneReport:
    return TuneReport.from_dict(json.loads(RECORDED.read_text(encoding="utf-8")))


# -- hand-made GPU-shaped measurements (not a recording) --------------------------------------------------------


def sequence(n: int = 24) -> tuple[dict[str, tuple[int, ...]], ...]:
    runs, _ = shapes.default_sequence((DET_INPUT,), (DET_OUTPUT,), n)
    return runs


def measured(
    variant: Variant, first_ms: float, steady_ms: float, n: int = 24, log: tuple[LogLine, ...] = (), **more: object
) -> Measurement:
    """A complete measurement: every run's shape new in the first pass, three warm passes of `steady_ms`."""
    return Measurement(
        variant,
        "ok",
        create_s=0.5,
        cold_ms=(first_ms,) * n,
        new_shape=(True,) * n,
        warm_ms=((steady_ms,) * n, (steady_ms * 1.01,) * n, (steady_ms * 0.99,) * n),
        log=log,
        **more,  # type: ignore[arg-type]
    )


def heuristic() -> Variant:
    return variants.apply_change(variants.CUDA_DEFAULT, variants.ALGORITHMS[0])


def gpu_report(**changes: object) -> TuneReport:
    """CPU 90/80 ms a run; EXHAUSTIVE pays ~500 ms per new shape; HEURISTIC wins; DEFAULT logs fallbacks."""
    algo_default = variants.apply_change(variants.CUDA_DEFAULT, variants.ALGORITHMS[1])
    fallback = LogLine("[W:onnxruntime:, conv.cc:420 UpdateState] OP Conv(conv1) running in Fallback mode.", 60)
    placement = Placement(
        "placement",
        {"x": (1, 3, 1600, 1600)},
        ("CUDAExecutionProvider", "CPUExecutionProvider"),
        groups=(
            NodeGroup("CUDAExecutionProvider", "Conv", 60, 4.0),
            NodeGroup("CUDAExecutionProvider", "MemcpyToHost", 1, 0.4),
            NodeGroup("CUDAExecutionProvider", "MemcpyFromHost", 2, 0.9),
            NodeGroup("CPUExecutionProvider", "Shape", 2, 0.01),
        ),
        node_count=120,
    )
    report = TuneReport(
        model="/models/ch_PP-OCRv4_det_infer.onnx",
        runtime=GPU_RUNTIME,
        inputs=(DET_INPUT,),
        outputs=(DET_OUTPUT,),
        sequence=sequence(),
        buckets=shapes.buckets(sequence()),
        measurements=(
            measured(variants.CPU_VARIANT, 90.0, 80.0),
            measured(variants.CUDA_DEFAULT, 520.0, 8.0, effective_options={"cudnn_conv_algo_search": "EXHAUSTIVE"}),
            measured(heuristic(), 60.0, 8.0),
            measured(algo_default, 110.0, 15.0, log=(fallback,)),
            measured(variants.REPORT, 440.0, 8.0),
        ),
        placement=placement,
    )
    return replace(report, **changes)  # type: ignore[arg-type]


# -- the verdict and the recommendation -------------------------------------------------------------------------


def test_gpu_wins_with_heuristic_and_the_options_come_three_ways() -> None:
    analysis = analyse(gpu_report())
    assert analysis.gpu_wins is True and analysis.best_cuda == "cuda-heuristic"
    # CPU: 24*90 + 24*80 ms = 4.08 s; HEURISTIC: 24*60 + 24*8 = 1.632 s
    assert analysis.speedup == pytest.approx(4.08 / 1.632, rel=1e-3)
    assert "the GPU wins" in analysis.verdict and "slower than the CPU" in analysis.verdict  # the defaults lose
    rec = analysis.recommendation
    assert rec is not None and rec.provider == "CUDAExecutionProvider"
    assert rec.provider_options == {"cudnn_conv_algo_search": "HEURISTIC"}
    assert """("CUDAExecutionProvider", {'cudnn_conv_algo_search': 'HEURISTIC'})""" in rec.python
    compile(rec.python, "python", "exec")
    compile(rec.rapidocr.split("use_cuda: true", 1)[1], "rapidocr", "exec")  # the patch after the YAML
    assert "Det:\n    use_cuda: true" in rec.rapidocr
    assert "OrtInferSession._get_ep_list = _tuned_ep_list" in rec.rapidocr
    assert "TUNED = {'cudnn_conv_algo_search': 'HEURISTIC'}" in rec.rapidocr


def test_explanations_quote_the_measurements() -> None:
    explained = {e.code: e for e in analyse(gpu_report()).explanations}
    search = explained["per-shape-search"]
    assert any("(EXHAUSTIVE): a new shape's first run costs 512 ms more" in line for line in search.evidence)
    assert "CUDA, cudnn_conv_algo_search DEFAULT: 1 Conv nodes ran in fallback mode, 60 times each" in (
        explained["conv-fallback"].evidence
    )
    placement = explained["nodes-on-cpu"].evidence
    assert (
        placement[0].startswith("2 of 120 nodes ran on the CPU inside the CUDA session") and "2 Shape" in placement[0]
    )
    assert "1 MemcpyToHost" in placement[1] and "2 MemcpyFromHost" in placement[1]


def test_every_node_on_the_gpu_is_said_so() -> None:
    report = gpu_report()
    assert report.placement is not None
    groups = tuple(g for g in report.placement.groups if g.provider != "CPUExecutionProvider")
    explained = {
        e.code for e in analyse(replace(report, placement=replace(report.placement, groups=groups))).explanations
    }
    assert "placement-ok" in explained and "nodes-on-cpu" not in explained


def test_transfer_bound_from_io_binding_times() -> None:
    base = heuristic()
    bound = variants.apply_change(base, next(c for c in variants.CHANGES if c.name == "io-binding"))
    n = 24
    copies = measured(bound, 60.0, 8.0, copy_in_ms=((4.0,) * n,), compute_ms=((2.0,) * n,), copy_out_ms=((2.0,) * n,))
    report = gpu_report()
    explained = {e.code: e for e in analyse(replace(report, measurements=(*report.measurements, copies))).explanations}
    assert "transfer-bound" in explained
    assert (
        "inputs to the GPU 96.0 ms, compute 48.0 ms, outputs back 48.0 ms (75% copies)"
        in explained["transfer-bound"].evidence[0]
    )


def test_a_model_too_small_for_the_gpu() -> None:
    report = gpu_report(
        measurements=(
            measured(variants.CPU_VARIANT, 1.2, 0.8),
            measured(variants.CUDA_DEFAULT, 3.0, 1.1),
        )
    )
    analysis = analyse(report)
    assert analysis.gpu_wins is False and "the GPU does not win" in analysis.verdict
    assert "too-small-for-gpu" in {e.code for e in analysis.explanations}
    assert analysis.recommendation is not None and analysis.recommendation.provider == "CPUExecutionProvider"
    found = tune_findings(analysis, "tiny.onnx")
    assert found[0].code == "gpu-slower-than-cpu" and "CPUExecutionProvider" in found[0].fix


def test_doctor_findings_when_only_the_defaults_lose() -> None:
    found = {f.code: f for f in tune_findings(analyse(gpu_report()), "det.onnx")}
    slower = found["gpu-slower-than-cpu"]
    assert slower.severity == "warning" and "HEURISTIC" in slower.fix
    assert found["nodes-on-cpu"].severity == "info"


# -- the recorded CPU run ---------------------------------------------------------------------------------------


def test_recorded_cpu_run_round_trips_and_says_no_gpu_verdict() -> None:
    report = recorded()
    assert TuneReport.from_dict(report.to_dict()) == report
    analysis = analyse(report)
    assert analysis.gpu_wins is None and analysis.verdict.startswith("no GPU verdict: CUDAExecutionProvider is not")
    statuses = {row.name: row.status for row in analysis.rows}
    assert statuses["cpu"] == "ok" and statuses["cuda-default"] == "unavailable"
    assert {s for name, s in statuses.items() if name not in ("cpu", "cuda-default")} == {"skipped"}
    assert analysis.recommendation is not None and analysis.recommendation.provider == "CPUExecutionProvider"
    assert tune_findings(analysis, "cls.onnx") == []


# -- what is measured next --------------------------------------------------------------------------------------


def with_pad_one(report: TuneReport) -> TuneReport:
    """The per-shape and padded-to-one-shape variants measured (as slower than HEURISTIC: the changes still build
    on it)."""
    fast = variants.fast_search(report)
    early = (
        *(variants.apply_change(fast, change) for change in variants.PER_SHAPE),
        variants.PAD_ONE,
        variants.PAD_ONE_GRAPH,
        variants.PAD_ONE_HEURISTIC,
        variants.PAD_ONE_HEURISTIC_EDGE,
        variants.PAD_ONE_HEURISTIC_GRAPH,
        variants.CPU_PAD_ONE,
        variants.apply_change(fast, variants.SHARED_ARENA),
    )
    extra = [measured(v, 700.0, 30.0) for v in early]
    return replace(report, measurements=(*report.measurements, *extra))


def test_changes_build_on_the_best_algorithm_and_state_per_shape_comes_early() -> None:
    report = gpu_report(one_shape=shapes.one_shape(sequence()))
    item = variants.next_variant(report)
    assert isinstance(item, Variant) and item.name == "cuda-heuristic+graphs" and item.per_shape == "graphs"
    assert item.provider_options == {ALGO: "HEURISTIC"}
    report = with_pad_one(report)
    item = variants.next_variant(report)
    assert isinstance(item, Variant) and item.name == "cuda-heuristic+pad" and item.padded
    names = [p.name if isinstance(p, Variant) else p[0].name for p in variants.planned(report)]
    assert names.count("cuda-heuristic+graphs") == 2  # early, and as a change of the base: measured once


def test_the_changes_that_helped_are_combined() -> None:
    report = with_pad_one(gpu_report())
    base = heuristic()
    extra = []
    for change in variants.CHANGES:
        variant = variants.apply_change(base, change)
        why = variants.applicable(change, report, base)
        if why is not None:
            extra.append(Measurement(variant, "skipped", why))
        elif change.name in ("pad", "nhwc"):
            extra.append(measured(variant, 30.0, 7.0))  # helps
        else:
            extra.append(measured(variant, 60.0, 8.0))  # the same as the base
    report = replace(report, measurements=(*report.measurements, *extra))
    combined = variants.next_variant(report)
    assert isinstance(combined, Variant) and combined.name == "cuda-heuristic+best"
    assert combined.padded and combined.provider_options["prefer_nhwc"] == "1"


# -- shapes -----------------------------------------------------------------------------------------------------


def test_default_sequence_for_a_detector_is_24_image_sizes() -> None:
    runs, notes = shapes.default_sequence((DET_INPUT,), (DET_OUTPUT,))
    sizes = [feed["x"] for feed in runs]
    assert len(set(sizes)) == 24 and all(d[:2] == (1, 3) for d in sizes)
    assert all(480 <= side <= 1600 and side % 32 == 0 for d in sizes for side in d[2:])
    assert "image sides, multiples of 32 from 480 to 1600" in notes[0]
    padded = shapes.buckets(runs)
    assert 1 < shapes.distinct(padded) <= 9
    assert all(p >= s for feed, pad in zip(runs, padded, strict=True) for p, s in zip(pad["x"], feed["x"], strict=True))


def test_shape_options_are_checked() -> None:
    with pytest.raises(BadInput, match="is not NAME=DIMS"):
        shapes.parse_shape_options(["1x3x64x64"])
    with pytest.raises(BadInput, match="the model has no input 'y'"):
        shapes.check_sequence(({"y": (1, 3, 64, 64)},), (DET_INPUT,), "--shape")
    with pytest.raises(BadInput, match="dimension 1 of input 'x' is fixed at 3, not 1"):
        shapes.check_sequence(({"x": (1, 1, 64, 64)},), (DET_INPUT,), "--shape")
    with pytest.raises(BadInput, match="is not valid JSON"):
        shapes.parse_shapes_file("[{", "s.json")
    assert shapes.sequence_from_options(shapes.parse_shape_options(["x=1x3x64x64", "x=1,3,96,64"])) == (
        {"x": (1, 3, 64, 64)},
        {"x": (1, 3, 96, 64)},
    )


# -- the shape-switch cost and ONE padded shape: HAND-MADE measurements shaped like the first H100 run ------------
# (docs/gpu/h100-tune-2-det.txt: CPU 78 ms a run; EXHAUSTIVE ~600 ms a run warm or cold; HEURISTIC 98 ms; the cls
# model at one fixed shape: EXHAUSTIVE 2.2 s once, then 2.6 ms.) The switch and padded numbers are a hypothesis
# in numbers, not a recording: what the next H100 run is expected to show if a change of shape is the cost.


def switch(same: float, changed: float, runs: int = 5) -> Switch:
    return Switch(
        ({"x": (1, 3, 1184, 928)}, {"x": (1, 3, 736, 1408)}),
        ((same,) * runs, (same * 1.02,) * runs),
        ((changed,) * 3, (changed + same * 0.02,) * 3),
    )


def h100_shaped() -> TuneReport:
    runs = sequence()
    one = shapes.one_shape(runs)
    assert one is not None
    exhaustive = replace(
        measured(variants.CUDA_DEFAULT, 593.0, 620.0),
        switch=switch(12.0, 612.0),
        effective_options={ALGO: "EXHAUSTIVE"},
    )
    padded_runs = (2200.0,) + (20.0,) * 23  # one search, then one shape
    pad_one = Measurement(
        variants.PAD_ONE,
        "ok",
        create_s=0.4,
        cold_ms=padded_runs,
        new_shape=(True,) + (False,) * 23,
        warm_ms=((20.0,) * 24, (20.4,) * 24, (19.8,) * 24),
    )
    return TuneReport(
        model="/models/ch_PP-OCRv4_det_infer.onnx",
        runtime=GPU_RUNTIME,
        inputs=(DET_INPUT,),
        outputs=(DET_OUTPUT,),
        sequence=runs,
        buckets=shapes.buckets(runs),
        one_shape=one,
        measurements=(
            replace(measured(variants.CPU_VARIANT, 86.0, 78.0), switch=switch(78.0, 78.5)),
            exhaustive,
            replace(measured(heuristic(), 124.0, 98.0), switch=switch(9.0, 99.0)),
            pad_one,
            measured(variants.CPU_PAD_ONE, 160.0, 150.0),
        ),
    )


def test_switch_cost_is_the_median_extra_of_a_run_that_changes_shape() -> None:
    measured_switch = Switch(({"x": (1,)}, {"x": (2,)}), ((10.0, 11.0, 12.0), (20.0, 20.0, 21.0)), ((50.0,), (80.0,)))
    assert measured_switch.same_shape_ms == 15.5  # the median of the shapes' medians, 11 and 20
    assert measured_switch.switch_ms == 49.5  # the median of 50 - 11 and 80 - 20
    assert Switch().switch_ms is None and Switch().same_shape_ms is None


def test_shape_switch_explained_and_padding_to_one_shape_wins_against_the_cpus_best() -> None:
    analysis = analyse(h100_shaped())
    explained = {e.code: e for e in analysis.explanations}
    title = explained["shape-switch"].title
    assert title == (
        "each change of input shape, even to a shape seen before, costs 600 ms with onnxruntime's defaults "
        "(EXHAUSTIVE), where one shape repeated takes 12.1 ms a run; 90 ms under HEURISTIC, the best search mode "
        "without padding, where one shape repeated takes 9.1 ms a run"
    )
    assert any(line.startswith("CPU: one shape repeated 78.8 ms") for line in explained["shape-switch"].evidence)
    assert analysis.summary.startswith(
        "Where the time goes: with onnxruntime's defaults (EXHAUSTIVE) each of the 24 changes of input shape in a "
        "pass costs about 600 ms"
    )
    assert "(EXHAUSTIVE) runs it in 3.14 s; the CPU's best (CPU) takes 3.94 s" in analysis.summary
    assert "With every input padded to one shape (no change of shape, one search)" in analysis.summary
    assert analysis.gpu_wins is True and analysis.best_cuda == "cuda-pad-one" and analysis.best_cpu == "cpu"
    assert "must pad every input to this shape and crop the outputs" in analysis.verdict
    assert "(its outputs were not checked)" in analysis.verdict  # a hand-made measurement: no check
    rec = analysis.recommendation
    assert rec is not None and rec.pad_to == {"x": [[1], [3], [1600], [1568]]}
    assert "crop the outputs back" in rec.python
    rows = {row.name: row for row in analysis.rows}
    assert rows["cuda-default"].switch_ms == 600.0 and rows["cuda-heuristic"].same_shape_ms == 9.09


def test_no_switch_cost_says_so_and_the_cpus_best_is_the_bar() -> None:
    report = h100_shaped()
    calm = tuple(replace(m, switch=switch(12.0, 12.5)) if m.switch else m for m in report.measurements)
    # the CPU padded to one shape faster than unpadded (made up): it becomes the bar, named in the verdict
    cpu_pad = measured(variants.CPU_PAD_ONE, 40.0, 40.0)
    report = replace(report, measurements=(*calm[:-1], cpu_pad))
    analysis = analyse(report)
    codes = [e.code for e in analysis.explanations]
    assert "no-switch-cost" in codes and "shape-switch" not in codes
    assert analysis.best_cpu == "cpu-pad-one"
    assert "the CPU's best (CPU, inputs padded to one shape)" in analysis.verdict
    assert "changes of input shape" not in analysis.summary


def test_fallback_lines_summarised_without_terminal_escapes() -> None:
    lines = tuple(
        LogLine(f"[W:onnxruntime:Default, conv.cc:426 UpdateState] OP Conv(p2o.Conv.{i}) running in Fallback mode. "
                "May be extremely slow.\x1b[m", 96)
        for i in range(57)
    )  # fmt: skip
    algo_default = variants.apply_change(variants.CUDA_DEFAULT, variants.ALGORITHMS[1])
    report = gpu_report(
        measurements=(measured(variants.CPU_VARIANT, 90.0, 80.0), measured(algo_default, 167.0, 149.0, log=lines))
    )
    evidence = {e.code: e for e in analyse(report).explanations}["conv-fallback"].evidence
    assert evidence[0] == "CUDA, cudnn_conv_algo_search DEFAULT: 57 Conv nodes ran in fallback mode, 96 times each"
    assert len(evidence) == 2 and not any("\x1b" in line for line in evidence)
    text = render_tune(report, analyse(report))
    assert "\x1b[m" not in text and text.count("Fallback mode") == 1


def test_informative_variants_first_slow_ones_cut_and_a_cut_default_does_not_block_cuda() -> None:
    runs = sequence()
    report = TuneReport(
        "/m.onnx", GPU_RUNTIME, sequence=runs, buckets=shapes.buckets(runs), one_shape=shapes.one_shape(runs)
    )
    assert variants.cut_after_s(variants.CPU_VARIANT, report) is None
    report = replace(report, measurements=(measured(variants.CPU_VARIANT, 86.0, 78.0),))
    assert variants.cut_after_s(variants.CUDA_DEFAULT, report) == round(2 * (24 * 86.0 + 24 * 78.0) / 1000, 3)
    cut = Measurement(
        variants.CUDA_DEFAULT, "cut-short", "stopped early", cold_ms=(600.0,) * 13, new_shape=(True,) * 13
    )
    report = replace(report, measurements=(*report.measurements, cut))
    order = [v.name for v in variants.planned(report) if isinstance(v, Variant)]
    assert order[:9] == [
        "cpu",
        "cuda-default",
        "cuda-heuristic",
        "cuda-heuristic+graphs",
        "cuda-heuristic+sessions",
        "cuda-pad-one-heuristic",
        "cuda-pad-one-heuristic-edge",
        "cuda-pad-one-heuristic-graph",
        "cpu-pad-one",
    ]
    assert order.index("cuda-report") > order.index("cuda-algo-default")
    assert order.index("cuda-pad-one") > order.index("cuda-report")
    one = replace(report, sequence=(runs[0],) * 24, buckets=(), one_shape=None)
    skipped = {v.name: why for v, why in (p for p in variants.planned(one) if isinstance(p, tuple))}
    assert skipped["cuda-pad-one"] == "the sequence has one shape already"
    assert skipped["cuda-pad-one-heuristic"] == "the sequence has one shape already"


# -- recorded on the H100: docs/gpu/h100-tune-2-det.json ---------------------------------------------------------


def h100_det() -> TuneReport:
    return TuneReport.from_dict(json.loads(H100_DET.read_text())["report"])


def test_h100_summary_names_the_defaults_and_the_best_search_mode_each_with_its_own_label() -> None:
    analysis = analyse(h100_det())
    assert analysis.summary.startswith(
        "Where the time goes: with onnxruntime's defaults (EXHAUSTIVE) each of the 24 changes of input shape in a "
        "pass costs about 549 ms (about 13.2 s a pass)"
    )
    assert (
        "under HEURISTIC, the best search mode without padding (CUDA, cudnn_conv_algo_search HEURISTIC) a change "
        "costs about 55 ms" in analysis.summary
    )
    assert "2891" not in analysis.summary  # prefer_nhwc's switch: evidence only
    explained = {e.code: e for e in analysis.explanations}
    switch = explained["shape-switch"]
    assert "549 ms with onnxruntime's defaults (EXHAUSTIVE)" in switch.title and "2891" not in switch.title
    assert any(
        line.startswith("CUDA, cudnn_conv_algo_search HEURISTIC + prefer_nhwc (HEURISTIC)") and "+2890.6 ms" in line
        for line in switch.evidence
    )


def test_h100_cut_short_variants_are_measured_in_part_not_missing() -> None:
    analysis = analyse(h100_det())
    explained = {e.code: e for e in analysis.explanations}
    assert "cuda-not-measured" not in explained
    cut = explained["cut-short"]
    assert cut.title.startswith("4 variants were stopped early for being far slower than the best")
    assert cut.evidence[0].startswith("CUDA, onnxruntime's defaults: stopped early: its first 16 of 24 runs took 8.4 s")
    text = render_tune(h100_det(), analysis)
    assert "did not run" not in text


def test_h100_copies_at_37_percent_are_not_called_transfer_bound() -> None:
    explained = {e.code: e for e in analyse(h100_det()).explanations}
    assert "transfer-bound" not in explained
    bound = explained["compute-bound"]
    assert bound.title == "the compute takes most of a warm pass (63%); the copies to and from the GPU 37%"
    assert "inputs to the GPU 61.3 ms, compute 141.9 ms, outputs back 20.4 ms (37% copies)" in bound.evidence[0]


def test_h100_first_run_cost_is_a_share_not_said_to_dominate() -> None:
    analysis = analyse(h100_det())
    explained = {e.code: e for e in analysis.explanations}
    assert "per-shape-search" not in explained
    title = explained["per-shape-cost"].title
    assert title.endswith("at most 0.56 s of the 4.05 s total of CUDA, cudnn_conv_algo_search HEURISTIC (14%)")
    assert "dominates" not in render_tune(h100_det(), analysis)


def test_first_run_cost_dominates_only_when_it_is_the_larger_part() -> None:
    search = {e.code: e for e in analyse(gpu_report()).explanations}["per-shape-search"].title
    # made up: the defaults' (EXHAUSTIVE) 24 first runs of 520 ms against steady runs of 8 ms: the larger part
    assert search.endswith(
        "this first-run cost dominates: 12.29 s of the 12.67 s total of CUDA, onnxruntime's defaults (97%)"
    )


# -- the answers: every variant checked against the CPU's outputs (HAND-MADE checks, labelled) -------------------


def agrees_check() -> Check:
    """A check the way the child reports one that agrees (numbers shaped like TF32 noise on a detector map)."""
    out = OutputAgreement(
        "sigmoid_0.tmp_0", "probability map", "|diff| > 0.2 in at most 0.05%", 1_000_000, 120, 0.00012, 0.28, 0.28,
        0.0003, 5, 0.0003, 300, 0, (13, 22, 21, 35), (13, 22, 21, 35), None, True,
    )  # fmt: skip
    return Check("compared", None, 24, True, (out,))


def changes_check() -> Check:
    """A check that found padding's change: 0.36 % of the map past the step, 35 regions become 47 on run 4."""
    out = OutputAgreement(
        "sigmoid_0.tmp_0", "probability map", "|diff| > 0.2 in at most 0.05%", 1_000_000, 3600, 0.0036, 1.0, 1.0,
        0.002, 4, 0.009, 9000, 0, (13, 22, 21, 35), (13, 22, 21, 47), None, False,
    )  # fmt: skip
    return Check("compared", None, 24, False, (out,))


def answers_report(graphs_first_ms: float = 95.0) -> TuneReport:
    """CPU 86/78 ms a run; HEURISTIC 124/98 (a change of shape each run); a CUDA graph per shape: `graphs_first_ms`
    for a new shape, then 6 ms a replay, with the CPU's answers; padded to one shape: fastest, and it changes them."""
    base = h100_shaped()
    reference = Check("reference", None, 24, True, ())
    graphs = variants.apply_change(heuristic(), variants.GRAPH_PER_SHAPE)
    memory = Memory(states=24, gpu_created_mb=40.0, gpu_mb=900.0, rss_mb=350.0)
    padded = Measurement(
        variants.PAD_ONE_HEURISTIC,
        "ok",
        create_s=0.4,
        cold_ms=(560.0,) + (17.0,) * 23,
        new_shape=(True,) + (False,) * 23,
        warm_ms=((16.5,) * 24, (16.6,) * 24, (16.4,) * 24),
        check=changes_check(),
    )
    measurements = (
        replace(base.measurements[0], check=reference),
        replace(base.measurements[1], check=agrees_check()),
        replace(base.measurements[2], check=agrees_check()),
        replace(measured(graphs, graphs_first_ms, 6.0), check=agrees_check(), memory=memory),
        padded,
    )
    return replace(base, measurements=measurements)


def test_a_faster_variant_that_changes_the_results_is_never_the_silent_recommendation() -> None:
    analysis = analyse(answers_report())
    assert analysis.best_cuda == "cuda-heuristic+graphs" and analysis.fastest_cuda == "cuda-pad-one-heuristic"
    assert analysis.gpu_wins is True and "with the CPU's answers" in analysis.verdict
    assert (
        "The fastest GPU variant, CUDA, inputs padded to one shape (HEURISTIC), runs it in 1.35 s, 2.92x the CPU, "
        "but changes the results: 0.360% of sigmoid_0.tmp_0 past tolerance, max |diff| 1, text regions 35 -> 47 on "
        "run 4" in analysis.verdict
    )
    assert "--allow-output-change recommends it" in analysis.verdict
    rec = analysis.recommendation
    assert rec is not None and rec.variant == "cuda-heuristic+graphs" and rec.changes_results is None
    rows = {row.name: row for row in analysis.rows}
    assert rows["cpu"].answers == "reference" and rows["cuda-heuristic+graphs"].answers == "agrees"
    assert rows["cuda-pad-one-heuristic"].agrees is False and rows["cuda-pad-one-heuristic"].answers == "CHANGES 0.36%"
    assert rows["cuda-heuristic+graphs"].gpu_mb == 900.0 and rows["cuda-heuristic+graphs"].states == 24
    explained = {e.code: e for e in analysis.explanations}
    assert explained["changes-results"].evidence[0].startswith("CUDA, inputs padded to one shape (HEURISTIC): 0.360%")
    assert "24 CUDA graphs: GPU 900 MiB (38 MiB each)" in explained["per-shape-memory"].evidence[0]
    data = TuneResult(answers_report(), analysis).data()
    assert all("agrees" in row for row in data["analysis"]["rows"])  # the JSON carries every row's agreement
    assert "class GraphPerShape" in data["analysis"]["recommendation"]["helper_source"]
    found = {f.code: f for f in tune_findings(analysis, "det.onnx")}
    changed = found["fastest-gpu-changes-results"]
    assert changed.severity == "info" and "text regions 35 -> 47" in changed.evidence[0]
    assert "gpu-slower-than-cpu" in found  # with onnxruntime's defaults


def test_the_user_may_ask_for_the_fastest_and_is_told_what_it_changes() -> None:
    analysis = analyse(answers_report(), allow_output_change=True)
    rec = analysis.recommendation
    assert rec is not None and rec.variant == "cuda-pad-one-heuristic"
    assert rec.changes_results is not None and "text regions 35 -> 47" in rec.changes_results
    assert rec.python.startswith("# CHANGES THE RESULTS (recommended with --allow-output-change)")
    text = render_tune(answers_report(), analysis)
    assert "it CHANGES THE RESULTS (--allow-output-change)" in text


def test_the_per_shape_helper_is_what_the_user_pastes() -> None:
    rec = analyse(answers_report()).recommendation
    assert rec is not None and rec.helper == "GraphPerShape" and rec.per_shape == "graphs"
    assert "session = GraphPerShape('ch_PP-OCRv4_det_infer.onnx', providers, options)" in rec.python
    assert "from shape_sessions import GraphPerShape" in rec.python
    compile(rec.python, "python", "exec")
    yaml, code = rec.rapidocr.split("use_cuda: false", 1)
    assert (
        yaml.endswith("Det:\n    ")
        and "engine.text_det.infer.session = GraphPerShape(model, providers, options)" in code
    )
    compile(code.split("\n", 1)[1], "rapidocr", "exec")
    helper = standalone.path(recommend.HELPER_FILE).read_text(encoding="utf-8")
    assert "class GraphPerShape" in helper and "class SessionPerShape" in helper
    text = render_tune(answers_report(), analyse(answers_report()))
    assert f"cp {standalone.path(recommend.HELPER_FILE)} ." in text


def test_no_variant_both_wins_and_agrees_says_so_with_the_fastest_beside_it() -> None:
    analysis = analyse(answers_report(graphs_first_ms=180.0))  # made up: new shapes cost more, replays still 6 ms
    assert analysis.gpu_wins is False and analysis.best_cuda == "cuda-heuristic+graphs"
    assert analysis.verdict.startswith("the GPU does not win: its best that keeps the answers, CUDA, ")
    # CPU 2.06 + 1.87 s; graphs 4.32 + 0.144 s: from pass 3 on, 4.32 + 2 x 0.144 < 2.06 + 2 x 1.87
    assert analysis.passes_to_win == 3 and "beats the CPU from pass 3 on" in analysis.verdict
    assert "The fastest GPU variant, CUDA, inputs padded to one shape (HEURISTIC)" in analysis.verdict
    assert analysis.recommendation is not None and analysis.recommendation.provider == "CPUExecutionProvider"
    codes = [f.code for f in tune_findings(analysis, "det.onnx")]
    assert codes[:2] == ["gpu-slower-than-cpu", "fastest-gpu-changes-results"]


def test_cuda_that_fell_back_says_what_onnxruntime_logged_and_points_to_doctor() -> None:
    logged = LogLine(
        "[E:onnxruntime:Default, provider_bridge_ort.cc:2251 TryGetProviderInfo_CUDA] Failed to load library "
        "libonnxruntime_providers_cuda.so with error: libcublasLt.so.13: cannot open shared object file"
    )
    fell = Measurement(variants.CUDA_DEFAULT, "fell-back", "asked for CUDAExecutionProvider first, the session runs "
                       "on ['CPUExecutionProvider']", log=(logged,))  # fmt: skip
    report = gpu_report(measurements=(measured(variants.CPU_VARIANT, 90.0, 80.0), fell))
    explained = {e.code: e for e in analyse(report).explanations}["cuda-not-measured"]
    assert explained.title == "CUDA did not run: fell-back"
    assert any("libcublasLt.so.13: cannot open shared object file" in line for line in explained.evidence)
    assert explained.evidence[-1] == "`ortprov doctor --python /venv/bin/python` names the missing piece and its fix"


def test_a_report_with_checks_and_memory_round_trips() -> None:
    report = answers_report()
    assert TuneReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


# -- what stops a tune: onnxruntime's own messages (copied from onnxruntime 1.32.0 on this machine) --------------

IR_TOO_NEW = (
    "Fail: [ONNXRuntimeError] : 1 : FAIL : Load model from ir99.onnx failed:/onnxruntime_src/onnxruntime/core/graph/"
    "model.cc:256 onnxruntime::Model::Model(...) Unsupported model IR version: 99, max supported IR version: 14"
)
OPSET_TOO_NEW = (
    "Fail: [ONNXRuntimeError] : 1 : FAIL : Load model from opset99.onnx failed:/onnxruntime_src/onnxruntime/core/"
    "graph/model_load_utils.h:46 void onnxruntime::model_load_utils::ValidateOpsetForDomain(...) ONNX Runtime only "
    "*guarantees* support for models stamped with official released onnx opset versions. Opset 99 is under "
    "development and support for this is limited. The operator schemas and or other functionality may change "
    "before next ONNX release and in this case ONNX Runtime will not guarantee backward compatibility. Current "
    "official support for domain ai.onnx is till opset 28."
)


def test_a_model_too_new_for_the_targets_onnxruntime_says_which_version() -> None:
    runtime = Runtime("/venv/bin/python", "3.12.3", "1.32.0")
    ir = preflight.model_problem("ir99.onnx", IR_TOO_NEW, runtime)
    assert ir.message == "ir99.onnx has ONNX IR version 99; onnxruntime 1.32.0 reads up to IR version 14"
    assert ir.hint is not None and "ortprov plan --python /venv/bin/python" in ir.hint
    opset = preflight.model_problem("m.onnx", OPSET_TOO_NEW, runtime)
    assert opset.message == "m.onnx uses opset 99 of ai.onnx; onnxruntime 1.32.0 supports up to opset 28"
    garbage = preflight.model_problem("x.onnx", "INVALID_PROTOBUF : Load model from x.onnx failed:Protobuf "
                                      "parsing failed.", runtime)  # fmt: skip
    assert garbage.message == "x.onnx is not an ONNX model (onnxruntime 1.32.0 cannot parse it)"


def test_a_target_without_onnxruntime_or_numpy_is_told_what_to_install() -> None:
    missing = Runtime("/v/bin/python", "3.12.3", error="ModuleNotFoundError: No module named 'onnxruntime'",
                      missing="onnxruntime")  # fmt: skip
    problem = preflight.runtime_problem(missing)
    assert isinstance(problem, preflight.TargetCannotRun) and problem.exit_code == 2
    assert problem.message == "onnxruntime is not installed in the target Python /v/bin/python"
    assert problem.hint is not None and problem.hint.startswith("`ortprov apply --python /v/bin/python`")
    numpy = replace(missing, error="ModuleNotFoundError: No module named 'numpy'", missing="numpy")
    assert "numpy is not installed" in str(preflight.runtime_problem(numpy))
    assert preflight.runtime_problem(Runtime("/v/bin/python", "3.12.3", "1.32.0")) is None
