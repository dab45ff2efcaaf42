"""`ortprov plan --kube` end to end: the real kubectl (on this machine image at /usr/bin/kubectl; where it is not,
these tests say so and skip) against a stand-in API server on 127.0.0.1 (tests/support/kube_server.py) serving a
NodeList built from GFD's documented labels (tests/support/kube_nodes.py): ortprov runs `kubectl get nodes -o
json` as a child process and plans what it printed; a cluster that cannot be reached, or refuses, is exit 2."""

from __future__ import annotations

import json
import shutil
import socket
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import cli_env, run_ortprov
from tests.support.kube_nodes import mixed_cluster, node_list
from tests.support.kube_server import KubeServer

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH (.ci/run installs it)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _one_line_error(result: subprocess.CompletedProcess[str], code: int, words: str) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and words in lines[0], result.stderr
    assert all(line.startswith("hint: ") for line in lines[1:]), result.stderr


def test_the_live_cluster_through_kubectl_plans_as_the_saved_nodelist(tmp_path: Path) -> None:
    api_list = node_list(mixed_cluster(2), kind="NodeList")  # what the API server answers: items without kind
    with KubeServer(api_list) as api:
        env = cli_env(KUBECONFIG=str(api.kubeconfig(tmp_path)))
        live = run_ortprov("plan", "--kube", "--python", "3.12", "--json", env=env)
        by_context = run_ortprov(
            "plan", "--kube-context", "stub", "--python", "3.12", "--format", "kubernetes", env=env
        )
    assert live.returncode == 0, live.stderr
    assert "/api/v1/nodes?limit=500&timeout=30s" in api.requests  # kubectl asked, with --request-timeout
    saved = tmp_path / "nodes.json"
    saved.write_text(json.dumps(node_list(mixed_cluster(2))))  # what `kubectl get nodes -o json > nodes.json` saves
    from_file = run_ortprov("plan", "--kube-nodes", str(saved), "--python", "3.12", "--json")
    data = json.loads(live.stdout)
    assert data["source"] == "the cluster's NodeList (kubectl)" and data["nodes"] == 11
    assert data["classes"] == json.loads(from_file.stdout)["classes"]
    assert by_context.returncode == 0, by_context.stderr
    assert by_context.stdout.startswith("# ortprov: class ort") and "nodeSelectorTerms" in by_context.stdout


def test_a_cluster_kubectl_cannot_reach_is_exit_2(tmp_path: Path) -> None:
    with KubeServer(node_list([])) as api:
        config = api.kubeconfig(tmp_path, server=f"http://127.0.0.1:{_free_port()}")
    result = run_ortprov("plan", "--kube", env=cli_env(KUBECONFIG=str(config)))
    _one_line_error(result, 2, "the cluster is unreachable through kubectl (the current context): ")
    assert "The connection to the server 127.0.0.1:" in result.stderr and "was refused" in result.stderr


def test_a_cluster_that_refuses_the_list_is_exit_2(tmp_path: Path) -> None:
    with KubeServer(node_list([]), status=403) as api:
        result = run_ortprov("plan", "--kube-context", "stub", env=cli_env(KUBECONFIG=str(api.kubeconfig(tmp_path))))
    _one_line_error(result, 2, "the cluster is unreachable through kubectl (context 'stub'): ")
    assert "forbidden" in result.stderr


def test_an_unknown_context_is_exit_2(tmp_path: Path) -> None:
    with KubeServer(node_list([])) as api:
        result = run_ortprov("plan", "--kube-context", "nope", env=cli_env(KUBECONFIG=str(api.kubeconfig(tmp_path))))
    _one_line_error(result, 2, "context 'nope'")
