"""The pure planner over a table of hosts: drivers, GPUs, Pythons, platforms, torch, installed flavours."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from provisioner.errors import BadInput, NoCompatiblePlan
from provisioner.facts import Gpu, HostFacts, LibraryHit, MissingFiles, OrtDist
from provisioner.matrix.model import Matrix, OrtBuild
from provisioner.plan import Plan, Request
from provisioner.planner import driver_cuda_version, make_plan, retarget
from provisioner.render.recipes import render
from provisioner.userfiles import read_host_file
from provisioner.versions import at_least, vtuple
from tests.unit.matrix_fixtures import CUDA12_FEED, MATRIX, host, with_cpu_ort, with_torch

if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix, OrtBuild

HOSTS_DIR = Path(__file__).resolve().parents[1] / "hosts"
DRIVERS = {
    "418": "418.87.01",
    "470": "470.82.01",
    "525": "525.60.13",
    "535": "535.104.05",
    "550": "550.54.15",
    "575": "575.51.03",
    "580": "580.65.06",
}
CCS = ("5.2", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0")
PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.13t", "3.14")
PLATFORMS = ("linux-x86_64", "linux-aarch64", "windows-amd64")


def plan(*hosts: HostFacts, **request: object) -> Plan:
    return make_plan(hosts, MATRIX, Request(**request))  # type: ignore[arg-type]


def no_plan(*hosts: HostFacts, **request: object) -> NoCompatiblePlan:
    with pytest.raises(NoCompatiblePlan) as info:
        plan(*hosts, **request)
    return info.value


def chosen(p: Plan) -> tuple[str, str]:
    return p.ort_version, p.cuda_version


def reasons_of(rejected: object) -> str:
    return "\n".join(f"{r.candidate}: {r.reason}" for r in rejected)  # type: ignore[attr-defined]


# --- the scenario table ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("driver", "expected"),
    [
        ("418", None),
        ("470", ("1.19.2", "11.8")),  # CUDA 11 minor-version compatibility (>= 450.80.02)
        ("525", ("1.31.1", "12.8")),  # CUDA 12 minor-version compatibility (>= 525.60.13)
        ("535", ("1.31.1", "12.8")),
        ("550", ("1.31.1", "12.8")),
        ("575", ("1.31.1", "12.8")),
        ("580", ("1.31.1", "13.0")),
    ],
)
def test_driver_table(driver: str, expected: tuple[str, str] | None) -> None:
    h = host(driver=DRIVERS[driver], cc="8.6", python="3.12")
    if expected is None:
        error = no_plan(h)
        text = reasons_of(error.rejected)
        assert "1.19.2 (CUDA 11.8) needs driver >= 450.80.02; this host has 418.87.01" in text
        assert "1.31.1 (CUDA 13.0) needs driver >= 580.65.06; this host has 418.87.01" in text
        assert len(error.rejected) == len(MATRIX.builds)
    else:
        assert chosen(plan(h)) == expected


@pytest.mark.parametrize(
    ("cc", "expected"),
    [
        ("5.2", ("1.31.1", "12.8")),
        ("6.1", ("1.31.1", "12.8")),
        ("7.0", ("1.31.1", "12.8")),
        ("7.5", ("1.31.1", "13.0")),
        ("8.0", ("1.31.1", "13.0")),
        ("8.6", ("1.31.1", "13.0")),
        ("8.9", ("1.31.1", "13.0")),
        ("9.0", ("1.31.1", "13.0")),
        ("10.0", ("1.31.1", "13.0")),
        ("12.0", ("1.31.1", "13.0")),
    ],
)
def test_compute_capability_table(cc: str, expected: tuple[str, str]) -> None:
    p = plan(host(driver=DRIVERS["580"], cc=cc))
    assert chosen(p) == expected
    if expected[1] == "12.8":
        (lost,) = [r for r in p.rejected if "CUDA 13.0" in r.candidate]
        assert f"1.31.1 has no kernels for compute capability {cc} (sm_75 80 86 89 90 100 120, no PTX)" in lost.reason


@pytest.mark.parametrize(
    ("python", "expected"),
    [
        ("3.8", ("1.19.2", "12.2")),
        ("3.9", ("1.19.2", "12.2")),
        ("3.10", ("1.22.0", "12.4")),
        ("3.11", ("1.31.1", "13.0")),
        ("3.12", ("1.31.1", "13.0")),
        ("3.13", ("1.31.1", "13.0")),
        ("3.13t", ("1.31.1", "13.0")),
        ("3.14", ("1.31.1", "13.0")),
    ],
)
def test_python_table(python: str, expected: tuple[str, str]) -> None:
    p = plan(host(driver=DRIVERS["580"], cc="8.6", python=python))
    assert chosen(p) == expected
    if python in ("3.8", "3.9"):
        assert f"no wheel for Python {python} after 1.19.2" in reasons_of(p.rejected)


def test_free_threaded_python_without_wheels_is_no_plan() -> None:
    error = no_plan(host(python="3.12t"))
    assert "no onnxruntime-gpu wheel for Python 3.12t (free-threaded)" in reasons_of(error.rejected)


@pytest.mark.parametrize(
    ("platform", "driver", "expected"),
    [
        ("linux-x86_64", "580.65.06", ("1.31.1", "13.0")),
        ("linux-aarch64", "580.65.06", ("1.31.1", "13.0")),  # the CUDA 12.8 feed build has no aarch64 wheel
        ("windows-amd64", "581.15", ("1.31.1", "13.0")),
        ("windows-amd64", "576.02", ("1.31.1", "12.8")),  # Windows floors: CUDA 13 needs >= 580.88 there
    ],
)
def test_platform_table(platform: str, driver: str, expected: tuple[str, str]) -> None:
    assert chosen(plan(host(driver=driver, platform=platform))) == expected


def test_aarch64_glibc_floor_is_explained() -> None:
    error = no_plan(host(platform="linux-aarch64", glibc="2.31"))
    text = reasons_of(error.rejected)
    assert "1.31.1 aarch64 wheels need glibc >= 2.34; this host has 2.31" in text
    assert "has no wheel for linux-aarch64" in text


def test_unsupported_platform_lists_where_wheels_exist() -> None:
    mac = replace(host(), platform=replace(host().platform, os="darwin", arch="arm64", glibc=None))
    error = no_plan(mac)
    assert "has no wheel for darwin-aarch64" in reasons_of(error.rejected)


# --- drivers, libraries, minor-version compatibility ----------------------------------------------------


def test_h100_driver_580_pins_cuda_13_0_libraries_not_newer_minors() -> None:
    p = plan(host(driver="580.65.06", cc="9.0"))
    assert p.install[0] == "onnxruntime-gpu[cuda,cudnn]==1.31.1"
    assert "nvidia-cuda-runtime==13.0.96" in p.install  # not 13.1.80: the driver knows CUDA 13.0
    assert "nvidia-cuda-nvrtc==13.0.88" in p.install
    assert "nvidia-cufft==12.0.0.61" in p.install
    assert "nvidia-cudnn-cu13==9.14.0.64" in p.install
    assert p.cudnn_version == "9.14.0.64"
    runtime = next(pin for pin in p.pins if pin.package == "nvidia-cuda-runtime")
    assert "driver (CUDA 13.0) supports" in runtime.reason and "13.1" in runtime.reason
    assert p.uninstall == ()
    assert p.index_url is None


def test_newer_driver_gets_newer_library_minor() -> None:
    p = plan(host(driver="590.44.01", cc="9.0"))
    assert "nvidia-cuda-runtime==13.1.80" in p.install


def test_minor_version_compatibility_is_said_and_libraries_stay_at_the_build_minor() -> None:
    p = plan(host(driver="535.104.05", cc="6.1", python="3.11"))
    assert chosen(p) == ("1.31.1", "12.8")
    assert any("only through CUDA minor-version compatibility" in note for note in p.notes)
    assert any("newer than the CUDA 12.2 the driver supports" in note for note in p.notes)
    assert "nvidia-cuda-runtime-cu12==12.8.90" in p.install
    lost = reasons_of(p.rejected)
    assert "1.31.1 (CUDA 13.0) needs driver >= 580.65.06; this host has 535.104.05 (CUDA 12.2)" in lost
    assert "1.31.1 has no kernels for compute capability 6.1 (sm_75 80 86 89 90 100 120, no PTX)" in lost


def test_full_driver_support_beats_minor_compat_within_a_release() -> None:
    matrix = replace(MATRIX, builds=(*MATRIX.builds, _build_like("1.31.1", "12.2")))
    p = make_plan([host(driver="535.104.05", cc="8.6", python="3.12")], matrix, Request())
    assert chosen(p) == ("1.31.1", "12.2")
    assert "fully" in reasons_of(p.rejected)


def _build_like(version: str, cuda: str) -> OrtBuild:
    base = next(b for b in MATRIX.builds if b.ort_version == version and b.cuda_version == "12.8")
    return replace(base, cuda_version=cuda, index_url="https://example.org/cuda-12-2/simple/")


def test_driver_derived_from_version_when_cuda_not_reported() -> None:
    h = replace(host(), driver=replace(host().driver, cuda_version=None, version="550.54.15"))
    assert driver_cuda_version(h, MATRIX) == "12.4"
    assert chosen(plan(h)) == ("1.31.1", "12.8")


def test_driver_known_only_by_cuda_version() -> None:
    h = replace(host(), driver=replace(host().driver, version=None, cuda_version="12.4"))
    p = plan(h)
    assert chosen(p) == ("1.31.1", "12.8")
    assert "needs a driver for CUDA 13" in reasons_of(p.rejected)


def test_build_server_without_driver_or_gpu_plans_from_the_matrix_and_says_so() -> None:
    p = plan(host(driver=None, cc=None))
    assert chosen(p) == ("1.31.1", "13.0")
    assert any("no NVIDIA driver known on this host" in n and ">= 580.65.06" in n for n in p.notes)
    runtime = next(pin for pin in p.pins if pin.package == "nvidia-cuda-runtime")
    assert runtime.version == "13.0.96" and "driver unknown" in runtime.reason


def test_hidden_gpus_are_still_checked_and_noted() -> None:
    h = replace(host(), gpus=(Gpu(0, "P100", "6.0", visible=False),))
    p = plan(h)
    assert p.cuda_version == "12.8"
    assert any("hidden" in n for n in p.notes)


# --- compute capability edges ---------------------------------------------------------------------------


def test_new_gpu_on_old_cuda_is_rejected_with_the_first_cuda_that_knows_it() -> None:
    p = plan(host(driver="575.51.03", cc="12.0"))
    assert chosen(p) == ("1.31.1", "12.8")
    text = reasons_of(p.rejected)
    assert "1.31.1 (CUDA 13.0) needs driver >= 580.65.06" in text


def test_old_cuda_release_predates_blackwell() -> None:
    error = no_plan(host(driver="575.51.03", cc="12.0"), ort="1.19")  # its GPU code was not read
    assert "predates compute capability 12.0" in reasons_of(error.rejected)
    assert "CUDA 12.8 is the first release that does" in reasons_of(error.rejected)


def test_missing_kernels_in_the_build_reject_it() -> None:
    error = no_plan(host(driver="580.65.06", cc="5.2"), ort="1.22.0")
    assert "1.22.0 has no kernels for compute capability 5.2 (sm_61 70 75 80 86 89 90, PTX compute_90)" in (
        reasons_of(error.rejected)
    )


def test_same_major_kernels_cover_a_newer_minor() -> None:
    assert chosen(plan(host(cc="8.7"))) == ("1.31.1", "13.0")  # sm_86 SASS runs on 8.7
    assert chosen(plan(host(cc="12.1"))) == ("1.31.1", "13.0")  # sm_120 SASS runs on 12.1


# --- existing libraries, flavours -----------------------------------------------------------------------


def test_torch_cuda12_prefers_the_cuda12_build_and_reuses_its_wheels() -> None:
    p = plan(with_torch(host(), 12))
    assert chosen(p) == ("1.31.1", "12.8")
    assert p.index_url == CUDA12_FEED
    assert "nvidia-cudnn-cu12==9.1.0.70" in p.install  # torch's, not 9.8.0.87
    assert "nvidia-cuda-runtime-cu12==12.4.127" not in p.install  # 12.4 < the 12.8 the build needs
    # torch's cuDNN is reused; its CUDA runtime (12.4) is too old for the 12.8 build, so that one is installed
    assert any(
        "torch 2.5.1+cu124" in r and "the plan reuses nvidia-cudnn-cu12 9.1.0.70 and installs the other" in r
        for r in p.reasons
    )
    assert not any("not installed twice" in r for r in p.reasons)
    cudnn = next(pin for pin in p.pins if pin.package == "nvidia-cudnn-cu12")
    assert "already installed" in cudnn.reason
    assert "reuses CUDA libraries already present" in reasons_of(p.rejected)
    # the feed build: onnxruntime-gpu from its index alone (no PyPI fallback that could swap in the CUDA 13
    # build of the same number), then its dependencies and the libraries from PyPI
    feed_step, pypi_step = [step for step in p.steps if step.runs_installer][-2:]
    assert feed_step.packages == ("onnxruntime-gpu==1.31.1",) and feed_step.index_url == CUDA12_FEED
    assert feed_step.no_deps and feed_step.extra_index_urls == ()
    assert pypi_step.index_url is None and pypi_step.packages[0].startswith("onnxruntime-gpu")
    assert "nvidia-cudnn-cu12==" + cudnn.version in pypi_step.packages


def test_torch_cuda13_keeps_the_cuda13_build_and_its_cudnn() -> None:
    p = plan(with_torch(host(), 13))
    assert chosen(p) == ("1.31.1", "13.0")
    assert "nvidia-cudnn-cu13==9.13.0.50" in p.install
    assert "nvidia-cuda-runtime==13.0.96" in p.install


def test_prefer_existing_off_ignores_torch() -> None:
    p = plan(with_torch(host(), 12), prefer_existing_libraries=False)
    assert chosen(p) == ("1.31.1", "13.0")


def test_the_environments_cuda_beats_a_newer_release_of_another() -> None:
    only_pypi = replace(MATRIX, builds=tuple(b for b in MATRIX.builds if b.index_url is None))
    p = make_plan([with_torch(host(), 12)], only_pypi, Request())
    assert chosen(p) == ("1.30.0", "12.8")
    assert "newest build for CUDA 12, the CUDA this environment already loads" in p.reasons[0]
    assert any(
        r.startswith("1.31.1 (CUDA 13.0) is newer and runs, but") and "torch 2.5.1+cu124" in r for r in p.reasons
    )
    assert any("`--cuda 13` plans 1.31.1 (CUDA 13.0) anyway" in n for n in p.notes)
    assert chosen(make_plan([with_torch(host(), 12)], only_pypi, Request(cuda="13"))) == ("1.31.1", "13.0")


def test_system_libraries_count_as_present() -> None:
    path = "/usr/local/cuda/lib64/libcudart.so.12"
    hits = (LibraryHit("cudart", "12", "libcudart.so.12", path, "ldconfig"),)
    p = plan(replace(host(), libraries=hits))
    assert chosen(p) == ("1.31.1", "12.8")
    assert any("libcudart.so.12 (ldconfig)" in r for r in p.reasons)


def test_cpu_package_is_uninstalled_first_because_it_shadows_the_gpu_one() -> None:
    p = plan(with_cpu_ort(host()))
    assert p.steps[0].kind == "uninstall" and p.steps[0].packages == ("onnxruntime",)
    assert "shadows onnxruntime-gpu" in p.steps[0].description
    assert p.steps[1].kind == "install"


def test_every_other_flavour_and_other_gpu_builds_are_removed() -> None:
    installed = (
        OrtDist("onnxruntime-directml", "1.20.0"),
        OrtDist("onnxruntime-openvino", "1.20.0"),
        OrtDist("onnxruntime-gpu", "1.31.1", cuda_version="12.8"),
    )
    p = plan(replace(host(), onnxruntime=installed))
    assert set(p.uninstall) == {"onnxruntime-directml", "onnxruntime-openvino", "onnxruntime-gpu"}
    assert "already satisfied" in p.steps[0].description


def test_the_right_build_already_installed_is_left_alone() -> None:
    p = plan(replace(host(), onnxruntime=(OrtDist("onnxruntime-gpu", "1.31.1", cuda_version="13.0"),)))
    assert p.uninstall == ()


BROKEN = MissingFiles(57, 60, ("onnxruntime/__init__.py",))


@pytest.mark.parametrize("cpu_version", ["1.31.1", "1.30.0"])
def test_the_planned_build_installed_next_to_the_cpu_one_is_removed_too_and_installed_afresh(
    cpu_version: str,
) -> None:
    """Removing onnxruntime deletes the onnxruntime/ folder onnxruntime-gpu lists too: left installed, the
    GPU package would be 'already satisfied' with no files."""
    installed = (OrtDist("onnxruntime", cpu_version), OrtDist("onnxruntime-gpu", "1.31.1", cuda_version="13.0"))
    p = plan(replace(host(), onnxruntime=installed))
    assert chosen(p) == ("1.31.1", "13.0")
    assert p.steps[0].kind == "uninstall" and p.steps[0].packages == ("onnxruntime", "onnxruntime-gpu")
    assert "deletes the onnxruntime/ files onnxruntime-gpu 1.31.1 shares with it" in p.steps[0].description
    assert "onnxruntime-gpu[cuda,cudnn]==1.31.1" in p.install
    lines = [line for line in render(p, "pip").splitlines() if line.startswith("python -m pip")]
    assert lines[0] == "python -m pip uninstall -y onnxruntime onnxruntime-gpu"
    assert lines[1].startswith("python -m pip install 'onnxruntime-gpu[cuda,cudnn]==1.31.1'")


def test_an_incomplete_planned_build_is_removed_and_installed_afresh() -> None:
    installed = (OrtDist("onnxruntime-gpu", "1.31.1", missing_files=BROKEN),)
    p = plan(replace(host(), onnxruntime=installed))
    assert p.uninstall == ("onnxruntime-gpu",)
    assert "incomplete (57 of the 60 files its RECORD lists are missing, e.g. onnxruntime/__init__.py)" in (
        p.steps[0].description
    )
    assert p.steps[1].packages[0] == "onnxruntime-gpu[cuda,cudnn]==1.31.1"


def test_an_incomplete_pinned_nvidia_wheel_is_reinstalled_one_that_is_not_pinned_is_left_alone() -> None:
    torch_host = with_torch(host(), 12)
    broken = MissingFiles(1, 3, ("nvidia/cudnn/lib/libcudnn.so.9",))
    wheels = tuple(replace(w, missing_files=broken) for w in torch_host.nvidia_wheels)
    p = plan(replace(torch_host, nvidia_wheels=wheels))
    assert "nvidia-cudnn-cu12==9.1.0.70" in p.install  # torch's cuDNN, reused: reinstalled in place
    assert p.uninstall == ("nvidia-cudnn-cu12",)  # the CUDA runtime 12.4 is replaced anyway, cuBLAS not pinned
    assert "the installed nvidia-cudnn-cu12 9.1.0.70 is incomplete" in p.steps[0].description


def test_a_saved_plan_takes_its_removals_from_the_target_it_is_carried_out_in() -> None:
    saved = plan(host())  # made on a clean machine: nothing to remove
    assert saved.uninstall == ()
    both = replace(host(), onnxruntime=(OrtDist("onnxruntime", "1.31.1"), OrtDist("onnxruntime-gpu", "1.31.1")))
    for target in (both, with_cpu_ort(host())):
        fresh = plan(target)
        again = retarget(saved, [target])
        assert again.steps == fresh.steps and again.uninstall  # the same rules as planning on the target
        assert replace(again, steps=saved.steps) == saved  # nothing else changes
    # a plan made where the CPU package was installed, carried out in a new venv: nothing to remove
    assert retarget(plan(with_cpu_ort(host())), []).steps == saved.steps


# --- several GPUs, several hosts ------------------------------------------------------------------------


def test_one_old_gpu_among_several_rules_out_cuda_13() -> None:
    p = plan(host(cc=("9.0", "6.1")))
    assert chosen(p) == ("1.31.1", "12.8")
    assert "no kernels for compute capability 6.1 (sm_75 80 86 89 90 100 120, no PTX) (GPU 1 (GPU1) on this host" in (
        reasons_of(p.rejected)
    )


def test_two_hosts_get_the_newest_build_both_run() -> None:
    p = plan(host(label="a.json"), host(driver="550.54.15", cc="8.6", label="b.json"))
    assert chosen(p) == ("1.31.1", "12.8")
    assert "host 'b.json' has 550.54.15 (CUDA 12.4)" in reasons_of(p.rejected)
    assert len(p.hosts) == 2 and isinstance(p.to_dict()["host"], list)


def test_two_hosts_name_the_blocking_one() -> None:
    error = no_plan(host(label="a.json"), host(driver="418.87.01", label="b.json"))
    assert "host 'b.json' blocks it" in error.message
    newest = next(r for r in error.rejected if r.candidate == "onnxruntime-gpu 1.31.1 (CUDA 13.0)")
    expected = "1.31.1 (CUDA 13.0) needs driver >= 580.65.06; host 'b.json' has 418.87.01 (CUDA 10.1)"
    assert newest.reason == expected


# --- pins and requests ----------------------------------------------------------------------------------


def test_ort_pin_series_and_exact() -> None:
    assert chosen(plan(host(), ort="1.20")) == ("1.20.1", "12.2")
    assert chosen(plan(host(), ort="==1.19.2")) == ("1.19.2", "12.2")
    assert chosen(plan(host(), ort=">=1.19,<1.22")) == ("1.20.1", "12.2")


def test_cuda_pin() -> None:
    assert chosen(plan(host(), cuda="12")) == ("1.31.1", "12.8")
    assert chosen(plan(host(), cuda="11.8")) == ("1.19.2", "11.8")


@pytest.mark.parametrize(
    ("request_kw", "message"),
    [
        ({"ort": "1.99"}, "onnxruntime-gpu 1.99 is not in the matrix"),
        ({"ort": "1.2x"}, "is not a version or specifier"),
        ({"cuda": "14"}, "no onnxruntime-gpu build in the matrix targets CUDA 14"),
        ({"ort": "1.16", "cuda": "13"}, "exclude each other"),
    ],
)
def test_impossible_requests_are_bad_input(request_kw: dict[str, str], message: str) -> None:
    with pytest.raises(BadInput, match=message):
        plan(host(), **request_kw)


def test_tensorrt_adds_the_matching_packages() -> None:
    p = plan(host(), tensorrt=True)
    assert p.tensorrt_version == "10.13"
    assert "tensorrt-cu13-libs==10.13.3.9" in p.install


def test_tensorrt_skips_releases_without_pip_packages() -> None:
    p = plan(host(driver="550.54.15", cc="8.6"), tensorrt=True)
    assert chosen(p) == ("1.20.1", "12.2")
    assert "tensorrt-cu12-libs==10.4.0" in p.install
    text = reasons_of(p.rejected)
    assert "TensorRT 10.9 for CUDA 12, which the 1.22.0 TensorRT provider needs, has no pip packages" in text
    assert "records no TensorRT version for 1.30.0 (CUDA 12.8)" in text


def test_no_hosts_is_bad_input() -> None:
    with pytest.raises(BadInput):
        make_plan([], MATRIX, Request())


def test_plan_json_round_trip_and_contract_keys() -> None:
    p = plan(with_cpu_ort(with_torch(host(), 12)))
    data = json.loads(p.to_json())
    for key in (
        "ort_version",
        "cuda_version",
        "cudnn_version",
        "index_url",
        "uninstall",
        "install",
        "steps",
        "rejected",
        "host",
    ):
        assert key in data
    assert data["uninstall"] == ["onnxruntime"]
    assert all(set(r) == {"candidate", "reason"} for r in data["rejected"])
    assert Plan.from_dict(data) == p


def test_plans_are_deterministic() -> None:
    h = with_cpu_ort(with_torch(host(cc=("8.6", "9.0")), 13))
    assert plan(h) == plan(h)


# --- cross-check of the whole table against an independent, simpler judge -------------------------------


def _runs(build: OrtBuild, h: HostFacts, matrix: Matrix) -> bool:
    """Does `build` run on `h`? Written from the rules, not from the planner's code."""
    plat = next((p for p in build.platforms if p.platform == h.platform.tag), None)
    if plat is None:
        return False
    if plat.glibc_min and h.platform.glibc and not at_least(h.platform.glibc, plat.glibc_min):
        return False
    if h.python and h.python.minor not in build.python:
        return False
    release = next(r for r in matrix.cuda_releases if r.version == build.cuda_version)
    major = next(m for m in matrix.cuda_majors if m.major == build.cuda_major)
    windows = h.platform.os == "windows"
    floor = (major.minor_compat_driver_windows if windows else major.minor_compat_driver_linux) or (
        release.min_driver_windows if windows else release.min_driver_linux
    )
    if h.driver.version and not at_least(h.driver.version, floor):
        return False
    if not _driver_knows_gpus(h, matrix):
        return False
    cuda = plat.provider("cuda") if plat.providers is not None else None
    for gpu in h.gpus:
        cc = gpu.compute_capability
        assert cc
        if cuda is None:  # the wheel was not read: what the CUDA release supports
            if cc not in release.compute_capabilities:
                return False
            continue
        gpu_cc = (int(cc.split(".")[0]), int(cc.split(".")[1]))

        def arch(name: str) -> tuple[int, int]:
            digits = name.split("_")[1].rstrip("af")
            return int(digits[:-1]), int(digits[-1])

        kernel = any(
            (arch(k) == gpu_cc) if k.endswith("a") else (arch(k)[0] == gpu_cc[0] and arch(k) <= gpu_cc)
            for k in cuda.kernels
        )
        ptx = any(arch(p) <= gpu_cc for p in cuda.ptx)
        driver_cuda = next(
            (
                r.version
                for r in sorted(matrix.cuda_releases, key=lambda r: vtuple(r.version), reverse=True)
                if h.driver.version and at_least(h.driver.version, r.min_driver_linux)
            ),
            None,
        )
        if not kernel and not (ptx and (driver_cuda is None or vtuple(driver_cuda) >= vtuple(build.cuda_version))):
            return False
    return True


