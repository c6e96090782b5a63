# shellcheck shell=bash disable=SC2034 # the layout is read by the steps
# sci-lib.sh: what the scientific profile's steps (10-sci-* to 19-sci-*)
# share, sourced after lib.sh: numpy, pandas, Pillow and matplotlib in a
# second reactor.
#
# How. numpy's own meson build (the meson it vendors) cross-compiles with a
# cross file (files/cross.ini.in); the Python it introspects is the native CPython
# reporting the cross build's sysconfig (files/python-cross.in). Extension modules
# are meson shared modules, which wasm32-wasi cannot link: the compiler
# wrapper (files/cc-wrap) turns each such link into an archive of the module's
# objects plus a list (ARCHIVE.libs) of the static libraries it links.
# python-scientific.wasm is the reactor's link of CPython, with entry.c
# compiled with -DCODEPORT_SCIENTIFIC, plus those archives (whole, so that
# a symbol defined twice is an error, not a silent pick) and libraries.
#
# One namespace. Linked statically, all modules share one symbol namespace.
# After a first build, files/sci-plan.py lists with llvm-nm the global symbols
# that would clash (Cython 3.1's non-static __pyx_CommonTypesMetaclass_get_module
# in every Cython module; mtrand's legacy builds of distributions.c, which
# libnpyrandom defines too, with other code and other signatures), and each
# module that defines one is compiled again with a generated header
# (clang -include) renaming its own definitions: #define sym module__sym.
# (llvm-objcopy cannot rename symbols of wasm objects.) A second pass must
# find no clash. pandas is built after numpy, against its headers, and a
# clash between the two renames pandas' side (sci-plan.py --fixed): pandas'
# datetime helpers are copies of numpy's, and every Cython module defines
# the same metaclass helper. The link fails on any warning (--fatal-warnings), in
# particular wasm-ld's "function signature mismatch", which otherwise only
# warns and binds a call to a function of another type: an earlier attempt
# bound RandomState.poisson to another module's function that way.
# lapack_lite's duplicate f2c sources are handled by a patch (patches/).
#
# Options. No threads; numpy's baseline C loops (no CPU dispatch, no
# SVML, highway or x86-simd-sort; numpy has no wasm SIMD paths), without
# -msimd128: clang's auto-vectorisation of them made as many loops slower
# under wazero as faster (int64 adds and dtype casts slower, int32 adds
# and clip faster). np.sort is the exception: patches/numpy-*-vqsort.patch
# sorts the 16/32/64-bit integers, float32 and float64 in a small library
# of its own, compiled with -msimd128: a radix sort for the longer 32- and
# 64-bit arrays, Highway's vqsort (the Highway numpy vendors) for the rest. BLAS is
# OpenBLAS (11-sci-openblas.sh: its generic C kernels and our SIMD128
# DGEMM kernel, which matmul and np.dot use through CBLAS); LAPACK is
# numpy's bundled lapack_lite calling that BLAS (patches/numpy-*-wasi.patch:
# its f2c BLAS left out, its symbols prefixed npy_ll_, and generated
# forwarders where f2c's prototypes and OpenBLAS's differ). numpy's and pandas' C++ is compiled with
# -fexceptions but without the exception lowering (EH_CXXFLAGS, which the
# C++ of matplotlib and its dependencies gets): their catch blocks are
# compiled out, and a throw, which no invoke_ then catches, ends the call
# (exceptions.cpp); -Drestrict=__restrict because CPython's pthread
# stubs header uses C's restrict. wasi-libc's long double printf/strtold
# is linked: numpy's longdouble needs it.

[ "$PROFILE" = scientific ] || die "$(basename "$0"): a step of the scientific profile (build.sh --profile scientific)"

SCI=$B/sci
SCI_ENV=$SCI/hostenv
SCI_GEN=$SCI/gen
OPENBLAS_SRC=$SCI/openblas-src
# OpenBLAS installed (lib/, include/), for numpy.
OPENBLAS=$SCI/openblas
NUMPY_SRC=$SCI/numpy-src
NUMPY_BLD=$SCI/numpy-build
# numpy as meson installs it (headers, .pxd), for building pandas.
SCI_NUMPY_DEV=$SCI/numpy-dev
PANDAS_SRC=$SCI/pandas-src
PANDAS_BLD=$SCI/pandas-build
PILLOW_SRC=$SCI/pillow-src
PILLOW_BLD=$SCI/pillow-build
MPL_BLD=$SCI/mpl-build
SCI_STAGE=$SCI/stage
SCI_LINK=$CROSS/codeport/scientific
SCI_EXT_SUFFIX=.cpython-$PY_NODOT-wasm32-wasi.so

# C++ exceptions and setjmp/longjmp (see exceptions.cpp): the flags that
# lower them to invoke_ calls the host unwinds, for C++ that throws and for
# C that calls setjmp.
EH_CXXFLAGS="-fexceptions -mllvm -enable-emscripten-cxx-exceptions"
EH_SJLJFLAGS="-mllvm -enable-emscripten-sjlj -I$HERE/include"

