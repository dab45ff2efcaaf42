"""provisioner.probe.cuda_order: CUDA's own device list where NVML's order cannot say which GPU an index names.

The pure parts against tables; the child process against a gcc-built stand-in for libcuda.so.1 (this machine
has no NVIDIA driver) that answers from FAKE_CUDA_BUS_IDS; the same code runs against the real driver in
tests/gpu/test_detect_gpu.py.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest

from provisioner.facts import Gpu
from provisioner.probe import cuda_order
from provisioner.probe import nvml as probe
from tests.support.fake_nvml import FakeDevice, FakeNvml

if TYPE_CHECKING:
    from pathlib import Path

GT710 = Gpu(0, "NVIDIA GeForce GT 710", "3.5", pci_bus_id="00000000:18:00.0")
RTX3090 = Gpu(1, "NVIDIA GeForce RTX 3090", "8.6", pci_bus_id="00000000:65:00.0")
TWIN = Gpu(1, "NVIDIA GeForce GT 710", "3.5", pci_bus_id="00000000:19:00.0")


@pytest.mark.parametrize(
    ("gpus", "cuda_visible", "order", "ambiguous"),
    [
        ((GT710, RTX3090), "0", None, True),
        ((GT710, RTX3090), "1,0", "FASTEST_FIRST", True),
        ((GT710, RTX3090), "0", "PCI_BUS_ID", False),
        ((GT710, RTX3090), "0", " pci_bus_id ", False),
        ((GT710, RTX3090), None, None, False),
        ((GT710, RTX3090), "GPU-1234", None, False),  # UUIDs name a GPU whatever the order
        ((GT710, RTX3090), "", None, False),
        ((GT710, TWIN), "1", None, False),  # identical GPUs: either one plans the same
        ((GT710,), "0", None, False),
    ],
)
def test_when_the_order_matters(gpus: tuple[Gpu, ...], cuda_visible: str | None, order: str | None, ambiguous: bool):
    assert cuda_order.order_is_ambiguous(gpus, cuda_visible, order) is ambiguous


def test_nvml_and_cuda_bus_ids_compare_equal() -> None:
    assert cuda_order.bus_id_key("00000000:65:00.0") == cuda_order.bus_id_key("0000:65:00.0") == (0, 0x65, 0, 0)
    assert cuda_order.bus_id_key("0001:0A:1f.3") == (1, 10, 31, 3)
    assert cuda_order.bus_id_key("garbage") is None and cuda_order.bus_id_key(None) is None


def test_visibility_from_cuda_bus_ids() -> None:
    mapped = cuda_order.visible_by_bus_id((GT710, RTX3090), ("0000:65:00.0",))
    assert mapped is not None and [gpu.visible for gpu in mapped] == [False, True]
    assert cuda_order.visible_by_bus_id((GT710, RTX3090), ()) == (
        Gpu(**{**GT710.__dict__, "visible": False}),
        Gpu(**{**RTX3090.__dict__, "visible": False}),
    )
    assert cuda_order.visible_by_bus_id((GT710, RTX3090), ("0000:99:00.0",)) is None  # a device NVML lacks
    assert cuda_order.visible_by_bus_id((GT710, Gpu(1, "x", "8.6")), ("0000:18:00.0",)) is None  # no bus id


FAKE_LIBCUDA = r"""
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static const char *ids(void) { const char *v = getenv("FAKE_CUDA_BUS_IDS"); return v ? v : ""; }
int cuInit(unsigned int flags) {
    const char *mode = getenv("FAKE_CUDA_MODE");
    if (mode && !strcmp(mode, "hang")) sleep(60);
    if (mode && !strcmp(mode, "crash")) raise(SIGSEGV);
    if (mode && !strcmp(mode, "fail")) return 999;
    return *ids() ? 0 : 100;
}
int cuDeviceGetCount(int *count) {
    int n = *ids() ? 1 : 0;
    for (const char *p = ids(); *p; p++) n += (*p == ',');
    *count = n;
    return 0;
}
int cuDeviceGet(int *device, int ordinal) { *device = ordinal; return 0; }
int cuDeviceGetPCIBusId(char *out, int len, int device) {
    const char *p = ids();
    for (int i = 0; i < device; i++) p = strchr(p, ',') + 1;
    int n = 0;
    while (p[n] && p[n] != ',' && n < len - 1) { out[n] = p[n]; n++; }
    out[n] = 0;
    return 0;
}
"""


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a libcuda.so.1 that answers from FAKE_CUDA_BUS_IDS (and FAKE_CUDA_MODE)."""
    folder = tmp_path_factory.mktemp("fake-driver")
    (folder / "libcuda.c").write_text(FAKE_LIBCUDA)
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(folder / "libcuda.so.1"), str(folder / "libcuda.c")],
        check=True,
        capture_output=True,
    )
    return folder


