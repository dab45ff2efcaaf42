#!/usr/bin/env bash
# The loader hook on the NVIDIA host, in one go, from the repo root (issue 10's proof):
#
#   WHEEL=/root/onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl OUT=$OUT tests/gpu/prove_loader_hook.sh
#
# Everything CUDA outside site-packages (the CUDA 13.0 toolkit, the system cuDNN 9.14) is hidden from the loader
# (tests/gpu/hide_cuda.sh), as on a machine with a driver and nothing else. Then:
#  1. a wheelhouse: the carried onnxruntime-gpu wheel, plus the torch venv's CUDA 13 NVIDIA wheels and small
#     dependencies rebuilt from their installed files (tests/gpu/repack_wheels.py: 1.6 GB cannot be carried);
#  2. `ortprov apply` into a fresh venv from it (offline), with its session verify;
#  3. a plain user script (tests/gpu/plain_user_script.py) in that venv: CUDA; the same with the hook's .pth
#     switched off: the CPU (the control); verify, verify --static and doctor;
#  4. the torch venv: the same plain script (no `import torch`) before and after `ortprov apply` there;
#  5. the GPU pytest files (before 4) and benchmarks/bench_loader_hook.py.
# Logs go to docs/gpu/h100-hook-*.txt and are packed into $OUT/hook-logs.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
WHEEL=${WHEEL:?set WHEEL to the onnxruntime-gpu wheel}
OUT=${OUT:?set OUT}
# shellcheck source=tests/gpu/common.sh
. tests/gpu/common.sh
logs=docs/gpu
mkdir -p "$logs"
HIDE=tests/gpu/hide_cuda.sh
MODEL=provisioner/verify/models/check.onnx
RUN_LOGS=$logs/h100-hook-
# ortprov from the checkout, run by the torch interpreter (typer, pyyaml, requests are there)
checkout_python
O=(.venv/bin/python -m provisioner)

WH=/root/wh
h100_wheelhouse "$WH"

# 2-3. a fresh venv
run 2-apply-fresh "$HIDE" "${O[@]}" apply --wheelhouse "$WH" --venv /root/fresh --python 3.12 -y
PTH=$(ls /root/fresh/lib/python3.12/site-packages/ortprov-loader.pth)
run 3-plain-fresh "$HIDE" /root/fresh/bin/python tests/gpu/plain_user_script.py "$MODEL"
mv "$PTH" "$PTH.off"
run 4-plain-fresh-hook-off "$HIDE" /root/fresh/bin/python tests/gpu/plain_user_script.py "$MODEL"
mv "$PTH.off" "$PTH"
run 5-verify-fresh "$HIDE" "${O[@]}" verify --python /root/fresh/bin/python
run 6-verify-static-fresh "$HIDE" "${O[@]}" verify --static --python /root/fresh/bin/python
run 7-doctor-fresh "$HIDE" "${O[@]}" doctor --python /root/fresh/bin/python
# the GPU tests, while the torch venv still holds its CPU onnxruntime (test_verify_gpu shadows with it)
run 8-pytest-gpu env ORTPROV_GPU_PYTHON=/root/fresh/bin/python .venv/bin/python -m pytest -p no:cacheprovider \
  -m gpu tests/gpu -q

# 4. the torch venv, used without `import torch`
run 9-plain-torch-before "$HIDE" "$TORCH_PY" tests/gpu/plain_user_script.py "$MODEL"
run 10-apply-torch "$HIDE" "${O[@]}" apply --wheelhouse "$WH" --python "$TORCH_PY" -y
run 11-plain-torch-after "$HIDE" "$TORCH_PY" tests/gpu/plain_user_script.py "$MODEL"
run 12-torch-still-works "$TORCH_PY" -c "import torch; print(torch.__version__, torch.cuda.is_available())"

# 5. figures
run 13-bench "$HIDE" .venv/bin/python benchmarks/bench_loader_hook.py --python /root/fresh/bin/python --runs 10
tar czf "$OUT/hook-logs.tgz" "$logs"/h100-hook-*
echo "logs packed: $OUT/hook-logs.tgz"
