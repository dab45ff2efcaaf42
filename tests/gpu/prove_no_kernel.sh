#!/usr/bin/env bash
# A GPU the build has no code for, on the NVIDIA host (issue 20's proof), from the repo root, in about 2 minutes:
#
#   OUT=$OUT tests/gpu/prove_no_kernel.sh
#
# onnxruntime-gpu 1.31.1 (Linux x86_64) holds kernels for sm_75 80 86 89 90a 120a and no PTX (matrices/, read by
# bin/derive_release.py). With CUDA_FORCE_PTX_JIT=1 the driver ignores every cubin and runs only PTX, JIT-compiled:
# a wheel without PTX then behaves on the H100 as on a GPU it has no kernels for (a B200, a GB10). cuBLAS fails first
# there (`CUBLAS failure 14` at `cublasCreate`), before onnxruntime's own kernels ("no kernel image is available").
#
# Inputs (environment):
#   OUT       where the logs go ($OUT/no-kernel-*.txt, packed into $OUT/no-kernel-logs.tgz)
#   WHEEL     the onnxruntime-gpu 1.31.1 wheel (default: the one in ~/ort-wheel/)
#   TORCH_PY  the interpreter (default /opt/torch/.venv/bin/python3: torch 2.11 cu130's CUDA 13 wheels, the CPU
#             onnxruntime 1.30.0, which the wheel is put in front of with --target + PYTHONPATH, as
#             shared/notes/gpu-host.md says; nothing in that venv changes)
# Steps (each log keeps its command, output and exit code):
#  0. the wheel in /tmp/site; what ortprov knows of it (matrix show) and plans for this host and for a B200;
#  1. control: a plain user session (tests/gpu/plain_user_script.py, no preload, no torch) on the H100: CUDA;
#  2. the same with CUDA_FORCE_PTX_JIT=1: what the user's own code says (its log is step 5's input);
#  3. `ortprov verify` (text and JSON) under CUDA_FORCE_PTX_JIT=1;
#  4. `ortprov doctor` (text and JSON) under CUDA_FORCE_PTX_JIT=1, the live session included;
#  5. `ortprov doctor --log` on step 2's captured log (text and JSON), and on the same log with the GPU named.
#  6-9. with VENV=DIR (a venv `ortprov apply` made from a wheelhouse, e.g. /root/v1 of prove_apply_verdict.sh):
#     the same in it, under tests/gpu/hide_cuda.sh (only the NVIDIA wheels' libraries, as a user without a
#     toolkit has): the plain session without and with CUDA_FORCE_PTX_JIT=1, verify, doctor, doctor --log. The
#     --target overlay of steps 1-5 shows both flavours to verify and doctor; a venv shows what a user has.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
# shellcheck source=tests/gpu/common.sh
. tests/gpu/common.sh
WHEEL=${WHEEL:-$(ls ~/ort-wheel/onnxruntime_gpu-1.31.1-*.whl 2>/dev/null | head -1)}
[ -f "$WHEEL" ] || { echo "no onnxruntime-gpu 1.31.1 wheel: set WHEEL" >&2; exit 2; }
mkdir -p "$OUT"
MODEL=provisioner/verify/models/check.onnx
SITE=/tmp/site
RUN_LOGS=$OUT/no-kernel-
# ortprov from this checkout, run by the torch interpreter (typer, pyyaml, requests are there); the target sees the
# GPU wheel first through PYTHONPATH (inherited by ortprov's child processes in the target)
O=(env "PYTHONPATH=$SITE:$PWD" "$TORCH_PY" -m provisioner)
USER_PY=(env "PYTHONPATH=$SITE" "$TORCH_PY")

rm -rf "$SITE"
run 0-install "$TORCH_PY" -m pip install --no-deps --no-index --target "$SITE" "$WHEEL"
run 0-sha256 sha256sum "$WHEEL"
run 0-matrix-show "${O[@]}" matrix show --ort 1.31.1 --json
run 0-plan-this-host "${O[@]}" plan --python "$TORCH_PY" -v
run 0-plan-b200 "${O[@]}" plan --driver 580.159.04 --gpu-cc 10.0 --python 3.12 --platform linux-x86_64 -v
run 0-detect "${O[@]}" detect --python "$TORCH_PY" --json

