"""Maintainer script: derive matrices/tensorrt.yaml from PyPI (the TensorRT packages and onnxruntime-gpu's wheels).

Two tables, each fact from an artifact:
- `packages`: every version of the TensorRT library packages (tensorrt-cu11-libs, -cu12-libs, -cu13-libs) and
  of the `tensorrt` package: a real wheel on PyPI (its platforms and Pythons from the file names, where its
  libraries live from the central directory) or a source stub (its pyproject.toml names NVIDIA's wheel-stub build
  backend and the index it downloads the real wheel from; its PKG-INFO is the real wheel's METADATA, so its
  Requires-Dist are the real wheel's). A stub whose requirements include a package PyPI marks DEPRECATED (an
  empty placeholder that refuses to build) cannot install.
- `releases`: per TensorRT major and CUDA major, the exact pins a plan installs: the newest installable version
  of the major (ABI is kept within a major: a build made against 10.9 runs on 10.16); `index_url` says where
  the real wheels are when PyPI has only the stub. Majors the builds need that have no installable package get
  a record without packages and a note (the planner then exits 3 unless TensorRT comes from the system).

Whether a release's wheel has a TensorRT provider, and the TensorRT libraries it links or opens, are facts of the
wheel: bin/derive_release.py records them in onnxruntime-gpu.yaml (a platform's `tensorrt` provider library),
where this script reads the TensorRT major each release links, to cross-check the builds' tensorrt_version.

    .venv/bin/python bin/derive_tensorrt.py            # print the YAML
    .venv/bin/python bin/derive_tensorrt.py --write    # write matrices/tensorrt.yaml (and compiled.json)

A maintainer script: not shipped in the wheel.
"""

from __future__ import annotations

import argparse
import datetime
import io
import re
import sys
import tarfile
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "matrices"
sys.path.insert(0, str(ROOT))

from provisioner.matrix.check import Problem, convert_entries  # noqa: E402
from provisioner.matrix.model import OrtBuild  # noqa: E402
from provisioner.matrix.query import linked_tensorrt_major, tensorrt_views  # noqa: E402
from provisioner.versions import vtuple  # noqa: E402
from provisioner.ziprange import HttpRangeSource, central_directory, read_member  # noqa: E402

PYPI_JSON = "https://pypi.org/pypi/{name}/json"
LIB_PACKAGES = {11: "tensorrt-cu11-libs", 12: "tensorrt-cu12-libs", 13: "tensorrt-cu13-libs"}
TENSORRT = "tensorrt"  # TensorRT 8.x: real wheels with the libraries in site-packages/tensorrt/
# where the real -libs wheels put their libraries (package tensorrt_libs: *.so*, *.dll*); PyPI has only stubs
LIBS_WHEEL_SOURCE = (
    "https://github.com/NVIDIA/TensorRT/blob/main/python/packaging/libs_wheel/setup.py (package tensorrt_libs)"
)
STUB_BACKENDS = ("wheel_stub.buildapi", "nvidia_stub.buildapi")  # NVIDIA's wheel-stub, and its older name


def _json(session: Any, name: str) -> dict[str, Any]:
    response = session.get(PYPI_JSON.format(name=name), timeout=30)
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    return data


def _deprecated(session: Any, name: str, memo: dict[str, str | None]) -> str | None:
    """PyPI's summary of `name` when it marks the project DEPRECATED (an empty placeholder), else None."""
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key not in memo:
        try:
            summary = _json(session, key)["info"].get("summary") or ""
        except Exception:  # noqa: BLE001 - a requirement PyPI does not know cannot install either
            summary = "DEPRECATED: not on PyPI"
        memo[key] = summary if "deprecated" in summary.lower() else None
    return memo[key]


def _stub_facts(data: bytes) -> tuple[str | None, str | None, list[str]]:
    """(build backend, [tool.wheel_stub] index_url, Requires-Dist) of a stub sdist."""
    import tomllib

    backend = index = None
    requires: list[str] = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            parts = member.name.split("/")
            if len(parts) > 2 or not member.isfile():
                continue  # the sdist's own top-level files (older stubs have no folder)
            handle = archive.extractfile(member)
            text = handle.read().decode("utf-8", "replace") if handle else ""
            if parts[-1] == "pyproject.toml":
                document = tomllib.loads(text)
                backend = document.get("build-system", {}).get("build-backend")
                index = document.get("tool", {}).get("wheel_stub", {}).get("index_url")
            elif parts[-1] == "PKG-INFO":
                requires = [
                    line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")
                ]
    return backend, index, requires


