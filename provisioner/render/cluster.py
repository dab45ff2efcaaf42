"""A cluster planned (`ortprov plan --kube-nodes`, `--kube`): per class the nodes, the plan and why, and where it
may run; as text, JSON, the Kubernetes node affinity of each class (`--format kubernetes`: YAML, one document
per class, each a pod spec's `affinity` field), or the Dockerfiles (`--format dockerfile`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from provisioner.cluster.constraints import admitted, node_affinity
from provisioner.render.plan import render_text
from provisioner.render.style import style

if TYPE_CHECKING:
    from provisioner.cluster.classes import ClusterPlan, NodeClass, NodeGroup
    from provisioner.matrix.model import Matrix
    from provisioner.plan import Plan

SHOWN_REASONS = 3
ONE_IMAGE = "one-image"  # the name of the --one-image plan's Dockerfile and constraint


def dockerfile_name(name: str) -> str:
    """The file a class's Dockerfile is written to."""
    return f"Dockerfile.{name}"


def _all_groups(cluster: ClusterPlan) -> tuple[NodeGroup, ...]:
    return tuple(group for node_class in cluster.classes for group in node_class.groups)


def _plan_line(plan: Plan) -> str:
    what = f"{plan.package} {plan.ort_version}: CUDA {plan.cuda_version}"
    if plan.cudnn_version:
        what += f", cuDNN {plan.cudnn_version}"
    if plan.tensorrt_version:
        what += f", TensorRT {plan.tensorrt_version}"
    return what


def render_cluster_text(cluster: ClusterPlan, matrix: Matrix, verbose: bool = False) -> str:
    """The summary: every class (its nodes, plan, why and where it may run), the skipped nodes, --one-image."""
    planned = sum(c.count for c in cluster.classes)
    skipped = sum(s.count for s in cluster.skipped)
    count = len(cluster.classes)
    lines = [
        style(
            f"{cluster.source}: {cluster.nodes} node{'s' if cluster.nodes != 1 else ''}, {planned} planned in {count} "
            f"class{'es' if count != 1 else ''}, {skipped} skipped",
            "bold",
        )
    ]
    for node_class in cluster.classes:
        lines += ["", *_class_lines(node_class, matrix, verbose)]
    if cluster.skipped:
        lines += ["", style("Skipped:", "bold")]
        for group in cluster.skipped:
            more = ", ..." if group.count > len(group.names) else ""
            nodes = "node" if group.count == 1 else "nodes"
            lines.append(f"  {group.count} {nodes} ({', '.join(group.names)}{more}): {group.reason}")
    if cluster.one_image is not None:
        lines += [
            "",
            style("One image for every class (--one-image):", "bold"),
            render_text(cluster.one_image, verbose),
        ]
        lines.append("  runs on: " + "; ".join(str(kind) for kind in admitted(_all_groups(cluster), matrix)))
    else:
        lines += [
            "",
            "Next: --format kubernetes prints each class's node affinity; --format dockerfile --output-dir DIR "
            "writes its Dockerfile; --one-image asks for one image for all.",
        ]
    return "\n".join(lines)


def _class_lines(node_class: NodeClass, matrix: Matrix, verbose: bool) -> list[str]:
    lines = [style(f"class {node_class.name}: {node_class.count} node{'s' if node_class.count != 1 else ''}", "bold")]
    lines += [f"  {group.describe()}" for group in node_class.groups]
    plan = node_class.plan
    if plan is None:
        lines.append(f"  no build runs here: {node_class.why}")
        return lines
    lines.append(f"  plan: {_plan_line(plan)}")
    lines.append(f"  install: {' '.join(plan.install)}")
    reasons = plan.reasons if verbose else plan.reasons[:SHOWN_REASONS]
    lines += [f"  why: {reason}" for reason in reasons]
    if len(reasons) < len(plan.reasons):
        lines.append(f"  ({len(plan.reasons) - len(reasons)} more reasons: -v)")
    lines += [f"  note: {note}" for note in plan.notes]
    lines += [f"  runs on: {kind}" for kind in admitted(node_class.groups, matrix)]
    return lines


