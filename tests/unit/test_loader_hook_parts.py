"""The loader hook's pure parts, its Windows branch (against a fake `os`, the narrowest boundary: there is no
Windows here), the files apply writes, and the plan's loader-hook step."""

from __future__ import annotations

import dataclasses
import json
import types
from pathlib import Path

import pytest

from provisioner.commands.options import PlanningOptions
from provisioner.commands.planning import resolve_hosts
from provisioner.facts import HostFacts
from provisioner.installer import hook_files as loader_hook
from provisioner.matrix.load import load_matrix
from provisioner.matrix.query import sonames_by_cuda_major
from provisioner.plan import LOADER_HOOK, REMOVE_LOADER_HOOK, Request
from provisioner.planner import make_plan
from provisioner.standalone import loader_hook as hook


def test_load_order_puts_each_library_after_the_wheel_libraries_it_needs() -> None:
    index = {"libcublas.so.12": "/w/libcublas.so.12", "libcublasLt.so.12": "/w/libcublasLt.so.12",
             "libcudart.so.12": "/w/libcudart.so.12", "libcudnn.so.9": "/w/libcudnn.so.9"}  # fmt: skip
    needs = {"/w/libcublas.so.12": ["libcublasLt.so.12", "libc.so.6"], "/w/libcublasLt.so.12": ["libcudart.so.12"]}
    order = hook.load_order(
        ["libcublas.so.12", "libcuda.so.1", "libcudnn.so.9"],
        index,
        mapped={"libcudnn.so.9"},  # something else loaded it already: left alone
        needed_of=lambda path: needs.get(path, []),
    )
    assert [name for name, _ in order] == ["libcudart.so.12", "libcublasLt.so.12", "libcublas.so.12"]


def test_load_order_survives_cycles_and_unreadable_files() -> None:
    index = {"liba.so.1": "/w/a", "libb.so.1": "/w/b"}

    def needed_of(path: str) -> list[str]:
        if path == "/w/b":
            raise ValueError("not an ELF file")
        return ["libb.so.1", "liba.so.1"]

    assert hook.load_order(["liba.so.1"], index, set(), needed_of) == [("libb.so.1", "/w/b"), ("liba.so.1", "/w/a")]


