#!/usr/bin/env bash
# Run a command with every cuDNN library hidden from the dynamic loader, without changing the machine.
#
#   sudo tests/gpu/hide_cudnn.sh COMMAND [ARGS...]
#   e.g. sudo tests/gpu/hide_cudnn.sh .venv/bin/python -m provisioner doctor --python /tmp/ortgpu/bin/python
#
# How: a private mount namespace (unshare -m, needs root / CAP_SYS_ADMIN). In it,
#   - a folder that holds only cuDNN (pip's site-packages/nvidia/cudnn/lib) gets an empty tmpfs mounted over it;
#   - a shared folder (/lib/x86_64-linux-gnu, torch/lib, /usr/local/cuda/lib64 ...) gets an overlay whose upper
#     layer deletes the libcudnn* files (real "No such file" for the loader); where overlayfs is refused, each
#     file gets /dev/null bind-mounted over it instead (the loader then reports "file too short").
# Everything disappears with the namespace when COMMAND exits. Set HIDE_CUDNN_ROOTS to override where to look.
set -euo pipefail

if [[ "${1:-}" != "--inside-namespace" ]]; then
  if [[ $# -eq 0 ]]; then sed -n '2,13p' "$0"; exit 2; fi
  if [[ $(id -u) -ne 0 ]]; then echo "hide_cudnn.sh: needs root (unshare -m)" >&2; exit 77; fi
  exec unshare --mount --propagation private "$0" --inside-namespace "$@"
fi
shift

roots=${HIDE_CUDNN_ROOTS:-"/lib /lib64 /usr /opt /root /home /tmp /srv /workspace"}
mapfile -t files < <(
  { find $roots -xdev \( -name 'libcudnn*.so*' -o -name 'libcudnn*.a' \) \( -type f -o -type l \) 2>/dev/null || true
    ldconfig -p 2>/dev/null | awk '/libcudnn/ {print $NF}'; } | sort -u
)
if [[ ${#files[@]} -eq 0 ]]; then echo "hide_cudnn.sh: no libcudnn* found" >&2; fi

declare -A dirs=()
for f in "${files[@]}"; do [[ -e "$f" || -L "$f" ]] && dirs["$(dirname "$f")"]=1; done

scratch=$(mktemp -d /tmp/hide-cudnn.XXXXXX)
mount -t tmpfs tmpfs "$scratch"
n=0
for d in "${!dirs[@]}"; do
  n=$((n + 1))
  others=$(find "$d" -mindepth 1 -maxdepth 1 ! -name 'libcudnn*' -print -quit)
  if [[ -z "$others" ]]; then
    mkdir -p "$scratch/empty$n"
    mount --bind "$scratch/empty$n" "$d"
    echo "hide_cudnn.sh: emptied $d" >&2
    continue
  fi
  mkdir -p "$scratch/upper$n" "$scratch/work$n"
  if mount -t overlay overlay -o "lowerdir=$d,upperdir=$scratch/upper$n,workdir=$scratch/work$n" "$d" 2>/dev/null; then
    rm -f "$d"/libcudnn*
    echo "hide_cudnn.sh: removed libcudnn* from $d (overlay)" >&2
  else
    for f in "$d"/libcudnn*; do
      [[ -e "$f" ]] && mount --bind /dev/null "$f"
    done
    echo "hide_cudnn.sh: masked libcudnn* in $d with /dev/null" >&2
  fi
done

left=$(find -L $roots -xdev -name 'libcudnn*.so*' -type f -size +0 2>/dev/null | head -3 || true)
if [[ -n "$left" ]]; then echo "hide_cudnn.sh: still visible: $left" >&2; exit 3; fi
exec "$@"
