"""Planning by what each wheel really contains (issue 20), on the shipped matrix: the GPU code, Pythons and providers
read from every onnxruntime-gpu wheel per platform by bin/derive_release.py, and the files every NVIDIA wheel
installs (bin/derive_wheels.py --files).

Each test states the host and what the planner must decide. Where the expected release is written out, it is the
one the wheels' facts give (checked against the data in the same test, so that new facts fail loudly, not
silently); the rules are general: the planner knows no version number and no GPU.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from provisioner.errors import NoCompatiblePlan
from provisioner.facts import DriverInfo, Gpu, HostFacts, PlatformInfo, PythonInfo
from provisioner.matrix.load import load_matrix
from provisioner.matrix.query import build_gpu_code, builds_for, find_build, first_cuda_release_for_cc, gpu_code_for
from provisioner.plan import Plan, Request
from provisioner.planner import make_plan
from provisioner.userfiles import read_host_file
from provisioner.versions import vtuple
from tests.support.cli import run_ortprov

if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix, OrtBuild

HOSTS = Path(__file__).resolve().parents[1] / "hosts"
MATRIX: Matrix = load_matrix()


def host(cc: str, platform: str = "linux-x86_64", driver: str = "580.95.05", python: str = "3.12") -> HostFacts:
    os_name, arch = platform.split("-", 1)
    free = python.endswith("t")
    return HostFacts(
        platform=PlatformInfo(os_name, arch, glibc="2.39" if os_name == "linux" else None),
        driver=DriverInfo(True, driver, source="flags"),
        python=PythonInfo("", python.rstrip("t") + ".1", abi=f"cp{python.replace('.', '')}", free_threaded=free),
        gpus=(Gpu(0, "", cc),),
    )


def plan(h: HostFacts, **request: object) -> Plan:
    return make_plan([h], MATRIX, Request(**request))  # type: ignore[arg-type]


def no_plan(h: HostFacts, **request: object) -> NoCompatiblePlan:
    with pytest.raises(NoCompatiblePlan) as caught:
        plan(h, **request)
    return caught.value


def chosen(p: Plan) -> OrtBuild:
    build = find_build(MATRIX, p.package, p.ort_version, p.cuda_version, p.index_url)
    assert build is not None
    return build


def runs_by_code(build: OrtBuild, cc: str, platform: str) -> tuple[str | None, str | None] | None:
    code = build_gpu_code(build, platform)
    return None if code is None else gpu_code_for(code[0], code[1], cc)


def newest_with_code(cc: str, platform: str, *, ptx_only: bool = False) -> OrtBuild:
    """The newest PyPI build whose wheels for `platform` hold code for `cc` (independently of the planner)."""
    for build in builds_for(MATRIX):
        found = runs_by_code(build, cc, platform)
        if build.index_url is None and found and (found[1] if ptx_only else any(found)):
            return build
    raise AssertionError(f"no build holds code for {cc} on {platform}")


def rejection(p: Plan | NoCompatiblePlan, version: str) -> str:
    return " | ".join(r.reason for r in p.rejected if f" {version} (" in r.candidate)


# --- GPU code --------------------------------------------------------------------------------------------


def test_b200_gets_the_newest_build_with_sm_100_kernels_and_the_newer_ones_say_why_not() -> None:
    p = plan(host("10.0"))
    assert p.ort_version == "1.28.0" == newest_with_code("10.0", "linux-x86_64").ort_version
    cubin, _ = runs_by_code(chosen(p), "10.0", "linux-x86_64") or (None, None)
    assert cubin == "sm_100a"
    why = rejection(p, "1.31.1")
    assert "1.31.1 has no kernels for compute capability 10.0 (sm_75 80 86 89 90a 120a, no PTX)" in why
    assert "1.28.0 has sm_100a" in why


def test_b300_gets_a_build_whose_ptx_it_can_jit_compile() -> None:
    p = plan(host("10.3"))
    build = chosen(p)
    cubin, ptx = runs_by_code(build, "10.3", "linux-x86_64") or (None, None)
    assert build.ort_version == newest_with_code("10.3", "linux-x86_64").ort_version
    assert cubin is None and ptx is not None  # no release holds sm_103 or a 10.x family cubin: PTX it is
    assert any("JIT-compiles its" in note and ptx in note for note in p.notes)
    for newer in ("1.31.1", "1.28.0"):
        assert "no kernels for compute capability 10.3" in rejection(p, newer)


def test_b300_with_a_driver_too_old_for_the_builds_cuda_cannot_jit_its_ptx() -> None:
    # PTX is JIT-compiled only by a driver that knows its CUDA; minor-version compatibility does not cover it
    build = newest_with_code("10.3", "linux-x86_64", ptx_only=True)
    older_driver = "525.60.13"  # the CUDA 12 minor-version-compatibility floor: CUDA 12.0 in full
    if build.cuda_version == "12.0":
        pytest.skip("the build with PTX for 10.3 is for CUDA 12.0, which that driver supports in full")
    error_or_plan: Plan | NoCompatiblePlan
    try:
        error_or_plan = plan(host("10.3", driver=older_driver), ort=build.ort_version)
    except NoCompatiblePlan as exc:
        error_or_plan = exc
    assert isinstance(error_or_plan, NoCompatiblePlan)
    first = first_cuda_release_for_cc(MATRIX, "10.3")
    assert first is not None
    if vtuple(first.version) > vtuple("12.0"):  # that driver (CUDA 12.0) does not know the GPU at all: rule 0
        assert f"(CUDA {first.version}) is needed for compute capability 10.3" in str(error_or_plan)
    else:
        assert "does not run through minor-version compatibility" in rejection(error_or_plan, build.ort_version)


def test_gb10_on_aarch64_gets_sm_121a_and_on_x86_64_a_build_that_runs_on_12_1() -> None:
    arm = plan(host("12.1", platform="linux-aarch64"))
    assert runs_by_code(chosen(arm), "12.1", "linux-aarch64") == ("sm_121a", None)
    assert arm.ort_version == newest_with_code("12.1", "linux-aarch64").ort_version
    x86 = plan(host("12.1"))
    assert any(runs_by_code(chosen(x86), "12.1", "linux-x86_64") or ())
    assert x86.ort_version == newest_with_code("12.1", "linux-x86_64").ort_version
    assert "no kernels for compute capability 12.1" in rejection(x86, "1.31.1")  # sm_120a runs on 12.0 only


def test_maxwell_5_2_gets_the_newest_build_with_code_for_it() -> None:
    p = plan(host("5.2"))
    # The issue expected 1.20.2; the wheels decide: the newest release whose x86_64 wheels hold sm_52 (or PTX <= 5.2)
    assert p.ort_version == newest_with_code("5.2", "linux-x86_64").ort_version
    assert p.ort_version == "1.20.2"
    assert "no kernels for compute capability 5.2" in rejection(p, "1.21.0")


def test_kepler_3_7_gets_the_last_build_with_sm_37() -> None:
    h = host("3.7", driver="470.256.02", python="3.9")  # the last driver branch for Kepler (CUDA 11.4)
    p = plan(h)
    assert p.ort_version == "1.14.1" == newest_with_code("3.7", "linux-x86_64").ort_version
    assert runs_by_code(chosen(p), "3.7", "linux-x86_64") == ("sm_37", "compute_37")
    assert "no kernels for compute capability 3.7 (sm_52 60 61 70 75 80, PTX compute_52" in rejection(p, "1.15.0")
    assert any("minor-version compatibility" in note for note in p.notes)  # CUDA 11.6 on a CUDA 11.4 driver


def test_aarch64_a100_has_no_build_and_says_what_would_run() -> None:
    error = no_plan(host("8.0", platform="linux-aarch64"))
    assert "no kernels for compute capability 8.0 (sm_89 90a 120a 121a, no PTX, linux-aarch64)" in rejection(
        error, "1.31.1"
    )
    assert error.hint and "CMAKE_CUDA_ARCHITECTURES=80" in error.hint


# --- Python x platform, providers ------------------------------------------------------------------------


def test_windows_free_threaded_python_has_no_wheel() -> None:
    error = no_plan(host("8.9", platform="windows-amd64", driver="581.57", python="3.13t"))
    assert "has no windows-amd64 wheel for Python 3.13t (free-threaded)" in rejection(error, "1.31.1")
    # the same Python on Linux has one
    assert plan(host("8.9", python="3.13t")).ort_version == "1.31.1"


def test_tensorrt_on_aarch64_where_the_wheels_ship_no_tensorrt_provider() -> None:
    try:
        p_or_error: Plan | NoCompatiblePlan = plan(host("9.0", platform="linux-aarch64"), tensorrt=True)
    except NoCompatiblePlan as exc:
        p_or_error = exc
    # (the TensorRT provider records are tensorrt.yaml's, issue 25; onnxruntime-gpu.yaml's platforms agree)
    assert "the linux-aarch64 wheel of 1.31.1 has no TensorRT provider" in rejection(p_or_error, "1.31.1")
    record = next(b for b in builds_for(MATRIX, "1.31.1") if b.index_url is None).wheel_platform("linux-aarch64")
    assert record is not None and record.provider("tensorrt") is None and record.provider("cuda") is not None


# --- installed libraries, system libraries ----------------------------------------------------------------


def test_torch_cu12_with_a_cuda_13_driver_gets_the_cuda_12_build_that_reuses_its_libraries() -> None:
    h = read_host_file(HOSTS / "linux-l4-driver580-torch28-cu12.json")
    p = plan(h)
    assert p.cuda_version.startswith("12.")
    assert ("nvidia-cudnn-cu12", "9.10.2.21") in {(pin.package, pin.version) for pin in p.pins}
    assert not any(pin.package.endswith("-cu13") for pin in p.pins)
    why = rejection(p, "1.31.1")
    assert "would install nvidia-cudnn-cu13, whose files are those of this host's installed nvidia-cudnn-cu12" in why
    assert "22 files: nvidia/cudnn/" in why


def test_a_cuda_12_toolkit_with_system_libraries_gets_a_cuda_12_build() -> None:
    h = read_host_file(HOSTS / "linux-rtx4090-driver580-cuda12.8-toolkit.json")
    p = plan(h, cuda_libraries="system")
    assert p.cuda_version.startswith("12.") and p.pins == ()
    assert "needs libcublasLt.so.13, libcublas.so.13" in rejection(p, "1.31.1")
    assert not any("will fail" in note for note in p.notes)


def test_system_libraries_that_no_build_finds_exit_3_explaining() -> None:
    h = read_host_file(HOSTS / "linux-rtx4090-driver580-cuda12.8-toolkit.json")
    no_cudnn = HostFacts(**{**h.__dict__, "libraries": tuple(x for x in h.libraries if x.library != "cudnn")})
    error = no_plan(no_cudnn, cuda_libraries="system")
    assert "needs cuDNN" in rejection(error, "1.31.1") or "needs cuDNN" in " ".join(r.reason for r in error.rejected)


# --- the CLI: exit codes ----------------------------------------------------------------------------------


def test_cli_exit_codes_and_the_explanation() -> None:
    done = run_ortprov("plan", "--driver", "580", "--gpu-cc", "10.0", "--python", "3.12", "--platform", "linux-x86_64")
    assert done.returncode == 0, done.stderr
    assert "1.28.0" in done.stdout
    done = run_ortprov(
        "plan", "--driver", "580", "--gpu-cc", "8.0", "--python", "3.12", "--platform", "linux-aarch64", "--json"
    )
    assert done.returncode == 3
    assert "CMAKE_CUDA_ARCHITECTURES=80" in done.stderr
    done = run_ortprov(
        "plan", "--driver", "581.57", "--gpu-cc", "8.9", "--python", "3.13t", "--platform", "windows-amd64"
    )
    assert done.returncode == 3
    done = run_ortprov(
        "plan", "--host", str(HOSTS / "linux-rtx4090-driver580-cuda12.8-toolkit.json"), "--cuda-libraries", "system"
    )
    assert done.returncode == 0 and "will fail" not in done.stdout + done.stderr


def test_a_build_whose_provider_imports_what_no_planned_wheel_installs_is_rejected() -> None:
    from dataclasses import replace

    newest = next(b for b in builds_for(MATRIX, "1.31.1") if b.index_url is None)
    platforms = tuple(
        replace(
            p,
            providers=tuple(
                replace(lib, needs=(*lib.needs, "libcusparse.so.13")) if lib.provider == "cuda" and lib.needs else lib
                for lib in p.providers or ()
            ),
        )
        if p.platform == "linux-x86_64"
        else p
        for p in newest.platforms
    )
    matrix = replace(MATRIX, builds=tuple(replace(b, platforms=platforms) if b is newest else b for b in MATRIX.builds))
    p = make_plan([host("9.0")], matrix, Request())
    assert p.ort_version == "1.31.0"
    assert "imports libcusparse.so.13, which none of the NVIDIA wheels it needs installs" in rejection(p, "1.31.1")
    assert any("every library the 1.31.0 CUDA provider imports" in reason for reason in p.reasons)


# --- what the plan says about facts it could not read, and about the newer builds that lost ----------------------


def test_a_build_whose_gpu_code_was_not_read_does_not_claim_the_gpu() -> None:
    """Without a PyPI twin to judge by, a feed build runs by its CUDA release's word only, and says so."""
    from dataclasses import replace

    feed_only = {b.ort_version for b in MATRIX.builds if b.index_url is not None}
    alone = replace(MATRIX, builds=tuple(b for b in MATRIX.builds if b.index_url or b.ort_version not in feed_only))
    p = make_plan([host("3.7", driver="470.256.02", python="3.12")], alone, Request())
    build = chosen(p)
    assert build_gpu_code(build, "linux-x86_64") is None  # its wheels were not read
    why = " ".join(p.reasons)
    assert "is supported by CUDA" not in why
    assert "was not read" in why and "no kernel image is available" in why
    read = newest_with_code("3.7", "linux-x86_64")
    assert any(n.startswith(f"{read.ort_version} (CUDA {read.cuda_version}) is the newest build") for n in p.notes)