# sci_meson ARG...: the meson numpy vendors, run by the tools' venv.
sci_meson() {
  run_logged env PATH="$SCI_ENV/bin:$PATH" "$SCI_ENV/bin/python" "$NUMPY_SRC/vendored-meson/meson/meson.py" "$@"
}

# sci_archive MODULE: the archive cc-wrap makes for a dotted module name,
# relative to the meson build directory.
sci_archive() {
  local m=$1
  echo "$(echo "${m%.*}" | tr . /)/${m##*.}$SCI_EXT_SUFFIX"
}

# sci_specs BUILD_DIR MODULE...: sci-plan.py's arguments for the modules.
sci_specs() {
  local bld=$1 m
  shift
  for m in "$@"; do
    echo "$bld:$m=$(sci_archive "$m")"
  done
}

# sci_plan DIR SPEC...: runs files/sci-plan.py, writing DIR.
sci_plan() {
  local dir=$1
  shift
  rm -rf "$dir"
  "$NATIVE_PY" -I "$FILES/sci-plan.py" "$dir" "$@" | tee -a "$STEP_LOG"
}

# sci_ninja BUILD_DIR [VAR=VALUE...]: builds SCI_TARGETS there, with the
# variables and SCI_NINJA_ENV in the environment.
sci_ninja() {
  local bld=$1
  shift
  run_logged env PATH="$SCI_ENV/bin:$PATH" "${SCI_NINJA_ENV[@]}" "$@" ninja -C "$bld" -j"$JOBS" "${SCI_TARGETS[@]}"
}

# sci_modules BUILD_DIR RENAME_DIR FIXED_SPECS MODULE...: builds the
# modules' archives, then rebuilds those that define a clashing symbol with
# their renames and checks that nothing clashes any more. FIXED_SPECS is a
# newline-separated list of another package's modules (sci_specs), which
# are linked too but never renamed.
sci_modules() {
  local bld=$1 rename=$2 fixed=$3 m h a
  shift 3
  local specs=() fixed_args=()
  mapfile -t specs < <(sci_specs "$bld" "$@")
  [ -z "$fixed" ] || mapfile -t fixed_args < <(echo --fixed; echo "$fixed")
  SCI_TARGETS=()
  for m in "$@"; do
    SCI_TARGETS+=("$(sci_archive "$m")")
  done
  sci_ninja "$bld"
  sci_plan "$rename" "${specs[@]}" "${fixed_args[@]}"
  for h in "$rename"/*.h; do
    [ -f "$h" ] || continue
    a=$bld/$(sci_archive "$(basename "$h" .h)")
    find "$a.p" -name '*.o' -delete
    rm -f "$a"
  done
  sci_ninja "$bld" SCI_RENAME_DIR="$rename"
  sci_plan "$rename.recheck" "${specs[@]}" "${fixed_args[@]}"
  [ -z "$(ls -A "$rename.recheck")" ] || die "symbols still clash after renaming: $(ls "$rename.recheck")"
}

# no_clash WHAT ARCHIVE... -- OTHER...: the archives of WHAT are linked
# whole into one module with the OTHER ones, so none of their global
# symbols may be defined twice among them or by an OTHER archive (the link
# would fail later, and less clearly).
no_clash() {
  local what=$1 ours=() dup clash
  shift
  while [ "$1" != -- ]; do
    ours+=("$1")
    shift
  done
  shift
  defined() { llvm-nm-19 --defined-only --extern-only "$@" 2>/dev/null | awk '$2 ~ /[TDBRC]/ {print $3}'; }
  dup=$(defined "${ours[@]}" | LC_ALL=C sort | uniq -d)
  [ -z "$dup" ] || die "$what define a symbol twice: $dup"
  clash=$(LC_ALL=C comm -12 <(defined "${ours[@]}" | LC_ALL=C sort -u) <(defined "$@" | LC_ALL=C sort -u))
  [ -z "$clash" ] || die "$what define symbols that the modules linked before them define too: $clash"
}

# sci_cxx OUT SOURCE FLAG...: one C++ source of an extension module.
sci_cxx() {
  local out=$1 src=$2
  shift 2
  # shellcheck disable=SC2086 # XCC, XCFLAGS and EH_CXXFLAGS are word lists
  run_logged ${XCC/clang-19/clang++-19} $XCFLAGS -DNDEBUG -std=c++17 -fvisibility=hidden $EH_CXXFLAGS \
    -Drestrict=__restrict -I"$SRC/cpython/Include" -I"$CROSS" "$@" -c "$src" -o "$out"
}

# sci_archive_of DIR NAME: DIR/*.o (sorted) as the archive $MPL_BLD/NAME.a.
sci_archive_of() {
  rm -f "$MPL_BLD/$2.a"
  # shellcheck disable=SC2046,SC2086,SC2012
  run_logged $XAR rcsD "$MPL_BLD/$2.a" $(ls "$1"/*.o | LC_ALL=C sort)
}
