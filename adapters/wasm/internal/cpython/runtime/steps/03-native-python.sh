#!/usr/bin/env bash
# native-python: CPython built for the build machine (a tool of the cross build).
#
# Cross-building CPython needs a Python of the very same version on the
# build machine: it freezes modules, generates sysconfigdata, and later
# compiles the zip's bytecode (which must match the interpreter's format).
# It is a tool only, so no tests, no PGO, no debug info.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

step native-python
fresh "$NATIVE"
cd "$NATIVE"
run_logged "$SRC/cpython/configure" --prefix="$NATIVE/prefix" --without-ensurepip \
  --disable-test-modules OPT="-DNDEBUG -O2"
run_logged make -j"$JOBS"
[ "$("$NATIVE_PY" -c 'import platform; print(platform.python_version())')" = "$PY_VERSION" ] ||
  die "the native Python is not $PY_VERSION"
