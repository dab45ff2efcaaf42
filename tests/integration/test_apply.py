"""`ortprov apply` for real: real venvs, real pip and uv, a package index on 127.0.0.1 serving small wheels
under the real names, faults injected into the index and into the processes; the environment must come back
byte for byte (`pip freeze --all` and every file) after each failure."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from provisioner.plan import Plan, Step
from tests.support.cli import ortprov_argv, run_ortprov
from tests.support.envs import children_of, clean_env, freeze, make_venv, tree_digest, venv_python
from tests.support.index_server import Fault, IndexServer
from tests.support.wheels import WheelSpec, build_wheels, damage, ort_family

pytestmark = pytest.mark.e2e

GPU_WHEEL = "onnxruntime_gpu-1.31.1-py3-none-any.whl"
SWAP = (
    Step("uninstall", ("onnxruntime",), "remove the CPU build"),
    Step("install", ("onnxruntime-gpu[cuda,cudnn]==1.31.1",), "the GPU build and its NVIDIA wheels"),
)
INSTALLERS = ("uv", "pip")


def write_plan(path: Path, steps: tuple[Step, ...] = SWAP) -> Path:
    # CUDA 12.0: what the stub wheel's build_and_package_info.py says (an installed build of another CUDA minor
    # is reinstalled: the removals of a saved plan are read from the target)
    plan = Plan(ort_version="1.31.1", package="onnxruntime-gpu", cuda_version="12.0", cudnn_version="9", steps=steps)
    path.write_text(plan.to_json())
    return path


@pytest.fixture(scope="module")
def wheel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    build_wheels(root, ort_family("12"))
    # a cuDNN wheel that conflicts with what onnxruntime-gpu needs, for the resolver test
    build_wheels(root, [WheelSpec("ort-conflict-stub", "1.0", requires=("nvidia-cudnn-cu12<9",))])
    return root


@pytest.fixture
def index(wheel_dir: Path):
    with IndexServer(wheel_dir) as server:
        yield server


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path)


@pytest.fixture(scope="module")
def cpu_venv_template(tmp_path_factory: pytest.TempPathFactory, wheel_dir: Path) -> Path:
    """A venv where the CPU onnxruntime 1.30.0 is installed (as on the GPU host, next to torch)."""
    tmp = tmp_path_factory.mktemp("template")
    venv = tmp / "venv"
    with IndexServer(wheel_dir) as server:
        make_venv(venv, clean_env(tmp), ("onnxruntime==1.30.0",), server.url)
    return venv


@pytest.fixture
def cpu_venv(tmp_path: Path, cpu_venv_template: Path) -> Path:
    """A private copy of the template (tests run `python -m pip`, so the copied scripts do not matter)."""
    venv = tmp_path / "venv"
    shutil.copytree(cpu_venv_template, venv, symlinks=True)
    return venv


def apply_args(plan: Path, venv: Path, index: IndexServer, installer: str, *extra: str) -> list[str]:
    return [
        "apply",
        "--plan",
        str(plan),
        "--python",
        str(venv_python(venv)),
        "--index-url",
        index.url,
        "--installer",
        installer,
        "--no-verify",
        *extra,
    ]


def gpu_build_info(venv: Path) -> str:
    found = list(venv.glob("lib/python*/site-packages/onnxruntime/capi/build_and_package_info.py"))
    return found[0].read_text() if found else ""


@pytest.mark.parametrize("installer", INSTALLERS)
def test_fresh_venv_is_created_and_gets_the_gpu_build(
    tmp_path: Path, env: dict[str, str], index: IndexServer, installer: str
) -> None:
    plan = write_plan(tmp_path / "plan.json", SWAP[1:])
    venv = tmp_path / "fresh"
    args = [
        "apply",
        "--plan",
        str(plan),
        "--venv",
        str(venv),
        "--index-url",
        index.url,
        "--installer",
        installer,
        "--no-verify",
    ]
    if installer == "pip":
        env = {**env, "ORTPROV_NO_UV": "1"}  # no uv: the venv is made by `python -m venv`
    proc = run_ortprov(*args, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"created the venv {venv}" in proc.stderr
    assert "[1/1] install onnxruntime-gpu[cuda,cudnn]==1.31.1" in proc.stderr
    frozen = freeze(venv_python(venv), env)
    for line in (
        "onnxruntime-gpu==1.31.1",
        "nvidia-cudnn-cu12==9.1.0.70",
        "nvidia-cuda-runtime-cu12==12.4.127",
        "nvidia-cublas-cu12==12.4.5.8",
    ):
        assert line in frozen
    assert not (venv / ".ortprov-apply").exists()


@pytest.mark.parametrize("installer", INSTALLERS)
def test_cpu_build_is_swapped_for_the_gpu_build_then_rerun_changes_nothing(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path, installer: str
) -> None:
    plan = write_plan(tmp_path / "plan.json")
    proc = run_ortprov(*apply_args(plan, cpu_venv, index, installer, "--yes", "--json"), env=env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)["apply"]
    assert result["outcome"] == "applied"
    changes = {c["name"]: (c["before"], c["after"]) for c in result["changes"]}
    assert changes["onnxruntime"] == ("1.30.0", None)
    assert changes["onnxruntime-gpu"] == (None, "1.31.1")
    frozen = freeze(venv_python(cpu_venv), env)
    assert "onnxruntime-gpu==1.31.1" in frozen
    assert not any(line.startswith("onnxruntime==") for line in frozen)
    # the files both flavours ship are the GPU build's
    assert "cuda_version = '12.0'" in gpu_build_info(cpu_venv)

    before = tree_digest(cpu_venv)
    again = run_ortprov(*apply_args(plan, cpu_venv, index, installer, "--yes"), env=env)
    assert again.returncode == 0, again.stderr
    assert "already satisfied" in again.stderr
    if installer == "uv":
        assert "$ " not in again.stderr  # uv's dry run saw nothing to do: no installer command ran
    assert tree_digest(cpu_venv) == before


def test_dry_run_lists_the_changes_and_changes_nothing(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path
) -> None:
    plan = write_plan(tmp_path / "plan.json")
    before = tree_digest(cpu_venv)
    proc = run_ortprov(*apply_args(plan, cpu_venv, index, "uv", "--dry-run"), env=env)
    assert proc.returncode == 0, proc.stderr
    # the listing is the dry run's result: on stdout, the real run's commands with their index options
    assert "- onnxruntime==1.30.0" in proc.stdout
    assert "+ onnxruntime-gpu==1.31.1" in proc.stdout
    assert "+ nvidia-cudnn-cu12==9.1.0.70" in proc.stdout
    assert f"uv pip uninstall --python {venv_python(cpu_venv)} onnxruntime" in proc.stdout
    assert f"--index-url {index.url} 'onnxruntime-gpu[cuda,cudnn]==1.31.1'" in proc.stdout
    assert proc.stdout.rstrip().endswith("nothing was changed (dry run)")
    assert tree_digest(cpu_venv) == before


@pytest.mark.parametrize("installer", INSTALLERS)
def test_removal_without_yes_and_without_a_terminal_is_refused(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path, installer: str
) -> None:
    plan = write_plan(tmp_path / "plan.json")
    before = tree_digest(cpu_venv)
    proc = run_ortprov(*apply_args(plan, cpu_venv, index, installer, "--json"), env=env)
    assert proc.returncode == 2
    assert "removes or replaces installed distributions (- onnxruntime==1.30.0" in proc.stderr
    assert "--yes" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["exit_code"] == 2
    assert tree_digest(cpu_venv) == before


def test_externally_managed_interpreter_is_refused(tmp_path: Path, env: dict[str, str]) -> None:
    import sysconfig

    system_python = "/usr/bin/python3"
    marker = Path(sysconfig.get_paths()["stdlib"]) / "EXTERNALLY-MANAGED"
    probe = subprocess.run(
        [system_python, "-c", "import sysconfig;print(sysconfig.get_paths()['stdlib'])"],
        capture_output=True,
        text=True,
    )
    marker = Path(probe.stdout.strip()) / "EXTERNALLY-MANAGED"
    if not marker.is_file():
        pytest.skip("the system Python here is not externally managed")
    plan = write_plan(tmp_path / "plan.json", SWAP[1:])
    proc = run_ortprov("apply", "--plan", str(plan), "--python", system_python, "--no-verify", env=env)
    assert proc.returncode == 2
    assert "externally managed (PEP 668)" in proc.stderr
    assert "--system" in proc.stderr


# -- faults: every one must leave the environment exactly as it was ----------------------------------------


def assert_restored(venv: Path, env: dict[str, str], frozen: list[str], files: dict[str, str]) -> None:
    assert freeze(venv_python(venv), env) == frozen
    assert tree_digest(venv) == files
    assert not (venv / ".ortprov-apply").exists()


@pytest.mark.parametrize("installer", INSTALLERS)
@pytest.mark.parametrize("fault", [Fault.DROP, Fault.BAD_HASH])
def test_download_fault_restores_the_environment(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path, installer: str, fault: Fault
) -> None:
    plan = write_plan(tmp_path / "plan.json")
    frozen, files = freeze(venv_python(cpu_venv), env), tree_digest(cpu_venv)
    index.inject("nvidia_cudnn_cu12-9.1.0.70-py3-none-any.whl", fault)
    proc = run_ortprov(*apply_args(plan, cpu_venv, index, installer, "--yes"), env=env)
    assert proc.returncode == 1, proc.stderr
    assert "[1/2] uninstall onnxruntime" in proc.stderr  # the uninstall had happened
    if fault is Fault.BAD_HASH:
        assert "step 2 (install) failed: a downloaded file did not match its expected hash" in proc.stderr
    elif installer == "uv":
        assert "step 2 (install) failed: the network failed during the download" in proc.stderr
    else:  # the venv's pip (23.2, from ensurepip) accepts the truncated body, then finds the hash wrong
        assert re.search(
            r"step 2 \(install\) failed: (the network failed|a downloaded file did not match)", proc.stderr
        )
    assert "the environment was restored" in proc.stderr
    assert_restored(cpu_venv, env, frozen, files)


@pytest.mark.parametrize("installer", INSTALLERS)
def test_resolver_conflict_restores_the_environment(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path, installer: str
) -> None:
    steps = (SWAP[0], Step("install", ("onnxruntime-gpu[cuda,cudnn]==1.31.1", "ort-conflict-stub==1.0")))
    plan = write_plan(tmp_path / "plan.json", steps)
    frozen, files = freeze(venv_python(cpu_venv), env), tree_digest(cpu_venv)
    # the dry run already sees the conflict: nothing is touched
    proc = run_ortprov(*apply_args(plan, cpu_venv, index, installer, "--yes"), env=env)
    assert proc.returncode == 1
    assert "cannot be satisfied together" in proc.stderr
    assert_restored(cpu_venv, env, frozen, files)


def _start_and_stall(
    plan: Path, venv: Path, index: IndexServer, installer: str, env: dict[str, str]
) -> subprocess.Popen[str]:
    index.inject(GPU_WHEEL, Fault.STALL)
    proc = subprocess.Popen(
        ortprov_argv(*apply_args(plan, venv, index, installer, "--yes")),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    # the index serves PEP 658 metadata: only the real install (after the snapshot) downloads the wheel
    assert index.wait_requested(GPU_WHEEL, timeout=120), proc.communicate(timeout=5)
    assert (venv / ".ortprov-apply").is_dir()
    time.sleep(0.3)
    return proc


@pytest.mark.parametrize("installer", INSTALLERS)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_ortprov_during_install_restores_the_environment(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path, installer: str, signum: int
) -> None:
    plan = write_plan(tmp_path / "plan.json")
    frozen, files = freeze(venv_python(cpu_venv), env), tree_digest(cpu_venv)
    proc = _start_and_stall(plan, cpu_venv, index, installer, env)
    assert not any(p.name.startswith("onnxruntime-1.30") for p in cpu_venv.glob("lib/*/site-packages/*"))
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    index.release()
    assert proc.returncode == 128 + signum, stderr
    assert f"interrupted by {signal.Signals(signum).name}" in stderr
    assert "the environment was restored" in stderr
    assert_restored(cpu_venv, env, frozen, files)


@pytest.mark.parametrize("installer", INSTALLERS)
def test_killed_installer_restores_the_environment(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path, installer: str
) -> None:
    plan = write_plan(tmp_path / "plan.json")
    frozen, files = freeze(venv_python(cpu_venv), env), tree_digest(cpu_venv)
    proc = _start_and_stall(plan, cpu_venv, index, installer, env)
    children = children_of(proc.pid)
    assert children, "the installer is not running"
    for child in children:
        os.kill(child, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=120)
    index.release()
    assert proc.returncode == 1, stderr
    assert "the installer was killed by SIGKILL" in stderr
    assert_restored(cpu_venv, env, frozen, files)


def test_apply_killed_outright_is_restored_by_the_next_run(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path
) -> None:
    plan = write_plan(tmp_path / "plan.json")
    frozen, files = freeze(venv_python(cpu_venv), env), tree_digest(cpu_venv)
    proc = _start_and_stall(plan, cpu_venv, index, "uv", env)
    children = children_of(proc.pid)
    proc.kill()  # SIGKILL: no chance to restore
    proc.communicate(timeout=60)
    for child in children:
        os.kill(child, signal.SIGKILL)
    index.release()
    index.clear()
    half_changed = freeze(venv_python(cpu_venv), env)
    assert half_changed != frozen  # the CPU build is gone, the GPU build is not there
    dry = run_ortprov(*apply_args(plan, cpu_venv, index, "uv", "--dry-run"), env=env)
    assert dry.returncode == 0, dry.stderr
    assert "the next apply restores its snapshot first" in dry.stderr
    assert freeze(venv_python(cpu_venv), env) == half_changed  # a dry run changes nothing
    # the next apply restores the killed one's snapshot first; this one fails too (a bad hash) and restores
    # its own snapshot, taken after that recovery: so the environment ends exactly as before the first apply
    index.inject("nvidia_cudnn_cu12-9.1.0.70-py3-none-any.whl", Fault.BAD_HASH)
    again = run_ortprov(*apply_args(plan, cpu_venv, index, "uv", "--yes"), env=env)
    assert again.returncode == 1, again.stderr
    assert "was killed before it finished; its snapshot was restored" in again.stderr
    assert_restored(cpu_venv, env, frozen, files)


@pytest.mark.parametrize("installer", INSTALLERS)
@pytest.mark.parametrize("how", ["crc", "truncate"])
def test_a_corrupt_wheel_is_named_with_its_cause(
    tmp_path: Path, env: dict[str, str], wheel_dir: Path, index: IndexServer, cpu_venv: Path, installer: str, how: str
) -> None:
    """A wheelhouse whose onnxruntime-gpu wheel was damaged on its way (a flipped byte, a cut-off copy): the
    error names the wheel and what is wrong with it, not the installer's exit status."""
    house = tmp_path / "house"
    shutil.copytree(wheel_dir, house)
    damage(house / GPU_WHEEL, how)
    plan = write_plan(tmp_path / "plan.json")
    frozen, files = freeze(venv_python(cpu_venv), env), tree_digest(cpu_venv)
    proc = run_ortprov(*apply_args(plan, cpu_venv, index, installer, "--yes", "--wheelhouse", str(house)), env=env)
    assert proc.returncode == 1, proc.stderr
    error = next(line for line in proc.stderr.splitlines() if line.startswith("error: "))
    named = GPU_WHEEL in error or "the wheel of onnxruntime-gpu 1.31.1" in error  # uv names a project, not a file
    assert named and " is corrupt: " in error, error
    cause = "CRC-32" if how == "crc" else "not a complete zip archive"
    assert cause in error, error
    assert "exited with status" not in error
    assert_restored(cpu_venv, env, frozen, files)


