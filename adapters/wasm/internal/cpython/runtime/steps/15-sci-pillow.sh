#!/usr/bin/env bash
# sci-pillow: Pillow's extension modules.
#
# Pillow's extension modules compiled with the cross compiler, one archive
# each, from the source lists of its setup.py (_IMAGING and _LIB_IMAGING
# make PIL._imaging; files/pillow-sources.py reads them), with zlib, and
# FreeType for _imagingft; the sources of the codecs it is built without
# (JPEG, JPEG 2000, TIFF, libimagequant, Windows DIB) compile to nothing
# without their HAVE_* macros. Its symbols are checked against numpy's,
# pandas' and CPython's: a clash fails the build.
# $XCC, $XCFLAGS and the lists of files are word lists.
# shellcheck disable=SC2086,SC2046,SC2012
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=sci-lib.sh
. "$HERE/steps/sci-lib.sh"

step pillow
unpack "$DL/$PILLOW_SDIST" "$PILLOW_SRC"
apply_patches "$PILLOW_SRC" "$HERE"/patches/pillow-"$PILLOW_VERSION"-*.patch
fresh "$PILLOW_BLD"
for m in "${PILLOW_MODULES[@]}"; do
  case $m in
    PIL._imaging)
      files=$("$NATIVE_PY" -I "$FILES/pillow-sources.py" "$PILLOW_SRC/setup.py") ||
        die "cannot read Pillow's source lists from its setup.py"
      ;;
    *) files=src/${m#PIL.}.c ;;
  esac
  mkdir -p "$PILLOW_BLD/${m#PIL.}"
  for src in $files; do
    f=$PILLOW_SRC/$src
    [ -f "$f" ] || die "Pillow has no $src"
    o=$PILLOW_BLD/${m#PIL.}/$(echo "$src" | tr / _).o
    run_logged $XCC $XCFLAGS -DNDEBUG -fno-strict-overflow -Werror=implicit-function-declaration \
      -I"$SRC/cpython/Include" -I"$CROSS" -I"$PREFIX/include" -I"$PILLOW_SRC/src/libImaging" \
      -I"$SRC/freetype/include" -I"$HERE/include" -DHAVE_LIBZ -DPILLOW_VERSION="\"$PILLOW_VERSION\"" -c "$f" -o "$o"
  done
  rm -f "$PILLOW_BLD/${m#PIL.}.a"
  run_logged $XAR rcsD "$PILLOW_BLD/${m#PIL.}.a" $(cd "$PILLOW_BLD" && ls "${m#PIL.}"/*.o | LC_ALL=C sort | sed "s|^|$PILLOW_BLD/|")
done
no_clash "Pillow's modules" "$PILLOW_BLD"/*.a -- $(find "$NUMPY_BLD" "$PANDAS_BLD" -name '*.a') "$CROSS/libpython$PY_SHORT.a"
