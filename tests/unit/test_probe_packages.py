"""provisioner.probe.target and .packages: the real probe program (standalone/packages_probe.py) run by a
real interpreter over a temporary folder standing for site-packages (handed to it through PYTHONPATH), fake
interpreters that hang or crash, and the pure parts."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from provisioner.errors import BadInput
from provisioner.facts import MissingFiles
from provisioner.probe import packages, target
from provisioner.standalone import packages_probe, protocol

GPU_BUILD_INFO = (
    "package_name = 'onnxruntime-gpu'\n__version__ = '1.31.1'\ncuda_version = '13.0'\ncudnn_version = '9.8'\n"
)
CPU_BUILD_INFO = "package_name = 'onnxruntime'\n__version__ = '1.30.0'\n"
TORCH_VERSION_PY = (
    "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
    "__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\ngit_version = 'abc'\n"
    "hip: Optional[str] = None\n"
)


def install_dist(
    site: Path,
    name: str,
    version: str,
    files: dict[str, str] | None = None,
    requires: list[str] | None = None,
    top_level: str | None = None,
) -> None:
    """A minimal installed distribution: dist-info with METADATA and RECORD, plus its files."""
    files = files or {}
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {req}\n" for req in requires or [])
    (info / "METADATA").write_text(metadata)
    if top_level is not None:
        (info / "top_level.txt").write_text(top_level)
    record = []
    for relative, content in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        record.append(f"{relative},,")
    record.append(f"{info.name}/METADATA,,")
    (info / "RECORD").write_text("\n".join(record) + "\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty site-packages the child sees first on sys.path."""
    folder = tmp_path / "site-packages"
    folder.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(folder))
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    return folder


def probe_dists(site: Path, python: str = sys.executable) -> packages.PackagesReport:
    report = target.start(python, timeout=30).result()
    assert not report.errors, report.errors
    return report


def ours(report: packages.PackagesReport, site: Path) -> list:
    return [dist for dist in report.onnxruntime if dist.location == str(site)]


def test_cpu_and_gpu_onnxruntime_both_installed(site: Path) -> None:
    # CPU installed after GPU: the shared build info file now says onnxruntime (the classic broken state).
    install_dist(site, "onnxruntime-gpu", "1.31.1", {"onnxruntime/__init__.py": ""}, top_level="onnxruntime\n")
    install_dist(
        site,
        "onnxruntime",
        "1.30.0",
        {"onnxruntime/__init__.py": "", "onnxruntime/capi/build_and_package_info.py": CPU_BUILD_INFO},
    )
    report = probe_dists(site)
    by_name = {dist.name: dist for dist in ours(report, site)}
    assert set(by_name) == {"onnxruntime", "onnxruntime-gpu"}
    assert by_name["onnxruntime-gpu"].version == "1.31.1" and by_name["onnxruntime-gpu"].is_gpu
    assert by_name["onnxruntime-gpu"].build_package_name == "onnxruntime"  # its files were overwritten
    assert by_name["onnxruntime-gpu"].cuda_version is None
    assert not by_name["onnxruntime"].is_gpu and by_name["onnxruntime"].build_package_name == "onnxruntime"


def test_gpu_build_facts_are_read_without_importing(site: Path) -> None:
    files = {
        "onnxruntime/__init__.py": "raise SystemExit('the probe must never import onnxruntime')\n",
        "onnxruntime/capi/build_and_package_info.py": GPU_BUILD_INFO,
    }
    install_dist(site, "onnxruntime-gpu", "1.31.1", files)
    install_dist(site, "onnxruntime-extensions", "0.14.0", {"onnxruntime_extensions/__init__.py": ""})
    (dist,) = ours(probe_dists(site), site)
    assert (dist.name, dist.cuda_version, dist.cudnn_version, dist.build_package_name) == (
        "onnxruntime-gpu",
        "13.0",
        "9.8",
        "onnxruntime-gpu",
    )


