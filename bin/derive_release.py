"""Maintainer script: re-derive onnxruntime-gpu releases from their wheels and compare with the YAML.

For each release it lists the wheels through the index's Simple API, reads (by HTTP range requests, without
downloading the wheels) build_and_package_info.py, METADATA (the cuda/cudnn extras), onnxruntime/__init__.py
(preload_dlls) and the sonames the CUDA and TensorRT providers link, and reports every field that
disagrees with matrices/onnxruntime-gpu.yaml. Builds from ONNX Runtime's own feeds (confirmed: false) are
left alone: their wheels cannot be read from here. A maintainer script: not shipped in the wheel.

Per platform (Linux x86_64, Linux aarch64, Windows amd64) it also reads what the wheels hold: the central
directory of every wheel (which provider libraries ship, their sizes and CRC-32s), and the provider libraries of
one wheel, stream-decompressed once and never stored (standalone/fatbin.py: the GPU architectures with kernels
and with PTX in `.nv_fatbin` / `.nv_fatb`, the DT_NEEDED / PE imports); the platform's other wheels count as read
when their libraries have the same CRC-32 and size. Results are cached per wheel sha256 under --cache, so a re-run
downloads nothing. `--cross-check` runs NVIDIA's `cuobjdump --list-elf --list-ptx` (the nvidia-cuda-cuobjdump
wheel) on one Linux wheel per CUDA major and kernel set and records where it agrees.

    .venv/bin/python bin/derive_release.py 1.31.1           # check one release (exit 1 on disagreement)
    .venv/bin/python bin/derive_release.py --all            # check every PyPI release in the YAML
    .venv/bin/python bin/derive_release.py --all --write    # rewrite the PyPI builds from the wheels
    .venv/bin/python bin/derive_release.py --all --write --cross-check   # ... with cuobjdump's word
    .venv/bin/python bin/derive_release.py 1.32.0 --emit    # print the derived YAML entry
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "matrices"
CACHE = Path(tempfile.gettempdir()) / "ortprov-wheel-facts"
sys.path.insert(0, str(ROOT))

from provisioner.matrix.check import Problem, convert_entries  # noqa: E402
from provisioner.matrix.derive import (  # noqa: E402
    PYPI_SIMPLE,
    PlatformContents,
    build_from_facts,
    fallback_build,
    list_project_files,
    read_contents,
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
    parser.add_argument("--jobs", type=int, default=4, help="releases read at once (parallel HTTP streams)")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"wheel facts per sha256 (default {CACHE})")
    parser.add_argument("--no-contents", action="store_true", help="skip the provider libraries (GPU code, imports)")
    parser.add_argument("--cross-check", action="store_true", help="compare with NVIDIA's cuobjdump (downloads)")
    parser.add_argument("--table", action="store_true", help="print the GPU-code table of docs/matrix.md (no network)")
    args = parser.parse_args(argv)
    if args.table:
        sys.stdout.write(gpu_code_table(records("onnxruntime-gpu.yaml", "builds", OrtBuild)))
        return 0
    started = time.monotonic()

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

    sources: list[HttpRangeSource] = []

    def open_source(url: str) -> HttpRangeSource:
        source = HttpRangeSource(url, session=session, timeout=60)
        sources.append(source)
        return source

    def derive(version: str) -> tuple[str, OrtBuild | None, list[str]]:
        if version not in on_index:
            return version, None, [f"{version}: no wheels on {args.index_url}"]
        facts = read_release(version, on_index[version], open_source)
        contents = None if args.no_contents else read_contents(on_index[version], open_source, args.cache)
        fallback = pypi_builds.get(version) or fallback_build(builds, version)
        build, notes = build_from_facts(version, on_index[version], facts, majors, fallback=fallback, contents=contents)
        for line in _content_notes(contents):
            print(f"{version}: {line}", file=sys.stderr)
        print(f"{version}: read ({time.monotonic() - started:.0f} s)", file=sys.stderr)
        return version, build, notes

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(derive, wanted))
    if args.cross_check:
        checked = cross_check(
            [b for _, b, _ in results if b is not None], on_index, session, args.cache, records_of=pypi_builds
        )
        results = [(v, checked.get(v, b), n) for v, b, n in results]
    downloaded = sum(s.bytes_read for s in sources)
    print(
        f"read {len(results)} releases in {time.monotonic() - started:.0f} s; downloaded {downloaded / 1e9:.2f} GB "
        f"in {sum(s.requests_made for s in sources)} requests (cache: {args.cache})",
        file=sys.stderr,
    )

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


def _content_notes(contents: dict[str, PlatformContents] | None) -> list[str]:
    lines = []
    for tag, read in (contents or {}).items():
        cuda = next((p for p in read.providers if p.provider == "cuda"), None)
        code = f"{' '.join(cuda.kernels) or 'no kernels'}; PTX {' '.join(cuda.ptx) or 'none'}" if cuda else "no CUDA"
        lines.append(
            f"{tag}: {', '.join(p.provider for p in read.providers)} ({code}); {read.wheels_alike} wheels alike"
        )
        lines += [f"{tag}: {note}" for note in read.notes]
    return lines


def cuobjdump() -> str:
    """NVIDIA's cuobjdump from the nvidia-cuda-cuobjdump wheel in this interpreter (SystemExit when absent)."""
    import glob
    import sysconfig

    found = sorted(glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "nvidia", "*", "bin", "cuobjdump")))
    if not found:
        raise SystemExit("--cross-check needs NVIDIA's cuobjdump: pip install nvidia-cuda-cuobjdump")
    return found[-1]


