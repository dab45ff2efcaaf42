"""The tune child's parts, in this process with numpy and the CPU onnxruntime: the inputs it makes (text pages and
lines, numpy only), the comparison with the reference (regions, kinds, tolerances), and the per-shape helper."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from provisioner.standalone import shape_sessions, tune_compare, tune_inputs

if TYPE_CHECKING:
    from pathlib import Path

# -- the inputs ---------------------------------------------------------------------------------------------------


def test_a_page_is_dark_lines_on_light_paper_and_the_same_every_time() -> None:
    page = tune_inputs.make_page(np, 960, 640, seed=3)
    assert page.shape == (960, 640) and page.dtype == np.float32
    assert np.array_equal(page, tune_inputs.make_page(np, 960, 640, seed=3))
    assert not np.array_equal(page, tune_inputs.make_page(np, 960, 640, seed=4))
    assert page.min() >= 0.0 and page.max() <= 255.0
    ink = (page < 128).mean()
    assert np.median(page) > 200 and 0.01 < ink < 0.25  # mostly paper, some text
    rows_with_ink = (page < 128).any(axis=1)
    assert 0.1 < rows_with_ink.mean() < 0.9  # lines of text with gaps between them


def test_a_line_is_48_pixels_of_text_across_the_width() -> None:
    line = tune_inputs.make_line(np, 48, 640, seed=1)
    columns = (line < 128).any(axis=0)
    assert line.shape == (48, 640) and columns[:300].any() and columns[-300:].any()
    assert not (line[:6] < 128).any() and not (line[-6:] < 128).any()  # margins above and below the glyphs


@pytest.mark.parametrize(("dims", "axes"), [([1, 3, 64, 96], (2, 3, 1)), ([2, 64, 96, 3], (1, 2, 3))])
def test_inputs_follow_the_layout_and_rapidocrs_normalisation(dims: list[int], axes: tuple[int, int, int]) -> None:
    array = tune_inputs.make_array(np, "page", "tensor(float)", dims, seed=0)
    assert list(array.shape) == dims and array.dtype == np.float32
    assert tune_inputs.image_axes(dims) == axes
    assert array.min() >= -1.0 and array.max() <= 1.0 and np.median(array) > 0.6  # paper near +1
    tokens = tune_inputs.make_array(np, "random", "tensor(int64)", [1, 16], seed=0)
    assert tokens.dtype == np.int64 and tokens.max() < 10
    with pytest.raises(ValueError, match="cannot generate"):
        tune_inputs.make_array(np, "random", "tensor(string)", [1], seed=0)


def test_padding_with_zeros_or_the_edge() -> None:
    array = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    zero = tune_inputs.pad(np, array, [1, 3, 4])
    edge = tune_inputs.pad(np, array, [1, 3, 4], "edge")
    assert zero.shape == edge.shape == (1, 3, 4) and np.array_equal(zero[:, :2, :3], array)
    assert zero[0, 2].tolist() == [0, 0, 0, 0] and edge[0, 2].tolist() == [3, 4, 5, 5]
    assert tune_inputs.pad(np, array, [1, 2, 3]) is array


def test_the_users_files(tmp_path: Path) -> None:
    specs = [{"name": "x", "type": "tensor(float)", "shape": ["n", 3, "h", "w"]}]
    np.save(tmp_path / "a.npy", np.zeros((1, 3, 32, 64), np.float32))
    np.savez(tmp_path / "b.npz", x=np.zeros((1, 3, 64, 32), np.float32))
    np.save(tmp_path / "c.npy", np.zeros((1, 3, 32), np.float32))
    np.save(tmp_path / "d.npy", np.zeros((1, 3, 32, 32), np.int64))
    (tmp_path / "notes.txt").write_text("not an input")
    assert tune_inputs.list_folder(str(tmp_path)) == ["a.npy", "b.npz", "c.npy", "d.npy"]
    assert tune_inputs.load_file(np, str(tmp_path / "b.npz"), "page", specs)["x"].shape == (1, 3, 64, 32)
    with pytest.raises(ValueError, match="has 3 dimensions, input 'x' has 4"):
        tune_inputs.load_file(np, str(tmp_path / "c.npy"), "page", specs)
    with pytest.raises(ValueError, match="holds int64 values, input 'x' takes float32"):
        tune_inputs.load_file(np, str(tmp_path / "d.npy"), "page", specs)
    two = [*specs, {"name": "y", "type": "tensor(float)", "shape": [1]}]
    with pytest.raises(ValueError, match="give a .npz with one array per input"):
        tune_inputs.load_file(np, str(tmp_path / "a.npy"), "page", two)
    with pytest.raises(ValueError, match="holds no array for input y"):
        tune_inputs.load_file(np, str(tmp_path / "b.npz"), "page", two)


NEVER_SAID = ("unsafe", "allow_pickle", "pickle.load", "trust")  # NumPy's advice for pickled data


@given(data=st.binary(max_size=300), start=st.sampled_from([b"", b"\x93NUMPY", b"\x93NUMPY\x01\x00", b"PK\x03\x04"]))
@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
def test_any_bytes_as_an_array_file_are_refused_in_our_words(tmp_path: Path, data: bytes, start: bytes) -> None:
    """Issue 37: a random-bytes .npy got NumPy's advice to "load it unsafely"; no file may pass that on."""
    specs = [{"name": "x", "type": "tensor(float)", "shape": ["n"]}]
    for suffix in (".npy", ".npz"):
        path = tmp_path / f"random{suffix}"
        path.write_bytes(start + data)
        try:
            tune_inputs.load_file(np, str(path), "random", specs)
        except ValueError as exc:
            assert not any(word in str(exc) for word in NEVER_SAID), str(exc)


