#!/usr/bin/env bash
# sci-openblas: OpenBLAS as a static library, the BLAS numpy links.
#
# OpenBLAS 0.3.29 cross-compiled for wasm32-wasi by its own makefiles:
# TARGET=RISCV64_GENERIC (its generic C kernels, as upstream builds it for
# emscripten), single-threaded, no Fortran, no LAPACK (numpy's lapack_lite
# stays the LAPACK), patched for WASI and with a SIMD128 DGEMM kernel
# (patches/openblas-*.patch). -msimd128: the module may use fixed-width
# SIMD (wasmpatch accepts it, wazero runs it). mmap comes from wasi-libc's
# emulation (-D_WASI_EMULATED_MMAN; the link adds -lwasi-emulated-mman).
# Installed into $OPENBLAS (lib/libopenblas.a, include/), where numpy's
# meson finds it (files/cross-openblas.ini.in).
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=sci-lib.sh
. "$HERE/steps/sci-lib.sh"

step openblas
unpack "$(orig openblas_)" "$OPENBLAS_SRC"
apply_patches "$OPENBLAS_SRC" "$HERE"/patches/openblas-"$OPENBLAS_VERSION"-*.patch
fresh "$OPENBLAS"
# HOSTCC builds getarch, which writes the target's config headers.
ob_make=(make -C "$OPENBLAS_SRC" TARGET=RISCV64_GENERIC HOSTCC=gcc CROSS=1
  CC="$XCC" AR="$XAR" RANLIB="$XRANLIB"
  NOFORTRAN=1 NO_LAPACK=1 NO_LAPACKE=1 NO_SHARED=1 NEED_PIC=0
  USE_THREAD=0 USE_LOCKING=0 NUM_THREADS=1 NO_AFFINITY=1
  COMMON_OPT="$XCFLAGS -msimd128 -D_WASI_EMULATED_MMAN -DNO_SYSV_IPC")
run_logged "${ob_make[@]}" -j"$JOBS" libs
run_logged "${ob_make[@]}" install PREFIX="$OPENBLAS"
for f in lib/libopenblas.a include/openblas_config.h include/cblas.h; do
  [ -f "$OPENBLAS/$f" ] || die "OpenBLAS did not install $f into $OPENBLAS"
done
echo "    $(grep -o 'OpenBLAS [0-9.]*' "$OPENBLAS/include/openblas_config.h")"
