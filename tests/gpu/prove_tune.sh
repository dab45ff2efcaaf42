#!/usr/bin/env bash
# `ortprov tune` on the NVIDIA host (issue 12's proof), from the repo root, in about 7-8 minutes, or in two
# halves of under 9 minutes each (PART=1, then PART=2; each packs its own logs):
#
#   RAPIDOCR_WHEEL=/root/rapidocr_onnxruntime-1.4.4-py3-none-any.whl OUT=$OUT tests/gpu/prove_tune.sh
#   RAPIDOCR_WHEEL=... OUT=$OUT PART=1 tests/gpu/prove_tune.sh   # steps 0, 1, 1b  -> $OUT/tune-logs-part1.tgz
#   RAPIDOCR_WHEEL=... OUT=$OUT PART=2 tests/gpu/prove_tune.sh   # steps 2, 3, 4, 5 -> $OUT/tune-logs-part2.tgz
#
# Inputs (environment):
#   RAPIDOCR_WHEEL  the rapidocr-onnxruntime 1.4.4 wheel from PyPI (carried in: there is no network); its
#                   models/ch_PP-OCRv4_det_infer.onnx is the workload, rec and cls get a short tune too
#   OUT             where the packed logs go ($OUT/tune-logs.tgz)
#   TORCH_PY        the target: a Python with onnxruntime-gpu 1.31.1 that runs CUDA sessions (default: the torch
#                   venv's, /opt/torch/.venv/bin/python3, after `ortprov apply` put the loader hook there, as in
#                   tests/gpu/prove_loader_hook.sh); ortprov itself runs from this checkout with it
#   BUDGET          seconds for the detection model's tune (default 240); REST_BUDGET for rec and cls (25 each)
#   PART            1 or 2: half of the steps (default: all)
#   HIDE=1          run everything under tests/gpu/hide_cuda.sh (the CUDA toolkit and system cuDNN hidden)
# Steps:
#  0. the target: onnxruntime, its providers, the GPU;
#  1. the report's phenomenon: the detection model over 24 image sizes (multiples of 32 in 480..1600), every image
#     once, twice over: CPU, CUDA EXHAUSTIVE (the default), the report's options (EXHAUSTIVE, kNextPowerOfTwo,
#     do_copy_in_default_stream), HEURISTIC, DEFAULT (tests/gpu/tune_workload.py);
#  1b. where the time goes (tests/gpu/shape_switch.py): CPU / EXHAUSTIVE / HEURISTIC, one shape repeated 10 times
#     (3 sizes), two seen shapes alternating 10 times, all images padded to one shape; an ONNX Runtime profile of
#     the alternating runs under EXHAUSTIVE, kernel time per op type;
#  2. `ortprov tune` on it (--budget), JSON kept, its text rendered from the JSON;
#  3. the recommendation measured on the same workload, beside the CPU (the report's options are in step 1);
#  4. short tunes of the recognition and classification models.
# Logs: docs/gpu/h100-tune-*.txt (and h100-tune-2-det.json), packed into $OUT/tune-logs.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
WHEEL=${RAPIDOCR_WHEEL:?set RAPIDOCR_WHEEL to rapidocr_onnxruntime-1.4.4-py3-none-any.whl}
OUT=${OUT:?set OUT}
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python3}
BUDGET=${BUDGET:-240}
PART=${PART:-all}
REST_BUDGET=${REST_BUDGET:-25}
IMAGES=${IMAGES:-24}  # a dry run elsewhere: IMAGES=2
logs=docs/gpu
mkdir -p "$logs"
export NO_COLOR=1 PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
WRAP=()
[ "${HIDE:-0}" = 1 ] && WRAP=(tests/gpu/hide_cuda.sh)
run() {  # run NAME COMMAND...: keep the command, its output and its exit code
  local name=$1; shift
  { echo "\$ $*"; local t0=$SECONDS; "$@" 2>&1; local rc=$?; echo "[exit $rc, $((SECONDS - t0)) s]"; } \
    | tee "$logs/h100-tune-$name.txt"
}
O=("${WRAP[@]}" "$TORCH_PY" -m provisioner)

MODELS=/tmp/ortprov-tune-models
rm -rf "$MODELS" && mkdir -p "$MODELS"
"$TORCH_PY" - "$WHEEL" "$MODELS" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for name in wheel.namelist():
        if name.endswith(".onnx"):
            with open(f"{sys.argv[2]}/{name.rsplit('/', 1)[-1]}", "wb") as out:
                out.write(wheel.read(name))
EOF
DET=$MODELS/ch_PP-OCRv4_det_infer.onnx
ls -la "$MODELS"

part() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }
if part 1; then
run 0-target "${WRAP[@]}" "$TORCH_PY" -c "import onnxruntime as o, os; print(o.__version__, o.get_device(), \
o.get_available_providers(), os.cpu_count(), 'cores')"
run 0-gpu nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
run 1-phenomenon "${WRAP[@]}" "$TORCH_PY" tests/gpu/tune_workload.py "$DET" --images "$IMAGES"
run 1b-shape-switch "${WRAP[@]}" "$TORCH_PY" tests/gpu/shape_switch.py "$DET" --images "$IMAGES" --repeat 10
fi
if part 2; then
{ echo "\$ ortprov tune $DET --python $TORCH_PY --budget $BUDGET --json"; t0=$SECONDS
  "${O[@]}" tune "$DET" --python "$TORCH_PY" --budget "$BUDGET" --json > "$logs/h100-tune-2-det.json"
  echo "[exit $?, $((SECONDS - t0)) s]"; } 2>&1 | tee "$logs/h100-tune-2-det-progress.txt"
run 2-det "$TORCH_PY" -c "import json, sys; from provisioner.tune.report import TuneReport; \
from provisioner.tune.analysis import analyse; from provisioner.render.tune import render_tune; \
r = TuneReport.from_dict(json.load(open(sys.argv[1]))['report']); print(render_tune(r, analyse(r)))" \
  "$logs/h100-tune-2-det.json"
run 3-recommended "${WRAP[@]}" "$TORCH_PY" tests/gpu/tune_workload.py "$DET" --images "$IMAGES" --only-recommended \
  --recommended "$logs/h100-tune-2-det.json"
run 4-rec "${O[@]}" tune "$MODELS/ch_PP-OCRv4_rec_infer.onnx" --python "$TORCH_PY" --budget "$REST_BUDGET"
run 5-cls "${O[@]}" tune "$MODELS/ch_ppocr_mobile_v2.0_cls_infer.onnx" --python "$TORCH_PY" --budget "$REST_BUDGET" \
  --shape x=6x3x48x192
fi
pack=$OUT/tune-logs.tgz
[ "$PART" = all ] || pack=$OUT/tune-logs-part$PART.tgz
tar czf "$pack" "$logs"/h100-tune-*
echo "logs packed: $pack"
