#!/usr/bin/env bash
# sci-download: the tools' venv; the sdists, tarballs and wheels fetched.
#
# The build tools' venv, and every input of the scientific runtime fetched
# into the download cache and checked: the sdists, FreeType's, qhull's and
# OpenBLAS's orig tarballs, the pure-Python wheels.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=sci-lib.sh
. "$HERE/steps/sci-lib.sh"

# pinned_wheels DIR REQ PIN...: writes REQ, a requirements file of the
# PINs ("name==version SHA256" each) with their hashes, and has pip fetch
# those wheels into DIR (a cache: pip checks each against its hash).
pinned_wheels() {
  local dir=$1 req=$2 t
  shift 2
  mkdir -p "$dir"
  : >"$req"
  for t in "$@"; do
    echo "${t% *} --hash=sha256:${t#* }" >>"$req"
  done
  run_logged "$HOST_PYTHON" -m pip download --no-deps --only-binary=:all: --require-hashes \
    --no-cache-dir --disable-pip-version-check -d "$dir" -r "$req"
}

# The build tools' venv (fresh each run; the wheels are cached in
# $DL/sci-tools).
sci_tools() {
  fresh "$SCI"
  "$HOST_PYTHON" -m pip --version >/dev/null 2>&1 || die "$HOST_PYTHON has no pip (python3-pip)"
  pinned_wheels "$DL/sci-tools" "$SCI/requirements.txt" "${SCI_TOOLS[@]}"
  run_logged "$HOST_PYTHON" -m venv "$SCI_ENV"
  run_logged "$SCI_ENV/bin/python" -m pip install --no-index --find-links "$DL/sci-tools" \
    --no-deps --only-binary=:all: --require-hashes --no-cache-dir --disable-pip-version-check -r "$SCI/requirements.txt"
}

# fetch_sdist NAME VERSION FILE SHA256 [isolated]: a package's sdist
# (numpy's, pandas', ...), by pip by name, into $DL. Before saving an
# sdist, pip prepares its metadata through the sdist's build backend;
# meson-python has no hook for that, so pip would build all of numpy
# natively just to read its name and version (8.5 min here). A stand-in
# "mesonpy" module (files/mesonpy-stub.py), first on PYTHONPATH with
# --no-build-isolation, answers with the sdist's own PKG-INFO instead.
fetch_sdist() {
  local name=$1 version=$2 file=$3 want=$4 isolation=${5:-} tmp
  if [ -f "$DL/$file" ] && [ "$(sha256 "$DL/$file")" = "$want" ]; then
    echo "    $file (cached)"
    return 0
  fi
  rm -f "$DL/$file"
  echo "    fetching $file"
  tmp=$(mktemp -d "$DL/pip.XXXXXX")
  mkdir -p "$tmp/stub/mesonpy"
  cp "$FILES/mesonpy-stub.py" "$tmp/stub/mesonpy/__init__.py"
  # A meson-python sdist's metadata comes from the stub above; with
  # "isolated", pip prepares it in its build isolation (the sdist's own
  # backend and its requirements, fetched by name; only the sdist's bytes,
  # checked below, reach the build).
  local noiso=--no-build-isolation
  [ "$isolation" != isolated ] || noiso=
  # shellcheck disable=SC2086 # $noiso is one flag or none
  run_logged env PYTHONPATH="$tmp/stub" "$HOST_PYTHON" -m pip download --no-deps --no-binary=:all: \
    $noiso --no-cache-dir --disable-pip-version-check -d "$tmp" "$name==$version"
  [ -f "$tmp/$file" ] || die "pip did not produce $file"
  [ "$(sha256 "$tmp/$file")" = "$want" ] ||
    die "$file has sha256 $(sha256 "$tmp/$file"), want $want; refusing it"
  mv "$tmp/$file" "$DL/$file"
  rm -rf "$tmp"
}

step sci-download
sci_tools
fetch_sdist numpy "$NUMPY_VERSION" "$NUMPY_SDIST" "$NUMPY_SHA256"
fetch_sdist pandas "$PANDAS_VERSION" "$PANDAS_SDIST" "$PANDAS_SHA256"
fetch_sdist pillow "$PILLOW_VERSION" "$PILLOW_SDIST" "$PILLOW_SHA256" isolated
fetch_sdist matplotlib "$MATPLOTLIB_VERSION" "$MATPLOTLIB_SDIST" "$MATPLOTLIB_SHA256"
fetch_sdist contourpy "$CONTOURPY_VERSION" "$CONTOURPY_SDIST" "$CONTOURPY_SHA256"
fetch_sdist kiwisolver "$KIWISOLVER_VERSION" "$KIWISOLVER_SDIST" "$KIWISOLVER_SHA256" isolated
for s in "${SCI_SOURCES[@]}"; do
  IFS='|' read -r pkg file want <<<"$s"
  fetch_orig "$pkg" "$file" "$want"
done
# The pure-Python packages, cached in $DL/sci-wheels.
pinned_wheels "$DL/sci-wheels" "$SCI/wheels.txt" "${SCI_WHEELS[@]}"
