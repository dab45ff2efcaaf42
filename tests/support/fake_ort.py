"""A real venv holding a fake `onnxruntime` package, for what cannot exist on a machine without a GPU.

The fake stands for the narrowest boundary only: what onnxruntime-gpu reports (providers, sessions). Its
behaviour is picked at run time by FAKE_ORT_MODE:
  pass           GPU provider first, outputs agree (Rfft computed with numpy), like a working GPU
  fallback       CUDA is "available" but every session silently runs on the CPU
  needs-preload  falls back (printing the loader error ORT prints) unless preload_dlls() was called first
  slow-gpu       like pass, but the GPU session is slower than the CPU one
  hang           session creation never returns
  abort          session creation calls os.abort() (SIGABRT, as a CUDA library crash would)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FAKE_INIT = r"""
import os, sys, time
import numpy as np

__version__ = "1.31.1"
package_name = "onnxruntime-gpu"
cuda_version = "13.0"
_MODE = os.environ.get("FAKE_ORT_MODE", "pass")
_preloaded = False


def get_device():
    return "GPU"


def get_available_providers():
    return ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]


def _get_nvidia_dll_paths(is_windows, cuda=True, cudnn=True):
    paths = []
    if cuda:
        paths += [("nvidia", "cu13", "lib", "libcublas.so.13"), ("nvidia", "cu13", "lib", "libcufft.so.12")]
    if cudnn:
        paths += [("nvidia", "cudnn", "lib", "libcudnn.so.9")]
    return paths


def preload_dlls(cuda=True, cudnn=True, msvc=True, directory=None):
    global _preloaded
    _preloaded = True


class SessionOptions:
    log_severity_level = 2


class _Arg:
    def __init__(self, name, shape, type_="tensor(float)"):
        self.name, self.shape, self.type = name, shape, type_


class InferenceSession:
    def __init__(self, path, sess_options=None, providers=None):
        names = [p[0] if isinstance(p, tuple) else p for p in (providers or [])]
        self._fft = os.path.basename(path).startswith("check_fft")
        self._user = not os.path.basename(path).startswith("check")
        wants_gpu = any(n != "CPUExecutionProvider" for n in names)
        if wants_gpu and _MODE == "hang":
            time.sleep(3600)
        if wants_gpu and _MODE == "abort":
            sys.stderr.write("fake: CUDA library crashed\n")
            sys.stderr.flush()
            os.abort()
        gpu = wants_gpu and (_MODE in ("pass", "slow-gpu") or (_MODE == "needs-preload" and _preloaded))
        if wants_gpu and not gpu and _MODE == "needs-preload":
            sys.stderr.write(
                "2025-01-01 00:00:00.0 [E:onnxruntime:Default, provider_bridge_ort.cc:2195 "
                "TryGetProviderInfo_CUDA] Failed to load library libonnxruntime_providers_cuda.so with "
                "error: libcudnn.so.9: cannot open shared object file: No such file or directory\n"
            )
            sys.stderr.write(
                "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:1055 CreateExecutionProviderInstance] "
                "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 13.*.\n"
            )
        first = [n for n in names if n != "CPUExecutionProvider"][:1]
        self._providers = (first if gpu else []) + ["CPUExecutionProvider"]
        self._slow = gpu and _MODE == "slow-gpu"

    def get_providers(self):
        return list(self._providers)

    def get_inputs(self):
        if self._fft:
            return [_Arg("x", [4, 256])]
        if self._user:
            return [
                _Arg("ids", ["batch", "seq"], "tensor(int64)"),
                _Arg("mask", ["batch", "seq"], "tensor(float)"),
            ]
        return [_Arg("x", [1, 16, 96, 96])]

    def run(self, output_names, feeds):
        if self._slow:
            time.sleep(0.004)
        x = next(iter(feeds.values()))
        if self._fft:
            spectrum = np.fft.rfft(x.astype(np.float64), axis=-1)
            return [np.stack([spectrum.real, spectrum.imag], axis=-1).astype(np.float32)]
        if self._user:
            return [x.astype(np.float32).sum(axis=-1)]
        return [np.full((1, 32, 96, 96), float(x.mean()), np.float32), np.ones((32, 16), np.float32)]
"""


def make_fake_venv(root: Path, *, with_cpu_dist: bool = False, provider_library: bytes | None = b"") -> Path:
    """A real venv (no pip) whose site-packages holds numpy (linked) and the fake onnxruntime-gpu 1.31.1.

    provider_library: the bytes of capi/libonnxruntime_providers_cuda.so (None: no file). with_cpu_dist:
    also register the CPU `onnxruntime` distribution, as when both packages were installed.
    Returns the venv's python.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    import numpy

    numpy_dir = Path(numpy.__file__).parent
    for name in ("numpy", "numpy.libs"):
        source = numpy_dir.parent / name
        if source.exists():
            os.symlink(source, site / name)
    package = site / "onnxruntime"
    (package / "capi").mkdir(parents=True)
    (package / "__init__.py").write_text(FAKE_INIT)
    (package / "capi" / "__init__.py").write_text("")
    (package / "capi" / "build_and_package_info.py").write_text(
        "package_name = 'onnxruntime-gpu'\n__version__ = '1.31.1'\ncuda_version = '13.0'\n"
    )
    if provider_library is not None:
        (package / "capi" / "libonnxruntime_providers_cuda.so").write_bytes(provider_library)
    _dist_info(site, "onnxruntime_gpu", "onnxruntime-gpu", "1.31.1")
    if with_cpu_dist:
        _dist_info(site, "onnxruntime", "onnxruntime", "1.22.1")
    return python


def _dist_info(site: Path, stem: str, name: str, version: str) -> None:
    info = site / f"{stem}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text("")
    (info / "INSTALLER").write_text("pip\n")


def site_packages(python: Path) -> Path:
    """The purelib folder of the venv `python` belongs to."""
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return Path(out.strip())