def _driver_knows_gpus(h: HostFacts, matrix: Matrix) -> bool:
    """The driver's CUDA is at least the first release listing each GPU's compute capability (unless the oldest
    release lists it), and its branch is not after the last one of the GPU's architecture."""
    version = h.driver.version
    if not version:
        return True
    releases = sorted(matrix.cuda_releases, key=lambda r: vtuple(r.version))
    for gpu in h.gpus:
        cc = gpu.compute_capability or ""
        first = next((r for r in releases if cc in r.compute_capabilities), None)
        floor = first.min_driver_linux if first is not None and first is not releases[0] else None
        if floor and (vtuple(version)[0] < vtuple(floor)[0] or ("." in version and not at_least(version, floor))):
            return False
        last = [a.last_driver_branch for a in matrix.gpu_architectures if cc in a.compute_capabilities]
        if last and last[0] and vtuple(version)[0] > int(last[0]):
            return False
    return True


def test_full_table_agrees_with_an_independent_judge() -> None:
    failures = []
    cases = itertools.product(DRIVERS.values(), CCS, PYTHONS, PLATFORMS)
    for driver, cc, python, platform in cases:
        h = host(driver=driver, cc=cc, python=python, platform=platform)
        runnable = [b for b in MATRIX.builds if _runs(b, h, MATRIX)]
        try:
            p = plan(h)
        except NoCompatiblePlan as exc:
            if runnable:
                failures.append(f"{driver} {cc} {python} {platform}: no plan, but {runnable[0].label} runs")
            elif not _driver_knows_gpus(h, MATRIX):
                if "cannot run its GPU" not in str(exc):
                    failures.append(f"{driver} {cc} {python} {platform}: the driver cannot run the GPU, unsaid")
            elif len(exc.rejected) != len(MATRIX.builds) or not all(r.reason for r in exc.rejected):
                failures.append(f"{driver} {cc} {python} {platform}: rejections incomplete")
            continue
        newest = max(vtuple(b.ort_version) for b in runnable) if runnable else None
        if vtuple(p.ort_version) != newest:
            failures.append(f"{driver} {cc} {python} {platform}: chose {p.ort_version}, newest {newest}")
        assert any(
            _runs(b, h, MATRIX) and b.cuda_version == p.cuda_version and b.ort_version == p.ort_version
            for b in MATRIX.builds
        ), (driver, cc, python, platform)
    assert not failures, "\n".join(failures[:20])


