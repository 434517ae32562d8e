#!/usr/bin/env bash
# ensure-torch.sh: make sure a python3 that can `import torch` exists, and
# print a directory whose python3 is that interpreter (prepend it to PATH).
#
# Tries, in order: the python3 on PATH, /usr/bin/python3; when neither has
# torch, installs Debian's python3-torch (apt-get, as root or through sudo)
# and uses /usr/bin/python3. Elsewhere: install PyTorch for your python3
# (e.g. `pip install torch numpy`) and run this again.
set -euo pipefail
has_torch() { "$1" -c 'import torch, numpy' >/dev/null 2>&1; }

py=""
for cand in "$(command -v python3 || true)" /usr/bin/python3; do
  if [ -n "$cand" ] && [ -x "$cand" ] && has_torch "$cand"; then py=$cand; break; fi
done
if [ -z "$py" ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-torch: no python3 with PyTorch found and no apt-get here; install PyTorch (pip install torch numpy) and retry" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  echo "ensure-torch: installing Debian's python3-torch (a few minutes, once)" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-torch python3-numpy >&2
  py=/usr/bin/python3
  has_torch "$py" || { echo "ensure-torch: $py still cannot import torch" >&2; exit 1; }
fi
dir=${PIPECTL_CACHE:-$HOME/.cache/pipectl}/torch-python
mkdir -p "$dir"
ln -sf "$py" "$dir/python3"
echo "$dir"