def cuobjdump_counts(tool: str, path: str) -> tuple[dict[str, int], str | None]:
    """(arch name -> entries, as `cuobjdump --list-elf --list-ptx` lists them; its fatal error, if it stopped)."""
    from collections import Counter

    done = subprocess.run([tool, "--list-elf", "--list-ptx", path], capture_output=True, text=True, check=False)
    text = done.stdout + done.stderr
    counts: Counter[str] = Counter()
    for arch, kind in re.findall(r"\.(sm_\w+?)\.(cubin|ptx)\b", text):
        counts[arch if kind == "cubin" else "compute_" + arch.removeprefix("sm_")] += 1
    fatal = next((line.split(":", 1)[1].strip() for line in text.splitlines() if "fatal" in line), None)
    return dict(counts), fatal


def fatbin_counts(path: str) -> dict[str, int]:
    """arch name -> entries, by the fatbin reader (standalone/fatbin.py) over the same file."""
    from collections import Counter

    from provisioner.standalone.elf import read_sections
    from provisioner.standalone.fatbin import ELF_SECTION, ForwardStream, file_chunks, scan_blobs

    with open(path, "rb") as handle:
        sections = read_sections(lambda o, n: (handle.seek(o), handle.read(n))[1])
    low, size = sections[ELF_SECTION]
    blobs = scan_blobs(ForwardStream(file_chunks(path)), low, low + size)
    return dict(Counter(name for blob in blobs for _, name in blob.entries))


def cross_check(
    derived: list[OrtBuild],
    on_index: dict,
    session: object,
    cache: Path,
    records_of: dict[str, OrtBuild],
) -> dict[str, OrtBuild]:
    """Run NVIDIA's cuobjdump on the CUDA provider of one Linux wheel per (platform, CUDA major, kernels, PTX)
    run of releases and compare, entry by entry, with the fatbin reader on the same file; mark every build of the
    run with the verdict. cuobjdump 13 refuses Kepler code ("Support for 'sm_37' has been removed") and stops on
    some older fatbins ("Invalid ELF"): then the entries it listed before stopping are compared, and the verdict
    says so. cuobjdump does not read PE images: the Windows rows rest on the fatbin reader alone. SystemExit on
    any disagreement."""
    from provisioner.wheelfacts import provider_members
    from provisioner.ziprange import HttpRangeSource, central_directory, stream_member

    tool = cuobjdump()
    version = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False).stdout
    release = (re.findall(r"V(\d+\.\d+\.\d+)", version) or ["?"])[-1]
    eras: dict[tuple, list[tuple[OrtBuild, str]]] = {}
    for build in derived:
        for platform in build.platforms:
            cuda = platform.provider("cuda")
            if cuda is None or not platform.platform.startswith("linux-") or not platform.wheel:
                continue
            key = (platform.platform, build.cuda_major, cuda.kernels, cuda.ptx)
            eras.setdefault(key, []).append((build, platform.wheel))
    verdicts: dict[tuple[str, str], str] = {}
    for key, members in eras.items():
        build, wheel = members[-1]  # the newest release of the run
        done = cache / f"{wheel}.cuobjdump-{release}.json"
        if done.is_file():
            theirs, fatal, ours = json.loads(done.read_text())
        else:
            url = next(item.url for name, item in on_index[build.ort_version] if name.filename == wheel)
            source = HttpRangeSource(url, session=session, timeout=60)
            entry = provider_members(central_directory(source))["cuda"]
            with tempfile.NamedTemporaryFile(suffix=".so") as handle:
                for chunk in stream_member(source, entry):
                    handle.write(chunk)
                handle.flush()
                theirs, fatal = cuobjdump_counts(tool, handle.name)
                ours = fatbin_counts(handle.name)
            done.write_text(json.dumps([theirs, fatal, ours]))
        wrong = {a: (n, ours.get(a, 0)) for a, n in theirs.items() if n > ours.get(a, 0)}
        if (not fatal and theirs != ours) or wrong or set(ours) != set(key[2]) | set(key[3]):
            raise SystemExit(f"{wheel}: cuobjdump {release} lists {theirs}; the fatbin reader {ours} ({fatal})")
        total, listed = sum(ours.values()), sum(theirs.values())
        if not fatal:
            verdict = f"cuobjdump {release} lists the same {total} entries in {wheel}"
        elif listed:
            verdict = (
                f"cuobjdump {release} listed {listed} of the {total} entries of {wheel} before stopping "
                f"({fatal}); those agree"
            )
        else:
            verdict = f"cuobjdump {release} cannot read {wheel} ({fatal}): the fatbin reader alone"
        print(verdict, file=sys.stderr)
        for other, _ in members:
            verdicts[(other.ort_version, key[0])] = verdict
    out = {}
    for build in derived:
        platforms = tuple(
            replace(p, cross_check=verdicts.get((build.ort_version, p.platform), p.cross_check))
            for p in build.platforms
        )
        out[build.ort_version] = replace(build, platforms=platforms)
    return out


