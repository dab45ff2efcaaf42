#!/usr/bin/env bash
# apply's verdict on the NVIDIA host (issues 23, 26), from the repo root:
#
#   WHEEL=/root/ort-wheel/onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl OUT=$OUT \
#     tests/gpu/prove_apply_verdict.sh
#
# What the CPU machine cannot prove: with a driver, `ortprov apply` with the default flags runs the CUDA session
# inside its transaction and says so in its verdict (exit 0); --require-gpu-verify is then met (exit 0); the dry
# run lists the same commands and creates nothing; the target is read once, under the lock (a logging wrapper
# of the target interpreter counts the runs). CUDA outside site-packages is hidden (tests/gpu/hide_cuda.sh), as
# on a machine with a driver and nothing else. Logs: docs/gpu/h100-verdict-*.txt, packed into $OUT.
# Look for: 2-apply "[exit 0" and "verdict: installed and verified: a CUDA session ran on the GPU"; 3 the same
# with --require-gpu-verify ("already installed and verified"); 4 "nothing was changed (dry run)" and no
# /root/v-dry; 5 "probes: 1 full, 1 --where"; 6 the JSON verdict {"proven": "session", "unproven": null, ...}.
set -uo pipefail
cd "$(dirname "$0")/../.."
WHEEL=${WHEEL:?set WHEEL to the onnxruntime-gpu wheel}
OUT=${OUT:?set OUT}
# shellcheck source=tests/gpu/common.sh
. tests/gpu/common.sh
logs=docs/gpu
mkdir -p "$logs"
HIDE=tests/gpu/hide_cuda.sh
RUN_LOGS=$logs/h100-verdict-
checkout_python
O=(.venv/bin/python -m provisioner)

WH=/root/wh
h100_wheelhouse "$WH"

rm -rf /root/v1 /root/v-dry
run 2-apply "$HIDE" "${O[@]}" apply --wheelhouse "$WH" --venv /root/v1 --python 3.12 -y
run 3-apply-require-gpu "$HIDE" "${O[@]}" apply --wheelhouse "$WH" --venv /root/v1 --python 3.12 -y \
  --require-gpu-verify
run 4-dry-run "${O[@]}" apply --wheelhouse "$WH" --venv /root/v-dry --python 3.12 --dry-run
run 4-dry-run-created-nothing test ! -e /root/v-dry

# 5. how often apply runs the target interpreter: a wrapper that logs each run
printf '#!/bin/sh\necho "$*" >> /root/probe.log\nexec /root/v1/bin/python "$@"\n' > /root/logpy
chmod +x /root/logpy
rm -f /root/probe.log
"${O[@]}" apply --wheelhouse "$WH" --python /root/logpy -y --no-verify > /dev/null 2>&1
full=$(grep -c 'packages_probe.py$' /root/probe.log); where=$(grep -c -- '--where' /root/probe.log)
run 5-probes echo "probes: $full full, $where --where ($(wc -l < /root/probe.log) runs in all, installers included)"

run 6-json "$HIDE" "${O[@]}" apply --wheelhouse "$WH" --venv /root/v1 --python 3.12 -y --json
tar czf "$OUT/verdict-logs.tgz" "$logs"/h100-verdict-*
echo "logs packed: $OUT/verdict-logs.tgz"
