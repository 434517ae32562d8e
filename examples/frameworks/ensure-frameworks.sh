#!/usr/bin/env bash
# ensure-frameworks.sh: make sure this machine has what the framework
# examples run: Open MPI's mpirun, and a python3 that imports numpy, mpi4py
# and xgboost. Prints a directory whose python3 is that interpreter (prepend
# it to PATH).
#
# Tries the python3 on PATH, then /usr/bin/python3; when Debian packages are
# missing, installs openmpi-bin, python3-mpi4py, python3-xgboost and
# python3-numpy (apt-get, as root or through sudo). Elsewhere: install Open
# MPI, mpi4py, xgboost 1.7+ and numpy, and run this again.
set -euo pipefail
has_all() { command -v mpirun >/dev/null 2>&1 && "$1" -c 'import numpy, mpi4py, xgboost' >/dev/null 2>&1; }

py=""
for cand in "$(command -v python3 || true)" /usr/bin/python3; do
  if [ -n "$cand" ] && [ -x "$cand" ] && has_all "$cand"; then py=$cand; break; fi
done
if [ -z "$py" ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-frameworks: no mpirun or no python3 with numpy, mpi4py and xgboost, and no apt-get here; install them and retry" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  echo "ensure-frameworks: installing Debian's openmpi-bin, python3-mpi4py, python3-xgboost (once)" >&2
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 openmpi-bin python3-mpi4py python3-xgboost python3-numpy >&2
  py=/usr/bin/python3
  has_all "$py" || { echo "ensure-frameworks: $py still cannot import numpy, mpi4py and xgboost (or no mpirun)" >&2; exit 1; }
fi
dir=${PIPECTL_CACHE:-$HOME/.cache/pipectl}/frameworks-python
mkdir -p "$dir"
ln -sf "$py" "$dir/python3"
echo "$dir"
