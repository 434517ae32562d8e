#!/usr/bin/env bash
# ensure-torch.sh: make sure a python3 that can `import torch` exists, and
# print a directory whose python3 is that interpreter (prepend it to PATH).
#
# Tries, in order: the python3 on PATH, /usr/bin/python3; when neither has
# torch, installs Debian's python3-torch (apt-get, as root or through sudo)
# and uses /usr/bin/python3. Elsewhere: install PyTorch for your python3
# (e.g. `pip install torch numpy`) and run this again.
#
# With --settings FILE (make demo: pipectl.local.yaml at the top of the
# repository), when the python3 on PATH is not the one with torch, it also
# writes FILE, pipectl's settings for local runs of the pipelines below
# FILE's folder, putting that directory before PATH for their steps: the
# example then runs from the user's own shell as it does under make.
set -euo pipefail
settings=""
if [ "${1:-}" = --settings ]; then settings=${2:?--settings FILE}; fi
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
  cache=${PIPECTL_CACHE:-$HOME/.cache/pipectl}
  mkdir -p "$cache"
  log=$cache/apt-python3-torch.log
  # Quietly: the packages' output goes to $log, named when it fails.
  echo "ensure-torch: no python3 here can import torch: installing Debian's python3-torch and python3-numpy" >&2
  echo "ensure-torch: (once; a few hundred MB, minutes on a slow link; apt-get's output in $log)" >&2
  if ! { $sudo apt-get -o DPkg::Lock::Timeout=600 update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends python3-torch python3-numpy; } >"$log" 2>&1; then
    echo "ensure-torch: installing python3-torch failed; the last lines of $log:" >&2
    tail -n 15 "$log" | sed 's/^/  /' >&2
    exit 1
  fi
  echo "ensure-torch: installed python3-torch" >&2
  py=/usr/bin/python3
  has_torch "$py" || { echo "ensure-torch: $py still cannot import torch" >&2; exit 1; }
fi
dir=${PIPECTL_CACHE:-$HOME/.cache/pipectl}/torch-python
mkdir -p "$dir"
ln -sf "$py" "$dir/python3"
if [ -n "$settings" ] && [ "$py" != "$(command -v python3 || true)" ]; then
  want="# pipectl's settings for local runs of the pipelines in this folder and below.
# Written by examples/attrition/ensure-torch.sh (make demo): the python3 on PATH
# ($(command -v python3 || echo none)) cannot import torch; $py can.
path: [$dir]   # put before PATH in every step's environment"
  if [ "$(cat "$settings" 2>/dev/null)" != "$want" ]; then
    printf '%s\n' "$want" >"$settings"
    echo "ensure-torch: wrote $settings: local runs of the pipelines below its folder use $py as python3" >&2
  fi
elif [ -n "$settings" ]; then
  echo "ensure-torch: using $py, the python3 on PATH" >&2
fi
echo "$dir"
