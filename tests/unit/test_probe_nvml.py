"""provisioner.probe.nvml against a fake NVML module (only the nvml* functions the probe calls) and a
temporary directory standing for /proc."""

from __future__ import annotations

from pathlib import Path

import pytest

from provisioner.facts import Gpu
from provisioner.probe import nvml as probe
from tests.support.fake_nvml import (
    FakeDevice,
    FakeNvml,
    NVMLError,
    NVMLError_DriverNotLoaded,
    NVMLError_LibraryNotFound,
    NVMLError_LibRmVersionMismatch,
)


def h100(index: int = 0) -> FakeDevice:
    return FakeDevice(
        "NVIDIA H100 80GB HBM3",
        (9, 0),
        85520809984,
        f"GPU-aaaa{index}-1111",
        f"00000000:{index + 0x18:02X}:00.0",
    )


def four_gpus() -> list[FakeDevice]:
    return [
        FakeDevice("NVIDIA A100-SXM4-80GB", (8, 0), 80 * 1024**3, f"GPU-{i}abc-{i}", f"0000:0{i}:00.0")
        for i in range(4)
    ]


def test_reads_driver_cuda_and_every_gpu() -> None:
    fake = FakeNvml([h100(0), FakeDevice(b"NVIDIA GeForce RTX 3090", (8, 6), 24 * 1024**3, "GPU-b", b"0000:65:00.0")])
    report = probe.read_driver(nvml=fake, env={})
    assert report.driver.present and report.driver.source == "nvml" and report.driver.error is None
    assert report.driver.version == "580.159.04"
    assert report.driver.cuda_version == "13.0"
    first, second = report.gpus
    assert first == Gpu(
        index=0,
        name="NVIDIA H100 80GB HBM3",
        compute_capability="9.0",
        memory_mib=81559,
        uuid="GPU-aaaa0-1111",
        pci_bus_id="00000000:18:00.0",
        visible=True,
        mig_uuids=(),  # NVML: MIG not supported
    )
    assert (second.name, second.compute_capability, second.memory_mib, second.pci_bus_id) == (
        "NVIDIA GeForce RTX 3090",
        "8.6",
        24576,
        "0000:65:00.0",
    )
    assert fake.shutdowns == 1


@pytest.mark.parametrize(("raw", "text"), [(13000, "13.0"), (12040, "12.4"), (11080, "11.8"), (12090, "12.9")])
def test_cuda_version_format(raw: int, text: str) -> None:
    assert probe.format_cuda_version(raw) == text


def test_old_nvml_without_v2_falls_back_to_v1() -> None:
    report = probe.read_driver(nvml=FakeNvml([h100()], cuda=11080, has_v2=False), env={})
    assert report.driver.cuda_version == "11.8"


def test_field_not_supported_leaves_it_empty() -> None:
    device = FakeDevice("GRID vGPU", (7, 5), None, "GPU-x", "0000:01:00.0")
    report = probe.read_driver(nvml=FakeNvml([device]), env={})
    assert report.gpus[0].memory_mib is None and report.gpus[0].compute_capability == "7.5"


