"""Shared by the tune child: where ONNX Runtime placed each node, from a profiled session's own profile.

Standard library + onnxruntime + numpy; Python 3.8+.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import tune_inputs, tune_session
else:  # run as a script: its folder is sys.path[0]
    import tune_inputs  # type: ignore[no-redef]
    import tune_session  # type: ignore[no-redef]

CPU_NODES_KEPT = 40


def placement(ort: Any, np: Any, request: dict) -> dict:
    """Which provider ran each node, from the session's profile: nodes per (provider, op type) with their
    kernel time per run, the CPU nodes of a GPU session by name, and the runs' durations."""
    variant = request["variant"]
    folder = tempfile.mkdtemp(prefix="ortprov-tune-profile-")
    result: dict = {"event": "placement", "error": None, "session_providers": [], "groups": [], "cpu_nodes": []}
    try:
        options = tune_session.session_options(ort, variant.get("session_options") or {})
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(folder, "profile")
        session, created, why = tune_session.open_session(ort, request["model"], variant, options)
        if session is None:
            result["error"] = (why or {}).get("reason")
            return result
        result["create_s"] = round(created, 4)
        result["session_providers"] = list(session.get_providers())
        specs = tune_session.input_specs(session)
        feed = tune_inputs.make_feed(np, request.get("kind") or "random", specs, request["feed"], 0)
        runs = max(1, int(request.get("runs") or 2))
        first_started = time.perf_counter()
        session.run(None, feed)
        result["first_run_ms"] = round((time.perf_counter() - first_started) * 1000.0, 4)
        for _ in range(runs):
            session.run(None, feed)
        path = session.end_profiling()
        with open(path, encoding="utf-8") as handle:
            events = json.load(handle)
        result.update(summarise_profile(events, runs + 1, result["session_providers"][0]))
    except Exception as exc:  # noqa: BLE001
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def summarise_profile(events: list, runs: int, first_provider: str) -> dict:
    """Node kernel events grouped by (provider, op type): distinct nodes and kernel milliseconds per run."""
    groups: dict = {}
    nodes_seen: set = set()
    cpu_nodes: list = []
    run_ms = []
    for event in events:
        if event.get("cat") == "Session" and event.get("name") == "model_run":
            run_ms.append(round(event.get("dur", 0) / 1000.0, 4))
        if event.get("cat") != "Node" or not str(event.get("name", "")).endswith("_kernel_time"):
            continue
        args = event.get("args") or {}
        provider = args.get("provider") or "?"
        op = args.get("op_name") or "?"
        node = str(event["name"])[: -len("_kernel_time")]
        group = groups.setdefault((provider, op), {"provider": provider, "op": op, "nodes": set(), "us": 0})
        group["nodes"].add(node)
        group["us"] += event.get("dur", 0)
        on_cpu = provider == "CPUExecutionProvider" and first_provider != provider
        if on_cpu and node not in nodes_seen and len(cpu_nodes) < CPU_NODES_KEPT:
            cpu_nodes.append({"name": node, "op": op})
        nodes_seen.add(node)
    return {
        "groups": [
            {
                "provider": g["provider"],
                "op": g["op"],
                "count": len(g["nodes"]),
                "ms_per_run": round(g["us"] / 1000.0 / runs, 4),
            }
            for g in sorted(groups.values(), key=lambda g: (g["provider"], -g["us"]))
        ],
        "cpu_nodes": cpu_nodes,
        "node_count": len(nodes_seen),
        "run_ms": run_ms,
        "runs": runs,
    }
