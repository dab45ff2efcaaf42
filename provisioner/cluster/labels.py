"""The node labels a plan is read from, as data: NVIDIA GPU Feature Discovery's keys and Kubernetes' well-known ones.

Sources (NVIDIA/k8s-device-plugin at commit 1b826acc6af3079d8923bac395c3124b8861a9a6, 2026-08-19, the home of GFD):
- internal/lm/nvml.go `newVersionLabeler`: `cuda.driver-version.{major,minor,revision,full}` from NVML's driver
  version ("X.Y[.Z]"; revision "" when there is none) and `cuda.runtime-version.{major,minor,full}` from
  `cuDriverGetVersion`, the newest CUDA the *driver* supports ("13.0"), not a toolkit; the deprecated aliases
  `cuda.driver.{major,minor,rev}` and `cuda.runtime.{major,minor}` carry the same values.
- internal/lm/resource.go: `gpu.product` (NVML's name, characters outside [A-Za-z0-9-_. ] dropped, spaces to "-":
  "Tesla-T4", "NVIDIA-H100-80GB-HBM3"; "-SHARED" appended under time-slicing or MPS), `gpu.count`, `gpu.memory`
  (MiB), `gpu.family` (from the compute capability: turing, ampere, ada-lovelace, hopper, blackwell, ...),
  `gpu.compute.{major,minor}` (absent when NVML reports major 0), and with MIG `mig.strategy` and, for the mixed
  strategy, `mig-<profile>.*`; docs/gpu-feature-discovery/README.md lists them, tests/expected-output*.txt gives
  each value's shape.
- Kubernetes' well-known labels (kubernetes.io/docs/reference/labels-annotations-taints/): `kubernetes.io/arch`
  (GOARCH: amd64, arm64), `kubernetes.io/os` (linux, windows), `node.kubernetes.io/instance-type`.
"""

from __future__ import annotations

GFD = "nvidia.com/"

# the facts a plan needs, each read from the current key, else from its deprecated alias(es)
DRIVER_FULL = GFD + "cuda.driver-version.full"  # "580.95.05"
DRIVER_PARTS = (
    GFD + "cuda.driver-version.major",
    GFD + "cuda.driver-version.minor",
    GFD + "cuda.driver-version.revision",
)
DRIVER_PARTS_DEPRECATED = (GFD + "cuda.driver.major", GFD + "cuda.driver.minor", GFD + "cuda.driver.rev")
CUDA_FULL = GFD + "cuda.runtime-version.full"  # "13.0": the newest CUDA the driver supports
CUDA_PARTS = (GFD + "cuda.runtime-version.major", GFD + "cuda.runtime-version.minor")
CUDA_PARTS_DEPRECATED = (GFD + "cuda.runtime.major", GFD + "cuda.runtime.minor")
COMPUTE = (GFD + "gpu.compute.major", GFD + "gpu.compute.minor")
PRODUCT = GFD + "gpu.product"
FAMILY = GFD + "gpu.family"
COUNT = GFD + "gpu.count"
MEMORY = GFD + "gpu.memory"
MIG_STRATEGY = GFD + "mig.strategy"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
# older clusters: the beta keys (deprecated since Kubernetes 1.14/1.17), read where the GA ones are absent
ARCH_BETA = "beta.kubernetes.io/arch"
OS_BETA = "beta.kubernetes.io/os"
INSTANCE_TYPE_BETA = "beta.kubernetes.io/instance-type"

# Kubernetes' GOARCH names to the wheel platform's (facts.PlatformInfo.arch); an arch not here has no wheel
ARCHES = {"amd64": "x86_64", "arm64": "aarch64"}
OSES = ("linux", "windows")

# the keys a scheduling constraint matches on (constraints.py): the current ones, which GFD writes since v0.15.0
# (commit eba41da40); the driver's revision is "" on a two-part version, and Kubernetes' Gt/Lt take integers only
AFFINITY_KEYS = (ARCH, OS, *COMPUTE, *DRIVER_PARTS)
