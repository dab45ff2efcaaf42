"""NodeLists as `kubectl get nodes -o json` prints them, with the labels NVIDIA GPU Feature Discovery writes.

Where each part comes from (NVIDIA/k8s-device-plugin at 1b826acc6af3079d8923bac395c3124b8861a9a6):
- the label set and each value's shape: tests/expected-output.txt (no MIG), expected-output-mig-single.txt,
  expected-output-mig-mixed.txt; how the values are made: internal/lm/nvml.go (driver "X.Y[.Z]" split into
  major/minor/revision, kept as written: "06" stays "06"; the driver's CUDA as "%d.%d"), internal/lm/resource.go
  (`gpu.product`: NVML's name with spaces as "-"; `gpu.family` from the compute capability, `getArchFamily`);
- the GPUs: NVML names and memory from this project's saved hosts (tests/hosts/h100-driver580.json: "NVIDIA
  H100 80GB HBM3", 81559 MiB; a100-driver535-container-no-cudnn.json: "NVIDIA A100-SXM4-80GB", 81920 MiB), the T4
  from GFD's README (docs/gpu-feature-discovery/README.md: `Tesla-T4`, 15360 MiB, turing, 7.5); B200 (10.0) and
  GH200 (9.0, aarch64) by NVIDIA's compute capability table (https://developer.nvidia.com/cuda-gpus, as
  matrices/gpus.yaml records it) and the names NVML gives them ("NVIDIA B200", "NVIDIA GH200 480GB"); their
  memory figures are illustrative, nothing plans on them;
- drivers: released R535/R570/R580 versions; each one's CUDA (the `cuda.runtime-version` label) is the newest
  CUDA release whose driver floor it meets in matrices/cuda.yaml (470 -> 11.4, 535 -> 12.2, 570 -> 12.8,
  575 -> 12.9, 580 -> 13.0, 590 -> 13.1);
- the node's shape (kind Node in kubectl's List, status.capacity/allocatable `nvidia.com/gpu`, nodeInfo): the
  Kubernetes v1 Node API, as kubectl v1.32 prints it.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass

DRIVER_CUDA = {"470": "11.4", "535": "12.2", "570": "12.8", "575": "12.9", "580": "13.0", "590": "13.1"}


def gfd_family(major: int, minor: int) -> str:
    """internal/lm/resource.go getArchFamily."""
    if major == 7:
        return "volta" if minor < 5 else "turing"
    if major == 8:
        return "ampere" if minor < 9 else "ada-lovelace"
    return {5: "maxwell", 6: "pascal", 9: "hopper", 10: "blackwell", 12: "blackwell", 13: "rubin"}.get(
        major, "undefined"
    )


@dataclass(frozen=True)
class Gpu:
    nvml_name: str
    cc: str
    memory_mib: int

    @property
    def product(self) -> str:
        return "-".join(self.nvml_name.split())


T4 = Gpu("Tesla T4", "7.5", 15360)
A100 = Gpu("NVIDIA A100-SXM4-80GB", "8.0", 81920)
H100 = Gpu("NVIDIA H100 80GB HBM3", "9.0", 81559)
B200 = Gpu("NVIDIA B200", "10.0", 183359)
GH200 = Gpu("NVIDIA GH200 480GB", "9.0", 97871)


def gfd_labels(gpu: Gpu, driver: str, *, count: int = 1, mig: str | None = None, deprecated_only: bool = False) -> dict:
    """The labels GFD writes for a node with `count` such GPUs (expected-output*.txt), MIG off unless `mig`."""
    major, minor, *rest = driver.split(".")
    revision = rest[0] if rest else ""
    cuda = DRIVER_CUDA[major]
    cuda_major, cuda_minor = cuda.split(".")
    cc_major, cc_minor = gpu.cc.split(".")
    gfd = {
        "nvidia.com/gfd.timestamp": "1765100000",
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": revision,
        "nvidia.com/cuda.runtime.major": cuda_major,
        "nvidia.com/cuda.runtime.minor": cuda_minor,
    }
    if not deprecated_only:
        gfd |= {
            "nvidia.com/cuda.driver-version.major": major,
            "nvidia.com/cuda.driver-version.minor": minor,
            "nvidia.com/cuda.driver-version.revision": revision,
            "nvidia.com/cuda.driver-version.full": driver,
            "nvidia.com/cuda.runtime-version.major": cuda_major,
            "nvidia.com/cuda.runtime-version.minor": cuda_minor,
            "nvidia.com/cuda.runtime-version.full": cuda,
        }
    gfd |= {
        "nvidia.com/gpu.machine": "ProLiant-DL380-Gen10",
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/gpu.product": gpu.product,
        "nvidia.com/gpu.memory": str(gpu.memory_mib),
        "nvidia.com/gpu.family": gfd_family(int(cc_major), int(cc_minor)),
        "nvidia.com/gpu.mode": "compute",
        "nvidia.com/mig.capable": "true" if gpu.cc in ("8.0", "9.0", "10.0") else "false",
        "nvidia.com/gpu.compute.major": cc_major,
        "nvidia.com/gpu.compute.minor": cc_minor,
        "nvidia.com/mps.capable": "false",
    }
    if mig == "single":  # expected-output-mig-single.txt: the product names the MIG profile
        gfd |= {
            "nvidia.com/mig.strategy": "single",
            "nvidia.com/gpu.product": f"{gpu.product}-MIG-1g.10gb",
            "nvidia.com/gpu.count": str(7 * count),
            "nvidia.com/gpu.memory": "9984",
            "nvidia.com/gpu.multiprocessors": "14",
            "nvidia.com/gpu.slices.gi": "1",
            "nvidia.com/gpu.slices.ci": "1",
        }
    elif mig == "mixed":  # expected-output-mig-mixed.txt: one label set per MIG profile
        gfd |= {
            "nvidia.com/mig.strategy": "mixed",
            "nvidia.com/mig-3g.40gb.product": f"{gpu.product}-MIG-3g.40gb",
            "nvidia.com/mig-3g.40gb.count": str(2 * count),
            "nvidia.com/mig-3g.40gb.replicas": "1",
            "nvidia.com/mig-3g.40gb.sharing-strategy": "none",
            "nvidia.com/mig-3g.40gb.memory": "40192",
        }
    return gfd


def node(name: str, labels: dict, *, arch: str = "amd64", gpus: int = 0, instance_type: str | None = None) -> dict:
    """A v1 Node as kubectl prints it in a List."""
    base = {
        "beta.kubernetes.io/arch": arch,
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": arch,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }
    if instance_type:
        base["node.kubernetes.io/instance-type"] = instance_type
    capacity = {"cpu": "32", "memory": "263950084Ki", "pods": "110"} | ({"nvidia.com/gpu": str(gpus)} if gpus else {})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"00000000-0000-4000-8000-{zlib.crc32(name.encode()):012d}",
            "resourceVersion": "1234",
            "creationTimestamp": "2026-12-01T10:00:00Z",
            "labels": base | labels,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"podCIDR": "10.244.1.0/24"},
        "status": {
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.10"}, {"type": "Hostname", "address": name}],
            "nodeInfo": {
                "architecture": arch,
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04.3 LTS",
                "kernelVersion": "6.8.0-88-generic",
                "containerRuntimeVersion": "containerd://2.1.4",
                "kubeletVersion": "v1.32.4",
                "kubeProxyVersion": "v1.32.4",
            },
        },
    }


def gpu_node(name: str, gpu: Gpu, driver: str, *, count: int = 1, arch: str = "amd64", **options: object) -> dict:
    instance = options.pop("instance_type", None)
    return node(
        name,
        gfd_labels(gpu, driver, count=count, **options),  # type: ignore[arg-type]
        arch=arch,
        gpus=count,
        instance_type=instance,  # type: ignore[arg-type]
    )


def node_list(nodes: list[dict], kind: str = "List") -> dict:
    """kubectl's List (kind "List", each item "kind": "Node"), or the API's NodeList (items without kind)."""
    if kind == "NodeList":
        items = [{k: v for k, v in n.items() if k not in ("kind", "apiVersion")} for n in nodes]
        return {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "1234"}, "items": items}
    return {"apiVersion": "v1", "items": nodes, "kind": "List", "metadata": {"resourceVersion": ""}}


# The mixed cluster of issue 33: T4 on 535, A100 on 570, H100 and B200 on 580, an aarch64 GH200 pool, a CPU node.
MIXED_POOLS = (
    ("t4", T4, "535.183.01", "amd64", 1, "g4dn.xlarge"),
    ("a100", A100, "570.124.06", "amd64", 8, "p4de.24xlarge"),
    ("h100", H100, "580.95.05", "amd64", 8, "p5.48xlarge"),
    ("b200", B200, "580.95.05", "amd64", 8, "p6-b200.48xlarge"),
    ("gh200", GH200, "580.95.05", "arm64", 1, None),
)


def mixed_cluster(per_pool: int = 3) -> list[dict]:
    nodes = [
        gpu_node(f"{prefix}-{i}", gpu, driver, count=count, arch=arch, instance_type=instance)
        for prefix, gpu, driver, arch, count, instance in MIXED_POOLS
        for i in range(per_pool)
    ]
    nodes.append(node("cpu-0", {}, instance_type="m7i.4xlarge"))
    return nodes


def mixed_cluster_json(per_pool: int = 3, kind: str = "List") -> str:
    return json.dumps(node_list(mixed_cluster(per_pool), kind), indent=4)


# A big cluster: the pools above with the driver versions each branch has shipped, and CPU nodes.
DRIVERS = {
    "535": ("535.104.05", "535.161.08", "535.183.01", "535.247.01"),
    "570": ("570.86.15", "570.124.06", "570.172.08"),
    "580": ("580.65.06", "580.82.07", "580.95.05"),
}


def big_cluster(count: int) -> list[dict]:
    """`count` nodes: every tenth without a GPU, the others spread over the pools and their branch's drivers."""
    nodes = []
    for i in range(count):
        if i % 10 == 9:
            nodes.append(node(f"cpu-{i}", {}))
            continue
        prefix, gpu, driver, arch, gpus, instance = MIXED_POOLS[i % len(MIXED_POOLS)]
        versions = DRIVERS[driver.split(".")[0]]
        nodes.append(
            gpu_node(
                f"{prefix}-{i}", gpu, versions[(i // 7) % len(versions)], count=gpus, arch=arch, instance_type=instance
            )
        )
    return nodes
