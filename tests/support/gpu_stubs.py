"""Stub wheels of a real onnxruntime-gpu era: the real distribution names, versions and folders, gcc-built
libraries with the real sonames, and an `onnxruntime` package that loads its CUDA provider with the real
dynamic loader, as onnxruntime does.

What cannot exist here is the NVIDIA driver: libcuda.so.1 is never provided. So after a good install, a plain
session's loader error names libcuda.so.1 and nothing else; a library of the NVIDIA wheels named in that
error means plain code does not find the wheels (no loader hook).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from provisioner.matrix.query import builds_for, cuda_major, sonames_by_cuda_major
from tests.support.elf import build_so
from tests.support.wheels import WheelSpec

if TYPE_CHECKING:
    from pathlib import Path

    from provisioner.matrix.model import Matrix

DRIVER_LIBRARY = "libcuda.so.1"

# the provider's loading, as onnxruntime's provider bridge does it, and its error line
STUB_INIT = """
import ctypes, os, sys

__version__ = "{version}"
_HERE = os.path.dirname(os.path.abspath(__file__))


def get_device():
    return "GPU"


def get_available_providers():
    return ["CUDAExecutionProvider", "CPUExecutionProvider"]
{preload}

class InferenceSession:
    def __init__(self, path, sess_options=None, providers=None):
        names = [p[0] if isinstance(p, tuple) else p for p in (providers or [])]
        self._providers = ["CPUExecutionProvider"]
        if "CUDAExecutionProvider" in names:
            library = os.path.join(_HERE, "capi", "libonnxruntime_providers_cuda.so")
            try:
                ctypes.CDLL(library)
                self._providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
            except OSError as exc:
                sys.stderr.write(
                    "[E:onnxruntime:Default, provider_bridge_ort.cc:1848 TryGetProviderInfo_CUDA] "
                    "Failed to load library libonnxruntime_providers_cuda.so with error: %s\\n" % exc
                )

    def get_providers(self):
        return list(self._providers)
"""

STUB_PRELOAD = """

def preload_dlls(cuda=True, cudnn=True, msvc=True, directory=None):
    import glob, sysconfig
    site = sysconfig.get_paths()["purelib"]
    for path in sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "lib*.so*"))):
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            pass
"""

PLAIN_SESSION = (
    "import onnxruntime as ort; "
    "s = ort.InferenceSession('model.onnx', providers=['CUDAExecutionProvider', 'CPUExecutionProvider']); "
    "print(s.get_providers())"
)


def library_folder(package: str, cuda: int) -> str:
    """Where an NVIDIA wheel puts its libraries: nvidia/cu13/lib for CUDA 13's merged layout (cuDNN keeps
    nvidia/cudnn/lib), nvidia/<component>/lib before (nvidia-cuda-runtime-cu12 -> nvidia/cuda_runtime/lib)."""
    component = re.sub(r"-cu\d+$", "", package.removeprefix("nvidia-")).replace("-", "_")
    if cuda >= 13 and component != "cudnn":
        return f"nvidia/cu{cuda}/lib"
    return f"nvidia/{component}/lib"


def era_wheels(plan: dict, matrix: Matrix, work: Path) -> list[WheelSpec]:
    """Stub wheels for every requirement the plan installs (exact versions), with their libraries."""
    build = builds_for(matrix, plan["ort_version"], plan["cuda_version"])[0]
    cuda = build.cuda_major
    sonames = [s for s in sonames_by_cuda_major(matrix)[str(cuda)]]
    linked = [s for s in build.libraries_linked if s != DRIVER_LIBRARY] or sonames
    major = cuda_major(matrix, cuda)
    assert major is not None and major.pip_packages
    package_of_library = {name: library for library, name in major.pip_packages.items()}
    libraries = work / "libs"
    for soname in sonames:
        build_so(libraries, soname)
    build_so(libraries, DRIVER_LIBRARY)  # only to link the provider against: never installed
    specs = []
    for requirement in plan["install"]:
        name, _, version = requirement.partition("==")
        name = re.sub(r"\[.*\]", "", name)
        if name == build.package:
            provider = build_so(
                work / "provider", "libonnxruntime_providers_cuda.so", (*linked, DRIVER_LIBRARY), (libraries,)
            )
            init = STUB_INIT.format(version=version, preload=STUB_PRELOAD if build.preload_dlls else "")
            info = (
                f"package_name = '{build.package}'\n__version__ = '{version}'\ncuda_version = '{build.cuda_version}'\n"
            )
            files: dict[str, str | bytes] = {
                "onnxruntime/__init__.py": init,
                "onnxruntime/capi/__init__.py": "",
                "onnxruntime/capi/build_and_package_info.py": info,
                "onnxruntime/capi/libonnxruntime_providers_cuda.so": provider.read_bytes(),
            }
            specs.append(WheelSpec(name, version, extras=build.extras, files=files))
            continue
        library = package_of_library.get(name)
        shipped = [s for s in sonames if library and _family(s) in _families_of(library)]
        folder = library_folder(name, cuda)
        files = {f"{folder}/{soname}": (libraries / soname).read_bytes() for soname in shipped}
        files[f"{folder.rsplit('/', 1)[0]}/__init__.py"] = ""
        specs.append(WheelSpec(name, version, files=files))
    return specs


# appended to the real CPU onnxruntime's __init__.py in `on_real_onnxruntime`: it reports the CUDA provider as a
# GPU build does (compiled in, whatever the machine has), and the plan's version
GPU_BUILD_SHIM = """

