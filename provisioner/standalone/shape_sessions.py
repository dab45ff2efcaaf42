"""Run a model whose input shape changes per call without paying for the change: state kept per input shape.

On a GPU, ONNX Runtime's CUDA convolutions set themselves up for the shape they last ran; a run of another shape,
even one seen before, sets them up again (measured on an H100 with PP-OCRv4's detector: +60 ms a change under
HEURISTIC, +500 ms under EXHAUSTIVE, where a run of one shape takes ~5 ms). Keep one state per shape instead:

    GraphPerShape    one session with CUDA graphs; the first call of each input shape captures a graph for it
                     (one regular run, then ONNX Runtime's warm-up and capture), every later call of that shape
                     replays it: no set-up, no kernel launches. Needs every node on the GPU (or only shape
                     arithmetic on the CPU) and device buffers per shape (its input and outputs).
    SessionPerShape  one plain session per input shape (each holds its own arena unless `shared_arena`).

Both take what onnxruntime.InferenceSession takes and answer `run(output_names, {name: array})` with numpy
arrays, like InferenceSession.run, so they drop in where a session is used (RapidOCR: replace the `session` of
its OrtInferSession). Inputs are used as they are: no padding, so the outputs are the model's own.

    from shape_sessions import GraphPerShape
    session = GraphPerShape("det.onnx", providers=[("CUDAExecutionProvider", {"cudnn_conv_algo_search":
                            "HEURISTIC"}), "CPUExecutionProvider"])
    probability_map = session.run(None, {"x": image})[0]

This file is ortprov's (provisioner/standalone/shape_sessions.py; `ortprov tune` measures with it): copy it.
Standard library + onnxruntime + numpy; Python 3.8+.
"""

from __future__ import annotations

GRAPH_ID = "gpu_graph_id"  # onnxruntime's run option: which captured CUDA graph a run uses (-1: none)
MAX_SHAPES = 64  # shapes kept; a shape past that runs without a graph (GraphPerShape) or session of its own


def _ort():  # type: ignore[no-untyped-def]
    import onnxruntime  # here, not at the top: ortprov's tune child imports this file before onnxruntime

    return onnxruntime


def shape_key(feed: dict) -> tuple:
    return tuple((name, tuple(value.shape)) for name, value in sorted(feed.items()))


def _options(sess_options):  # type: ignore[no-untyped-def]
    return sess_options if sess_options is not None else _ort().SessionOptions()


class SessionPerShape:
    """One InferenceSession per input shape (created at the shape's first call). `shared_arena`: every session
    allocates from one CUDA arena registered with the environment (session.use_env_allocators) instead of one
    arena each."""

    def __init__(self, model, providers, sess_options=None, max_shapes: int = MAX_SHAPES, shared_arena: bool = False):  # type: ignore[no-untyped-def]
        self.model, self.providers, self.max_shapes = model, providers, max_shapes
        self.sess_options = _options(sess_options)
        if shared_arena:
            register_shared_arena(providers)
            self.sess_options.add_session_config_entry("session.use_env_allocators", "1")
        ort = _ort()
        self.first = ort.InferenceSession(model, sess_options=self.sess_options, providers=providers)
        self.sessions: dict = {}

    def session_for(self, feed: dict):  # type: ignore[no-untyped-def]
        key = shape_key(feed)
        session = self.sessions.get(key)
        if session is None:
            if not self.sessions:
                session = self.first  # the first shape gets the session made for the model's metadata
            elif len(self.sessions) >= self.max_shapes:
                return self.first
            else:
                session = _ort().InferenceSession(self.model, sess_options=self.sess_options, providers=self.providers)
            self.sessions[key] = session
        return session

    def run(self, output_names, feed: dict, run_options=None):  # type: ignore[no-untyped-def]
        return self.session_for(feed).run(output_names, feed, run_options)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        if name == "first":  # not made yet: creating it failed
            raise AttributeError(name)
        return getattr(self.first, name)  # get_inputs, get_outputs, get_providers, get_modelmeta ...


