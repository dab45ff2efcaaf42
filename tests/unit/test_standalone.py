"""provisioner/standalone: the programs that run in other interpreters or images, and what they share.

Each parses as Python 3.8 and runs there; each imports its siblings with the same idiom; one table of CUDA
library names; one ELF reader, whose three callers (wheel facts, the verify child, the Dockerfile's check)
agree, also on a library whose section headers were stripped.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from provisioner import standalone, wheelfacts
from provisioner.standalone import check_cuda_libs, elf, libnames, verify_child, verify_static
from tests.support.elf import build_so

PROGRAMS = sorted(path.name for path in standalone.FOLDER.glob("*.py") if path.name != "__init__.py")
PYTHON38 = Path("/root/.pyenv/versions/3.8.18/bin/python3.8")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def test_the_folder_holds_the_programs_and_what_they_share() -> None:
    assert PROGRAMS == [
        "check_cuda_libs.py",
        "cuda_order.py",
        "elf.py",
        "fatbin.py",
        "libnames.py",
        "loader_hook.py",
        "packages_probe.py",
        "pe.py",
        "protocol.py",
        "shape_sessions.py",
        "tensor_types.py",
        "tune_child.py",
        "tune_compare.py",
        "tune_inputs.py",
        "tune_profile.py",
        "tune_session.py",
        "verify_child.py",
        "verify_libraries.py",
        "verify_package.py",
        "verify_plugin.py",
        "verify_session.py",
        "verify_static.py",
        "verify_static_pe.py",
        "verify_tensorrt.py",
    ]


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_file_parses_as_python_3_8(name: str) -> None:
    ast.parse(standalone.path(name).read_text(encoding="utf-8"), name, feature_version=(3, 8))


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_file_imports_only_the_standard_library_and_its_siblings(name: str) -> None:
    allowed = set(sys.stdlib_module_names) | {name[:-3] for name in PROGRAMS} | {"onnxruntime", "numpy"}
    if name == "tune_inputs.py":  # the user's images (--inputs DIR), when the target has a reader
        allowed |= {"PIL", "cv2"}
    if name == "verify_static_pe.py":  # ortprov's own loader hook, as apply installed it in the target
        allowed |= {"_ortprov_loader"}
    for node in ast.walk(ast.parse(standalone.path(name).read_bytes())):
        if isinstance(node, ast.Import):
            assert {alias.name.split(".")[0] for alias in node.names} <= allowed, ast.dump(node)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            assert node.module is not None and node.module.split(".")[0] in allowed | {"__future__"}, node.module


def sibling_idiom(name: str) -> tuple[list[str], list[str]] | None:
    """(names of `from . import ...`, names of `import ...`) of the module-level `if __package__:` block."""
    for node in ast.parse(standalone.path(name).read_bytes()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "__package__":
            relative = [a.name for n in node.body if isinstance(n, ast.ImportFrom) and n.level == 1 for a in n.names]
            plain = [a.name for n in node.orelse if isinstance(n, ast.Import) for a in n.names]
            return relative, plain
    return None


@pytest.mark.parametrize("name", PROGRAMS)
def test_siblings_are_imported_with_one_idiom(name: str) -> None:
    """`if __package__: from . import x` else `import x`: a package member or a script, the same siblings."""
    siblings = [sibling[:-3] for sibling in standalone.siblings(name)]
    idiom = sibling_idiom(name)
    if name == "loader_hook.py":  # always a package member (_ortprov_loader), imports lazily: no script branch
        assert idiom is None and siblings == ["elf", "libnames"]
    elif siblings:
        assert idiom == (siblings, siblings)
    else:
        assert idiom is None


def test_sources_are_a_program_and_every_sibling_it_needs() -> None:
    assert list(standalone.sources("check_cuda_libs.py")) == ["check_cuda_libs.py", "elf.py", "libnames.py"]
    assert list(standalone.sources("loader_hook.py")) == ["loader_hook.py", "elf.py", "libnames.py"]
    assert sorted(standalone.sources("packages_probe.py")) == [
        "elf.py",  # through loader_hook.py
        "libnames.py",
        "loader_hook.py",
        "packages_probe.py",
        "protocol.py",
    ]
    assert list(standalone.sources("cuda_order.py")) == ["cuda_order.py", "protocol.py"]
    assert sorted(standalone.sources("verify_child.py")) == [  # the child and its parts, one job each
        "elf.py",
        "libnames.py",
        "pe.py",  # through verify_static_pe.py, the Windows static check
        "protocol.py",
        "tensor_types.py",
        "verify_child.py",
        "verify_libraries.py",
        "verify_package.py",
        "verify_plugin.py",
        "verify_session.py",
        "verify_static.py",
        "verify_static_pe.py",
        "verify_tensorrt.py",
    ]
    assert standalone.sources("elf.py") == {"elf.py": standalone.path("elf.py").read_bytes()}


def test_a_package_member_uses_the_package_siblings() -> None:
    assert verify_static.elf is elf and verify_static.libnames is libnames and check_cuda_libs.elf is elf


@pytest.mark.skipif(not PYTHON38.exists(), reason="needs Python 3.8 (pyenv)")
def test_every_program_runs_as_a_script_on_python_3_8(tmp_path: Path) -> None:
    """Each module imports on the oldest supported Python with its folder as sys.path[0], as a script."""
    names = ", ".join(name[:-3] for name in PROGRAMS)
    code = f"import sys; sys.path.insert(0, {str(standalone.FOLDER)!r}); import {names}; print(elf.__file__)"
    done = subprocess.run([str(PYTHON38), "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(standalone.path("elf.py"))
    conf = tmp_path / "ld.conf"
    ran = subprocess.run(
        [str(PYTHON38), str(standalone.path("check_cuda_libs.py")), "--write-ld-conf", str(conf)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0 and ran.stdout.startswith("NVIDIA wheel library folders:"), ran.stderr


# -- one table of CUDA library names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "windows", "expected"),
    [
        ("libcudnn.so.9", False, ("cudnn", "9")),
        ("libcudnn.so.8", False, ("cudnn", "8")),
        ("libcublasLt.so.12", False, ("cublasLt", "12")),
        ("libcuda.so.1", False, ("cuda", "1")),
        ("libnvinfer.so.10", False, ("nvinfer", "10")),
        ("libcudart.so.11.0", False, ("cudart", "11")),  # CUDA 11's SONAMEs carry a minor
        ("libnvrtc.so.11.2", False, ("nvrtc", "11")),
        ("libcudnn.so.9.14.0", False, None),  # the loader asks for the SONAME
        ("libcudnn.so", False, None),
        ("libcudnn_ops.so.9", False, None),
        ("libnvrtc-builtins.so.13.0", False, None),
        ("cudnn64_9.dll", True, ("cudnn", "9")),
        ("cublas64_12.dll", True, ("cublas", "12")),
        ("cublasLt64_12.dll", True, ("cublasLt", "12")),
        ("CUDART64_110.dll", True, ("cudart", "11")),
        ("cudart64_101.dll", True, ("cudart", "10")),
        ("cudart64_12.dll", True, ("cudart", "12")),
        ("cufft64_11.dll", True, ("cufft", "11")),
        ("curand64_10.dll", True, ("curand", "10")),
        ("nvrtc64_120_0.dll", True, ("nvrtc", "12")),
        ("nvrtc64_112_0.dll", True, ("nvrtc", "11")),
        ("nvinfer_10.dll", True, ("nvinfer", "10")),
        ("nvinfer.dll", True, ("nvinfer", None)),
        ("nvcuda.dll", True, ("cuda", None)),
        ("cudnn_ops64_9.dll", True, None),
        ("libcudnn.so.9", True, None),
        ("cudnn64_9.dll", False, None),
    ],
)
def test_match_library(filename: str, windows: bool, expected: tuple[str, str | None] | None) -> None:
    assert libnames.match_library(filename, windows) == expected


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("libcudnn.so.9", "cudnn"),
        ("libcudnn_engines_precompiled.so.9", "cudnn"),
        ("cudnn64_9.dll", "cudnn"),
        ("libcublasLt.so.13", "cublasLt"),
        ("cublas64_12.dll", "cublas"),
        ("libcudart.so.13", "cudart"),
        ("cufft64_11.dll", "cufft"),
        ("libcurand.so.10", "curand"),
        ("libnvrtc.so.13", "nvrtc"),
        ("libnvrtc-builtins.so.13.0", "nvrtc"),
        ("libnvinfer.so.10", "nvinfer"),
        ("libcuda.so.1", "cuda"),
        ("libc.so.6", None),
        ("libcudadebugger.so.1", None),
    ],
)
def test_library_family(name: str, family: str | None):
    assert libnames.library_family(name) == family


def test_every_name_of_the_table_is_matched_by_its_own_family() -> None:
    """The exact and the family patterns both derive from FAMILIES: every name it lists comes back."""
    assert set(libnames.DETECTED) <= {family for family, *_ in libnames.FAMILIES}
    for family, linux, windows, _ in libnames.FAMILIES:
        for template, is_windows in [(name, False) for name in linux] + [(name, True) for name in windows]:
            name = template.replace("{N}{M}", "120").replace("{N}", "12")
            assert libnames.library_family(name) == family, name
            expected = (family, "12" if "{N}" in template else None) if family in libnames.DETECTED else None
            assert libnames.match_library(name, is_windows) == expected, name


def test_driver_system_and_shared_library_names() -> None:
    for name in ("libcuda.so.1", "libcuda.so", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1", "libnvcuvid.so.1"):
        assert libnames.is_driver_library(name), name
    assert not libnames.is_driver_library("libcudart.so.13") and not libnames.is_driver_library("libcudadebugger.so")
    for name in ("libc.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "libz.so.1"):
        assert libnames.is_system_library(name), name
    assert not libnames.is_system_library("libcudnn.so.9") and not libnames.is_system_library("libc++.so.1")
    assert libnames.is_shared_library("libcudnn.so.9.1.0") and libnames.is_shared_library("cudnn64_9.DLL")
    assert not libnames.is_shared_library("cudnn.h") and not libnames.is_shared_library("libcudnn.so.9.1.0a")


# -- one ELF reader: its callers agree, also without section headers ------------------------------------------


def strip_section_headers(library: Path) -> Path:
    """A copy without section headers (e_shoff, e_shnum, e_shstrndx zeroed), as `strip --strip-section-headers`
    (binutils 2.41+) leaves it: the loader, which reads program headers only, still loads it."""
    data = bytearray(library.read_bytes())
    assert data[4] == 2 and data[5] == 1  # ELF64, little-endian: the header offsets below
    data[0x28:0x30] = bytes(8)  # e_shoff
    data[0x3C:0x40] = bytes(4)  # e_shnum, e_shstrndx
    stripped = library.with_name("stripped") / library.name
    stripped.parent.mkdir()
    stripped.write_bytes(bytes(data))
    return stripped


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(a provider library linking two stub libraries, the same without section headers, the stubs' folder)."""
    root = tmp_path_factory.mktemp("elf")
    stubs = root / "stubs"
    for name in ("libstubcudart.so.13", "libstubcublas.so.13"):
        build_so(stubs, name)
    built = build_so(
        root / "built", "libonnxruntime_providers_cuda.so", ["libstubcudart.so.13", "libstubcublas.so.13"], [stubs]
    )
    return built, strip_section_headers(built), stubs


