"""The live cluster's nodes through `kubectl get nodes -o json` (an edge): kubectl runs as a child process
(childproc.py) with the user's kubeconfig and, with `--kube-context NAME`, that context; its answer is handed
back as text. No Kubernetes client library: kubectl already knows the user's clusters, contexts and credentials
(exec plugins, OIDC), which a library would have to be configured for again.

BadInput (exit 2, one line) when kubectl is not on PATH, cannot be started, fails (the cluster unreachable,
forbidden, an unknown context: its own first line of stderr) or does not answer in time."""

from __future__ import annotations

import re
import shutil

from provisioner.childproc import run, stderr_gist
from provisioner.errors import BadInput

TIMEOUT = 60.0  # seconds for the whole `kubectl get`
REQUEST_TIMEOUT = "30s"  # kubectl's own limit on each request to the API server
# klog's line header (`E1207 13:35:47.214097   18514 memcache.go:265] ...`): kubectl's log lines, which come before
# the sentence it ends with ("The connection to the server 127.0.0.1:6443 was refused - did you specify ...")
_KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\] ")


def kubectl_argv(context: str | None = None, kubectl: str = "kubectl") -> list[str]:
    """The command ortprov runs."""
    argv = [kubectl, "get", "nodes", "--output", "json", f"--request-timeout={REQUEST_TIMEOUT}"]
    return [*argv, "--context", context] if context else argv


def origin(context: str | None) -> str:
    """How errors name the document: "the cluster's NodeList (kubectl, context 'prod')"."""
    return "the cluster's NodeList (kubectl" + (f", context {context!r})" if context else ")")


def cluster_nodes(context: str | None = None, timeout: float = TIMEOUT) -> str:
    """The NodeList kubectl prints for the current (or the named) context."""
    found = shutil.which("kubectl")
    if found is None:
        raise BadInput(
            "kubectl is not on PATH: --kube reads the cluster through it",
            hint="install kubectl, or save the nodes where it runs: kubectl get nodes -o json > nodes.json, "
            "then ortprov plan --kube-nodes nodes.json",
        )
    where = f"context {context!r}" if context else "the current context"
    try:
        ended = run(kubectl_argv(context, found), timeout=timeout)
    except OSError as exc:
        raise BadInput(f"kubectl ({found}) cannot be started: {exc.strerror or exc}") from None
    if ended.timed_out:
        raise BadInput(
            f"the cluster is unreachable through kubectl ({where}): no answer in {timeout:g} s",
            hint="check the cluster with `kubectl get nodes`",
        )
    if ended.returncode != 0:
        said = [line for line in ended.stderr.splitlines() if line.strip() and not _KLOG.match(line)]
        gist = (
            stderr_gist(said[-1] if said else ended.stderr) or f"kubectl exited with {ended.signal or ended.returncode}"
        )
        raise BadInput(
            f"the cluster is unreachable through kubectl ({where}): {gist}",
            hint="check it with `kubectl get nodes`" + ("" if context else "; pick a cluster with --kube-context"),
        )
    return ended.stdout
