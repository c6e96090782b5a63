#!/usr/bin/env bash
# sci-pandas: pandas' extension modules, against that numpy.
#
# pandas, built against the numpy of sci-numpy: meson (the one in SCI_TOOLS)
# with the same cross file (but -Oz, below), except that its Python also
# finds two build-time stand-ins: a numpy package whose get_include() names
# the headers of the numpy built here (pandas' meson.build asks numpy for
# them; the real numpy cannot run on the build machine's Python), and
# Cython, whose Tempita generates pandas' .pxi files. pandas'
# generate_version.py imports versioneer even when it only prints the
# version the sdist records: an empty versioneer module stands in. Cython
# finds numpy's .pxd in the installed numpy. pandas' modules are renamed
# against numpy's, never the other way round.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=sci-lib.sh
. "$HERE/steps/sci-lib.sh"

step pandas
unpack "$DL/$PANDAS_SDIST" "$PANDAS_SRC"
st=$SCI_GEN/pandas-stand-ins
apply_patches "$PANDAS_SRC" "$HERE"/patches/pandas-"$PANDAS_VERSION"-*.patch
fresh "$PANDAS_BLD" "$SCI_NUMPY_DEV" "$st"
sci_meson install -C "$NUMPY_BLD" --no-rebuild --destdir "$SCI_NUMPY_DEV" --tags devel,python-runtime
npsp=$(find "$SCI_NUMPY_DEV" -type d -name site-packages)
[ -f "$npsp/numpy/__init__.pxd" ] || die "numpy's install has no __init__.pxd (see $STEP_LOG)"
mkdir -p "$st/numpy"
# shellcheck disable=SC2034 # read by template
NUMPY_INCLUDE=$npsp/numpy/_core/include
template "$FILES/numpy-stand-in.py.in" "$st/numpy/__init__.py" NUMPY_INCLUDE
cp "$FILES/versioneer-stand-in.py" "$st/versioneer.py"
ln -s "$(echo "$SCI_ENV"/lib/python3*/site-packages/Cython)" "$st/Cython"
sed "s|^export PYTHONPATH=\(.*\)|export PYTHONPATH=\1:$st|" "$SCI_GEN/python-cross" >"$SCI_GEN/python-cross-pandas"
chmod +x "$SCI_GEN/python-cross-pandas"
# -Oz in place of the cross file's -O2, for the scientific module's cold
# compile: wazero compiles in about proportion to code size, and pandas'
# Cython modules were 14.9 of the module's 30.9 MB of code at -O2, half of
# the compile (docs/scientific.md has the rest of the breakdown). -Oz makes
# them 10.3 MB (mostly Cython's inline helpers no longer inlined at every
# use; -Os took 6% off groupby.pyx, -Oz 38%): the module 39.0 -> 34.3 MB,
# BenchmarkColdCompile/scientific 9.0 -> 7.8 s on 2 cores (medians of 3),
# S2's groupby 8.3 -> 8.7 ms (medians of 8; S1 and S5 unchanged).
sed "s|^python = .*|python = '$SCI_GEN/python-cross-pandas'|; s|'-O2'|'-Oz'|g" "$SCI_GEN/cross.ini" >"$SCI_GEN/cross-pandas.ini"
run_logged env PATH="$SCI_ENV/bin:$PATH" PYTHONPATH="$st" "$SCI_ENV/bin/meson" \
  setup "$PANDAS_BLD" "$PANDAS_SRC" --cross-file "$SCI_GEN/cross-pandas.ini" \
  -Dbuildtype=release -Db_ndebug=if-release -Dpython.bytecompile=-1
fixed=$(sci_specs "$NUMPY_BLD" "${NUMPY_MODULES[@]}")
SCI_NINJA_ENV=(PYTHONPATH="$npsp")
sci_modules "$PANDAS_BLD" "$SCI_GEN/rename-pandas" "$fixed" "${PANDAS_MODULES[@]}"
