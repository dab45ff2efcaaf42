"""`ortprov matrix update` against a loopback index that honours Range requests (and one live PyPI run)."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from pathlib import Path

import pytest
import yaml

from provisioner.matrix.load import clear_memo, load_matrix, shipped_dir
from provisioner.matrix.query import builds_for
from provisioner.matrix.refresh import update_matrix
from tests.integration.range_index import RangeIndex
from tests.support.binaries import GPU_CODE, elf_library
from tests.support.cli import run_ortprov
from tests.support.wheels import WheelSpec, build_wheel

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).parent / "data" / "simple-onnxruntime-gpu.json"  # real PyPI answer, trimmed to 1.31.1
FILES = ("onnxruntime-gpu.yaml", "cuda.yaml", "nvidia-wheels.yaml", "tensorrt.yaml")
PROVIDER = "onnxruntime/capi/libonnxruntime_providers_cuda.so"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("ORTPROV_CACHE_DIR", str(directory))
    clear_memo()
    yield directory
    clear_memo()


def gpu_wheel(dest: Path, version: str, tag: str, cuda: str = "13.0", padding: int = 3_000_000) -> Path:
    """An onnxruntime-gpu wheel with the members update reads, plus MBs of padding it must not download."""
    return build_wheel(
        dest,
        WheelSpec(
            "onnxruntime-gpu",
            version,
            requires=(
                "numpy>=1.21.6",
                'nvidia-cuda-runtime~=13.0; extra == "cuda"',
                'nvidia-cufft~=12.0; extra == "cuda"',
                'nvidia-cudnn-cu13~=9.0; extra == "cudnn"',
            ),
            extras=("cuda", "cudnn"),
            files={
                "onnxruntime/__init__.py": "def preload_dlls(cuda=True, cudnn=True):\n    pass\n",
                "onnxruntime/capi/build_and_package_info.py": (
                    f"package_name = 'onnxruntime-gpu'\n__version__ = '{version}'\ncuda_version = '{cuda}'\n"
                ),
                # a real (tiny) CUDA provider: its GPU code and DT_NEEDED are what update reads from every wheel
                PROVIDER: elf_library(["libcublas.so.13", "libcudart.so.13", "libcuda.so.1", "libc.so.6"], GPU_CODE),
            },
            tag=tag,
            padding=padding,
        ),
    )


def index_page(server: RangeIndex, wheels: list[Path]) -> dict:
    """The recorded PyPI response, with our wheels added (URLs relative, as PyPI mirrors often send)."""
    page = json.loads(RECORDED.read_text())
    page["files"] = page["files"] + [
        {
            "filename": w.name,
            "url": f"../../files/{w.name}",
            "hashes": {},
            "requires-python": ">=3.11",
            "yanked": False,
        }
        for w in wheels
    ]
    return page


def test_update_adds_a_new_release_read_by_ranges(tmp_path: Path, cache: Path) -> None:
    files = tmp_path / "files"
    wheels = [
        gpu_wheel(files, "1.32.0", "cp312-cp312-manylinux_2_28_x86_64"),
        gpu_wheel(files, "1.32.0", "cp313-cp313t-manylinux_2_28_x86_64"),
        gpu_wheel(files, "1.32.0", "cp312-cp312-win_amd64"),
    ]
    with RangeIndex(files) as server:
        server.pages["onnxruntime-gpu"] = index_page(server, wheels)
        result = update_matrix(index_url=f"{server.url}/simple/", timeout=5, retries=0, today="2026-12-24")
        assert server.full_downloads == []
        for wheel in wheels[:2]:  # small members and the provider library are read, never the padding
            assert server.sent.get(wheel.name, 0) < 400_000 < 3_000_000 < wheel.stat().st_size
    assert result.status == "updated", result
    assert result.added == ("1.32.0",) and result.builds_after == result.builds_before + 1
    assert result.written_to == str(cache / "matrices")
    matrix = load_matrix()
    assert matrix.origin == str(cache / "matrices") and matrix.date == "2026-12-24"
    (build,) = builds_for(matrix, "1.32.0")
    assert (build.cuda_version, build.cudnn_version, build.index_url) == ("13.0", "9", None)
    assert build.python == ("3.12", "3.13t") and build.extras == ("cuda", "cudnn") and build.preload_dlls
    assert {p.platform: p.glibc_min for p in build.platforms} == {
        "linux-x86_64": "2.28",
        "windows-amd64": None,
    }
    assert "nvidia-cudnn-cu13~=9.0" in build.requirements and build.confirmed
    # what each platform's wheels hold, read the way bin/derive_release.py reads it
    linux = build.wheel_platform("linux-x86_64")
    assert linux is not None and linux.python == ("3.12", "3.13t") and linux.wheels_alike == 2
    cuda = linux.provider("cuda")
    assert cuda is not None and cuda.kernels == ("sm_75", "sm_90a", "sm_120a") and cuda.ptx == ("compute_90",)
    assert cuda.needs == ("libcublas.so.13", "libcudart.so.13", "libcuda.so.1", "libc.so.6")
    assert build.pythons_on("windows-amd64") == ("3.12",)
    assert len(matrix.builds) == len(load_matrix(use_cache=False).builds) + 1  # nothing lost


def test_unknown_cuda_version_is_skipped_not_written(tmp_path: Path, cache: Path) -> None:
    files = tmp_path / "files"
    wheels = [gpu_wheel(files, "1.33.0", "cp312-cp312-manylinux_2_28_x86_64", cuda="13.9", padding=0)]
    with RangeIndex(files) as server:
        server.pages["onnxruntime-gpu"] = index_page(server, wheels)
        result = update_matrix(index_url=f"{server.url}/simple/", timeout=5, retries=0)
    assert result.status == "unchanged" and result.added == ()
    assert any(s.startswith("1.33.0: ") and "13.9 has no CUDA release" in s for s in result.skipped)
    assert not (cache / "matrices").exists()


def test_good_cache_is_never_replaced_by_one_with_fewer_builds(tmp_path: Path, cache: Path) -> None:
    # A valid cache holding two extra releases but dated before the shipped data: load_matrix ignores it,
    # yet an update that would only add one release must not overwrite it.
    files = tmp_path / "files"
    existing = cache / "matrices"
    existing.mkdir(parents=True)
    shipped = yaml.safe_load((shipped_dir() / "onnxruntime-gpu.yaml").read_text())
    newest = next(b for b in shipped["builds"] if b["ort_version"] == "1.31.1" and not b.get("index_url"))
    shipped["builds"] += [dict(newest, ort_version="1.32.0"), dict(newest, ort_version="1.33.0")]
    shipped["date"] = "2025-01-01"
    (existing / "onnxruntime-gpu.yaml").write_text(yaml.safe_dump(shipped, sort_keys=False))
    for name in FILES[1:]:
        (existing / name).write_text((shipped_dir() / name).read_text().replace("2026-11-22", "2025-01-01"))
    before = {name: (existing / name).read_text() for name in FILES}
    wheels = [gpu_wheel(files, "1.32.0", "cp312-cp312-manylinux_2_28_x86_64", padding=0)]
    with RangeIndex(files) as server:
        server.pages["onnxruntime-gpu"] = index_page(server, wheels)
        result = update_matrix(index_url=f"{server.url}/simple/", timeout=5, retries=0)
    assert result.status == "kept" and "has more builds" in result.notices[0]
    assert {name: (existing / name).read_text() for name in FILES} == before


def test_retries_transient_server_errors(tmp_path: Path, cache: Path) -> None:
    files = tmp_path / "files"
    wheels = [gpu_wheel(files, "1.32.0", "cp312-cp312-manylinux_2_28_x86_64", padding=0)]
    with RangeIndex(files) as server:
        server.pages["onnxruntime-gpu"] = index_page(server, wheels)
        server.fail_next = 2
        result = update_matrix(index_url=f"{server.url}/simple/", timeout=5, retries=2)
    assert result.status == "updated" and result.added == ("1.32.0",)


def test_offline_falls_back_to_shipped_data_with_a_notice(tmp_path: Path, cache: Path) -> None:
    # a port nothing listens on: take one from a server we then close
    with RangeIndex(tmp_path) as server:
        dead = server.url
    result = run_ortprov(
        "matrix", "update", "--index-url", f"{dead}/simple/", "--timeout", "2", "--retries", "0", cache=cache
    )
    assert result.returncode == 1
    assert "error: could not read the index" in result.stderr and "still using the shipped data from" in result.stderr
    assert "connection refused" in result.stderr and "HTTPConnectionPool" not in result.stderr  # our words
    assert "Traceback" not in result.stderr
    assert not (cache / "matrices").exists()
    shown = run_ortprov("matrix", "check", cache=cache)
    assert shown.returncode == 0 and "matrix OK (shipped" in shown.stdout


def test_cli_update_json(tmp_path: Path, cache: Path) -> None:
    files = tmp_path / "files"
    wheels = [gpu_wheel(files, "1.32.0", "cp312-cp312-manylinux_2_28_x86_64", padding=0)]
    with RangeIndex(files) as server:
        server.pages["onnxruntime-gpu"] = index_page(server, wheels)
        result = run_ortprov("matrix", "update", "--index-url", f"{server.url}/simple/", "--json", cache=cache)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "updated" and data["added"] == ["1.32.0"]
    again = run_ortprov("matrix", "show", "--ort", "1.32.0", "--json", cache=cache)
    assert json.loads(again.stdout)[0]["cuda_version"] == "13.0"


@pytest.mark.network
def test_live_update_from_pypi_reads_the_newest_release(tmp_path: Path, cache: Path) -> None:
    """Bounded: a cache lacking 1.31.1 makes update read just that release's wheels (a few MB of ranges)."""
    target = cache / "matrices"
    target.mkdir(parents=True)
    data = yaml.safe_load((shipped_dir() / "onnxruntime-gpu.yaml").read_text())
    shipped_build = next(b for b in data["builds"] if b["ort_version"] == "1.31.1" and not b.get("index_url"))
    data["builds"] = [b for b in data["builds"] if b["ort_version"] != "1.31.1"]
    (target / "onnxruntime-gpu.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    for name in FILES[1:]:
        (target / name).write_text((shipped_dir() / name).read_text())
    # the small members only: streaming the 16 wheels' provider libraries would move ~4 GB (bin/derive_release.py
    # and tests/integration/test_closure_pypi.py read real providers; the loopback tests above the same code)
    result = update_matrix(timeout=30, retries=2, limit=1, read_gpu_code=False)
    assert result.status == "updated" and result.added == ("1.31.1",)
    (build,) = [b for b in builds_for(load_matrix(), "1.31.1") if b.index_url is None]
    for key in (
        "cuda_version",
        "cudnn_version",
        "requirements",
        "libraries_linked",
        "libraries_lazy",
        "extras",
    ):
        assert json.loads(json.dumps(getattr(build, key))) == shipped_build.get(key, []), key


def test_quiet_hides_notes_never_the_error_and_verbose_adds_the_library_text(tmp_path: Path, cache: Path) -> None:
    with RangeIndex(tmp_path) as server:
        dead = server.url
    args = ("matrix", "update", "--index-url", f"{dead}/simple/", "--timeout", "2", "--retries", "0")
    quiet = run_ortprov(*args, "-q", cache=cache)
    assert quiet.returncode == 1
    assert [line for line in quiet.stderr.splitlines() if line.startswith("error:")] == [
        f"error: could not read the index {dead}/simple/onnxruntime-gpu/: connection refused: nothing listens at "
        "that host and port"
    ], quiet.stderr
    verbose = run_ortprov(*args, "-v", cache=cache)
    assert "detail: ConnectionError" in verbose.stderr and len(quiet.stderr) < 300


class _NotAnIndex(http.server.BaseHTTPRequestHandler):
    """A web server's default page: HTTP 200 and HTML for every path."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = b"<html><body><h1>It works!</h1><a href='/about'>about</a></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass


def test_a_page_that_is_not_an_index_is_not_a_current_matrix(cache: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotAnIndex)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        result = run_ortprov("matrix", "update", "--index-url", url, "--retries", "0", cache=cache)
        as_json = run_ortprov("matrix", "update", "--index-url", url, "--retries", "0", "--json", cache=cache)
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 1, result.stdout
    assert "current" not in result.stdout
    assert "answered HTTP 200 with a page that lists no file of onnxruntime-gpu (text/html" in result.stderr
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["status"] == "offline"
    assert not (cache / "matrices").exists()


def test_a_server_that_never_answers_is_not_silent(cache: Path) -> None:
    with socket.socket() as listener:  # accepts connections (the kernel does) and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/simple/"
        result = run_ortprov("matrix", "update", "--index-url", url, "--timeout", "1", "--retries", "1", cache=cache)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == f"reading: {url}onnxruntime-gpu/ (--timeout 1 s, --retries 1)", result.stderr
    assert lines[1].startswith("reading: no answer within 1 s (--timeout); try 2 of 2"), result.stderr
    assert "error: could not read the index" in result.stderr and "no answer within 1 s (--timeout) (2 tries)" in (
        result.stderr
    )


def ep_files(files: Path, version: str, core_min: str) -> list[Path]:
    """A TensorRT-RTX EP release shaped like 0.5.0: the meta package pinning its CUDA 13 variant, whose wheels
    hold the module (its EP name), the provider library (a real ELF: its DT_NEEDED) and a bundled runtime."""
    module = "onnxruntime_ep_nv_tensorrt_rtx"
    meta = build_wheel(
        files,
        WheelSpec(
            "onnxruntime-ep-nv-tensorrt-rtx", version, requires=(f"onnxruntime-ep-nv-tensorrt-rtx-cu13=={version}",)
        ),
    )
    init = (
        '_KNOWN_EP_NAME = "NvTensorRTRTXExecutionProvider"\n'
        '_EP_DLL_NAMES = ("libonnxruntime_providers_nv_tensorrt_rtx.so",)\n'
    )
    provider = elf_library(["libcudart.so.13", "libcuda.so.1", "libtensorrt_rtx.so.1", "libc.so.6"], b"")
    variant = [
        build_wheel(
            files,
            WheelSpec(
                "onnxruntime-ep-nv-tensorrt-rtx-cu13",
                version,
                requires=(f"onnxruntime>={core_min}",),
                files={
                    f"{module}/__init__.py": init,
                    f"{module}/libonnxruntime_providers_nv_tensorrt_rtx.so": provider,
                    f"{module}/libcudart.so.13.5.10": b"\x7fELF",
                    f"{module}/libtensorrt_rtx.so.1.8.0": b"\x7fELF",
                },
                tag=tag,
            ),
        )
        for tag in ("py3-none-manylinux_2_28_x86_64", "py3-none-win_amd64")
    ]
    return [meta, *variant]


def plain_page(wheels: list[Path] | list[str]) -> dict:
    names = [w if isinstance(w, str) else w.name for w in wheels]
    return {
        "meta": {"api-version": "1.0"},
        "files": [{"filename": n, "url": f"../../files/{n}", "hashes": {}} for n in names],
    }


def test_update_adds_a_new_plugin_ep_release_and_core_with_no_code_change(tmp_path: Path, cache: Path) -> None:
    """A local index serving a newer TensorRT-RTX EP (0.6.0, needing core >= 1.33) and a newer CPU core (1.33.0):
    both become rows, read from the wheels as bin/derive_eps.py reads them, and the planner then plans them."""
    from provisioner.facts import DriverInfo, Gpu, HostFacts, PlatformInfo, PythonInfo
    from provisioner.plan import Request
    from provisioner.planner import make_plan

    files = tmp_path / "files"
    shipped = load_matrix(use_cache=False)
    cores = [
        f"onnxruntime-{c.version}-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
        for c in shipped.core_releases
    ]
    cores += ["onnxruntime-1.33.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"]
    cores += ["onnxruntime-1.33.0-cp312-cp312-win_amd64.whl"]
    eps = ep_files(files, "0.6.0", "1.33")
    with RangeIndex(files) as server:
        server.pages["onnxruntime-gpu"] = index_page(server, [])
        server.pages["onnxruntime-ep-nv-tensorrt-rtx"] = plain_page(eps[:1])
        server.pages["onnxruntime-ep-nv-tensorrt-rtx-cu13"] = plain_page(eps[1:])
        server.pages["onnxruntime-ep-nv-tensorrt-rtx-cu12"] = plain_page(
            ["onnxruntime_ep_nv_tensorrt_rtx_cu12-0.5.0-py3-none-manylinux_2_28_x86_64.whl"]
        )
        server.pages["onnxruntime"] = plain_page(cores)
        result = update_matrix(index_url=f"{server.url}/simple/", timeout=5, retries=0, today="2026-12-24")
    assert result.status == "updated", result
    assert result.added == ("onnxruntime-ep-nv-tensorrt-rtx 0.6.0", "onnxruntime 1.33.0")
    matrix = load_matrix()
    new = next(e for e in matrix.ep_releases if e.version == "0.6.0")
    (cu13,) = new.variants
    assert (new.core_min, new.ep_name, new.default_variant) == (
        "1.33",
        "NvTensorRTRTXExecutionProvider",
        "onnxruntime-ep-nv-tensorrt-rtx-cu13",
    )
    assert cu13.platforms == ("linux-x86_64", "windows-amd64") and cu13.glibc_min == "2.28"
    assert cu13.needs[:3] == ("libcudart.so.13", "libcuda.so.1", "libtensorrt_rtx.so.1")
    assert cu13.bundled == ("libcudart.so.13.5.10", "libtensorrt_rtx.so.1.8.0")
    assert new.compute_capabilities == next(e for e in shipped.ep_releases if e.version == "0.5.0").compute_capabilities
    assert {e.version for e in shipped.ep_releases} < {e.version for e in matrix.ep_releases}  # nothing lost
    host = HostFacts(
        platform=PlatformInfo("linux", "x86_64", glibc="2.39"),
        driver=DriverInfo(present=True, version="580.95.05", cuda_version="13.0", source="flags"),
        python=PythonInfo(executable="python", version="3.12.3"),
        gpus=(Gpu(0, "RTX 4090", "8.9"),),
    )
    plan = make_plan([host], matrix, Request(provider="tensorrt-rtx"))
    assert plan.install == ("onnxruntime==1.33.0", "onnxruntime-ep-nv-tensorrt-rtx-cu13==0.6.0")
