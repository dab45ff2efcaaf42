"""Programs that run in other interpreters or images, standard library only (Python 3.8+), and what they share.

    verify_child.py     in the target interpreter: proves a GPU session (provisioner/verify/runner.py), with its
                        parts verify_package.py (installed, imported, preloaded), verify_static.py (the
                        libraries resolved without loading them), verify_session.py (GPU against CPU sessions),
                        verify_tensorrt.py (libnvinfer, the engine cache), verify_libraries.py (what is mapped)
    tune_child.py       in the target interpreter: times a model's sessions, one request at a time
                        (provisioner/tune/measure.py)
    packages_probe.py   in the target interpreter: what it is and holds (provisioner/probe/target.py)
    cuda_order.py       asks the CUDA driver for its device order (provisioner/probe/cuda_order.py)
    check_cuda_libs.py  in a Docker build: every CUDA library resolves (the Dockerfile recipe embeds it)
    loader_hook.py      in the target's site-packages as _ortprov_loader (provisioner/installer/hook_files.py)
    elf.py              shared: the one ELF reader (DT_NEEDED, RPATH, RUNPATH, SONAME, the section table)
    pe.py               shared: the one PE reader (sections, imported and delay-loaded DLLs)
    fatbin.py           shared: a CUDA library's GPU code (kernels, PTX) and needs, in one front-to-back pass
                        (bin/derive_release.py and `matrix update` over every wheel)
    libnames.py         shared: the one table of CUDA library names
    tensor_types.py     shared: onnxruntime's tensor types and the numpy dtypes that feed them
    protocol.py         shared: how a program answers ortprov (JSON messages after one marker; childproc.py reads),
                        and the verify child's stage markers on stderr (verify/runner.py reads)

Every program imports its siblings with the same lines:

    if __package__:  # a package member: provisioner.standalone, or the installed _ortprov_loader
        from . import elf
    else:  # run as a script: its folder is sys.path[0]
        import elf  # type: ignore[no-redef]

so wherever a program goes (a Docker image, site-packages) its siblings go beside it: `sources(program)`.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent


def path(name: str) -> Path:
    """The file of a program or shared module of this folder."""
    return FOLDER / name


def siblings(name: str) -> list[str]:
    """The file names of the siblings `name` imports (`from . import x, y`, anywhere in the file)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path(name).read_bytes(), name)):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
            found += [f"{alias.name}.py" for alias in node.names if f"{alias.name}.py" not in found]
    return found


def sources(program: str) -> dict[str, bytes]:
    """File name -> content of `program` and every sibling it needs (directly or through another sibling)."""
    files: dict[str, bytes] = {}
    waiting = [program]
    while waiting:
        name = waiting.pop(0)
        if name not in files:
            files[name] = path(name).read_bytes()
            waiting += siblings(name)
    return files
