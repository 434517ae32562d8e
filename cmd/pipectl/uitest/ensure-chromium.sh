#!/usr/bin/env bash
# ensure-chromium.sh: make sure a Chromium for headless browser tests exists,
# and print its path. Uses $PIPECTL_TEST_CHROMIUM, then chromium or
# chromium-browser on PATH; otherwise installs Debian's chromium (apt-get, as
# root or through sudo). Elsewhere: install Chromium and set
# PIPECTL_TEST_CHROMIUM to its path.
set -euo pipefail
if [ -n "${PIPECTL_TEST_CHROMIUM:-}" ]; then echo "$PIPECTL_TEST_CHROMIUM"; exit 0; fi
for cand in chromium chromium-browser; do
  if p=$(command -v "$cand"); then echo "$p"; exit 0; fi
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no chromium found and no apt-get here; install Chromium and set PIPECTL_TEST_CHROMIUM" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
echo "ensure-chromium: installing Debian's chromium (once)" >&2
# Other installs may hold the dpkg lock: wait for it rather than fail.
$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium >&2
command -v chromium