def static_needs(library: Path, tmp_path: Path) -> list[str]:
    """What the verify child's static check looks for, for an onnxruntime whose CUDA provider is `library`."""
    capi = tmp_path / "onnxruntime" / "capi"
    capi.mkdir(parents=True)
    shutil.copy(library, capi / library.name)
    result: dict = {"failures": [], "warnings": []}
    verify_static.static_check("cuda", str(capi.parent), None, result, {})
    return [entry["soname"] for entry in result["static"]["libraries"]]


@needs_gcc
def test_the_three_readers_agree_on_a_library_without_section_headers(
    provider: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    built, stripped, _ = provider
    needed = ["libstubcudart.so.13", "libstubcublas.so.13"]
    assert elf.read_dynamic_file(str(stripped)).needed == elf.read_dynamic_file(str(built)).needed
    assert [n for n in elf.read_dynamic_file(str(stripped)).needed if n in needed] == needed
    for library in (built, stripped):
        assert wheelfacts.elf_needed_sonames(library.read_bytes()) == tuple(sorted(needed))  # matrix derivation
        assert [n for n in check_cuda_libs.elf_dynamic(str(library))[0] if n in needed] == needed  # Dockerfile
        assert static_needs(library, tmp_path / library.parent.name) == needed  # verify --static
    # a prefix of the library, as read from a remote wheel: exact while the dynamic segment is inside it
    assert wheelfacts.elf_needed_sonames(stripped.read_bytes()[:8192]) == tuple(sorted(needed))


@needs_gcc
def test_the_dockerfile_check_sees_what_a_stripped_provider_needs(
    provider: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """The build-time check of the Dockerfile, run for real: a stripped provider's dependencies are checked
    (with a reader of section headers it found none, and passed an image that fails at run time)."""
    _, stripped, stubs = provider
    capi = tmp_path / "site" / "onnxruntime" / "capi"
    capi.mkdir(parents=True)
    (capi.parent / "__init__.py").write_text("__version__ = '0.0'\n")
    shutil.copy(stripped, capi / stripped.name)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "LD_LIBRARY_PATH": ""}
    argv = [sys.executable, str(standalone.path("check_cuda_libs.py")), "libcuda.so.1"]
    missing = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert missing.returncode == 1
    assert "MISSING  libstubcudart.so.13" in missing.stdout and "MISSING  libstubcublas.so.13" in missing.stdout
    found = subprocess.run(argv, capture_output=True, text=True, env={**env, "LD_LIBRARY_PATH": str(stubs)}, timeout=60)
    assert found.returncode == 0, found.stdout + found.stderr
    assert "ok       libstubcudart.so.13" in found.stdout and "skip     libcuda.so.1" in found.stdout


@needs_gcc
def test_the_verify_child_takes_the_lazy_sonames_from_the_matrix(
    provider: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """An onnxruntime too old to name what it opens at run time: the parent passes the matrix's cuDNN and cuFFT
    sonames for each CUDA major, the child picks its build's."""
    from provisioner.verify.runner import _child_argv, lazy_sonames

    table = lazy_sonames()
    assert table["12"] == ("libcudnn.so.9", "libcufft.so.11") and table["11"] == ("libcudnn.so.8", "libcufft.so.10")
    argv = _child_argv("python", "cuda", None, True, {})
    assert f"13={','.join(table['13'])}" == argv[argv.index("--lazy-sonames") + 5]  # 11, 12, 13 in order
    assert "--lazy-sonames" not in _child_argv("python", "cuda", None, False, {})
    args = verify_child.parse_args(argv[2:])
    capi = tmp_path / "onnxruntime" / "capi"
    capi.mkdir(parents=True)
    shutil.copy(provider[0], capi)
    result: dict = {"failures": [], "warnings": [], "ort": {"build_cuda_version": "12.8"}}
    verify_static.static_check("cuda", str(capi.parent), None, result, args.lazy_by_major)
    lazy = [entry["soname"] for entry in result["static"]["libraries"] if entry["needed"] == "lazy"]
    assert lazy == ["libcudnn.so.9", "libcufft.so.11"]


@pytest.mark.parametrize(
    ("fragment", "whole"),
    [
        ("Lt64_12.dll", ("cublasLt", "cublasLt64_12.dll")),  # a garbled locale ate "cubla"
        ("rt64_12.dll", ("cudart", "cudart64_12.dll")),
        ("blasLt.so.12", ("cublasLt", "libcublasLt.so.12")),
        ("64_12.dll", None),  # several families end so
        ("cudnn64_9.dll", None),  # a whole name is no fragment
    ],
)
def test_the_end_of_a_garbled_library_name_is_completed_only_where_one_family_fits(
    fragment: str, whole: tuple[str, str] | None
):
    assert libnames.complete_fragment(fragment) == whole
