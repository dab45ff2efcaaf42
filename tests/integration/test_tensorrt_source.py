"""Where TensorRT comes from, for real: pip, venvs and two package indexes on 127.0.0.1, one standing for PyPI
(NVIDIA's source stub of tensorrt-cu13-libs, built by NVIDIA's real wheel-stub backend) and one for NVIDIA's index
or its mirror (a small wheel under the real name, `tensorrt_libs/libnvinfer.so.10` inside). What cannot exist
here is only the real 3.7 GB wheel: its stand-in is the narrowest fake.

The plan is the planner's own (`ortprov plan --tensorrt-index-url ... --json`), cut to its TensorRT step: the
rest of it pins NVIDIA's CUDA wheels, which these indexes do not serve."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import tarfile
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import run_ortprov
from tests.support.envs import clean_env, make_venv, tree_digest, venv_python
from tests.support.index_server import IndexServer
from tests.support.wheels import WheelSpec, build_wheel

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e

PIN = "tensorrt-cu13-libs==10.16.1.11"
REAL_WHEEL = WheelSpec(
    "tensorrt-cu13-libs",
    "10.16.1.11",
    files={"tensorrt_libs/__init__.py": "", "tensorrt_libs/libnvinfer.so.10": b"\x7fELF stand-in"},
)
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stub_sdist(dest: Path, index_url: str) -> Path:
    """NVIDIA's stub, as on PyPI (pyproject.toml naming the wheel-stub backend and its index, PKG-INFO)."""
    files = {
        "pyproject.toml": (
            '[build-system]\nrequires = ["wheel-stub"]\nbuild-backend = "wheel_stub.buildapi"\n\n'
            f'[tool.wheel_stub]\nindex_url = "{index_url}"\ninclude_cuda_debuginfo = false\n'
        ),
        "PKG-INFO": (
            "Metadata-Version: 2.1\nName: tensorrt_cu13_libs\nVersion: 10.16.1.11\nSummary: TensorRT Libraries\n"
        ),
    }
    path = dest / "tensorrt_cu13_libs-10.16.1.11.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"tensorrt_cu13_libs-10.16.1.11/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture(scope="module")
def nvidia_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nvidia")
    build_wheel(root, REAL_WHEEL)
    return root


@pytest.fixture
def nvidia(nvidia_dir: Path):
    with IndexServer(nvidia_dir) as server:
        yield server