# --- saved host files from real machines ----------------------------------------------------------------


def _host_files() -> list[Path]:
    return sorted(HOSTS_DIR.glob("*.json"))


@pytest.mark.parametrize("path", _host_files(), ids=lambda p: p.name)
def test_saved_hosts_get_a_plan_or_every_reason(path: Path) -> None:
    h = read_host_file(path)
    try:
        p = make_plan([h], MATRIX, Request())
    except NoCompatiblePlan as exc:
        assert exc.rejected and all(r.reason for r in exc.rejected)
        return
    build = next(b for b in MATRIX.builds if (b.ort_version, b.cuda_version) == chosen(p))
    assert _runs(build, h, MATRIX) or not h.driver.version
    if any(d.name == "onnxruntime" for d in h.onnxruntime):
        assert "onnxruntime" in p.uninstall


# --- --cuda-libraries system ----------------------------------------------------------------------------


def test_system_libraries_install_no_nvidia_wheels_and_no_extras() -> None:
    p = plan(with_cpu_ort(host()), cuda_libraries="system")
    assert chosen(p)[0] == plan(host()).ort_version
    assert p.pins == ()
    assert p.install == (f"onnxruntime-gpu=={p.ort_version}",)
    assert p.uninstall == ("onnxruntime",)
    assert any("--cuda-libraries system" in note for note in p.notes)


