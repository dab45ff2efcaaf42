"""The parts of `apply` one by one: command construction (pip, uv, conda, pip download), the snapshot's
restore on a real directory tree, failure diagnosis, and the conda flow with a stand-in conda executable
(no conda, mamba or micromamba can be installed on this machine: see ../shared/notes/conda.md)."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from provisioner.installer import snapshot
from provisioner.installer.command import CommandResult, diagnose
from provisioner.installer.conda import conda_commands, conda_install_argv, parse_environment_yml
from provisioner.installer.events import Recorder
from provisioner.installer.flow import ApplySettings, Outcome, Sources, carry_out, find_target, opened
from provisioner.installer.steps import Command, commands_for, dry_run_argv, parse_dry_run, with_sources
from provisioner.installer.transaction import ApplyFailed
from provisioner.installer.venv import Target, inspect_python
from provisioner.installer.wheelhouse import download_argv, platform_tags
from provisioner.plan import Plan, Step, step_argv
from tests.support.envs import clean_env, freeze, make_venv, tree_digest, venv_python
from tests.support.index_server import IndexServer
from tests.support.wheels import build_wheels, ort_family

pytestmark = pytest.mark.e2e

SWAP = (Step("uninstall", ("onnxruntime", "onnxruntime-directml")), Step("install", ("onnxruntime-gpu==1.31.1",)))


def _target(python: str = "/env/bin/python", externally_managed: bool = False) -> Target:
    return Target(python, "3.12.3", "/env", True, False, externally_managed, ("/env/lib",), True)


def test_commands_are_step_argv_with_sources_and_only_installed_uninstalls() -> None:
    plan = with_sources(
        Plan("1.31.1", "onnxruntime-gpu", "13.0", "9", steps=SWAP),
        index_url="http://mirror/simple",
        find_links=("/wh",),
        no_index=True,
    )
    commands = commands_for(plan, _target(), {"onnxruntime": "1.30.0"}, "uv", ["/opt/uv"])
    assert commands[0].argv == ("/opt/uv", "pip", "uninstall", "--python", "/env/bin/python", "onnxruntime")
    install = plan.steps[1]
    assert list(commands[1].argv) == ["/opt/uv", *step_argv(install, "uv", "/env/bin/python")[1:]]
    assert commands[1].argv[-4:] == ("--no-index", "--find-links", "/wh", "onnxruntime-gpu==1.31.1")
    assert "--index-url" in commands[1].argv and "http://mirror/simple" in commands[1].argv
    pip = commands_for(plan, _target(), {}, "pip", None)
    assert pip[0].skipped and "not installed" in pip[0].skipped
    assert pip[1].argv[:4] == ("/env/bin/python", "-m", "pip", "install")


def test_system_target_gets_break_system_packages_and_dry_run_flags_precede_requirements() -> None:
    plan = Plan("1.31.1", "onnxruntime-gpu", "13.0", "9", steps=SWAP[1:])
    managed = _target("/usr/bin/python3", externally_managed=True)
    [command] = commands_for(plan, managed, {}, "pip", None, system=True)
    assert "--break-system-packages" in command.argv
    assert dry_run_argv(command, "pip")[-5:] == ["--dry-run", "--quiet", "--report", "-", "onnxruntime-gpu==1.31.1"]
    [plain] = commands_for(plan, _target(), {}, "uv", ["uv"])
    assert dry_run_argv(plain, "uv")[-2:] == ["--dry-run", "onnxruntime-gpu==1.31.1"]


def test_dry_run_output_is_parsed_for_both_installers() -> None:
    report = '{"version": "1", "install": [{"metadata": {"name": "Onnxruntime_GPU", "version": "1.31.1"}}]}'
    assert parse_dry_run("pip", "WARNING: x\n" + report) == {"onnxruntime-gpu": "1.31.1"}
    uv = "Resolved 3 packages\nWould install 2 packages\n - onnxruntime==1.30.0\n + onnxruntime-gpu==1.31.1\n"
    assert parse_dry_run("uv", uv) == {"onnxruntime-gpu": "1.31.1"}
    assert parse_dry_run("uv", "Would make no changes\n") == {}


@pytest.mark.parametrize(
    ("returncode", "output", "cause"),
    [
        (-9, "", "killed by SIGKILL"),
        (1, "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.", "expected hash"),
        (2, "  × No solution found when resolving dependencies:", "cannot be satisfied together"),
        (1, "ERROR: ResolutionImpossible: for help visit", "cannot be satisfied together"),
        (2, "error: Failed to fetch: `http://x`\n  Caused by: error decoding response body", "network failed"),
        (1, "urllib3.exceptions.ProtocolError: ('Connection broken: IncompleteRead", "network failed"),
        (1, "OSError: [Errno 28] No space left on device", "disk is full"),
        (3, "something else", "exited with status 3"),
    ],
)
def test_failures_are_explained(returncode: int, output: str, cause: str) -> None:
    assert cause in diagnose(CommandResult(("pip",), returncode, output))


def test_download_argv_targets_another_python_and_platform() -> None:
    tags = platform_tags("linux-x86_64", "2.35")
    assert tags[0] == "manylinux_2_35_x86_64" and "manylinux2014_x86_64" in tags and tags[-1] == "linux_x86_64"
    assert platform_tags("linux-aarch64", "2.28")[0] == "manylinux_2_28_aarch64"
    assert "manylinux1_aarch64" not in platform_tags("linux-aarch64", "2.28")
    assert platform_tags("windows-amd64") == ["win_amd64"]
    step = Step("install", ("onnxruntime-gpu[cuda,cudnn]==1.31.1",), index_url="http://mirror/simple")
    argv = download_argv(step, Path("/wh"), "3.12", ["manylinux_2_28_x86_64"], python="py")
    assert argv[:6] == ["py", "-m", "pip", "download", "--dest", "/wh"]
    assert "--only-binary=:all:" in argv
    assert argv[argv.index("--python-version") + 1] == "3.12"
    assert argv[argv.index("--platform") + 1] == "manylinux_2_28_x86_64"
    assert argv[-3:] == ["--index-url", "http://mirror/simple", "onnxruntime-gpu[cuda,cudnn]==1.31.1"]
    feed = Step("install", ("onnxruntime-gpu==1.18.0",), index_url="http://feed/simple", no_deps=True)
    argv = download_argv(feed, Path("/wh"), "3.10", ["manylinux_2_28_x86_64"], python="py")
    assert argv[-4:] == ["--index-url", "http://feed/simple", "--no-deps", "onnxruntime-gpu==1.18.0"]  # as apply


# -- snapshot: a real tree, changed in every way an installer changes it --------------------------------------


def _digest(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = path.read_bytes().hex()
    return out


def test_snapshot_restores_a_tree_byte_for_byte(tmp_path: Path) -> None:
    prefix = tmp_path / "env"
    site = prefix / "lib" / "site-packages"
    (site / "onnxruntime" / "capi").mkdir(parents=True)
    (site / "onnxruntime" / "__init__.py").write_text("cpu")
    (site / "onnxruntime" / "capi" / "lib.so").write_bytes(b"\x7fELF cpu")
    (site / "onnxruntime-1.30.0.dist-info").mkdir()
    (site / "onnxruntime-1.30.0.dist-info" / "RECORD").write_text("x")
    (site / "link").symlink_to("onnxruntime")
    (prefix / "bin").mkdir()
    (prefix / "bin" / "tool").write_text("#!/bin/sh\n")
    (prefix / "bin" / "tool").chmod(0o755)
    before = _digest(prefix)
    taken = snapshot.take(str(prefix), (str(site), str(prefix / "bin")), {"onnxruntime": "1.30.0"})
    assert taken.linked and taken.files == 5
    assert snapshot.leftover(str(prefix)).kind == "complete"  # what a killed apply's successor restores
    # what pip/uv do: unlink and rewrite, remove whole trees, add new ones, replace a file by a directory
    (site / "onnxruntime" / "__init__.py").unlink()
    (site / "onnxruntime" / "__init__.py").write_text("gpu")
    shutil.rmtree(site / "onnxruntime-1.30.0.dist-info")
    (site / "onnxruntime_gpu-1.31.1.dist-info").mkdir()
    (site / "onnxruntime_gpu-1.31.1.dist-info" / "RECORD").write_text("y")
    (site / "link").unlink()
    (site / "link").symlink_to("elsewhere")
    (site / "onnxruntime" / "capi" / "lib.so").unlink()
    (site / "onnxruntime" / "capi" / "lib.so").mkdir()
    (prefix / "bin" / "tool").unlink()
    (prefix / "bin" / "new-tool").write_text("new")
    assert _digest(prefix) != before
    restored = snapshot.restore(taken.trees)
    assert snapshot.discard(taken.root)
    assert restored.changed >= 7 and restored.failed == ()
    assert _digest(prefix) == before
    assert stat.S_IMODE((prefix / "bin" / "tool").stat().st_mode) == 0o755
    assert snapshot.leftover(str(prefix)).kind == "none"


# -- conda: the recipe, and the flow with a stand-in conda -------------------------------------------------------


ENV_YML = """\
name: "onnxruntime-gpu-1.31.1"
channels:
  - conda-forge
  - nodefaults
