"""`ortprov plan --kube-nodes FILE` / `--kube [--kube-context NAME]`: a Kubernetes cluster planned from its nodes'
labels (docs/cluster.md). The flags checked together, the NodeList read (a file in chunks, or kubectl's answer),
the nodes tallied and planned (provisioner/cluster/), and the result: text, JSON, node affinities, or the
Dockerfiles written into --output-dir (all rendered first, then moved into place: nothing half-written)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from provisioner.errors import BadInput

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from provisioner.commands.options import PlanningOptions
    from provisioner.render.output import Result

_HOST_FLAGS = (("host_files", "--host"), ("driver", "--driver"), ("gpu_cc", "--gpu-cc"), ("platform", "--platform"))
_READ_HINT = "save it with `kubectl get nodes -o json > nodes.json`"


@dataclass(frozen=True)
class ClusterOptions:
    """Where the nodes come from and what to make of them."""

    nodes_file: str | None = None
    kube: bool = False
    context: str | None = None
    one_image: bool = False
    output_dir: Path | None = None

    @property
    def wanted(self) -> bool:
        return bool(self.nodes_file or self.kube or self.context)


def check_cluster_flags(options: ClusterOptions, planning: PlanningOptions, fmt: str, hashes: bool) -> None:
    """BadInput (one line) for flags that do not go together."""
    from provisioner.commands.options import CLUSTER_FORMATS

    if not options.wanted:
        if options.one_image:
            raise BadInput("--one-image plans a cluster", hint="add --kube-nodes nodes.json or --kube")
        if options.output_dir is not None:
            raise BadInput("--output-dir writes a cluster's Dockerfiles", hint="add --kube-nodes nodes.json or --kube")
        if fmt in CLUSTER_FORMATS:
            raise BadInput(
                f"--format {fmt} prints a cluster's node affinities", hint="add --kube-nodes nodes.json or --kube"
            )
        return
    if options.nodes_file and (options.kube or options.context):
        raise BadInput("--kube-nodes and --kube exclude each other", hint="read a saved NodeList, or the live cluster")
    for field_name, flag in _HOST_FLAGS:
        if getattr(planning, field_name):
            raise BadInput(
                f"{flag} describes one host; a cluster's nodes describe themselves",
                hint=f"leave {flag} out (--python X.Y picks the images' Python)",
            )
    if planning.target_python:
        raise BadInput(
            f"--python {planning.target_python} names an interpreter; a cluster's images need a version",
            hint="pass --python X.Y (3.12), or leave it out for this interpreter's version",
        )
    if hashes:
        raise BadInput("--hashes does not apply to a cluster's plans", hint="leave --hashes out")
    if fmt not in ("text", "json", "dockerfile", *CLUSTER_FORMATS) and not options.one_image:
        raise BadInput(
            f"--format {fmt} prints one recipe, and a cluster has one plan per class",
            hint="add --one-image, or use --format dockerfile --output-dir DIR (one Dockerfile per class)",
        )
    if fmt == "dockerfile" and not options.one_image and options.output_dir is None:
        raise BadInput(
            "a cluster has one Dockerfile per class", hint="name the folder to write them to: --output-dir DIR"
        )
    if options.output_dir is not None and fmt != "dockerfile":
        raise BadInput("--output-dir writes Dockerfiles", hint="add --format dockerfile")


def plan_cluster_command(
    options: ClusterOptions, planning: PlanningOptions, fmt: str, base: str, verbose: bool
) -> Result:
    """Read the nodes, plan them, and render or write the result."""
    import dataclasses

    from provisioner.cluster.classes import Tally, plan_cluster
    from provisioner.cluster.nodelist import read_nodes
    from provisioner.cluster.nodes import read_node
    from provisioner.commands.planning import described_python, matrix_in_use, request_from
    from provisioner.errors import NoCompatiblePlan
    from provisioner.render.cluster import ClusterResult
    from provisioner.render.output import note

    if base == "cuda":  # as `plan --base cuda`: the nvidia/cuda image brings CUDA and cuDNN
        planning = dataclasses.replace(planning, cuda_libraries="system")
    chunks, source, origin = _nodes_source(options)
    tally = Tally()
    read_nodes(chunks, origin, lambda index, node: tally.add(read_node(node, index)))
    if not tally.groups:
        why = (
            f"{tally.nodes} node{'s' if tally.nodes != 1 else ''}, none with GPU labels" if tally.nodes else "no nodes"
        )
        raise NoCompatiblePlan(
            f"{source} has no GPU node to plan for ({why})",
            hint="GPU Feature Discovery (the GPU Operator, or the k8s-device-plugin chart with gfd.enabled) labels "
            "GPU nodes; check with kubectl get nodes -L nvidia.com/gpu.product",
        )
    matrix = matrix_in_use()
    python = described_python(planning)
    if planning.python_version is None:
        note(f"planned the images for Python {python.minor} (this interpreter's); pass --python X.Y for another")
    cluster = plan_cluster(tally, matrix, request_from(planning), python, source=source, one_image=options.one_image)
    for node_class in cluster.classes:
        if node_class.plan is None:
            note(f"class {node_class.name}: no build runs there: {node_class.why}", "warning")
    if fmt in ("text", "json", "kubernetes"):
        return ClusterResult(cluster, matrix, fmt, verbose)
    from provisioner.render import recipes

    if cluster.one_image is not None:
        from provisioner.render.plan import RecipeResult

        text = recipes.render(cluster.one_image, fmt, matrix=matrix, python="python", base=base)
        if options.output_dir is None:
            return RecipeResult(text)
        from provisioner.render.cluster import ONE_IMAGE

        return _write(options.output_dir, [(ONE_IMAGE, text)])
    if not any(c.plan for c in cluster.classes):
        raise NoCompatiblePlan("no class of the cluster has a build: no Dockerfile to write")
    assert options.output_dir is not None  # check_cluster_flags
    files = [
        (c.name, recipes.render(c.plan, "dockerfile", matrix=matrix, base=base)) for c in cluster.classes if c.plan
    ]
    blocked = any(c.plan is None for c in cluster.classes)
    return _write(options.output_dir, files, exit_code=NoCompatiblePlan.exit_code if blocked else 0)


def _nodes_source(options: ClusterOptions) -> tuple[Iterable[str], str, str]:
    """(the text in chunks, the source's name for the summary, its name in error lines)."""
    from provisioner.userfiles import NODELIST_LIMIT, shown, user_chunks

    if options.nodes_file:
        path = options.nodes_file
        name = "stdin" if path == "-" else shown(path)
        chunks = user_chunks(path, "--kube-nodes", NODELIST_LIMIT, _READ_HINT)
        return chunks, name, f"--kube-nodes {name}"
    from provisioner.cluster.kubectl import cluster_nodes, origin

    text = cluster_nodes(options.context)
    step = 1 << 20
    return (text[i : i + step] for i in range(0, len(text), step)), origin(options.context), origin(options.context)


def _write(folder: Path, files: list[tuple[str, str]], exit_code: int = 0) -> Result:
    """Write each (class, Dockerfile) as DIR/Dockerfile.CLASS, and once the files they COPY from the build context
    (ortprov-check/: DIR is every class's context): all into temporary files first, then renamed, so a failure
    leaves no half of the set (the temporary files are removed)."""
    import os
    import tempfile

    from provisioner.commands.checks import make_folder
    from provisioner.render.cluster import WrittenResult, dockerfile_name
    from provisioner.render.dockerfile import context_files

    make_folder("--output-dir", folder)
    temporary: list[tuple[str, str]] = []
    contents = [(dockerfile_name(name), text.encode("utf-8")) for name, text in files]
    contents += sorted(context_files().items())
    try:
        for relative, content in contents:
            final = folder / relative
            final.parent.mkdir(parents=True, exist_ok=True)
            handle, path = tempfile.mkstemp(prefix=".ortprov-", dir=final.parent)
            temporary.append((path, str(final)))
            with os.fdopen(handle, "wb") as out:
                out.write(content)
        for path, target in temporary:
            os.chmod(path, 0o644)
            os.replace(path, target)
    except OSError as exc:
        for path, _ in temporary:
            if os.path.exists(path):
                os.unlink(path)
        raise BadInput(f"--output-dir {str(folder)!r}: cannot write: {exc.strerror or exc}") from None
    return WrittenResult(str(folder), tuple((dockerfile_name(name), name) for name, _ in files), exit_code)
