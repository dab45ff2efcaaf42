"""The pycuda/TensorRT context clash next to onnxruntime, reproduced with the CUDA driver API (issue 25).

`import pycuda.autoinit` makes a second, non-primary CUDA context (cuCtxCreate) and leaves it current; ONNX
Runtime (and TensorRT's runtime) work in the device's primary context. This script does what such a program
does, with cuda-bindings standing in for pycuda, and records every driver call's CUresult:

  private   cuCtxCreate (as pycuda.autoinit), load a tiny kernel of our own (PTX, JIT-compiled by the driver)
            into it, allocate, make a stream, launch: the baseline. Then an onnxruntime CUDA session runs. Then
            the same launch / copies / stream work again, in what the program believes is its context; then
            the same after pushing its context back (the push/pop workaround); then from a worker thread
            (what a web server or a thread pool does), with its context pushed there too.
  primary   the same, with the primary context retained (cuDevicePrimaryCtxRetain: what
            `import pycuda.autoprimaryctx`, cuda-python, cupy and torch use).

    PYTHONPATH=/tmp/site python tests/gpu/ctx_clash_probe.py SCENARIO --model check.onnx

One JSON object per scenario on stdout (the last line); a readable log on stderr, in the words a program
would print ("cuLaunchKernel failed: CUDA_ERROR_INVALID_HANDLE (invalid resource handle)").
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

PTX = b"""
.version 7.0
.target sm_50
.address_size 64