dependencies:
  - "python=3.11"
  - "cuda-version=12.8"
  - "cudnn=9"
  - pip
  - pip:
    - "--index-url {index}"
    - "onnxruntime-gpu==1.31.1"
"""


def test_environment_yml_is_split_into_conda_and_pip_parts() -> None:
    recipe = parse_environment_yml(ENV_YML.format(index="http://mirror/simple"))
    assert recipe.channels == ("conda-forge",)
    assert recipe.specs == ("cuda-version=12.8", "cudnn=9")  # never python=: the env keeps its Python
    assert recipe.pip_requirements == ("onnxruntime-gpu==1.31.1",)
    assert recipe.pip_index_url == "http://mirror/simple"
    for tool in ("micromamba", "mamba", "conda"):
        assert conda_install_argv([tool], "/c/env", recipe) == [
            tool, "install", "--yes", "--prefix", "/c/env", "--override-channels", "-c", "conda-forge",
            "cuda-version=12.8", "cudnn=9",
        ]  # fmt: skip


def test_conda_recipe_comes_from_the_real_renderer() -> None:
    from provisioner.commands.options import PlanningOptions
    from provisioner.commands.planning import plan_for
    from provisioner.installer.conda import conda_recipe

    plan = plan_for(PlanningOptions(driver="580", gpu_cc="9.0", python_version="3.12", platform="linux-x86_64"))
    recipe = conda_recipe(plan)
    assert any(spec.startswith("cuda-version=") for spec in recipe.specs)
    assert not any(spec.startswith("python=") for spec in recipe.specs)
    assert recipe.pip_requirements == (f"onnxruntime-gpu=={plan.ort_version}",)  # no NVIDIA pip wheels


STAND_IN = """#!{python}
# Stands in for micromamba: records its argv, then "installs" a cuDNN file into the prefix (or fails).
import json, os, sys
prefix = sys.argv[sys.argv.index("--prefix") + 1]
with open(os.environ["CONDA_ARGV_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
os.makedirs(os.path.join(prefix, "lib"), exist_ok=True)
open(os.path.join(prefix, "lib", "libcudnn.so.9"), "w").write("stand-in")
open(os.path.join(prefix, "conda-meta", "cudnn-9.json"), "w").write("{{}}")
sys.exit(int(os.environ.get("CONDA_EXIT", "0")))
"""


@pytest.fixture
def conda_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "wheels"
    build_wheels(root, ort_family("12"))
    env = clean_env(tmp_path)
    with IndexServer(root) as index:
        prefix = tmp_path / "conda-env"
        make_venv(prefix, env, ("onnxruntime==1.30.0",), index.url)
        (prefix / "conda-meta").mkdir()
        tool = tmp_path / "micromamba"
        tool.write_text(STAND_IN.format(python=sys.executable))
        tool.chmod(0o755)
        for key in [k for k in os.environ if k.startswith(("PIP_", "UV_"))]:
            monkeypatch.delenv(key)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("MAMBA_EXE", str(tool))
        monkeypatch.setenv("CONDA_PREFIX", str(prefix))
        monkeypatch.setenv("CONDA_ARGV_LOG", str(tmp_path / "argv.log"))
        yield prefix, index, env, tmp_path / "argv.log"


def _swap_plan() -> Plan:
    return Plan("1.31.1", "onnxruntime-gpu", "12.8", "9", steps=SWAP)


def _conda_apply(index: IndexServer) -> Outcome:
    """The apply flow as the command runs it, in the active conda environment, with the swap plan."""
    settings = ApplySettings(installer="conda", sources=Sources(index_url=index.url), yes=True, verify=None)
    listener = Recorder()
    with opened(find_target(settings), settings, listener) as target:
        return carry_out(target, _swap_plan(), settings, listener)


def test_conda_flow_runs_the_conda_part_then_the_pip_part(conda_env) -> None:
    import json

    prefix, index, env, log = conda_env
    outcome = _conda_apply(index)
    assert outcome.apply.outcome == "applied"
    [argv] = [json.loads(line) for line in log.read_text().splitlines()]
    assert argv == ["install", "--yes", "--prefix", os.path.realpath(prefix), "--override-channels", "-c",
                    "conda-forge", "cuda-version=12.8", "cuda-cudart", "libcublas", "libcufft", "libcurand",
                    "cuda-nvrtc", "cudnn=9"]  # fmt: skip
    frozen = freeze(venv_python(prefix), env)
    assert "onnxruntime-gpu==1.31.1" in frozen
    assert not any(line.startswith("onnxruntime==") for line in frozen)
    assert not any(line.startswith("nvidia-") for line in frozen)  # the libraries come from conda
    assert (prefix / "lib" / "libcudnn.so.9").exists()


def test_conda_failure_restores_the_whole_prefix(conda_env, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, index, env, _ = conda_env
    monkeypatch.setenv("CONDA_EXIT", "1")
    frozen, files = freeze(venv_python(prefix), env), tree_digest(prefix)
    with pytest.raises(ApplyFailed) as failed:
        _conda_apply(index)
    assert "step 2 (conda) failed" in failed.value.message
    assert failed.value.result.restored_exactly
    assert freeze(venv_python(prefix), env) == frozen
    assert tree_digest(prefix) == files  # the uninstalled CPU build is back, the conda files are gone


def test_conda_commands_skip_uninstalls_of_missing_packages(tmp_path: Path) -> None:
    target, installed = inspect_python(sys.executable)
    recipe = parse_environment_yml(ENV_YML.format(index="http://i/simple"))
    commands = conda_commands(_swap_plan(), recipe, ["micromamba"], target, {})
    assert [c.step.kind for c in commands] == ["uninstall", "conda", "install"]
    assert commands[0].skipped
    assert isinstance(commands[2], Command) and commands[2].argv[-1] == "onnxruntime-gpu==1.31.1"
    assert "--index-url" in commands[2].argv
