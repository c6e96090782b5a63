#!/usr/bin/env bash
# sci-zip: site-scientific.zip.
#
# site-scientific.zip, the packages' Python code as stdlib-zip makes the
# stdlib's: bytecode with the sources beside it. numpy's: what meson
# installs with the python-runtime tag (no tests), less headers, Cython
# declarations, type stubs, examples and PyInstaller hooks.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=sci-lib.sh
. "$HERE/steps/sci-lib.sh"

step sci-zip
dest=$SCI/install
fresh "$dest" "$SCI_STAGE"
sci_meson install -C "$NUMPY_BLD" --no-rebuild --destdir "$dest" --tags python-runtime
sp=$(find "$dest" -type d -name site-packages)
[ -d "$sp/numpy" ] || die "meson installed no numpy package (see $STEP_LOG)"
(cd "$sp" && find . \( -name __pycache__ -o -name _examples -o -name _pyinstaller -o -name include \
  -o -name tests \) -prune -o -type f \( -name '*.py' -o -name 'LICENSE*' \) -print |
  LC_ALL=C sort | tar -cf - --no-recursion -T - | tar -xf - -C "$SCI_STAGE")
# numpy.testing (and so pandas.testing) imports pd_NA from
# numpy._core.tests._natype, which meson installs only with the tests:
# that module from the sdist, in a package of its own (an empty
# __init__.py: zipimport finds no namespace package in a zip without
# directory entries).
mkdir -p "$SCI_STAGE/numpy/_core/tests"
cp "$NUMPY_SRC/numpy/_core/tests/_natype.py" "$SCI_STAGE/numpy/_core/tests/_natype.py"
: >"$SCI_STAGE/numpy/_core/tests/__init__.py"
# pandas: everything meson installs (its pure-Python packages are
# install_subdir()s, which carry no install tag), less tests and pytest
# configuration; its licence from the sdist.
fresh "$dest-pandas"
run_logged env PATH="$SCI_ENV/bin:$PATH" "$SCI_ENV/bin/meson" \
  install -C "$PANDAS_BLD" --no-rebuild --destdir "$dest-pandas"
sp=$(find "$dest-pandas" -type d -name site-packages)
[ -f "$sp/pandas/_version_meson.py" ] || die "meson installed no pandas package (see $STEP_LOG)"
(cd "$sp" && find . \( -name __pycache__ -o -name tests -o -name conftest.py \) -prune -o \
  -type f -name '*.py' -print |
  LC_ALL=C sort | tar -cf - --no-recursion -T - | tar -xf - -C "$SCI_STAGE")
cp "$PANDAS_SRC/LICENSE" "$SCI_STAGE/pandas/LICENSE"
# Pillow: its PIL package from the sdist, and its licence.
(cd "$PILLOW_SRC/src" && find PIL -name '*.py' | LC_ALL=C sort | tar -cf - --no-recursion -T - | tar -xf - -C "$SCI_STAGE")
cp "$PILLOW_SRC/LICENSE" "$SCI_STAGE/PIL/LICENSE"
# kiwisolver, contourpy and matplotlib (with mpl_toolkits and pylab):
# their Python code from the sdists, less tests and build files;
# matplotlib's _version.py as its meson.build makes it, its mpl-data
# with the matplotlibrc its tools/generate_matplotlibrc.py makes for the
# Agg backend (the only one that works here), and the licences.
(cd "$SCI/kiwisolver-src/py" && find kiwisolver -name '*.py' | LC_ALL=C sort |
  tar -cf - --no-recursion -T - | tar -xf - -C "$SCI_STAGE")
cp "$SCI/kiwisolver-src/LICENSE" "$SCI_STAGE/kiwisolver/LICENSE"
(cd "$SCI/contourpy-src/lib" && find contourpy -name '*.py' | LC_ALL=C sort |
  tar -cf - --no-recursion -T - | tar -xf - -C "$SCI_STAGE")
