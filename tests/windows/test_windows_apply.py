"""ortprov on Windows, executed: detect, apply into a fresh Windows venv (the real win_amd64 wheels of
onnxruntime-gpu and the NVIDIA libraries, from an index on 127.0.0.1), the loader hook's DLL folders, verify
--static and doctor, all run by ortprov installed in a real Windows CPython under wine64 (tests/support/wine.py).

Where wine is not Windows, said where it matters: no NVIDIA driver (nvcuda.dll, nvml.dll absent: a machine
without a driver, as a build server or a VM is), `import onnxruntime` aborts in wine's ucrtbase (so the user's
program below stops where `import onnxruntime` would hand over to onnxruntime's own code: after the import system
found the package, which is when the hook runs), and wine's loader refuses onnxruntime_providers_cuda.dll itself
(error 998) while every DLL it imports loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.index_server import IndexServer
from tests.support.wine import REPO, WindowsOrtprov, install_ortprov, wheelhouse, windows_python, winpath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.e2e, pytest.mark.windows, pytest.mark.network, pytest.mark.xdist_group("windows")]

DRIVER = "581.57"  # a Windows driver of the R580 branch (CUDA 13.0)
GPU_CC = "8.6"  # an RTX 3070, seed 000's GPU
PLAN_FLAGS = ("--driver", DRIVER, "--gpu-cc", GPU_CC)
PROVIDER_DLL = "onnxruntime_providers_cuda.dll"

# The user's plain program, as far as wine lets it run: `import onnxruntime` first asks the import system for the
# package (ortprov's hook runs there, as in every import), then the CUDA provider loads the DLLs it imports. Here:
# find the package, then load by name every DLL of the provider's import closure (read from its PE tables) and
# every NVIDIA DLL the wheels ship (cuDNN and its sub-libraries, cuFFT, cuRAND, NVRTC: opened at run time), then
# the driver's nvcuda.dll and the provider itself. Prints one JSON object.
CLOSURE_PROGRAM = r"""
import ctypes, importlib.util, json, os, sys
sys.path.insert(0, sys.argv[1])  # ortprov's standalone PE reader (standard library only)
import pe

spec = importlib.util.find_spec("onnxruntime")
capi = os.path.join(os.path.dirname(spec.origin), "capi")
provider = os.path.join(capi, "onnxruntime_providers_cuda.dll")
def imports(path):
    with open(path, "rb") as handle:
        def read(offset, length):
            handle.seek(offset)
            return handle.read(length)
        linked, delayed = pe.read_imports(read)
    return linked + delayed
def is_nvidia(name):
    lower = name.lower()
    return lower.startswith(("cu", "nvrtc", "nvjitlink", "zlibwapi")) and lower != "cudart_static.dll"
loaded, failed, order = {}, {}, []
def load(name):
    try:
        handle = ctypes.WinDLL(name)
    except OSError as exc:
        failed[name] = str(exc)
        return None
    buffer = ctypes.create_unicode_buffer(1024)
    ctypes.windll.kernel32.GetModuleFileNameW(ctypes.c_void_p(handle._handle), buffer, 1024)
    loaded[name] = buffer.value
    return buffer.value
queue, seen = list(imports(provider)), set()
while queue:
    name = queue.pop(0)
    if name.lower() in seen or not is_nvidia(name):
        continue
    seen.add(name.lower())
    order.append(name)
    where = load(name)
    if where:
        queue += imports(where)
shipped = []
for folder in os.environ.get("PATH", "").split(os.pathsep):
    if os.sep + "nvidia" + os.sep in folder and os.path.isdir(folder):
        shipped += sorted(f for f in os.listdir(folder) if f.lower().endswith(".dll"))
for name in shipped:
    if name.lower() not in seen:
        seen.add(name.lower())
        load(name)
load("nvcuda.dll")
try:
    ctypes.WinDLL(provider, winmode=0x8)  # LOAD_WITH_ALTERED_SEARCH_PATH, as onnxruntime loads it
    provider_error = None
except OSError as exc:
    provider_error = str(exc)
