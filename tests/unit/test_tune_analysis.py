"""The tune's reasoning on measurements: a recorded CPU run (tests/data/tune/cls-cpu-recorded.json, a real run on
this GPU-less machine) and HAND-MADE GPU-shaped measurements (labelled as such below: no GPU here; their numbers
follow the shape of issue 12's H100 table, not a recording)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from provisioner.errors import BadInput
from provisioner.render.tune import render_tune
from provisioner.tune import shapes, variants
from provisioner.tune.analysis import analyse
from provisioner.tune.findings import tune_findings
from provisioner.tune.report import (
    LogLine,
    Measurement,
    NodeGroup,
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
    """The padded-to-one-shape variants measured (as slower than HEURISTIC: the changes still build on it)."""
    padded = (
        variants.PAD_ONE,
        variants.PAD_ONE_GRAPH,
        variants.PAD_ONE_HEURISTIC,
        variants.PAD_ONE_HEURISTIC_GRAPH,
        variants.CPU_PAD_ONE,
    )
    extra = [measured(v, 700.0, 30.0) for v in padded]
    return replace(report, measurements=(*report.measurements, *extra))


def test_changes_build_on_the_best_algorithm_and_cuda_graphs_need_one_shape() -> None:
    report = with_pad_one(gpu_report(one_shape=shapes.one_shape(sequence())))
    item = variants.next_variant(report)
    assert isinstance(item, Variant) and item.name == "cuda-heuristic+pad" and item.padded
    planned = variants.planned(report)
    graph = next(p for p in planned if isinstance(p, tuple) and p[0].name.endswith("cuda-graph"))
    assert "one fixed input shape; this sequence has 24" in graph[1]


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
    assert analysis.gpu_wins is True and analysis.best_cuda == "cuda-pad-one" and analysis.best_cpu == "cpu"
    assert "must zero-pad every input to this shape and crop the outputs" in analysis.verdict
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
    assert order[:8] == [
        "cpu",
        "cuda-default",
        "cuda-heuristic",
        "cuda-pad-one",
        "cuda-pad-one-graph",
        "cuda-pad-one-heuristic",
        "cuda-pad-one-heuristic-graph",
        "cpu-pad-one",
    ]
    assert order.index("cuda-report") > order.index("cuda-algo-default")
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
