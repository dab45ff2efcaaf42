"""What the rules reason from: a log's facts with what follows from them and the matrix, computed once. Pure.

`Case` holds the evidence (`LogEvidence`), the fix texts' context (`Fixes`) and the matrix, and derives what
several rules need: the CUDA and cuDNN majors the build needs (what the log says, else the build's record for the
version the log names) and those installed, whether the GPU build is proven (its CUDA provider library exists and
was loaded), and which CUDA major needs a given library file (from the builds' library lists in the matrix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from provisioner.doctor.evidence import LoadError, LogEvidence, Seen, major_of
from provisioner.findings import Finding
from provisioner.matrix.query import builds_for, cuda_majors_released_by, sonames_by_cuda_major
from provisioner.standalone.libnames import library_family
from provisioner.versions import major

if TYPE_CHECKING:
    from provisioner.doctor.fixes import Fixes
    from provisioner.matrix.model import Matrix, OrtBuild

LIBRARY_EVIDENCE = 6  # lines a finding keeps
_CUDA_FAMILIES = frozenset({"cudnn", "cublas", "cublasLt", "cudart", "cufft", "curand", "nvrtc"})
_PROVIDER_BRIDGE = re.compile(r"provider_bridge|ProviderLibrary|ProviderSharedLibrary|onnxruntime_providers_", re.I)
_OTHER_FRAMEWORK = re.compile(r"tensorflow|torch|paddle|ctranslate|dynamic library", re.I)


def version_major(version: str | None) -> int | None:
    """12 for "12.4"; None when it is no version."""
    try:
        return major(str(version))
    except ValueError:
        return None


@dataclass
class Case:
    """A log's facts and what follows from them (see the module docstring)."""

    ev: LogEvidence
    fixes: Fixes
    matrix: Matrix | None = None

    def finding(
        self, code: str, title: str, lines: tuple[str, ...], library: str | None = None, severity: str = "error"
    ) -> Finding:
        """A finding with the lines it used (each once) and the fix of its code."""
        used = tuple(dict.fromkeys(x for x in lines if x))[:LIBRARY_EVIDENCE]
        return Finding(code, severity, title, used, self.fixes.for_code(code, library), library)

    # --- the build ----------------------------------------------------------------------------------------------
    @cached_property
    def gpu_build(self) -> Seen | None:
        """A line proving the GPU build is installed: its CUDA provider library was loaded (and failed for a
        dependency, or reported a CUDA error), ONNX Runtime tried to create the CUDA provider, or get_device() said
        'GPU'."""
        said = self.ev.signal("gpu-build") or self.ev.signal("cuda-applied") or self.ev.signal("ran-on-cuda")
        if said := said or self.ev.signal("gpu-device"):  # get_device() says 'GPU': a build with CUDA
            return said
        # a printed provider list (available, or a session's) holding the CUDA provider: only a GPU build has it
        for listed in (*self.ev.providers, *self.ev.session_providers):
            if "CUDA" in listed.value.split(","):
                return Seen("gpu-build", listed.line)
        # a CPU build never loads CUDA's libraries: one it failed to load (not a framework's) proves a GPU build
        for error in self.ev.load_errors:
            if error.family in _CUDA_FAMILIES and not _OTHER_FRAMEWORK.search(error.line):
                return Seen("gpu-build", error.line)
        return None

    @cached_property
    def builds(self) -> tuple[OrtBuild, ...]:
        """The matrix's records of the onnxruntime-gpu release the log names (listed, else stated)."""
        if self.matrix is None:
            return ()
        versions = [d.version for d in self.ev.onnxruntime if d.is_gpu]
        stated = [s.value.split(" ", 1) for s in self.ev.ort_stated]
        versions += [v for flavour, v in stated if flavour == "onnxruntime-gpu"]
        if self.gpu_build:  # the GPU build is what runs: a version stated without a flavour is its version
            versions += [v for flavour, v in stated if flavour == "onnxruntime"]
        for version in versions:
            try:
                found = [b for b in builds_for(self.matrix, f"=={version}") if b.index_url is None]
            except ValueError:
                continue
            if found:
                return tuple(found)
        return ()

    @cached_property
    def build_cuda(self) -> tuple[int, str] | None:
        """(the CUDA major the build needs, the line that says it)."""
        if self.ev.cuda_required:
            return int(self.ev.cuda_required[0].value), self.ev.cuda_required[0].line
        if self.builds:
            build = self.builds[-1]
            return build.cuda_major, self._build_line()
        if said := self.ev.cuda_required_said:  # the user's words: weaker than a program's or the matrix's record
            return int(said[0].value), said[0].line
        return self.dated_build_cuda

    @property
    def build_needs(self) -> str:
        """ "the build needs CUDA 11", with the reason where the log's date gave it (no build named)."""
        if self.build_cuda is None:
            return ""
        said = f"the build needs CUDA {self.build_cuda[0]}"
        if any(s.line == self.build_cuda[1] for s in self.ev.cuda_required_said) and not self.ev.cuda_required:
            said += " (the log says so in words, not a program's output)"
        dated = self.dated_build_cuda
        if dated is not None and dated == self.build_cuda and self.ev.dated is not None:
            said += f" (every onnxruntime-gpu released by {self.ev.dated.value}, the log's date, was built for it)"
        return said

    @cached_property
    def dated_build_cuda(self) -> tuple[int, str] | None:
        """(the CUDA major, the dated line) for a Python log of the GPU build that names no version, where every
        onnxruntime-gpu released by the day the log was written (PyPI's and the feeds') is built for one CUDA
        major: the build that ran is one of them."""
        ev, matrix = self.ev, self.matrix
        if ev.dated is None or matrix is None or self.builds or ev.ort_stated or ev.jetson:
            return None
        bridge = any(
            s.value in ("module-not-found", "dll-init-failed", "provider-dll-init-failed")
            and _PROVIDER_BRIDGE.search(s.line)
            for s in ev.signals
        )  # Windows' loader failing on a provider library: only a build with shared providers loads one
        if not ((self.gpu_build or self.cuda_provider_failed or bridge) and ev.signal("python")):
            return None
        majors = cuda_majors_released_by(matrix, ev.dated.value)
        return (next(iter(majors)), ev.dated.line) if len(majors) == 1 else None

    @cached_property
    def build_cudnn(self) -> tuple[int, str] | None:
        """(the cuDNN major the build needs, the line that says it)."""
        if self.ev.cudnn_required:
            return int(self.ev.cudnn_required[0].value), self.ev.cudnn_required[0].line
        if self.builds and self.builds[-1].cudnn_version:
            return int(self.builds[-1].cudnn_version), self._build_line()
        return None

    @property
    def build_line(self) -> str:
        """The line naming the build (its listing, else its stated version)."""
        return self._build_line()

    def _build_line(self) -> str:
        gpu = [d for d in self.ev.onnxruntime if d.is_gpu]
        if gpu and gpu[0].location:
            return gpu[0].location
        return self.ev.ort_stated[0].line if self.ev.ort_stated else ""

    # --- what is installed --------------------------------------------------------------------------------------
    @cached_property
    def installed_cuda(self) -> dict[int, str]:
        """CUDA majors the log shows installed (nvcc, the toolkit's path, torch +cuNNN, nvidia-*-cuNN wheels)."""
        majors: dict[int, str] = {}
        for seen in self.ev.cuda_installed:
            if (value := version_major(seen.value)) is not None and 9 <= value <= 20:
                majors.setdefault(value, seen.line)
        for seen in self.ev.distributions:
            name = seen.value.split(" ", 1)[0]
            if name.startswith("nvidia-") and "-cu" in name:
                majors.setdefault(int(name.rsplit("-cu", 1)[1]), seen.line)
        for seen in self.ev.files:  # libcudart.so.12, cublasLt64_13.dll on disk: that CUDA major is installed
            number = major_of(seen.value)
            if library_family(seen.value) in ("cudart", "cublas", "cublasLt", "nvrtc") and number and number.isdigit():
                majors.setdefault(int(number), seen.line)
        return majors

    @cached_property
    def installed_cudnn(self) -> dict[int, str]:
        """cuDNN majors the log shows installed (stated versions, libcudnnN, nvidia-cudnn-cuNN's version)."""
        majors: dict[int, str] = {}
        for seen in self.ev.cudnn_installed:
            majors.setdefault(int(seen.value), seen.line)
        for seen in self.ev.distributions:
            name, version = seen.value.split(" ", 1)
            if name.startswith("nvidia-cudnn") and (value := version_major(version)) is not None:
                majors.setdefault(value, seen.line)
        for seen in self.ev.files:  # libcudnn.so.9, cudnn64_9.dll on disk
            if library_family(seen.value) == "cudnn" and (number := major_of(seen.value)) and number.isdigit():
                majors.setdefault(int(number), seen.line)
        return majors

    # --- libraries ----------------------------------------------------------------------------------------------
    @cached_property
    def _sonames(self) -> dict[str, tuple[str, ...]]:
        return sonames_by_cuda_major(self.matrix) if self.matrix is not None else {}

    def cuda_majors_needing(self, error: LoadError) -> set[int]:
        """The CUDA majors whose builds need this library file (libcufft.so.10: CUDA 11), from the matrix; empty
        when its major is unknown."""
        if error.major is None or error.family is None:
            return set()
        key = (error.family, error.major)
        if key not in self._needing:
            self._needing[key] = self._majors_needing(*key)
        return set(self._needing[key])

    @cached_property
    def _needing(self) -> dict[tuple[str, str], set[int]]:
        return {}

    def _majors_needing(self, family: str, major: str) -> set[int]:
        family = "cublas" if family == "cublasLt" else family
        found = set()
        for cuda, sonames in self._sonames.items():
            for soname in sonames:
                name_family = library_family(soname)
                same = name_family and ("cublas" if name_family == "cublasLt" else name_family) == family
                if same and soname.rsplit(".so.", 1)[-1] == major:
                    found.add(int(cuda))
        return found

    @cached_property
    def cuda_provider_failed(self) -> bool:
        """The CUDA provider did not load (not TensorRT's): its library failed or ONNX Runtime says so."""
        loaders = [e.needed_by or "" for e in self.ev.load_errors] + [s.value for s in self.ev.loading]
        return (
            bool(self.ev.signal("provider-failed"))
            or any("providers_cuda" in name.lower() for name in loaders)
            or any(e.needed_by is None and e.family not in ("nvinfer", "nvonnxparser") for e in self.ev.load_errors)
        )

    @cached_property
    def errors(self) -> dict[str, str]:
        """CUDA error name -> the first line showing it."""
        return {s.value: s.line for s in reversed(self.ev.cuda_errors)}

    @cached_property
    def cublas(self) -> dict[str, str]:
        """cuBLAS status name -> the first line showing it."""
        return {s.value: s.line for s in reversed(self.ev.cublas_errors)}

    @cached_property
    def nvidia_named(self) -> bool:
        """An NVIDIA GPU or driver is named."""
        ev = self.ev
        return bool(ev.gpus) or (ev.driver is not None and ev.driver.present and ev.driver.version is not None)