def test_pickled_objects_are_named_as_such_and_never_loaded(tmp_path: Path) -> None:
    specs = [{"name": "x", "type": "tensor(float)", "shape": ["n"]}]
    np.save(tmp_path / "o.npy", np.array([object()], dtype=object))
    np.savez(tmp_path / "o.npz", x=np.array([object()], dtype=object))
    for name in ("o.npy", "o.npz"):
        with pytest.raises(ValueError, match=r"holds Python objects \(pickled\), not numbers") as caught:
            tune_inputs.load_file(np, str(tmp_path / name), "random", specs)
        assert not any(word in str(caught.value) for word in NEVER_SAID)
    (tmp_path / "text.npy").write_text("1,2,3\n")
    with pytest.raises(ValueError, match="is not a .npy array file: it does not start as one"):
        tune_inputs.load_file(np, str(tmp_path / "text.npy"), "random", specs)


def test_rapidocrs_detector_size() -> None:
    assert tune_inputs.det_size(600, 800) == (736, 992)  # the short side raised to 736, multiples of 32
    assert tune_inputs.det_size(3000, 1500) == (1984, 992)  # the long side capped at 2000 first (round half even)
    assert tune_inputs.det_size(1000, 1000) == (992, 992)


# -- the comparison ------------------------------------------------------------------------------------------------


def flood_count(mask: np.ndarray) -> int:
    """Connected groups of True, 8 neighbours, by flood fill: the slow, obvious way."""
    seen = np.zeros_like(mask, dtype=bool)
    count = 0
    for y, x in zip(*np.nonzero(mask), strict=True):
        if seen[y, x]:
            continue
        count += 1
        stack = [(y, x)]
        seen[y, x] = True
        while stack:
            a, b = stack.pop()
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    c, d = a + dy, b + dx
                    if 0 <= c < mask.shape[0] and 0 <= d < mask.shape[1] and mask[c, d] and not seen[c, d]:
                        seen[c, d] = True
                        stack.append((c, d))
    return count


@pytest.mark.parametrize("density", [0.05, 0.3, 0.55])
def test_regions_are_counted_as_a_flood_fill_counts_them(density: float) -> None:
    rng = np.random.RandomState(7)
    for _ in range(20):
        mask = rng.random_sample((23, 31)) < density
        assert tune_compare.count_regions(np, mask) == flood_count(mask)
    diagonal = np.eye(5, dtype=bool)
    assert tune_compare.count_regions(np, diagonal) == 1 and tune_compare.count_regions(np, ~np.ones((3, 3), bool)) == 0


def test_the_kind_of_an_output_comes_from_its_values() -> None:
    rng = np.random.RandomState(0)
    logits = rng.normal(size=(1, 5, 10)).astype(np.float32)
    softmax = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    assert tune_compare.kind_of(np, softmax) == "class probabilities"
    assert tune_compare.kind_of(np, 1 / (1 + np.exp(-logits[None]))) == "probability map"
    assert tune_compare.kind_of(np, logits) == "values"


def map_with_regions() -> np.ndarray:
    """A detector-like map: 0.02 background, four text regions at 0.9 with soft edges."""
    out = np.full((1, 1, 120, 160), 0.02, dtype=np.float32)
    for top, left in ((10, 10), (10, 90), (60, 10), (60, 90)):
        out[0, 0, top : top + 20, left : left + 60] = 0.9
        out[0, 0, top - 1, left : left + 60] = 0.4
    return out


