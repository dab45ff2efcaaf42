"""The target probe: run *inside the target interpreter* by provisioner.probe.target, it says what that is.

Standard library only, Python 3.8 to 3.14. It first prints `ORTPROV-PROBE-HELLO` (a working Python), then one
message (protocol.py): the interpreter (version, ABI, prefix, venv / conda / PEP 668 state, the loader
hook), where it installs (purelib, platlib, scripts), every distribution's name and version, and in detail
the onnxruntime flavours, torch and the NVIDIA wheels. It never imports onnxruntime or torch: names, versions
and file lists come from the installed .dist-info / .egg-info folders on sys.path (read the way
importlib.metadata reads them, without importing importlib.metadata and the email parser, which cost more than
the whole probe), build facts from regular expressions over the packages' own small .py files, and for the
onnxruntime flavours and NVIDIA wheels the files their RECORD lists that are missing on disk.
With `--files`, instead: every distribution on sys.path whose RECORD lists missing files. With `--where`: only
the prefix (where `apply` takes its lock before it reads anything else).
"""

from __future__ import annotations

import csv
import os
import re
import sys
import sysconfig

if __package__:  # a package member: provisioner.standalone (ortprov itself)
    from . import libnames, loader_hook, protocol
else:  # run as a script: its folder is sys.path[0]
    import libnames  # type: ignore[no-redef]
    import loader_hook  # type: ignore[no-redef]
    import protocol  # type: ignore[no-redef]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HELLO = "ORTPROV-PROBE-HELLO"  # the first line: the target is a Python that runs this program
ASSIGNMENT = re.compile(r"""^([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=\s*(?:'([^']*)'|"([^"]*)"|(None))\s*$""", re.M)
CANDIDATE_PREFIXES = ("onnxruntime", "ort-nightly", "torch", "nvidia", "tensorrt")
REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
MISSING_SAMPLE = 3  # missing paths named per distribution


