#!/usr/bin/env bash
# sci-matplotlib: kiwisolver's, contourpy's and matplotlib's extension modules.
#
# kiwisolver's and contourpy's extension modules (their setup.py's and
# src/meson.build's source lists; contourpy's threaded generator runs on the
# calling thread, see patches/contourpy-*), and matplotlib's, each an
# archive named after its dotted module name, with Agg as a library: their
# C++ compiled straight from the source lists of their build files with
# LLVM's Emscripten exception lowering (EH_CXXFLAGS, runtime in
# exceptions.cpp).
# $inc and the lists of files are word lists.
# shellcheck disable=SC2086,SC2046,SC2015
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=sci-lib.sh
. "$HERE/steps/sci-lib.sh"

step matplotlib
# Their include directories, found without importing them (importing
# cppy imports setuptools, which refuses Debian's distutils).
pyb=$("$SCI_ENV/bin/python" -c 'import importlib.util as u; print(u.find_spec("pybind11").submodule_search_locations[0])')/include
cppy=$("$SCI_ENV/bin/python" -c 'import importlib.util as u; print(u.find_spec("cppy").submodule_search_locations[0])')/include
[ -f "$pyb/pybind11/pybind11.h" ] && [ -f "$cppy/cppy/cppy.h" ] || die "no pybind11 or cppy headers in $SCI_ENV"
unpack "$DL/$KIWISOLVER_SDIST" "$SCI/kiwisolver-src"
unpack "$DL/$CONTOURPY_SDIST" "$SCI/contourpy-src"
unpack "$DL/$MATPLOTLIB_SDIST" "$SCI/matplotlib-src"
for p in kiwisolver-"$KIWISOLVER_VERSION" contourpy-"$CONTOURPY_VERSION" matplotlib-"$MATPLOTLIB_VERSION"; do
  apply_patches "$SCI/${p%%-*}-src" "$HERE"/patches/"$p"-*.patch
done
mkdir -p "$MPL_BLD/kiwisolver._cext" "$MPL_BLD/contourpy._contourpy" "$MPL_BLD/agg"
for f in kiwisolver constraint expression solver strength term variable; do
  sci_cxx "$MPL_BLD/kiwisolver._cext/$f.o" "$SCI/kiwisolver-src/py/src/$f.cpp" \
    -I"$SCI/kiwisolver-src" -I"$cppy"
done
sci_archive_of "$MPL_BLD/kiwisolver._cext" kiwisolver._cext
for f in chunk_local contour_generator converter fill_type line_type mpl2005_original mpl2005 mpl2014 \
  outer_or_hole serial threaded util wrap z_interp; do
  sci_cxx "$MPL_BLD/contourpy._contourpy/$f.o" "$SCI/contourpy-src/src/$f.cpp" \
    -DCONTOURPY_VERSION="$CONTOURPY_VERSION" -I"$pyb"
done
sci_archive_of "$MPL_BLD/contourpy._contourpy" contourpy._contourpy
src=$SCI/matplotlib-src
# include/: qhull's header includes setjmp.h (_qhull_wrapper.cpp calls
# no setjmp itself).
inc="-I$src/extern/agg24-svn/include -I$src/src -I$SRC/freetype/include -I$SRC/qhull/src -I$HERE/include -I$pyb"
for f in "${MATPLOTLIB_AGG[@]}"; do
  sci_cxx "$MPL_BLD/agg/$f.o" "$src/extern/agg24-svn/src/$f.cpp" $inc
done
sci_archive_of "$MPL_BLD/agg" libagg
for e in "${MATPLOTLIB_EXTENSIONS[@]}"; do
  m=${e%%|*}
  files=${e#*|}
  mkdir -p "$MPL_BLD/$m"
  for f in $files; do
    [ -f "$src/$f" ] || die "matplotlib has no $f"
    # -Wno-c++11-narrowing: _backend_agg_wrapper.cpp puts unsigned ints
    # in a list of ssize_t, which is 32 bits here (they fit).
    sci_cxx "$MPL_BLD/$m/$(basename "$f" .cpp).o" "$src/$f" $inc -Wno-c++11-narrowing \
      -DFREETYPE_BUILD_TYPE='"system"' -DMPL_DEVNULL=/dev/null
  done
  sci_archive_of "$MPL_BLD/$m" "$m"
done
no_clash "matplotlib's libraries" "$MPL_BLD"/*.a -- \
  $(find "$NUMPY_BLD" "$PANDAS_BLD" "$PILLOW_BLD" -name '*.a') "$CROSS/libpython$PY_SHORT.a"