class GraphPerShape:
    """One session with CUDA graphs (enable_cuda_graph is set for you), one captured graph per input shape.

    A new shape: a regular run (gpu_graph_id -1) answers the call and tells the outputs' shapes; then device
    buffers for the shape's inputs and outputs are bound and ONNX Runtime warms up and captures graph N
    (gpu_graph_id N). Every later call of that shape copies the inputs into its buffers and replays the graph."""

    def __init__(self, model, providers, sess_options=None, max_shapes: int = MAX_SHAPES, device_id: int = 0):  # type: ignore[no-untyped-def]
        import numpy

        self.np, self.ort = numpy, _ort()
        self.max_shapes, self.device_id = max_shapes, device_id
        wanted = []
        for provider in providers:
            name, opts = provider if isinstance(provider, tuple) else (provider, {})
            if name == "CUDAExecutionProvider":
                opts = dict(opts, enable_cuda_graph="1")
            wanted.append((name, opts))
        self.session = self.ort.InferenceSession(model, sess_options=_options(sess_options), providers=wanted)
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.graphs: dict = {}  # shape key -> (binding, input buffers, output buffers, run options)
        self.plain = self._run_options(-1)

    def _run_options(self, graph: int):  # type: ignore[no-untyped-def]
        options = self.ort.RunOptions()
        options.add_run_config_entry(GRAPH_ID, str(graph))
        return options

    def _regular(self, feed: dict) -> list:
        binding = self.session.io_binding()
        for name, array in feed.items():
            binding.bind_cpu_input(name, self.np.ascontiguousarray(array))
        for name in self.output_names:
            binding.bind_output(name, "cuda", self.device_id)
        self.session.run_with_iobinding(binding, self.plain)
        return [value.numpy() for value in binding.get_outputs()]

    def _capture(self, key: tuple, feed: dict, outputs: list) -> None:
        binding = self.session.io_binding()
        inputs = {}
        for name, array in feed.items():
            value = self.ort.OrtValue.ortvalue_from_shape_and_type(array.shape, array.dtype, "cuda", self.device_id)
            value.update_inplace(self.np.ascontiguousarray(array))
            binding.bind_ortvalue_input(name, value)
            inputs[name] = value
        results = []
        for name, example in zip(self.output_names, outputs):  # noqa: B905 - Python 3.8
            value = self.ort.OrtValue.ortvalue_from_shape_and_type(example.shape, example.dtype, "cuda", self.device_id)
            binding.bind_ortvalue_output(name, value)
            results.append(value)
        options = self._run_options(len(self.graphs) + 1)  # 0 is onnxruntime's own
        self.session.run_with_iobinding(binding, options)  # warm-up and capture (ONNX Runtime runs it twice)
        self.graphs[key] = (binding, inputs, results, options)

    def run(self, output_names, feed: dict, run_options=None) -> list:  # type: ignore[no-untyped-def]
        key = shape_key(feed)
        found = self.graphs.get(key)
        if found is None:
            outputs = self._regular(feed)
            if len(self.graphs) < self.max_shapes:
                self._capture(key, feed, outputs)
            return self._select(output_names, outputs)
        binding, inputs, results, options = found
        for name, array in feed.items():
            inputs[name].update_inplace(self.np.ascontiguousarray(array))
        self.session.run_with_iobinding(binding, options)
        return self._select(output_names, [value.numpy() for value in results])

    def _select(self, output_names, outputs: list) -> list:  # type: ignore[no-untyped-def]
        if not output_names:
            return outputs
        return [outputs[self.output_names.index(name)] for name in output_names]

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        if name == "session":  # not made yet: creating it failed
            raise AttributeError(name)
        return getattr(self.session, name)  # get_inputs, get_outputs, get_providers, get_modelmeta ...


def register_shared_arena(providers) -> None:  # type: ignore[no-untyped-def]
    """One CUDA arena for every session of the process that sets session.use_env_allocators (once)."""
    global _SHARED
    if _SHARED:
        return
    cuda = [p for p in providers if (p[0] if isinstance(p, tuple) else p) == "CUDAExecutionProvider"]
    options = {k: str(v) for k, v in (cuda[0][1] if cuda and isinstance(cuda[0], tuple) else {}).items()}
    ort = _ort()
    info = ort.OrtMemoryInfo("Cuda", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
    ort.create_and_register_allocator_v2("CUDAExecutionProvider", info, options, ort.OrtArenaCfg({}))
    _SHARED = True


_SHARED = False