def normalize(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_assignments(path: str) -> dict[str, str | None] | None:
    """`name = 'value'` lines of a generated .py file, without importing it."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(65536)
    except OSError:
        return None
    values: dict[str, str | None] = {}
    for match in ASSIGNMENT.finditer(text):
        name, single, double, none = match.groups()
        values[name] = None if none else (single if single is not None else double)
    return values


def python_facts() -> dict[str, Any]:
    """Version, ABI, venv / conda / PEP 668 state of this interpreter."""
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    implementation = sys.implementation.name
    if implementation == "cpython":
        abi = f"cp{sys.version_info[0]}{sys.version_info[1]}{'t' if free_threaded else ''}"
    else:
        abi = sys.implementation.cache_tag or implementation
    base_prefix = str(getattr(sys, "real_prefix", None) or getattr(sys, "base_prefix", sys.prefix))
    is_venv = os.path.realpath(sys.prefix) != os.path.realpath(base_prefix)
    conda_prefix = os.environ.get("CONDA_PREFIX")
    is_conda = os.path.isdir(os.path.join(sys.prefix, "conda-meta")) or bool(
        conda_prefix and os.path.realpath(conda_prefix) == os.path.realpath(sys.prefix)
    )
    stdlib = sysconfig.get_path("stdlib") or ""
    marker = os.path.isfile(os.path.join(stdlib, "EXTERNALLY-MANAGED"))
    hook = os.path.join(sysconfig.get_path("purelib") or "", loader_hook.PTH_FILE)
    return {
        "executable": sys.executable,
        "version": ".".join(str(part) for part in sys.version_info[:3]),
        "implementation": implementation,
        "abi": abi,
        "free_threaded": free_threaded,
        "is_venv": is_venv,
        "is_conda": is_conda,
        "externally_managed": marker and not is_venv,
        "prefix": sys.prefix,
        "loader_hook": hook if os.path.isfile(hook) else None,
    }


def parse_headers(text: str) -> dict[str, list[str]]:
    """The RFC 822 style header block of METADATA / PKG-INFO (continuation lines folded)."""
    headers: dict[str, list[str]] = {}
    last: list[str] | None = None
    for line in text.splitlines():
        if not line.strip():
            break  # the description body follows
        if line[0] in " \t" and last:
            last[-1] += " " + line.strip()
            continue
        key, sep, value = line.partition(":")
        if sep:
            last = headers.setdefault(key.strip().lower(), [])
            last.append(value.strip())
    return headers


class InstalledDist:
    """One .dist-info or .egg-info entry of a sys.path folder."""

    def __init__(self, info_path: str, location: str) -> None:
        self.info_path = info_path
        self.location = location
        self.is_egg_info = info_path.lower().endswith(".egg-info")
        self.headers = parse_headers(self.read_text("PKG-INFO" if self.is_egg_info else "METADATA", head=True) or "")

    def read_text(self, filename: str, head: bool = False) -> str | None:
        """A file of the metadata folder (an .egg-info *file* is PKG-INFO itself); None when absent.
        head=True: only up to the first empty line (the header block of METADATA, not the description)."""
        if os.path.isdir(self.info_path):
            path = os.path.join(self.info_path, filename)
        elif filename == "PKG-INFO":
            path = self.info_path
        else:
            return None
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                if not head:
                    return handle.read()
                lines = []
                for line in handle:
                    if not line.strip():
                        break
                    lines.append(line)
                return "".join(lines)
        except OSError:
            return None

    @property
    def name(self) -> str:
        return (self.headers.get("name") or [""])[0]

    @property
    def version(self) -> str:
        return (self.headers.get("version") or [""])[0]

    @property
    def requires(self) -> list[str]:
        if not self.is_egg_info:
            return list(self.headers.get("requires-dist") or [])
        lines = []
        for line in (self.read_text("requires.txt") or "").splitlines():
            if line.startswith("["):
                break  # extras and markers sections
            if line.strip():
                lines.append(line.strip())
        return lines

    @property
    def entries(self) -> list[tuple[str, str]]:
        """(installed file relative to the location with forward slashes, its recorded size or "")."""
        record = self.read_text("RECORD")
        if record is not None:
            return [
                (row[0].replace("\\", "/"), row[2].strip() if len(row) > 2 else "")
                for row in csv.reader(record.splitlines())
                if row
            ]
        installed = self.read_text("installed-files.txt")  # egg-info: relative to the .egg-info folder
        if installed is None:
            return []
        folder = os.path.basename(self.info_path)
        return [
            (os.path.normpath(os.path.join(folder, line.strip())).replace("\\", "/"), "")
            for line in installed.splitlines()
            if line.strip()
        ]

    @property
    def files(self) -> list[str]:
        """Installed files relative to the location, forward slashes."""
        return [path for path, _ in self.entries]

    def missing_files(self) -> dict[str, Any] | None:
        """{count, listed, sample} of the files the RECORD lists that are not on disk; None when none is
        missing. Byte-code and files recorded as empty are not counted (see facts.MissingFiles)."""
        listed = 0
        missing: list[str] = []
        for path, size in self.entries:
            if size == "0" or path.endswith((".pyc", ".pyo")) or "__pycache__/" in path:
                continue
            listed += 1
            if not os.path.lexists(os.path.join(self.location, *path.split("/"))):
                missing.append(path)
        if not missing:
            return None
        return {"count": len(missing), "listed": listed, "sample": missing[:MISSING_SAMPLE]}


def distributions(paths: list[str], prefixes: tuple[str, ...] | None = CANDIDATE_PREFIXES) -> list[InstalledDist]:
    """Distributions in sys.path order: the candidates (folders whose names could be one of ours), or with
    prefixes=None every one."""
    found = []
    for entry in paths:
        folder = os.path.abspath(entry or os.curdir)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue  # missing folders, zip files
        for name in names:
            lower = name.lower()
            if lower.endswith((".dist-info", ".egg-info")) and (
                prefixes is None or normalize(name).startswith(prefixes)
            ):
                found.append(InstalledDist(os.path.join(folder, name), folder))
    return found


def installs_package(dist: InstalledDist, package: str) -> bool:
    """True when the distribution installs the top-level import package `package`."""
    top_level = dist.read_text("top_level.txt")
    if top_level and package in top_level.split():
        return True
    prefix = package + "/"
    return any(entry.startswith(prefix) for entry in dist.files)


def onnxruntime_facts(dist: InstalledDist, name: str, location: str | None) -> dict[str, Any]:
    """One installed onnxruntime flavour, with the build facts of the files now on disk."""
    entry: dict[str, Any] = {"name": name, "version": dist.version, "location": location}
    info = read_assignments(os.path.join(location or "", "onnxruntime", "capi", "build_and_package_info.py"))
    if info:
        built_as = info.get("package_name")
        entry["build_package_name"] = built_as
        # Flavours share one onnxruntime/ folder: the CUDA facts belong to whichever was installed last.
        if built_as is None or normalize(built_as) == name:
            entry["cuda_version"] = info.get("cuda_version")
            entry["cudnn_version"] = info.get("cudnn_version")
    entry["missing_files"] = dist.missing_files()
    return entry


def torch_facts(dist: InstalledDist, location: str | None) -> dict[str, Any]:
    """torch's version, the CUDA version it was built with, and the NVIDIA wheels it requires."""
    info = read_assignments(os.path.join(location or "", "torch", "version.py")) or {}
    requires: list[str] = []
    for requirement in dist.requires or []:
        match = REQUIREMENT_NAME.match(requirement)
        if match and "extra ==" not in requirement.replace('"', "'"):
            requires.append(normalize(match.group(1)))
    return {
        "version": dist.version,
        "cuda_version": info.get("cuda"),
        "location": location,
        "requires": requires,
    }


def is_nvidia_wheel(name: str) -> bool:
    """NVIDIA CUDA-library wheels and TensorRT; not nvidia-ml-py and friends."""
    if name.startswith("tensorrt"):
        return True
    return name.startswith("nvidia-") and name not in ("nvidia-ml-py", "nvidia-ml-py3", "nvidia-pyindex")


def owned_files(dist: InstalledDist) -> list[str]:
    """The files a distribution installed that another could overwrite: its RECORD less its metadata folder,
    byte-code, files recorded as empty (a shared namespace `__init__.py`) and paths outside the location."""
    return sorted(
        path
        for path, size in dist.entries
        if size != "0"
        and not path.startswith("..")
        and ".dist-info/" not in path
        and not path.endswith((".pyc", ".pyo"))
        and "__pycache__/" not in path
    )


def nvidia_wheel_facts(dist: InstalledDist, name: str, location: str | None) -> dict[str, Any]:
    """Version, the folders holding the wheel's shared libraries, and the files it installed."""
    lib_dirs: list[str] = []
    for entry in dist.files:
        base = entry.rsplit("/", 1)
        if len(base) == 2 and libnames.is_shared_library(base[1]) and not entry.startswith(".."):
            folder = os.path.join(location or "", *base[0].split("/"))
            if folder not in lib_dirs:
                lib_dirs.append(folder)
    return {
        "name": name,
        "version": dist.version,
        "lib_dirs": lib_dirs,
        "missing_files": dist.missing_files(),
        "files": owned_files(dist),
    }


def packages_facts(errors: list[str]) -> dict[str, Any]:
    """Every distribution on this interpreter's sys.path (name, version), and in detail the onnxruntime
    flavours, torch and NVIDIA wheels."""
    result: dict[str, Any] = {"distributions": [], "onnxruntime": [], "torch": None, "nvidia_wheels": []}
    seen: set[str] = set()
    for dist in distributions(sys.path, prefixes=None):
        try:
            name = normalize(dist.name)
        except Exception:
            continue
        if not name or name in seen:
            continue  # the first one on sys.path wins, as it does for imports
        seen.add(name)
        result["distributions"].append([name, dist.version])
        if not name.startswith(CANDIDATE_PREFIXES):
            continue
        try:
            location = dist.location
            if name == "torch":
                result["torch"] = torch_facts(dist, location)
            elif is_nvidia_wheel(name):
                result["nvidia_wheels"].append(nvidia_wheel_facts(dist, name, location))
            elif (name.startswith("onnxruntime") or name.startswith("ort-nightly")) and installs_package(
                dist, "onnxruntime"
            ):
                result["onnxruntime"].append(onnxruntime_facts(dist, name, location))
        except Exception as exc:  # one broken dist-info must not hide the others
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            errors.append(f"could not read {name}: {reason}")
    result["distributions"].sort()
    result["onnxruntime"].sort(key=lambda item: item["name"])
    result["nvidia_wheels"].sort(key=lambda item: item["name"])
    return result


def install_paths() -> dict[str, str]:
    """Where this interpreter installs: purelib (site-packages), platlib, scripts."""
    paths = sysconfig.get_paths()
    return {key: paths.get(key) or "" for key in ("purelib", "platlib", "scripts")}


def incomplete_facts(errors: list[str]) -> dict[str, Any]:
    """Every distribution on sys.path whose RECORD lists files that are not on disk (`--files`)."""
    incomplete: list[dict[str, Any]] = []
    seen: set[str] = set()
    for dist in distributions(sys.path, prefixes=None):
        name = ""
        try:
            name = normalize(dist.name)
            if not name or name in seen:
                continue  # the first one on sys.path wins, as it does for imports
            seen.add(name)
            missing = dist.missing_files()
            if missing:
                item = {"name": name, "version": dist.version, "location": dist.location, "missing_files": missing}
                incomplete.append(item)
        except Exception as exc:  # one broken dist-info must not hide the others
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            errors.append(f"could not read {name or dist.info_path}: {reason}")
    return {"incomplete": sorted(incomplete, key=lambda item: item["name"])}


def main() -> None:
    """Say hello, then collect and print the facts (with --files: only the incomplete distributions; with
    --where: only the prefix)."""
    sys.stdout.write(HELLO + "\n")
    sys.stdout.flush()
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    errors: list[str] = []
    facts: dict[str, Any]
    if sys.argv[1:] == ["--where"]:
        facts = {"prefix": sys.prefix}
    elif sys.argv[1:] == ["--files"]:
        facts = incomplete_facts(errors)
    else:
        facts = {"python": python_facts(), "paths": install_paths()}
        facts.update(packages_facts(errors))
    facts["errors"] = errors
    protocol.send(facts)


if __name__ == "__main__":
    main()