.visible .entry add_one(
    .param .u64 add_one_param_0,
    .param .u32 add_one_param_1
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [add_one_param_0];
    ld.param.u32 %r2, [add_one_param_1];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    setp.ge.u32 %p1, %r1, %r2;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    add.f32 %f2, %f1, 0f3F800000;
    st.global.f32 [%rd4], %f2;
DONE:
    ret;
}
\x00"""

N = 1 << 16


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Driver:
    """cuda.bindings.driver calls that record their CUresult instead of raising."""

    def __init__(self) -> None:
        from cuda.bindings import driver

        self.cu = driver
        self.calls: list[dict[str, Any]] = []

    def name(self, err: Any) -> str:
        return str(getattr(err, "name", err))

    def message(self, err: Any) -> str:
        got = self.cu.cuGetErrorString(err)
        text = got[1] if isinstance(got, tuple) and len(got) > 1 else b""
        return text.decode() if isinstance(text, bytes) else str(text)

    def call(self, step: str, function: str, *args: Any) -> Any:
        result = getattr(self.cu, function)(*args)
        err = result[0] if isinstance(result, tuple) else result
        ok = err == self.cu.CUresult.CUDA_SUCCESS
        entry = {"step": step, "call": function, "result": self.name(err), "ok": bool(ok)}
        if not ok:
            entry["message"] = self.message(err)
            log(f"  {step}: {function} failed: {entry['result']} ({entry['message']})")
        else:
            log(f"  {step}: {function}: CUDA_SUCCESS")
        self.calls.append(entry)
        if not ok:
            return None
        if isinstance(result, tuple):
            return result[1] if len(result) == 2 else result[1:]
        return True

    def current(self) -> int:
        got = self.cu.cuCtxGetCurrent()
        return int(got[1]) if got[0] == self.cu.CUresult.CUDA_SUCCESS else -1


class OwnWork:
    """What the pycuda side owns: a module with a kernel, a buffer, a stream, all made in one context."""

    def __init__(self, d: Driver) -> None:
        import numpy as np

        self.np = np
        self.d = d
        self.module = d.call("load", "cuModuleLoadData", PTX)
        self.kernel = d.call("load", "cuModuleGetFunction", self.module, b"add_one") if self.module else None
        self.buffer = d.call("alloc", "cuMemAlloc", N * 4)
        self.stream = d.call("stream", "cuStreamCreate", 0)
        self.host = np.zeros(N, np.float32)

    def launch(self, step: str, kernel: Any = None, buffer: Any = None, stream: Any = None) -> bool:
        """Copy in, add one on the GPU, copy out, synchronise: True when every call worked. By default its own
        kernel, buffer and stream; `stream=0` is the default stream, which belongs to whatever context is
        current (what pycuda code that passes no stream uses)."""
        d, np = self.d, self.np
        kernel = self.kernel if kernel is None else kernel
        buffer = self.buffer if buffer is None else buffer
        stream = self.stream if stream is None else stream
        if kernel is None or buffer is None or stream is None:
            return False
        ok = d.call(step, "cuMemcpyHtoDAsync", buffer, self.host.ctypes.data, N * 4, stream) is not None
        pointer = np.array([int(buffer)], dtype=np.uint64)
        count = np.array([N], dtype=np.uint32)
        params = np.array([pointer.ctypes.data, count.ctypes.data], dtype=np.uint64)
        launched = d.call(step, "cuLaunchKernel", kernel, N // 256, 1, 1, 256, 1, 1, 0, stream, params.ctypes.data, 0)
        ok = launched is not None and ok
        ok = d.call(step, "cuMemcpyDtoHAsync", self.host.ctypes.data, buffer, N * 4, stream) is not None and ok
        if isinstance(stream, int) and stream == 0:
            ok = d.call(step, "cuCtxSynchronize") is not None and ok
        else:
            ok = d.call(step, "cuStreamSynchronize", stream) is not None and ok
        return ok


def onnxruntime_session(model: str) -> dict[str, Any]:
    import numpy as np
    import onnxruntime as ort

    started = time.perf_counter()
    session = ort.InferenceSession(model, providers=["CUDAExecutionProvider"])
    feeds = {}
    for arg in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in arg.shape]
        feeds[arg.name] = np.random.rand(*shape).astype(np.float32)
    session.run(None, feeds)
    log(f"  onnxruntime {ort.__version__}: session ran on {session.get_providers()[0]}")
    return {"version": ort.__version__, "providers": session.get_providers(), "seconds": time.perf_counter() - started}


def scenario(kind: str, model: str) -> dict[str, Any]:
    d = Driver()
    d.call("init", "cuInit", 0)
    device = d.call("init", "cuDeviceGet", 0)
    if kind == "private":
        log("private context (as `import pycuda.autoinit`): cuCtxCreate")
        try:
            own_ctx = d.call("context", "cuCtxCreate", None, 0, device)
        except TypeError:  # cuda-bindings before 13: cuCtxCreate(flags, dev)
            own_ctx = d.call("context", "cuCtxCreate", 0, device)
    else:
        log("primary context (as `import pycuda.autoprimaryctx`): cuDevicePrimaryCtxRetain + cuCtxPushCurrent")
        own_ctx = d.call("context", "cuDevicePrimaryCtxRetain", device)
        d.call("context", "cuCtxPushCurrent", own_ctx)
    primary = d.call("primary", "cuDevicePrimaryCtxRetain", device)
    out: dict[str, Any] = {"scenario": kind, "own_context_is_primary": int(own_ctx) == int(primary)}
    work = OwnWork(d)
    out["before_ort"] = work.launch("own work before onnxruntime")
    out["ort"] = onnxruntime_session(model)
    current = d.current()
    out["current_after_ort"] = (
        "own" if current == int(own_ctx) else ("primary" if current == int(primary) else hex(current))
    )
    log(f"  current context after onnxruntime ran: {out['current_after_ort']}")
    out["after_ort"] = work.launch("own work after onnxruntime, same thread, no push")
    # What pycuda code does through the *current* context without naming it (after onnxruntime made the primary
    # one current): the default stream, a module loaded now (a TensorRT engine deserialised now is the same).
    out["default_stream_after_ort"] = work.launch("own kernel on the default stream after onnxruntime", stream=0)
    late_module = d.call("load after onnxruntime", "cuModuleLoadData", PTX)
    late_kernel = None
    if late_module is not None:
        late_kernel = d.call("load after onnxruntime", "cuModuleGetFunction", late_module, b"add_one")
    out["late_module_on_own_stream"] = late_kernel is not None and work.launch(
        "a kernel loaded after onnxruntime, launched on its own stream", kernel=late_kernel
    )
    d.call("push", "cuCtxPushCurrent", own_ctx)
    out["after_push"] = work.launch("own work after pushing its context again (the push/pop workaround)")
    d.call("pop", "cuCtxPopCurrent")

    def in_thread(push: bool, key: str) -> None:
        if push:
            d.call("thread", "cuCtxPushCurrent", own_ctx)
        out[key] = work.launch("own work in a worker thread" + (" (context pushed there)" if push else ""))
        if push:
            d.call("thread", "cuCtxPopCurrent")

    for push, key in ((False, "thread_no_push"), (True, "thread_pushed")):
        worker = threading.Thread(target=in_thread, args=(push, key))
        worker.start()
        worker.join(60)

    def ort_in_thread() -> None:
        out["ort_in_thread"] = onnxruntime_session(model)["providers"][0]

    worker = threading.Thread(target=ort_in_thread)
    worker.start()
    worker.join(120)
    out["after_ort_in_thread"] = work.launch("own work after onnxruntime ran in another thread")
    # last, as an error here can poison the context: memory allocated while onnxruntime's context is current,
    # used by its own kernel on its own stream (a pycuda gpuarray made after the session)
    late_buffer = d.call("alloc after onnxruntime", "cuMemAlloc", N * 4)
    out["late_alloc_on_own_stream"] = late_buffer is not None and work.launch(
        "memory allocated after onnxruntime, used by its own kernel on its own stream", buffer=late_buffer
    )
    failed = [c for c in d.calls if not c["ok"]]
    out["failed_calls"] = sorted({f"{c['call']}: {c['result']}" for c in failed})
    out["calls"] = d.calls
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=("private", "primary"))
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    result = scenario(args.scenario, args.model)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
