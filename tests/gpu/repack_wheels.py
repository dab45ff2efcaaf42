"""Rebuild wheels from distributions installed in an interpreter (standard library only).

    python3 tests/gpu/repack_wheels.py DEST NAME [NAME ...]

Run with the interpreter that holds the distributions (on the GPU host: the torch venv, whose NVIDIA CUDA 13
wheels are 1.6 GB that cannot be carried to the offline machine). Each wheel gets the installed files its
RECORD lists (byte-code caches left out), the installed METADATA and WHEEL (so the same name, version,
requirements and platform tag), and a fresh RECORD; pip and uv install it like the original.
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
import zipfile
from importlib import metadata
from pathlib import Path

SKIPPED = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def compressed(tags: list[str]) -> str:
    """The wheel file name's tag triple for all the WHEEL file's Tag lines (py2-none-any + py3-none-any ->
    py2.py3-none-any), so an installer sees every tag the original had."""
    fields = [[], [], []]
    for tag in tags:
        for position, part in enumerate(tag.split("-", 2)):
            for value in part.split("."):
                if value not in fields[position]:
                    fields[position].append(value)
    return "-".join(".".join(values) for values in fields)


def repack(name: str, dest: Path) -> Path:
    dist = metadata.distribution(name)
    stem = re.sub(r"[-_.]+", "_", dist.metadata["Name"]).lower()
    info = f"{stem}-{dist.version}.dist-info"
    wheel_text = dist.read_text("WHEEL") or "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    tags = [line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")]
    out = dest / f"{stem}-{dist.version}-{compressed(tags or ['py3-none-any'])}.whl"
    record = []
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for item in dist.files or ():
            parts = item.parts
            if "__pycache__" in parts or item.suffix == ".pyc" or ".." in parts:
                continue
            if parts[0].endswith(".dist-info") and parts[-1] in SKIPPED:
                continue
            source = Path(str(item.locate()))
            if not source.is_file():
                continue
            data = source.read_bytes()
            arcname = str(item).replace("\\", "/")
            if parts[0].endswith(".dist-info"):
                arcname = "/".join((info, *parts[1:]))
            archive.writestr(arcname, data)
            record.append(f"{arcname},{_hash(data)},{len(data)}")
        record.append(f"{info}/RECORD,,")
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return out


def main() -> int:
    dest = Path(sys.argv[1])
    dest.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[2:]:
        path = repack(name, dest)
        print(f"{path.name}: {path.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
