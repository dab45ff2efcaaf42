#!/usr/bin/env bash
# Run a command with every CUDA/cuDNN user-space library hidden from the loader, EXCEPT those inside
# site-packages/nvidia (the NVIDIA pip wheels) and torch/lib. Root only (private mount namespace).
# Models a machine with a driver but no CUDA toolkit / system cuDNN: the NVIDIA-wheel path alone, which is
# the machine the pip recipe exists for (tests/gpu/hide_cudnn.sh hides cuDNN alone, everywhere).
#
#   tests/gpu/hide_cuda.sh COMMAND [ARGS...]
#   HIDE_CUDA_KEEP=/onnxruntime_ep_nv_tensorrt_rtx/ tests/gpu/hide_cuda.sh ...   also keeps the folders matching it
#   (a plugin EP's package: what its wheel bundles is its own, as the NVIDIA wheels' files are)
#
# Each shared folder holding such libraries (the CUDA toolkit, /usr/lib/x86_64-linux-gnu ...) gets an overlay
# whose upper layer deletes them; nothing on the machine changes, and it all ends with COMMAND.
set -euo pipefail
if [[ "${1:-}" != "--inside" ]]; then exec unshare --mount --propagation private "$0" --inside "$@"; fi
shift
pat='libcudnn*|libcublas*|libcudart*|libcurand*|libcufft*|libnvrtc*|libnvJitLink*|libcusparse*|libcusolver*|libnvblas*|libnvinfer*'
mapfile -t files < <(
  { find /lib /lib64 /usr /opt /root -xdev \( -name 'libcudnn*' -o -name 'libcublas*' -o -name 'libcudart*' -o -name 'libcurand*' \
      -o -name 'libcufft*' -o -name 'libnvrtc*' -o -name 'libnvJitLink*' -o -name 'libcusparse*' -o -name 'libcusolver*' \
      -o -name 'libnvblas*' -o -name 'libnvinfer*' \) \( -type f -o -type l \) 2>/dev/null || true
    ldconfig -p 2>/dev/null | awk '/libcudnn|libcublas|libcudart|libcurand|libcufft|libnvrtc|libnvJitLink/ {print $NF}'; } \
  | grep -v -e '/site-packages/nvidia/' -e '/site-packages/torch/lib/' -e "${HIDE_CUDA_KEEP:-^$}" | sort -u)
declare -A dirs=()
for f in "${files[@]}"; do [[ -e "$f" || -L "$f" ]] && dirs["$(dirname "$(readlink -f "$f")")"]=1 && dirs["$(dirname "$f")"]=1; done
scratch=$(mktemp -d /tmp/hide-cuda.XXXXXX); mount -t tmpfs tmpfs "$scratch"; n=0
for d in "${!dirs[@]}"; do
  n=$((n + 1)); mkdir -p "$scratch/u$n" "$scratch/w$n"
  if mount -t overlay overlay -o "lowerdir=$d,upperdir=$scratch/u$n,workdir=$scratch/w$n" "$d" 2>/dev/null; then
    (cd "$d" && shopt -s nullglob extglob && eval "rm -f -- @($pat)")
    echo "hide_cuda: cleared CUDA libs from $d" >&2
  else
    echo "hide_cuda: overlay refused on $d" >&2; exit 3
  fi
done
left=$(find -L /lib /lib64 /usr /opt /root -xdev \( -name 'libcudnn*.so*' -o -name 'libcublas*.so*' -o -name 'libcudart.so*' \) -type f 2>/dev/null \
  | grep -v -e '/site-packages/nvidia/' -e '/site-packages/torch/lib/' -e "${HIDE_CUDA_KEEP:-^$}" | head -3 || true)
if [[ -n "$left" ]]; then echo "hide_cuda: still visible: $left" >&2; exit 3; fi
exec "$@"