def write_procfs(root: Path, version_line: str, gpus: dict[str, str] | None = None) -> None:
    base = root / "proc/driver/nvidia"
    base.mkdir(parents=True)
    (base / "version").write_text(version_line + "\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
    for bus, model in (gpus or {}).items():
        folder = base / "gpus" / bus
        folder.mkdir(parents=True)
        (folder / "information").write_text(
            f"Model: \t\t {model}\nIRQ:   \t\t 34\nGPU UUID: \t GPU-{bus[-6:-4]}\n"
            f"Bus Location: \t {bus}\nDevice Minor: \t 0\n"
        )


def test_version_mismatch_becomes_one_line_and_procfs_still_names_the_driver(tmp_path: Path) -> None:
    write_procfs(
        tmp_path,
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.12  Wed Sep 20 09:35:17 UTC 2023",
        {"0000:07:00.0": "NVIDIA A100-SXM4-80GB"},
    )
    fake = FakeNvml([], init_error=NVMLError_LibRmVersionMismatch("RM has detected an NVML/RM version mismatch."))
    report = probe.read_driver(nvml=fake, proc_root=tmp_path, env={}, use_procfs=True)
    assert report.driver.present and report.driver.source == "procfs"
    assert report.driver.version == "535.104.12" and report.driver.cuda_version is None
    assert report.driver.error is not None and "\n" not in report.driver.error
    assert report.driver.error.startswith("NVML: Driver/library version mismatch")
    assert [(g.name, g.pci_bus_id, g.compute_capability) for g in report.gpus] == [
        ("NVIDIA A100-SXM4-80GB", "0000:07:00.0", None)
    ]


def test_no_library_and_no_procfs_means_no_driver(tmp_path: Path) -> None:
    fake = FakeNvml([], init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    report = probe.read_driver(nvml=fake, proc_root=tmp_path, env={}, use_procfs=True)
    assert not report.driver.present and report.driver.source == "none"
    assert report.driver.error == "NVML: NVML library not found"
    assert report.gpus == ()


def test_driver_not_loaded(tmp_path: Path) -> None:
    fake = FakeNvml([], init_error=NVMLError_DriverNotLoaded("Driver Not Loaded"))
    report = probe.read_driver(nvml=fake, proc_root=tmp_path, env={}, use_procfs=True)
    assert not report.driver.present and report.driver.error == "NVML: NVIDIA kernel driver not loaded"


def test_unknown_nvml_error_uses_its_first_line() -> None:
    assert probe.describe_nvml_error(NVMLError("Unknown Error\nmore")) == "NVML: Unknown Error"
    assert probe.describe_nvml_error(NVMLError("")) == "NVML: NVMLError"


def test_real_pynvml_on_this_machine_never_raises(tmp_path: Path) -> None:
    report = probe.read_driver(proc_root=tmp_path, env={}, use_procfs=True)  # imports the real pynvml
    if not report.driver.present:
        assert report.driver.error and report.driver.error.startswith("NVML: ")


@pytest.mark.parametrize(
    "line",
    [
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.12  Wed Sep 20 09:35:17 UTC 2023",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build",
        "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.159.04  Release Build",
    ],
)
def test_parse_nvrm_version(line: str) -> None:
    assert probe.parse_nvrm_version(line) in ("535.104.12", "580.159.04")


def test_parse_nvrm_version_garbage() -> None:
    assert probe.parse_nvrm_version("hello") is None


def visible(gpus: tuple[Gpu, ...]) -> list[int]:
    return [gpu.index for gpu in gpus if gpu.visible]


def read_with(env: dict[str, str]) -> tuple[Gpu, ...]:
    return probe.read_driver(nvml=FakeNvml(four_gpus()), env=env).gpus


@pytest.mark.parametrize(
    ("cuda", "expected"),
    [
        ("1", [1]),
        ("2,0", [0, 2]),
        ("", []),
        ("-1", []),
        ("0,-1,3", [0]),  # CUDA ignores everything after an invalid entry
        ("GPU-2abc", [2]),  # UUID prefix
        ("GPU-3abc-3,GPU-1abc-1", [1, 3]),
        ("7", []),
    ],
)
def test_cuda_visible_devices_hides_but_keeps(cuda: str, expected: list[int]) -> None:
    gpus = read_with({"CUDA_VISIBLE_DEVICES": cuda})
    assert len(gpus) == 4  # hidden GPUs are reported, not dropped
    assert visible(gpus) == expected


@pytest.mark.parametrize(
    ("nvidia", "expected"),
    [
        ("all", [0, 1, 2, 3]),
        ("none", []),
        ("void", []),
        ("", []),
        ("1,2", [1, 2]),
        ("GPU-3abc", [3]),
        ("0,1,2,3", [0, 1, 2, 3]),
    ],
)
def test_nvidia_visible_devices(nvidia: str, expected: list[int]) -> None:
    assert visible(read_with({"NVIDIA_VISIBLE_DEVICES": nvidia})) == expected


def test_container_runtime_already_applied_nvidia_visible_devices() -> None:
    # The runtime exposed only GPU 3, which NVML inside the container numbers 0: it stays visible.
    gpus = probe.read_driver(nvml=FakeNvml([h100(0)]), env={"NVIDIA_VISIBLE_DEVICES": "3"}).gpus
    assert visible(gpus) == [0]


def test_cuda_indices_count_among_gpus_the_container_leaves() -> None:
    env = {"NVIDIA_VISIBLE_DEVICES": "1,2", "CUDA_VISIBLE_DEVICES": "1"}
    assert visible(read_with(env)) == [2]


def test_precheck_agrees_with_real_pynvml() -> None:
    """Without libnvidia-ml, the shortcut that skips importing pynvml gives pynvml's own answer."""
    pynvml = pytest.importorskip("pynvml")
    report, error = probe._read_nvml(pynvml)
    if probe.nvml_library_loadable():
        assert error is None or "library not found" not in error
    else:
        assert report is None and error == "NVML: NVML library not found"
        assert probe.read_driver(proc_root=Path("/nonexistent"), env={}).driver.error == error


# -- MIG: Kubernetes' device plugin and users name MIG instances, not GPUs ------------------------------------

MIG_A = "MIG-aaaa1111-2222-3333-4444-555555555555"
MIG_B = "MIG-bbbb1111-2222-3333-4444-555555555555"


def mig_host() -> list[FakeDevice]:
    """GPU 0: MIG mode off; GPU 1: MIG on with two instances and an empty slot; GPU 2: no MIG support."""
    gpus = four_gpus()[:3]
    gpus[0].mig_slots = ()
    gpus[1].mig_slots = (MIG_A, None, MIG_B)
    return gpus


def test_mig_instances_are_read_from_nvml() -> None:
    gpus = probe.read_driver(nvml=FakeNvml(mig_host()), env={}).gpus
    assert [gpu.mig_uuids for gpu in gpus] == [(), (MIG_A, MIG_B), ()]
    assert visible(gpus) == [0, 1, 2]


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("CUDA_VISIBLE_DEVICES", MIG_B, [1]),
        ("CUDA_VISIBLE_DEVICES", MIG_A.lower()[:12], [1]),  # a prefix, as for GPU UUIDs
        ("NVIDIA_VISIBLE_DEVICES", MIG_A, [1]),  # what the Kubernetes device plugin sets
        ("CUDA_VISIBLE_DEVICES", "MIG-GPU-bbbb1-1111/1/0", [1]),  # the form before driver R470
        ("CUDA_VISIBLE_DEVICES", "MIG-ffff0000-0000-0000-0000-000000000000", []),  # no such instance
        ("CUDA_VISIBLE_DEVICES", f"GPU-cccc2,{MIG_A}", [1, 2]),
    ],
)
def test_a_mig_instance_keeps_its_gpu_visible(variable: str, value: str, expected: list[int]) -> None:
    devices = mig_host()
    devices[1].uuid = "GPU-bbbb1-1111"
    devices[2].uuid = "GPU-cccc2-1111"
    assert visible(probe.read_driver(nvml=FakeNvml(devices), env={variable: value}).gpus) == expected


