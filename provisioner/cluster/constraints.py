"""Where a class's image may run, as a Kubernetes node affinity on the labels GFD writes (labels.AFFINITY_KEYS).

For each (platform, compute capability) of the class: its OS and arch, that compute capability, and a driver at
least the lowest one the class's nodes of that kind have, on which the plan was made (and, where the matrix says
a branch was the last to run that architecture, at most that branch). Kubernetes ORs a `nodeSelectorTerms` list
and ANDs the `matchExpressions` of a term; `Gt`/`Lt` compare a label's value as an integer with one integer
(kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#NodeSelectorRequirement), so "driver >=
580.65.06" is three terms: major > 580; major 580 and minor > 65; major 580, minor 65 and revision > 5. A node
whose driver, GPU or arch the class was not planned for matches no term: its pod stays pending instead of
failing there."""

from __future__ import annotations

from dataclasses import dataclass

from provisioner.cluster import labels as L
from provisioner.matrix.query import gpu_architecture

TYPE_CHECKING = False
if TYPE_CHECKING:
    from provisioner.cluster.classes import NodeGroup
    from provisioner.matrix.model import Matrix

_K8S_ARCH = {wheel: goarch for goarch, wheel in L.ARCHES.items()}


def _expression(key: str, operator: str, *values: str) -> dict:
    return {"key": key, "operator": operator, "values": list(values)}


def _lowest(drivers: list[str]) -> str:
    return min(drivers, key=lambda d: tuple(int(p) for p in d.split(".")))


@dataclass(frozen=True)
class Admitted:
    """One kind of node an image may run on: OS, arch (Kubernetes' name), compute capability, driver floor (the
    lowest driver of the class's nodes of that kind), and the newest driver branch for the GPU (None: any)."""

    os: str
    arch: str
    compute_capability: str
    driver_floor: str
    last_branch: str | None = None

    def __str__(self) -> str:
        below = f", driver branch <= {self.last_branch}" if self.last_branch else ""
        return f"{self.os}/{self.arch}, compute {self.compute_capability}, driver >= {self.driver_floor}{below}"


def admitted(groups: tuple[NodeGroup, ...], matrix: Matrix) -> tuple[Admitted, ...]:
    """The kinds of node these groups' image may run on, in the groups' order."""
    drivers: dict[tuple[str, str], list[str]] = {}
    for group in groups:
        drivers.setdefault((group.platform, group.compute_capability), []).append(group.driver)
    kinds = []
    for (platform, cc), seen in drivers.items():
        os_name, arch = platform.split("-", 1)
        architecture = gpu_architecture(matrix, cc)
        last = architecture.last_driver_branch if architecture is not None else None
        kinds.append(Admitted(os_name, _K8S_ARCH[arch], cc, _lowest(seen), last))
    return tuple(kinds)


def selector_terms(groups: tuple[NodeGroup, ...], matrix: Matrix) -> list[dict]:
    """The nodeSelectorTerms that admit the nodes of these groups, and nodes like them with a newer driver."""
    terms: list[dict] = []
    for kind in admitted(groups, matrix):
        cc_major, cc_minor = kind.compute_capability.split(".")
        base = [
            _expression(L.OS, "In", kind.os),
            _expression(L.ARCH, "In", kind.arch),
            _expression(L.COMPUTE[0], "In", cc_major),
            _expression(L.COMPUTE[1], "In", cc_minor),
        ]
        if kind.last_branch:
            base.append(_expression(L.DRIVER_PARTS[0], "Lt", str(int(kind.last_branch) + 1)))
        terms += [{"matchExpressions": [dict(e) for e in base] + rest} for rest in _driver_at_least(kind.driver_floor)]
    return terms


def _driver_at_least(driver: str) -> list[list[dict]]:
    """The terms (each a list of expressions) that together say "driver >= `driver`"."""
    major_key, minor_key, revision_key = L.DRIVER_PARTS
    parts = driver.split(".")
    major, minor = parts[0], parts[1]
    terms = [
        [_expression(major_key, "Gt", str(int(major)))],
    ]
    if len(parts) == 2:  # X.Y: minor >= Y
        terms.append([_expression(major_key, "In", major), _expression(minor_key, "Gt", str(int(minor) - 1))])
        return terms
    revision = parts[2]
    terms.append([_expression(major_key, "In", major), _expression(minor_key, "Gt", str(int(minor)))])
    terms.append(
        [
            _expression(major_key, "In", major),
            _expression(minor_key, "In", minor),
            _expression(revision_key, "Gt", str(int(revision) - 1)),
        ]
    )
    return terms


def node_affinity(groups: tuple[NodeGroup, ...], matrix: Matrix) -> dict:
    """A pod spec's `affinity` that keeps it on nodes like these groups'."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": selector_terms(groups, matrix)}
        }
    }