def _hit(library: str, number: str, filename: str) -> LibraryHit:
    return LibraryHit(library, number, filename, f"/usr/local/cuda/lib64/{filename}", "cuda_toolkit")


def _toolkit(major: str) -> tuple[LibraryHit, ...]:
    """A CUDA toolkit's libraries in the ld.so cache (cuRAND keeps its own number, 10)."""
    numbers = {"cudart": major, "cublas": major, "cublasLt": major, "curand": "10"}
    return tuple(_hit(lib, number, f"lib{lib}.so.{number}") for lib, number in numbers.items())


CUDA13_TOOLKIT = _toolkit("13")
CUDA12_TOOLKIT = _toolkit("12")
CUDNN9 = (_hit("cudnn", "9", "libcudnn.so.9"),)


def test_system_libraries_a_probed_host_lacks_reject_the_build_never_a_plan_that_fails() -> None:
    # a CUDA 13 toolkit without cuDNN: every build would fail its session -> no plan, naming what is missing
    error = no_plan(host(libraries=CUDA13_TOOLKIT), cuda_libraries="system")
    text = reasons_of(error.rejected)
    assert "--cuda-libraries system: 1.31.1 (CUDA 13.0) needs cuDNN 9, not on this host's loader path" in text
    # with cuDNN 9: the CUDA 13 build, and the plan says what it found
    p = plan(host(libraries=CUDA13_TOOLKIT + CUDNN9), cuda_libraries="system")
    assert chosen(p) == ("1.31.1", "13.0")
    assert any("has every library the CUDA provider links" in note for note in p.notes)


