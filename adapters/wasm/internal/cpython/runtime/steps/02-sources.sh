#!/usr/bin/env bash
# sources: the pinned sources fetched, checked, unpacked and patched.
#
# The pinned upstream sources and the tzdata wheel fetched into the download
# cache and checked, then unpacked in $SRC with patches/cpython-* and
# patches/sqlite-* applied (the native Python, which only compiles, gets
# CPython's too: its bytecode is the same either way).
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fetch_tzdata() {
  if [ -f "$DL/$TZDATA_WHEEL" ] && [ "$(sha256 "$DL/$TZDATA_WHEEL")" = "$TZDATA_SHA256" ]; then
    echo "    $TZDATA_WHEEL (cached)"
    return 0
  fi
  rm -f "$DL/$TZDATA_WHEEL"
  echo "    fetching $TZDATA_WHEEL"
  "$HOST_PYTHON" -m pip --version >/dev/null 2>&1 || die "$HOST_PYTHON has no pip (python3-pip)"
  local tmp
  tmp=$(mktemp -d "$DL/pip.XXXXXX")
  run_logged "$HOST_PYTHON" -m pip download --no-deps --only-binary=:all: --no-cache-dir \
    --disable-pip-version-check -d "$tmp" "tzdata==$TZDATA_VERSION"
  [ -f "$tmp/$TZDATA_WHEEL" ] || die "pip did not produce $TZDATA_WHEEL"
  [ "$(sha256 "$tmp/$TZDATA_WHEEL")" = "$TZDATA_SHA256" ] ||
    die "$TZDATA_WHEEL has sha256 $(sha256 "$tmp/$TZDATA_WHEEL"), want $TZDATA_SHA256; refusing it"
  mv "$tmp/$TZDATA_WHEEL" "$DL/$TZDATA_WHEEL"
  rm -rf "$tmp"
}

step download
mkdir -p "$DL"
for s in "${SOURCES[@]}"; do
  IFS='|' read -r pkg file want <<<"$s"
  fetch_orig "$pkg" "$file" "$want"
done
fetch_tzdata

step unpack
unpack "$(orig python3.13_)" "$SRC/cpython"
unpack "$(orig zlib_)" "$SRC/zlib"
unpack "$(orig bzip2_)" "$SRC/bzip2"
unpack "$(orig xz-utils_)" "$SRC/xz"
unpack "$(orig sqlite3_)" "$SRC/sqlite"
apply_patches "$SRC/cpython" "$HERE"/patches/cpython-"$PY_VERSION"-*.patch
apply_patches "$SRC/sqlite" "$HERE"/patches/sqlite-3.46.1-*.patch
