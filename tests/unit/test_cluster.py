"""A cluster's nodes to classes, plans and node affinities (provisioner/cluster/), from NodeLists built with the
labels GFD writes (tests/support/kube_nodes.py says where each comes from), against the shipped matrix."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provisioner.cluster import labels as L
from provisioner.cluster.classes import Tally, plan_cluster, plan_identity
from provisioner.cluster.constraints import node_affinity
from provisioner.cluster.nodelist import read_nodes
from provisioner.cluster.nodes import NodeFacts, Skipped, read_node
from provisioner.errors import BadInput, NoCompatiblePlan
from provisioner.facts import PythonInfo
from provisioner.matrix.load import load_matrix
from provisioner.plan import Request
from provisioner.planner import make_plan
from tests.support.kube_match import affinity_admits
from tests.support.kube_nodes import (
    A100,
    GH200,
    H100,
    T4,
    gpu_node,
    mixed_cluster,
    mixed_cluster_json,
    node,
    node_list,
)

PYTHON = PythonInfo(executable="", version="3.12", abi="cp312")


@pytest.fixture(scope="module")
def matrix():  # noqa: ANN201
    return load_matrix()


def _tally(nodes: list[dict]) -> Tally:
    tally = Tally()
    for index, item in enumerate(nodes):
        tally.add(read_node(item, index))
    return tally


def _labels(item: dict) -> dict[str, str]:
    return item["metadata"]["labels"]


# -- one node ----------------------------------------------------------------------------------------------


def test_a_node_reads_as_its_gfd_labels_say() -> None:
    facts = read_node(gpu_node("h100-0", H100, "580.65.06", count=8), 0)
    assert facts == NodeFacts(
        name="h100-0",
        os="linux",
        arch="x86_64",
        driver="580.65.06",
        cuda="13.0",
        compute_capability="9.0",
        product="NVIDIA-H100-80GB-HBM3",
        family="hopper",
        gpu_count=8,
        memory_mib=81559,
        mig_strategy=None,
        instance_type=None,
    )
    arm = read_node(gpu_node("gh-0", GH200, "580.95.05", arch="arm64"), 1)
    assert isinstance(arm, NodeFacts) and arm.platform == "linux-aarch64"


def test_the_deprecated_driver_and_cuda_labels_are_read_where_the_current_ones_are_absent() -> None:
    old = read_node(gpu_node("t4-0", T4, "535.183.01", deprecated_only=True), 0)
    new = read_node(gpu_node("t4-0", T4, "535.183.01"), 0)
    assert isinstance(old, NodeFacts) and old.facts == new.facts == ("linux", "x86_64", "535.183.01", "12.2", "7.5")


def test_a_node_without_gpu_labels_is_skipped_with_the_reason() -> None:
    skipped = read_node(node("cpu-0", {}), 0)
    assert isinstance(skipped, Skipped) and skipped.name == "cpu-0"
    assert "no GPU Feature Discovery labels" in skipped.reason
    # GFD's node labels without a GPU's (a node whose GPU NVML does not report: compute.major 0 is not written)
    partial = read_node(
        node("odd-0", {"nvidia.com/gfd.timestamp": "1765100000", "nvidia.com/cuda.driver.major": "580"}), 0
    )
    assert isinstance(partial, Skipped) and L.COMPUTE[0] in partial.reason


def test_a_node_on_an_arch_without_wheels_is_skipped() -> None:
    item = gpu_node("p-0", H100, "580.95.05", arch="ppc64le")
    skipped = read_node(item, 0)
    assert isinstance(skipped, Skipped) and "ppc64le" in skipped.reason


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        (L.DRIVER_FULL, "580.latest", "nvidia.com/cuda.driver-version.full='580.latest' is not a driver version"),
        (L.COMPUTE[0], "nine", "nvidia.com/gpu.compute.major='nine' is not a number"),
        (L.CUDA_FULL, "13", "nvidia.com/cuda.runtime-version.full='13' is not a CUDA version"),
        (L.COUNT, "-1", "nvidia.com/gpu.count='-1' is not a number"),
    ],
)
def test_an_unreadable_label_is_bad_input_naming_the_node_and_the_label(key: str, value: str, said: str) -> None:
    item = gpu_node("h100-7", H100, "580.95.05")
    _labels(item)[key] = value
    with pytest.raises(BadInput) as caught:
        read_node(item, 7)
    assert caught.value.message.startswith(f"node 'h100-7': label {said}")


def test_labels_that_are_no_map_of_strings_are_bad_input() -> None:
    item = gpu_node("h100-0", H100, "580.95.05")
    _labels(item)["nvidia.com/gpu.count"] = 8
    with pytest.raises(BadInput, match="its labels are not a map of strings"):
        read_node(item, 0)


def test_gpu_labels_without_a_driver_version_are_bad_input() -> None:
    item = gpu_node("h100-0", H100, "580.95.05")
    for key in [*L.DRIVER_PARTS, *L.DRIVER_PARTS_DEPRECATED, L.DRIVER_FULL]:
        del _labels(item)[key]
    with pytest.raises(BadInput, match="has GPU labels but no driver version"):
        read_node(item, 0)


# -- the document --------------------------------------------------------------------------------------------


def _read(text: str, chunks: int | None = None) -> tuple[str, list[str]]:
    names: list[str] = []
    parts = [text] if chunks is None else [text[i : i + chunks] for i in range(0, len(text), chunks)]
    kind = read_nodes(parts, "nodes.json", lambda index, item: names.append(item.get("metadata", {}).get("name")))
    return kind, names


def test_kubectls_list_and_the_apis_nodelist_are_read_alike() -> None:
    assert _read(mixed_cluster_json(2))[1] == _read(mixed_cluster_json(2, kind="NodeList"), chunks=97)[1]
    kind, names = _read(mixed_cluster_json(2))
    assert kind == "List" and names[:3] == ["t4-0", "t4-1", "a100-0"] and len(names) == 11


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=4000), st.sampled_from([0, 2, None]))
def test_any_chunking_of_the_text_reads_the_same_nodes(size: int, indent: int | None) -> None:
    text = json.dumps(node_list(mixed_cluster(1)), indent=indent)
    assert _read(text, chunks=size) == _read(text)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"kind": "PodList", "apiVersion": "v1", "items": []}', "nodes.json is not a NodeList: its kind is 'PodList'"),
        ('{"apiVersion": "v1", "items": []}', "nodes.json is not a NodeList: it has no kind"),
        ('{"kind": "NodeList"}', "nodes.json is not a NodeList: it has no items"),
        ('[{"kind": "Node"}]', "nodes.json is not a NodeList: it is not a JSON object"),
        ('{"kind": "List", "items": [{"kind": "Pod"}]}', "nodes.json is not a NodeList: item 0 is a Pod, not a Node"),
        ('{"kind": "List", "items": [1]}', "nodes.json is not a NodeList: item 0 is not an object"),
        ('{"kind": "List", "items": [{"kind": "Node"}', "nodes.json is not JSON"),
        ('{"kind": "List", "items": []} {}', "nodes.json is not JSON: extra data"),
        ('{"kind": "List", "items": [], "x": NaN}', "nodes.json holds NaN"),
    ],
)
def test_a_document_that_is_no_nodelist_is_one_line_of_bad_input(text: str, said: str) -> None:
    with pytest.raises(BadInput) as caught:
        _read(text, chunks=7)
    assert caught.value.message.startswith(said)
    assert "\n" not in caught.value.message


# -- classes, plans, constraints -------------------------------------------------------------------------------


def test_the_mixed_cluster_forms_one_class_per_plan(matrix) -> None:  # noqa: ANN001
    """Whatever the matrix's date: one class per distinct plan of the nodes alone, every GPU node in one class."""
    nodes = mixed_cluster(3)
    cluster = plan_cluster(_tally(nodes), matrix, Request(), PYTHON, source="nodes.json")
    assert cluster.nodes == 16
    assert [(s.count, s.names) for s in cluster.skipped] == [(1, ("cpu-0",))]
    alone = {}
    for item in nodes[:-1]:
        facts = read_node(item, 0)
        assert isinstance(facts, NodeFacts)
        one = plan_cluster(_tally([item]), matrix, Request(), PYTHON, source="one").classes[0].plan
        assert one is not None
        alone[facts.name] = plan_identity(one)
    assert len(cluster.classes) == len(set(alone.values()))
    seen: list[str] = []
    for node_class in cluster.classes:
        names = [n for g in node_class.groups for n in g.names]
        assert node_class.plan is not None and node_class.name.startswith(f"ort{node_class.plan.ort_version}-")
        assert {alone[n] for n in names} == {plan_identity(node_class.plan)}
        assert node_class.count == len(names) == 3 * len(node_class.groups)
        seen += names
    assert sorted(seen) == sorted(alone)
    # a 535 driver cannot run the CUDA 13 build an H100 on 580 gets: never one class
    assert alone["t4-0"] != alone["h100-0"]


