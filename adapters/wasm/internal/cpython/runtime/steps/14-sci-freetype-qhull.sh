#!/usr/bin/env bash
# sci-freetype-qhull: FreeType and qhull as static libraries.
#
# FreeType (its default modules and options: zlib's inflate built in, no
# PNG, bzip2, Brotli or HarfBuzz) and qhull, the C libraries matplotlib
# links (FreeType Pillow's _imagingft too), as static libraries, with the
# setjmp/longjmp lowering (EH_SJLJFLAGS, include/setjmp.h).
# $XCC, $XCFLAGS and $EH_SJLJFLAGS are word lists.
# shellcheck disable=SC2086
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=sci-lib.sh
. "$HERE/steps/sci-lib.sh"

step freetype-qhull
fresh "$MPL_BLD" "$SRC/freetype" "$SRC/qhull"
unpack "$(orig freetype_)" "$SRC/freetype"
unpack "$(orig qhull_)" "$SRC/qhull"
mkdir -p "$MPL_BLD/freetype" "$MPL_BLD/qhull"
for f in "${FREETYPE_FILES[@]}"; do
  run_logged $XCC $XCFLAGS -DNDEBUG $EH_SJLJFLAGS -DFT2_BUILD_LIBRARY -I"$SRC/freetype/include" \
    -c "$SRC/freetype/src/$f.c" -o "$MPL_BLD/freetype/$(echo "$f" | tr / _).o"
done
sci_archive_of "$MPL_BLD/freetype" libfreetype
for f in "${QHULL_FILES[@]}"; do
  run_logged $XCC $XCFLAGS -DNDEBUG $EH_SJLJFLAGS -I"$SRC/qhull/src" \
    -c "$SRC/qhull/src/libqhull_r/$f.c" -o "$MPL_BLD/qhull/$f.o"
done
sci_archive_of "$MPL_BLD/qhull" libqhull_r
