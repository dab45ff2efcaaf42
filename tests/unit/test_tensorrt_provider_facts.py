"""What a release's TensorRT provider links and opens is a fact of its wheel, recorded once: in
onnxruntime-gpu.yaml, each platform's `tensorrt` provider library (bin/derive_release.py and `matrix update` read
it from the wheel). tensorrt.yaml holds where TensorRT comes from, not what the wheels hold; the planner's, the
loader hook's and doctor's view (`Matrix.tensorrt_providers`) is derived from the builds when the matrix loads."""

from __future__ import annotations

import io
import zipfile

import yaml

from provisioner.matrix.load import load_matrix, shipped_dir
from provisioner.matrix.query import linked_tensorrt_major, tensorrt_opened_later, tensorrt_provider, tensorrt_views
from provisioner.wheelfacts import provider_members, read_provider
from provisioner.ziprange import BytesSource, central_directory
from tests.support.binaries import elf_library

MATRIX = load_matrix(use_cache=False)


def _wheel(members: dict[str, bytes]) -> BytesSource:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return BytesSource(buffer.getvalue())


def test_a_tensorrt_provider_opens_the_tensorrt_libraries_it_names_and_does_not_link() -> None:
    """The read the matrix records (wheelfacts.read_provider): DT_NEEDED is what it links; a TensorRT soname only in
    its string tables (libnvinfer_plugin.so.10 from 1.25) is what it opens. A CUDA provider records no `opens`."""
    named_only = b"\0libnvinfer_plugin.so.10\0libcudnn.so.9\0"
    trt = elf_library(["libnvinfer.so.10", "libnvonnxparser.so.10", "libcudart.so.13"], b"", decoy=named_only)
    cuda = elf_library(["libcublas.so.13"], b"", decoy=named_only)
    source = _wheel(
        {
            "onnxruntime/capi/libonnxruntime_providers_tensorrt.so": trt,
            "onnxruntime/capi/libonnxruntime_providers_cuda.so": cuda,
        }
    )
    members = provider_members(central_directory(source))
    read = read_provider(source, members["tensorrt"], "tensorrt")
    assert read.needs == ("libnvinfer.so.10", "libnvonnxparser.so.10", "libcudart.so.13")
    assert read.opens == ("libnvinfer_plugin.so.10",)  # TensorRT's only: libcudnn.so.9 is not TensorRT
    assert read_provider(source, members["cuda"], "cuda").opens == ()


def test_tensorrt_yaml_no_longer_records_the_providers() -> None:
    data = yaml.safe_load((shipped_dir() / "tensorrt.yaml").read_text(encoding="utf-8"))
    assert "providers" not in data and {"releases", "packages"} <= set(data)


def test_the_view_is_the_builds_wheel_facts() -> None:
    """Every row of the view is a read platform of a PyPI build, and says what its `tensorrt` provider holds."""
    assert MATRIX.tensorrt_providers == tensorrt_views(MATRIX.builds)
    read = {
        (b.ort_version, p.platform): p
        for b in MATRIX.builds
        if b.index_url is None
        for p in b.platforms
        if p.providers is not None
    }
    assert {(v.ort_version, v.platform) for v in MATRIX.tensorrt_providers} == set(read)
    for view in MATRIX.tensorrt_providers:
        library = read[(view.ort_version, view.platform)].provider("tensorrt")
        assert (view.library is None) == (library is None)
        if library is not None:
            assert set(view.needed or ()) <= set(library.needs or ())
            assert set(view.named) == set(view.needed or ()) | set(library.opens)


def test_what_the_planner_the_loader_hook_and_doctor_ask_comes_from_the_builds() -> None:
    linux = tensorrt_provider(MATRIX, "1.31.1", "linux-x86_64")
    assert linux is not None and linux.needed == ("libnvinfer.so.10", "libnvonnxparser.so.10")
    assert linux.named == ("libnvinfer.so.10", "libnvinfer_plugin.so.10", "libnvonnxparser.so.10")
    aarch64 = tensorrt_provider(MATRIX, "1.31.1", "linux-aarch64")
    assert aarch64 is not None and aarch64.library is None  # --tensorrt on aarch64: exit 3 (test_tensorrt_plan.py)
    old = tensorrt_provider(MATRIX, "1.14.0", "linux-x86_64")
    assert old is not None and old.needed == () and "libnvinfer.so.8" in old.named  # patchelf emptied DT_NEEDED
    assert {"libnvinfer_plugin.so.10", "libnvinfer.so.8"} <= set(tensorrt_opened_later(MATRIX))


def test_the_tensorrt_major_a_release_links_is_read_from_its_wheels() -> None:
    """One home for 'which TensorRT major does this release's provider link': the planner's matrix, doctor's
    TensorRT reader and bin/derive_tensorrt.py's consistency check all ask linked_tensorrt_major."""
    views = MATRIX.tensorrt_providers
    for build in MATRIX.builds:
        linked = linked_tensorrt_major(views, build.ort_version)
        if linked is not None and build.tensorrt_version and build.index_url is None:
            assert linked == int(build.tensorrt_version.split(".")[0]), build.ort_version
    assert linked_tensorrt_major(views, "0.0.1") is None
    assert any(linked_tensorrt_major(views, b.ort_version) for b in MATRIX.builds)