def test_every_class_plan_is_the_plan_of_each_of_its_nodes_alone(matrix) -> None:  # noqa: ANN001
    cluster = plan_cluster(_tally(mixed_cluster(1)), matrix, Request(), PYTHON, source="nodes.json")
    for node_class in cluster.classes:
        for group in node_class.groups:
            from provisioner.cluster.classes import group_host

            alone = make_plan((group_host(group, PYTHON),), matrix, Request())
            assert node_class.plan is not None
            assert (alone.ort_version, alone.cuda_version, alone.install) == (
                node_class.plan.ort_version,
                node_class.plan.cuda_version,
                node_class.plan.install,
            )


def test_each_class_affinity_admits_its_nodes_and_only_nodes_its_image_runs_on(matrix) -> None:  # noqa: ANN001
    nodes = mixed_cluster(2) + [
        gpu_node("h100-new", H100, "590.48.01"),  # a newer driver than the class was planned on: admitted
        gpu_node("h100-old", H100, "580.65.06"),  # older than every H100 of the class: not admitted
        gpu_node("a100-old", A100, "570.86.15"),
        gpu_node("l4-0", gpu=T4.__class__("NVIDIA L4", "8.9", 23034), driver="580.95.05"),  # a GPU no class has
    ]
    planned = mixed_cluster(2)
    cluster = plan_cluster(_tally(planned), matrix, Request(), PYTHON, source="nodes.json")
    for node_class in cluster.classes:
        affinity = node_affinity(node_class.groups, matrix)
        members = {n for g in node_class.groups for n in g.names}
        admitted = {item["metadata"]["name"] for item in nodes if affinity_admits(affinity, _labels(item))}
        assert members <= admitted
        assert "cpu-0" not in admitted and "l4-0" not in admitted and "h100-old" not in admitted
        assert node_class.plan is not None
        for item in nodes:  # wherever the class's image may land, the planner says its build runs there
            if item["metadata"]["name"] in admitted:
                facts = read_node(item, 0)
                assert isinstance(facts, NodeFacts)
                pinned = Request(ort=f"=={node_class.plan.ort_version}", cuda=node_class.plan.cuda_version)
                tally = _tally([item])
                host = plan_cluster(tally, matrix, pinned, PYTHON, source="one")
                assert host.classes[0].plan is not None, (node_class.name, item["metadata"]["name"])
    h100 = next(c for c in cluster.classes if c.name.startswith("ort1.31.1"))
    assert affinity_admits(node_affinity(h100.groups, matrix), _labels(nodes[-4]))  # h100-new


