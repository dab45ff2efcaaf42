"""`ortprov plan --kube-nodes` on big clusters: time and memory against the number of nodes (issue 33).

Usage:
    .venv/bin/python benchmarks/bench_cluster_plan.py [--runs 5] [--nodes 1000,5000,20000]

For each size, a NodeList as `kubectl get nodes -o json` prints it (tests/support/kube_nodes.big_cluster: the
mixed pools of T4/535, A100/570, H100/580, B200/580 and aarch64 GH200/580 nodes over each branch's released
drivers, every tenth node without a GPU; ~6 KB a node, pretty-printed as kubectl does) is written to a file, then
- the whole command `python -m provisioner plan --kube-nodes FILE --python 3.12 --json` is timed (wall, median
  and min of --runs) and its peak resident memory read (the child's ru_maxrss);
- in this process, the same reading and planning (userfiles.user_chunks -> nodelist.read_nodes -> Tally ->
  plan_cluster) is timed, then run again under tracemalloc: the peak of what it allocates, which must not grow
  with the nodes.
Target: 5,000 nodes in < 2 s, memory that follows the classes, not the nodes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from proc_timing import REPO

sys.path.insert(0, str(REPO))

from provisioner.cluster.classes import Tally, plan_cluster  # noqa: E402
from provisioner.cluster.nodelist import read_nodes  # noqa: E402
from provisioner.cluster.nodes import read_node  # noqa: E402
from provisioner.facts import PythonInfo  # noqa: E402
from provisioner.matrix.load import load_matrix  # noqa: E402
from provisioner.plan import Request  # noqa: E402
from provisioner.userfiles import user_chunks  # noqa: E402
from tests.support.kube_nodes import big_cluster, node_list  # noqa: E402

TARGET_S = 2.0
_MAXRSS = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "assert done.returncode == 0, done.stderr.decode()[-500:]\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def whole_command(path: Path, runs: int) -> tuple[list[float], int, dict]:
    argv = [sys.executable, "-m", "provisioner", "plan", "--kube-nodes", str(path), "--python", "3.12", "--json"]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        assert done.returncode == 0, done.stderr[-500:]
    data = json.loads(done.stdout)
    rss = int(subprocess.run([sys.executable, "-c", _MAXRSS, *argv], cwd=REPO, capture_output=True, text=True).stdout)
    return times, rss, data


def _read_and_plan(path: Path) -> int:
    tally = Tally()
    read_nodes(user_chunks(path, "--kube-nodes", 1 << 30), "bench", lambda i, n: tally.add(read_node(n, i)))
    python = PythonInfo(executable="", version="3.12", abi="cp312")
    return len(plan_cluster(tally, load_matrix(), Request(), python, source="bench").classes)


def in_process(path: Path) -> tuple[float, int, int]:
    """(seconds, peak bytes allocated while reading and planning (a second run, under tracemalloc), classes)."""
    load_matrix()
    started = time.perf_counter()
    classes = _read_and_plan(path)
    seconds = time.perf_counter() - started
    tracemalloc.start()
    _read_and_plan(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak, classes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", default="1000,5000,20000")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {args.runs} runs each")
    print("| nodes | file | groups | classes | whole command median (min) | peak RSS | in-process | tracemalloc peak |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for count in (int(n) for n in args.nodes.split(",")):
            path = Path(folder) / f"nodes-{count}.json"
            path.write_text(json.dumps(node_list(big_cluster(count)), indent=4))
            times, rss_kib, data = whole_command(path, args.runs)
            seconds, peak, classes = in_process(path)
            groups = sum(len(c["groups"]) for c in data["classes"])
            median = statistics.median(times)
            verdict = " (target < 2 s: met)" if count == 5000 and median < TARGET_S else ""
            print(
                f"| {count} | {path.stat().st_size / 1e6:.1f} MB | {groups} | {classes} | {median:.2f} s "
                f"({min(times):.2f} s){verdict} | {rss_kib / 1024:.0f} MiB | {seconds:.2f} s | {peak / 1e6:.1f} MB |"
            )


if __name__ == "__main__":
    main()
