"""A plugin EP whose provider links a library its wheel bundles only under a longer file name (the TensorRT-RTX EP
0.5.0: libcudart.so.13 as libcudart.so.13.4.36, no RUNPATH), in a real interpreter with real ELF files built by
gcc and the real loader: without ortprov's loader hook the provider cannot be loaded and `verify --static` names the
library; with the hook (which acts when the program imports the EP's module) both pass."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from provisioner.installer import hook_files
from provisioner.verify import run_verify
from tests.support.elf import build_so

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or not sys.platform.startswith("linux"), reason="gcc")
MODULE = "onnxruntime_ep_fake"
INIT = """
import os
_HERE = os.path.dirname(os.path.abspath(__file__))
def get_library_path():
    return os.path.join(_HERE, "libonnxruntime_providers_fake.so")
def get_ep_name():
    return "FakeExecutionProvider"
"""


def environment(tmp_path: Path, hook: bool) -> Path:
    """A venv whose site-packages holds the fake EP (and the hook), seeing this venv's onnxruntime and numpy."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "dev-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # onnxruntime, numpy
    package = site / MODULE
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(INIT))
    build = tmp_path / "build"
    runtime = build_so(build, "libfakert.so.13")
    provider = build_so(build, "libonnxruntime_providers_fake.so", ["libfakert.so.13"], [build])
    shutil.copy(runtime, package / "libfakert.so.13.4.36")  # the soname, under a longer file name
    shutil.copy(provider, package / provider.name)
    if hook:
        hook_files.write(str(site), hook_files.hook_files({}))
    return python


def plain_load(python: Path) -> subprocess.CompletedProcess[str]:
    code = f"import ctypes, onnxruntime, {MODULE} as ep; ctypes.CDLL(ep.get_library_path()); print('loaded')"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120)


def test_without_the_hook_the_bundled_library_is_not_found(tmp_path: Path) -> None:
    python = environment(tmp_path, hook=False)
    done = plain_load(python)
    assert done.returncode != 0 and "libfakert.so.13: cannot open shared object file" in done.stderr
    report = run_verify(str(python), provider="tensorrt-rtx", plugin_module=MODULE, static=True, timeout=120)
    assert not report.ok and report.failure_kinds == ("library-missing",)
    assert "its wheel holds it as libfakert.so.13.4.36" in report.failures[0].message
    assert report.plugin is not None and report.plugin.ep_name == "FakeExecutionProvider"


def test_with_the_hook_a_plain_program_loads_the_provider(tmp_path: Path) -> None:
    python = environment(tmp_path, hook=True)
    done = plain_load(python)
    assert done.returncode == 0 and done.stdout.strip() == "loaded", done.stderr
    report = run_verify(str(python), provider="tensorrt-rtx", plugin_module=MODULE, static=True, timeout=120)
    assert report.ok, report.failures
    assert report.plugin is not None and report.plugin.hook is not None
    assert [Path(p).name for p in report.plugin.hook["loaded"]] == ["libfakert.so.13.4.36"]
    closure = {entry.soname: entry.status for entry in report.plugin.closure}
    assert closure["libfakert.so.13"] == "loaded"


def test_the_dockerfile_check_lists_the_eps_folder_and_ldconfig_makes_its_soname_links(tmp_path: Path) -> None:
    """The image's path (no hook): check_cuda_libs.py --write-ld-conf --plugin lists the EP's folder, and ldconfig
    (here `ldconfig -n` on that folder, read through LD_LIBRARY_PATH as the image reads its cache) makes
    libfakert.so.13 -> libfakert.so.13.4.36, after which the check passes; before, it names the library."""
    import os

    from provisioner import standalone

    python = environment(tmp_path, hook=False)
    program = str(standalone.path("check_cuda_libs.py"))
    conf = tmp_path / "ep.conf"
    listed = subprocess.run(
        [str(python), program, "--write-ld-conf", str(conf), "--plugin", MODULE], capture_output=True, text=True
    )
    folder = conf.read_text().split()
    assert listed.returncode == 0 and [Path(f).name for f in folder] == [MODULE]
    env = {**os.environ, "LD_LIBRARY_PATH": folder[0]}
    before = subprocess.run([str(python), program, "--plugin", MODULE], capture_output=True, text=True, env=env)
    assert before.returncode == 1 and "MISSING  libfakert.so.13" in before.stdout
    subprocess.run(["ldconfig", "-n", folder[0]], check=True)
    after = subprocess.run([str(python), program, "--plugin", MODULE], capture_output=True, text=True, env=env)
    assert after.returncode == 0 and "ok       libfakert.so.13" in after.stdout, after.stdout + after.stderr
