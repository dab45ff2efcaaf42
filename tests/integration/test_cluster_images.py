"""Each class's Dockerfile, as `ortprov plan --kube-nodes ... --format dockerfile --output-dir DIR` writes it, builds
with buildah (its build-time library check included), and `ortprov verify --static` passes in the image.

The Dockerfiles are built unchanged; only where pip finds the packages differs: an /etc/pip.conf mounted into the
build points at a package index on 127.0.0.1 (tests/support/index_server.py) that serves, for every requirement
a class's plan pins, a small wheel of that name and version holding what the real one installs that the check
looks at: each shared library the matrix records for that wheel (matrices/wheel-files.yaml) as a real ELF file
with that soname, and onnxruntime-gpu's CUDA provider linked against the libraries the matrix says it links
(a real onnxruntime-gpu and its NVIDIA wheels are ~2 GB per class). The base is the local Debian 12 image of
test_recipes_real_tools.py (no registry is reachable here): Python 3.11, so the cluster is planned for 3.11.
The build machine is x86_64, so the cluster's classes here are x86_64 ones (T4 on 535, H100 on 580).
"""

from __future__ import annotations

import json
import re
import shutil
import stat
import uuid
from pathlib import Path

import pytest

from provisioner.matrix.load import load_matrix
from provisioner.matrix.query import find_build, wheel_files
from provisioner.plan import Plan
from tests.integration.test_recipes_real_tools import buildah, debian_base_image  # noqa: F401 - the fixture
from tests.support.cli import run_ortprov
from tests.support.elf import build_so
from tests.support.index_server import IndexServer
from tests.support.kube_nodes import H100, T4, gpu_node, node, node_list
from tests.support.wheels import WheelSpec, build_wheels

REPO = Path(__file__).resolve().parents[2]
STUB_INIT = (
    "__version__ = '{version}'\n"
    "def get_available_providers():\n    return ['CUDAExecutionProvider', 'CPUExecutionProvider']\n"
)


def _stub_wheels(plan: Plan, folder: Path) -> list[WheelSpec]:
    """A wheel for each requirement the plan installs: the libraries the matrix records for it, as real ELF files."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to make the stub libraries")
    matrix = load_matrix()
    build = find_build(matrix, plan.package, plan.ort_version, plan.cuda_version, plan.index_url)
    assert build is not None
    libs = folder / "libs"
    specs = []
    for requirement in plan.install:
        name, version = re.sub(r"\[.*\]", "", requirement).split("==")
        if name == plan.package:
            continue
        record = wheel_files(matrix, name, "linux-x86_64", version)
        files: dict[str, str | bytes] = {}
        for path in record.files if record else ():
            soname = path.rsplit("/", 1)[-1]
            if re.fullmatch(r"lib[\w.+-]+\.so(\.\d+)*", soname):
                files[path] = build_so(libs, soname).read_bytes()
        specs.append(WheelSpec(name, version, files=files))
    build_so(libs, "libcuda.so.1")  # to link against only: the driver supplies it at run time
    linked = [soname for soname in build.libraries_linked if soname]
    for soname in linked:
        if not (libs / soname).exists():
            build_so(libs, soname)
    provider = build_so(libs, "libonnxruntime_providers_cuda.so", linked, [libs])
    specs.append(
        WheelSpec(
            plan.package,
            plan.ort_version,
            extras=("cuda", "cudnn"),
            files={
                "onnxruntime/__init__.py": STUB_INIT.format(version=plan.ort_version),
                "onnxruntime/capi/__init__.py": "",
                "onnxruntime/capi/libonnxruntime_providers_cuda.so": provider.read_bytes(),
            },
        )
    )
    return specs


def _in_image(folder: Path, container: str) -> Path:
    """An interpreter for `ortprov verify --python`: the image's venv Python, run in the container, with this
    checkout's provisioner/ (the verify child and its check models) mounted at the same path."""
    script = folder / f"python-in-{container[:12]}"
    script.write_text(
        "#!/bin/sh\n"
        f"exec buildah --storage-driver vfs run --isolation chroot -v {REPO / 'provisioner'}:{REPO / 'provisioner'}:ro "
        f'{container} -- /opt/venv/bin/python "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.e2e
def test_each_class_dockerfile_builds_and_verify_static_passes_in_it(
    debian_base_image: str,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    nodes = tmp_path / "nodes.json"
    cluster = [gpu_node("t4-0", T4, "535.183.01"), gpu_node("h100-0", H100, "580.95.05"), node("cpu-0", {})]
    nodes.write_text(json.dumps(node_list(cluster)))
    planned = run_ortprov("plan", "--kube-nodes", str(nodes), "--python", "3.11", "--json")
    assert planned.returncode == 0, planned.stderr
    classes = json.loads(planned.stdout)["classes"]
    assert len(classes) == 2  # a 535 driver cannot run the CUDA 13 build of the H100 class
    out = tmp_path / "images"
    written = run_ortprov(
        "plan", "--kube-nodes", str(nodes), "--python", "3.11", "--format", "dockerfile", "--output-dir", str(out)
    )
    assert written.returncode == 0, written.stderr
    specs: dict[tuple[str, str], WheelSpec] = {}
    for entry in classes:
        for spec in _stub_wheels(Plan.from_dict(entry["plan"]), tmp_path / entry["name"]):
            specs[(spec.name, spec.version)] = spec
    wheels = tmp_path / "wheels"
    build_wheels(wheels, list(specs.values()))
    with IndexServer(wheels) as index:
        pip_conf = tmp_path / "pip.conf"
        pip_conf.write_text(f"[global]\nindex-url = {index.url}\n")
        for entry in classes:
            context = out  # every class's Dockerfile COPYs ortprov-check/ from the folder they were written to
            tag = f"localhost/ortprov-class-test:{uuid.uuid4().hex[:12]}"
            try:
                done = buildah(
                    "bud",
                    "--isolation",
                    "chroot",
                    "-v",
                    f"{pip_conf}:/etc/pip.conf:ro",
                    "--build-arg",
                    f"BASE_IMAGE={debian_base_image}",
                    "-f",
                    str(out / entry["dockerfile"]),
                    "-t",
                    tag,
                    str(context),
                )
                assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
                assert "ortprov check passed" in done.stdout
                assert f"onnxruntime-gpu[cuda,cudnn]=={entry['plan']['ort_version']}" in done.stdout
                container = buildah("from", tag).stdout.strip()
                try:
                    python = _in_image(tmp_path, container)
                    verified = run_ortprov("verify", "--static", "--python", str(python), "--json", timeout=600)
                    report = json.loads(verified.stdout)
                    assert verified.returncode == 0, (verified.stdout[-3000:], verified.stderr[-3000:])
                    assert report["ok"] and report["status"] == "passed" and report["mode"] == "static", report
                    found = {lib["soname"]: lib for lib in report["static"]["libraries"]}
                    assert all(
                        lib["status"] == "ok" and lib["source"] == "pip"
                        for soname, lib in found.items()
                        if soname != "libcuda.so.1"  # the driver's, at run time
                    ), found
                    assert {f"libcudart.so.{entry['plan']['cuda_version'].split('.')[0]}"} <= set(found)
                finally:
                    buildah("rm", container)
            finally:
                buildah("rmi", tag)
