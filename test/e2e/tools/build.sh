#!/usr/bin/env bash
# build.sh NAME [NAME...]: builds each pinned test tool and prints the path of its binary, one a line.
#
# A tool is a folder test/e2e/tools/NAME holding a go.mod (+ go.sum) that pins the
# module versions, a file PACKAGE naming the main package to build, and optionally an
# executable `prepare` hook (run with the tool folder as its working directory and
# $OUT as the binary to produce) for tools that need more than `go build`.
# Several tools may share one module: a folder holding a file MODULE (naming a sibling
# folder, e.g. `kube`) and a PACKAGE is built with that sibling's go.mod. A file LDFLAGS
# adds linker flags (e.g. the version a binary reports).
# Binaries are cached under ${PIPECTL_CACHE:-~/.cache/pipectl}/bin, keyed by a hash of the
# folder's files, so a second build of the same versions costs nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${PIPECTL_CACHE:-$HOME/.cache/pipectl}/bin
mkdir -p "$cache"
for name in "$@"; do
  dir=$here/$name
  [ -f "$dir/PACKAGE" ] || { echo "build.sh: no tool $name (want $dir/PACKAGE)" >&2; exit 2; }
  moddir=$dir
  [ -f "$dir/MODULE" ] && moddir=$here/$(cat "$dir/MODULE")
  [ -f "$moddir/go.mod" ] || { echo "build.sh: tool $name has no go.mod (looked in $moddir)" >&2; exit 2; }
  key=$( (cd "$dir" && find . -type f ! -name '*.tmp' | LC_ALL=C sort | xargs sha256sum
          [ "$moddir" = "$dir" ] || (cd "$moddir" && find . -type f ! -name '*.tmp' | LC_ALL=C sort | xargs sha256sum)) |
        sha256sum | cut -c1-16)
  out=$cache/$name-$key
  if [ ! -x "$out" ]; then
    # Test processes running at once may all ask for the same tool: one builds it,
    # the others wait for the lock and then find it built.
    exec 9>"$out.lock"
    flock 9
    if [ ! -x "$out" ]; then
      echo "build.sh: building $name (cached as $out)" >&2
      tmp="$out.tmp.$$"
      if [ -x "$dir/prepare" ]; then
        (cd "$dir" && OUT="$tmp" ./prepare) >&2
      else
        pkg=$(cat "$dir/PACKAGE")
        ldflags="-s -w"
        [ -f "$dir/LDFLAGS" ] && ldflags="$ldflags $(cat "$dir/LDFLAGS")"
        (cd "$moddir" && GOFLAGS="-mod=mod -buildvcs=false" go build -trimpath -ldflags="$ldflags" -o "$tmp" "$pkg") >&2
      fi
      mv "$tmp" "$out"
    fi
    exec 9>&-
  fi
  echo "$out"
done
