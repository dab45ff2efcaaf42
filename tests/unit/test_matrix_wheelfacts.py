"""Reading wheel facts: zip central directory and members by byte ranges, ELF sonames, METADATA, names."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import onnxruntime
import pytest

from provisioner.matrix.derive import (
    IndexFile,
    build_from_facts,
    parse_simple_html,
    parse_simple_json,
    wheels_by_version,
)
from provisioner.matrix.load import load_matrix
from provisioner.wheelfacts import (
    WheelFacts,
    elf_needed_sonames,
    has_preload_dlls,
    parse_build_info,
    parse_metadata,
    parse_wheel_name,
    read_wheel_facts,
)
from provisioner.ziprange import BytesSource, ZipRangeError, central_directory, read_member


class CountingSource(BytesSource):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.served = 0

    def read(self, offset: int, length: int) -> bytes:
        chunk = super().read(offset, length)
        self.served += len(chunk)
        return chunk


def make_zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED, zip64: bool = False) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members.items():
            with archive.open(zipfile.ZipInfo(name), "w", force_zip64=zip64) as handle:
                handle.write(data)
    return buffer.getvalue()


def test_members_read_by_ranges_without_reading_the_rest() -> None:
    big = bytes(range(256)) * 40_000  # ~10 MB that compresses poorly enough to matter
    data = make_zip({"a/small.txt": b"hello", "a/big.bin": big, "z.txt": b"last"})
    source = CountingSource(data)
    entries = central_directory(source)
    assert set(entries) == {"a/small.txt", "a/big.bin", "z.txt"}
    assert read_member(source, entries["a/small.txt"]) == b"hello"
    assert read_member(source, entries["z.txt"]) == b"last"
    assert source.served < 100_000 < len(data)
    prefix = read_member(source, entries["a/big.bin"], max_bytes=300_000)
    assert prefix == big[:300_000]


def test_zip64_and_stored_members() -> None:
    data = make_zip({"x.bin": b"0123456789" * 10, "y.txt": b"why"}, compression=zipfile.ZIP_STORED, zip64=True)
    source = BytesSource(data)
    entries = central_directory(source)
    assert read_member(source, entries["x.bin"], max_bytes=5) == b"01234"
    assert read_member(source, entries["y.txt"]) == b"why"


def test_not_a_zip() -> None:
    with pytest.raises(ZipRangeError, match="not a zip"):
        central_directory(BytesSource(b"just some bytes" * 10))


def test_elf_sonames_agree_with_readelf() -> None:
    if not shutil.which("readelf"):
        pytest.skip("readelf not installed")
    library = next(Path(onnxruntime.__file__).parent.joinpath("capi").glob("onnxruntime_pybind11_state*.so"))
    out = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))
    system = {n for n in needed if re.match(r"(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux)", n)}
    found = elf_needed_sonames(library.read_bytes())
    assert found is not None
    assert needed - system <= set(found)
    assert not system & set(found)


def test_elf_prefix_without_tables_is_unknown_not_empty() -> None:
    assert elf_needed_sonames(b"\x7fELF\x02\x01" + bytes(4000)) is None
    assert elf_needed_sonames(b"MZ not an elf") is None


def test_parsers() -> None:
    info = parse_build_info("package_name = 'onnxruntime-gpu'\ncuda_version = '13.0'\nimport os\nos.system('false')\n")
    assert info == {"package_name": "onnxruntime-gpu", "cuda_version": "13.0"}
    requires_python, extras = parse_metadata(
        "Metadata-Version: 2.1\nName: onnxruntime-gpu\nRequires-Python: >=3.11\nProvides-Extra: cuda\n"
        'Requires-Dist: nvidia-cuda-runtime~=13.0; extra == "cuda"\nProvides-Extra: cudnn\n'
        "Requires-Dist: nvidia-cudnn-cu13 ~= 9.0 ; extra == 'cudnn'\nRequires-Dist: numpy>=1.21\n\n"
        'Requires-Dist: in-the-body; extra == "cuda"\n'
    )
    assert requires_python == ">=3.11"
    assert extras == {"cuda": ("nvidia-cuda-runtime~=13.0",), "cudnn": ("nvidia-cudnn-cu13~=9.0",)}
    assert has_preload_dlls("def preload_dlls(cuda=True):\n    pass\n")
    assert not has_preload_dlls("# preload_dlls is coming\n")


@pytest.mark.parametrize(
    ("filename", "python", "platform", "glibc"),
    [
        (
            "onnxruntime_gpu-1.20.0-cp313-cp313t-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
            "3.13t",
            "linux-x86_64",
            "2.27",
        ),
        (
            "onnxruntime_gpu-1.14.0-cp37-cp37m-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
            "3.7",
            "linux-x86_64",
            "2.17",
        ),
        ("onnxruntime_gpu-1.31.1-cp314-cp314-manylinux_2_34_aarch64.whl", "3.14", "linux-aarch64", "2.34"),
        ("onnxruntime_gpu-1.31.1-cp311-cp311-win_amd64.whl", "3.11", "windows-amd64", None),
    ],
)
def test_wheel_names(filename: str, python: str, platform: str, glibc: str | None) -> None:
    name = parse_wheel_name(filename)
    assert name is not None and (name.python, name.platform, name.glibc_min) == (python, platform, glibc)


def test_read_wheel_facts_from_a_zip() -> None:
    data = make_zip(
        {
            "onnxruntime/__init__.py": b"def preload_dlls():\n    pass\n",
            "onnxruntime/capi/build_and_package_info.py": b"cuda_version = '12.8'\n",
            "onnxruntime_gpu-1.40.0.dist-info/METADATA": b"Name: onnxruntime-gpu\nProvides-Extra: cudnn\n"
            b'Requires-Dist: nvidia-cudnn-cu12~=9.0; extra == "cudnn"\n',
        }
    )
    facts = read_wheel_facts(BytesSource(data))
    assert facts.cuda_version == "12.8" and facts.preload_dlls
    assert facts.extras == {"cudnn": ("nvidia-cudnn-cu12~=9.0",)}
    assert facts.cuda_provider_libraries is None  # no provider in this wheel: unknown, not "links nothing"


def test_simple_api_parsers_resolve_relative_urls() -> None:
    files = parse_simple_json(
        {
            "files": [
                {
                    "filename": "onnxruntime_gpu-1.40.0-cp312-cp312-win_amd64.whl",
                    "url": "../../f/x.whl",
                    "yanked": "bad",
                }
            ]
        },
        "https://mirror.example/simple/onnxruntime-gpu/",
    )
    assert files[0].url == "https://mirror.example/f/x.whl" and files[0].yanked
    html_files = parse_simple_html(
        '<a href="../../f/y.whl#sha256=00" data-requires-python="&gt;=3.11">'
        "onnxruntime_gpu-1.40.0-cp312-cp312-win_amd64.whl</a>",
        "https://mirror.example/simple/onnxruntime-gpu/",
    )
    assert html_files[0].url == "https://mirror.example/f/y.whl#sha256=00" and html_files[0].requires_python == ">=3.11"


def _facts(
    extras: dict[str, tuple[str, ...]], cuda: str | None = "13.0", libs: tuple[str, ...] | None = None
) -> WheelFacts:
    return WheelFacts(
        build_info={"cuda_version": cuda} if cuda else {},
        cuda_version=cuda,
        cudnn_version=None,
        requires_python=">=3.11",
        extras=extras,
        preload_dlls=True,
        cuda_provider_libraries=libs,
        tensorrt_provider_libraries=None,
    )


def test_broken_extra_is_dropped_and_replaced_by_the_right_package() -> None:
    majors = {m.major: m for m in load_matrix().cuda_majors}
    files = [IndexFile("onnxruntime_gpu-1.40.0-cp312-cp312-manylinux_2_28_x86_64.whl", "https://x/a.whl")]
    wheels = wheels_by_version(files)["1.40.0"]
    facts = {
        "linux-x86_64": _facts(
            {"cuda": ("nvidia-cuda-runtime-cu13~=13.0",), "cudnn": ("nvidia-cudnn-cu13~=9.0",)},
            libs=("libcublas.so.13", "libcudart.so.13"),
        )
    }
    build, notes = build_from_facts("1.40.0", wheels, facts, majors)
    assert build is not None
    assert build.extras == ("cudnn",)
    assert build.requirements == (
        "nvidia-cublas~=13.0",
        "nvidia-cuda-runtime~=13.0",
        "nvidia-cudnn-cu13~=9.0",
    )
    assert build.libraries_lazy == ("libcudnn.so.9",) and build.cudnn_version == "9"
    assert any("nvidia-cuda-runtime-cu13" in n for n in notes)


def test_release_without_cuda_version_is_not_guessed() -> None:
    files = [IndexFile("onnxruntime_gpu-1.40.0-cp312-cp312-win_amd64.whl", "https://x/a.whl")]
    build, notes = build_from_facts(
        "1.40.0", wheels_by_version(files)["1.40.0"], {"windows-amd64": _facts({}, cuda=None)}, {}
    )
    assert build is None and "do not say which CUDA version" in notes[0]


def test_a_release_is_dated_by_its_first_wheel_on_the_index() -> None:
    page = {
        "files": [
            {
                "filename": f"onnxruntime_gpu-1.40.0-cp3{m}-cp3{m}-win_amd64.whl",
                "url": "x.whl",
                "upload-time": t,
            }
            for m, t in ((12, "2027-03-02T10:00:00.1Z"), (11, "2027-03-01T23:59:00.1Z"))
        ]
    }
    files = parse_simple_json(page, "https://pypi.example/simple/onnxruntime-gpu/")
    assert files[1].upload_time == "2027-03-01T23:59:00.1Z"
    majors = {m.major: m for m in load_matrix().cuda_majors}
    build, _ = build_from_facts("1.40.0", wheels_by_version(files)["1.40.0"], {"windows-amd64": _facts({})}, majors)
    assert build is not None and build.released == "2027-03-01"


def test_every_pypi_build_in_the_matrix_is_dated_and_the_majors_out_by_a_day_follow() -> None:
    from provisioner.matrix.query import cuda_majors_released_by

    matrix = load_matrix(use_cache=False)
    assert all(b.released for b in matrix.builds)  # feed builds carry their PyPI twin's day
    first = min(b.released or "" for b in matrix.builds)
    assert cuda_majors_released_by(matrix, "2000-01-01") == frozenset()
    assert len(cuda_majors_released_by(matrix, first)) == 1
    assert len(cuda_majors_released_by(matrix, max(b.released or "" for b in matrix.builds))) > 1
