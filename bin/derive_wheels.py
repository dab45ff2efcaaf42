"""Maintainer script: regenerate matrices/nvidia-wheels.yaml from PyPI.

Which CUDA minor a library wheel belongs to comes from NVIDIA's `cuda-toolkit` meta-package: each of its
releases (12.4.1, 13.0.2 ...) pins the exact component wheels (nvidia-cublas-cu12==12.4.5.8.*). Versions no
toolkit release pins are kept only where the version itself names the minor (cudart, nvrtc, nvJitLink, and
cuBLAS 11/12, whose versions follow the toolkit's); cuDNN rows map to the CUDA major of their package.
Each row's `platforms` (and `glibc_min`) come from the file names of that version's wheels on PyPI
(manylinux*_x86_64, manylinux*_aarch64, win_amd64); a version with no wheel for a known platform (only a
source stub, or only win_arm64) is not listed: nothing could install it.

    .venv/bin/python bin/derive_wheels.py            # print the YAML
    .venv/bin/python bin/derive_wheels.py --write    # write matrices/nvidia-wheels.yaml
    .venv/bin/python bin/derive_wheels.py --files    # write matrices/wheel-files.yaml (see below)

`--files` reads, for every row of nvidia-wheels.yaml and each of its platforms, the RECORD of one wheel by HTTP
range requests (the end of the zip, its central directory, the RECORD member: a few KB of each wheel), and writes
the paths each version installs (.dist-info left out), versions with the same paths grouped: what the planner
compares with the files of installed distributions, so that no plan overwrites another distribution's files.

A maintainer script: not shipped in the wheel.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "matrices"
sys.path.insert(0, str(ROOT))

from urllib.parse import urljoin  # noqa: E402

from provisioner.matrix.check import Problem, convert_entries  # noqa: E402
from provisioner.matrix.model import CudaMajor, CudaRelease  # noqa: E402
from provisioner.platforms import PLATFORM_ORDER, platform_of_tag, wheel_file_platforms  # noqa: E402
from provisioner.versions import vtuple  # noqa: E402
from provisioner.ziprange import HttpRangeSource, central_directory, read_member  # noqa: E402

PYPI_JSON = "https://pypi.org/pypi/{name}/json"
LIBRARIES = ("cudart", "cublas", "cufft", "curand", "nvrtc", "cudnn", "nvjitlink")
PREFIX_NAMES_MINOR = ("cudart", "nvrtc", "nvjitlink")  # component version == toolkit version


def platforms_of(filenames: list[str]) -> tuple[list[str], str | None]:
    """Platforms with a wheel among one version's files, and the highest of their Linux glibc floors.

    A platform's floor is the lowest among its wheels (pip takes any that fits); a py3-none-any wheel
    counts for every platform. Source distributions are not counted: NVIDIA's are stubs that fail.
    """
    floors: dict[str, str | None] = {}
    for name in filenames:
        if not name.endswith(".whl"):
            continue
        for tag in name[: -len(".whl")].split("-")[-1].split("."):
            if tag == "any":
                for platform in PLATFORM_ORDER:
                    floors.setdefault(platform, None)
                continue
            found = platform_of_tag(tag)
            if found is None:
                continue
            platform, floor = found
            known = floors.get(platform)
            if platform not in floors or (known is not None and (floor is None or _key(floor) < _key(known))):
                floors[platform] = floor
    platforms = [p for p in PLATFORM_ORDER if p in floors]
    linux_floors = [f for p, f in floors.items() if p.startswith("linux-") and f is not None]
    if any(p.startswith("linux-") and floors[p] is None for p in floors):
        linux_floors = []  # an any-platform wheel installs everywhere
    return platforms, max(linux_floors, key=_key) if linux_floors else None


def _key(version: str) -> tuple[tuple[int, ...], str]:
    """Sort key of a version: its numeric release, then the text (9.1.0.70 before 9.1.0.70.post1)."""
    return vtuple(version), version


def _stable(version: str) -> bool:
    return bool(re.fullmatch(r"\d+(\.\d+)+(\.post\d+)?", version)) and not version.startswith("0.")


def main(argv: list[str] | None = None) -> int:
    import requests
    import yaml

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write matrices/nvidia-wheels.yaml")
    parser.add_argument("--files", action="store_true", help="write matrices/wheel-files.yaml")
    args = parser.parse_args(argv)
    if args.files:
        return write_files()
    cuda = yaml.safe_load((DATA / "cuda.yaml").read_text(encoding="utf-8"))
    problems: list[Problem] = []
    releases = {r.version for r in convert_entries("cuda.yaml", "releases", CudaRelease, cuda, problems)}
    majors = {m.major: m for m in convert_entries("cuda.yaml", "majors", CudaMajor, cuda, problems)}
    if problems:
        print("\n".join(str(p) for p in problems), file=sys.stderr)
        return 1
    session = requests.Session()

    toolkit_url = PYPI_JSON.format(name="cuda-toolkit")
    toolkit = session.get(toolkit_url, timeout=30).json()
    pinned: dict[tuple[str, str], str] = {}  # (package, version) -> CUDA minor
    for tk_version, files in sorted(toolkit["releases"].items(), key=lambda kv: _key(kv[0])):
        wheels = [f for f in files if f["filename"].endswith(".whl")]
        if not wheels or not _stable(tk_version):
            continue
        minor = ".".join(tk_version.split(".")[:2])
        toolkit_wheel = HttpRangeSource(urljoin(toolkit_url, wheels[0]["url"]), session=session)
        entries = central_directory(toolkit_wheel)
        metadata = next(n for n in entries if n.endswith(".dist-info/METADATA"))
        for line in read_member(toolkit_wheel, entries[metadata]).decode().splitlines():
            found = re.match(r"Requires-Dist:\s*([A-Za-z0-9_.-]+)\s*==\s*([0-9][0-9.]*?)(\.\*)?\s*(;|$)", line)
            if found:
                pinned.setdefault((found.group(1).lower(), found.group(2)), minor)

    rows = []
    for major_number, major in sorted(majors.items()):
        for library in LIBRARIES:
            package = (major.pip_packages or {}).get(library)
            if not package:
                continue
            data = session.get(PYPI_JSON.format(name=package), timeout=30).json()
            for version, files in data["releases"].items():
                if not files or all(f.get("yanked") for f in files) or not _stable(version):
                    continue
                if library == "cudnn":
                    cuda_version = str(major_number)
                    source = f"https://pypi.org/project/{package}/{version}/"
                elif (package, version) in pinned:
                    cuda_version = pinned[(package, version)]
                    source = f"https://pypi.org/project/cuda-toolkit/ (pins {package}=={version})"
                elif library in PREFIX_NAMES_MINOR or (library == "cublas" and major_number < 13):
                    cuda_version = ".".join(version.split(".")[:2])
                    source = f"https://pypi.org/project/{package}/{version}/ (version names the CUDA minor)"
                else:
                    continue
                if library != "cudnn" and cuda_version not in releases:
                    continue
                if not cuda_version.startswith(str(major_number)):
                    continue
                platforms, glibc_min = platforms_of([f["filename"] for f in files if not f.get("yanked")])
                if not platforms:
                    continue
                row = {
                    "package": package,
                    "version": version,
                    "library": library,
                    "cuda_version": cuda_version,
                    "sources": [source, f"https://pypi.org/project/{package}/{version}/#files (platforms)"],
                    "platforms": platforms,
                }
                if glibc_min:
                    row["glibc_min"] = glibc_min
                rows.append(row)
    rows.sort(key=lambda r: (r["package"], _key(r["version"])))
    document = {
        "schema_version": 1,
        "date": datetime.date.today().isoformat(),
        "wheels": rows,
    }
    text = (
        "# NVIDIA library wheels ortprov may pin, with the CUDA release each belongs to.\n"
        "# Generated by matrices/derive_wheels.py from PyPI (cuda-toolkit meta-package pins);\n"
        "# do not edit by hand.\n" + yaml.safe_dump(document, sort_keys=False, width=200)
    )
    if args.write:
        (DATA / "nvidia-wheels.yaml").write_text(text, encoding="utf-8")
        print(f"wrote {len(rows)} wheels to {DATA / 'nvidia-wheels.yaml'}")
        from provisioner.matrix.load import compile_directory

        try:
            print(f"wrote {compile_directory(DATA)}")
        except Exception as exc:  # the other files may be mid-edit: say so, the YAML is written
            print(f"did not compile the matrix: {exc}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def record_paths(source: HttpRangeSource) -> list[str]:
    """The paths a wheel's RECORD lists that another distribution could overwrite: its .dist-info folder, files
    recorded as empty (the shared namespace `nvidia/__init__.py`) and byte-code left out, as the package probe
    (standalone/packages_probe.py `owned_files`) leaves them out of what is installed."""
    import csv

    entries = central_directory(source)
    record = next(name for name in entries if name.endswith(".dist-info/RECORD"))
    rows = csv.reader(read_member(source, entries[record]).decode("utf-8", "replace").splitlines())
    return sorted(
        row[0]
        for row in rows
        if row
        and row[0]
        and ".dist-info/" not in row[0]
        and (len(row) < 3 or row[2].strip() != "0")
        and not row[0].endswith((".pyc", ".pyo"))
        and "__pycache__/" not in row[0]
    )


def write_files() -> int:
    """matrices/wheel-files.yaml from the RECORD of one wheel per (package, version, platform) of
    nvidia-wheels.yaml."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    import requests
    import yaml

    started = time.monotonic()
    rows = yaml.safe_load((DATA / "nvidia-wheels.yaml").read_text(encoding="utf-8"))["wheels"]
    session = requests.Session()
    packages = sorted({row["package"] for row in rows})
    listing = {name: session.get(PYPI_JSON.format(name=name), timeout=30).json()["releases"] for name in packages}
    jobs = []
    for row in rows:
        files = [f for f in listing[row["package"]].get(row["version"], []) if f["filename"].endswith(".whl")]
        for platform in row.get("platforms") or PLATFORM_ORDER:
            wheel = next((f for f in files if platform in wheel_file_platforms(f["filename"])), None)
            if wheel is not None:
                jobs.append((row["package"], row["version"], platform, wheel))
    sources: list[HttpRangeSource] = []

    def read(job: tuple) -> tuple[str, str, str, str, list[str]]:
        package, version, platform, wheel = job
        source = HttpRangeSource(urljoin(PYPI_JSON.format(name=package), wheel["url"]), session=session, timeout=60)
        sources.append(source)
        return package, version, platform, wheel["filename"], record_paths(source)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(read, jobs))
    groups: dict[tuple[str, str, tuple[str, ...]], list[tuple[str, str]]] = {}
    for package, version, platform, filename, paths in results:
        groups.setdefault((package, platform, tuple(paths)), []).append((version, filename))
    entries = []
    for (package, platform, paths), versions in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        ordered = sorted(versions, key=lambda v: _key(v[0]))
        entries.append(
            {
                "package": package,
                "platform": platform,
                "versions": [v for v, _ in ordered],
                "files": list(paths),
                "sources": [f"RECORD of {ordered[-1][1]} (and of each version listed)"],
            }
        )
    document = {"schema_version": 1, "date": datetime.date.today().isoformat(), "files": entries}
    text = (
        "# The files each NVIDIA library wheel of nvidia-wheels.yaml installs, per platform (its RECORD, .dist-info\n"
        "# left out), versions with the same files grouped. Generated by bin/derive_wheels.py --files; do not edit.\n"
        + yaml.safe_dump(document, sort_keys=False, width=200)
    )
    (DATA / "wheel-files.yaml").write_text(text, encoding="utf-8")
    downloaded = sum(s.bytes_read for s in sources)
    print(
        f"wrote {len(entries)} groups ({len(results)} wheels read, {downloaded / 1e6:.1f} MB in "
        f"{time.monotonic() - started:.0f} s) to {DATA / 'wheel-files.yaml'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
