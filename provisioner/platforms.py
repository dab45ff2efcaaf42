"""Wheel platform tags: ONE home for what a Linux or Windows host accepts and what a tag means. Pure.

A host with glibc 2.N accepts manylinux_2_M wheels for every M <= N (down to 2.5 on x86_64, 2.17 on aarch64,
where manylinux starts), and the legacy aliases of three of them (manylinux2014 = 2.17, manylinux2010 = 2.12,
manylinux1 = 2.5); pip's own `packaging.tags` lists them in that order. `ortprov download` passes them to
`pip download --platform`, `--hashes` to the resolver; wheelfacts.py and bin/derive_wheels.py read file names
with `LEGACY_MANYLINUX`.
"""

from __future__ import annotations

import re

PLATFORM_ORDER = ("linux-x86_64", "linux-aarch64", "windows-amd64")  # the platforms onnxruntime-gpu has wheels for
DEFAULT_GLIBC = "2.28"  # assumed when a target does not say (the manylinux floor of recent onnxruntime-gpu wheels)
LEGACY_MANYLINUX = {"manylinux2014": "2.17", "manylinux2010": "2.12", "manylinux1": "2.5"}
_FIRST_MINOR = {"x86_64": 5, "i686": 5, "aarch64": 17, "ppc64le": 17, "s390x": 17, "armv7l": 17}


def pip_platform_tags(platform: str, glibc: str | None = None) -> list[str]:
    """The pip --platform tags a host accepts, most specific first (platform: linux-x86_64, windows-amd64 ...);
    ValueError for a platform that has none."""
    os_name, _, arch = platform.partition("-")
    if os_name == "windows":
        return ["win_amd64"] if arch in ("amd64", "x86_64") else [f"win_{arch}"]
    if os_name != "linux":
        raise ValueError(f"unsupported platform {platform!r}")
    major, _, minor = (glibc or DEFAULT_GLIBC).partition(".")
    newest = int(minor) if major == "2" and minor.isdigit() else int(DEFAULT_GLIBC.split(".")[1])
    aliases = {int(floor.split(".")[1]): name for name, floor in LEGACY_MANYLINUX.items()}
    tags = []
    for glibc_minor in range(newest, _FIRST_MINOR.get(arch, 17) - 1, -1):
        tags.append(f"manylinux_2_{glibc_minor}_{arch}")
        if glibc_minor in aliases:
            tags.append(f"{aliases[glibc_minor]}_{arch}")
    return [*tags, f"linux_{arch}"]


_MANYLINUX = re.compile(r"^(manylinux1|manylinux2010|manylinux2014|manylinux_(\d+)_(\d+))_(x86_64|aarch64|sbsa)$")


def platform_of_tag(tag: str) -> tuple[str, str | None] | None:
    """("linux-x86_64", "2.17") for manylinux2014_x86_64, ("windows-amd64", None) for win_amd64; else None."""
    if tag == "win_amd64":
        return "windows-amd64", None
    found = _MANYLINUX.match(tag)
    if not found:
        return None  # win_arm64, macOS, plain linux_*: not platforms ortprov plans for
    floor = f"{found.group(2)}.{found.group(3)}" if found.group(2) else LEGACY_MANYLINUX[found.group(1)]
    arch = "x86_64" if found.group(4) == "x86_64" else "aarch64"
    return f"linux-{arch}", floor


def wheel_file_platforms(filename: str) -> list[str]:
    """The platforms a wheel file installs on, from its name (every one for a py3-none-any wheel)."""
    tags = filename[: -len(".whl")].split("-")[-1].split(".")
    if "any" in tags:
        return list(PLATFORM_ORDER)
    return [found[0] for found in map(platform_of_tag, tags) if found]
