#!/usr/bin/env bash
# cpython: CPython cross-compiled for wasm32-wasi.
#
# CPython cross-compiled for wasm32-wasi in $CROSS, against the libraries of
# cross-deps and with the native Python as its build Python.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

step cpython
fresh "$CROSS"
cd "$CROSS"
# configure cannot run wasm programs, and Debian's wasi-libc (2022)
# differs from the WASI SDK CPython targets: start from CPython's own
# answers and add what that libc gets wrong (files/config.site-codeport).
cp "$SRC/cpython/Tools/wasm/config.site-wasm32-wasi" config.site
cat "$FILES/config.site-codeport" >>config.site
# Static libraries only in $PREFIX, so -L/-l picks those.
# --with-pymalloc: configure turns pymalloc off for WASI, but the
# interpreter here is single-threaded and pymalloc's arenas come from
# malloc; a loop allocating ints ran 6-10% faster with it (best of 7).
run_logged env CONFIG_SITE="$CROSS/config.site" \
  CC="$XCC" AR="$XAR" RANLIB="$XRANLIB" \
  OPT="-DNDEBUG -Wall" CFLAGS="$XCFLAGS" \
  PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$PREFIX/lib/pkgconfig" \
  ZLIB_CFLAGS="-I$PREFIX/include" ZLIB_LIBS="-L$PREFIX/lib -lz" \
  BZIP2_CFLAGS="-I$PREFIX/include" BZIP2_LIBS="-L$PREFIX/lib -lbz2" \
  LIBLZMA_CFLAGS="-I$PREFIX/include" LIBLZMA_LIBS="-L$PREFIX/lib -llzma" \
  LIBSQLITE3_CFLAGS="-I$PREFIX/include" LIBSQLITE3_LIBS="-L$PREFIX/lib -lsqlite3" \
  LIBS="-L$PREFIX/lib -lcodeport -lz" \
  "$SRC/cpython/configure" --host=wasm32-unknown-wasi --build="$("$SRC/cpython/config.guess")" \
  --with-build-python="$NATIVE_PY" --disable-ipv6 --without-ensurepip --disable-test-modules --with-pymalloc
# `all` builds libpython, the builtin modules' libraries, the
# sysconfigdata, and CPython's own (command) python.wasm, whose link the
# reactor's copies; it ends by listing the modules it could not build
# (kept for the results step's report).
run_logged make -j"$JOBS" all
mkdir -p "$WORK_OUT"
sed -n '/^The following modules are/,/^Checked [0-9]* modules/p' "$STEP_LOG" >"$WORK_OUT/module-report.txt"
sysconfigdata >/dev/null
