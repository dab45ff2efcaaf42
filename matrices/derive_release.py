"""Maintainer script: re-derive onnxruntime-gpu releases from their wheels and compare with the YAML.

For each release it lists the wheels through the index's Simple API, reads (by HTTP range requests, without
downloading the wheels) build_and_package_info.py, METADATA (the cuda/cudnn extras), onnxruntime/__init__.py
(preload_dlls) and the sonames the CUDA and TensorRT providers link, and reports every field that
disagrees with matrices/onnxruntime-gpu.yaml. Builds from ONNX Runtime's own feeds (confirmed: false) are
left alone: their wheels cannot be read from here.

    .venv/bin/python matrices/derive_release.py 1.31.1           # check one release (exit 1 on disagreement)
    .venv/bin/python matrices/derive_release.py --all            # check every PyPI release in the YAML
    .venv/bin/python matrices/derive_release.py --all --write    # rewrite the PyPI builds from the wheels
    .venv/bin/python matrices/derive_release.py 1.32.0 --emit    # print the derived YAML entry
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from provisioner.derive import (  # noqa: E402
    PYPI_SIMPLE,
    build_from_facts,
    list_project_files,
    read_release,
    wheels_by_version,
)
from provisioner.matrix import OrtBuild  # noqa: E402
from provisioner.matrix_check import Problem, convert_entries  # noqa: E402
from provisioner.serde import to_jsonable  # noqa: E402

COMPARED = (
    "cuda_version",
    "cudnn_version",
    "tensorrt_version",
    "python",
    "platforms",
    "extras",
    "requirements",
    "libraries_linked",
    "libraries_lazy",
    "preload_dlls",
)


def load_yaml(name: str) -> dict:
    import yaml

    return yaml.safe_load((HERE / name).read_text(encoding="utf-8"))


def records(name: str, key: str, cls: type) -> list:
    problems: list[Problem] = []
    items = convert_entries(name, key, cls, load_yaml(name), problems)
    if problems:
        raise SystemExit("\n".join(str(p) for p in problems))
    return items


def disagreements(derived: OrtBuild, recorded: OrtBuild) -> list[str]:
    """Field-by-field differences, as lines."""
    lines = []
    for name in COMPARED:
        ours, theirs = getattr(derived, name), getattr(recorded, name)
        if ours != theirs:
            lines.append(f"  {name}: wheel says {to_jsonable(ours)!r}, YAML says {to_jsonable(theirs)!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    import requests

    from provisioner.matrix import CudaMajor
    from provisioner.ziprange import HttpRangeSource

    parser = argparse.ArgumentParser(description="Re-derive onnxruntime-gpu releases from their wheels.")
    parser.add_argument(
        "versions", nargs="*", help="releases to derive (default with --all: every PyPI release in the YAML)"
    )
    parser.add_argument("--all", action="store_true", help="every PyPI release in the YAML (and new ones on the index)")
    parser.add_argument("--index-url", default=PYPI_SIMPLE)
    parser.add_argument("--emit", action="store_true", help="print the derived entries as YAML")
    parser.add_argument("--write", action="store_true", help="replace the PyPI builds in onnxruntime-gpu.yaml")
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args(argv)

    builds: list[OrtBuild] = records("onnxruntime-gpu.yaml", "builds", OrtBuild)
    majors = {m.major: m for m in records("cuda.yaml", "majors", CudaMajor)}
    pypi_builds = {b.ort_version: b for b in builds if b.index_url is None}
    session = requests.Session()
    files = list_project_files(session, args.index_url, "onnxruntime-gpu")
    on_index = wheels_by_version(files)
    wanted = list(args.versions)
    if args.all:
        wanted += [v for v in on_index if v in pypi_builds or _at_least(v, "1.14.0")]
    wanted = sorted(set(wanted), key=lambda v: tuple(int(x) for x in v.split(".") if x.isdigit()))
    if not wanted:
        parser.error("name releases or pass --all")

    def derive(version: str) -> tuple[str, OrtBuild | None, list[str]]:
        if version not in on_index:
            return version, None, [f"{version}: no wheels on {args.index_url}"]
        facts = read_release(version, on_index[version], lambda url: HttpRangeSource(url, session=session))
        fallback = pypi_builds.get(version) or _neighbour(pypi_builds, version)
        build, notes = build_from_facts(version, on_index[version], facts, majors, fallback=fallback)
        return version, build, notes

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(derive, wanted))

    status = 0
    derived: dict[str, OrtBuild] = {}
    for version, build, notes in results:
        if build is None:
            print(f"{version}: could not derive: {'; '.join(notes)}")
            status = 1
            continue
        derived[version] = build
        recorded = pypi_builds.get(version)
        if recorded is None:
            print(f"{version}: not in the YAML (new release)")
            status = 1
            continue
        lines = disagreements(build, recorded)
        if lines:
            status = 1
            print(f"{version}: DISAGREES with the YAML")
            print("\n".join(lines))
        else:
            print(
                f"{version}: agrees (CUDA {build.cuda_version}, cuDNN {build.cudnn_version}, "
                f"TensorRT {build.tensorrt_version})"
            )
    if args.emit:
        import yaml

        sys.stdout.write(yaml.safe_dump([_plain(b) for b in derived.values()], sort_keys=False, width=200))
    if args.write:
        write_builds(builds, derived)
        print(f"wrote {len(derived)} derived builds into {HERE / 'onnxruntime-gpu.yaml'}")
        from provisioner.matrix import compile_directory

        print(f"wrote {compile_directory(HERE)}")
        status = 0
    return status


def _at_least(version: str, floor: str) -> bool:
    try:
        return tuple(int(x) for x in version.split(".")) >= tuple(int(x) for x in floor.split("."))
    except ValueError:
        return False


def _neighbour(builds: dict[str, OrtBuild], version: str) -> OrtBuild | None:
    """The newest recorded PyPI build older than `version` (for what old wheels do not say)."""
    older = [v for v in builds if _at_least(version, v) and v != version]
    if not older:
        return None
    best = max(older, key=lambda v: tuple(int(x) for x in v.split(".")))
    # never carry over per-release facts other than the CUDA minor / TensorRT / requirements hints
    return replace(builds[best], ort_version=version, tensorrt_version=None)


def _plain(build: OrtBuild) -> dict:
    data = to_jsonable(build)
    defaults = {f.name: f.default for f in fields(OrtBuild)}
    return {k: v for k, v in data.items() if k not in defaults or to_jsonable(defaults[k]) != v or k in ("confirmed",)}


def write_builds(existing: list[OrtBuild], derived: dict[str, OrtBuild]) -> None:
    """Replace the PyPI builds that were derived, keep the rest (feed builds), sorted newest first."""
    import yaml

    data = load_yaml("onnxruntime-gpu.yaml")
    kept = [b for b in existing if b.index_url is not None or b.ort_version not in derived]
    merged = kept + list(derived.values())
    merged.sort(key=lambda b: (tuple(int(x) for x in b.ort_version.split(".")), b.index_url is None), reverse=True)
    header = (HERE / "onnxruntime-gpu.yaml").read_text(encoding="utf-8").split("schema_version:")[0]
    data["builds"] = [_plain(b) for b in merged]
    text = header + yaml.safe_dump(
        {"schema_version": data["schema_version"], "date": data["date"], "builds": data["builds"]},
        sort_keys=False,
        width=200,
    )
    (HERE / "onnxruntime-gpu.yaml").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