def test_system_libraries_of_cuda_12_pick_a_cuda_12_build() -> None:
    # a CUDA 12 toolkit (and cuDNN 9) under a CUDA 13 driver: the CUDA 13 build needs libcublas.so.13 -> rejected
    p = plan(host(libraries=CUDA12_TOOLKIT + CUDNN9), cuda_libraries="system")
    assert chosen(p) == ("1.31.1", "12.8")
    lost = reasons_of(p.rejected)
    assert "--cuda-libraries system: 1.31.1 (CUDA 13.0) needs libcublasLt.so.13, libcublas.so.13" in lost


def test_a_bare_driver_branch_stands_for_that_branch() -> None:
    # `--driver 580` means the R580 branch (CUDA 13.0), not a version older than 580.65.06
    assert chosen(plan(host(driver="580"))) == chosen(plan(host(driver="580.65.06")))
    assert chosen(plan(host(driver="535"))) == chosen(plan(host(driver="535.104.05")))


# --- NVIDIA library wheels exist per platform -----------------------------------------------------------


def _with_wheel_platforms(rows: dict[tuple[str, str], tuple[str, ...]], **glibc: str) -> Matrix:
    """The fixture matrix with (package, version) -> platforms changed (and version -> glibc_min)."""
    wheels = tuple(
        replace(w, platforms=rows.get((w.package, w.version), w.platforms), glibc_min=glibc.get(w.version))
        for w in MATRIX.library_wheels
    )
    return replace(MATRIX, library_wheels=wheels)


