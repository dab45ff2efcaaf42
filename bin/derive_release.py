"""Maintainer script: re-derive onnxruntime-gpu releases from their wheels and compare with the YAML.

For each release it lists the wheels through the index's Simple API, reads (by HTTP range requests, without
downloading the wheels) build_and_package_info.py, METADATA (the cuda/cudnn extras), onnxruntime/__init__.py
(preload_dlls) and the sonames the CUDA and TensorRT providers link, and reports every field that
disagrees with matrices/onnxruntime-gpu.yaml. Builds from ONNX Runtime's own feeds (confirmed: false) are
left alone: their wheels cannot be read from here. A maintainer script: not shipped in the wheel.

    .venv/bin/python bin/derive_release.py 1.31.1           # check one release (exit 1 on disagreement)
    .venv/bin/python bin/derive_release.py --all            # check every PyPI release in the YAML
    .venv/bin/python bin/derive_release.py --all --write    # rewrite the PyPI builds from the wheels
    .venv/bin/python bin/derive_release.py 1.32.0 --emit    # print the derived YAML entry
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "matrices"
sys.path.insert(0, str(ROOT))

from provisioner.matrix.check import Problem, convert_entries  # noqa: E402
from provisioner.matrix.derive import (  # noqa: E402
    PYPI_SIMPLE,
    build_from_facts,
    fallback_build,
    list_project_files,
    read_release,
    wheels_by_version,
)
from provisioner.matrix.model import CudaMajor, OrtBuild  # noqa: E402
from provisioner.matrix.refresh import build_order, plain_record  # noqa: E402
from provisioner.serde import to_jsonable  # noqa: E402
from provisioner.versions import vtuple  # noqa: E402

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

    return yaml.safe_load((DATA / name).read_text(encoding="utf-8"))


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
        oldest = min(map(vtuple, pypi_builds), default=())  # releases older than the YAML's first are not tracked
        wanted += [v for v in on_index if v in pypi_builds or (_is_release(v) and vtuple(v) >= oldest)]
    wanted = sorted(set(wanted), key=vtuple)
    if not wanted:
        parser.error("name releases or pass --all")

    def derive(version: str) -> tuple[str, OrtBuild | None, list[str]]:
        if version not in on_index:
            return version, None, [f"{version}: no wheels on {args.index_url}"]
        facts = read_release(version, on_index[version], lambda url: HttpRangeSource(url, session=session))
        fallback = pypi_builds.get(version) or fallback_build(builds, version)
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

        sys.stdout.write(yaml.safe_dump([plain_record(b) for b in derived.values()], sort_keys=False, width=200))
    if args.write:
        write_builds(builds, derived)
        print(f"wrote {len(derived)} derived builds into {DATA / 'onnxruntime-gpu.yaml'}")
        from provisioner.matrix.load import compile_directory

        print(f"wrote {compile_directory(DATA)}")
        status = 0
    return status


def _is_release(version: str) -> bool:
    """1.32.0, not 1.32.0rc1 or 1.32.0.dev1 (pre-releases are not planned for)."""
    return all(part.isdigit() for part in version.split("."))


def write_builds(existing: list[OrtBuild], derived: dict[str, OrtBuild]) -> None:
    """Replace the PyPI builds that were derived, keep the rest (feed builds), sorted newest first."""
    import yaml

    data = load_yaml("onnxruntime-gpu.yaml")
    kept = [b for b in existing if b.index_url is not None or b.ort_version not in derived]
    merged = kept + list(derived.values())
    merged.sort(key=build_order, reverse=True)
    header = (DATA / "onnxruntime-gpu.yaml").read_text(encoding="utf-8").split("schema_version:")[0]
    data["builds"] = [plain_record(b) for b in merged]
    text = header + yaml.safe_dump(
        {"schema_version": data["schema_version"], "date": data["date"], "builds": data["builds"]},
        sort_keys=False,
        width=200,
    )
    (DATA / "onnxruntime-gpu.yaml").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
