"""The fix of each finding code: one function per code (the fix column of the rules' registry, rules.RULES), for one
platform and one target interpreter. Nothing else writes a fix text: the live doctor and the log reader ask here.

`subject` carries what a fix names besides the library: the exact distributions to reinstall
(package-files-missing), the module to install (verify-failed). `gpu_code_fix` is unsupported-gpu-arch's fix where
the GPU's compute capability is known (the newest build whose wheels hold code for it, a matrix query).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.matrix.query import build_gpu_code, builds_with_code_for, gpu_code_for

if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix


@dataclass(frozen=True)
class Fixes:
    """The context of the fix texts: the target interpreter, the platform, and the pip names of the NVIDIA wheels
    for the build's CUDA major where known (("cudnn", "nvidia-cudnn-cu12"), ...)."""

    python: str = "python"
    windows: bool = False
    packages: tuple[tuple[str, str], ...] = ()
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

    def package(self, library: str | None) -> str | None:
        """The pip name of the NVIDIA wheel of `library` for the build's CUDA major, when known."""
        return dict(self.packages).get(library or "")

    def for_code(self, code: str, library: str | None = None, subject: str | None = None) -> str:
        """The fix of `code` (about `library`, naming `subject` where the fix names one)."""
        fix = FIXES.get(code)
        return fix(self, library, subject) if fix else f"ortprov doctor --python {self.python}"


FixText = Callable[[Fixes, "str | None", "str | None"], str]


def _cudnn(f: Fixes, library: str | None, subject: str | None) -> str:
    wheel = f.package("cudnn")
    by_hand = (
        f"{f.pip} install {wheel} (the cuDNN of the build's CUDA major)"
        if wheel
        else f'{f.pip} install "onnxruntime-gpu[cuda,cudnn]"'
    )
    return (
        f"{f.apply}  (installs the cuDNN wheel the plan pins); by hand: {by_hand} and call "
        "onnxruntime.preload_dlls() before creating the session"
    )


def _cuda_library(f: Fixes, library: str | None, subject: str | None) -> str:
    wheel = f.package(library)
    by_hand = f"{f.pip} install {wheel}" if wheel else f'{f.pip} install "onnxruntime-gpu[cuda,cudnn]"'
    decide = "" if library else f"; `ortprov verify --static --python {f.python}` names the library that is missing"
    return (
        f"{f.apply}  (installs the {library or 'CUDA'} wheel the plan pins); by hand: "
        f"{by_hand} and call onnxruntime.preload_dlls(){decide}"
    )


def _not_on_path(f: Fixes, library: str | None, subject: str | None) -> str:
    by_hand = (
        "add the folder holding the DLL to PATH"
        if f.windows
        else "export LD_LIBRARY_PATH=<folder holding the library>:$LD_LIBRARY_PATH"
    )
    return (
        f"{f.apply}  (installs the loader hook: a plain `import onnxruntime` then finds the "
        f"NVIDIA wheels' libraries); in code: call onnxruntime.preload_dlls() before creating the session; or {by_hand}"
    )


def _no_driver(f: Fixes, library: str | None, subject: str | None) -> str:
    if f.windows:
        return "install the NVIDIA driver (https://www.nvidia.com/Download/index.aspx), then `ortprov doctor`"
    return (
        "install the NVIDIA driver (`sudo ubuntu-drivers install` on Ubuntu); in a container, run it with "
        "`docker run --gpus all ...` (NVIDIA Container Toolkit)"
    )


def _unsupported_arch(f: Fixes, library: str | None, subject: str | None) -> str:
    """Without the GPU's compute capability (with it, gpu_code_fix names the build that holds code for it)."""
    return (
        f"this build has no kernels for the GPU's compute capability: {f.plan} chooses a build that supports it "
        "(newer GPUs need newer builds, older GPUs older ones)"
    )


