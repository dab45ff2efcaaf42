"""The static closure of a plan: is every library the CUDA provider imports supplied by the plan? Pure.

The provider's imports (DT_NEEDED on Linux, the PE import table on Windows) were read from the onnxruntime-gpu
wheel for each platform; the files each NVIDIA wheel installs were read from its RECORD (matrices/). An import is
supplied by a planned NVIDIA wheel that installs a file of that name, by onnxruntime itself, by the NVIDIA driver
(libcuda.so.1, nvcuda.dll), by the operating system (glibc and friends, Windows' own DLLs and Universal CRT), or by
the Microsoft Visual C++ Redistributable (named: no wheel ships it). Anything else is missing: the provider
library would not load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.standalone.libnames import (
    is_driver_library,
    is_msvc_runtime,
    is_system_library,
    is_windows_system_library,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

DRIVER = "the NVIDIA driver"
OS = "the operating system"
MSVC = "the Microsoft Visual C++ Redistributable (install it: no wheel ships it)"
ONNXRUNTIME = "onnxruntime-gpu itself"


@dataclass(frozen=True)
class Supplied:
    """One import and what supplies it."""

    name: str  # libcublasLt.so.13 / cublasLt64_13.dll
    by: str  # "nvidia-cublas 13.1.0.3", DRIVER, OS, MSVC, ONNXRUNTIME


@dataclass(frozen=True)
class Closure:
    """Every import of one library on one platform: supplied, or missing."""

    platform: str
    supplied: tuple[Supplied, ...]
    missing: tuple[str, ...]

    @property
    def complete(self) -> bool:
        """Nothing is missing."""
        return not self.missing

    def summary(self) -> str:
        """ "libcublasLt.so.13 <- nvidia-cublas 13.1.0.3, ..., libcuda.so.1 <- the NVIDIA driver"."""
        wheels = [f"{s.name} <- {s.by}" for s in self.supplied if s.by not in (OS, ONNXRUNTIME)]
        return ", ".join(wheels)


def closure(platform: str, needs: Iterable[str], wheels: Mapping[str, Iterable[str]]) -> Closure:
    """What supplies each of `needs` on `platform`, given the files each planned wheel installs
    ({"nvidia-cublas 13.1.0.3": ["nvidia/cu13/lib/libcublas.so.13", ...]})."""
    windows = platform.startswith("windows")
    by_name: dict[str, str] = {}
    for wheel, files in wheels.items():
        for path in files:
            base = path.rsplit("/", 1)[-1]
            by_name.setdefault(base.lower() if windows else base, wheel)
    supplied: list[Supplied] = []
    missing: list[str] = []
    for name in needs:
        key = name.lower() if windows else name
        if key in by_name:
            supplied.append(Supplied(name, by_name[key]))
        elif "onnxruntime" in key:
            supplied.append(Supplied(name, ONNXRUNTIME))
        elif is_driver_library(name):
            supplied.append(Supplied(name, DRIVER))
        elif is_windows_system_library(name) if windows else is_system_library(name):
            supplied.append(Supplied(name, OS))
        elif windows and is_msvc_runtime(name):
            supplied.append(Supplied(name, MSVC))
        else:
            missing.append(name)
    return Closure(platform, tuple(supplied), tuple(missing))