# -- offline: wheelhouse -------------------------------------------------------------------------------------


@pytest.mark.parametrize("installer", INSTALLERS)
def test_wheelhouse_download_then_offline_apply(
    tmp_path: Path, env: dict[str, str], wheel_dir: Path, installer: str
) -> None:
    plan = write_plan(tmp_path / "plan.json")
    house = tmp_path / "wheelhouse"
    with IndexServer(wheel_dir) as server:
        got = run_ortprov(
            "download",
            "--dest",
            str(house),
            "--plan",
            str(plan),
            "--index-url",
            server.url,
            "--python",
            "3.12",
            "--platform",
            "linux-x86_64",
            "--json",
            env=env,
        )
        assert got.returncode == 0, got.stderr
        report = json.loads(got.stdout)
        assert "onnxruntime_gpu-1.31.1-py3-none-any.whl" in report["wheels"]
        assert "nvidia_cudnn_cu12-9.1.0.70-py3-none-any.whl" in report["wheels"]
        assert "manylinux_2_28_x86_64" in report["platforms"]
        venv = tmp_path / "offline"
        make_venv(venv, env, ("onnxruntime==1.30.0",), server.url)
    # the index is gone: only the wheelhouse can serve the install
    proc = run_ortprov(
        "apply",
        "--wheelhouse",
        str(house),
        "--python",
        str(venv_python(venv)),
        "--yes",
        "--installer",
        installer,
        "--no-verify",
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--no-index --find-links" in proc.stderr
    frozen = freeze(venv_python(venv), env)
    assert "onnxruntime-gpu==1.31.1" in frozen and "nvidia-cudnn-cu12==9.1.0.70" in frozen


# -- verification --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [False, True])
def test_failed_verification_restores_the_environment_unless_keep(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path, keep: bool
) -> None:
    python = venv_python(cpu_venv)
    before, files = freeze(python, env), tree_digest(cpu_venv)
    plan = write_plan(tmp_path / "plan.json")
    flags = ("--keep",) if keep else ()
    proc = run_ortprov(
        "apply", "--plan", str(plan), "--python", str(python), "--index-url", index.url, "--yes",
        "--verify-timeout", "60", *flags, env=env,
    )  # fmt: skip
    # the test wheels are not a real onnxruntime: the CUDA session cannot be proven
    assert proc.returncode == 1, proc.stderr
    assert "verify: FAILED" in proc.stderr
    if keep:
        assert "--keep: the installation is kept" in proc.stderr
        assert "onnxruntime-gpu==1.31.1" in freeze(python, env)
    else:
        assert "the environment was restored" in proc.stderr
        assert freeze(python, env) == before and tree_digest(cpu_venv) == files


def test_air_gapped_fresh_venv_from_a_wheelhouse(tmp_path: Path, env: dict[str, str], wheel_dir: Path) -> None:
    plan = write_plan(tmp_path / "plan.json", SWAP[1:])
    house = tmp_path / "wheelhouse"
    with IndexServer(wheel_dir) as server:
        got = run_ortprov("download", "--dest", str(house), "--plan", str(plan), "--index-url", server.url, env=env)
        assert got.returncode == 0, got.stderr
    # progress on stderr, the result (the wheelhouse) on stdout
    assert "[1/1] download " in got.stderr and "[1/1]" not in got.stdout
    assert got.stdout.startswith(f"wheelhouse {house}: 5 wheels, ") and "plan saved to plan.json" in got.stdout
    assert f"install offline with: ortprov apply --wheelhouse {house} --venv DIR" in got.stdout
    # no index, and uv may not fetch anything (not even pip to seed the venv): the wheelhouse is all there is
    offline = {**env, "UV_OFFLINE": "1", "PIP_NO_INDEX": "1"}
    venv = tmp_path / "fresh"
    proc = run_ortprov("apply", "--wheelhouse", str(house), "--venv", str(venv), "-y", "--no-verify", env=offline)
    assert proc.returncode == 0, proc.stderr
    assert f"created the venv {venv}" in proc.stderr
    listed = subprocess.run(
        [*ortprov_argv()[:1], "-m", "uv", "pip", "list", "--python", str(venv_python(venv)), "--format", "freeze"],
        env=offline, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert "onnxruntime-gpu==1.31.1" in listed and "nvidia-cudnn-cu12==9.1.0.70" in listed


# -- on a terminal -------------------------------------------------------------------------------------------


def _on_a_terminal(argv: list[str], env: dict[str, str], answer: bytes) -> tuple[int, str]:
    """Run argv with a pseudo-terminal as its stdin, stdout and stderr; answer apply's question when it comes."""
    import pty
    import select

    leader, follower = pty.openpty()
    proc = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, env=env, start_new_session=True)
    os.close(follower)
    shown, answered = b"", False
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process ended
                break
            shown += chunk
        if not answered and b"Continue? [y/N]" in shown:
            os.write(leader, answer)
            answered = True
        if not ready and proc.poll() is not None:
            break
    os.close(leader)
    return proc.wait(timeout=60), shown.decode(errors="replace")


@pytest.mark.parametrize("answer", [b"y\n", b"n\n"])
def test_a_removal_is_confirmed_on_a_terminal(
    tmp_path: Path, env: dict[str, str], index: IndexServer, cpu_venv: Path, answer: bytes
) -> None:
    plan = write_plan(tmp_path / "plan.json")
    before = tree_digest(cpu_venv)
    code, shown = _on_a_terminal(ortprov_argv(*apply_args(plan, cpu_venv, index, "uv")), env, answer)
    assert "This removes or replaces: - onnxruntime==1.30.0" in shown, shown
    assert "Traceback" not in shown and "NameError" not in shown, shown
    if answer == b"y\n":
        assert code == 0, shown
        assert "onnxruntime-gpu==1.31.1" in freeze(venv_python(cpu_venv), env)
        assert "verdict: installed, not verified (--no-verify)" in shown
    else:
        assert code == 1, shown
        assert "cancelled: nothing was changed" in shown
        assert tree_digest(cpu_venv) == before


def test_doctors_fix_after_an_offline_wheelhouse_apply_runs_offline_and_pins_what_it_pinned(
    tmp_path: Path, env: dict[str, str], wheel_dir: Path
) -> None:
    """Issue 37: after a cuDNN wheel was removed from a venv that apply had filled from a wheelhouse on an offline
    machine, doctor's fix failed there ("network failed") and pinned a cuDNN newer than the wheelhouse holds. The
    apply saved its plan with its sources; the fix re-applies it, as printed, offline."""
    plan = write_plan(tmp_path / "plan.json", SWAP[1:])
    house = tmp_path / "wheelhouse"
    with IndexServer(wheel_dir) as server:
        got = run_ortprov("download", "--dest", str(house), "--plan", str(plan), "--index-url", server.url, env=env)
        assert got.returncode == 0, got.stderr
    offline = {**env, "UV_OFFLINE": "1", "PIP_NO_INDEX": "1"}
    venv = tmp_path / "fresh"
    proc = run_ortprov("apply", "--wheelhouse", str(house), "--venv", str(venv), "-y", "--no-verify", env=offline)
    assert proc.returncode == 0, proc.stderr
    saved = venv / ".ortprov-applied.json"
    assert Plan.from_dict(json.loads(saved.read_text()))  # the plan as carried out, with its sources
    python = str(venv_python(venv))
    removed = subprocess.run(
        [*ortprov_argv()[:1], "-m", "uv", "pip", "uninstall", "--python", python, "nvidia-cudnn-cu12"],
        env=offline, capture_output=True, text=True,
    )  # fmt: skip
    assert removed.returncode == 0, removed.stderr
    doctor = run_ortprov("doctor", "--python", python, "--json", "--timeout", "60", env=offline)
    fixes = [f["fix"] for f in json.loads(doctor.stdout)["findings"] if "ortprov apply" in f["fix"]]
    assert fixes, doctor.stdout
    for fix in fixes:
        assert f"ortprov apply --python {python} --plan {saved}" in fix, fix
    assert any(f"--no-index --find-links {house}" in fix for fix in fixes), fixes  # the wheelhouse, offline
    command = fixes[0].split("ortprov ", 1)[1].split("  (", 1)[0].split()
    again = run_ortprov(*command, "-y", "--no-verify", env=offline)
    assert again.returncode == 0, again.stderr
    listed = subprocess.run(
        [*ortprov_argv()[:1], "-m", "uv", "pip", "list", "--python", python, "--format", "freeze"],
        env=offline, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert "nvidia-cudnn-cu12==9.1.0.70" in listed