run 1-plain-control "${USER_PY[@]}" tests/gpu/plain_user_script.py "$MODEL"
run 2-plain-force-ptx env CUDA_FORCE_PTX_JIT=1 "${USER_PY[@]}" tests/gpu/plain_user_script.py "$MODEL"
run 2b-ort-verbose env CUDA_FORCE_PTX_JIT=1 "${USER_PY[@]}" -c "
import onnxruntime as ort, numpy as np
ort.set_default_logger_severity(0)
s = ort.InferenceSession('$MODEL', providers=['CUDAExecutionProvider'])
feeds = {i.name: np.ones([d if isinstance(d, int) else 1 for d in i.shape], np.float32) for i in s.get_inputs()}
print(s.get_providers()); s.run(None, feeds); print('ran')"

run 3-verify env CUDA_FORCE_PTX_JIT=1 "${O[@]}" verify --python "$TORCH_PY"
run 3b-verify-json env CUDA_FORCE_PTX_JIT=1 "${O[@]}" verify --python "$TORCH_PY" --json
run 4-doctor env CUDA_FORCE_PTX_JIT=1 "${O[@]}" doctor --python "$TORCH_PY"
run 4b-doctor-json env CUDA_FORCE_PTX_JIT=1 "${O[@]}" doctor --python "$TORCH_PY" --json

# the user's captured log, as they would paste it (without the command line and exit code the run() wrapper adds)
sed '1d;$d' "$OUT/no-kernel-2-plain-force-ptx.txt" > "$OUT/user-log.txt"
sed '1d;$d' "$OUT/no-kernel-2b-ort-verbose.txt" >> "$OUT/user-log.txt"
run 5-doctor-log "${O[@]}" doctor --log "$OUT/user-log.txt"
run 5b-doctor-log-json "${O[@]}" doctor --log "$OUT/user-log.txt" --json
{ cat "$OUT/user-log.txt"; echo "GPU 0: NVIDIA B200 (compute capability 10.0), driver 580.159.04"; } > "$OUT/user-log-b200.txt"
run 5c-doctor-log-named-gpu "${O[@]}" doctor --log "$OUT/user-log-b200.txt"

if [ -n "${VENV:-}" ]; then
  HIDE=tests/gpu/hide_cuda.sh
  VPY=$VENV/bin/python
  run 6-venv-plain-control "$HIDE" "$VPY" tests/gpu/plain_user_script.py "$MODEL"
  run 7-venv-plain-force-ptx "$HIDE" env CUDA_FORCE_PTX_JIT=1 "$VPY" tests/gpu/plain_user_script.py "$MODEL"
  run 8-venv-verify "$HIDE" env CUDA_FORCE_PTX_JIT=1 env "PYTHONPATH=$PWD" "$TORCH_PY" -m provisioner verify \
    --python "$VPY"
  run 8b-venv-verify-json "$HIDE" env CUDA_FORCE_PTX_JIT=1 env "PYTHONPATH=$PWD" "$TORCH_PY" -m provisioner verify \
    --python "$VPY" --json
  run 9-venv-doctor "$HIDE" env CUDA_FORCE_PTX_JIT=1 env "PYTHONPATH=$PWD" "$TORCH_PY" -m provisioner doctor \
    --python "$VPY"
  grep -v '^hide_cuda:' "$OUT/no-kernel-7-venv-plain-force-ptx.txt" | sed '1d;$d' > "$OUT/user-log-venv.txt"
  run 10-venv-doctor-log env "PYTHONPATH=$PWD" "$TORCH_PY" -m provisioner doctor --log "$OUT/user-log-venv.txt"
fi

tar -czf "$OUT/no-kernel-logs.tgz" -C "$OUT" $(cd "$OUT" && ls no-kernel-*.txt user-log*.txt)
echo "logs: $OUT/no-kernel-*.txt ($OUT/no-kernel-logs.tgz)"