def test_a_feed_build_is_judged_by_its_pypi_twins_gpu_code() -> None:
    """The CUDA 11 feed's wheels cannot be read; its PyPI twin (same release, same build scripts) can: a K80 (3.7)
    gets no feed build (the twins hold sm_52 and newer), an RTX 3090 gets the newest one, saying on what evidence."""
    error = no_plan(host("3.7", driver="470.256.02", python="3.12"))
    feed = next(r for r in error.rejected if "(CUDA 11.8)" in r.candidate and "1.21.1" in r.candidate)
    assert "no kernels for compute capability 3.7" in feed.reason
    assert "judged by its PyPI twin 1.21.1 (CUDA 12.2)" in feed.reason
    p = plan(host("8.6", driver="470.256.02", python="3.12"))
    build = chosen(p)
    assert build.index_url is not None and build_gpu_code(build, "linux-x86_64") is None
    why = " ".join(p.reasons)
    assert f"judged by its PyPI twin {build.ort_version} (CUDA 12.2)" in why and "8.6: sm_86" in why
    assert "no kernel image is available" not in why


def test_a_build_read_to_hold_code_wins_over_a_newer_unread_one() -> None:
    p = plan(host("3.7", driver="470.256.02", python="3.10"))
    assert build_gpu_code(chosen(p), "linux-x86_64") is not None


def test_the_newest_loser_is_said_in_one_reason() -> None:
    p = plan(host("10.0"))
    newest = builds_for(MATRIX)[0]
    line = next(
        r for r in p.reasons if r.startswith(f"{newest.ort_version} (CUDA {newest.cuda_version}) is newer, but")
    )
    assert "no kernels for compute capability 10.0" in line
    assert not any(" is newer, but" in r for r in plan(host("9.0")).reasons)  # the newest won: nothing to say


def test_preloaded_libraries_count_in_the_closure() -> None:
    preloading = [
        b
        for b in builds_for(MATRIX)
        if b.index_url is None and any(lib.preloads for w in b.platforms if (lib := w.provider("cuda")) is not None)
    ]
    assert preloading, "no build's _ld_preload.py was read"
    build = preloading[0]
    p = plan(host("8.6", python=build.pythons_on("linux-x86_64")[-1]), ort=build.ort_version)
    line = next(r for r in p.reasons if "is supplied:" in r)
    assert "_ld_preload.py" in line and "libcudart.so.11.0 <- nvidia-cuda-runtime-cu11" in line
