"""ortprov verify child: prove (or disprove) a real GPU session inside the TARGET interpreter.

Run as `TARGET_PYTHON verify_child.py [options]` by provisioner/verify/runner.py; ortprov's tests also import
it. Standard library + onnxruntime + numpy only; Python 3.8+; its parts come from its own folder:
verify_package.py (what is installed, imported, preloaded), verify_static.py (the libraries the provider needs,
resolved without loading them), verify_session.py (GPU against CPU sessions, the cuFFT check),
verify_tensorrt.py (libnvinfer and the engine cache), verify_libraries.py (what the process has mapped). Writes
exactly one JSON document on the real stdout; everything else (ORT warnings, preload_dlls prints, stage markers
"ortprov-verify-stage: NAME") goes to stderr, which the parent keeps.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import (
        protocol,
        verify_libraries,
        verify_package,
        verify_plugin,
        verify_session,
        verify_static,
        verify_static_pe,
        verify_tensorrt,
    )
else:  # run as a script: its folder is sys.path[0]
    import protocol  # type: ignore[no-redef]
    import verify_libraries  # type: ignore[no-redef]
    import verify_package  # type: ignore[no-redef]
    import verify_plugin  # type: ignore[no-redef]
    import verify_session  # type: ignore[no-redef]
    import verify_static  # type: ignore[no-redef]
    import verify_static_pe  # type: ignore[no-redef]
    import verify_tensorrt  # type: ignore[no-redef]

SCHEMA = 1
HERE = os.path.dirname(os.path.abspath(__file__))
classify_source = verify_libraries.classify_source  # where a library file comes from (ortprov's tests ask here)


def parse_args(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--provider", default="cuda", help="cuda, tensorrt, or a plugin EP's name (with --plugin-module)"
    )
    parser.add_argument("--plugin-module", default=None, help="a plugin EP's module (onnxruntime_ep_nv_tensorrt_rtx)")
    parser.add_argument("--model", default=None)
    parser.add_argument("--models", required=True, help="the folder of the built-in check models")
    parser.add_argument("--static", action="store_true")
    parser.add_argument("--dim", action="append", default=[], help="NAME=N for a symbolic input dimension")
    parser.add_argument("--preload", choices=("yes", "no"), default="no")
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--budget", type=float, default=0.5, help="seconds of steady-state runs per session")
    parser.add_argument(
        "--lazy-sonames",
        action="append",
        default=[],
        metavar="MAJOR=SONAME,...",
        help="libraries a build of that CUDA major opens at run time (ortprov's matrix), for an onnxruntime "
        "too old to say itself (no _get_nvidia_dll_paths)",
    )
    args = parser.parse_args(argv)
    if args.plugin_module is None and args.provider not in verify_package.GPU_PROVIDERS:
        parser.error(f"--provider {args.provider} is a plugin EP: name its --plugin-module")
    args.engine_cache = None  # TensorRT's engine cache folder, made by run() for --provider tensorrt
    dims = {}
    for item in args.dim:
        name, _, value = item.partition("=")
        dims[name] = int(value)
    args.dims = dims
    args.lazy_by_major = {}
    for item in args.lazy_sonames:
        major, _, names = item.partition("=")
        args.lazy_by_major[major] = [name for name in names.split(",") if name]
    return args


def run(args: argparse.Namespace) -> dict:
    """The report: what is installed and imported, then the static check (--static) or the sessions."""
    result = new_result(args)
    if args.plugin_module:
        return plugin(args, result)
    package = verify_package.installed(args.provider, result)
    if package is None:
        return result
    if sys.platform == "win32":
        if args.static:  # the DLLs' files alone, as a build with no GPU sees them: onnxruntime's code does not run
            protocol.stage("static")
            verify_static_pe.static_check_windows(args.provider, package["package_dir"], result, args.lazy_by_major)
            return result
        if not verify_package.windows_driver_loadable(result):  # no session; what else stops the GPU, statically
            protocol.stage("static")
            verify_static_pe.static_check_windows(args.provider, package["package_dir"], result, args.lazy_by_major)
            return result
    protocol.stage("import")
    ort = verify_package.import_onnxruntime(package, args.provider, result)
    if ort is None:
        return result
    verify_package.preload(ort, args.preload == "yes", result)
    if args.static:
        protocol.stage("static")
        if sys.platform.startswith("linux"):
            verify_static.static_check(args.provider, package["package_dir"], ort, result, args.lazy_by_major)
        else:
            result["warnings"].append("--static reads ELF (Linux) and PE (Windows) files; not this platform's")
        return result
    try:
        import numpy as np
    except ImportError as exc:
        result["failures"].append({"kind": "numpy-missing", "message": f"import numpy: {exc}"})
        return result
    sessions(ort, np, args, result)
    result["loaded_libraries"] = verify_libraries.loaded_libraries()
    return result


def plugin(args: argparse.Namespace, result: dict[str, Any]) -> dict:
    """A plugin EP (verify_plugin.py) in the CPU core it registers into: what is installed, the core's import, the
    EP's closure and session."""
    package = verify_package.installed("cuda", result)
    if package is None:
        return result
    gpu = verify_package.gpu_dist_names(package)
    if gpu:
        result["failures"].append(
            {
                "kind": "plugin-beside-gpu-core",
                "message": f"{', '.join(gpu)} is installed beside the {args.plugin_module} plugin EP, which registers "
                "into the CPU onnxruntime core: both install the onnxruntime module, and the EP's guide says to "
                "uninstall onnxruntime-gpu",
            }
        )
    protocol.stage("import")
    try:
        import onnxruntime as ort
    except Exception as exc:  # noqa: BLE001
        result["failures"].append(
            {"kind": "import-failed", "message": f"import onnxruntime: {type(exc).__name__}: {exc}"}
        )
        return result
    result["ort"]["version"] = getattr(ort, "__version__", None)
    result["ort"]["file"] = getattr(ort, "__file__", None)
    verify_plugin.plugin_check(ort, args, result)
    result["loaded_libraries"] = verify_libraries.loaded_libraries()
    return result


