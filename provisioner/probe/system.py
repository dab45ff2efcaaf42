"""Operating system, architecture, glibc, container and WSL.

Every reader takes `root` (the folder standing for "/") and `env`, so tests point them at a temporary tree.
Parsing is separate from reading: parse_* functions take text.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path

from provisioner import childproc
from provisioner.facts import PlatformInfo, RuntimeEnvironment

_GLIBC = re.compile(r"\b(?:glibc|GLIBC|GNU libc)[^\d]*(\d+\.\d+)")
_LDD_VERSION = re.compile(r"^ldd \(.*\)\s+(\d+\.\d+)", re.M)
_CGROUP_MARKERS = (("kubepods", "kubernetes"), ("libpod", "podman"), ("docker", "docker"), ("lxc", "lxc"))
WSL_LIBCUDA = Path("usr/lib/wsl/lib/libcuda.so")


def parse_glibc_confstr(value: str | None) -> str | None:
    """os.confstr('CS_GNU_LIBC_VERSION') 'glibc 2.36' -> '2.36'."""
    if not value:
        return None
    parts = value.split()
    if len(parts) == 2 and parts[0] == "glibc":
        return parts[1]
    return None


def parse_ldd_version(text: str) -> str | None:
    """First line of `ldd --version` ('ldd (Debian GLIBC 2.36-9+deb12u4) 2.36') -> '2.36'; None for musl."""
    match = _LDD_VERSION.search(text)
    if match:
        return match.group(1)
    match = _GLIBC.search(text.splitlines()[0] if text else "")
    return match.group(1) if match else None


def parse_os_release(text: str) -> str | None:
    """PRETTY_NAME (else NAME VERSION) of an os-release file."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.startswith("#"):
            values[key.strip()] = value.strip().strip("\"'")
    if values.get("PRETTY_NAME"):
        return values["PRETTY_NAME"]
    name = " ".join(filter(None, (values.get("NAME"), values.get("VERSION"))))
    return name or None


def glibc_version() -> str | None:
    """The running C library's version: os.confstr, else `ldd --version`."""
    try:
        found = parse_glibc_confstr(os.confstr("CS_GNU_LIBC_VERSION"))
    except (AttributeError, ValueError, OSError):
        found = None
    if found:
        return found
    try:
        completed = childproc.run(["ldd", "--version"], timeout=5)
    except OSError:
        return None
    return parse_ldd_version(completed.stdout or completed.stderr)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_platform(root: Path = Path("/"), system: str | None = None, machine: str | None = None) -> PlatformInfo:
    """OS, architecture, glibc and distribution name of this host."""
    os_name = (system or platform.system()).lower()
    arch = (machine or platform.machine()).lower() or "unknown"
    glibc = glibc_version() if os_name == "linux" and root == Path("/") else None
    release = None
    if os_name == "linux":
        text = _read(root / "etc/os-release") or _read(root / "usr/lib/os-release")
        release = parse_os_release(text) if text else None
    elif os_name == "windows":
        release = f"Windows {platform.release()} ({platform.version()})" if system is None else None
    return PlatformInfo(os=os_name, arch=arch, glibc=glibc, os_release=release)


def container_from_cgroup(text: str) -> str | None:
    """docker / podman / kubernetes / lxc from /proc/1/cgroup lines, None when nothing says so."""
    for marker, kind in _CGROUP_MARKERS:
        if marker in text:
            return kind
    return None


def detect_container(root: Path = Path("/"), env: dict[str, str] | None = None) -> str | None:
    """kubernetes (service env), podman (/run/.containerenv), docker (/.dockerenv), else /proc/1/cgroup."""
    env = dict(os.environ) if env is None else env
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if (root / "run/.containerenv").exists() or env.get("container") == "podman":
        return "podman"
    if (root / ".dockerenv").exists():
        return "docker"
    cgroup = _read(root / "proc/1/cgroup")
    found = container_from_cgroup(cgroup) if cgroup else None
    if found:
        return found
    if env.get("container"):
        return env["container"]  # systemd-nspawn, lxc, ... set it for PID 1
    return None


def detect_wsl(root: Path = Path("/")) -> bool:
    """WSL2: the kernel says 'microsoft', or the Windows driver's libcuda is mapped into /usr/lib/wsl/lib."""
    version = _read(root / "proc/version") or ""
    return "microsoft" in version.lower() or (root / WSL_LIBCUDA).exists()


def read_environment(root: Path = Path("/"), env: dict[str, str] | None = None) -> RuntimeEnvironment:
    """Container, WSL, the variables that hide GPUs and the one that makes the driver ignore their kernels."""
    env = dict(os.environ) if env is None else env
    linux = sys.platform.startswith("linux")  # Windows has no /.dockerenv nor /proc (under wine, Z:\\ is Linux's /)
    return RuntimeEnvironment(
        container=detect_container(root, env) if linux else None,
        wsl=detect_wsl(root) if linux else False,
        cuda_visible_devices=env.get("CUDA_VISIBLE_DEVICES"),
        nvidia_visible_devices=env.get("NVIDIA_VISIBLE_DEVICES"),
        cuda_device_order=env.get("CUDA_DEVICE_ORDER"),
        cuda_force_ptx_jit=env.get("CUDA_FORCE_PTX_JIT"),
    )