def test_wheel_libraries_and_the_cuda_major(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for folder, name in (("nvidia/cu13/lib", "libcublas.so.13"), ("nvidia/cudnn/lib", "libcudnn.so.9"),
                         ("tensorrt_libs", "libnvinfer.so.10"), ("nvidia/cu13/include", "cublas.h")):  # fmt: skip
        (site / folder).mkdir(parents=True, exist_ok=True)
        (site / folder / name).write_bytes(b"")
    found = hook.wheel_libraries([str(tmp_path / "missing"), str(site)])
    assert set(found) == {"libcublas.so.13", "libcudnn.so.9", "libnvinfer.so.10"}
    package = site / "onnxruntime"
    (package / "capi").mkdir(parents=True)
    assert hook.cuda_major(str(package), ["libcudart.so.12"]) == "12"  # no build info: from what it links
    (package / "capi" / "build_and_package_info.py").write_text("cuda_version = '13.0'\n")
    assert hook.cuda_major(str(package), ["libcudart.so.12"]) == "13"


def test_windows_puts_the_wheel_dll_folders_on_the_search_path(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    site = tmp_path / "Lib" / "site-packages"
    for folder in ("nvidia/cublas/bin", "nvidia/cu13/bin/x86_64", "nvidia/cudnn/bin", "nvidia/cuda_nvcc/bin"):
        (site / folder).mkdir(parents=True)
    for dll in ("nvidia/cublas/bin/cublasLt64_12.dll", "nvidia/cu13/bin/x86_64/cudart64_13.dll",
                "nvidia/cudnn/bin/cudnn64_9.dll"):  # fmt: skip
        (site / dll).write_bytes(b"MZ")
    import os

    added: list[str] = []
    monkeypatch.setattr(os, "add_dll_directory", added.append, raising=False)
    monkeypatch.setattr(os, "pathsep", ";")
    monkeypatch.setenv("PATH", "C:\\Windows")
    monkeypatch.setattr(hook, "STATUS", dict(hook.STATUS, state="waiting", folders=[]))
    hook.prepare_windows([str(site)])
    folders = [str(site / f) for f in ("nvidia/cu13/bin/x86_64", "nvidia/cublas/bin", "nvidia/cudnn/bin")]
    assert sorted(added) == sorted(folders)  # cuda_nvcc/bin holds no DLL: left out
    path = os.environ["PATH"].split(";")
    assert path[-1] == "C:\\Windows" and sorted(path[:-1]) == sorted(folders)
    assert hook.STATUS["state"] == "loaded"


def test_windows_puts_tensorrt_wheel_and_folder_dlls_on_the_search_path(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """TensorRT's wheel (tensorrt_libs/nvinfer_10.dll) and a --tensorrt-libraries folder are found on Windows too:
    the TensorRT provider DLL imports nvinfer_10.dll, which Windows looks for only on the DLL search path."""
    site = tmp_path / "Lib" / "site-packages"
    (site / "nvidia/cublas/bin").mkdir(parents=True)
    (site / "nvidia/cublas/bin/cublas64_12.dll").write_bytes(b"MZ")
    (site / "tensorrt_libs").mkdir()
    (site / "tensorrt_libs/nvinfer_10.dll").write_bytes(b"MZ")
    outside = tmp_path / "TensorRT-10.16" / "lib"
    outside.mkdir(parents=True)
    (outside / "nvonnxparser_10.dll").write_bytes(b"MZ")
    empty = tmp_path / "empty"
    empty.mkdir()
    import os

    added: list[str] = []
    monkeypatch.setattr(os, "add_dll_directory", added.append, raising=False)
    monkeypatch.setattr(hook, "hook_table", lambda: {"tensorrt_folders": [str(outside), str(empty)]})
    monkeypatch.setattr(hook, "STATUS", dict(hook.STATUS, state="waiting", folders=[]))
    hook.prepare_windows([str(site)])
    assert added == [str(site / "nvidia/cublas/bin"), str(site / "tensorrt_libs"), str(outside)]


def test_the_hook_installs_itself_only_under_its_installed_name() -> None:
    import sys

    assert hook.OnnxruntimeImportWatcher not in sys.meta_path  # ortprov importing its own copy arms nothing


def test_hook_files_are_the_standalone_sources_and_the_matrix_table(tmp_path: Path) -> None:
    table = sonames_by_cuda_major(load_matrix())
    files = loader_hook.hook_files(table)
    assert files["_ortprov_loader/__init__.py"] == Path(hook.__file__).read_bytes()
    assert json.loads(files["_ortprov_loader/hook.json"])["sonames_by_cuda_major"]["13"] == list(table["13"])
    assert files["ortprov-loader.pth"].decode().startswith("import sys; exec(")
    site = tmp_path / "site"
    site.mkdir()
    assert loader_hook.pending(str(site), files) == sorted(files, key=list(files).index)
    assert loader_hook.write(str(site), files) and loader_hook.pending(str(site), files) == []
    assert loader_hook.write(str(site), files) == []  # idempotent
    assert sorted(loader_hook.remove(str(site))) == ["_ortprov_loader/", "ortprov-loader.pth"]
    assert not loader_hook.installed(str(site))


def test_sonames_by_cuda_major_cover_what_each_build_links_or_opens() -> None:
    matrix = load_matrix()
    table = sonames_by_cuda_major(matrix)
    for build in matrix.builds:
        wanted = {s for s in (*build.libraries_linked, *build.libraries_lazy) if not s.startswith("libcuda.so")}
        assert wanted <= set(table[str(build.cuda_major)]), build.label
    assert "libcudnn.so.9" in table["13"] and not any(s.startswith("libcuda.so") for s in table["12"])


H100 = PlanningOptions(driver="580.159.04", gpu_cc="9.0", python_version="3.12", platform="linux-x86_64")


def plan_for(request: Request, hook_installed: bool = False):  # noqa: ANN201
    (host,) = resolve_hosts(H100)
    if hook_installed:
        assert host.python is not None
        host = dataclasses.replace(host, python=dataclasses.replace(host.python, loader_hook="/v/ortprov-loader.pth"))
    return make_plan([host], load_matrix(), request)


def test_the_plan_installs_the_hook_with_the_wheels() -> None:
    plan = plan_for(Request())
    assert [s.kind for s in plan.steps] == ["install", LOADER_HOOK]
    assert "onnxruntime.preload_dlls()" in plan.steps[-1].description  # what code without ortprov does
    assert plan.to_dict()["install"] == list(plan.install)  # the hook is no requirement


def test_no_loader_hook_says_the_line_the_code_must_call() -> None:
    plan = plan_for(Request(loader_hook=False))
    assert [s.kind for s in plan.steps] == ["install"]
    assert any("--no-loader-hook" in n and "onnxruntime.preload_dlls()" in n for n in plan.notes)
    old = plan_for(Request(loader_hook=False, ort="1.20.0", cuda="12"))  # no preload_dlls() before 1.21
    assert any("LD_LIBRARY_PATH" in n and "'nvidia', '*', 'lib'" in n for n in old.notes)


def test_the_hook_goes_when_it_is_no_longer_wanted() -> None:
    system = plan_for(Request(cuda_libraries="system"), hook_installed=True)
    assert [s.kind for s in system.steps] == ["install", REMOVE_LOADER_HOOK]
    assert [s.kind for s in plan_for(Request(cuda_libraries="system")).steps] == ["install"]
    refused = plan_for(Request(loader_hook=False), hook_installed=True)
    assert refused.steps[-1].kind == REMOVE_LOADER_HOOK


@pytest.mark.parametrize("fmt", ["pip", "uv", "requirements"])
def test_recipes_say_how_plain_code_gets_the_libraries_without_ortprov(fmt: str) -> None:
    from provisioner.render import recipes

    text = recipes.render(plan_for(Request()), fmt, matrix=load_matrix())
    comments = " ".join(line[2:] for line in text.splitlines() if line.startswith("# "))
    assert "loader hook" in comments and "onnxruntime.preload_dlls()" in comments
    assert "_ortprov_loader" not in "\n".join(line for line in text.splitlines() if not line.startswith("#"))


def test_the_dockerfile_keeps_its_ld_so_conf_file_instead() -> None:
    from provisioner.render import recipes

    text = recipes.render(plan_for(Request()), "dockerfile", matrix=load_matrix())
    assert "--write-ld-conf" in text and "loader hook" not in text


def test_a_host_file_without_the_hook_field_still_loads() -> None:
    data = json.loads((Path(__file__).resolve().parents[1] / "hosts" / "h100-driver580.json").read_text())
    del data["python"]["loader_hook"]
    assert HostFacts.from_dict(data).python.loader_hook is None  # type: ignore[union-attr]


def test_status_records_a_failure_instead_of_raising(monkeypatch) -> None:  # noqa: ANN001
    def broken(paths: list[str]) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(hook, "prepare_linux", broken)
    monkeypatch.setattr(hook, "prepare_windows", broken)
    monkeypatch.setattr(hook, "STATUS", dict(hook.STATUS, state="waiting", error=None))
    hook.run([])
    assert hook.STATUS["state"] == "failed" and hook.STATUS["error"] == "RuntimeError: boom"


def test_the_module_namespace_is_standalone() -> None:
    """It runs in the target interpreter: it may import only the standard library and its sibling elf.py."""
    source = Path(hook.__file__).read_text()
    imports = {line.split()[1] for line in source.splitlines() if line.strip().startswith(("import ", "from "))}
    assert imports <= {"sys", "time", "os", "re", "json", "ctypes", ".", "collections.abc", "typing"}, imports
    assert isinstance(hook, types.ModuleType)
