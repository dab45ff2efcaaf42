"""The built wheel ships the data folders and the standalone programs, and works from a fresh venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(REPO),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
        ],
        check=True,
        timeout=300,
    )
    (built,) = out.glob("ortprov-*.whl")
    return built


def shipped_files(folder: str) -> set[str]:
    base = REPO / folder
    return {
        f"provisioner/{folder}/{path.relative_to(base).as_posix()}"
        for path in base.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_wheel_has_data_folders_and_standalone_programs(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("matrices", "recipes"):
        missing = shipped_files(folder) - names
        assert not missing, f"{folder}/ files missing from the wheel: {sorted(missing)}"
    # maintainer scripts (bin/) are not shipped, and no code sits beside the matrix data
    assert not [n for n in names if n.startswith(("bin/", "provisioner/bin/"))]
    assert not [n for n in names if n.startswith("provisioner/matrices/") and n.endswith(".py")]
    assert "provisioner/matrix/query.py" in names
    for program in ("packages_probe.py", "verify_child.py", "check_cuda_libs.py", "elf.py", "libnames.py"):
        assert f"provisioner/standalone/{program}" in names
    entry_points = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
    assert "ortprov = provisioner.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_finds_its_data_and_detects(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin/python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        check=True,
        timeout=300,
    )
    # The runtime dependencies (typer, ...) come from the dev venv, offline: a .pth file, after the wheel.
    Path(site, "zz_dev_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    code = (
        "import json, provisioner.resources as r; "
        "print(json.dumps({n: str(r.data_dir(n)) for n in ('matrices', 'recipes')} | {'pkg': r.__file__}))"
    )
    result = subprocess.run(
        [str(python), "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    where = json.loads(result.stdout)
    assert where["pkg"].startswith(site)  # the installed copy, not the checkout
    for folder in ("matrices", "recipes"):
        data = Path(where[folder])
        assert data.is_dir() and str(data).startswith(site)
        shipped = {path.name for path in (REPO / folder).iterdir() if path.is_file()}
        assert shipped <= {path.name for path in data.iterdir()}
    detect = subprocess.run(
        [str(venv / "bin/ortprov"), "detect", "--json"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert detect.returncode == 0, detect.stderr
    facts = json.loads(detect.stdout)
    assert facts["python"]["executable"] == str(python)
    assert facts["probe_errors"] == []
