"""Driver versions to branches and CUDA versions, on Linux and on Windows, against NVIDIA's published pairs.

NVIDIA's release notes pair each Linux driver with its Windows twin (R535: 535.54.03/536.25, 535.104.05/537.13;
R570: 570.172.08/573.48; R575: 575.57.08/576.57; R580: 580.65.06/580.88 ... 580.159.03/582.53; R595:
595.58.03/595.97). A Windows version's first number is no branch: 581.57 is an R580 driver.
"""

from __future__ import annotations

import pytest

from provisioner.matrix.load import load_matrix
from provisioner.matrix.query import driver_branch, driver_gpu_gap, newest_cuda_for_driver

# (Linux, Windows) pairs of one release each, from NVIDIA's Data Center and vGPU release notes (cuda.yaml's sources)
PAIRS = [
    ("450.51.05", "451.48", 450),
    ("460.106.00", "463.15", 460),
    ("535.54.03", "536.25", 535),
    ("535.104.05", "537.13", 535),
    ("535.261.03", "539.41", 535),
    ("550.163.01", "553.74", 550),
    ("570.124.06", "572.60", 570),
    ("570.172.08", "573.48", 570),
    ("575.57.08", "576.57", 575),
    ("580.65.06", "580.88", 580),
    ("580.95.05", "581.42", 580),
    ("580.159.03", "582.53", 580),
    ("595.58.03", "595.97", 595),
]


@pytest.mark.parametrize(("linux", "windows", "branch"), PAIRS)
def test_each_platform_numbers_its_drivers_into_the_same_branch(linux: str, windows: str, branch: int) -> None:
    matrix = load_matrix()
    assert driver_branch(matrix, linux) == branch
    assert driver_branch(matrix, windows, windows=True) == branch


@pytest.mark.parametrize(("linux", "windows", "branch"), PAIRS)
def test_both_twins_report_the_same_cuda(linux: str, windows: str, branch: int) -> None:
    matrix = load_matrix()
    on_linux = newest_cuda_for_driver(matrix, linux)
    on_windows = newest_cuda_for_driver(matrix, windows, windows=True)
    assert on_linux is not None and on_windows is not None
    assert on_windows.version == on_linux.version


def test_a_windows_r580_driver_still_runs_pascal_and_volta_and_r595_does_not() -> None:
    matrix = load_matrix()
    for cc in ("6.1", "7.0"):
        assert driver_gpu_gap(matrix, cc, "581.57", None, windows=True) is None
        assert driver_gpu_gap(matrix, cc, "582.53", None, windows=True) is None
        gap = driver_gpu_gap(matrix, cc, "595.97", None, windows=True)
        assert gap is not None and gap.kind == "dropped"
    # on Linux a 581 would be a branch after R580 (no such Linux driver exists; the number is read as the branch)
    assert driver_branch(matrix, "581.57") == 581


def test_a_cuda_version_given_as_a_driver_names_no_branch() -> None:
    matrix = load_matrix()
    assert driver_branch(matrix, "12.2") is None
    assert driver_branch(matrix, "12.2", windows=True) is None
