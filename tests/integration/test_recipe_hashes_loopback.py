"""`requirements --hashes` end to end against a real package index on 127.0.0.1 (no internet needed)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from provisioner.errors import BadInput, OrtprovError
from provisioner.hashes import (
    PIP_METADATA_ONLY,
    file_digests,
    index_files,
    pinned_digests,
    pip_is_too_old,
    pip_reads_metadata_only,
    pip_target_args,
    pip_version,
    supported_tags,
    target_of,
)
from provisioner.plan import Step
from provisioner.render.recipes import render
from tests.support.envs import venv_python
from tests.support.index_server import IndexServer
from tests.support.recipe_plans import cuda12_plan, host
from tests.support.wheels import WheelSpec, build_wheels

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e


def family(folder: Path) -> list[Path]:
    """onnxruntime-gpu with an extra that pulls one NVIDIA wheel and a plain dependency, plus decoys."""
    return build_wheels(
        folder,
        [
            WheelSpec(
                "onnxruntime-gpu",
                "1.23.2",
                extras=("cudnn",),
                requires=("numpy-stub>=1", 'nvidia-cudnn-cu12>=9; extra == "cudnn"'),
                files={"onnxruntime/__init__.py": ""},
            ),
            WheelSpec(
                "onnxruntime-gpu", "1.23.2", files={"onnxruntime/__init__.py": "# win"}, tag="cp312-cp312-win_amd64"
            ),
            WheelSpec("onnxruntime-gpu", "1.22.0", files={"onnxruntime/__init__.py": ""}),
            WheelSpec("numpy-stub", "1.0.0", files={"numpy_stub/__init__.py": ""}),
            WheelSpec("nvidia-cudnn-cu12", "9.10.2.21", files={"nvidia/cudnn/lib/libcudnn.so.9": b"\x7fELF"}),
        ],
    )


def loopback_plan(url: str, platform: str = "linux-x86_64"):  # noqa: ANN201 - a Plan
    return cuda12_plan(
        platform=platform,
        steps=(
            Step("uninstall", ("onnxruntime",)),
            Step("install", ("onnxruntime-gpu[cudnn]==1.23.2",), index_url=url),
        ),
    )


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_hashed_requirements_from_a_loopback_index_install_with_require_hashes(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """With the pip of the interpreter running the tests: the one `python -m venv` bundles works too."""
    wheels = family(tmp_path / "wheels")
    with IndexServer(tmp_path / "wheels") as index:
        plan = loopback_plan(index.url)
        said: list[str] = []
        pinned = pinned_digests(plan, progress=said.append)
        assert said[0].startswith("hashes: resolving the plan for Python") and said[1].startswith("hashes: 3 ")
        assert [line.split("]")[0] for line in said[2:]] == ["hashes: [1/3", "hashes: [2/3", "hashes: [3/3"]
        # A pip that downloads every wheel to resolve them says so (GBs for a real plan); a newer one does not.
        pip = pip_version(sys.executable)
        assert pip is not None
        noted = "downloads every wheel it resolves in full" in capfd.readouterr().err
        assert noted == (not pip_reads_metadata_only(pip))
        by_name = {p.name: p for p in pinned}
        assert set(by_name) == {"onnxruntime-gpu", "numpy-stub", "nvidia-cudnn-cu12"}
        linux_wheel, win_wheel = wheels[0], wheels[1]
        assert by_name["onnxruntime-gpu"].sha256 == (sha(linux_wheel),)  # not the win_amd64 file, not 1.22.0
        text = render(plan, "requirements", index_digests=pinned)
        requirements = tmp_path / "requirements.txt"
        requirements.write_text(text)
        python, platforms = target_of(plan)
        done = pip_download_with_hashes(requirements, tmp_path / "dl", pip_target_args(python, platforms))
        assert done.returncode == 0, done.stderr[-2000:]
        assert sorted(p.name for p in (tmp_path / "dl").iterdir()) == sorted(w.name for w in (wheels[0], *wheels[3:]))
        # A tampered digest is refused by pip: the hashes are what pip checks.
        requirements.write_text(requirements.read_text().replace(sha(linux_wheel), "0" * 64))
        refused = pip_download_with_hashes(requirements, tmp_path / "dl2", pip_target_args(python, platforms))
        assert refused.returncode != 0 and "HASHES" in refused.stderr.upper()
        assert win_wheel.exists()


def test_windows_targets_get_the_windows_file(tmp_path: Path) -> None:
    wheels = family(tmp_path / "wheels")
    files = [(w.name, sha(w)) for w in wheels]
    supported = supported_tags("3.12", target_of(loopback_plan("http://x/", "windows-amd64"))[1])
    assert file_digests(files, "onnxruntime-gpu", "1.23.2", supported) == [sha(wheels[0]), sha(wheels[1])]
    linux = supported_tags("3.12", target_of(loopback_plan("http://x/"))[1])
    assert file_digests(files, "onnxruntime-gpu", "1.23.2", linux) == [sha(wheels[0])]


def test_target_platform_tags_follow_the_host_glibc() -> None:
    plan = cuda12_plan(hosts=(host(glibc="2.31"),))
    python, platforms = target_of(plan)
    assert python == "3.12"
    assert platforms[0] == "manylinux_2_31_x86_64" and "manylinux_2_32_x86_64" not in platforms
    assert {"manylinux_2_17_x86_64", "manylinux2014_x86_64", "linux_x86_64"} <= set(platforms)
    with pytest.raises(BadInput, match="Python"):
        target_of(cuda12_plan(hosts=()))


def test_an_unreachable_index_is_one_clear_error(tmp_path: Path) -> None:
    import requests

    with requests.Session() as session, pytest.raises(OrtprovError, match="cannot reach the package index") as caught:
        index_files(session, "http://127.0.0.1:9/simple", "onnxruntime-gpu")
    assert "without --hashes" in (caught.value.hint or "")
    with pytest.raises(OrtprovError, match="pip could not resolve"):
        pinned_digests(loopback_plan("http://127.0.0.1:9/simple/"))


def test_the_pip_that_resolves_is_checked_before_anything_is_resolved(tmp_path: Path) -> None:
    """No pip (a `uv tool` or `venv --without-pip` environment): one clear error, not a resolution failure."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True, timeout=120)
    bare = str(venv_python(tmp_path / "bare"))
    assert pip_version(bare) is None
    with pytest.raises(
        OrtprovError, match=r"--hashes resolves the requirements with pip >= 22\.2, .* has no pip"
    ) as caught:
        pinned_digests(loopback_plan("http://127.0.0.1:9/simple/"), python_exe=bare)
    assert "without --hashes" in (caught.value.hint or "")


def test_pip_versions_that_resolve_for_a_target_and_those_that_download_every_wheel() -> None:
    assert pip_is_too_old("22.1.2") and pip_is_too_old("9.0.1")
    assert not pip_is_too_old("22.2") and not pip_is_too_old("23.2.1") and not pip_is_too_old("not-a-version")
    assert not pip_reads_metadata_only("23.2.1") and not pip_reads_metadata_only("25.2")
    assert pip_reads_metadata_only(PIP_METADATA_ONLY) and pip_reads_metadata_only("26.0.1")


def pip_download_with_hashes(requirements: Path, dest: Path, target_args: list[str]) -> subprocess.CompletedProcess:
    """`pip download --require-hashes` of a requirements file for the plan's target, isolated and uncached."""
    argv = [sys.executable, "-m", "pip", "download", "--require-hashes", "--isolated", "--no-cache-dir"]
    return subprocess.run(
        [*argv, "-d", str(dest), *target_args, "-r", str(requirements)],
        capture_output=True,
        text=True,
        timeout=300,
    )
