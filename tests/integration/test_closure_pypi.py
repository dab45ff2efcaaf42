"""The static closure of a plan, proven on the real wheels from PyPI (ranged reads; nothing is stored).

For a plan for Linux x86_64 and one for Windows amd64 (an H100, driver 580, Python 3.12), every library the
onnxruntime-gpu CUDA provider imports (read now from the planned onnxruntime-gpu wheel: DT_NEEDED / the PE import
table) must be a file of a planned NVIDIA wheel (read now from its central directory), or come with the NVIDIA
driver, the operating system or the MSVC runtime. The matrix's record of the provider's imports and of the wheels'
files must agree with what the wheels say today.
"""

from __future__ import annotations

from typing import Any

import pytest

from provisioner.closure import DRIVER, MSVC, closure
from provisioner.facts import DriverInfo, Gpu, HostFacts, PlatformInfo, PythonInfo
from provisioner.matrix.load import load_matrix
from provisioner.matrix.query import find_build, provider_needs, wheel_files
from provisioner.plan import Request
from provisioner.planner import make_plan

pytestmark = [pytest.mark.network, pytest.mark.e2e]

HOSTS = {
    "linux-x86_64": HostFacts(
        platform=PlatformInfo("linux", "x86_64", glibc="2.39"),
        driver=DriverInfo(True, "580.159.04", "13.0", source="flags"),
        python=PythonInfo("", "3.12.3"),
        gpus=(Gpu(0, "NVIDIA H100 80GB HBM3", "9.0"),),
    ),
    "windows-amd64": HostFacts(
        platform=PlatformInfo("windows", "amd64"),
        driver=DriverInfo(True, "581.57", "13.0", source="flags"),
        python=PythonInfo("", "3.12.10"),
        gpus=(Gpu(0, "NVIDIA GeForce RTX 4090", "8.9"),),
    ),
}


def _wheel_on_pypi(session: Any, package: str, version: str, platform: str) -> Any:
    """The index entry of one wheel of `package` `version` that installs on `platform` (CPython 3.12 or any)."""
    from provisioner.matrix.derive import PYPI_SIMPLE, list_project_files
    from provisioner.platforms import wheel_file_platforms

    normalized = package.replace("-", "_")
    files = [
        item
        for item in list_project_files(session, PYPI_SIMPLE, package)
        if item.filename.startswith(f"{normalized}-{version}-")
        and platform in wheel_file_platforms(item.filename)
        and ("-cp312-" in item.filename or "-py3-" in item.filename)
    ]
    assert files, (package, version, platform)
    return files[0]


@pytest.mark.parametrize("platform", sorted(HOSTS))
def test_the_planned_wheels_supply_every_import_of_the_cuda_provider(platform: str) -> None:
    import requests

    from provisioner.wheelfacts import provider_members, read_provider
    from provisioner.ziprange import HttpRangeSource, central_directory

    matrix = load_matrix()
    plan = make_plan([HOSTS[platform]], matrix, Request())
    build = find_build(matrix, plan.package, plan.ort_version, plan.cuda_version, plan.index_url)
    assert build is not None and plan.pins
    session = requests.Session()

    ort = HttpRangeSource(_wheel_on_pypi(session, "onnxruntime-gpu", plan.ort_version, platform).url, session=session)
    provider = read_provider(ort, provider_members(central_directory(ort))["cuda"], "cuda")
    assert provider.needs
    assert provider_needs(build, platform) == provider.needs  # the matrix says what the wheel says

    files: dict[str, list[str]] = {}
    for pin in plan.pins:
        item = _wheel_on_pypi(session, pin.package, pin.version, platform)
        names = [n for n in central_directory(HttpRangeSource(item.url, session=session)) if ".dist-info/" not in n]
        files[f"{pin.package} {pin.version}"] = names
        recorded = wheel_files(matrix, pin.package, platform, pin.version)
        assert recorded is not None and set(recorded.files) <= set(names), pin

    proof = closure(platform, provider.needs, files)
    assert proof.complete, f"{plan.ort_version} on {platform}: {proof.missing} supplied by no planned wheel"
    by = {s.name: s.by for s in proof.supplied}
    cublas = "cublasLt64_13.dll" if platform.startswith("windows") else "libcublasLt.so.13"
    assert by[cublas].startswith("nvidia-cublas ")
    if platform.startswith("windows"):
        assert {s.by for s in proof.supplied if s.name.upper().startswith("MSVCP140")} == {MSVC}
    else:
        assert by["libcuda.so.1"] == DRIVER
    # and the plan said so, from the matrix alone
    assert any(f"CUDA provider imports on {platform} is supplied" in reason for reason in plan.reasons)