def _short_verdict(verdict: str | None) -> str:
    if not verdict:
        return "-"
    if "lists the same" in verdict:
        return "agrees (" + verdict.split("the same ")[1].split(" entries")[0] + " entries)"
    if "listed" in verdict:
        listed = verdict.split("listed ")[1].split(" entries")[0]
        return f"agrees on {listed} (then stopped)"
    return "cannot read it"


def gpu_code_table(builds: list[OrtBuild]) -> str:
    """The markdown table of docs/matrix.md: per platform, runs of consecutive releases whose CUDA provider holds
    the same kernels and PTX, with the providers their wheels ship and the Pythons."""
    from provisioner.matrix.query import code_summary

    lines = [
        "| releases | platform | CUDA | kernels (cubin) | PTX | providers | Pythons | cuobjdump |",
        "|---|---|---|---|---|---|---|---|",
    ]
    pypi = sorted((b for b in builds if b.index_url is None), key=lambda b: vtuple(b.ort_version))
    for tag in ("linux-x86_64", "linux-aarch64", "windows-amd64"):
        runs: list[list] = []
        for build in pypi:
            record = build.wheel_platform(tag)
            if record is None or record.providers is None:
                continue
            cuda = record.provider("cuda")
            key = (
                build.cuda_version,
                cuda.kernels if cuda else (),
                cuda.ptx if cuda else (),
                tuple(p.provider for p in record.providers),
            )
            if runs and runs[-1][0] == key:
                runs[-1][1].append(build)
            else:
                runs.append([key, [build]])
        for (cuda_version, kernels, ptx, providers), members in runs:
            first, last = members[0], members[-1]
            span = first.ort_version if first is last else f"{first.ort_version} - {last.ort_version}"
            pythons = sorted({p for b in members for p in b.pythons_on(tag)}, key=lambda p: (vtuple(p), p))
            checked = next(
                (b.wheel_platform(tag).cross_check for b in members if b.wheel_platform(tag).cross_check), None
            )
            summary = code_summary(kernels, ptx)
            cubins, _, jit = summary.partition(", ")
            lines.append(
                f"| {span} | {tag} | {cuda_version} | {cubins} | {jit.removeprefix('PTX ')} | "
                f"{', '.join(providers)} | {pythons[0]} - {pythons[-1]} | {_short_verdict(checked)} |"
            )
    return "\n".join(lines) + "\n"


def _is_release(version: str) -> bool:
    """1.32.0, not 1.32.0rc1 or 1.32.0.dev1 (pre-releases are not planned for)."""
    return all(part.isdigit() for part in version.split("."))


def _feed_like_pypi(build: OrtBuild, derived: dict[str, OrtBuild]) -> OrtBuild:
    """A feed build's Pythons per platform, copied from the PyPI build of the same release (as its Python list
    was: the feed's wheels cannot be read from here) and its release day; its GPU code stays unread."""
    pypi = derived.get(build.ort_version)
    if build.index_url is None or pypi is None:
        return build
    build = replace(build, released=pypi.released or build.released)
    platforms = tuple(
        replace(p, python=tuple(q for q in pypi.pythons_on(p.platform) if q in build.python))
        if pypi.wheel_platform(p.platform)
        else p
        for p in build.platforms
    )
    return replace(build, platforms=platforms)


def _keep_cross_checks(build: OrtBuild, recorded: OrtBuild | None) -> OrtBuild:
    """A re-derived build keeps the cuobjdump verdicts recorded before (a run without --cross-check has none)."""
    if recorded is None:
        return build
    platforms = []
    for p in build.platforms:
        before = recorded.wheel_platform(p.platform)
        keep = p.cross_check is None and before is not None and before.sha256 == p.sha256
        platforms.append(replace(p, cross_check=before.cross_check) if keep and before else p)
    return replace(build, platforms=tuple(platforms))


def write_builds(existing: list[OrtBuild], derived: dict[str, OrtBuild]) -> None:
    """Replace the PyPI builds that were derived, keep the rest (feed builds), sorted newest first."""
    import yaml

    data = load_yaml("onnxruntime-gpu.yaml")
    kept = [_feed_like_pypi(b, derived) for b in existing if b.index_url is not None or b.ort_version not in derived]
    recorded = {b.ort_version: b for b in existing if b.index_url is None}
    merged = kept + [_keep_cross_checks(b, recorded.get(v)) for v, b in derived.items()]
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
