"""Real ELF shared objects built with gcc, standing for CUDA libraries in tests (soname, DT_NEEDED, RUNPATH)."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path


def build_so(
    directory: Path,
    soname: str,
    needed: Sequence[str] = (),
    lib_dirs: Sequence[Path] = (),
    runpath: str | None = None,
) -> Path:
    """Compile an empty library with that soname, linked against `needed` (found in `lib_dirs`)."""
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f"{soname}.c"
    source.write_text(f"int f_{abs(hash(soname))}(void) {{ return 1; }}\n")
    out = directory / soname
    argv = [
        "gcc",
        "-shared",
        "-fPIC",
        "-o",
        str(out),
        str(source),
        f"-Wl,-soname,{soname}",
        "-Wl,--no-as-needed",
    ]
    argv += [f"-L{d}" for d in lib_dirs] + [f"-l:{n}" for n in needed]
    if runpath:
        argv += [f"-Wl,-rpath,{runpath}", "-Wl,--enable-new-dtags"]
    subprocess.run(argv, check=True, capture_output=True)
    source.unlink()
    return out
