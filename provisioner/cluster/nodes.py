"""One node of a NodeList to the facts a plan needs (NodeFacts), read from its labels (labels.py), or the reason it
is skipped (no GPU labels: GFD does not run there, or the node has no NVIDIA GPU). A label that is there but does
not read as its documented format is bad input: BadInput naming the node and the label."""

from __future__ import annotations

import re
from dataclasses import dataclass

from provisioner.cluster import labels as L
from provisioner.errors import BadInput

_NUMBER = re.compile(r"\d{1,9}", re.ASCII)
_DRIVER = re.compile(r"\d{1,9}\.\d{1,9}(\.\d{1,9})?", re.ASCII)  # GFD: "X.Y[.Z]" (nvml.go)
_CUDA = re.compile(r"\d{1,9}\.\d{1,9}", re.ASCII)
_MAX_NAME = 253  # a node's name is a DNS subdomain
_HINT = "fix the node's labels, or relabel it: GFD rewrites them on its next run"


@dataclass(frozen=True)
class NodeFacts:
    """What a plan reads from one node: the key (`facts`) and what a class shows (the rest)."""

    name: str
    os: str  # linux
    arch: str  # x86_64 | aarch64 (the wheel platform's names)
    driver: str  # 580.95.05
    cuda: str | None  # 13.0: the newest CUDA the driver supports
    compute_capability: str  # 9.0
    product: str = ""  # NVIDIA-H100-80GB-HBM3
    family: str = ""
    gpu_count: int | None = None
    memory_mib: int | None = None
    mig_strategy: str | None = None
    instance_type: str | None = None

    @property
    def platform(self) -> str:
        """linux-x86_64, as the matrix names platforms."""
        return f"{self.os}-{self.arch}"

    @property
    def facts(self) -> tuple[str, str, str, str | None, str]:
        """What the plan depends on: nodes with the same facts get the same plan."""
        return (self.os, self.arch, self.driver, self.cuda, self.compute_capability)


@dataclass(frozen=True)
class Skipped:
    """A node that is not planned for, and why."""

    name: str
    reason: str


def node_name(node: dict, index: int) -> str:
    """metadata.name, or "item N" where it has none."""
    metadata = node.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if isinstance(name, str) and name and len(name) <= _MAX_NAME and name.isprintable():
        return name
    return f"item {index}"


def read_node(node: dict, index: int) -> NodeFacts | Skipped:
    """The node's facts, or why it is skipped; BadInput for a label that is there and unreadable."""
    name = node_name(node, index)
    metadata = node.get("metadata")
    labels = metadata.get("labels", {}) if isinstance(metadata, dict) else {}
    if labels is None:
        labels = {}
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise BadInput(f"node {name!r}: its labels are not a map of strings", hint=_HINT)
    status = node.get("status")
    status = status if isinstance(status, dict) else {}
    info = status.get("nodeInfo")
    info = info if isinstance(info, dict) else {}
    os_name = labels.get(L.OS) or labels.get(L.OS_BETA) or info.get("operatingSystem")
    arch = labels.get(L.ARCH) or labels.get(L.ARCH_BETA) or info.get("architecture")
    major, minor = (labels.get(key) for key in L.COMPUTE)
    if major is None and minor is None:
        gfd = sorted(key for key in labels if key.startswith(L.GFD) and "." in key[len(L.GFD) :])
        why = "no GPU Feature Discovery labels" if not gfd else f"no {L.COMPUTE[0]} label (has {gfd[0]}, ...)"
        return Skipped(name, f"{why}: no NVIDIA GPU, or GFD does not run there")
    cc = f"{_number(name, L.COMPUTE[0], major)}.{_number(name, L.COMPUTE[1], minor)}"
    if not isinstance(os_name, str) or os_name not in L.OSES:
        return Skipped(name, f"{L.OS}={os_name!r}: onnxruntime-gpu has no wheel for it")
    if not isinstance(arch, str) or arch not in L.ARCHES:
        return Skipped(name, f"{L.ARCH}={arch!r}: onnxruntime-gpu has no wheel for it")
    mapped = L.ARCHES[arch]
    count = labels.get(L.COUNT)
    memory = labels.get(L.MEMORY)
    return NodeFacts(
        name=name,
        os=os_name,
        arch=mapped,
        driver=_driver(name, labels),
        cuda=_cuda(name, labels),
        compute_capability=cc,
        product=labels.get(L.PRODUCT, ""),
        family=labels.get(L.FAMILY, ""),
        gpu_count=int(_number(name, L.COUNT, count)) if count is not None else None,
        memory_mib=int(_number(name, L.MEMORY, memory)) if memory not in (None, "") else None,
        mig_strategy=labels.get(L.MIG_STRATEGY),
        instance_type=labels.get(L.INSTANCE_TYPE) or labels.get(L.INSTANCE_TYPE_BETA),
    )


def _unreadable(name: str, key: str, value: object, shape: str) -> BadInput:
    return BadInput(f"node {name!r}: label {key}={value!r} is not {shape}", hint=_HINT)


def _number(name: str, key: str, value: str | None) -> str:
    if value is None or not _NUMBER.fullmatch(value):
        raise _unreadable(name, key, value, "a number")
    return str(int(value))


def _driver(name: str, labels: dict[str, str]) -> str:
    """The driver version: `cuda.driver-version.full`, else its parts, else the deprecated parts."""
    full = labels.get(L.DRIVER_FULL)
    if full is not None:
        if not _DRIVER.fullmatch(full):
            raise _unreadable(name, L.DRIVER_FULL, full, "a driver version X.Y[.Z]")
        return full
    for keys in (L.DRIVER_PARTS, L.DRIVER_PARTS_DEPRECATED):
        major, minor, revision = (labels.get(key) for key in keys)
        if major is None and minor is None:
            continue
        for key, value in ((keys[0], major), (keys[1], minor)):
            if value is None or not _NUMBER.fullmatch(value):
                raise _unreadable(name, key, value, "a number")
        if revision and not _NUMBER.fullmatch(revision):
            raise _unreadable(name, keys[2], revision, "a number")
        return f"{major}.{minor}" + (f".{revision}" if revision else "")  # kept as written: "06" in 580.65.06
    raise BadInput(
        f"node {name!r} has GPU labels but no driver version ({L.DRIVER_FULL})",
        hint="GFD writes it with the others: check that its labeler runs on that node",
    )


def _cuda(name: str, labels: dict[str, str]) -> str | None:
    """The newest CUDA the driver supports: `cuda.runtime-version.full`, else its (deprecated) parts."""
    full = labels.get(L.CUDA_FULL)
    if full is not None:
        if not _CUDA.fullmatch(full):
            raise _unreadable(name, L.CUDA_FULL, full, "a CUDA version X.Y")
        return full
    for keys in (L.CUDA_PARTS, L.CUDA_PARTS_DEPRECATED):
        major, minor = (labels.get(key) for key in keys)
        if major is None and minor is None:
            continue
        return f"{_number(name, keys[0], major)}.{_number(name, keys[1], minor)}"
    return None
