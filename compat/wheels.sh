#!/usr/bin/env bash
# wheels.sh: prints a directory holding the pinned wheels that make
# compat's numpy and pandas slices need: numpy's and pandas' own (their
# test files; the versions the scientific runtime is built from) and
# pytest with what it and the tests import. pip fetches each by name and
# version, checked against the sha256 below, from a throwaway venv (the
# system's python3 may have no pip); the result is cached under DIR
# (default: codeport/compat in the user's cache directory).
#
#   compat/wheels.sh [DIR]
set -euo pipefail
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/codeport/compat}

# Pure-Python wheels, for any platform.
tools=(
  "pytest==8.3.5 c69214aa47deac29fad6c2a4f590b9c4a9fdb16a403176fe154b79c0b4d4d820"
  "pluggy==1.5.0 44e1ad92c8ca002de6377e165f3e0f1be63266ab4d554740532335b9d75ea669"
  "iniconfig==2.1.0 9deba5723312380e77435581c6bf4935c94cbfab9b1ed33ef8d238ea168eb760"
  "packaging==25.0 29572ef2b1f17581046b3a2227d5c611fb25ec70ca1ba8554b24b0e69331a484"
  "hypothesis==6.131.0 734959017e3ee4ef8f0ecb4e5169c8f4cf96dc83a997d2edf01fb5350f5bf2f4"
  "attrs==25.3.0 427318ce031701fea540783410126f03899a97ffc6f61596ad581ac2e40e3bc3"
  "sortedcontainers==2.4.0 a163dcaede0f1c021485e957a39245190e74249897e2ae4b2aa38595db237ee0"
)
# The test files' source: one fixed platform's wheels, whatever this
# machine is (only their .py files and data are used). The versions are
# the runtime's (adapters/wasm/internal/cpython/runtime/build.sh); the
# runner checks them against the session's.
sources=(
  "numpy==2.2.6 1bc23a79bfabc5d056d106f9befb8d50c31ced2fbc70eedb8155aec74a45798f"
  "pandas==2.2.3 f3a255b2c19987fbbe62a9dfd6cff7ff2aa9ccab3fc75218fd4b7530f01efa24"
)

key=$(printf '%s\n' "${tools[@]}" "${sources[@]}" | sha256sum | cut -c1-16)
out=$dir/wheels-$key
if [ ! -f "$out/.complete" ]; then
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/.wheels.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  requirements() {
    local p
    for p in "$@"; do
      echo "${p% *} --hash=sha256:${p#* }"
    done
  }
  requirements "${tools[@]}" >"$tmp/tools.txt"
  requirements "${sources[@]}" >"$tmp/sources.txt"
  python3 -m venv "$tmp/venv" >&2 ||
    { echo "wheels.sh: python3 -m venv failed (on Debian and Ubuntu, install python3-venv)" >&2; exit 1; }
  pip=("$tmp/venv/bin/python" -m pip download --no-deps --only-binary=:all: --require-hashes
    --disable-pip-version-check --no-input --quiet -d "$tmp/wheels")
  "${pip[@]}" -r "$tmp/tools.txt" >&2
  "${pip[@]}" --platform manylinux2014_x86_64 --python-version 3.13 --implementation cp --abi cp313 \
    -r "$tmp/sources.txt" >&2
  touch "$tmp/wheels/.complete"
  # Another run may have finished first: keep its directory.
  mv -T "$tmp/wheels" "$out" 2>/dev/null || [ -f "$out/.complete" ]
fi
echo "$out"
