"""apply's transaction under faults (issue 15, docs/transaction.md): ortprov killed (its PID, or its process
group), interrupted and terminated at every stage marker (ORTPROV_FAULT_AT, installer/faults.py), with pip and
uv, in real venvs from the loopback index. After each fault, the next apply settles what was left, and the venv
is in exactly one of two states: byte for byte as before, or fully applied with every RECORD intact.

Each case counts toward the tally printed at the end of the module (`-s` shows it; the issue note quotes it).
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from provisioner.installer import faults
from provisioner.installer.hook_files import PTH_FILE
from provisioner.installer.lock import alive
from provisioner.plan import LOADER_HOOK, Plan, Step
from provisioner.probe.target import check_files
from tests.support.cli import ortprov_argv
from tests.support.envs import clean_env, freeze, make_venv, tree_digest, venv_python
from tests.support.index_server import Fault, IndexServer
from tests.support.wheels import build_wheels, damage, ort_family

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.e2e

STEPS = (
    Step("uninstall", ("onnxruntime",), "remove the CPU build"),
    Step("install", ("onnxruntime-gpu[cuda,cudnn]==1.31.1",), "the GPU build and its NVIDIA wheels"),
    Step(LOADER_HOOK, (), "the loader hook"),
)
CUDNN_WHEEL = "nvidia_cudnn_cu12-9.1.0.70-py3-none-any.whl"
LEFT_BEHIND = (".ortprov-apply", ".ortprov-apply.lock")
TALLY: collections.Counter[str] = collections.Counter()

# stages every successful apply reaches, and those of the failure path (a bad wheel hash makes step 2 fail)
SUCCESS_STAGES = (
    "locked",
    "planned",
    "snapshot-started",
    "snapshot-linking",
    "snapshot-taken",
    "installer-started",
    "installer-started#2",
    "installer-finished",
    "installer-finished#2",
    "hook-written",
    "committing",
    "journal-discarded",
    "discard-partial",
    "discarded",
    "files-checked",
)
FAILURE_STAGES = ("restoring", "restore-partial", "restored", "journal-discarded", "discard-partial", "discarded")
ACTIONS = ("SIGKILL", "killgroup", "SIGINT", "SIGTERM")
# pip: every action at every stage; uv: a kill and a catchable signal (the suite's wall time)
RUNS = [("pip", action) for action in ACTIONS] + [("uv", "SIGKILL"), ("uv", "SIGTERM")]


def test_the_suite_covers_every_stage_marker() -> None:
    # "recovering" and "journal-writing": the dedicated tests below
    named = {s.split("#")[0] for s in SUCCESS_STAGES + FAILURE_STAGES} | {"recovering", "journal-writing"}
    # "verified" needs a real onnxruntime in the target: the verify is covered by test_apply.py and tests/gpu
    assert named | {"verified"} == set(faults.STAGES)


@pytest.fixture(scope="module")
def wheel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    build_wheels(root, ort_family("12"))
    return root


@pytest.fixture(scope="module")
def index(wheel_dir: Path):
    with IndexServer(wheel_dir) as server:
        yield server


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, index: IndexServer) -> Path:
    """A venv with the CPU onnxruntime 1.30.0 (copied for each case: creating one costs seconds)."""
    tmp = tmp_path_factory.mktemp("template")
    venv = tmp / "venv"
    make_venv(venv, clean_env(tmp), ("onnxruntime==1.30.0",), index.url)
    return venv


@pytest.fixture(scope="module", autouse=True)
def tally() -> object:
    yield
    if TALLY:
        print("\nfault suite tally (case: outcome -> runs):")
        for key, count in sorted(TALLY.items()):
            print(f"  {key}: {count}")


class Case:
    """One venv copied from the template, its fingerprint, and the applies run on it."""

    def __init__(self, tmp: Path, template: Path, index: IndexServer, installer: str) -> None:
        self.venv = tmp / "venv"
        shutil.copytree(template, self.venv, symlinks=True)
        self.env = clean_env(tmp)
        self.index = index
        self.installer = installer
        self.plan = tmp / "plan.json"
        plan = Plan(
            ort_version="1.31.1", package="onnxruntime-gpu", cuda_version="12.0", cudnn_version="9", steps=STEPS
        )
        self.plan.write_text(plan.to_json())
        self.python = venv_python(self.venv)
        self.frozen = freeze(self.python, self.env)
        self.files = tree_digest(self.venv)

    def argv(self, *extra: str, python: Path | None = None, verify: str = "--no-verify") -> list[str]:
        return ortprov_argv(
            "apply",
            "--plan",
            str(self.plan),
            "--python",
            str(python or self.python),
            "--index-url",
            self.index.url,
            "--installer",
            self.installer,
            verify,
            "--yes",
            *extra,
        )

    def start(
        self, fault: str | None = None, *extra: str, python: Path | None = None, verify: str = "--no-verify"
    ) -> subprocess.Popen[str]:
        env = {**self.env, faults.VARIABLE: fault} if fault else self.env
        return subprocess.Popen(
            self.argv(*extra, python=python, verify=verify),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: `killgroup` kills only it
        )

    def run(self, fault: str | None = None, *extra: str) -> subprocess.CompletedProcess[str]:
        proc = self.start(fault, *extra)
        out, err = proc.communicate(timeout=300)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def state(self) -> str:
        """before | applied | a sentence saying how the venv is broken."""
        frozen = freeze(self.python, self.env)
        files = tree_digest(self.venv)
        if frozen == self.frozen and files == self.files:
            return "before"
        if frozen == self.frozen:
            differ = sorted(set(files.items()) ^ set(self.files.items()))[:3]
            return f"broken: the same distributions, but files differ: {differ}"
        names = {line.split("==")[0].lower() for line in frozen}
        if "onnxruntime-gpu==1.31.1" in frozen and "onnxruntime" not in names:
            report = check_files(str(self.python))
            if report.incomplete:
                return f"broken: files missing from {[d.name for d in report.incomplete]}"
            if not (self.site / PTH_FILE).exists():
                return "broken: the loader hook is missing"
            return "applied"
        return f"broken: {frozen}"

    @property
    def site(self) -> Path:
        return next(self.venv.glob("lib/python*/site-packages"))

    def leftovers(self) -> list[str]:
        found = [name for name in LEFT_BEHIND if (self.venv / name).exists()]
        if (self.venv / ".lock").exists() and ".lock" not in self.files:
            found.append(".lock")
        return found


def _wait_stopped(pid: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            raise AssertionError(f"process {pid} ended before it reached the stage") from None
        if state == "T":
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} never stopped at the stage")


def _settle_and_judge(case: Case, key: str) -> str:
    """The next apply settles what the faulted one left (interrupted right after: it only recovers), then the
    venv must be as before or fully applied (a full apply after recovery: the dedicated tests below)."""
    settle = case.run("planned:SIGINT")
    if settle.returncode == 0:  # already applied: it never reaches the snapshot
        assert "already satisfied" in settle.stderr, settle.stderr
    else:
        assert settle.returncode == 130, settle.stderr
        # nothing changed, or (a killed apply's snapshot restored first) nothing else
        assert re.search(
            r"interrupted by SIGINT; (an earlier .* first, and nothing else|nothing) was changed", settle.stderr
        )
    assert "Traceback" not in settle.stderr
    state = case.state()
    TALLY[f"{key}: {state}"] += 1
    assert state in ("before", "applied"), settle.stderr
    assert case.leftovers() == [], settle.stderr
    return state


def _fault(case: Case, stage: str, action: str) -> subprocess.CompletedProcess[str]:
    proc = case.start(f"{stage}:{action}")
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in err, err
    if action in ("SIGKILL", "killgroup"):
        assert proc.returncode == -signal.SIGKILL, err
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize(("installer", "action"), RUNS)
@pytest.mark.parametrize("stage", SUCCESS_STAGES)
def test_fault_at_every_stage_of_a_successful_apply(
    tmp_path: Path, template: Path, index: IndexServer, installer: str, action: str, stage: str
) -> None:
    case = Case(tmp_path, template, index, installer)
    done = _fault(case, stage, action)
    if action in ("SIGINT", "SIGTERM"):
        signum = getattr(signal, action)
        # one clear state and one sentence: restored (128+N), or complete and kept (0), or nothing changed yet
        assert done.returncode in (0, 128 + signum), done.stderr
        if done.returncode:
            last = done.stderr.strip().splitlines()
            assert any(f"interrupted by {action}" in line for line in last), done.stderr
            assert case.state() == "before", done.stderr
        else:
            assert f"{action} came after the change was complete: it is kept" in done.stderr
            assert case.state() == "applied", done.stderr
    _settle_and_judge(case, f"{installer} {stage} {action}")


@pytest.mark.parametrize(("installer", "action"), RUNS)
@pytest.mark.parametrize("stage", FAILURE_STAGES)
def test_fault_at_every_stage_of_a_restore(
    tmp_path: Path, template: Path, index: IndexServer, installer: str, action: str, stage: str
) -> None:
    case = Case(tmp_path, template, index, installer)
    index.inject(CUDNN_WHEEL, Fault.BAD_HASH)
    try:
        done = _fault(case, stage, action)
    finally:
        index.clear()
    if action in ("SIGINT", "SIGTERM"):
        assert done.returncode == 1, done.stderr  # the restore holds the signal and finishes
        assert "the environment was restored" in done.stderr
        assert case.state() == "before"
    _settle_and_judge(case, f"{installer} restore:{stage} {action}")


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_a_killed_apply_is_restored_before_the_next_one_plans(
    tmp_path: Path, template: Path, index: IndexServer, installer: str
) -> None:
    """Killed after the uninstall: the next apply restores the CPU build first, then plans its removal again."""
    case = Case(tmp_path, template, index, installer)
    _fault(case, "installer-finished", "SIGKILL")
    assert case.state().startswith("broken")  # the CPU build is gone, the GPU build is not there
    again = case.run()
    assert again.returncode == 0, again.stderr
    assert "was killed before it finished; its snapshot was restored" in again.stderr
    assert case.state() == "applied"
    TALLY[f"{installer} recover-then-plan: applied"] += 1


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_double_ctrl_c_restores_once_and_says_so(
    tmp_path: Path, template: Path, index: IndexServer, installer: str
) -> None:
    case = Case(tmp_path, template, index, installer)
    proc = case.start("installer-finished:stop")
    _wait_stopped(proc.pid)
    os.kill(proc.pid, signal.SIGINT)
    os.kill(proc.pid, signal.SIGINT)
    os.kill(proc.pid, signal.SIGCONT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "interrupted by SIGINT" in err and "the environment was restored" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert case.state() == "before"
    assert case.leftovers() == []
    TALLY[f"{installer} double SIGINT: before"] += 1


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_two_applies_at_once_one_paused_during_its_snapshot(
    tmp_path: Path, template: Path, index: IndexServer, installer: str
) -> None:
    case = Case(tmp_path, template, index, installer)
    first = case.start("snapshot-linking:stop")
    _wait_stopped(first.pid)
    second = case.run()
    assert second.returncode == 1, second.stderr
    assert f"another `ortprov apply` (pid {first.pid}) is changing" in second.stderr
    dry = case.start(None, "--dry-run")  # a dry run changes nothing: it waits for the lock (DRY_RUN_WAIT)
    time.sleep(2)
    assert dry.poll() is None, dry.communicate()
    os.kill(first.pid, signal.SIGCONT)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    dry_out, dry_err = dry.communicate(timeout=300)
    assert dry.returncode == 0, dry_err
    assert "nothing was changed (dry run)" in dry_err + dry_out  # read after the first apply: its result
    assert f"waiting for apply pid {first.pid} to finish" in dry_err  # said once, not a silent wait
    assert case.state() == "applied"
    assert case.leftovers() == []
    TALLY[f"{installer} two at once: refused, then applied"] += 1


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_the_installer_dies_with_ortprov_and_a_lock_outlives_neither(
    tmp_path: Path, template: Path, index: IndexServer, installer: str
) -> None:
    """SIGKILL to ortprov's PID alone while the installer runs (stalled on a download): the installer gets the
    parent-death signal; the next apply restores rather than racing it."""
    case = Case(tmp_path, template, index, installer)
    index.inject("onnxruntime_gpu-1.31.1-py3-none-any.whl", Fault.STALL)
    try:
        proc = case.start()
        assert index.wait_requested("onnxruntime_gpu-1.31.1-py3-none-any.whl", timeout=120)
        deadline = time.monotonic() + 30
        children = _children(proc.pid)
        while not children and time.monotonic() < deadline:  # the request may come just before the fork returns
            time.sleep(0.05)
            children = _children(proc.pid)
        assert children
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(pid) for pid in children), "the installer outlived ortprov"
    finally:
        index.clear()
    _settle_and_judge(case, f"{installer} ortprov PID killed during the installer")


def _children(pid: int) -> list[int]:
    """The child processes of every thread of `pid` (a thread that starts the installer is its parent)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(p) for p in (task / "children").read_text().split()]
    return found


