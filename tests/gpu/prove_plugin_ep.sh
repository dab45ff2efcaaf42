#!/bin/bash
# Device run (issue 32): join the carried TensorRT-RTX EP 0.5.0 wheel, then on the H100:
# A. the EP's documented usage in the torch env (system CUDA 13.0 toolkit on the loader path), plain and hidden;
# B. ortprov verify --provider tensorrt-rtx in a venv with ortprov's loader hook, with the toolkit hidden.
set -u
# The wheel (146 MB) travels in three parts of 49 MB (shared/device/wheel-parts.sh split), one call each, carried as
# build/p00, build/p01, build/p02 (the last with this run): each call copies its part to /root/parts.
mkdir -p /root/parts && cp build/p0*/* /root/parts/ 2>/dev/null
bash ../shared/device/wheel-parts.sh join /root/parts /root/wheel 2>/dev/null || bash build/probe/wheel-parts.sh join /root/parts /root/wheel || exit 1
PY=/opt/torch/.venv/bin/python3
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
$PY -c "import onnxruntime as o; print('core', o.__version__)"
$PY -m pip install -q --no-deps --target /root/epsite /root/wheel/*.whl 2>&1 | tail -2
echo "== A1 plain (toolkit visible)"; PYTHONPATH=/root/epsite timeout 300 $PY tests/gpu/plugin_ep_probe.py plain 2>&1 | tail -12
echo "== A2 toolkit hidden"; PYTHONPATH=/root/epsite timeout 300 HIDE_CUDA_KEEP=/onnxruntime_ep_nv_tensorrt_rtx/ bash tests/gpu/hide_cuda.sh $PY tests/gpu/plugin_ep_probe.py hidden 2>&1 | tail -8
echo "== A3 toolkit hidden, bundled cudart preloaded"; PYTHONPATH=/root/epsite timeout 300 HIDE_CUDA_KEEP=/onnxruntime_ep_nv_tensorrt_rtx/ bash tests/gpu/hide_cuda.sh $PY tests/gpu/plugin_ep_probe.py hidden-preload-cudart 2>&1 | tail -12
# B: a venv that sees the torch env's packages (a .pth), the EP in its own site-packages, ortprov's hook
$PY -m venv --without-pip /root/v && SITE=$(/root/v/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
$PY -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > "$SITE/torch-env.pth"
cp -r /root/epsite/onnxruntime_ep_nv_tensorrt_rtx* "$SITE/"
PYTHONPATH=$PWD $PY -c "import sys; from provisioner.installer import hook_files as h; h.write(sys.argv[1], h.hook_files({}))" "$SITE"
echo "== B1 ortprov verify (hook, toolkit hidden)"; PYTHONPATH=$PWD timeout 400 HIDE_CUDA_KEEP=/onnxruntime_ep_nv_tensorrt_rtx/ bash tests/gpu/hide_cuda.sh $PY -m provisioner verify --python /root/v/bin/python --provider tensorrt-rtx --timeout 300 --json > ${OUT:-/tmp}/verify-hidden.json 2> ${OUT:-/tmp}/verify-hidden.err; echo rc=$?
$PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], [f['kind']+': '+f['message'][:300] for f in d['failures']]); p=d.get('plugin') or {}; print('registered', p.get('registered'), 'devices', p.get('devices')); print('checks', [(c['providers_session'], c.get('comparison'), c.get('error')) for c in d['checks']])" ${OUT:-/tmp}/verify-hidden.json || tail -5 ${OUT:-/tmp}/verify-hidden.err
echo "== B2 ortprov verify text"; PYTHONPATH=$PWD timeout 400 HIDE_CUDA_KEEP=/onnxruntime_ep_nv_tensorrt_rtx/ bash tests/gpu/hide_cuda.sh $PY -m provisioner verify --python /root/v/bin/python --provider tensorrt-rtx --timeout 300 2>&1 | tail -25