def test_driver_floor_terms_compare_each_part_as_a_number(matrix) -> None:  # noqa: ANN001
    cluster = plan_cluster(_tally([gpu_node("h-0", H100, "580.65.06")]), matrix, Request(), PYTHON, source="x")
    affinity = node_affinity(cluster.classes[0].groups, matrix)

    def admits(driver: str) -> bool:
        return affinity_admits(affinity, _labels(gpu_node("n", H100, driver)))

    assert admits("580.65.06") and admits("580.65.07") and admits("580.82.07") and admits("590.44.01")
    assert not admits("580.65.05") and not admits("580.9.99") and not admits("575.64.05")


def test_one_image_is_the_multi_host_plan_or_names_the_class_that_blocks_it(matrix) -> None:  # noqa: ANN001
    with pytest.raises(NoCompatiblePlan) as caught:
        plan_cluster(_tally(mixed_cluster(1)), matrix, Request(), PYTHON, source="x", one_image=True)
    assert caught.value.message.startswith("no image runs on every class: ")
    assert "host 'class ort" in caught.value.message
    recent = [gpu_node("h-0", H100, "580.95.05"), gpu_node("gh-0", GH200, "580.95.05", arch="arm64")]
    recent.append(gpu_node("a-0", A100, "580.95.05"))
    cluster = plan_cluster(_tally(recent), matrix, Request(), PYTHON, source="x", one_image=True)
    assert cluster.one_image is not None and len(cluster.one_image.hosts) == len(cluster.one_image.hosts) == 3
    alone = make_plan(tuple(h for c in cluster.classes for h in [c.plan.hosts[0]] if c.plan), matrix, Request())
    assert cluster.one_image.install == alone.install


def test_a_class_no_build_runs_on_is_kept_with_the_reason(matrix) -> None:  # noqa: ANN001
    cluster = plan_cluster(  # a driver older than the H100: no CUDA it supports knows compute capability 9.0
        _tally([gpu_node("h-old", H100, "470.256.02"), gpu_node("h-0", H100, "580.95.05")]),
        matrix,
        Request(),
        PYTHON,
        source="x",
    )
    blocked = [c for c in cluster.classes if c.plan is None]
    assert [c.name for c in blocked] == ["unplanned-x86_64-cc9.0"] and "compute capability 9.0" in blocked[0].why


def test_the_tally_keeps_a_few_names_per_group_not_every_node() -> None:
    tally = _tally(
        [gpu_node(f"h-{i}", H100, "580.95.05") for i in range(500)] + [node(f"c-{i}", {}) for i in range(500)]
    )
    assert tally.nodes == 1000 and len(tally.groups) == 1
    group = next(iter(tally.groups.values()))
    assert group.count == 500 and group.names == ["h-0", "h-1", "h-2"]
    assert list(tally.skipped_count.values()) == [500] and len(next(iter(tally.skipped.values()))) == 3


def test_a_gpu_whose_architecture_a_later_branch_dropped_is_kept_below_that_branch(matrix) -> None:  # noqa: ANN001
    p100 = T4.__class__("Tesla P100-PCIE-16GB", "6.0", 16384)  # Pascal: R580 is its last branch (matrices/cuda.yaml)
    cluster = plan_cluster(_tally([gpu_node("p-0", p100, "535.183.01")]), matrix, Request(), PYTHON, source="x")
    if cluster.classes[0].plan is None:
        pytest.skip(f"no build for Pascal in this matrix: {cluster.classes[0].why}")
    affinity = node_affinity(cluster.classes[0].groups, matrix)
    assert affinity_admits(affinity, _labels(gpu_node("p-1", p100, "580.95.05")))
    assert not affinity_admits(affinity, _labels(gpu_node("p-2", p100, "590.44.01")))
