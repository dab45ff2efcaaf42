#!/usr/bin/env bash
# The pycuda/TensorRT CUDA context clash next to onnxruntime, reproduced on the H100 host (issue 25), as root
# from the repo root, in under 2 minutes:
#
#   OUT=/some/folder tests/gpu/prove_ctx_clash.sh
#
# Needs: the torch venv's python (cuda-bindings 13, numpy; ORTPROV_GPU_PYTHON overrides), the onnxruntime-gpu
# 1.31.1 wheel in ~/ort-wheel/ (installed with --no-deps into $SITE, default /tmp/site, and put in front with
# PYTHONPATH: the torch env is not touched). Writes under $OUT:
#   ctx-clash-private.log / .json   a non-primary context (what `import pycuda.autoinit` makes) + onnxruntime
#   ctx-clash-primary.log / .json   the same with the primary context retained (pycuda.autoprimaryctx)
#   ctx-clash-doctor.txt            `ortprov doctor --log` on the private run's log
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${ORTPROV_GPU_PYTHON:-/opt/torch/.venv/bin/python3}
SITE=${SITE:-/tmp/site}
OUT=${OUT:?set OUT to the folder for the results}
MODEL=provisioner/verify/models/check.onnx
mkdir -p "$OUT"
export NO_COLOR=1
if [ ! -d "$SITE/onnxruntime" ]; then
  "$PY" -m pip install -q --no-deps --target "$SITE" ~/ort-wheel/*.whl || exit 1
fi
for kind in private primary; do
  echo "== $kind" | tee "$OUT/ctx-clash-$kind.log"
  PYTHONPATH="$SITE" timeout 50 "$PY" tests/gpu/ctx_clash_probe.py "$kind" --model "$MODEL" \
    >"$OUT/ctx-clash-$kind.json" 2> >(tee -a "$OUT/ctx-clash-$kind.log" >&2)
  echo "[exit $?]" | tee -a "$OUT/ctx-clash-$kind.log"
done
{ echo "\$ ortprov doctor --log ctx-clash-private.log"; PYTHONPATH="$PWD" "$PY" -m provisioner doctor --log "$OUT/ctx-clash-private.log"; echo "[exit $?]"; } \
  | tee "$OUT/ctx-clash-doctor.txt"
"$PY" - "$OUT" <<'PYEOF'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
for kind in ("private", "primary"):
    try:
        data = json.loads((out / f"ctx-clash-{kind}.json").read_text().strip().splitlines()[-1])
    except Exception as exc:  # noqa: BLE001
        print(f"{kind}: no result ({exc})"); continue
    keys = ("own_context_is_primary", "before_ort", "current_after_ort", "after_ort",
            "default_stream_after_ort", "late_module_on_own_stream", "after_push", "thread_no_push",
            "thread_pushed", "ort_in_thread", "after_ort_in_thread", "late_alloc_on_own_stream")
    print(kind + ": " + ", ".join(f"{k}={data.get(k)}" for k in keys))
    print("   failed calls: " + ("; ".join(data.get("failed_calls", [])) or "none"))
PYEOF
