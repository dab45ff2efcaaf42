#!/usr/bin/env bash
# `ortprov tune` on the NVIDIA host (issue 21's proof: a faster GPU that gives the same answers), from the repo
# root, in about 7-8 minutes:
#
#   OUT=$OUT tests/gpu/prove_tune.sh
#
# Inputs (environment):
#   MODELS      a folder with ch_PP-OCRv4_det_infer.onnx and ch_PP-OCRv4_rec_infer.onnx (the models of the
#               rapidocr-onnxruntime 1.4.4 wheel on PyPI; carried in: there is no network). Default:
#               .device-cache/models/ of this checkout (ignored by git; carry it). RAPIDOCR_WHEEL=the wheel
#               instead: they are unpacked from it.
#   OUT         where the logs, the tune JSON and the table go ($OUT/tune-logs.tgz, $OUT/tune-table.md)
#   TORCH_PY    the target (default /opt/torch/.venv/bin/python3: torch 2.11, numpy, scipy, Pillow, and the CPU
#               onnxruntime 1.30.0, which ORT_SITE shadows)
#   ORT_SITE    a folder holding onnxruntime-gpu (pip install --no-deps --target), put first on PYTHONPATH
#               (default /tmp/site); ORT_WHEEL=the onnxruntime-gpu wheel installs it there when it is missing
#   DET_BUDGET  seconds for the detector's tune (default 180); REC_BUDGET for the recogniser's (default 90)
#   IMAGES      inputs per workload (default 24; a dry run elsewhere: IMAGES=3 DET_BUDGET=30 REC_BUDGET=30)
# Steps:
#  0. the target: onnxruntime-gpu in front, its providers, the GPU;
#  1. `ortprov tune` on the detector and on the recogniser (generated text pages / 48-pixel text lines), JSON
#     kept and rendered as text; every variant's outputs checked against the CPU's;
#  2. the workload outside ortprov (tests/gpu/tune_workload.py): the same inputs, each variant in a fresh
#     process, two passes timed, then the answers: text regions per page (detector), text per line (recogniser),
#     and tune's own check. Variants: the CPU, HEURISTIC, a CUDA graph per input shape, a session per input shape,
#     zero-padded to one shape, and the recommendation of step 1 (as the user pastes it);
#  3. the table, ready for benchmarks/RESULTS.md: $OUT/tune-table.md (printed at the end).
# Logs: docs/gpu/h100-tune-s5-*.txt (and the JSON), each copied to $OUT as soon as it is written (a run cut short
# still brings back what it did), all packed into $OUT/tune-logs.tgz at the end.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
# shellcheck source=tests/gpu/common.sh
. tests/gpu/common.sh
ORT_SITE=${ORT_SITE:-/tmp/site}
MODELS=${MODELS:-$PWD/.device-cache/models}
DET_BUDGET=${DET_BUDGET:-180}
REC_BUDGET=${REC_BUDGET:-90}
IMAGES=${IMAGES:-24}
logs=docs/gpu
tag=h100-tune-s5
mkdir -p "$logs" "$OUT"

if [ -n "${RAPIDOCR_WHEEL:-}" ]; then
  MODELS=/tmp/ortprov-tune-models
  mkdir -p "$MODELS"
  "$TORCH_PY" - "$RAPIDOCR_WHEEL" "$MODELS" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for name in wheel.namelist():
        if name.endswith(".onnx"):
            with open(f"{sys.argv[2]}/{name.rsplit('/', 1)[-1]}", "wb") as out:
                out.write(wheel.read(name))
EOF
fi
DET=$MODELS/ch_PP-OCRv4_det_infer.onnx
REC=$MODELS/ch_PP-OCRv4_rec_infer.onnx
for model in "$DET" "$REC"; do
  [ -f "$model" ] || { echo "missing $model (set MODELS or RAPIDOCR_WHEEL)" >&2; exit 2; }
done
if [ ! -d "$ORT_SITE/onnxruntime" ] && [ -n "${ORT_WHEEL:-}" ]; then
  "$TORCH_PY" -m pip install -q --no-deps --target "$ORT_SITE" "$ORT_WHEEL" || exit 2
fi
# onnxruntime-gpu first, then the checkout (ortprov runs from it, with the target's interpreter)
export PYTHONPATH=$ORT_SITE:$PWD

RUN_LOGS=$logs/$tag-
RUN_ALSO=$OUT
tune() {  # tune NAME MODEL BUDGET: ortprov tune --json, its progress, then the JSON rendered as text
  local name=$1 model=$2 budget=$3
  { echo "\$ ortprov tune $model --python $TORCH_PY --budget $budget --json"; local t0=$SECONDS
    "$TORCH_PY" -m provisioner tune "$model" --python "$TORCH_PY" --budget "$budget" --json > "$logs/$tag-$name.json"
    echo "[exit $?, $((SECONDS - t0)) s]"; } 2>&1 | tee "$logs/$tag-$name-progress.txt"
  run "$name" "$TORCH_PY" -c "import json, sys; from provisioner.tune.report import TuneReport; \
from provisioner.tune.analysis import analyse; from provisioner.render.tune import render_tune; \
r = TuneReport.from_dict(json.load(open(sys.argv[1]))['report']); print(render_tune(r, analyse(r)))" \
    "$logs/$tag-$name.json"
  cp "$logs/$tag-$name.json" "$logs/$tag-$name-progress.txt" "$OUT/"
}

t_start=$SECONDS
run 0-target "$TORCH_PY" -c "import onnxruntime as o, os; print(o.__version__, o.__file__, o.get_device(), \
o.get_available_providers(), os.cpu_count(), 'cores')"
run 0-gpu nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv

tune det "$DET" "$DET_BUDGET"
tune rec "$REC" "$REC_BUDGET"

table=$OUT/tune-table.md
: > "$table"
for name in det rec; do
  model=$DET; [ "$name" = rec ] && model=$REC
  run "workload-$name" "$TORCH_PY" tests/gpu/tune_workload.py "$model" --images "$IMAGES" \
    --recommended "$logs/$tag-$name.json" --table "$table"
done
{ echo "## ortprov tune's verdicts"
  for name in det rec; do
    echo; echo "$name: $(grep -m1 '^verdict:' "$logs/$tag-$name.txt")"
  done
  echo; echo "(tests/gpu/prove_tune.sh, $((SECONDS - t_start)) s)"; } >> "$table"
cp "$table" "$logs/$tag-table.md"
tar czf "$OUT/tune-logs.tgz" "$logs"/$tag-*
echo
cat "$table"
echo "logs packed: $OUT/tune-logs.tgz; table: $table"