def tensorrt_plan(tmp_path: Path, index_url: str) -> Path:
    """The planner's plan for an H100 with --tensorrt-index-url, cut to its TensorRT step."""
    result = run_ortprov(
        "plan", "--driver", "580", "--gpu-cc", "9.0", "--python", PYTHON, "--platform", "linux-x86_64",
        "--tensorrt-index-url", index_url, "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    plan["steps"] = [s for s in plan["steps"] if s.get("only_binary")]
    assert [s["packages"] for s in plan["steps"]] == [[PIN]]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return path


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def test_apply_installs_the_real_wheel_from_the_tensorrt_index_never_the_stub(
    tmp_path: Path, nvidia: IndexServer
) -> None:
    pypi_dir = tmp_path / "pypi"
    pypi_dir.mkdir()
    stub_sdist(pypi_dir, f"http://127.0.0.1:{closed_port()}/")
    with IndexServer(pypi_dir) as pypi:
        plan = tensorrt_plan(tmp_path, nvidia.url)
        venv = tmp_path / "venv"
        result = run_ortprov(
            "apply", "--plan", str(plan), "--venv", str(venv), "--installer", "pip", "--index-url", pypi.url,
            "--no-verify", "-y", env={**clean_env(tmp_path)},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert f"tensorrt: {PIN} is available from {nvidia.url}" in result.stderr  # the preflight
        assert (site_packages(venv) / "tensorrt_libs" / "libnvinfer.so.10").is_file()
        assert nvidia.downloads(REAL_WHEEL.filename) == 1
        assert not any("tensorrt" in r for r in pypi.requests)  # PyPI (and its stub) was never asked


def test_an_unreachable_source_exits_1_listing_the_ways_and_changes_nothing(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    venv = tmp_path / "venv"
    make_venv(venv, env)
    before = tree_digest(venv)
    plan = tensorrt_plan(tmp_path, f"http://127.0.0.1:{closed_port()}/simple/")
    result = run_ortprov(
        "apply", "--plan", str(plan), "--python", str(venv_python(venv)), "--installer", "pip", "--no-verify", "-y",
        env=env,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    error = result.stderr
    assert f"the TensorRT wheel {PIN} cannot be had" in error and "nothing was changed" in error
    for way in (
        "ortprov download --dest DIR",
        "--tensorrt-index-url URL",
        "--tensorrt-libraries system",
        "TensorRT 10",
    ):
        assert way in error
    assert "snapshot" not in error  # refused before the transaction began
    assert tree_digest(venv) == before


def test_download_fills_a_wheelhouse_that_apply_installs_offline(tmp_path: Path, nvidia_dir: Path) -> None:
    wheelhouse = tmp_path / "wheels"
    with IndexServer(nvidia_dir) as nvidia:
        plan = tensorrt_plan(tmp_path, nvidia.url)
        result = run_ortprov(
            "download", "--dest", str(wheelhouse), "--plan", str(plan), "--python", PYTHON,
            "--platform", "linux-x86_64", env=clean_env(tmp_path),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
    assert (wheelhouse / REAL_WHEEL.filename).is_file()  # the server is gone from here on
    venv = tmp_path / "venv"
    result = run_ortprov(
        "apply", "--wheelhouse", str(wheelhouse), "--venv", str(venv), "--installer", "pip", "--no-verify", "-y",
        env=clean_env(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"is available from {wheelhouse}" in result.stderr
    assert (site_packages(venv) / "tensorrt_libs" / "libnvinfer.so.10").is_file()


@pytest.fixture(scope="module")
def wheel_stub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """NVIDIA's real wheel-stub build backend (the one the stubs on PyPI name), from PyPI."""
    dest = tmp_path_factory.mktemp("wheel-stub")
    fetched = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(dest), "wheel-stub"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    wheels = list(dest.glob("wheel_stub-*.whl"))
    if fetched.returncode != 0 or not wheels:
        pytest.skip(f"wheel-stub could not be fetched from PyPI: {fetched.stderr[-300:]}")
    return wheels[0]


@pytest.mark.network
def test_the_stub_downloads_from_the_mirror_the_plan_hands_it(
    tmp_path: Path, nvidia: IndexServer, wheel_stub: Path
) -> None:
    pypi_dir = tmp_path / "pypi"
    pypi_dir.mkdir()
    (pypi_dir / wheel_stub.name).write_bytes(wheel_stub.read_bytes())
    stub_sdist(pypi_dir, f"http://127.0.0.1:{closed_port()}/")  # its own index: unreachable
    plan = json.loads(tensorrt_plan(tmp_path, nvidia.url).read_text())
    (step,) = plan["steps"]
    handed = dict(item.split("=", 1) for item in step["environment"])
    assert handed == {"WHEEL_STUB_PIP_INDEX_URL": nvidia.url}
    env = clean_env(tmp_path)
    with IndexServer(pypi_dir) as pypi:
        venv = tmp_path / "venv"
        python = make_venv(venv, env)
        install = [str(python), "-m", "pip", "install", "--index-url", pypi.url, PIN]
        without = subprocess.run(install, env=env, capture_output=True, text=True, timeout=300)
        assert without.returncode != 0
        assert "special placeholder package" in without.stdout + without.stderr
        log = tmp_path / "pip.log"
        log.write_text(without.stdout + without.stderr)
        doctor = run_ortprov("doctor", "--log", str(log), "--json")
        assert [f["code"] for f in json.loads(doctor.stdout)["findings"]][:1] == ["tensorrt-install-failed"]
        with_mirror = subprocess.run(install, env={**env, **handed}, capture_output=True, text=True, timeout=300)
        assert with_mirror.returncode == 0, with_mirror.stdout + with_mirror.stderr
    assert (site_packages(venv) / "tensorrt_libs" / "libnvinfer.so.10").is_file()
    assert nvidia.downloads(REAL_WHEEL.filename) == 1  # fetched by the stub's build, from the mirror
