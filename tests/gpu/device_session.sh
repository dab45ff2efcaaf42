#!/usr/bin/env bash
# The whole GPU proof on the (offline) NVIDIA host, in one go, from the repo root:
#
#   WH=/root/wh OUT=/some/dir tests/gpu/device_session.sh
#
# WH holds the onnxruntime-gpu wheel, its small dependencies, the ortprov wheel and two plans made on a
# machine with network (see docs/gpu/README.md): plan-fresh.json (--cuda-libraries system: the host's CUDA 13
# toolkit and cuDNN 9) and plan-torch.json (planned from this host's probe: reuse torch's NVIDIA wheels).
#
#  1. ortprov installed from its wheel into its own tool venv (/opt/ortprov), then `ortprov detect`;
#  2. apply into a fresh venv (created by apply) from a wheelhouse, with the session verify;
#  3. verify / doctor proofs on that venv (tests/gpu/prove_verify_doctor.sh: shadowing, cuDNN hidden, bench);
#  4. apply into the existing torch environment where the CPU onnxruntime 1.30.0 sits: dry run, real, re-run;
#  5. the GPU pytest files and the start-up benchmark.
# Every log goes to docs/gpu/ and is packed into $OUT/gpu-logs.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
WH=${WH:?set WH to the wheelhouse folder}
OUT=${OUT:?set OUT to an output folder}
# shellcheck source=tests/gpu/common.sh
. tests/gpu/common.sh
logs=docs/gpu
mkdir -p "$logs"

RUN_LOGS=$logs/

# 1. the tool venv, installed from the wheel, offline
uv venv -q /opt/ortprov --python 3.12
uv pip install -q --python /opt/ortprov/bin/python --no-index --find-links "$WH/deps" "$WH"/deps/ortprov-*.whl
O=/opt/ortprov/bin/ortprov
run session-1-detect $O detect
# tests/gpu/prove_verify_doctor.sh and the GPU pytest files run ortprov as .venv/bin/python -m provisioner:
# here that is the torch interpreter (it has typer, pyyaml, pytest) with the checkout on PYTHONPATH
checkout_python

# 2. a fresh venv, from the wheelhouse, using the host's CUDA toolkit and cuDNN
mkdir -p /root/wh-fresh /root/wh-torch
for d in /root/wh-fresh /root/wh-torch; do ln -sf "$WH"/*.whl "$WH"/deps/*.whl "$d"/; done
cp "$WH/plan-fresh.json" /root/wh-fresh/plan.json
cp "$WH/plan-torch.json" /root/wh-torch/plan.json
run session-2-apply-fresh $O apply --wheelhouse /root/wh-fresh --venv /root/fresh --python 3.12 -y
run session-2b-apply-fresh-again $O apply --wheelhouse /root/wh-fresh --venv /root/fresh --python 3.12 -y

# 3. verify and doctor on the fresh venv: pass, CPU package shadowing, cuDNN hidden, benchmark
ORTPROV_GPU_PYTHON=/root/fresh/bin/python bash tests/gpu/prove_verify_doctor.sh > "$logs/session-3-prove.txt" 2>&1

# 4. the existing torch environment (CPU onnxruntime 1.30.0 next to torch 2.11 and its CUDA 13 wheels)
"$TORCH_PY" -m pip freeze --all > "$logs/session-4-torch-freeze-before.txt"
run session-4a-doctor-torch-before $O doctor --python "$TORCH_PY"
run session-4b-apply-torch-dry-run $O apply --wheelhouse /root/wh-torch --python "$TORCH_PY" --dry-run
run session-4c-apply-torch $O apply --wheelhouse /root/wh-torch --python "$TORCH_PY" -y
run session-4d-apply-torch-again $O apply --wheelhouse /root/wh-torch --python "$TORCH_PY" -y
run session-4e-verify-torch-json $O verify --python "$TORCH_PY" --json
run session-4f-doctor-torch-after $O doctor --python "$TORCH_PY"
run session-4g-torch-still-works "$TORCH_PY" -c "import torch; print(torch.__version__, torch.cuda.is_available())"
"$TORCH_PY" -m pip freeze --all > "$logs/session-4-torch-freeze-after.txt"
diff "$logs/session-4-torch-freeze-before.txt" "$logs/session-4-torch-freeze-after.txt" > "$logs/session-4-torch-freeze.diff"

# 5. GPU tests and start-up figures
run session-5a-pytest-gpu env ORTPROV_GPU_PYTHON=/root/fresh/bin/python .venv/bin/python -m pytest -p no:cacheprovider \
  -m gpu tests/gpu -q
run session-5b-bench-startup .venv/bin/python benchmarks/bench_cli_startup.py --runs 15
run session-5c-bench-verify-torch .venv/bin/python benchmarks/bench_verify.py --runs 5 --python "$TORCH_PY"

tar czf "$OUT/gpu-logs.tgz" "$logs"
echo "logs packed: $OUT/gpu-logs.tgz"