def _pin(p: Plan, package: str) -> str:
    return next(pin.version for pin in p.pins if pin.package == package)


WINDOWS_470 = {"driver": "470.82.01", "cc": "8.6", "python": "3.10", "platform": "windows-amd64"}


def test_windows_gets_the_newest_version_that_has_a_windows_wheel() -> None:
    # nvidia-cudnn-cu11 8.9.6.50 is Linux-only on PyPI: the Windows host gets 8.9.4.25, Linux the newest
    windows, linux = host(**WINDOWS_470), host(driver="470.82.01", cc="8.6", python="3.10")
    assert chosen(plan(windows)) == chosen(plan(linux)) == ("1.19.2", "11.8")
    assert _pin(plan(windows), "nvidia-cudnn-cu11") == "8.9.4.25"
    assert "nvidia-cudnn-cu11==8.9.4.25" in plan(windows).install
    assert _pin(plan(linux), "nvidia-cudnn-cu11") == "8.9.6.50"
    assert _pin(plan(linux, windows), "nvidia-cudnn-cu11") == "8.9.4.25"  # one pin that installs on both


def test_no_wheel_for_the_platform_at_all_rejects_the_build_with_what_to_do() -> None:
    matrix = _with_wheel_platforms({("nvidia-cudnn-cu11", "8.9.4.25"): ("linux-x86_64",)})
    windows = host(**WINDOWS_470)
    p = make_plan([windows], matrix, Request())
    assert chosen(p) == ("1.16.3", "11.8")  # needs only cuBLAS, which has a Windows wheel
    lost = reasons_of(p.rejected)
    assert "1.19.2 (CUDA 11.8) needs nvidia-cudnn-cu11, which has no windows-amd64 wheel" in lost
    assert "--cuda-libraries system" in lost
    assert not any(pin.package == "nvidia-cudnn-cu11" for pin in p.pins)
    # with CUDA/cuDNN from NVIDIA's installers, no wheel is needed: the build runs
    system = make_plan([windows], matrix, Request(cuda_libraries="system"))
    assert chosen(system) == ("1.19.2", "11.8") and system.pins == ()
    # the Linux host is not affected
    linux = host(driver="470.82.01", cc="8.6", python="3.10")
    assert _pin(make_plan([linux], matrix, Request()), "nvidia-cudnn-cu11") == "8.9.6.50"