def test_a_mig_instance_no_gpu_has_hides_them_all_as_in_cuda() -> None:
    """Every GPU answered (MIG off, or not supported): CUDA finds no such device, so none is visible."""
    gpus = probe.read_driver(nvml=FakeNvml(mig_host()), env={"CUDA_VISIBLE_DEVICES": MIG_A.replace("a", "f")}).gpus
    assert [gpu.mig_uuids for gpu in gpus] == [(), (MIG_A, MIG_B), ()]
    assert visible(gpus) == []


class NvmlWithoutMig(FakeNvml):
    """An nvidia-ml-py that fails the MIG query for GPU 1 (or an old one without it: see the next test)."""

    def nvmlDeviceGetMigMode(self, handle: FakeDevice) -> tuple[int, int]:
        if handle is self.devices[1]:
            raise NVMLError("Unknown Error")
        return super().nvmlDeviceGetMigMode(handle)


def test_a_mig_instance_of_a_gpu_nvml_could_not_read_keeps_that_gpu() -> None:
    """Which GPU the instance belongs to is unknown: the GPUs that might own it are not marked hidden."""
    gpus = probe.read_driver(nvml=NvmlWithoutMig(four_gpus()), env={"CUDA_VISIBLE_DEVICES": MIG_A}).gpus
    assert [gpu.mig_uuids for gpu in gpus] == [(), None, (), ()]
    assert visible(gpus) == [1]
    gpus = probe.read_driver(nvml=OldNvml(four_gpus()), env={"NVIDIA_VISIBLE_DEVICES": MIG_A}).gpus
    assert [gpu.mig_uuids for gpu in gpus] == [None] * 4
    assert visible(gpus) == [0, 1, 2, 3]


class OldNvml(FakeNvml):
    """An nvidia-ml-py from before MIG."""

    nvmlDeviceGetMigMode = None  # type: ignore[assignment]