def test_noise_like_tf32_agrees_and_a_change_of_what_is_found_does_not() -> None:
    reference = map_with_regions()
    rng = np.random.RandomState(1)
    noisy = np.clip(reference + rng.normal(0, 0.003, reference.shape).astype(np.float32), 0, 1)
    quiet = tune_compare.Comparison(["map"])
    quiet.add(np, 0, [reference], [noisy])
    summary = quiet.summary()
    assert summary["agrees"] and summary["outputs"][0]["kind"] == "probability map"
    assert summary["outputs"][0]["regions_reference"] == [4] == summary["outputs"][0]["regions"]
    merged = reference.copy()
    merged[0, 0, 10:30, 70:90] = 0.9  # two regions become one: 1.7 % of the map moves by 0.88
    changed = tune_compare.Comparison(["map"])
    changed.add(np, 0, [reference], [merged])
    out = changed.summary()["outputs"][0]
    assert not out["agrees"] and out["regions"] == [3] and out["worst_run"] == 1
    assert out["share_past"] == pytest.approx(400 / reference.size)


def test_a_padded_output_is_compared_in_the_part_that_maps_back_to_the_input() -> None:
    reference = map_with_regions()
    padded = np.zeros((1, 1, 160, 192), dtype=np.float32)
    padded[:, :, :120, :160] = reference
    check = tune_compare.Comparison(["map"])
    check.add(np, 0, [reference], [padded])
    assert check.summary()["agrees"]
    small = tune_compare.Comparison(["map"])
    small.add(np, 2, [reference], [reference[:, :, :100]])
    out = small.summary()["outputs"][0]
    assert not out["agrees"] and out["not_comparable"].startswith("run 3: output shape [1, 1, 100, 160] is smaller")


def test_a_class_the_reference_was_sure_of_may_not_change() -> None:
    reference = np.full((1, 40, 3), 0.05, dtype=np.float32)
    reference[0, :, 0] = 0.9
    flipped = reference.copy()
    flipped[0, 7] = (0.05, 0.9, 0.05)
    check = tune_compare.Comparison(["probs"])
    check.add(np, 0, [reference], [flipped])
    out = check.summary()["outputs"][0]
    assert out["kind"] == "class probabilities" and out["flips"] == 1 and out["sure"] == 40 and not out["agrees"]


def test_values_are_judged_relative_to_their_scale() -> None:
    rng = np.random.RandomState(2)
    reference = (rng.normal(size=(4, 1000)) * 50).astype(np.float32)
    check = tune_compare.Comparison(["logits"])
    check.add(np, 0, [reference], [reference * 1.005])  # 0.5 %: within TF32's reach
    assert check.summary()["agrees"]
    check = tune_compare.Comparison(["logits"])
    check.add(np, 0, [reference], [reference + 5.0])
    assert not check.summary()["agrees"]


def test_the_reference_waits_on_disk_one_input_at_a_time(tmp_path: Path) -> None:
    outputs = [np.ones((2, 3), np.float32), np.zeros((4,), np.int64)]
    tune_compare.save_reference(np, str(tmp_path), 5, outputs)
    loaded = tune_compare.load_reference(np, str(tmp_path), 5, 2)
    assert loaded is not None and all(np.array_equal(a, b) for a, b in zip(loaded, outputs, strict=True))
    assert isinstance(loaded[0], np.memmap)  # read memory-mapped, not held
    assert tune_compare.load_reference(np, str(tmp_path), 6, 2) is None


# -- the per-shape helper ------------------------------------------------------------------------------------------


def conv_model(path: Path) -> str:
    weights = numpy_helper.from_array(np.random.RandomState(0).randn(2, 3, 3, 3).astype(np.float32), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, "h", "w"])
    graph = helper.make_graph([node], "conv", [x], [y], [weights])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return str(path)


def test_a_session_per_shape_gives_the_sessions_answers(tmp_path: Path) -> None:
    model = conv_model(tmp_path / "conv.onnx")
    plain = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    per_shape = shape_sessions.SessionPerShape(model, ["CPUExecutionProvider"], max_shapes=2)
    feeds = [{"x": np.random.RandomState(i).randn(1, 3, 8 + i, 9).astype(np.float32)} for i in range(3)]
    for feed in feeds + feeds:
        assert np.array_equal(per_shape.run(None, feed)[0], plain.run(None, feed)[0])
    assert len(per_shape.sessions) == 2  # the third shape ran on the first session (max_shapes)
    assert per_shape.get_inputs()[0].name == "x" and per_shape.get_providers() == ["CPUExecutionProvider"]


# -- a CUDA graph per shape, against a FAKE of the one thing this machine lacks: device memory and graph capture ---


class FakeValue:
    """An OrtValue in "device" memory: a numpy buffer with a fixed identity (its address)."""

    def __init__(self, shape: tuple[int, ...], dtype: object) -> None:
        self.data = np.zeros(shape, dtype=dtype)

    def update_inplace(self, array: np.ndarray) -> None:
        assert array.shape == self.data.shape and array.flags["C_CONTIGUOUS"]
        self.data[...] = array

    def numpy(self) -> np.ndarray:
        return self.data.copy()


