"""Nodes to classes: nodes with the same facts (nodes.NodeFacts.facts) form a group, each group is planned as one
host, and groups whose plans install the same things form a class, one image. `--one-image` plans every class's
hosts together: the existing multi-host planning, which names the host, here the class, that blocks it.

A Tally is filled one node at a time and keeps, per group, a count and a few names: its size follows the number of
groups (and of skip reasons), not of nodes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from provisioner.cluster.nodes import NodeFacts, Skipped
from provisioner.errors import NoCompatiblePlan
from provisioner.facts import DriverInfo, Gpu, HostFacts, PlatformInfo, PythonInfo
from provisioner.planner import make_plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from provisioner.matrix.model import Matrix
    from provisioner.plan import Plan, Request

SAMPLES = 3  # node names kept per group and per skip reason
SHOWN = 4  # distinct products, instance types kept per group

Facts = tuple[str, str, str, "str | None", str]


@dataclass
class _Group:
    first: NodeFacts
    count: int = 0
    names: list[str] = field(default_factory=list)
    products: list[str] = field(default_factory=list)
    instance_types: list[str] = field(default_factory=list)
    mig: list[str] = field(default_factory=list)


def _keep(items: list[str], value: str | None, limit: int) -> None:
    if value and value not in items and len(items) < limit:
        items.append(value)


class Tally:
    """The cluster's nodes, counted by facts as they are read (and the skipped ones by reason)."""

    def __init__(self) -> None:
        self.groups: dict[Facts, _Group] = {}
        self.skipped: dict[str, list[str]] = {}
        self.skipped_count: dict[str, int] = {}
        self.nodes = 0

    def add(self, node: NodeFacts | Skipped) -> None:
        self.nodes += 1
        if isinstance(node, Skipped):
            names = self.skipped.setdefault(node.reason, [])
            self.skipped_count[node.reason] = self.skipped_count.get(node.reason, 0) + 1
            if len(names) < SAMPLES:
                names.append(node.name)
            return
        group = self.groups.get(node.facts)
        if group is None:
            group = self.groups[node.facts] = _Group(node)
        group.count += 1
        if len(group.names) < SAMPLES:
            group.names.append(node.name)
        _keep(group.products, node.product, SHOWN)
        _keep(group.instance_types, node.instance_type, SHOWN)
        _keep(group.mig, node.mig_strategy, SHOWN)


@dataclass(frozen=True)
class NodeGroup:
    """Nodes with the same facts: how many, a few names, what they hold."""

    platform: str  # linux-x86_64
    driver: str
    cuda: str | None  # the newest CUDA the driver supports
    compute_capability: str
    count: int
    names: tuple[str, ...]
    products: tuple[str, ...] = ()
    instance_types: tuple[str, ...] = ()
    mig_strategies: tuple[str, ...] = ()

    def short(self) -> str:
        """ "Tesla-T4 nodes, linux-x86_64, driver 535.183.01": how plans name the group."""
        return f"{'/'.join(self.products) or 'GPU'} nodes, {self.platform}, driver {self.driver}"

    def describe(self) -> str:
        """ "40 nodes (t4-0, t4-1, ...): Tesla-T4, compute 7.5, driver 535.183.01 (CUDA 12.2), linux-x86_64"."""
        more = ", ..." if self.count > len(self.names) else ""
        what = "/".join(self.products) or "GPU"
        cuda = f" (CUDA {self.cuda})" if self.cuda else ""
        mig = f", MIG {'/'.join(self.mig_strategies)}" if self.mig_strategies else ""
        nodes = "node" if self.count == 1 else "nodes"
        return (
            f"{self.count} {nodes} ({', '.join(self.names)}{more}): {what}, compute {self.compute_capability}, "
            f"driver {self.driver}{cuda}, {self.platform}{mig}"
        )


@dataclass(frozen=True)
class SkippedNodes:
    """Nodes skipped for one reason."""

    reason: str
    count: int
    names: tuple[str, ...]


@dataclass(frozen=True)
class NodeClass:
    """Groups that get the same plan: one image, and where it may run. `plan` None: no build runs there (`why`)."""

    name: str
    groups: tuple[NodeGroup, ...]
    plan: Plan | None
    why: str = ""  # NoCompatiblePlan's message when plan is None

    @property
    def count(self) -> int:
        return sum(group.count for group in self.groups)


@dataclass(frozen=True)
class ClusterPlan:
    """The cluster planned: its classes, the nodes skipped, and (`--one-image`) one plan for every class."""

    source: str
    nodes: int
    classes: tuple[NodeClass, ...]
    skipped: tuple[SkippedNodes, ...]
    one_image: Plan | None = None


def node_groups(tally: Tally) -> tuple[NodeGroup, ...]:
    """The tally's groups, ordered by platform, compute capability, then driver (as numbers)."""
    groups = [
        NodeGroup(
            platform=g.first.platform,
            driver=g.first.driver,
            cuda=g.first.cuda,
            compute_capability=g.first.compute_capability,
            count=g.count,
            names=tuple(g.names),
            products=tuple(g.products),
            instance_types=tuple(g.instance_types),
            mig_strategies=tuple(g.mig),
        )
        for g in tally.groups.values()
    ]
    return tuple(sorted(groups, key=lambda g: (g.platform, _numbers(g.compute_capability), _numbers(g.driver))))


