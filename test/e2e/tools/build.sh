#!/usr/bin/env bash
# build.sh NAME [NAME...]: builds each pinned test tool and prints the path of its binary, one a line.
#
# A tool is a folder test/e2e/tools/NAME holding a go.mod (+ go.sum) that pins the
# module versions, a file PACKAGE naming the main package to build, and optionally an
# executable `prepare` hook (run with the tool folder as its working directory and
# $OUT as the binary to produce) for tools that need more than `go build`.
# Several tools may share one module: a folder holding a file MODULE (naming a sibling
# folder, e.g. `kube`) and a PACKAGE is built with that sibling's go.mod: the packages its
# tools have in common (client-go, apimachinery, ...) are then compiled once, not once per
# tool. A file LDFLAGS adds linker flags (e.g. the version a binary reports). In the
# module's folder, a file TAGS holds build tags and a file ENV NAME=VALUE lines (e.g.
# CGO_ENABLED=0), both applied to the builds of all its tools (prepare hooks get the tags
# as $PIPECTL_TAGS and the ENV in their environment): tools built with different tags or
# cgo settings would each compile every package above the ones these change again.
# Binaries are cached under ${PIPECTL_CACHE:-~/.cache/pipectl}/bin, keyed by a hash of the
# folder's files and the build flags, so a second build of the same versions costs nothing.
#
# Flags: -trimpath, -ldflags='-s -w' (no symbol table or DWARF: a quicker link) and
# -gcflags=all=-l (no inlining: about 28% less compile CPU, the same programs, every
# optimisation but inlining kept; measured on etcd with an empty build cache: 71 s user
# by default, 51 s with -l). A prepare hook gets them as $PIPECTL_GCFLAGS and $PIPECTL_LDFLAGS.
#
# Missing tools are built PIPECTL_BUILD_JOBS (default 2) at a time: one tool's module
# downloads and single-threaded link then overlap another's compiling; the tools of one
# module are one job, built one after another in the order asked. Each job's output is
# printed as a block when it ends, with each build's wall time; the paths are printed in
# the order asked, and build.sh fails if any build failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${PIPECTL_CACHE:-$HOME/.cache/pipectl}/bin
jobs=${PIPECTL_BUILD_JOBS:-2}
export PIPECTL_GCFLAGS="all=-l" PIPECTL_LDFLAGS="-s -w"
mkdir -p "$cache"

# out NAME: the cached binary's path for the tool's current files.
out() {
  local name=$1 dir=$here/$1 moddir=$here/$1
  [ -f "$dir/PACKAGE" ] || { echo "build.sh: no tool $name (want $dir/PACKAGE)" >&2; return 2; }
  [ -f "$dir/MODULE" ] && moddir=$here/$(cat "$dir/MODULE")
  [ -f "$moddir/go.mod" ] || { echo "build.sh: tool $name has no go.mod (looked in $moddir)" >&2; return 2; }
  local key
  key=$( (echo "gcflags=$PIPECTL_GCFLAGS ldflags=$PIPECTL_LDFLAGS"
          cd "$dir" && find . -type f ! -name '*.tmp' | LC_ALL=C sort | xargs sha256sum
          [ "$moddir" = "$dir" ] || (cd "$moddir" && find . -type f ! -name '*.tmp' | LC_ALL=C sort | xargs sha256sum)) |
        sha256sum | cut -c1-16)
  echo "$cache/$name-$key"
}

# build NAME OUT: builds the tool into OUT unless it is there.
build() {
  local name=$1 out=$2 dir=$here/$1 moddir=$here/$1 envs=()
  [ -f "$dir/MODULE" ] && moddir=$here/$(cat "$dir/MODULE")
  [ -f "$moddir/ENV" ] && mapfile -t envs < <(grep -v '^[[:space:]]*\(#\|$\)' "$moddir/ENV")
  local tags=
  [ -f "$moddir/TAGS" ] && tags=$(grep -v '^[[:space:]]*#' "$moddir/TAGS" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
  # Test processes running at once may all ask for the same tool: one builds it,
  # the others wait for the lock and then find it built.
  exec 9>"$out.lock"
  flock 9
  if [ ! -x "$out" ]; then
    echo "build.sh: building $name (cached as $out)"
    local tmp="$out.tmp.$$.$name" began=$SECONDS
    if [ -x "$dir/prepare" ]; then
      (cd "$dir" && env "${envs[@]}" OUT="$tmp" PIPECTL_TAGS="$tags" ./prepare)
    else
      local pkg ldflags=$PIPECTL_LDFLAGS
      pkg=$(cat "$dir/PACKAGE")
      [ -f "$dir/LDFLAGS" ] && ldflags="$ldflags $(cat "$dir/LDFLAGS")"
      (cd "$moddir" && env "${envs[@]}" GOFLAGS="-mod=mod -buildvcs=false" go build -trimpath -tags="$tags" -gcflags="$PIPECTL_GCFLAGS" -ldflags="$ldflags" -o "$tmp" "$pkg")
    fi
    mv "$tmp" "$out"
    echo "build.sh: built $name in $((SECONDS - began)) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
  fi
  exec 9>&-
}

outs=()
for name in "$@"; do
  outs+=("$(out "$name")")
done

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# finish: waits for one job and prints its output as a block.
declare -A running=()
failed=0
finish() {
  local pid
  wait -n -p pid "${!running[@]}" && rc=0 || rc=$?
  local job=${running[$pid]}
  unset "running[$pid]"
  cat "$logs/$job" >&2
  if [ "$rc" -ne 0 ]; then
    echo "build.sh: building ${job//+/ } failed (exit $rc)" >&2
    failed=1
  fi
}
# build_each I...: builds the tools asked at those indices, one after another.
asked=("$@")
build_each() {
  local i
  for i in "$@"; do
    build "${asked[$i]}" "${outs[$i]}"
  done
}
# One job per module: the missing tools of a module build one after another, the first
# compiling the packages they share and the next finding them in the build cache (built
# at once, each would compile them).
declare -A members=() names=() seen=()
modules=()
for i in "${!asked[@]}"; do
  name=${asked[$i]}
  [ -x "${outs[$i]}" ] && continue
  [ -n "${seen[$name]:-}" ] && continue # named twice
  seen[$name]=1
  mod=$name
  [ -f "$here/$name/MODULE" ] && mod=$(cat "$here/$name/MODULE")
  [ -n "${members[$mod]:-}" ] || modules+=("$mod")
  members[$mod]+="$i "
  names[$mod]+="${names[$mod]:++}$name"
done
for mod in "${modules[@]}"; do
  job=${names[$mod]}
  while [ "${#running[@]}" -ge "$jobs" ]; do finish; done
  # shellcheck disable=SC2086 # members[$mod] is a list of indices
  build_each ${members[$mod]} >"$logs/$job" 2>&1 &
  running[$!]=$job
done
while [ "${#running[@]}" -gt 0 ]; do finish; done
[ "$failed" -eq 0 ] || exit 1
printf '%s\n' "${outs[@]}"