def new_result(args: argparse.Namespace) -> dict[str, Any]:
    """The report before anything is known."""
    return {
        "schema": SCHEMA,
        "mode": "static" if args.static else "session",
        "provider": args.provider,
        "python": sys.executable,
        "python_version": "{}.{}.{}".format(*sys.version_info[:3]),
        "platform": sys.platform,
        "failures": [],
        "warnings": [],
        "checks": [],
        "loaded_libraries": [],
        "ort": {},
        "preload": {},
    }


def sessions(ort: Any, np: Any, args: argparse.Namespace, result: dict[str, Any]) -> None:
    """The checks that create sessions: the user's model, or the built-in check (then cuFFT's, for CUDA); for
    TensorRT the engine cache's, in a folder of its own that is removed after."""
    if args.provider == "tensorrt":
        import tempfile

        args.engine_cache = tempfile.mkdtemp(prefix="ortprov-trt-engines-")
    try:
        if args.model:
            verify_session.check_model(ort, np, args, args.model, "model", False, result)
        else:
            builtin = os.path.join(args.models, "check.onnx")
            verify_session.check_model(ort, np, args, builtin, "builtin:check", True, result)
            if result["checks"][-1]["gpu_first"] and args.provider == "cuda":
                verify_session.fft_check(ort, np, args, result)
        if args.provider == "tensorrt" and result["checks"] and result["checks"][0]["gpu_first"]:
            verify_tensorrt.tensorrt_check(ort, np, args, result)
    finally:
        if args.engine_cache:
            import shutil

            shutil.rmtree(args.engine_cache, ignore_errors=True)


def main(argv: list | None = None) -> int:
    # a plain program's sys.path: without this folder (its siblings are imported already)
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != HERE]
    # keep the real stdout for the JSON document; anything printed by libraries goes to stderr
    real_stdout = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    args = parse_args(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    result = run(args)
    result["duration_s"] = round(time.perf_counter() - started, 4)
    protocol.stage("done")
    protocol.send(result, real_stdout)
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