def skipped_nodes(tally: Tally) -> tuple[SkippedNodes, ...]:
    return tuple(
        SkippedNodes(reason, tally.skipped_count[reason], tuple(names)) for reason, names in tally.skipped.items()
    )


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def group_host(group: NodeGroup, python: PythonInfo, label: str = "") -> HostFacts:
    """The host a group's nodes stand for: their platform, driver and GPU; the image's Python; nothing installed."""
    os_name, arch = group.platform.split("-", 1)
    return HostFacts(
        platform=PlatformInfo(os=os_name, arch=arch),
        driver=DriverInfo(present=True, version=group.driver, cuda_version=group.cuda, source="kubernetes"),
        python=python,
        gpus=(Gpu(index=0, name="/".join(group.products), compute_capability=group.compute_capability),),
        label=label or group.short(),
        captured_by="kubernetes node labels",
    )


def plan_identity(plan: Plan) -> tuple:
    """What an image holds: two groups whose plans agree on it share one image."""
    return (plan.package, plan.ort_version, plan.cuda_version, plan.cudnn_version, plan.tensorrt_version, plan.steps)


def plan_cluster(
    tally: Tally, matrix: Matrix, request: Request, python: PythonInfo, *, source: str, one_image: bool = False
) -> ClusterPlan:
    """Plan each group, merge the groups whose plans agree into classes, plan each class as one image; with
    `one_image`, one plan for every class (NoCompatiblePlan naming the class that blocks it)."""
    merged: dict[tuple, list[tuple[NodeGroup, Plan]]] = {}
    unplanned: list[tuple[NodeGroup, str]] = []
    for group in node_groups(tally):
        try:
            plan = make_plan((group_host(group, python),), matrix, request)
        except NoCompatiblePlan as exc:
            unplanned.append((group, exc.message))
            continue
        merged.setdefault(plan_identity(plan), []).append((group, plan))
    classes: list[NodeClass] = []
    taken: set[str] = set()
    for members in merged.values():
        groups = tuple(group for group, _ in members)
        first = members[0][1]
        name = _unique(f"ort{first.ort_version}-cuda{first.cuda_version.split('.')[0]}-{_arch(groups)}", taken)
        plan = first if len(groups) == 1 else _joint(groups, name, matrix, request, python)
        classes.append(NodeClass(name, groups, plan))
    for group, why in unplanned:
        name = _unique(f"unplanned-{group.platform.split('-', 1)[1]}-cc{group.compute_capability}", taken)
        classes.append(NodeClass(name, (group,), None, why))
    one = _one_image(classes, matrix, request, python) if one_image and classes else None
    return ClusterPlan(source, tally.nodes, tuple(classes), skipped_nodes(tally), one)


def _arch(groups: tuple[NodeGroup, ...]) -> str:
    return "-".join(sorted({group.platform.split("-", 1)[1] for group in groups}))  # a name, a tag: no "+"


def _unique(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}-{number}", number + 1
    taken.add(candidate)
    return candidate


def class_hosts(node_class: NodeClass, python: PythonInfo) -> tuple[HostFacts, ...]:
    """The class's groups as hosts, each labelled with the class's name."""
    return tuple(group_host(group, python, f"class {node_class.name}: {group.short()}") for group in node_class.groups)


def _joint(groups: tuple[NodeGroup, ...], name: str, matrix: Matrix, request: Request, python: PythonInfo) -> Plan:
    """The class's plan made for all its groups at once (its reasons speak of each); the first group's where the
    joint plan would be another build."""
    first = make_plan((group_host(groups[0], python),), matrix, request)
    try:
        joint = make_plan(tuple(group_host(group, python) for group in groups), matrix, request)
    except NoCompatiblePlan:
        return first
    return joint if plan_identity(joint) == plan_identity(first) else first


def _one_image(classes: list[NodeClass], matrix: Matrix, request: Request, python: PythonInfo) -> Plan:
    """One plan for the hosts of every class; NoCompatiblePlan naming the class that blocks it."""
    blocked = [c for c in classes if c.plan is None]
    if blocked:
        raise NoCompatiblePlan(
            f"no image runs on every class: no build runs on class {blocked[0].name} at all ({blocked[0].why})",
            hint="leave those nodes out of the image's constraint, or plan without --one-image",
        )
    hosts = tuple(host for c in classes for host in class_hosts(replace(c, plan=None), python))
    try:
        return make_plan(hosts, matrix, request)
    except NoCompatiblePlan as exc:
        raise NoCompatiblePlan(
            f"no image runs on every class: {exc.message}",
            rejected=exc.rejected,
            hint="plan without --one-image: one image per class (its constraint keeps it on its nodes)",
        ) from None