print(json.dumps({"imports": order, "shipped": shipped, "loaded": loaded, "failed": failed,
                  "provider_error": provider_error, "provider_imports": imports(provider)}))
"""


def planned_requirements(windows: WindowsOrtprov) -> list[str]:
    """The plan's pins for the Windows target, as ortprov prints them (planned on Linux: no index needed)."""
    argv = [sys.executable, "-m", "provisioner", "plan", "--platform", "windows-amd64", "--python", "3.13"]
    done = subprocess.run([*argv, *PLAN_FLAGS, "--format", "requirements"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line and not line.startswith("#")]


@pytest.fixture(scope="module")
def tool(tmp_path_factory: pytest.TempPathFactory) -> WindowsOrtprov:
    """ortprov installed from this checkout's wheel into a Windows venv."""
    return install_ortprov(windows_python(), tmp_path_factory.mktemp("win") / "ortprov-venv")


@pytest.fixture(scope="module")
def index(tool: WindowsOrtprov) -> IndexServer:
    """The Windows wheels of the plan (and onnxruntime-gpu's dependencies), cached, on 127.0.0.1."""
    server = IndexServer(wheelhouse("apply", planned_requirements(tool)))
    server.__enter__()
    yield server
    server.__exit__(None, None, None)


@pytest.fixture(scope="module")
def applied(tool: WindowsOrtprov, index: IndexServer, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`ortprov apply --venv X ... -y` into a fresh Windows venv, done once for the tests that read it."""
    venv = tmp_path_factory.mktemp("win-apply") / "venv"
    done = tool.ortprov("apply", "--venv", winpath(venv), *PLAN_FLAGS, "-y", "--index-url", index.url, timeout=1500)
    return {"venv": venv, "done": done}


def run_closure(tool: WindowsOrtprov, venv: Path) -> dict:
    program = tool.python_code(
        CLOSURE_PROGRAM, winpath(REPO / "provisioner" / "standalone"), python=venv / "Scripts" / "python.exe"
    )
    assert program.returncode == 0, program.stderr[-3000:]
    return json.loads(program.stdout.strip().splitlines()[-1])


def test_detect_on_windows_finds_no_driver_and_says_so(tool: WindowsOrtprov) -> None:
    """wine has no NVML (no nvml.dll): the same clear answer as a GPU-less Linux box, no traceback."""
    done = tool.ortprov("detect", "--json")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    host = json.loads(done.stdout)
    assert (host["platform"]["os"], host["platform"]["arch"]) == ("windows", "amd64")
    assert host["environment"]["container"] is None and host["environment"]["wsl"] is False
    text = tool.ortprov("detect")
    assert text.returncode == 0 and "Traceback" not in text.stderr
    assert "no NVIDIA driver" in text.stdout + text.stderr


def test_apply_into_a_fresh_windows_venv_installs_the_plan_and_the_hook(tool: WindowsOrtprov, applied: dict) -> None:
    done, venv = applied["done"], applied["venv"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert "Traceback" not in done.stderr
    site = venv / "Lib" / "site-packages"
    assert (site / "ortprov-loader.pth").is_file() and (site / "_ortprov_loader").is_dir()
    # exactly the plan's pins, installed by the venv's own pip
    frozen = tool.python_code("import importlib.metadata as m; print(sorted((d.name, d.version) "
                              "for d in m.distributions()))", python=venv / "Scripts" / "python.exe")  # fmt: skip
    installed = {name.lower().replace("_", "-"): version for name, version in eval(frozen.stdout)}  # noqa: S307
    for pin in planned_requirements(tool):
        name, version = pin.split("==")
        assert installed.get(name.split("[")[0]) == version, (pin, installed)
    # no driver under wine: the static verdict, and what it did not prove
    assert "verify: no CUDA session on this machine (no-driver)" in done.stderr
    assert "not proven: a CUDA session" in done.stdout
    # the commands it echoed are PowerShell's, the shell a Windows user pastes them into
    assert "'" in done.stderr or '"' in done.stderr


def test_plain_program_loads_the_providers_whole_closure_through_the_hook(tool: WindowsOrtprov, applied: dict) -> None:
    """Seed 000's bug, gone: every NVIDIA DLL the CUDA provider imports, and every one the wheels ship (opened at
    run time), loads by name through the hook's folders; the one DLL left missing is the driver's nvcuda.dll."""
    venv = applied["venv"]
    assert applied["done"].returncode == 0
    closure = run_closure(tool, venv)
    assert closure["imports"][:2] == ["cublasLt64_13.dll", "cublas64_13.dll"], closure["imports"]
    nvidia = [name for name in closure["loaded"] if name.lower() != "onnxruntime_providers_shared.dll"]
    for family in ("cublasLt64_", "cublas64_", "cudart64_", "cufft64_", "curand64_", "cudnn64_9", "cudnn_ops64_9"):
        assert any(name.startswith(family) for name in nvidia), (family, closure)
    assert all(str(venv.name) in winpath_of for winpath_of in closure["loaded"].values())
    assert list(closure["failed"]) == ["nvcuda.dll"], closure["failed"]
    assert closure["provider_error"] is not None  # wine's loader refuses the provider itself (error 998), see above

    # the same venv without the hook (a plain `pip install onnxruntime-gpu[cuda,cudnn]`): the first NVIDIA DLL
    pth = venv / "Lib" / "site-packages" / "ortprov-loader.pth"
    pth.rename(pth.with_suffix(".off"))
    try:
        bare = run_closure(tool, venv)
    finally:
        pth.with_suffix(".off").rename(pth)
    assert bare["imports"][0] == "cublasLt64_13.dll"
    assert "cublasLt64_13.dll" in bare["failed"], bare


def test_verify_static_says_the_same_in_its_own_words(tool: WindowsOrtprov, applied: dict) -> None:
    venv = applied["venv"]
    done = tool.ortprov("verify", "--static", "--python", winpath(venv / "Scripts" / "python.exe"), "--json")
    report = json.loads(done.stdout)
    libraries = {entry["soname"]: entry for entry in report["static"]["libraries"]}
    assert libraries["nvcuda.dll"]["status"] == "driver-missing"
    missing = [name for name, entry in libraries.items() if entry["status"] != "ok"]
    assert missing == ["nvcuda.dll"], missing
    for name in ("cublasLt64_13.dll", "cublas64_13.dll", "cudnn64_9.dll", "cufft64_12.dll"):
        assert libraries[name]["status"] == "ok" and libraries[name]["source"] == "pip", libraries[name]
    assert report["loader_hook"]["folders"], report["loader_hook"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr


def test_doctor_names_the_missing_cudnn_dll_and_apply_repairs_it(
    tool: WindowsOrtprov, applied: dict, index: IndexServer
) -> None:
    """Seed 000's machine: the cuDNN wheel removed after apply."""
    venv = applied["venv"]
    python = winpath(venv / "Scripts" / "python.exe")
    removed = tool.windows.run(venv / "Scripts" / "python.exe", "-m", "pip", "uninstall", "-y", "-q",
                               "nvidia-cudnn-cu13")  # fmt: skip
    assert removed.returncode == 0, removed.stderr
    doctor = tool.ortprov("doctor", "--python", python, "--json")
    findings = json.loads(doctor.stdout)["findings"]
    text = json.dumps(findings)
    assert "cudnn64_9.dll" in text, findings
    assert doctor.returncode == 1
    repaired = tool.ortprov("apply", "--venv", winpath(venv), *PLAN_FLAGS, "-y", "--index-url", index.url)
    assert repaired.returncode == 0, repaired.stderr[-4000:]
    again = tool.ortprov("verify", "--static", "--python", python, "--json")
    statuses = {e["soname"]: e["status"] for e in json.loads(again.stdout)["static"]["libraries"]}
    assert statuses.get("cudnn64_9.dll") == "ok" and os.path.isdir(venv / "Lib" / "site-packages" / "nvidia" / "cudnn")


LOCK_PROGRAM = r"""
import json, os, subprocess, sys, tempfile
from provisioner.installer import lock
prefix = tempfile.mkdtemp()
child = (
    "import sys\nfrom provisioner.installer import lock\ntry:\n    lock.acquire(sys.argv[1])\n    print('acquired')\n"
    "except lock.Busy as exc:\n    print('busy:', exc)\n"
)
def other():
    argv = [sys.executable, "-c", child, prefix]
    done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return (done.stdout + done.stderr).strip()
held = lock.acquire(prefix)
text = open(os.path.join(prefix, lock.LOCK_NAME)).read()  # the holder's text stays readable
while_held = other()
held.release()
print(json.dumps({"text": text, "while_held": while_held, "after": other(), "alive": lock.alive(os.getpid())}))
"""


def test_the_apply_lock_holds_on_windows(tool: WindowsOrtprov) -> None:
    """Two applies never change one Windows environment at once: msvcrt's lock (issue 31), and a live holder is
    asked about with OpenProcess (os.kill(pid, 0) would end it there)."""
    done = tool.python_code(LOCK_PROGRAM)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["text"].startswith("pid=") and seen["alive"] is True
    assert seen["while_held"].startswith("busy: another `ortprov apply` (pid "), seen
    assert seen["after"] == "acquired", seen


def test_seed_003_the_cpu_package_is_swapped_for_the_gpu_one(
    tool: WindowsOrtprov, index: IndexServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Seed 003's machine: the CPU onnxruntime installed (the real win_amd64 wheel): apply removes it and installs
    the planned GPU package in one transaction, and the result is complete (every file its RECORD lists)."""
    cpu = wheelhouse("cpu-ort", ["onnxruntime==1.31.1"])
    venv = tmp_path_factory.mktemp("win-seed003") / "venv"
    made = tool.windows.run(tool.windows.python, "-m", "venv", winpath(venv), timeout=600)
    assert made.returncode == 0, made.stderr
    python = venv / "Scripts" / "python.exe"
    argv = ["-m", "pip", "install", "-q", "--no-index", "--find-links", winpath(cpu), "onnxruntime==1.31.1"]
    installed = tool.windows.run(python, *argv, timeout=900)
    assert installed.returncode == 0, installed.stderr[-2000:]
    done = tool.ortprov("apply", "--venv", winpath(venv), *PLAN_FLAGS, "-y", "--index-url", index.url, timeout=1500)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "uninstall onnxruntime" in done.stderr and "Traceback" not in done.stderr
    listed = tool.python_code("import importlib.metadata as m; print(sorted(d.metadata['Name'].lower() "
                              "for d in m.distributions()))", python=python)  # fmt: skip
    names = eval(listed.stdout)  # noqa: S307
    assert "onnxruntime-gpu" in names and "onnxruntime" not in names, names
    check = tool.ortprov("verify", "--static", "--python", winpath(python), "--json")
    report = json.loads(check.stdout)
    assert [d["name"] for d in report["ort"]["dists"]] == ["onnxruntime-gpu"], report["ort"]["dists"]
    missing = [e["soname"] for e in report["static"]["libraries"] if e["status"] != "ok"]
    assert missing == ["nvcuda.dll"], missing


JOB_PROGRAM = r"""
import ctypes, json, subprocess, sys
from provisioner import childproc, winjob
argv = [sys.executable, "-c", "import time; time.sleep(60)"]
ours = childproc.start(argv)
bare = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
kernel32.IsProcessInJob.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int))
def in_job(process):
    inside = ctypes.c_int(0)
    ok = kernel32.IsProcessInJob(int(process._handle), winjob._the_job(), ctypes.byref(inside))
    return bool(ok) and bool(inside.value)
seen = {"ours": in_job(ours), "bare": in_job(bare)}
for process in (ours, bare):
    process.kill()
print(json.dumps(seen))
"""


def test_children_join_the_job_that_ends_them_with_ortprov_on_windows(tool: WindowsOrtprov) -> None:
    """The parent-death signal's Windows form (provisioner/winjob.py): every child ortprov starts is in the one job
    made to end them with ortprov (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), so no pip or uv keeps changing a venv that
    the next apply restores (issue 31); a plain subprocess is not in it. What Windows does when the job closes is
    its documented behaviour; wine's own handling of a parent's end was seen to differ between runs, so the test
    asks the job, not the timing."""
    done = tool.python_code(JOB_PROGRAM)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"ours": True, "bare": False}
