#!/usr/bin/env bash
# sci-numpy: the meson cross setup; numpy's extension modules.
#
# The cross-compilation helpers in $SCI_GEN (python-cross, cc-wrap,
# cross.ini, from files/), then numpy's extension modules by its own meson
# build, one archive each, clashing symbols renamed (sci-lib.sh), with
# the OpenBLAS of the openblas step as BLAS and lapack_lite as LAPACK.
# -Ddisable-highway leaves out numpy's run-time dispatched Highway code
# only: np.sort's vqsort (patches/numpy-*-vqsort.patch) is compiled from
# the Highway headers numpy vendors, for wasm with -msimd128.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=sci-lib.sh
. "$HERE/steps/sci-lib.sh"

step numpy
unpack "$DL/$NUMPY_SDIST" "$NUMPY_SRC"
apply_patches "$NUMPY_SRC" "$HERE"/patches/numpy-"$NUMPY_VERSION"-*.patch
# lapack_lite's forwarders to the BLAS (patches/numpy-*-wasi.patch).
"$NATIVE_PY" -I "$FILES/lapack-lite-blas.py" "$NUMPY_SRC/numpy/linalg/lapack_lite/f2c_blas.c" \
  "$NUMPY_SRC/numpy/linalg/lapack_lite/npy_ll_blas.c" | tee -a "$STEP_LOG"
[ -f "$OPENBLAS/lib/libopenblas.a" ] || die "no OpenBLAS in $OPENBLAS; run the sci-openblas step first"
fresh "$SCI_GEN" "$NUMPY_BLD"

# The native CPython reporting the cross build's sysconfig: a cross build's
# Python for meson.
SYSCONFIGDATA=$(sysconfigdata)
# shellcheck disable=SC2034 # read by template
SYSCONFIGDATA_NAME=$(basename "$SYSCONFIGDATA" .py)
# shellcheck disable=SC2034
SYSCONFIGDATA_DIR=$(dirname "$SYSCONFIGDATA")
template "$FILES/python-cross.in" "$SCI_GEN/python-cross" \
  PY_VERSION SYSCONFIGDATA_NAME CROSS SYSCONFIGDATA_DIR NATIVE_PY
cp "$FILES/cc-wrap" "$SCI_GEN/cc-wrap"
chmod +x "$SCI_GEN/python-cross" "$SCI_GEN/cc-wrap"
template "$FILES/cross.ini.in" "$SCI_GEN/cross.ini" SCI_GEN TOOLS SYSROOT SCI_ENV B
template "$FILES/cross-openblas.ini.in" "$SCI_GEN/cross-openblas.ini" OPENBLAS

sci_meson setup "$NUMPY_BLD" "$NUMPY_SRC" --cross-file "$SCI_GEN/cross.ini" \
  --cross-file "$SCI_GEN/cross-openblas.ini" \
  -Dbuildtype=release -Db_ndebug=if-release -Dpython.bytecompile=-1 \
  -Ddisable-optimization=true -Ddisable-threading=true \
  -Dallow-noblas=true -Dblas=openblas -Dlapack=none \
  -Ddisable-svml=true -Ddisable-highway=true -Ddisable-intel-sort=true
grep -q 'Run-time dependency openblas found: YES' "$STEP_LOG" || die "numpy's meson did not find OpenBLAS (see $STEP_LOG)"
SCI_NINJA_ENV=()
sci_modules "$NUMPY_BLD" "$SCI_GEN/rename-numpy" "" "${NUMPY_MODULES[@]}"
