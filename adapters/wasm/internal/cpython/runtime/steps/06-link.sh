#!/usr/bin/env bash
# link: the reactor linked (out/python-linked.wasm), and checked.
#
# The reactor, entry.c plus exactly what CPython links into its own
# python.wasm (objects, LIBS, MODLIBS with the HACL, expat, mpdec and our
# zlib/bz2/lzma/sqlite libraries, SYSLIBS, and LDFLAGS_NODIST's stack size,
# --stack-first and initial memory), taken from CPython's Makefile by
# including it (files/reactor.mk), but linked with wasi-libc's reactor start
# file instead of the command one. The link has no -O flag, so clang runs no
# wasm-opt.
#
# binaryen's wasm-opt -O2 (Debian's version 108) was measured on this module
# and left out: it is deterministic and makes the module 13-15% smaller,
# but it did not make Python code run faster under wazero, did not make
# wazero's compilation faster, costs 20-40 s per build, and splits the data
# into ~10,000 segments that wasmpatch then turns into as many passive ones.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

step link
fresh "$CROSS/codeport"
mkdir -p "$WORK_OUT"
cp "$HERE/entry.c" "$CROSS/codeport/entry.c"
cp "$FILES/reactor.mk" "$CROSS/codeport/reactor.mk"
cd "$CROSS"
run_logged make -f Makefile -f codeport/reactor.mk codeport-reactor
# The link's flags, for the results step's report.
make -s -f Makefile -f codeport/reactor.mk codeport-print-link | xargs >"$WORK_OUT/link-flags.txt"
cp codeport/python-reactor.wasm "$WORK_OUT/python-linked.wasm"
check_module "$WORK_OUT/python-linked.wasm"
