#!/usr/bin/env bash
# The GPU proof for `ortprov verify` / `ortprov doctor` (issue 5), run as root on the H100 host from the repo root:
#
#   ORTPROV_GPU_PYTHON=/path/to/venv/bin/python tests/gpu/prove_verify_doctor.sh
#
# Writes docs/gpu/verify-doctor-*.txt (the logs kept in docs/), then runs tests/gpu/test_verify_gpu.py and
# the verify benchmark against the same interpreter.
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${ORTPROV_GPU_PYTHON:?set ORTPROV_GPU_PYTHON to a python with onnxruntime-gpu installed}
ORTPROV=(.venv/bin/python -m provisioner)
out=docs/gpu
mkdir -p "$out"
export NO_COLOR=1

run() {  # run NAME COMMAND...: keep the command, its output and its exit code
  local name=$1; shift
  { echo "\$ $*"; "$@" 2>&1; echo "[exit $?]"; } | tee "$out/verify-doctor-$name.txt"
}

run 1-verify "${ORTPROV[@]}" verify --python "$PY"
run 2-verify-json "${ORTPROV[@]}" verify --python "$PY" --json
run 3-doctor "${ORTPROV[@]}" doctor --python "$PY"
run 4-verify-static "${ORTPROV[@]}" verify --static --python "$PY"
run 5-cudnn-hidden-doctor tests/gpu/hide_cudnn.sh "${ORTPROV[@]}" doctor --python "$PY"
run 6-cudnn-hidden-static tests/gpu/hide_cudnn.sh "${ORTPROV[@]}" verify --static --python "$PY"
run 7-pytest env ORTPROV_GPU_PYTHON="$PY" .venv/bin/python -m pytest -m gpu tests/gpu/test_verify_gpu.py -v -s
run 8-bench .venv/bin/python benchmarks/bench_verify.py --runs 7 --python "$PY"
echo "logs: $out/verify-doctor-*.txt"