cp "$SCI/contourpy-src/LICENSE" "$SCI_STAGE/contourpy/LICENSE"
(cd "$SCI/matplotlib-src/lib" && find matplotlib mpl_toolkits pylab.py \( -name tests -o -name mpl-data \) -prune -o \
  -name '*.py' -print | LC_ALL=C sort | tar -cf - --no-recursion -T - | tar -xf - -C "$SCI_STAGE")
echo "version = '$MATPLOTLIB_VERSION'" >"$SCI_STAGE/matplotlib/_version.py"
# mpl_toolkits is a namespace package, which zipimport cannot find in a
# zip without directory entries: an empty __init__.py makes it a package.
: >"$SCI_STAGE/mpl_toolkits/__init__.py"
(cd "$SCI/matplotlib-src/lib/matplotlib" && find mpl-data -type f ! -name meson.build ! -name matplotlibrc |
  LC_ALL=C sort | tar -cf - --no-recursion -T - | tar -xf - -C "$SCI_STAGE/matplotlib")
run_logged "$NATIVE_PY" -I "$SCI/matplotlib-src/tools/generate_matplotlibrc.py" \
  "$SCI/matplotlib-src/lib/matplotlib/mpl-data/matplotlibrc" "$SCI_STAGE/matplotlib/mpl-data/matplotlibrc" Agg
mkdir -p "$SCI_STAGE/matplotlib/LICENSE"
cp "$SCI/matplotlib-src/LICENSE"/* "$SCI_STAGE/matplotlib/LICENSE/"
# The wheels, as pip would install them (RECORD left out: it would not
# list the .pyc files added below, nor the patched files' hashes), less
# their own test suites (sympy's are a third of its size); pytz patched
# to read its zone files from the zip, sympy to do without ctypes.
for t in "${SCI_WHEELS[@]}"; do
  t=${t%% *}
  w=$(find "$DL/sci-wheels" -maxdepth 1 -name "$(echo "${t%%==*}" | tr - _)-${t#*==}-*.whl")
  [ -n "$w" ] || die "no wheel for $t in $DL/sci-wheels"
  "$NATIVE_PY" -I "$FILES/wheel-extract.py" "$w" "$SCI_STAGE"
done
apply_patches "$SCI_STAGE" "$HERE"/patches/pytz-*.patch "$HERE"/patches/sympy-*.patch
zip_stage "$SCI_STAGE" "$GUEST_SITE_ZIP" "$WORK_OUT/site-scientific.zip"
zip_has "$WORK_OUT/site-scientific.zip" \
  numpy/__init__.pyc numpy/_core/__init__.pyc numpy/version.pyc numpy/__config__.pyc numpy/random/__init__.pyc \
  numpy/testing/__init__.pyc numpy/_core/tests/_natype.pyc \
  pandas/__init__.pyc pandas/_version_meson.pyc pandas/io/parsers/readers.pyc pandas/LICENSE \
  dateutil/__init__.pyc dateutil/zoneinfo/dateutil-zoneinfo.tar.gz pytz/__init__.pyc pytz/zoneinfo/UTC six.pyc \
  mpmath/__init__.pyc sympy/__init__.pyc sympy/external/gmpy.pyc sympy/integrals/integrals.pyc \
  PIL/__init__.pyc PIL/Image.pyc PIL/ImageDraw.pyc PIL/LICENSE \
  kiwisolver/__init__.pyc contourpy/__init__.pyc matplotlib/__init__.pyc matplotlib/_version.pyc \
  matplotlib/pyplot.pyc matplotlib/backends/backend_agg.pyc mpl_toolkits/mplot3d/__init__.pyc \
  matplotlib/mpl-data/matplotlibrc matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf \
  matplotlib/mpl-data/stylelib/ggplot.mplstyle fontTools/__init__.pyc cycler/__init__.pyc \
  pyparsing/__init__.pyc packaging/version.pyc