def _chattr(flag: str, path: Path) -> bool:
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


@contextlib.contextmanager
def _immutable(path: Path) -> Iterator[None]:
    """`path` immutable (chattr +i) for the block; the test skipped where that is refused."""
    if shutil.which("chattr") is None or not _chattr("+i", path):
        pytest.skip("chattr +i is refused here (not root, or the file system has no such attribute)")
    try:
        yield
    finally:
        _chattr("-i", path)


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_an_immutable_file_the_plan_touches_stops_the_apply_before_any_change(
    tmp_path: Path, template: Path, index: IndexServer, installer: str
) -> None:
    case = Case(tmp_path, template, index, installer)
    frozen = case.site / "onnxruntime" / "__init__.py"
    with _immutable(frozen):
        done = case.run()
    assert done.returncode == 1, done.stderr
    assert f"{frozen}: immutable (chattr +i)" in done.stderr
    assert "Traceback" not in done.stderr
    assert case.state() == "before" and case.leftovers() == []
    TALLY[f"{installer} immutable file: refused, before"] += 1


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_a_restore_that_cannot_put_everything_back_says_what_and_keeps_the_snapshot(
    tmp_path: Path, template: Path, index: IndexServer, installer: str
) -> None:
    """site-packages made immutable after the uninstall: the restore finishes what it can, names what it could
    not put back, exits non-zero, keeps the journal; once writable again, the next apply restores it all."""
    case = Case(tmp_path, template, index, installer)
    proc = case.start("installer-finished:stop")
    _wait_stopped(proc.pid)
    if shutil.which("chattr") is None or not _chattr("+i", case.site):
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.skip("chattr +i is refused here (not root, or the file system has no such attribute)")
    try:
        os.kill(proc.pid, signal.SIGINT)
        os.kill(proc.pid, signal.SIGCONT)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 130, err
        assert "the restore could not put back" in err and f"{case.site}/onnxruntime" in err
        assert "Traceback" not in err
        assert (case.venv / ".ortprov-apply" / "journal.json").exists()  # kept for the next apply
        again = case.run()
        assert again.returncode == 1 and "could not put back" in again.stderr and "Traceback" not in again.stderr
        # it was interrupted, not killed: the journal it kept says so
        assert "stopped (interrupted by SIGINT) and its restore could not put everything back" in again.stderr
        assert "was killed" not in again.stderr
    finally:
        _chattr("-i", case.site)
    TALLY[
        f"{installer} immutable during the restore: {_settle_and_judge(case, f'{installer} immutable during restore')}"
    ] += 1


