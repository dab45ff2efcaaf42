"""`ortprov plan --kube-nodes` as a user runs it (a child process): the summary, --json, --format kubernetes and
dockerfile, --one-image, stdin, and one line with exit 2 for each kind of bad input, nothing written."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest
import yaml

from provisioner.plan import Plan
from tests.support.cli import cli_env, run_ortprov
from tests.support.kube_match import affinity_admits
from tests.support.kube_nodes import A100, GH200, H100, gpu_node, mixed_cluster, mixed_cluster_json, node_list

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path


@pytest.fixture(scope="module")
def nodes_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kube") / "nodes.json"
    path.write_text(mixed_cluster_json(3))
    return path


def _one_line_error(result: subprocess.CompletedProcess[str], code: int, words: str) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and words in lines[0], result.stderr
    assert all(line.startswith("hint: ") for line in lines[1:]), result.stderr


def test_the_summary_names_each_class_its_nodes_plan_and_where_it_runs(nodes_file: Path) -> None:
    result = run_ortprov("plan", "--kube-nodes", str(nodes_file), "--python", "3.12")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"'{nodes_file}': 16 nodes, 15 planned in ")
    assert "1 node (cpu-0): no GPU Feature Discovery labels" in out
    for name in ("t4-0", "a100-0", "h100-0", "b200-0", "gh200-0"):
        assert f"({name}, " in out
    assert out.count("\nclass ort") >= 3 and "runs on: linux/arm64, compute 9.0, driver >= 580.95.05" in out


def test_json_holds_every_class_plan_and_affinity(nodes_file: Path) -> None:
    result = run_ortprov("plan", "--kube-nodes", str(nodes_file), "--python", "3.12", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["nodes"] == 16 and data["skipped"][0]["names"] == ["cpu-0"] and data["one_image"] is None
    nodes = {n["metadata"]["name"]: n for n in mixed_cluster(3)}
    covered = []
    for entry in data["classes"]:
        plan = Plan.from_dict(entry["plan"])
        assert (
            entry["name"].startswith(f"ort{plan.ort_version}-") and entry["dockerfile"] == f"Dockerfile.{entry['name']}"
        )
        for group in entry["groups"]:
            for name in group["names"]:
                assert affinity_admits(entry["affinity"], nodes[name]["metadata"]["labels"])
                covered.append(name)
        assert not affinity_admits(entry["affinity"], nodes["cpu-0"]["metadata"]["labels"])
    assert sorted(covered) == sorted(n for n in nodes if n != "cpu-0")


def test_format_kubernetes_is_one_yaml_document_per_class(nodes_file: Path) -> None:
    result = run_ortprov("plan", "--kube-nodes", str(nodes_file), "--python", "3.12", "--format", "kubernetes")
    assert result.returncode == 0, result.stderr
    documents = list(yaml.safe_load_all(result.stdout))
    data = json.loads(run_ortprov("plan", "--kube-nodes", str(nodes_file), "--python", "3.12", "--json").stdout)
    assert [d["affinity"] for d in documents] == [c["affinity"] for c in data["classes"]]
    assert "&id" not in result.stdout and result.stdout.startswith("# ortprov: class ort")


def test_stdin_reads_the_same_nodes(nodes_file: Path) -> None:
    piped = run_ortprov("plan", "--kube-nodes", "-", "--python", "3.12", "--json", input_text=nodes_file.read_text())
    saved = run_ortprov("plan", "--kube-nodes", str(nodes_file), "--python", "3.12", "--json")
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["classes"] == json.loads(saved.stdout)["classes"]
    assert json.loads(piped.stdout)["source"] == "stdin"


def test_dockerfiles_are_written_one_per_class(nodes_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "images"
    result = run_ortprov(
        "plan", "--kube-nodes", str(nodes_file), "--python", "3.12", "--format", "dockerfile", "--output-dir", str(out)
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(run_ortprov("plan", "--kube-nodes", str(nodes_file), "--python", "3.12", "--json").stdout)
    names = sorted(f"Dockerfile.{c['name']}" for c in data["classes"])
    assert sorted(os.listdir(out)) == sorted([*names, "ortprov-check"])  # the build context they all COPY from
    assert sorted(os.listdir(out / "ortprov-check")) == ["check_cuda_libs.py", "elf.py", "libnames.py"]
    for entry in data["classes"]:
        text = (out / f"Dockerfile.{entry['name']}").read_text()
        assert f"onnxruntime-gpu[cuda,cudnn]=={entry['plan']['ort_version']}" in text and text.startswith("#")
        assert f"{out}/Dockerfile.{entry['name']}  (class {entry['name']})" in result.stdout


def test_one_image_names_the_class_that_blocks_it(nodes_file: Path) -> None:
    result = run_ortprov("plan", "--kube-nodes", str(nodes_file), "--python", "3.12", "--one-image")
    _one_line_error_or_reasons(result)
    assert "no image runs on every class: " in result.stderr and "host 'class ort" in result.stderr


def _one_line_error_or_reasons(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr


def test_one_image_for_classes_one_build_runs_on(tmp_path: Path) -> None:
    path = tmp_path / "nodes.json"
    recent = [
        gpu_node("h-0", H100, "580.95.05"),
        gpu_node("a-0", A100, "580.95.05"),
        gpu_node("g-0", GH200, "580.95.05", arch="arm64"),
    ]
    path.write_text(json.dumps(node_list(recent)))
    result = run_ortprov("plan", "--kube-nodes", str(path), "--python", "3.12", "--one-image", "--json")
    assert result.returncode == 0, result.stderr
    one = json.loads(result.stdout)["one_image"]
    assert len(one["plan"]["host"]) == 3 and len(one["runs_on"]) == 3
    for item in recent:
        assert affinity_admits(one["affinity"], item["metadata"]["labels"])
    dockerfile = run_ortprov(
        "plan", "--kube-nodes", str(path), "--python", "3.12", "--one-image", "--format", "dockerfile"
    )
    assert dockerfile.returncode == 0 and f"=={one['plan']['ort_version']}" in dockerfile.stdout
    out = tmp_path / "one"
    written = run_ortprov(
        "plan",
        "--kube-nodes",
        str(path),
        "--python",
        "3.12",
        "--one-image",
        "-f",
        "dockerfile",
        "--output-dir",
        str(out),
    )
    assert written.returncode == 0, written.stderr
    assert (
        sorted(os.listdir(out)) == ["Dockerfile.one-image", "ortprov-check"]
        and (out / "Dockerfile.one-image").read_text() == dockerfile.stdout
    )
    kube = run_ortprov("plan", "--kube-nodes", str(path), "--python", "3.12", "--one-image", "--format", "kubernetes")
    assert [d["affinity"] for d in yaml.safe_load_all(kube.stdout)] == [one["affinity"]]


@pytest.mark.parametrize(
    ("document", "words"),
    [
        ('{"kind": "PodList", "apiVersion": "v1", "items": []}', "is not a NodeList: its kind is 'PodList'"),
        ('{"kind": "List", "items": [{"kind": "Pod"}]}', "item 0 is a Pod, not a Node"),
        ("not json", "is not a NodeList: it is not a JSON object"),
        ('{"kind": "List", "items": [', "is not JSON"),
        ("", "is empty"),
    ],
)
def test_a_document_that_is_no_nodelist_is_exit_2(tmp_path: Path, document: str, words: str) -> None:
    path = tmp_path / "nodes.json"
    path.write_text(document)
    out = tmp_path / "images"
    result = run_ortprov("plan", "--kube-nodes", str(path), "--format", "dockerfile", "--output-dir", str(out))
    _one_line_error(result, 2, words)
    assert not out.exists()


def test_an_unreadable_label_is_exit_2_and_nothing_is_written(tmp_path: Path) -> None:
    nodes = mixed_cluster(2)
    nodes[-2]["metadata"]["labels"]["nvidia.com/gpu.compute.minor"] = "x"
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(node_list(nodes)))
    out = tmp_path / "images"
    result = run_ortprov("plan", "--kube-nodes", str(path), "--format", "dockerfile", "--output-dir", str(out))
    _one_line_error(result, 2, "node 'gh200-1': label nvidia.com/gpu.compute.minor='x' is not a number")
    as_json = run_ortprov("plan", "--kube-nodes", str(path), "--json")
    assert (
        json.loads(as_json.stdout)["error"] == "node 'gh200-1': label nvidia.com/gpu.compute.minor='x' is not a number"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--driver", "580"], "--driver describes one host"),
        (["--host", "h.json"], "--host describes one host"),
        (["--python", "/usr/bin/python3"], "names an interpreter; a cluster's images need a version"),
        (["--format", "dockerfile"], "a cluster has one Dockerfile per class"),
        (["--format", "pip"], "--format pip prints one recipe"),
        (["--output-dir", "x"], "--output-dir writes Dockerfiles"),
        (["--kube"], "--kube-nodes and --kube exclude each other"),
        (["--format", "requirements", "--hashes", "--one-image"], "--hashes does not apply"),
    ],
)
def test_flags_that_do_not_go_with_a_cluster_are_exit_2(nodes_file: Path, args: list[str], words: str) -> None:
    _one_line_error(run_ortprov("plan", "--kube-nodes", str(nodes_file), *args), 2, words)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--one-image"], "--one-image plans a cluster"),
        (["--format", "kubernetes"], "--format kubernetes prints a cluster's node affinities"),
        (["--output-dir", "x"], "--output-dir writes a cluster's Dockerfiles"),
    ],
)
def test_cluster_flags_without_a_cluster_are_exit_2(args: list[str], words: str) -> None:
    _one_line_error(run_ortprov("plan", "--driver", "580", "--gpu-cc", "9.0", *args), 2, words)


def test_a_cluster_without_gpu_nodes_is_exit_3(tmp_path: Path) -> None:
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(node_list(mixed_cluster(1)[-1:])))
    _one_line_error(
        run_ortprov("plan", "--kube-nodes", str(path)), 3, "has no GPU node to plan for (1 node, none with GPU labels)"
    )


def test_kube_without_kubectl_on_path_is_exit_2(tmp_path: Path) -> None:
    env = cli_env(PATH=str(tmp_path))
    _one_line_error(run_ortprov("plan", "--kube", env=env), 2, "kubectl is not on PATH")