def _wheel_platforms(files: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(platforms, Pythons) from wheel file names (manylinux x86_64/aarch64, win_amd64; cpXY)."""
    platforms: set[str] = set()
    pythons: set[str] = set()
    for item in files:
        name = item["filename"]
        if not name.endswith(".whl"):
            continue
        _, _, python, _, plat = name[:-4].split("-")[:5]
        if plat.endswith("x86_64") and "linux" in plat:
            platforms.add("linux-x86_64")
        elif plat.endswith("aarch64"):
            platforms.add("linux-aarch64")
        elif plat == "win_amd64":
            platforms.add("windows-amd64")
        for tag in python.split("."):
            if re.fullmatch(r"cp3\d+", tag):
                pythons.add(f"3.{tag[3:]}")
    order = ("linux-x86_64", "linux-aarch64", "windows-amd64")
    return [p for p in order if p in platforms], sorted(pythons, key=vtuple)


def derive_packages(session: Any) -> list[dict[str, Any]]:
    """One row per version of each TensorRT library package (major >= 8)."""
    rows: list[dict[str, Any]] = []
    memo: dict[str, str | None] = {}
    for name in [*LIB_PACKAGES.values(), TENSORRT]:
        data = _json(session, name)
        base = PYPI_JSON.format(name=name)
        for version, files in sorted(data["releases"].items(), key=lambda item: vtuple(item[0])):
            files = [f for f in files if not f.get("yanked")]
            if not files or vtuple(version)[0] < 8 or re.search(r"[a-z]", version.replace("post", "")):
                continue  # pre-releases (10.0.0b6, 9.x dev builds) are never planned
            if name == TENSORRT and vtuple(version)[0] >= 10:
                continue  # from 10 on `tensorrt` is a meta-package over the -libs packages: never pinned
            row: dict[str, Any] = {"package": name, "version": version}
            wheels = [f for f in files if f["filename"].endswith(".whl")]
            if wheels:
                platforms, pythons = _wheel_platforms(wheels)
                url = urljoin(base, wheels[0]["url"])
                source = HttpRangeSource(url, session)
                members = central_directory(source)
                folders = sorted({n.rsplit("/", 1)[0] for n in members if "/libnvinfer.so." in n})
                metadata = next(n for n in members if n.endswith(".dist-info/METADATA"))
                text = read_member(source, members[metadata]).decode("utf-8", "replace")
                requires = [ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("Requires-Dist:")]
                row.update(
                    kind="wheel",
                    platforms=platforms,
                    python=pythons,
                    library_dir=folders[0] if folders else None,
                    requires=requires,
                    sources=[f"https://pypi.org/project/{name}/{version}/#files", f"{wheels[0]['filename']}: METADATA"],
                )
            else:
                sdist = next(f for f in files if f["filename"].endswith(".tar.gz"))
                blob = session.get(urljoin(base, sdist["url"]), timeout=60).content
                backend, index, requires = _stub_facts(blob)
                row.update(
                    kind="stub" if backend in STUB_BACKENDS else "sdist",
                    build_backend=backend,
                    index_url=index,
                    requires=requires,
                    sources=[
                        f"https://pypi.org/project/{name}/{version}/#files",
                        f"{sdist['filename']}: pyproject.toml, PKG-INFO",
                    ],
                )
            broken = [
                (r, why)
                for r in row["requires"]
                if (why := _deprecated(session, re.split(r"[\s\[<>=!~;]", r)[0], memo))
            ]
            row["installable"] = row["kind"] != "sdist" and not broken
            if broken:
                row["notes"] = "; ".join(f"requires {r}, which PyPI marks {why!r}" for r, why in broken)
            elif row["kind"] == "sdist":
                row["notes"] = "a source distribution without NVIDIA's wheel-stub backend"
            rows.append(row)
    return rows


def derive_releases(packages: list[dict[str, Any]], builds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (TensorRT version a build needs, CUDA major): the newest installable package of that major at or above
    it; a record without packages (and why) where none exists."""
    needed = sorted(
        {(b["tensorrt_version"], int(b["cuda_version"].split(".")[0])) for b in builds if b.get("tensorrt_version")},
        key=lambda item: (item[1], vtuple(item[0])),
    )
    releases: dict[tuple[str, int], dict[str, Any]] = {}
    for wanted, cuda in needed:
        trt_major = vtuple(wanted)[0]
        candidates = [
            p
            for p in packages
            if p["installable"]
            and vtuple(p["version"])[0] == trt_major
            and vtuple(p["version"]) >= vtuple(wanted)
            and _cuda_major_of(p) == cuda
        ]
        if candidates:
            best = max(candidates, key=lambda p: vtuple(p["version"]))
            key = (best["version"], cuda)
            record = releases.setdefault(
                key,
                {
                    "version": best["version"],
                    "cuda_major": cuda,
                    "packages": [f"{best['package']}=={best['version']}"],
                    "serves": [],
                    "sources": best["sources"],
                },
            )
            if best["kind"] == "stub":
                record["index_url"] = best["index_url"]
                record["notes"] = (
                    f"PyPI holds only a source stub of {best['package']} {best['version']} (build backend "
                    f"{best['build_backend']}); the real wheel is on {best['index_url']}"
                )
            else:
                record["python"] = best["python"]
                record["platforms"] = best["platforms"]
                record["library_dir"] = best["library_dir"]
            if best.get("library_dir") is None and best["kind"] == "stub":
                record["library_dir"] = "tensorrt_libs"
                if LIBS_WHEEL_SOURCE not in record["sources"]:
                    record["sources"] = [*record["sources"], LIBS_WHEEL_SOURCE]
            record["serves"].append(wanted)
            continue
        skipped = [p for p in packages if vtuple(p["version"])[0] == trt_major and _cuda_major_of(p) == cuda]
        why = "; ".join(f"{p['package']} {p['version']}: {p['notes']}" for p in skipped if p.get("notes"))
        releases[(wanted, cuda)] = {
            "version": wanted,
            "cuda_major": cuda,
            "packages": [],
            "serves": [wanted],
            "sources": [
                f"https://pypi.org/project/{LIB_PACKAGES.get(cuda, TENSORRT)}/#history",
                "https://pypi.org/project/tensorrt/#history",
            ],
            "notes": (
                f"no installable pip package of TensorRT {trt_major} (>= {wanted}) for CUDA {cuda} on PyPI or "
                f"behind a stub" + (f" ({why})" if why else "") + ": install TensorRT from NVIDIA's archives or a "
                "container and plan with --tensorrt-libraries"
            ),
        }
    out = []
    for record in sorted(releases.values(), key=lambda r: (r["cuda_major"], vtuple(r["version"]))):
        record["notes"] = (
            record.get("notes", "") + f"; serves builds made against TensorRT {', '.join(record.pop('serves'))}"
        ).lstrip("; ")
        out.append(record)
    return out


def records_of(builds: list[dict[str, Any]]) -> list[OrtBuild]:
    """onnxruntime-gpu.yaml's build entries as the matrix loads them (problems stop the script)."""
    problems: list[Problem] = []
    converted = convert_entries("onnxruntime-gpu.yaml", "builds", OrtBuild, {"builds": builds}, problems)
    if problems:
        raise SystemExit("\n".join(str(p) for p in problems))
    return converted


def _cuda_major_of(package: dict[str, Any]) -> int | None:
    found = re.search(r"-cu(\d+)-libs$", package["package"])
    if found:
        return int(found.group(1))
    for requirement in package.get("requires", ()):  # tensorrt 8.x: nvidia-cuda-runtime-cu11 / -cu12
        hit = re.match(r"nvidia-cuda-runtime-cu(\d+)", requirement)
        if hit:
            return int(hit.group(1))
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="write matrices/tensorrt.yaml and compiled.json")
    args = parser.parse_args()
    import requests
    import yaml

    session = requests.Session()
    builds = yaml.safe_load((DATA / "onnxruntime-gpu.yaml").read_text(encoding="utf-8"))["builds"]
    print("packages ...", file=sys.stderr)
    packages = derive_packages(session)
    views = tensorrt_views(records_of(builds))  # the wheels' facts, as the planner and doctor read them
    for build in builds:  # the major a build links must agree with its record
        linked = linked_tensorrt_major(views, build["ort_version"])
        if linked is not None and build.get("tensorrt_version") and vtuple(build["tensorrt_version"])[0] != linked:
            print(
                f"warning: {build['ort_version']} records TensorRT {build['tensorrt_version']}, links {linked}",
                file=sys.stderr,
            )
    releases = derive_releases(packages, builds)
    header = (
        "# TensorRT for the onnxruntime-gpu TensorRT providers: written by bin/derive_tensorrt.py "
        f"on {datetime.date.today().isoformat()} from PyPI; schema: docs/matrix.md.\n"
    )
    document = {
        "schema_version": 1,
        "date": datetime.date.today().isoformat(),
        "releases": releases,
        "packages": packages,
    }

    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    text = header + yaml.dump(document, Dumper=Dumper, sort_keys=False, width=200)
    if not args.write:
        print(text)
        return 0
    (DATA / "tensorrt.yaml").write_text(text, encoding="utf-8")
    from provisioner.matrix.load import compile_directory

    compile_directory(DATA)
    print(f"wrote {DATA / 'tensorrt.yaml'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