def _package_files(f: Fixes, library: str | None, subject: str | None) -> str:
    if library:  # an NVIDIA wheel's files are missing
        return f"{f.pip} install --force-reinstall --no-deps {subject or library}"
    by_hand = (
        f"{f.pip} install --force-reinstall --no-deps {subject}"
        if subject
        else f"{f.pip} uninstall -y onnxruntime onnxruntime-gpu && {f.pip} install onnxruntime-gpu"
    )
    return f"{f.apply}  (removes it and installs it afresh); by hand: {by_hand}"


def _verify_failed(f: Fixes, library: str | None, subject: str | None) -> str:
    if subject:  # a module the check needs is not installed (numpy, or a dependency of onnxruntime)
        return f"{f.pip} install {subject}"
    return f"ortprov verify --python {f.python} --json"


def _plugin_apply(f: Fixes, subject: str | None) -> str:
    """`ortprov apply` of the plugin EP plan (`subject`: its --provider name)."""
    return f"{f.apply} --provider {subject or 'tensorrt-rtx'}"


FIXES: dict[str, FixText] = {
    "plugin-beside-gpu-core": lambda f, lib, s: (
        f"{_plugin_apply(f, s)}  (it removes onnxruntime-gpu and reinstalls the CPU onnxruntime core the EP "
        f"registers into; by hand: {f.pip} uninstall -y onnxruntime-gpu onnxruntime && {f.pip} install onnxruntime)"
    ),
    "known-broken-release": lambda f, lib, s: (
        f"{f.apply} --ort '>={s}'  (a release with the fix; by hand: {f.pip} install 'onnxruntime-gpu>={s}')"
    ),
    "plugin-core-too-old": lambda f, lib, s: (
        f"{_plugin_apply(f, s)}  (it installs the newest CPU core the EP works with; by hand: "
        f"{f.pip} install -U onnxruntime)"
    ),
    "cuda-library-twice": lambda f, lib, s: (
        f"keep one copy of {s or 'the library'} in the process: {f.plan}  plans onnxruntime for the CUDA and "
        "cuDNN majors the environment already loads (torch's wheels, a conda env, a toolkit), so both use one set; "
        "where two majors must coexist, import the framework whose copy must win first, or run them in separate "
        "processes"
    ),
    "plugin-library-missing": lambda f, lib, s: (
        f"{_plugin_apply(f, s)}  (its loader hook loads the libraries the EP's wheel bundles under other file "
        "names when the program imports the EP; by hand, before registering: `import ctypes, glob, os, EPMODULE "
        "as ep; [ctypes.CDLL(p, os.RTLD_GLOBAL) for p in glob.glob(os.path.join(os.path.dirname(ep.__file__), "
        "'libcudart.so.*'))]`)"
    ),
    "plugin-register-failed": lambda f, lib, s: (
        f"ortprov verify --python {f.python} --provider {s or 'tensorrt-rtx'} --json  shows the error; "
        f"{_plugin_apply(f, s)} installs a core and EP that work together"
    ),
    "plugin-no-device": lambda f, lib, s: (
        f"{f.plan} --provider {s or 'tensorrt-rtx'}  says whether the EP supports this GPU; where onnxruntime "
        "discovered no GPU at all (Linux: no /sys/class/drm, as in many containers and VMs), no plugin EP gets a "
        "device there: load the nvidia-drm kernel module on the host (`sudo modprobe nvidia-drm`), or leave "
        "--provider out for onnxruntime-gpu's CUDA provider, which needs no device discovery"
    ),
    "no-driver": _no_driver,
    "driver-library-mismatch": lambda f, lib, s: (
        "the kernel driver and its user-space libraries differ after an upgrade: reboot (or reload nvidia modules)"
    ),
    "gpu-hidden": lambda f, lib, s: (
        "start the container with `docker run --gpus all ...` (Kubernetes: request nvidia.com/gpu), and "
        "`unset CUDA_VISIBLE_DEVICES` or set it to a valid index (export CUDA_VISIBLE_DEVICES=0)"
    ),
    "driver-too-old": lambda f, lib, s: (
        "upgrade the NVIDIA driver to one that supports the build's CUDA version, or install a build for the "
        f"CUDA your driver has: {f.plan} (it reads the driver) then ortprov apply"
    ),
    "no-wheel-for-platform": lambda f, lib, s: (
        f"{f.plan}  lists the platforms and Pythons each build has wheels for; use a "
        "supported Python (64-bit, e.g. via `uv venv --python 3.12`) on Linux x86_64/aarch64 or Windows x64"
    ),
    "onnxruntime-not-installed": lambda f, lib, s: f"{f.apply}  (or: {f.pip} install onnxruntime-gpu)",
    "cpu-package-only": lambda f, lib, s: (
        f"{f.apply}  (or: {f.pip} uninstall -y onnxruntime && {f.pip} install onnxruntime-gpu;"
        " C/C++/C#/Java/Rust: use the GPU package or archive of ONNX Runtime, e.g. Microsoft.ML.OnnxRuntime.Gpu, "
        "onnxruntime_gpu, onnxruntime-linux-x64-gpu)"
    ),
    "cpu-and-gpu-installed": lambda f, lib, s: (
        f"{f.pip} uninstall -y onnxruntime onnxruntime-gpu && {f.pip} install onnxruntime-gpu  "
        f"(or {f.apply}, which does exactly this); .NET/Java: drop the reference that brings the CPU runtime "
        "(Microsoft.ML.OnnxRuntime, com.microsoft.onnxruntime:onnxruntime, often through another package) so that only "
        "the GPU package's library is copied"
    ),
    "package-files-missing": _package_files,
    "cuda-major-mismatch": lambda f, lib, s: (
        f"{f.plan}  picks the build for the CUDA (and cuDNN) major you have; ortprov apply "
        "installs it (or install the CUDA/cuDNN major the build needs: the NVIDIA wheels of that major)"
    ),
    "cudnn-missing": _cudnn,
    "cuda-library-missing": _cuda_library,
    "library-not-on-path": _not_on_path,
    "loader-hook-failed": lambda f, lib, s: (
        f"ortprov verify --python {f.python} --json  shows the hook's status (loader_hook); "
        f"`{f.apply}` rewrites the hook"
    ),
    "msvc-runtime-missing": lambda f, lib, s: (
        "install the Microsoft Visual C++ Redistributable: https://aka.ms/vs/17/release/vc_redist.x64.exe"
    ),
    "zlibwapi-missing": lambda f, lib, s: (
        "zlibwapi.dll is needed by older cuDNN releases on Windows; newer ones bundle zlib: "
        f"{f.apply}  (installs the cuDNN wheel the plan pins), or put zlibwapi.dll next to "
        "the cuDNN DLLs"
    ),
    "tensorrt-missing": lambda f, lib, s: (
        f"{f.apply} --tensorrt  (installs the TensorRT packages the build's provider was "
        "built against; `ortprov plan --tensorrt` names them), or drop TensorrtExecutionProvider and use "
        "CUDAExecutionProvider"
    ),
    "tensorrt-install-failed": lambda f, lib, s: (
        f"{f.apply} --tensorrt  (installs the real TensorRT wheels from "
        "NVIDIA's index with --only-binary, pinned to a version that installs); behind a firewall: "
        "--tensorrt-index-url MIRROR (handed to NVIDIA's stubs as WHEEL_STUB_PIP_INDEX_URL too), "
        "`ortprov download` where the index is reachable then `ortprov apply --wheelhouse DIR`, or "
        "--tensorrt-libraries system|DIR for a TensorRT already there"
    ),
    "tensorrt-major-mismatch": lambda f, lib, s: (
        f"{f.apply} --tensorrt  (pins the TensorRT major the provider links, "
        f"e.g. tensorrt-cu13-libs==10.16.1.11 for libnvinfer.so.10); by hand: {f.pip} install "
        '"tensorrt-cu13-libs<11" --extra-index-url https://pypi.nvidia.com --only-binary tensorrt-cu13-libs'
    ),
    "unsupported-gpu-arch": _unsupported_arch,
    "gpu-provider-failed": lambda f, lib, s: (
        f"ortprov verify --static --python {f.python}  decides it, without a GPU: each library the CUDA provider "
        "loads, missing, of another CUDA major or found only off the loader's path; on the failing machine "
        f"`ortprov doctor --python {f.python}` names the missing piece and its fix"
    ),
    "gpu-out-of-memory": lambda f, lib, s: (
        "free GPU memory (other processes: `nvidia-smi`), lower the batch size, or cap ONNX Runtime with the CUDA "
        "provider options {'gpu_mem_limit': N, 'arena_extend_strategy': 'kSameAsRequested'}"
    ),
    "cuda-context-conflict": lambda f, lib, s: (
        "share the device's primary context, which ONNX Runtime and TensorRT use: `import "
        "pycuda.autoprimaryctx` instead of `import pycuda.autoinit`; or `ctx = cuda.Device(0)."
        "retain_primary_context()` and `ctx.push()` ... `ctx.pop()` around the TensorRT/pycuda work; or "
        "use cuda-python (cuDevicePrimaryCtxRetain), cupy or torch, which use the primary context. Not "
        "`make_context()` with push/pop: that is a second, private context, and its kernels, streams and "
        "engines break as soon as another thread or library makes the primary context current"
    ),
    "tensorrt-engine-cache-stale": lambda f, lib, s: (
        "delete the engine cache folder (trt_engine_cache_path) or give each TensorRT version / GPU "
        "model / onnxruntime version its own folder, e.g. trt_engine_cache_path=f'cache/{ort.__version__}-"
        "{gpu name}'; the first session then builds the engines again (slow once)"
    ),
    "verify-crashed": lambda f, lib, s: (
        f"ortprov verify --python {f.python} --json  shows the stage it died in; mixed CUDA libraries (torch's and "
        "pip's) are the usual cause: ortprov apply"
    ),
    "verify-timeout": lambda f, lib, s: (
        f"ortprov verify --python {f.python} --timeout 600  (a first TensorRT engine build or PTX JIT can take "
        "minutes; otherwise the driver is stuck: check `nvidia-smi`)"
    ),
    "gpu-results-differ": lambda f, lib, s: (
        "report the versions (ortprov detect --json) upstream; try another onnxruntime-gpu build with ortprov plan "
        "--ort SPEC"
    ),
    "verify-failed": _verify_failed,
    "gpu-slower-than-cpu": lambda f, lib, s: (
        "ortprov verify --model MODEL.onnx --dim NAME=N  (times your model on GPU vs CPU); avoid per-call "
        "host<->device copies with IOBinding, warm up before timing, and batch small inputs"
    ),
    "fastest-gpu-changes-results": lambda f, lib, s: (
        f"keep the recommended options; `ortprov tune {s or 'MODEL'} --allow-output-change` shows the fastest variant "
        "as code if the change is acceptable to you"
    ),
    "nodes-on-cpu": lambda f, lib, s: (
        "run with SessionOptions.log_severity_level = 1 to see which nodes fall back to the CPU; newer "
        "onnxruntime-gpu builds cover more operators (ortprov plan)"
    ),
}


# unsupported-gpu-arch where CUDA_FORCE_PTX_JIT=1 is the cause (the live facts, or a log that shows it)
UNSET_PTX_JIT = (
    "unset CUDA_FORCE_PTX_JIT (`unset CUDA_FORCE_PTX_JIT` in the shell, or remove it from the service's environment): "
    "the driver then runs the wheels' compiled kernels"
)


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