# ortprov's tests: this is the CPU build standing for onnxruntime-gpu {version} on a machine without the NVIDIA
# driver: the CUDA provider is listed as a GPU build lists it; a session asked for it runs on the CPU
__version__ = "{version}"
_cpu_providers = get_available_providers


def get_available_providers():
    return ["CUDAExecutionProvider", *_cpu_providers()]
"""


def on_real_onnxruntime(plan: dict, matrix: Matrix, work: Path) -> list[WheelSpec]:
    """era_wheels, with the onnxruntime-gpu wheel made from the real CPU onnxruntime of the test interpreter
    (and its numpy): real sessions run, so verify's CUDA check runs as on a GPU build without a driver (the
    session falls back to the CPU, libcuda.so.1 cannot be loaded: no-driver), and its static check reads the
    stub provider library. The venv must have the test interpreter's Python (compiled code)."""
    from tests.support.wheels import installed

    build = builds_for(matrix, plan["ort_version"], plan["cuda_version"])[0]
    specs = []
    for spec in era_wheels(plan, matrix, work):
        if spec.name != build.package:
            specs.append(spec)
            continue
        cpu = installed("onnxruntime")
        init = cpu.files["onnxruntime/__init__.py"]
        assert isinstance(init, bytes)
        files = {
            "onnxruntime/__init__.py": init + GPU_BUILD_SHIM.format(version=spec.version).encode(),
            "onnxruntime/capi/build_and_package_info.py": spec.files["onnxruntime/capi/build_and_package_info.py"],
            "onnxruntime/capi/libonnxruntime_providers_cuda.so": spec.files[
                "onnxruntime/capi/libonnxruntime_providers_cuda.so"
            ],
        }
        numpy = installed("numpy")
        requires = (*spec.requires, f"numpy=={numpy.version}")
        specs += [installed("onnxruntime", name=spec.name, version=spec.version, extras=spec.extras,
                            requires=requires, files=files), numpy]  # fmt: skip
    return specs


def _family(soname: str) -> str:
    return re.sub(r"^lib|\.so.*$", "", soname)


def _families_of(library: str) -> tuple[str, ...]:
    """The libraries one NVIDIA wheel ships, by the matrix's library key (cublas ships cuBLAS and cuBLASLt)."""
    return {"cublas": ("cublas", "cublasLt"), "cudart": ("cudart",)}.get(library, (library,))
