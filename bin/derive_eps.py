"""Maintainer script: derive matrices/plugin-eps.yaml from PyPI (plugin execution provider packages and the CPU core).

Every fact an artifact holds is read by provisioner/matrix/epfacts.py (the same code `ortprov matrix update` runs):
versions, the variants' CUDA majors and platforms, the provider library, its DT_NEEDED and the libraries bundled
beside it, the EP name, Requires-Python, and the core minimum (Requires-Dist, else the documented
`pip install onnxruntime>=X` in the variant's METADATA). What no artifact says is FOLLOWED below, each with its
source, and carried into every release: which packages to follow, the GPUs the EP supports, the distributions it
must not share an environment with.

    /work/venv/bin/python bin/derive_eps.py           # print the YAML
    /work/venv/bin/python bin/derive_eps.py --write   # write matrices/plugin-eps.yaml (and compiled.json)

A maintainer script: not shipped in the wheel.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "matrices"
sys.path.insert(0, str(ROOT))

from provisioner.matrix.model import EpRelease, EpVariant  # noqa: E402

SUPPORT_MATRIX = "https://docs.nvidia.com/deeplearning/tensorrt-rtx/latest/getting-started/support-matrix.html"
GUIDE = "https://onnxruntime.ai/docs/execution-providers/TensorRTRTX-ExecutionProvider.html"
FOLLOWED = (
    EpRelease(
        package="onnxruntime-ep-nv-tensorrt-rtx",
        version="0",
        provider="tensorrt-rtx",
        ep_name="NvTensorRTRTXExecutionProvider",
        module="onnxruntime_ep_nv_tensorrt_rtx",
        core="onnxruntime",
        core_min="0",
        core_source="",
        variants=(
            EpVariant("onnxruntime-ep-nv-tensorrt-rtx-cu13", 13, ()),
            EpVariant("onnxruntime-ep-nv-tensorrt-rtx-cu12", 12, ()),
        ),
        conflicts=("onnxruntime-gpu",),
        conflicts_source=f"{GUIDE} (install the CPU onnxruntime core; uninstall onnxruntime-gpu)",
        compute_capabilities=("7.5", "8.6", "8.9", "12.0"),
        compute_capabilities_source=f"{SUPPORT_MATRIX} (Supported Compute Capability per Platform: Linux x86-64)",
    ),
)


def render(eps: tuple, cores: tuple, date: str) -> str:
    import yaml

    from provisioner.matrix.refresh import plain_record

    header = "# Written by bin/derive_eps.py (or `ortprov matrix update`); schema: docs/matrix.md.\n"
    body = {
        "schema_version": 1,
        "date": date,
        "eps": [plain_record(e) for e in eps],
        "cores": [plain_record(c) for c in cores],
    }
    return header + yaml.safe_dump(body, sort_keys=False, width=200)


def main() -> int:
    import requests

    from provisioner.matrix.derive import PYPI_SIMPLE
    from provisioner.matrix.epfacts import derive_all
    from provisioner.matrix.load import compile_directory

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write matrices/plugin-eps.yaml and compiled.json")
    parser.add_argument("--index-url", default=PYPI_SIMPLE)
    args = parser.parse_args()
    eps, cores = derive_all(requests.Session(), args.index_url, FOLLOWED)
    text = render(eps, cores, datetime.date.today().isoformat())
    if not args.write:
        print(text)
        return 0
    (DATA / "plugin-eps.yaml").write_text(text, encoding="utf-8")
    compile_directory(DATA)
    print(f"wrote {DATA / 'plugin-eps.yaml'}: {len(eps)} EP releases, {len(cores)} core releases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
