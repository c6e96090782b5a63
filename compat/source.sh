#!/usr/bin/env bash
# source.sh: prints the directory of CPython's Lib/test from the runtime's
# own pinned source, which the runtime's build script fetches (by Debian
# source package name, checked by sha256, cached in its download
# directory). It is unpacked once under DIR (default: codeport/compat in
# the user's cache directory); make compat runs it.
#
#   compat/source.sh [DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/codeport/compat}
tarball=$("$here/../adapters/wasm/internal/cpython/runtime/build.sh" --fetch-source python3.13)
name=$(basename "$tarball")
name=${name%.tar.*}
lib=$dir/$name/Lib/test
if [ ! -f "$lib/regrtest.py" ]; then
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/.unpack.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  tar -xf "$tarball" -C "$tmp" --strip-components=1 --no-same-owner --wildcards '*/Lib/test/*'
  rm -rf "${dir:?}/$name"
  mv "$tmp" "$dir/$name"
  trap - EXIT
fi
echo "$lib"