def test_a_folder_of_another_owner_stops_the_apply_before_any_change(
    tmp_path: Path, template: Path, index: IndexServer
) -> None:
    """The venv belongs to uid 0, the CPU onnxruntime folder to nobody; apply runs as uid 0 without the
    capabilities that let root write anywhere (setpriv drops them): it may not write into that folder."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to own a folder by another user and drop the override capabilities")
    case = Case(tmp_path, template, index, "pip")
    folder = case.site / "onnxruntime"
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    case.files = tree_digest(case.venv)
    drop = ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]
    done = subprocess.run(drop + case.argv(), env=case.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert f"{folder}: a folder of uid 65534 that this user (uid 0) may not write to" in done.stderr
    assert "Traceback" not in done.stderr
    assert case.state() == "before" and case.leftovers() == []
    TALLY["pip foreign-owned folder: refused, before"] += 1


@pytest.fixture
def ext4_journal_last(tmp_path: Path):
    """A loop-mounted ext4 whose hash seed lists journal.json after the snapshot's trees (the order in which
    a plain rmtree of the snapshot folder would delete it last)."""
    if os.geteuid() != 0 or not shutil.which("mkfs.ext4"):
        pytest.skip("needs root and mkfs.ext4 to loop-mount an ext4 file system")
    image, mount = tmp_path / "fs.img", tmp_path / "mnt"
    mount.mkdir()
    for seed in range(1, 17):
        uuid = f"{seed:08x}-1111-2222-3333-444444444444"
        subprocess.run(["truncate", "-s", "96M", str(image)], check=True)
        made = subprocess.run(["mkfs.ext4", "-q", "-F", "-E", f"hash_seed={uuid}", str(image)], capture_output=True)
        if made.returncode != 0:
            pytest.skip(f"mkfs.ext4 -E hash_seed failed: {made.stderr.decode().strip()}")
        mounted = subprocess.run(["mount", "-o", "loop", str(image), str(mount)], capture_output=True)
        if mounted.returncode != 0:
            pytest.skip(f"cannot loop-mount here: {mounted.stderr.decode().strip()}")
        probe = mount / "probe" / ".ortprov-apply"
        probe.mkdir(parents=True)
        for name in ("tree-0", "tree-1"):
            (probe / name).mkdir()
        (probe / "journal.json").write_text("{}")
        last = os.listdir(probe)[-1] == "journal.json"
        shutil.rmtree(mount / "probe")
        if last:
            yield mount
            subprocess.run(["umount", str(mount)], check=False)
            return
        subprocess.run(["umount", str(mount)], check=True)
    pytest.skip("no hash seed of 16 listed journal.json last")


@pytest.mark.parametrize("stage", ["discard-partial", "discarded"])
def test_a_cleanup_killed_on_a_file_system_that_lists_the_journal_last(
    ext4_journal_last: Path, template: Path, index: IndexServer, stage: str
) -> None:
    case_dir = ext4_journal_last / "case"
    case_dir.mkdir()
    case = Case(case_dir, template, index, "uv")
    done = _fault(case, stage, "SIGKILL")
    assert done.returncode == -signal.SIGKILL
    assert not (case.venv / ".ortprov-apply" / "journal.json").exists()  # it went first
    assert _settle_and_judge(case, f"uv ext4 journal-last {stage} SIGKILL") == "applied"


# -- two applies that overlap (issue 26) --------------------------------------------------------------------

HOLDING_PYTHON = """#!/bin/sh
# apply B's target interpreter: its first run answers, then holds on (its output read, its exit not yet)
# until apply A has ended; every later run is the venv's Python itself
if mkdir {state}/first 2>/dev/null; then
    {real} "$@"
    status=$?
    touch {state}/answered
    while [ ! -e {state}/gate ]; do sleep 0.05; done
    exit $status
