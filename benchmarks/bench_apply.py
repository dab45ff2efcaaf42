"""Time and bytes downloaded to a verified onnxruntime-gpu environment: `ortprov apply` vs plain pip.

Each scenario starts from nothing (a new venv, empty pip/uv caches, no pip config) and goes through a
counting proxy (benchmarks/counting_proxy.py), so "bytes" is what came over the network from PyPI.

  ortprov-uv   ortprov apply --venv V <planning flags> -y --verify-static      (uv, the default installer)
  ortprov-pip  same with --installer pip (the venv's own pip)
  plain-pip    python -m venv V && V/bin/pip install 'onnxruntime-gpu[cuda,cudnn]',
               then ortprov verify --static

Needs PyPI. Usage:
  .venv/bin/python benchmarks/bench_apply.py --driver 580.159.04 --gpu-cc 9.0 [--scenario ortprov-uv ...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from counting_proxy import CountingProxy  # noqa: E402

from tests.support.envs import clean_env, ortprov_argv  # noqa: E402

SCENARIOS = ("ortprov-uv", "ortprov-pip", "plain-pip")


def _run(argv: list[str], env: dict[str, str], log: Path) -> int:
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        return subprocess.run(argv, env=env, stdout=out, stderr=subprocess.STDOUT).returncode


def scenario(name: str, planning: list[str], work: Path) -> dict:
    work.mkdir(parents=True)
    venv = work / "venv"
    log = work / "log.txt"
    with CountingProxy() as proxy:
        env = clean_env(
            work,
            HTTPS_PROXY=proxy.url,
            HTTP_PROXY=proxy.url,
            https_proxy=proxy.url,
            http_proxy=proxy.url,
            NO_PROXY="127.0.0.1,localhost",
            UV_HTTP_RETRIES="3",
        )
        start = time.monotonic()
        if name.startswith("ortprov"):
            args = ["apply", "--venv", str(venv), *planning, "-y", "--verify-static", "--json"]
            if name == "ortprov-pip":
                args += ["--installer", "pip"]
            rc_install = _run(ortprov_argv(*args), env, log)
            installed_s = time.monotonic() - start
            rc_verify = rc_install
        else:
            rc_install = _run([sys.executable, "-m", "venv", str(venv)], env, log)
            rc_install = rc_install or _run(
                [str(venv / "bin/python"), "-m", "pip", "install", "onnxruntime-gpu[cuda,cudnn]"], env, log
            )
            installed_s = time.monotonic() - start
            rc_verify = _run(ortprov_argv("verify", "--static", "--python", str(venv / "bin/python")), env, log)
        total_s = time.monotonic() - start
        downloaded = proxy.bytes_in
    frozen = subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "freeze", "--all"], capture_output=True, text=True
    ).stdout.split()
    ort = [line for line in frozen if line.lower().startswith(("onnxruntime", "nvidia-"))]
    size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
    return {
        "scenario": name,
        "install_rc": rc_install,
        "verify_static_rc": rc_verify,
        "seconds_to_installed": round(installed_s, 1),
        "seconds_to_verified": round(total_s, 1),
        "bytes_downloaded": downloaded,
        "venv_bytes": size,
        "packages": ort,
        "log": str(log),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--driver", default="580.159.04")
    parser.add_argument("--gpu-cc", default="9.0")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS)
    parser.add_argument("--keep", action="store_true", help="keep the venvs")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-apply-"))
    results = []
    for name in args.scenario or SCENARIOS:
        result = scenario(name, ["--driver", args.driver, "--gpu-cc", args.gpu_cc], root / name)
        results.append(result)
        print(json.dumps(result), flush=True)
        if not args.keep:
            shutil.rmtree(root / name / "venv", ignore_errors=True)
            shutil.rmtree(root / name / "uv-cache", ignore_errors=True)
            shutil.rmtree(root / name / "pip-cache", ignore_errors=True)
    print("\n| scenario | to installed s | to verified s | downloaded MB | venv MB | verify --static |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['scenario']} | {r['seconds_to_installed']} | {r['seconds_to_verified']} | "
            f"{r['bytes_downloaded'] / 1e6:.0f} | {r['venv_bytes'] / 1e6:.0f} | "
            f"{'passed' if r['verify_static_rc'] == 0 else 'rc ' + str(r['verify_static_rc'])} |"
        )
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
