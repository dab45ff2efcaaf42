"""Build small, valid wheels under real names (onnxruntime-gpu, nvidia-cudnn-cu12, ...) in milliseconds.

A wheel is a zip with the package files and `<name>-<version>.dist-info/{METADATA,WHEEL,RECORD}`;
pip and uv install it like any other. Use `build_wheel(dest, WheelSpec(...))`, or `ort_family()` for
the onnxruntime / onnxruntime-gpu / NVIDIA library family.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


@dataclass(frozen=True)
class WheelSpec:
    """One wheel: a distribution name and version, what it requires, and the files it ships."""

    name: str
    version: str
    requires: tuple[str, ...] = ()  # Requires-Dist lines, e.g. 'nvidia-cudnn-cu12>=9; extra == "cudnn"'
    extras: tuple[str, ...] = ()  # Provides-Extra
    files: Mapping[str, str | bytes] = field(default_factory=dict)  # path in the wheel -> content
    tag: str = "py3-none-any"
    padding: int = 0  # extra bytes in a payload file, to make downloads take a while

    @property
    def normalized(self) -> str:
        """The file-name form of the name (onnxruntime_gpu)."""
        return re.sub(r"[-_.]+", "_", self.name).lower()

    @property
    def filename(self) -> str:
        """onnxruntime_gpu-1.31.1-py3-none-any.whl"""
        return f"{self.normalized}-{self.version}-{self.tag}.whl"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_wheel(dest: Path, spec: WheelSpec) -> Path:
    """Write the wheel into `dest` and return its path."""
    dest.mkdir(parents=True, exist_ok=True)
    dist_info = f"{spec.normalized}-{spec.version}.dist-info"
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {spec.name}",
        f"Version: {spec.version}",
        "Summary: test wheel built by tests/support/wheels.py",
    ]
    metadata += [f"Provides-Extra: {extra}" for extra in spec.extras]
    metadata += [f"Requires-Dist: {req}" for req in spec.requires]
    wheel = ["Wheel-Version: 1.0", "Generator: ortprov-tests", "Root-Is-Purelib: true", f"Tag: {spec.tag}"]
    contents: dict[str, bytes] = {
        path: (text.encode() if isinstance(text, str) else text) for path, text in spec.files.items()
    }
    if spec.padding:
        contents[f"{spec.normalized}_payload.bin"] = bytes(spec.padding)
    contents[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    contents[f"{dist_info}/WHEEL"] = ("\n".join(wheel) + "\n").encode()
    record = [f"{path},{_record_hash(data)},{len(data)}" for path, data in contents.items()]
    record.append(f"{dist_info}/RECORD,,")
    contents[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = dest / spec.filename
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in contents.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data)
    return path


def installed(distribution: str, **changes: object) -> WheelSpec:
    """A WheelSpec of a distribution installed in the interpreter running the tests (its RECORD's files under
    site-packages, bytes as installed): real code, compiled for this interpreter, to put in a test index.
    `changes` replace WheelSpec fields (another name or version; `files` are added to the installed ones)."""
    import importlib.metadata

    found = importlib.metadata.distribution(distribution)
    files: dict[str, str | bytes] = {}
    for entry in found.files or ():
        path = str(entry)
        if path.startswith("..") or ".dist-info/" in path or "__pycache__" in path:
            continue
        files[path] = Path(str(found.locate_file(entry))).read_bytes()
    files.update(changes.pop("files", {}))  # type: ignore[arg-type]
    spec = WheelSpec(found.metadata["Name"], found.version, files=files)
    return WheelSpec(**{**spec.__dict__, **changes})  # type: ignore[arg-type]


def build_wheels(dest: Path, specs: Iterable[WheelSpec]) -> list[Path]:
    """build_wheel for each spec."""
    return [build_wheel(dest, spec) for spec in specs]


def _ort_files(package: str, version: str, cuda: str | None) -> dict[str, str | bytes]:
    info = f"package_name = {package!r}\n__version__ = {version!r}\n"
    if cuda:
        info += f"cuda_version = {cuda!r}\ncudnn_version = '9'\n"
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]
    init = (
        f"# a test stub of {package} {version}: says which flavour's files `import onnxruntime` loaded\n"
        f"__version__ = {version!r}\n"
        f"FLAVOUR = {package!r}\n\n\n"
        f"def get_device():\n    return {'GPU' if cuda else 'CPU'!r}\n\n\n"
        f"def get_available_providers():\n    return {providers!r}\n"
    )
    return {
        "onnxruntime/__init__.py": init,
        "onnxruntime/capi/__init__.py": "",
        "onnxruntime/capi/build_and_package_info.py": info,
    }


def ort_cpu(version: str = "1.30.0", padding: int = 0) -> WheelSpec:
    """The CPU onnxruntime, with the same `onnxruntime/` files as the GPU flavour (as the real ones have)."""
    return WheelSpec(
        "onnxruntime",
        version,
        requires=("numpy-stub>=1",),
        files=_ort_files("onnxruntime", version, None),
        padding=padding,
    )


def ort_gpu(
    version: str = "1.31.1", cuda_major: str = "12", padding: int = 0, extra_requires: tuple[str, ...] = ()
) -> WheelSpec:
    """onnxruntime-gpu with the `cuda` and `cudnn` extras that pull NVIDIA wheels, like the real one."""
    suffix = f"-cu{cuda_major}"
    requires = (
        "numpy-stub>=1",
        f'nvidia-cuda-runtime{suffix}>={cuda_major}; extra == "cuda"',
        f'nvidia-cublas{suffix}>={cuda_major}; extra == "cuda"',
        f'nvidia-cudnn{suffix}>=9; extra == "cudnn"',
        *extra_requires,
    )
    return WheelSpec(
        "onnxruntime-gpu",
        version,
        requires=requires,
        extras=("cuda", "cudnn"),
        files=_ort_files("onnxruntime-gpu", version, f"{cuda_major}.0"),
        padding=padding,
    )


def nvidia_lib(name: str, version: str, library: str, padding: int = 0) -> WheelSpec:
    """An NVIDIA library wheel putting a (fake) shared object under nvidia/<library>/lib."""
    return WheelSpec(
        name,
        version,
        files={
            "nvidia/__init__.py": "",
            f"nvidia/{library}/__init__.py": "",
            f"nvidia/{library}/lib/lib{library}.so.{version.split('.')[0]}": b"\x7fELF stub\n",
        },
        padding=padding,
    )


def ort_family(cuda_major: str = "12") -> list[WheelSpec]:
    """CPU and GPU onnxruntime, the NVIDIA wheels the GPU extras pull, and a numpy stand-in."""
    suffix = f"-cu{cuda_major}"
    return [
        WheelSpec("numpy-stub", "1.0.0", files={"numpy_stub/__init__.py": ""}),
        ort_cpu("1.30.0"),
        ort_gpu("1.31.1", cuda_major),
        nvidia_lib(f"nvidia-cuda-runtime{suffix}", f"{cuda_major}.4.127", "cuda_runtime"),
        nvidia_lib(f"nvidia-cublas{suffix}", f"{cuda_major}.4.5.8", "cublas"),
        nvidia_lib(f"nvidia-cudnn{suffix}", "9.1.0.70", "cudnn"),
        nvidia_lib(f"nvidia-cudnn{suffix}", "8.9.7.29", "cudnn"),
    ]


def damage(wheel: Path, how: str) -> Path:
    """Damage a built wheel in place, as a bad disk or an interrupted copy would: `crc` flips one byte of the
    first package file's data (the archive still lists it; extracting fails its CRC-32 check), `truncate`
    keeps the first half of the file (no central directory: not a zip archive any more)."""
    data = bytearray(wheel.read_bytes())
    if how == "truncate":
        wheel.write_bytes(bytes(data[: len(data) // 2]))
        return wheel
    with zipfile.ZipFile(wheel) as archive:
        info = next(i for i in archive.infolist() if ".dist-info/" not in i.filename and i.file_size)
    # the local header: 30 bytes, then the name and the extra field, then the (stored) data
    name_length = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_length = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    at = info.header_offset + 30 + name_length + extra_length
    data[at] ^= 0xFF
    wheel.write_bytes(bytes(data))
    return wheel