fi
exec {real} "$@"
"""


def _holding_python(case: Case, tmp: Path) -> tuple[Path, Path]:
    """A wrapper of the case's interpreter that answers its first run and then waits for the gate file."""
    state = tmp / "holding"
    state.mkdir()
    wrapper = tmp / "python-holding"
    wrapper.write_text(HOLDING_PYTHON.format(state=state, real=case.python))
    wrapper.chmod(0o755)
    return wrapper, state


def _wait_for(path: Path, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"apply B ended before its interpreter answered: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def corrupt_house(tmp_path_factory: pytest.TempPathFactory, wheel_dir: Path) -> Path:
    """The test wheels, with the onnxruntime-gpu wheel's bytes damaged (a CRC-32 check fails on extraction)."""
    house = tmp_path_factory.mktemp("corrupt-house")
    for wheel in wheel_dir.glob("*.whl"):
        shutil.copy(wheel, house / wheel.name)
    damage(house / "onnxruntime_gpu-1.31.1-py3-none-any.whl", "crc")
    return house


@pytest.mark.parametrize(
    ("installer", "how", "verify"),
    [
        ("pip", "fails", "--no-verify"),
        ("uv", "fails", "--no-verify"),
        ("pip", "SIGINT", "--no-verify"),
        ("uv", "fails", "--verify-static"),
    ],
)
def test_an_apply_that_read_the_target_while_another_one_restored_it_never_installs_both_flavours(
    tmp_path: Path, template: Path, index: IndexServer, corrupt_house: Path, installer: str, how: str, verify: str
) -> None:
    """Apply A removes the CPU build and stops before its install; apply B starts, its interpreter answers once
    and holds on; A fails on a corrupt wheel (or is interrupted) and restores the CPU build; then B goes on. B
    must read the target after it holds the lock: the GPU flavour alone, or B refused, never both."""
    case = Case(tmp_path, template, index, installer)
    wrapper, state = _holding_python(case, tmp_path)
    first = case.start("installer-finished:stop", "--wheelhouse", str(corrupt_house))
    _wait_stopped(first.pid)
    second = case.start(None, python=wrapper, verify=verify)
    _wait_for(state / "answered", second)
    if how == "SIGINT":
        os.kill(first.pid, signal.SIGINT)
    os.kill(first.pid, signal.SIGCONT)
    _, first_err = first.communicate(timeout=300)
    if how == "SIGINT":
        assert first.returncode == 130, first_err
    else:
        assert first.returncode == 1, first_err
        assert "onnxruntime_gpu-1.31.1-py3-none-any.whl" in first_err, first_err  # the wheel, named
    assert "the environment was restored" in first_err, first_err
    assert case.state() == "before", first_err
    (state / "gate").touch()
    _, second_err = second.communicate(timeout=300)
    assert "Traceback" not in second_err, second_err
    frozen = freeze(case.python, case.env)
    assert not ("onnxruntime-gpu==1.31.1" in frozen and "onnxruntime==1.30.0" in frozen), second_err
    assert "left differences" not in second_err, second_err
    if second.returncode == 0:
        assert case.state() == "applied", second_err
        assert "- onnxruntime==1.30.0" in second_err, second_err
    elif verify == "--verify-static" and "verify" in second_err:  # the stub wheels hold no CUDA provider
        assert "the environment was restored" in second_err and "distributions as before" in second_err
        assert case.state() == "before", second_err
    else:
        assert "is changing" in second_err, second_err  # refused: A held the lock
        assert case.state() == "before", second_err
    assert case.leftovers() == [], second_err
    TALLY[f"{installer} overlap ({how}, {verify}): {case.state()}"] += 1


# -- what each fault is called (issue 26) ----------------------------------------------------------------------


def test_a_kill_while_the_first_journal_is_written_is_called_that(
    tmp_path: Path, template: Path, index: IndexServer
) -> None:
    case = Case(tmp_path, template, index, "pip")
    _fault(case, "journal-writing", "SIGKILL")
    assert (case.venv / ".ortprov-apply").is_dir() and not (case.venv / ".ortprov-apply" / "journal.json").exists()
    dry = case.run(None, "--dry-run")
    assert "was killed while taking its snapshot, before it changed anything" in dry.stderr, dry.stderr
    again = case.run()
    assert again.returncode == 0, again.stderr
    assert "was killed while taking its snapshot, before it changed anything; that partial snapshot was removed" in (
        again.stderr
    )
    assert "behind while removing it" not in again.stderr
    assert case.state() == "applied" and case.leftovers() == []
    TALLY["pip journal-writing SIGKILL: applied"] += 1


def test_sigint_during_a_recovery_says_the_recovery_changed_the_environment(
    tmp_path: Path, template: Path, index: IndexServer
) -> None:
    case = Case(tmp_path, template, index, "pip")
    _fault(case, "installer-finished", "SIGKILL")  # the CPU build removed, the GPU one not installed
    proc = case.start("recovering:stop")
    _wait_stopped(proc.pid)
    os.kill(proc.pid, signal.SIGINT)
    os.kill(proc.pid, signal.SIGCONT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "its snapshot was restored" in err
    assert (
        "interrupted by SIGINT; an earlier apply's snapshot was restored first, and nothing else was changed" in err
    ), err
    assert "interrupted by SIGINT; nothing was changed" not in err
    assert case.state() == "before" and case.leftovers() == []
    TALLY["pip SIGINT during recovery: before"] += 1


def test_without_a_prediction_an_unchangeable_file_outside_the_plan_does_not_stop_it(
    tmp_path: Path, template: Path, index: IndexServer
) -> None:
    """The venv's pip (23.2) predicts nothing before a real run; an immutable file of pip itself, which the plan
    does not touch, is no reason to refuse (it used to be "cannot change 1 paths the plan touches")."""
    case = Case(tmp_path, template, index, "pip")
    frozen = next(case.site.glob("pip/__init__.py"))
    with _immutable(frozen):
        done = case.run()
    assert done.returncode == 0, done.stderr
    assert "cannot change" not in done.stderr
    assert case.state() == "applied" and case.leftovers() == []
    TALLY["pip immutable file outside the plan, no prediction: applied"] += 1


COMPILING_PYTHON = """#!/bin/sh
# the target interpreter, except that the loader hook's byte-compilation hangs (its pid and group are noted)
if [ "$1" = "-m" ] && [ "$2" = "compileall" ]; then
    echo "$$ $(ps -o pgid= -p $$)" > {state}
    exec sleep 300
fi
exec {real} "$@"
"""


def test_the_loader_hooks_compilation_dies_with_ortprov(tmp_path: Path, template: Path, index: IndexServer) -> None:
    case = Case(tmp_path, template, index, "pip")
    noted = tmp_path / "compileall.pid"
    wrapper = tmp_path / "python-compiling"
    wrapper.write_text(COMPILING_PYTHON.format(state=noted, real=case.python))
    wrapper.chmod(0o755)
    proc = case.start(None, python=wrapper)
    deadline = time.monotonic() + 240
    while not noted.exists() or not noted.read_text().strip():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    pid, group = (int(word) for word in noted.read_text().split())
    assert group == pid  # its own process group, as the installers have
    os.kill(proc.pid, signal.SIGKILL)  # ortprov alone
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), "the loader hook's compileall outlived ortprov"
    _settle_and_judge(case, "pip ortprov killed during the hook's compileall")


@pytest.fixture
def tight_tmpfs(tmp_path: Path):
    """A tmpfs (root only) whose inode count can be cut down to what it holds, plus a few."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512M", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_no_inodes_left_for_the_snapshot_is_a_full_disk_in_one_line(
    tight_tmpfs: Path, template: Path, index: IndexServer
) -> None:
    case_dir = tight_tmpfs / "case"
    case_dir.mkdir()
    case = Case(case_dir, template, index, "pip")
    stats = os.statvfs(tight_tmpfs)
    used = stats.f_files - stats.f_ffree
    # room for the lock file and the snapshot's first folders, not for a copy of every folder of the venv
    remount = ["mount", "-o", f"remount,nr_inodes={used + 12}", str(tight_tmpfs)]
    subprocess.run(remount, check=True, capture_output=True)
    done = case.run()
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()
    error = next(line for line in last if line.startswith("error: "))
    assert "taking the snapshot of" in error and "the disk is full: no space or no free inodes left" in error
    assert error.endswith("nothing was changed"), error
    assert "OSError" not in done.stderr and "Errno" not in done.stderr and "Traceback" not in done.stderr
    subprocess.run(["mount", "-o", "remount,nr_inodes=100000", str(tight_tmpfs)], check=True, capture_output=True)
    assert case.state() == "before" and case.leftovers() == []
    TALLY["pip no inodes for the snapshot: before"] += 1