class FakeBinding:
    def __init__(self) -> None:
        self.inputs: dict[str, object] = {}
        self.outputs: dict[str, FakeValue | None] = {}

    def bind_cpu_input(self, name: str, array: np.ndarray) -> None:
        self.inputs[name] = array

    def bind_ortvalue_input(self, name: str, value: FakeValue) -> None:
        self.inputs[name] = value

    def bind_output(self, name: str, device: str, device_id: int) -> None:
        assert device == "cuda"
        self.outputs[name] = None  # onnxruntime allocates it

    def bind_ortvalue_output(self, name: str, value: FakeValue) -> None:
        self.outputs[name] = value

    def get_outputs(self) -> list[FakeValue | None]:
        return list(self.outputs.values())


class FakeGraphSession:
    """onnxruntime's side of CUDA graphs, computed by a real CPU session: gpu_graph_id -1 runs plainly; a new id
    warms up and captures the bound buffers; a captured id must be replayed with the very same buffers."""

    def __init__(self, model: str, sess_options: object = None, providers: object = None) -> None:
        assert dict(providers[0][1])["enable_cuda_graph"] == "1"  # type: ignore[index]
        self.cpu = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        self.captured: dict[str, tuple[dict[str, object], dict[str, object]]] = {}
        self.log: list[str] = []

    def get_outputs(self) -> list[object]:
        return self.cpu.get_outputs()

    def get_providers(self) -> list[str]:
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]

    def io_binding(self) -> FakeBinding:
        return FakeBinding()

    def run_with_iobinding(self, binding: FakeBinding, options: FakeRunOptions) -> None:
        graph = options.entries["gpu_graph_id"]
        feed = {k: v.data if isinstance(v, FakeValue) else v for k, v in binding.inputs.items()}
        results = self.cpu.run(None, feed)
        if graph != "-1" and graph not in self.captured:
            assert all(isinstance(v, FakeValue) for v in [*binding.inputs.values(), *binding.outputs.values()])
            self.captured[graph] = (dict(binding.inputs), dict(binding.outputs))
            self.log.append(f"capture {graph}")
        elif graph != "-1":
            inputs, outputs = self.captured[graph]
            assert all(binding.inputs[k] is v for k, v in inputs.items()), "replay with other input buffers"
            assert all(binding.outputs[k] is v for k, v in outputs.items()), "replay with other output buffers"
            self.log.append(f"replay {graph}")
        else:
            self.log.append("plain")
        for (name, bound), result in zip(binding.outputs.items(), results, strict=True):
            if bound is None:
                bound = binding.outputs[name] = FakeValue(result.shape, result.dtype)
            bound.data[...] = result


class FakeRunOptions:
    def __init__(self) -> None:
        self.entries: dict[str, str] = {}

    def add_run_config_entry(self, key: str, value: str) -> None:
        self.entries[key] = value


class FakeOrt:
    InferenceSession = FakeGraphSession
    RunOptions = FakeRunOptions
    SessionOptions = ort.SessionOptions

    class OrtValue:
        @staticmethod
        def ortvalue_from_shape_and_type(
            shape: tuple[int, ...], dtype: object, device: str, device_id: int
        ) -> FakeValue:
            assert device == "cuda"
            return FakeValue(tuple(shape), dtype)


def test_a_cuda_graph_per_shape_captures_once_and_replays_with_new_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = conv_model(tmp_path / "conv.onnx")
    monkeypatch.setattr(shape_sessions, "_ort", lambda: FakeOrt)
    plain = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    graphs = shape_sessions.GraphPerShape(model, [("CUDAExecutionProvider", {"cudnn_conv_algo_search": "HEURISTIC"}),
                                                  "CPUExecutionProvider"], max_shapes=2)  # fmt: skip
    rng = np.random.RandomState(3)
    shapes = [(1, 3, 8, 9), (1, 3, 10, 7), (1, 3, 8, 9), (1, 3, 6, 6), (1, 3, 10, 7), (1, 3, 6, 6)]
    for shape in shapes:
        feed = {"x": rng.randn(*shape).astype(np.float32)}  # new data every call: the replay must see it
        assert np.allclose(graphs.run(None, feed)[0], plain.run(None, feed)[0], atol=1e-6)
        assert np.allclose(graphs.run(["y"], feed)[0], plain.run(None, feed)[0], atol=1e-6)
    session = graphs.session
    assert isinstance(session, FakeGraphSession)
    # a new shape: one plain run (it answers the call), then the capture; later calls replay; a third shape is
    # past max_shapes and runs plainly every time
    assert session.log[:3] == ["plain", "capture 1", "replay 1"]
    assert session.log.count("capture 1") == session.log.count("capture 2") == 1 and "capture 3" not in session.log
    assert session.log.count("replay 1") == 3 and session.log.count("replay 2") == 3
    assert len(graphs.graphs) == 2 and graphs.get_providers()[0] == "CUDAExecutionProvider"