def cluster_data(cluster: ClusterPlan, matrix: Matrix) -> dict:
    """The JSON document (docs/json.md, "plan --kube-nodes")."""
    from provisioner.serde import to_jsonable

    classes = []
    for node_class in cluster.classes:
        classes.append(
            {
                "name": node_class.name,
                "nodes": node_class.count,
                "groups": [to_jsonable(group) for group in node_class.groups],
                "plan": node_class.plan.to_dict() if node_class.plan else None,
                "why_not": node_class.why or None,
                "runs_on": [to_jsonable(kind) for kind in admitted(node_class.groups, matrix)]
                if node_class.plan
                else [],
                "affinity": node_affinity(node_class.groups, matrix) if node_class.plan else None,
                "dockerfile": dockerfile_name(node_class.name) if node_class.plan else None,
            }
        )
    one = cluster.one_image
    return {
        "source": cluster.source,
        "nodes": cluster.nodes,
        "classes": classes,
        "skipped": [to_jsonable(group) for group in cluster.skipped],
        "one_image": None
        if one is None
        else {
            "plan": one.to_dict(),
            "runs_on": [to_jsonable(kind) for kind in admitted(_all_groups(cluster), matrix)],
            "affinity": node_affinity(_all_groups(cluster), matrix),
        },
    }


def render_affinities(cluster: ClusterPlan, matrix: Matrix) -> str:
    """`--format kubernetes`: per class (or for the one image), a YAML document holding a pod spec's `affinity`
    (paste it under a Deployment's spec.template.spec), headed by comments naming the class, its image and nodes."""
    import yaml

    class _Plain(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:  # every expression written out: no &id001 / *id001
            return True

    documents = []
    if cluster.one_image is not None:
        entries = [(ONE_IMAGE, cluster.one_image, _all_groups(cluster), cluster.nodes)]
    else:
        entries = [(c.name, c.plan, c.groups, c.count) for c in cluster.classes if c.plan is not None]
    for name, plan, groups, count in entries:
        header = [
            f"# ortprov: class {name}, {count} node{'s' if count != 1 else ''}: {_plan_line(plan)}",
            f"# image: built from {dockerfile_name(name)} (ortprov plan ... --format dockerfile --output-dir DIR)",
            "# a pod spec's affinity: paste under spec.template.spec of the Deployment that runs this image",
        ]
        header += [f"# runs on: {kind}" for kind in admitted(groups, matrix)]
        body = yaml.dump(
            {"affinity": node_affinity(groups, matrix)},
            Dumper=_Plain,
            sort_keys=False,
            default_flow_style=None,
            width=120,
        )
        documents.append("\n".join(header) + "\n" + body)
    return "---\n".join(documents)


@dataclass(frozen=True)
class ClusterResult:
    """`ortprov plan --kube-nodes/--kube`: text, JSON, or the node affinities (`fmt` "kubernetes")."""

    cluster: ClusterPlan
    matrix: Matrix = field(repr=False)
    fmt: str = "text"
    verbose: bool = False

    @property
    def exit_code(self) -> int:
        """3 (no compatible plan) when a class has no build; else 0."""
        from provisioner.errors import EXIT_NO_PLAN

        return EXIT_NO_PLAN if any(c.plan is None for c in self.cluster.classes) else 0

    def text(self) -> str:
        if self.fmt == "kubernetes":
            return render_affinities(self.cluster, self.matrix)
        return render_cluster_text(self.cluster, self.matrix, self.verbose)

    def data(self) -> Any:
        return cluster_data(self.cluster, self.matrix)


@dataclass(frozen=True)
class WrittenResult:
    """`--format dockerfile --output-dir DIR`: the files written, one line each."""

    folder: str
    files: tuple[tuple[str, str], ...]  # (file name, class)
    exit_code: int = 0

    def text(self) -> str:
        return "\n".join(f"{self.folder}/{name}  (class {what})" for name, what in self.files)

    def data(self) -> Any:
        return {"folder": self.folder, "dockerfiles": [{"file": n, "class": c} for n, c in self.files]}
