# shellcheck shell=bash
# Sourced (not run) by the tests/gpu scripts, from the repo root: the torch interpreter, the environment every run
# gets, and what each script did alike: `run`, ortprov from the checkout, the H100 wheelhouse.
# Set RUN_LOGS (a path prefix: "docs/gpu/h100-hook-") before `run`; with RUN_ALSO=DIR each log is copied there too.
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python3}
export NO_COLOR=1 PYTHONUNBUFFERED=1

run() {  # run NAME COMMAND...: keep the command, its output and its exit code in ${RUN_LOGS}NAME.txt
  local name=$1; shift
  { echo "\$ $*"; local t0=$SECONDS; "$@" 2>&1; local rc=$?; echo "[exit $rc, $((SECONDS - t0)) s]"; } \
    | tee "$RUN_LOGS$name.txt"
  if [ -n "${RUN_ALSO:-}" ]; then cp "$RUN_LOGS$name.txt" "$RUN_ALSO/"; fi
}

checkout_python() {  # .venv/bin/python: the torch interpreter (typer, pyyaml, requests) with the checkout on its path
  mkdir -p .venv/bin
  printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$PWD" "$TORCH_PY" > .venv/bin/python
  chmod +x .venv/bin/python
}

h100_wheelhouse() {  # h100_wheelhouse DIR: $WHEEL, the torch venv's CUDA 13 NVIDIA wheels and small dependencies
  # rebuilt from their installed files (tests/gpu/repack_wheels.py: 1.6 GB cannot be carried), and DIR/plan.json
  # for the H100 host; logs 0-repack and 1-plan. Needs O, ortprov's command (an array).
  local wh=$1
  mkdir -p "$wh"
  cp "$WHEEL" "$wh"/
  run 0-repack "$TORCH_PY" tests/gpu/repack_wheels.py "$wh" nvidia-cublas nvidia-cuda-nvrtc nvidia-cuda-runtime \
    nvidia-cudnn-cu13 nvidia-cufft nvidia-curand nvidia-nvjitlink numpy protobuf packaging flatbuffers
  "${O[@]}" plan --host tests/hosts/h100-driver580.json --json > "$wh/plan.json"
  run 1-plan "${O[@]}" plan --host tests/hosts/h100-driver580.json
}
