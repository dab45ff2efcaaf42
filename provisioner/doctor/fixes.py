"""The fix for each finding code: one home for the fix texts, for one platform and one target interpreter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.matrix.query import build_gpu_code, builds_with_code_for, gpu_code_for

if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix


@dataclass(frozen=True)
class Fixes:
    """The fix texts, for one platform and one target interpreter."""

    python: str = "python"
    windows: bool = False
    # what `ortprov plan` and `apply` need beside --python on this host for the suggested command to work as
    # written: " --driver none" where the host has no driver (plan refuses it otherwise, exit 3)
    plan_flags: str = ""

    @property
    def apply(self) -> str:
        """`ortprov apply` for this target, as it runs here."""
        return f"ortprov apply --python {self.python}{self.plan_flags}"

    @property
    def plan(self) -> str:
        """`ortprov plan` for this target, as it runs here."""
        return f"ortprov plan --python {self.python}{self.plan_flags}"

    @property
    def pip(self) -> str:
        return f"{self.python} -m pip"

    def for_code(self, code: str, library: str | None = None) -> str:
        p = self.pip
        if code == "cudnn-missing":
            return (
                f"{self.apply}  (installs the cuDNN wheel the plan pins); by hand: "
                f'{p} install "onnxruntime-gpu[cuda,cudnn]" and call onnxruntime.preload_dlls() before '
                "creating the session"
            )
        if code == "cuda-library-missing":
            name = library or "CUDA"
            return (
                f"{self.apply}  (installs the {name} wheel the plan pins); by hand: "
                f'{p} install "onnxruntime-gpu[cuda,cudnn]" and call onnxruntime.preload_dlls()'
            )
        if code == "library-not-on-path":
            by_hand = (
                "add the folder holding the DLL to PATH"
                if self.windows
                else "export LD_LIBRARY_PATH=<folder holding the library>:$LD_LIBRARY_PATH"
            )
            return (
                f"{self.apply}  (installs the loader hook: a plain `import onnxruntime` "
                f"then finds the NVIDIA wheels' libraries); in code: call onnxruntime.preload_dlls() before "
                f"creating the session; or {by_hand}"
            )
        if code == "loader-hook-failed":
            return (
                f"ortprov verify --python {self.python} --json  shows the hook's status (loader_hook); "
                f"`{self.apply}` rewrites the hook"
            )
        if code == "tensorrt-missing":
            return (
                f"{self.apply} --tensorrt  (installs the TensorRT packages the build's "
                "provider was built against; `ortprov plan --tensorrt` names them), or drop "
                "TensorrtExecutionProvider and use CUDAExecutionProvider"
            )
        if code == "no-driver":
            if self.windows:
                return "install the NVIDIA driver (https://www.nvidia.com/Download/index.aspx), then `ortprov doctor`"
            return (
                "install the NVIDIA driver (`sudo ubuntu-drivers install` on Ubuntu); in a container, run "
                "it with "
                "`docker run --gpus all ...` (NVIDIA Container Toolkit)"
            )
        if code == "driver-library-mismatch":
            return (
                "the kernel driver and its user-space libraries differ after an upgrade: reboot (or "
                "reload nvidia modules)"
            )
        if code == "gpu-hidden":
            return (
                "start the container with `docker run --gpus all ...` (Kubernetes: request "
                "nvidia.com/gpu), and "
                "`unset CUDA_VISIBLE_DEVICES` or set it to a valid index (export CUDA_VISIBLE_DEVICES=0)"
            )
        if code == "driver-too-old":
            return (
                "upgrade the NVIDIA driver to one that supports the build's CUDA version, or install a "
                "build for the "
                f"CUDA your driver has: {self.plan} (it reads the driver) then "
                "ortprov apply"
            )
        if code == "cpu-package-only":
            return f"{self.apply}  (or: {p} uninstall -y onnxruntime && {p} install onnxruntime-gpu)"
        if code == "cpu-and-gpu-installed":
            return (
                f"{p} uninstall -y onnxruntime onnxruntime-gpu && {p} install onnxruntime-gpu  "
                f"(or {self.apply}, which does exactly this)"
            )
        if code == "cuda-major-mismatch":
            return (
                f"{self.plan}  picks the build for the CUDA major you have; "
                f"ortprov apply installs it (or install torch/NVIDIA wheels for the build's CUDA major)"
            )
        if code == "unsupported-gpu-arch":
            return (
                "this build has no kernels for the GPU's compute capability: "
                f"{self.plan} chooses a build that supports it (newer GPUs need newer builds, older GPUs "
                "older ones)"
            )
        if code == "msvc-runtime-missing":
            return "install the Microsoft Visual C++ Redistributable: https://aka.ms/vs/17/release/vc_redist.x64.exe"
        if code == "zlibwapi-missing":
            return (
                "zlibwapi.dll is needed by older cuDNN releases on Windows; newer ones bundle zlib: "
                f"{self.apply}  (installs the cuDNN wheel the plan pins), or put "
                "zlibwapi.dll next to the cuDNN DLLs"
            )
        if code == "gpu-out-of-memory":
            return (
                "free GPU memory (other processes: `nvidia-smi`), lower the batch size, or cap ONNX "
                "Runtime with the "
                "CUDA provider options {'gpu_mem_limit': N, 'arena_extend_strategy': 'kSameAsRequested'}"
            )
        if code == "cuda-context-conflict":
            return (
                "share the device's primary context, which ONNX Runtime and TensorRT use: `import "
                "pycuda.autoprimaryctx` instead of `import pycuda.autoinit`; or `ctx = cuda.Device(0)."
                "retain_primary_context()` and `ctx.push()` ... `ctx.pop()` around the TensorRT/pycuda work; or "
                "use cuda-python (cuDevicePrimaryCtxRetain), cupy or torch, which use the primary context. Not "
                "`make_context()` with push/pop: that is a second, private context, and its kernels, streams and "
                "engines break as soon as another thread or library makes the primary context current"
            )
        if code == "tensorrt-install-failed":
            return (
                f"ortprov apply --python {self.python} --tensorrt  (installs the real TensorRT wheels from "
                "NVIDIA's index with --only-binary, pinned to a version that installs); behind a firewall: "
                "--tensorrt-index-url MIRROR (handed to NVIDIA's stubs as WHEEL_STUB_PIP_INDEX_URL too), "
                "`ortprov download` where the index is reachable then `ortprov apply --wheelhouse DIR`, or "
                "--tensorrt-libraries system|DIR for a TensorRT already there"
            )
        if code == "tensorrt-major-mismatch":
            return (
                f"ortprov apply --python {self.python} --tensorrt  (pins the TensorRT major the provider links, "
                f"e.g. tensorrt-cu13-libs==10.16.1.11 for libnvinfer.so.10); by hand: {p} install "
                '"tensorrt-cu13-libs<11" --extra-index-url https://pypi.nvidia.com --only-binary tensorrt-cu13-libs'
            )
        if code == "tensorrt-engine-cache-stale":
            return (
                "delete the engine cache folder (trt_engine_cache_path) or give each TensorRT version / GPU "
                "model / onnxruntime version its own folder, e.g. trt_engine_cache_path=f'cache/{ort.__version__}-"
                "{gpu name}'; the first session then builds the engines again (slow once)"
            )
        if code == "no-wheel-for-platform":
            return (
                f"{self.plan}  lists the platforms and Pythons each build has "
                "wheels for; "
                "use a supported Python (e.g. via `uv venv --python 3.12`) or Linux x86_64/aarch64 or "
                "Windows x64"
            )
        if code == "gpu-slower-than-cpu":
            return (
                "ortprov verify --model MODEL.onnx --dim NAME=N  (times your model on GPU vs CPU); avoid "
                "per-call "
                "host<->device copies with IOBinding, warm up before timing, and batch small inputs"
            )
        if code == "nodes-on-cpu":
            return (
                "run with SessionOptions.log_severity_level = 1 to see which nodes fall back to the CPU; "
                "newer onnxruntime-gpu builds cover more operators (ortprov plan)"
            )
        if code == "gpu-provider-failed":
            return (
                f"ortprov doctor --python {self.python}  on the failing machine names the missing piece "
                "(most often "
                "cuDNN or a CUDA library not on the loader path)"
            )
        if code == "onnxruntime-not-installed":
            return f"{self.apply}  (or: {p} install onnxruntime-gpu)"
        if code == "package-files-missing":
            return (
                f"{self.apply}  (removes onnxruntime and installs it afresh); by hand: "
                f"{p} uninstall -y onnxruntime onnxruntime-gpu && {p} install onnxruntime-gpu"
            )
        if code == "gpu-results-differ":
            return (
                "report the versions (ortprov detect --json) upstream; try another onnxruntime-gpu build with "
                "ortprov plan --ort SPEC"
            )
        return f"ortprov doctor --python {self.python}"


def gpu_code_fix(matrix: Matrix, cc: str, platform: str, python: str) -> str:
    """What runs on compute capability `cc`: the newest build whose `platform` wheels hold code for it (a matrix
    query), else a source build for it."""
    builds = builds_with_code_for(matrix, cc, platform)
    digits = cc.replace(".", "")
    if not builds:
        return (
            f"no onnxruntime-gpu release's {platform} wheels hold code for compute capability {cc}: build "
            f"onnxruntime from source for it (./build.sh --use_cuda --cmake_extra_defines "
            f"CMAKE_CUDA_ARCHITECTURES={digits})"
        )
    best = builds[0]
    code = build_gpu_code(best, platform) or ((), ())
    cubin, jit = gpu_code_for(code[0], code[1], cc)
    has = cubin or f"{jit} PTX"
    return (
        f"onnxruntime-gpu {best.ort_version} (CUDA {best.cuda_version}) has {has} for compute capability {cc}: "
        f"ortprov plan --python {python} --ort {best.ort_version}  (ortprov apply installs it)"
    )
