"""A stand-in for the pynvml module: only the nvml* functions provisioner.probe.nvml calls, answering from a
list of FakeDevice (NVML itself cannot exist on a machine without an NVIDIA driver)."""

from __future__ import annotations

from dataclasses import dataclass


class NVMLError(Exception):
    """Stands for pynvml.NVMLError; subclasses carry pynvml's class names."""


class NVMLError_LibraryNotFound(NVMLError):  # noqa: N801 - pynvml's name
    pass


class NVMLError_DriverNotLoaded(NVMLError):  # noqa: N801
    pass


class NVMLError_LibRmVersionMismatch(NVMLError):  # noqa: N801
    pass


class NVMLError_NotSupported(NVMLError):  # noqa: N801
    pass


class NVMLError_FunctionNotFound(NVMLError):  # noqa: N801
    pass


class NVMLError_NotFound(NVMLError):  # noqa: N801
    pass


@dataclass
class Memory:
    total: int


@dataclass
class Pci:
    busId: str | bytes  # noqa: N815 - NVML's field name


@dataclass
class FakeDevice:
    name: str | bytes
    cc: tuple[int, int]
    memory_bytes: int | None
    uuid: str
    bus_id: str | bytes
    mig_slots: tuple[str | None, ...] | None = None  # None: no MIG support; a slot of None: no instance there


@dataclass
class FakeMigInstance:
    uuid: str


class FakeNvml:
    """The NVML calls probe.nvml makes, answering from a list of FakeDevice."""

    def __init__(
        self,
        devices: list[FakeDevice],
        driver: str | bytes = "580.159.04",
        cuda: int = 13000,
        init_error: Exception | None = None,
        has_v2: bool = True,
    ) -> None:
        self.devices = devices
        self.driver = driver
        self.cuda = cuda
        self.init_error = init_error
        self.initialised = False
        self.shutdowns = 0
        if not has_v2:
            self.nvmlSystemGetCudaDriverVersion_v2 = self._missing  # type: ignore[method-assign]

    def _missing(self) -> int:
        raise NVMLError_FunctionNotFound("Function Not Found")

    def nvmlInit(self) -> None:
        if self.init_error:
            raise self.init_error
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self) -> str | bytes:
        return self.driver

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        return self.cuda

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.cuda

    def nvmlDeviceGetCount(self) -> int:
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeDevice:
        return self.devices[index]

    def nvmlDeviceGetName(self, handle: FakeDevice) -> str | bytes:
        return handle.name

    def nvmlDeviceGetCudaComputeCapability(self, handle: FakeDevice) -> tuple[int, int]:
        return handle.cc

    def nvmlDeviceGetMemoryInfo(self, handle: FakeDevice) -> Memory:
        if handle.memory_bytes is None:
            raise NVMLError_NotSupported("Not Supported")
        return Memory(handle.memory_bytes)

    def nvmlDeviceGetUUID(self, handle: FakeDevice | FakeMigInstance) -> str:
        return handle.uuid

    def nvmlDeviceGetMigMode(self, handle: FakeDevice) -> tuple[int, int]:
        if handle.mig_slots is None:
            raise NVMLError_NotSupported("Not Supported")
        return (1, 1) if handle.mig_slots else (0, 0)

    def nvmlDeviceGetMaxMigDeviceCount(self, handle: FakeDevice) -> int:
        return len(handle.mig_slots or ())

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle: FakeDevice, index: int) -> FakeMigInstance:
        uuid = (handle.mig_slots or ())[index]
        if uuid is None:
            raise NVMLError_NotFound("Not Found")
        return FakeMigInstance(uuid)

    def nvmlDeviceGetPciInfo(self, handle: FakeDevice) -> Pci:
        return Pci(handle.bus_id)