def test_newest_library_minor_without_a_windows_wheel_is_skipped() -> None:
    # like nvidia-cublas-cu12 12.9.3.13 (Linux-only) on a Windows CUDA 12.9 host
    matrix = _with_wheel_platforms({("nvidia-cublas-cu12", "12.8.4.1"): ("linux-x86_64", "linux-aarch64")})
    windows = host(driver="575.51.03", cc="8.9", python="3.12", platform="windows-amd64")
    p = make_plan([windows], matrix, Request())
    assert chosen(p) == ("1.31.1", "12.8")
    assert _pin(p, "nvidia-cublas-cu12") == "12.4.5.8"  # the newest with a win_amd64 wheel
    assert "nvidia-cublas-cu12==12.8.4.1" not in p.install
    cublas = next(pin for pin in p.pins if pin.package == "nvidia-cublas-cu12")
    assert cublas.reason.endswith("; 12.8.4.1 has no wheel for windows-amd64")
    assert _pin(make_plan([host(driver="575.51.03", cc="8.9")], matrix, Request()), "nvidia-cublas-cu12") == "12.8.4.1"


def test_hosts_without_a_common_version_leave_the_package_to_pip_and_say_so() -> None:
    matrix = _with_wheel_platforms(
        {
            ("nvidia-cudnn-cu12", "9.8.0.87"): ("linux-x86_64",),
            ("nvidia-cudnn-cu12", "9.1.0.70"): ("linux-aarch64",),
            ("nvidia-cudnn-cu12", "8.9.2.26"): ("linux-x86_64",),
        }
    )
    x86, arm = host(driver="575.51.03", label="x86"), host(driver="575.51.03", platform="linux-aarch64", label="arm")
    p = make_plan([x86, arm], matrix, Request())
    assert chosen(p) == ("1.30.0", "12.8")
    assert not any(pin.package == "nvidia-cudnn-cu12" for pin in p.pins)
    note = next(n for n in p.notes if "nvidia-cudnn-cu12" in n)
    assert "has a wheel for linux-aarch64 and linux-x86_64" in note and "left to pip" in note
    assert _pin(make_plan([x86], matrix, Request()), "nvidia-cudnn-cu12") == "9.8.0.87"
    assert _pin(make_plan([arm], matrix, Request()), "nvidia-cudnn-cu12") == "9.1.0.70"


