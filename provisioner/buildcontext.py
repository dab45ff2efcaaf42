"""`ortprov dockerfile --context DIR`: the Dockerfile and the files it COPYs (ortprov-check/, the build-time check)
written into a folder that is then the build context (`docker build DIR`). An edge: it writes files.

Nothing is lost: a Dockerfile already there is replaced only when ortprov wrote it (its first line is ortprov's
header); each file is written whole (a temporary file renamed over it).
"""

from __future__ import annotations

import os
from pathlib import Path

from provisioner.errors import BadInput

HEADER = "# ortprov plan:"  # how every Dockerfile ortprov writes starts (recipe_parts.header_lines)


def write_context(folder: str, dockerfile: str, files: dict[str, bytes]) -> list[Path]:
    """Write DIR/Dockerfile and `files` (relative path -> content) under DIR, made if missing; the paths written.
    BadInput when DIR is not a folder or holds a Dockerfile ortprov did not write."""
    root = Path(folder)
    try:
        root.mkdir(parents=True, exist_ok=True)
        existing = root / "Dockerfile"
        if existing.is_file() and not existing.read_text("utf-8", "replace").startswith(HEADER):
            raise BadInput(
                f"--context {folder}: its Dockerfile was not written by ortprov; it is kept",
                hint="give an empty folder, or move that Dockerfile away",
            )
        written = [_write(existing, dockerfile.encode("utf-8"))]
        written += [_write(root / name, content) for name, content in files.items()]
    except (FileExistsError, NotADirectoryError):
        raise BadInput(f"--context {folder} is not a folder", hint="name a folder (made if missing)") from None
    except OSError as exc:
        raise BadInput(f"--context {folder} cannot be written: {exc.strerror or exc}") from None
    return written


def _write(path: Path, content: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.ortprov-tmp")
    temporary.write_bytes(content)
    os.replace(temporary, path)
    return path


__all__ = ["HEADER", "write_context"]
