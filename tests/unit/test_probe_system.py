"""provisioner.probe.system against a temporary directory standing for "/" and explicit environments,
plus the real readers on this machine."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from provisioner.probe import system

DOCKER_CGROUP_V1 = "12:cpuset:/docker/3f1c0e9a8b7d\n11:memory:/docker/3f1c0e9a8b7d\n"
K8S_CGROUP = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/cri-containerd-ab.scope\n"
PODMAN_CGROUP = "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-9f2e.scope/container\n"
HOST_CGROUP_V2 = "0::/init.scope\n"


def make(root: Path, relative: str, text: str = "") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_nothing_means_no_container(tmp_path: Path) -> None:
    make(tmp_path, "proc/1/cgroup", HOST_CGROUP_V2)
    assert system.detect_container(tmp_path, {}) is None


def test_dockerenv(tmp_path: Path) -> None:
    make(tmp_path, ".dockerenv")
    assert system.detect_container(tmp_path, {}) == "docker"


def test_podman_containerenv_wins_over_dockerenv(tmp_path: Path) -> None:
    make(tmp_path, ".dockerenv")
    make(tmp_path, "run/.containerenv", 'engine="podman-4.9.3"\n')
    assert system.detect_container(tmp_path, {}) == "podman"


def test_kubernetes_variables(tmp_path: Path) -> None:
    make(tmp_path, ".dockerenv")
    assert system.detect_container(tmp_path, {"KUBERNETES_SERVICE_HOST": "10.96.0.1"}) == "kubernetes"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (DOCKER_CGROUP_V1, "docker"),
        (K8S_CGROUP, "kubernetes"),
        (PODMAN_CGROUP, "podman"),
        (HOST_CGROUP_V2, None),
    ],
)
def test_cgroup_text(tmp_path: Path, text: str, kind: str | None) -> None:
    assert system.container_from_cgroup(text) == kind
    make(tmp_path, "proc/1/cgroup", text)
    assert system.detect_container(tmp_path, {}) == kind


def test_container_variable_of_pid1(tmp_path: Path) -> None:
    assert system.detect_container(tmp_path, {"container": "systemd-nspawn"}) == "systemd-nspawn"


def test_wsl_from_kernel_version(tmp_path: Path) -> None:
    make(tmp_path, "proc/version", "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@1c602f52c2e4) (gcc)")
    assert system.detect_wsl(tmp_path)


def test_wsl_from_libcuda(tmp_path: Path) -> None:
    make(tmp_path, "proc/version", "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)")
    assert not system.detect_wsl(tmp_path)
    make(tmp_path, "usr/lib/wsl/lib/libcuda.so")
    assert system.detect_wsl(tmp_path)


def test_read_environment_copies_visibility_variables(tmp_path: Path) -> None:
    env = system.read_environment(tmp_path, {"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "0"})
    assert env.cuda_visible_devices == "" and env.nvidia_visible_devices == "0"
    assert env.container is None and not env.wsl


def test_parse_os_release() -> None:
    text = 'NAME="Ubuntu"\nVERSION="22.04.4 LTS"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\nID=ubuntu\n'
    assert system.parse_os_release(text) == "Ubuntu 22.04.4 LTS"
    assert system.parse_os_release('NAME="Alpine Linux"\nVERSION_ID=3.19.1\n') == "Alpine Linux"
    assert system.parse_os_release("") is None


@pytest.mark.parametrize(("value", "version"), [("glibc 2.36", "2.36"), ("glibc 2.17", "2.17"), ("", None)])
def test_parse_glibc_confstr(value: str, version: str | None) -> None:
    assert system.parse_glibc_confstr(value) == version


def test_parse_ldd_version() -> None:
    glibc = "ldd (Debian GLIBC 2.36-9+deb12u4) 2.36\nCopyright (C) 2022 Free Software Foundation, Inc.\n"
    assert system.parse_ldd_version(glibc) == "2.36"
    ubuntu = "ldd (Ubuntu GLIBC 2.35-0ubuntu3.7) 2.35\n"
    assert system.parse_ldd_version(ubuntu) == "2.35"
    musl = "musl libc (x86_64)\nVersion 1.2.4\nDynamic Program Loader\n"
    assert system.parse_ldd_version(musl) is None


def test_read_platform_from_a_tree(tmp_path: Path) -> None:
    make(tmp_path, "etc/os-release", 'PRETTY_NAME="Rocky Linux 8.9 (Green Obsidian)"\n')
    info = system.read_platform(tmp_path, system="Linux", machine="aarch64")
    assert (info.os, info.arch, info.tag, info.os_release) == (
        "linux",
        "aarch64",
        "linux-aarch64",
        "Rocky Linux 8.9 (Green Obsidian)",
    )


def test_windows_platform_tag() -> None:
    info = system.read_platform(Path("/nonexistent"), system="Windows", machine="AMD64")
    assert info.tag == "windows-amd64" and info.glibc is None


def test_real_platform_of_this_machine() -> None:
    info = system.read_platform()
    assert info.os == platform.system().lower()
    assert info.arch == platform.machine().lower()
    if info.os == "linux":
        assert info.glibc == platform.libc_ver()[1]
        assert info.os_release


def test_real_container_state_matches_the_markers() -> None:
    found = system.detect_container()
    if os.path.exists("/.dockerenv") and not os.environ.get("KUBERNETES_SERVICE_HOST"):
        assert found in ("docker", "podman")