def test_installed_version_without_a_wheel_for_another_host_is_not_reused() -> None:
    matrix = _with_wheel_platforms({("nvidia-cudnn-cu12", "9.1.0.70"): ("linux-x86_64",)})
    torch_host = with_torch(host(driver="575.51.03", label="torch"), 12)
    assert _pin(make_plan([torch_host], matrix, Request()), "nvidia-cudnn-cu12") == "9.1.0.70"  # reused
    windows = host(driver="575.51.03", platform="windows-amd64", label="win")
    p = make_plan([torch_host, windows], matrix, Request())
    assert _pin(p, "nvidia-cudnn-cu12") == "9.8.0.87"


def test_library_glibc_floor_is_checked_when_the_host_glibc_is_known() -> None:
    matrix = _with_wheel_platforms({}, **{"9.8.0.87": "2.34"})
    old_glibc = host(driver="575.51.03", glibc="2.31")
    p = make_plan([old_glibc], matrix, Request())
    assert _pin(p, "nvidia-cudnn-cu12") == "9.1.0.70"
    assert any(pin.reason.endswith("; 9.8.0.87 needs glibc >= 2.34") for pin in p.pins)
    assert _pin(make_plan([host(driver="575.51.03")], matrix, Request()), "nvidia-cudnn-cu12") == "9.8.0.87"
    floors = {v: "2.34" for v in ("9.8.0.87", "9.1.0.70", "8.9.2.26")}
    with pytest.raises(NoCompatiblePlan) as info:  # every CUDA 12 build needs cuDNN for CUDA 12
        make_plan([old_glibc], _with_wheel_platforms({}, **floors), Request(cuda="12"))
    text = reasons_of(info.value.rejected)
    assert "needs nvidia-cudnn-cu12, whose linux-x86_64 wheels need glibc >= 2.34; this host has 2.31" in text


def test_wheel_rows_without_platforms_count_as_any_platform() -> None:
    row = replace(MATRIX.library_wheels[0], platforms=(), glibc_min=None)
    assert row.available_on("windows-amd64") and row.available_on("linux-aarch64", "2.17")
    linux_only = replace(row, platforms=("linux-x86_64",), glibc_min="2.27")
    assert not linux_only.available_on("windows-amd64")
    assert linux_only.available_on("linux-x86_64") and linux_only.available_on("linux-x86_64", "2.27")
    assert not linux_only.available_on("linux-x86_64", "2.17")


def test_a_build_known_from_documentation_only_says_so() -> None:
    p = plan(host())
    build = next(b for b in MATRIX.builds if b.ort_version == p.ort_version and b.cuda_version == p.cuda_version)
    assert not build.confirmed  # the fixture builds are illustrative: none is confirmed
    assert any("known from documentation only" in note for note in p.notes)
    confirmed = replace(MATRIX, builds=tuple(replace(b, confirmed=True) for b in MATRIX.builds))
    p = make_plan([host()], confirmed, Request())
    assert not any("known from documentation only" in note for note in p.notes)
