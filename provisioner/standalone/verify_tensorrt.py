"""Shared by the verify child: after a TensorRT session, which libnvinfer the process loaded and whether a second
session with the same engine cache reuses the engine the first one built.

Standard library + onnxruntime + numpy; Python 3.8+.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import protocol, verify_libraries, verify_session
else:  # run as a script: its folder is sys.path[0]
    import protocol  # type: ignore[no-redef]
    import verify_libraries  # type: ignore[no-redef]
    import verify_session  # type: ignore[no-redef]


def cache_files(folder: str) -> dict:
    """name -> (size, mtime) of the files an engine cache folder holds."""
    found = {}
    for root, _dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            found[os.path.relpath(path, folder)] = (info.st_size, info.st_mtime_ns)
    return found


def tensorrt_check(ort: Any, np: Any, args: argparse.Namespace, result: dict[str, Any]) -> None:
    """After a TensorRT session: which libnvinfer the process loaded, and whether a second session with the
    same engine cache reuses the engine the first one built (no new or rewritten engine file)."""
    loaded = [lib for lib in verify_libraries.loaded_libraries() if lib["library"] == "nvinfer"]
    libnvinfer = next((lib for lib in loaded if lib["filename"].lower().startswith(("libnvinfer.so", "nvinfer"))), None)
    record: dict[str, Any] = {
        "libnvinfer": libnvinfer["path"] if libnvinfer else None,
        "libnvinfer_source": libnvinfer["source"] if libnvinfer else None,
        "engine_cache": args.engine_cache,
        "first_create_s": None,
        "second_create_s": None,
        "engine_files": 0,
        "written_by_second": [],
        "cache_hit": False,
    }
    result["tensorrt"] = record
    check = result["checks"][0] if result["checks"] else None
    if check is not None and check.get("gpu"):
        record["first_create_s"] = check["gpu"]["create_s"]
    if libnvinfer is None:
        result["failures"].append(
            {"kind": "tensorrt-not-loaded", "message": "the session ran, but no libnvinfer is mapped into the process"}
        )
        return
    before = cache_files(args.engine_cache)
    record["engine_files"] = len(before)
    if not before:
        result["failures"].append(
            {
                "kind": "engine-cache-miss",
                "message": f"the first TensorRT session wrote no engine into {args.engine_cache} "
                "(trt_engine_cache_enable was set)",
            }
        )
        return
    protocol.stage("session:tensorrt-cache")
    model = os.path.join(args.models, "check.onnx") if not args.model else args.model
    try:
        second = verify_session.timed_session(
            ort,
            model,
            verify_session.gpu_provider_list("tensorrt", args.device_id, False, args.engine_cache),
            lambda s: verify_session.make_inputs(s, args.dims, np, result, "tensorrt-cache"),
            1,
            0.1,
        )
    except Exception as exc:  # noqa: BLE001
        result["failures"].append(
            {"kind": "engine-cache-miss", "message": f"the second TensorRT session failed: {type(exc).__name__}: {exc}"}
        )
        return
    record["second_create_s"] = second["timing"]["create_s"]
    after = cache_files(args.engine_cache)
    record["written_by_second"] = sorted(name for name, facts in after.items() if before.get(name) != facts)
    first = list(second["session"].get_providers())[:1]
    record["cache_hit"] = not record["written_by_second"] and first == ["TensorrtExecutionProvider"]
    if not record["cache_hit"]:
        result["failures"].append(
            {
                "kind": "engine-cache-miss",
                "message": "a second session with the same engine cache built its engine again (wrote "
                f"{', '.join(record['written_by_second']) or 'nothing, but ran on ' + str(first)})",
            }
        )