def driver_env(folder: Path, bus_ids: str, **extra: str) -> dict[str, str]:
    return {"LD_LIBRARY_PATH": str(folder), "FAKE_CUDA_BUS_IDS": bus_ids, **extra}


def test_the_child_reads_the_bus_ids_in_cuda_order(fake_driver: Path) -> None:
    env = driver_env(fake_driver, "0000:65:00.0,0000:18:00.0")
    assert cuda_order.cuda_bus_ids(env) == (("0000:65:00.0", "0000:18:00.0"), None)
    assert cuda_order.cuda_bus_ids(driver_env(fake_driver, "")) == ((), None)  # CUDA_ERROR_NO_DEVICE


@pytest.mark.parametrize(
    ("mode", "words"),
    [("fail", "CUresult 999"), ("crash", "signal 11"), ("hang", "did not answer within 2 s")],
)
def test_a_failing_hanging_or_crashing_driver_is_one_line(fake_driver: Path, mode: str, words: str) -> None:
    bus_ids, why = cuda_order.cuda_bus_ids(driver_env(fake_driver, "0000:65:00.0", FAKE_CUDA_MODE=mode), timeout=2)
    assert bus_ids is None and why is not None and words in why


def two_different_gpus() -> list[FakeDevice]:
    """NVML (PCI) order: the GT 710 first; CUDA (fastest first) numbers the RTX 3090 0."""
    return [
        FakeDevice("NVIDIA GeForce GT 710", (3, 5), 2 * 1024**3, "GPU-710", "00000000:18:00.0"),
        FakeDevice("NVIDIA GeForce RTX 3090", (8, 6), 24 * 1024**3, "GPU-3090", "00000000:65:00.0"),
    ]


def visible_names(env: dict[str, str]) -> tuple[list[str], tuple[str, ...]]:
    report = probe.read_driver(nvml=FakeNvml(two_different_gpus()), env=env)
    return [gpu.name for gpu in report.gpus if gpu.visible], report.errors


def test_detect_asks_cuda_which_gpu_an_index_names(fake_driver: Path) -> None:
    env = driver_env(fake_driver, "0000:65:00.0", CUDA_VISIBLE_DEVICES="0")
    assert visible_names(env) == (["NVIDIA GeForce RTX 3090"], ())
    # PCI_BUS_ID: CUDA numbers as NVML does, nothing is asked (the stand-in's answer would differ)
    assert visible_names(env | {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}) == (["NVIDIA GeForce GT 710"], ())


def test_without_an_answer_nvml_order_is_assumed_and_said(fake_driver: Path) -> None:
    names, errors = visible_names(
        driver_env(fake_driver, "0000:65:00.0", CUDA_VISIBLE_DEVICES="0", FAKE_CUDA_MODE="fail")
    )
    assert names == ["NVIDIA GeForce GT 710"]
    assert len(errors) == 1 and "CUDA_DEVICE_ORDER=PCI_BUS_ID" in errors[0] and "CUresult 999" in errors[0]