def test_torch_and_its_cuda_13_wheels(site: Path) -> None:
    install_dist(
        site,
        "torch",
        "2.11.0+cu130",
        {"torch/__init__.py": "raise SystemExit('never imported')\n", "torch/version.py": TORCH_VERSION_PY},
        requires=[
            'nvidia-cuda-runtime==13.0.96; platform_system == "Linux"',
            'nvidia-cudnn-cu13==9.13.0.50; platform_system == "Linux"',
            "optree>=0.13.0; extra == 'optree'",
        ],
    )
    install_dist(
        site,
        "nvidia-cuda-runtime",
        "13.0.96",
        {"nvidia/cu13/lib/libcudart.so.13": "", "nvidia/cu13/__init__.py": ""},
    )
    install_dist(site, "nvidia-cufft", "12.0.0.61", {"nvidia/cu13/lib/libcufft.so.12": ""})
    install_dist(
        site,
        "nvidia-cudnn-cu13",
        "9.13.0.50",
        {"nvidia/cudnn/lib/libcudnn.so.9": "", "nvidia/cudnn/include/cudnn.h": ""},
    )
    install_dist(site, "nvidia-cudnn-cu12", "9.1.0.70", {"nvidia/cudnn/bin/cudnn64_9.dll": ""})
    install_dist(site, "nvidia-ml-py", "13.610.0", {"pynvml.py": ""})
    report = probe_dists(site)
    assert report.torch is not None
    assert (report.torch.version, report.torch.cuda_version) == ("2.11.0+cu130", "13.0")
    assert report.torch.location == str(site)
    assert set(report.torch_requires) == {"nvidia-cuda-runtime", "nvidia-cudnn-cu13"}
    wheels = {wheel.name: wheel for wheel in report.nvidia_wheels}
    assert "nvidia-ml-py" not in wheels
    assert wheels["nvidia-cuda-runtime"].library == "cudart"
    assert wheels["nvidia-cuda-runtime"].cuda_major == 13
    assert wheels["nvidia-cuda-runtime"].lib_dirs == (str(site / "nvidia/cu13/lib"),)
    assert wheels["nvidia-cufft"].cuda_major == 13  # from nvidia/cu13/, not from its own version 12
    assert wheels["nvidia-cudnn-cu13"].lib_dirs == (str(site / "nvidia/cudnn/lib"),)
    assert wheels["nvidia-cudnn-cu12"].lib_dirs == (str(site / "nvidia/cudnn/bin"),)  # Windows layout


def test_files_the_record_lists_but_the_disk_lacks(site: Path) -> None:
    """The classic damage: removing the CPU flavour took the onnxruntime/ folder both flavours list."""
    ort_files = {
        "onnxruntime/__init__.py": "from onnxruntime.capi import x\n",
        "onnxruntime/capi/build_and_package_info.py": GPU_BUILD_INFO,
        "onnxruntime/capi/__pycache__/x.cpython-311.pyc": "byte-code",
    }
    install_dist(site, "onnxruntime-gpu", "1.31.1", ort_files, top_level="onnxruntime\n")
    install_dist(site, "nvidia-cudnn-cu12", "9.1.0.70", {"nvidia/cudnn/lib/libcudnn.so.9": "elf"})
    intact = {"nvidia/cublas/lib/libcublas.so.12": "elf", "nvidia/__init__.py": ""}
    install_dist(site, "nvidia-cublas-cu12", "12.4.5.8", intact)
    record = site / "nvidia_cublas_cu12-12.4.5.8.dist-info" / "RECORD"
    record.write_text(record.read_text().replace("nvidia/__init__.py,,", "nvidia/__init__.py,sha256=47DEQ,0"))
    shutil.rmtree(site / "onnxruntime")
    (site / "nvidia/cudnn/lib/libcudnn.so.9").unlink()
    (site / "nvidia/__init__.py").unlink()  # empty and shared by the NVIDIA wheels: losing it breaks nothing

    report = probe_dists(site)
    (ort,) = ours(report, site)
    assert ort.missing_files == MissingFiles(
        2, 3, ("onnxruntime/__init__.py", "onnxruntime/capi/build_and_package_info.py")
    )  # the byte-code is not counted; the dist-info's METADATA is the third file checked
    wheels = {wheel.name: wheel for wheel in report.nvidia_wheels}
    assert wheels["nvidia-cudnn-cu12"].missing_files == MissingFiles(1, 2, ("nvidia/cudnn/lib/libcudnn.so.9",))
    assert wheels["nvidia-cublas-cu12"].missing_files is None


