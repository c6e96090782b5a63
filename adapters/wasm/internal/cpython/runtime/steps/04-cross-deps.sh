#!/usr/bin/env bash
# cross-deps: the wasm32-wasi sysroot; zlib, libcodeport, bzip2, liblzma, sqlite.
#
# The cross toolchain's setup, and the C libraries CPython links (zlib,
# libcodeport, bzip2, liblzma, sqlite), as static libraries in $PREFIX.
# $XCC and $XCFLAGS are word lists.
# shellcheck disable=SC2086
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The compiler setup shared by every cross build (lib.sh's XCC, XCFLAGS).
#  * A private sysroot holding only wasi-libc: with Debian's default sysroot
#    (/) clang would also search /usr/include, the host's glibc headers.
#  * -B$TOOLS with a no-op wasm-opt: clang runs any wasm-opt it finds after
#    every link that has an -O flag (configure's link tests have one), which
#    makes results depend on whether binaryen is installed, and costs a
#    second per configure test. Whether wasm-opt runs is decided here, once.
step cross-toolchain
fresh "$SYSROOT/include" "$SYSROOT/lib" "$TOOLS"
ln -s /usr/include/wasm32-wasi "$SYSROOT/include/wasm32-wasi"
ln -s /usr/lib/wasm32-wasi "$SYSROOT/lib/wasm32-wasi"
cp "$FILES/wasm-opt" "$TOOLS/wasm-opt"
chmod +x "$TOOLS/wasm-opt"
fresh "$PREFIX/include" "$PREFIX/lib"
# Smoke test: the toolchain links a WASI program.
cp "$FILES/smoke.c" "$TOOLS/t.c"
run_logged $XCC $XCFLAGS "$TOOLS/t.c" -o "$TOOLS/t.wasm" || die "clang-19 cannot link for wasm32-wasi"
rm -f "$TOOLS/t.c" "$TOOLS/t.wasm"

step zlib
fresh "$DEPS/zlib"
cp -a "$SRC/zlib/." "$DEPS/zlib/"
cd "$DEPS/zlib"
run_logged env CHOST=wasm32-unknown-wasi CC="$XCC" AR="$XAR" RANLIB="$XRANLIB" CFLAGS="$XCFLAGS" \
  ./configure --static --prefix="$PREFIX"
run_logged make -j"$JOBS" libz.a
cp libz.a "$PREFIX/lib/"
cp zlib.h zconf.h "$PREFIX/include/"

# What codeport adds to wasi-libc, as a library that every link of CPython
# takes (configure's LIBS: its own python.wasm, the reactors, configure's
# test programs): localtime.c, the time zone (TZ, tzset), whose object
# defines the symbols of wasi-libc's UTC-only one, which is then never
# linked; filemode.c, permission bits and chmod from the host module
# codeport_fs.
step libcodeport
fresh "$DEPS/libcodeport"
cd "$DEPS/libcodeport"
run_logged $XCC $XCFLAGS -Wall -Wextra -I"$PREFIX/include" -DCODEPORT_TZ_ZIP="\"$GUEST_STDLIB_ZIP\"" \
  -c "$HERE/localtime.c" -o localtime.o
run_logged $XCC $XCFLAGS -Wall -Wextra -c "$HERE/filemode.c" -o filemode.o
rm -f "$PREFIX/lib/libcodeport.a"
run_logged $XAR rcs "$PREFIX/lib/libcodeport.a" localtime.o filemode.o

# bzip2's Makefile builds programs and a shared library too; the library is
# seven files, compiled here as its Makefile would (minus -g).
step bzip2
fresh "$DEPS/bzip2"
cd "$DEPS/bzip2"
objs=()
for f in blocksort huffman crctable randtable compress decompress bzlib; do
  run_logged $XCC $XCFLAGS -Wall -D_FILE_OFFSET_BITS=64 -c "$SRC/bzip2/$f.c" -o "$f.o"
  objs+=("$f.o")
done
run_logged "$XAR" rcs libbz2.a "${objs[@]}"
cp libbz2.a "$PREFIX/lib/"
cp "$SRC/bzip2/bzlib.h" "$PREFIX/include/"

# liblzma only; no threads (WASI has none here), no programs, no NLS.
step xz
fresh "$DEPS/xz"
cd "$DEPS/xz"
run_logged "$SRC/xz/configure" --host=wasm32-unknown-wasi --prefix="$PREFIX" \
  --disable-shared --enable-static --disable-threads --disable-nls \
  --disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo \
  --disable-lzma-links --disable-scripts --disable-doc --disable-microlzma \
  --disable-sandbox --disable-clmul-crc --disable-arm64-crc32 \
  CC="$XCC" AR="$XAR" RANLIB="$XRANLIB" CFLAGS="$XCFLAGS"
run_logged make -j"$JOBS" -C src/liblzma
run_logged make -C src/liblzma install

# Debian's orig tarball is sqlite's full source tree, without the
# single-file amalgamation; generating sqlite3.c takes a native configure
# and some Tcl. Only sqlite3.c is cross-compiled.
step sqlite
fresh "$DEPS/sqlite-gen" "$DEPS/sqlite"
cd "$DEPS/sqlite-gen"
run_logged "$SRC/sqlite/configure" --disable-tcl
run_logged make sqlite3.c
cd "$DEPS/sqlite"
# No threads, no dlopen, no shared memory or mmap in WASI: hence
# THREADSAFE=0, OMIT_LOAD_EXTENSION, OMIT_WAL and MAX_MMAP_SIZE=0.
# getpid() is wasi-libc's emulation (CPython links it anyway).
# Locking: the "unix" VFS with locks granted in process (the patch).
# The ENABLE_* options match what Debian's and python.org's sqlite offer
# (FTS3's parenthesised queries as python.org's builds have them).
run_logged $XCC $XCFLAGS -c "$DEPS/sqlite-gen/sqlite3.c" -o sqlite3.o \
  -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_OMIT_WAL \
  -DSQLITE_MAX_MMAP_SIZE=0 -D_WASI_EMULATED_GETPID \
  -DSQLITE_ENABLE_MATH_FUNCTIONS -DSQLITE_ENABLE_FTS4 -DSQLITE_ENABLE_FTS3_PARENTHESIS \
  -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_RTREE
run_logged "$XAR" rcs libsqlite3.a sqlite3.o
cp libsqlite3.a "$PREFIX/lib/"
cp "$DEPS/sqlite-gen/sqlite3.h" "$PREFIX/include/"