def test_check_files_names_every_incomplete_distribution_of_the_environment(site: Path) -> None:
    install_dist(site, "requests-stub", "2.0", {"requests_stub/__init__.py": "x", "requests_stub/api.py": "y"})
    install_dist(site, "idna-stub", "3.0", {"idna_stub/__init__.py": "x"})
    install_dist(site, "onnxruntime-gpu", "1.31.1", {"onnxruntime/__init__.py": "x"})
    (site / "requests_stub" / "api.py").unlink()
    shutil.rmtree(site / "onnxruntime")
    report = target.check_files(sys.executable, timeout=60)
    assert not report.errors, report.errors
    here = {dist.name: dist for dist in report.incomplete if dist.location == str(site)}
    assert set(here) == {"requests-stub", "onnxruntime-gpu"}
    assert here["requests-stub"].version == "2.0"
    assert here["requests-stub"].missing_files == MissingFiles(1, 3, ("requests_stub/api.py",))
    assert here["onnxruntime-gpu"].missing_files.sample == ("onnxruntime/__init__.py",)


def test_check_files_of_an_interpreter_that_does_not_answer(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_bytes(b"\x00\x01not a program")
    python.chmod(0o755)
    report = target.check_files(str(python), timeout=5)
    assert report.incomplete == () and len(report.errors) == 1


def test_python_facts_of_the_running_interpreter(site: Path) -> None:
    python = probe_dists(site).python
    assert python is not None
    assert python.version == ".".join(map(str, sys.version_info[:3]))
    assert python.abi == f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert python.is_venv == (sys.prefix != sys.base_prefix)
    assert python.prefix == sys.prefix and not python.free_threaded


def test_conda_env_is_recognised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDA_PREFIX", sys.prefix)
    python = target.start(sys.executable, 30).result().python
    assert python is not None and python.is_conda


def write_fake_interpreter(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.skipif(os.name == "nt", reason="shell script interpreter")
def test_hanging_interpreter_times_out(tmp_path: Path) -> None:
    """Silent from the start: not a working Python, one sentence (BadInput: exit 2)."""
    python = write_fake_interpreter(tmp_path / "python", "sleep 30; echo late")  # the shell waits on a child
    started = time.monotonic()
    with pytest.raises(BadInput) as caught:
        target.start(python, timeout=0.5).result()
    assert time.monotonic() - started < 5
    assert str(caught.value) == (
        f"--python {python!r} is not a working Python interpreter: it did not answer within 0.5 s (killed)"
    )


@pytest.mark.skipif(os.name == "nt", reason="shell script interpreter")
def test_a_python_that_hangs_after_saying_hello_times_out_with_an_error_line(tmp_path: Path) -> None:
    """A working Python whose probe then hangs (a stuck file system): the facts say why they are missing."""
    python = write_fake_interpreter(tmp_path / "python", f"echo {packages_probe.HELLO}; sleep 30; echo late")
    started = time.monotonic()
    report = target.start(python, timeout=0.5).result()
    assert time.monotonic() - started < 5
    assert report.python is None
    assert report.errors == (f"package probe: {python} did not answer within 0.5 s (killed)",)


@pytest.mark.skipif(os.name == "nt", reason="shell script interpreter")
def test_hanging_interpreter_gets_a_few_seconds_to_say_hello(tmp_path: Path) -> None:
    python = write_fake_interpreter(tmp_path / "python", "sleep 60")
    started = time.monotonic()
    with pytest.raises(BadInput, match=f"did not answer within {target.START_TIMEOUT:g} s"):
        target.start(python, timeout=20).result()
    assert time.monotonic() - started < target.START_TIMEOUT + 3


@pytest.mark.skipif(os.name == "nt", reason="shell script interpreter")
def test_crashing_interpreter_gives_one_line(tmp_path: Path) -> None:
    python = write_fake_interpreter(tmp_path / "python", "echo 'Fatal Python error: init_fs_encoding' >&2; exit 1")
    with pytest.raises(BadInput) as caught:
        target.start(python, timeout=5).result()
    assert str(caught.value) == (
        f"--python {python!r} is not a working Python interpreter: it gave no answer "
        "(exit code 1: Fatal Python error: init_fs_encoding)"
    )
    crashed_later = write_fake_interpreter(
        tmp_path / "python3", f"echo {packages_probe.HELLO}; echo 'MemoryError' >&2; exit 1"
    )
    report = target.start(crashed_later, timeout=5).result()
    assert report.errors == (f"package probe: {crashed_later} gave no answer (exit code 1: MemoryError)",)


def test_unstartable_interpreter(tmp_path: Path) -> None:
    path = tmp_path / "python"
    path.write_bytes(b"\x00\x01not a program")
    path.chmod(0o755)
    with pytest.raises(BadInput, match="is not a working Python interpreter: it could not be started"):
        target.start(str(path), timeout=5).result()


def test_parse_child_output_ignores_chatter_and_garbage() -> None:
    answer = protocol.MARKER + '{"python": {"version": "3.12.3"}, "errors": ["x"]}'
    chatter = f'sitecustomize says hi\n{{"python": {{"version": "0.0"}}}}\n{answer}\n'
    report = packages.parse_child_output(chatter, "", 0, "py")
    assert report.python is not None and report.python.version == "3.12.3"
    assert report.errors == ("package probe: x",)
    broken = packages.parse_child_output(protocol.MARKER + "{not json\n", "", 0, "py")
    assert broken.python is None and broken.errors[0].startswith("package probe: unreadable answer")


def test_find_interpreter_paths(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        target.find_interpreter(str(tmp_path / "missing/python"), {})
    with pytest.raises(BadInput, match="folder without a Python"):
        target.find_interpreter(str(tmp_path), {})
    not_executable = tmp_path / "python.txt"
    not_executable.write_text("")
    with pytest.raises(BadInput, match="not executable"):
        target.find_interpreter(str(not_executable), {})
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    interpreter = Path(write_fake_interpreter(venv / "bin/python", "true"))
    assert target.find_interpreter(str(venv), {}) == str(interpreter)
    assert target.find_interpreter(None, {"VIRTUAL_ENV": str(venv)}) == str(interpreter)
    assert target.find_interpreter(None, {}) == sys.executable
    assert target.find_interpreter("python", {"PATH": str(venv / "bin")}) == str(interpreter)
    assert target.active_interpreter({"CONDA_PREFIX": str(venv)}) == str(interpreter)
    assert target.active_interpreter({}) is None


@pytest.mark.parametrize(
    ("name", "version", "lib_dirs", "library", "major"),
    [
        ("nvidia-cudnn-cu12", "9.1.0.70", (), "cudnn", 12),
        ("nvidia-cudnn-cu13", "9.13.0.50", (), "cudnn", 13),
        ("nvidia-cuda-runtime-cu11", "11.8.89", (), "cudart", 11),
        ("nvidia-cuda-runtime", "13.0.96", (), "cudart", 13),
        ("nvidia-cublas", "13.1.0.3", (), "cublas", 13),
        ("nvidia-cuda-nvrtc", "13.0.88", (), "nvrtc", 13),
        ("nvidia-cufft", "12.0.0.61", (), "cufft", None),  # its version is cuFFT's, not CUDA's
        ("nvidia-curand", "10.4.0.35", ("/sp/nvidia/cu13/lib",), "curand", 13),
        ("nvidia-curand", "10.4.0.35", ("C:\\sp\\nvidia\\cu13\\bin",), "curand", 13),
        ("tensorrt-cu12-libs", "10.3.0", (), "tensorrt", 12),
        ("nvidia-nccl-cu12", "2.21.5", (), "nccl", 12),
    ],
)
def test_wheel_library_and_cuda_major(
    name: str, version: str, lib_dirs: tuple[str, ...], library: str, major: int | None
) -> None:
    wheel = packages.nvidia_wheel(name, version, lib_dirs)
    assert (wheel.library, wheel.cuda_major) == (library, major)


OLD_PYTHONS = sorted(Path("/root/.pyenv/versions").glob("3.*/bin/python3.*[0-9]"))


@pytest.mark.parametrize("python", OLD_PYTHONS, ids=[p.parts[-3] for p in OLD_PYTHONS])
def test_child_runs_on_every_supported_python_here(python: Path, site: Path) -> None:
    version = tuple(int(part) for part in python.parts[-3].split(".")[:2])
    if version < (3, 8):
        pytest.skip("the child supports Python 3.8+")
    install_dist(site, "onnxruntime-gpu", "1.19.2", {"onnxruntime/capi/build_and_package_info.py": GPU_BUILD_INFO})
    report = probe_dists(site, str(python))
    assert report.python is not None and report.python.version.startswith(python.parts[-3].rsplit(".", 1)[0])
    assert [dist.name for dist in ours(report, site)] == ["onnxruntime-gpu"]


def test_egg_info_and_quoted_record_entries(site: Path) -> None:
    egg = site / "onnxruntime_gpu-1.8.0-py3.8.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: onnxruntime-gpu\nVersion: 1.8.0\n\nlong text: x\n")
    (egg / "installed-files.txt").write_text("../onnxruntime/__init__.py\nPKG-INFO\n")
    (site / "tensorrt-8.6.1-py3.8.egg-info").write_text("Metadata-Version: 1.1\nName: tensorrt\nVersion: 8.6.1\n")
    info = site / "nvidia_cublas_cu12-12.4.5.8.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cublas-cu12\nVersion: 12.4.5.8\n")
    (info / "RECORD").write_text('"nvidia/cublas/lib,odd/libcublas.so.12",sha256=x,1\nnvidia/__init__.py,,\n')
    report = probe_dists(site)
    assert [(d.name, d.version) for d in ours(report, site)] == [("onnxruntime-gpu", "1.8.0")]
    wheels = {wheel.name: wheel for wheel in report.nvidia_wheels}
    assert wheels["tensorrt"].version == "8.6.1" and wheels["tensorrt"].lib_dirs == ()
    assert wheels["nvidia-cublas-cu12"].lib_dirs == (str(site / "nvidia/cublas/lib,odd"),)


def test_same_answer_as_importlib_metadata(site: Path) -> None:
    """The light dist-info reader finds exactly what importlib.metadata finds."""
    import importlib.metadata

    install_dist(site, "onnxruntime-directml", "1.20.1", {"onnxruntime/__init__.py": ""})
    install_dist(site, "ort-nightly-gpu", "1.21.0.dev20241201", {"onnxruntime/__init__.py": ""})
    install_dist(site, "nvidia-nccl-cu12", "2.21.5", {"nvidia/nccl/lib/libnccl.so.2": ""})
    install_dist(site, "torchvision", "0.26.0", {"torchvision/__init__.py": ""})
    report = probe_dists(site)
    found = {(d.name, d.version) for d in ours(report, site)} | {(w.name, w.version) for w in report.nvidia_wheels}
    expected = {
        (dist.metadata["Name"], dist.version)
        for dist in importlib.metadata.distributions(path=[str(site)])
        if dist.metadata["Name"].startswith(("onnxruntime", "ort-nightly", "nvidia-"))
    }
    assert (
        found
        == expected
        == {
            ("onnxruntime-directml", "1.20.1"),
            ("ort-nightly-gpu", "1.21.0.dev20241201"),
            ("nvidia-nccl-cu12", "2.21.5"),
        }
    )


def test_every_distribution_and_where_the_target_installs(site: Path) -> None:
    """One answer serves apply too: every distribution (first on sys.path wins), pip, the install folders."""
    import importlib.metadata
    import sysconfig

    install_dist(site, "Requests_Stub", "2.0", {"requests_stub/__init__.py": ""})
    install_dist(site, "pip", "0.1", {"pip/__init__.py": ""})  # shadows the venv's own pip
    report = probe_dists(site)
    found = dict(report.distributions)
    assert found["requests-stub"] == "2.0" and found["pip"] == "0.1"
    for dist in importlib.metadata.distributions():
        assert packages_probe.normalize(dist.metadata["Name"]) in found
    assert (report.purelib, report.platlib, report.scripts) == tuple(
        sysconfig.get_paths()[key] for key in ("purelib", "platlib", "scripts")
    )
    assert report.interpreter == sys.executable
