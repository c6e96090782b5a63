#!/usr/bin/env bash
# build.sh: builds codeport's CPython for WASI from upstream sources.
#
# Output, written beside this script (the project keeps every committed
# build artifact in a runtime/ folder, with the script that reproduces it):
#   python.wasm    CPython 3.13 as a WASI *reactor* module: no _start; the
#                  host calls _initialize and then entry.c's codeport_*
#                  exports (after wasmpatch has rewritten it, see below),
#                  with localtime.c's time zones (TZ, tzset) in place of
#                  wasi-libc's UTC-only ones, and filemode.c's permission
#                  bits (imported from the host module codeport_fs)
#   python313.zip  the standard library, bytecode with its sources, which
#                  entry.c puts on sys.path as /usr/local/lib/python313.zip
#   SHA256SUMS     sha256sum(1) lines for both
#
# Usage: build.sh           build, then replace the three files above
#        build.sh --check   build into a temporary directory and fail,
#                           printing both hashes, if a result differs from
#                           the committed SHA256SUMS (make runtime-rebuild)
#        build.sh --fetch-source PACKAGE
#                           only fetch the pinned orig tarball of a source
#                           package (python3.13, zlib, ...) into the
#                           download cache, checked, and print its path
#                           (make compat takes CPython's Lib/test from it)
#        build.sh --profile scientific [--check]
#                           the same, and then a second runtime with numpy
#                           and pandas linked in, written to (or, with
#                           --check, checked against) ../scientific/runtime/:
#     python-scientific.wasm  the reactor of entry.c built with
#                             -DCODEPORT_SCIENTIFIC: numpy's, pandas',
#                             Pillow's, matplotlib's, contourpy's and
#                             kiwisolver's extension modules linked
#                             statically and registered as built-in modules
#                             under their dotted names, with exceptions.cpp
#                             (C++ exceptions, setjmp) and FreeType and qhull
#     site-scientific.zip     their Python code (Pillow's PIL, matplotlib
#                             with its mpl-data), their pure-Python
#                             dependencies (dateutil, pytz, six, fontTools,
#                             cycler, pyparsing, packaging), and sympy with
#                             mpmath, bytecode with sources, which that
#                             entry.c puts on sys.path after the stdlib zip,
#                             as /usr/local/lib/site-scientific.zip
#     SHA256SUMS   sha256sum(1) lines for both
#   The default profile's files are the same bytes with either profile. See
#   "The scientific profile" below for how numpy is built.
#
# Why a build of our own: the host instantiates one module per program and
# drives it through exports, so it needs a reactor with exactly the entry
# points of entry.c, and the result has to be reproducible byte for byte so
# that the committed binaries can be checked against their sources.
#
# Where things come from. Every input is pinned by sha256 below and checked
# before use; a mismatch stops the build.
#   * The toolchain is Debian bookworm's (clang-19, lld-19, wasi-libc, ...),
#     installed with apt-get when missing.
#   * Sources are the upstream ("orig") tarballs of Debian trixie's source
#     packages, fetched by package name through apt from the mirror this
#     machine already uses. Only orig tarballs are used: Debian revisions
#     come and go, the upstream tarball of a stable release stays.
#   * tzdata (for zoneinfo, and localtime.c's TZ) is the PyPI wheel,
#     fetched by pip.
#   * --profile scientific only: numpy's, pandas', Pillow's, matplotlib's,
#     contourpy's and kiwisolver's sdists, fetched by pip by name; FreeType
#     and qhull, orig tarballs like the sources above; the pure-Python
#     dependencies and sympy with mpmath, wheels fetched by pip with
#     --require-hashes; the tools that build them (meson, meson-python,
#     Cython, ninja, ...), wheels installed by pip with --require-hashes
#     into a venv in the build directory; Debian's libc++/libc++abi for
#     wasm32.
#   * Upstream code is patched by patches/*.patch (small documented diffs):
#     CPython's f-string tokenizer, sqlite's locking for WASI; with
#     --profile scientific, numpy, pandas, Pillow, pytz, sympy, kiwisolver,
#     contourpy and matplotlib.
#
# Reproducibility. The build runs in a fixed absolute directory (paths end
# up in _sysconfigdata and in the configure-time strings of the binary),
# with a fixed SOURCE_DATE_EPOCH, TZ, locale, umask and hash seed, and
# without inherited compiler or Python settings. Everything except the
# download cache is rebuilt from scratch on every run.
#
# Environment:
#   CODEPORT_BUILD_DIR  build directory (default /var/tmp/codeport-cpython-build);
#                       another directory gives other bytes, so --check is
#                       only meaningful with the default
#   CODEPORT_JOBS       parallel jobs for make (default: nproc)
set -Eeuo pipefail

# ---------------------------------------------------------------------------
# Pins. To move to another release, change a line here, run the script once
# to see the new hash fail, check it against upstream's published hash, and
# commit the new pin together with the rebuilt artifacts.
# ---------------------------------------------------------------------------

PY_VERSION=3.13.5
PY_SHORT=3.13
PY_NODOT=313

DEBIAN_SUITE=trixie
# source package | orig tarball in the archive | its sha256 (= upstream's tarball)
SOURCES=(
  "python3.13|python3.13_3.13.5.orig.tar.xz|93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640"
  "zlib|zlib_1.3.dfsg+really1.3.1.orig.tar.gz|60dd315c07f616887caa029408308a018ace66e3d142726a97db164b3b8f69fb"
  "bzip2|bzip2_1.0.8.orig.tar.gz|ab5a03176ee106d3f0fa90e381da478ddae405918153cca248e682cd0c4a2269"
  "xz-utils|xz-utils_5.8.1.orig.tar.xz|0b54f79df85912504de0b14aec7971e3f964491af1812d83447005807513cd9e"
  "sqlite3|sqlite3_3.46.1.orig.tar.xz|d0cdd2ece271b29e7ce18095745d892517ee26d0f270065b3a25c2e9eb11639c"
)

TZDATA_VERSION=2026.6
TZDATA_WHEEL=tzdata-2026.6-py2.py3-none-any.whl
TZDATA_SHA256=0a10eec6e13ef16b627fabed9a5f2ba61a62b1c67f327305f4e7e412a70b4aec

# The mtime of the CPython 3.13.5 tarball's top directory (2025-06-11
# 15:36:57 UTC): the date the build claims (sys.version, zip entries).
SOURCE_DATE_EPOCH=1749656217

# Bookworm packages the build runs with. tcl: sqlite's amalgamation is
# generated by a Tcl script. python3-pip: fetches the tzdata wheel.
# xz-utils: unpacks .tar.xz.
DEB_PACKAGES=(clang-19 lld-19 llvm-19 libclang-rt-19-dev-wasm32 wasi-libc
  build-essential pkg-config tcl xz-utils zip python3 python3-pip
  ca-certificates debian-archive-keyring)

# Where entry.c looks for the standard library inside the guest.
GUEST_STDLIB_ZIP=/usr/local/lib/python${PY_NODOT}.zip

# --- The scientific profile only ---
# numpy's sdist, fetched by pip by name (see fetch_sdist).
NUMPY_VERSION=2.2.6
NUMPY_SDIST=numpy-2.2.6.tar.gz
NUMPY_SHA256=e29554e2bef54a90aa5cc07da6ce955accb83f21ab5de01a62c8478897b264fd
# The build tools, installed by pip (--require-hashes) into a venv of
# Debian's python3 (3.11, amd64: Cython and ninja are binary wheels for it).
# numpy builds with the meson it vendors (1.5.2, with its SIMD module);
# meson itself is here for meson-python; pybind11's and cppy's headers
# compile contourpy, matplotlib and kiwisolver. name==version sha256 of the
# wheel.
SCI_TOOLS=(
  "meson==1.8.2 274b49dbe26e00c9a591442dd30f4ae9da8ce11ce53d0f4682cd10a45d50f6fd"
  "meson-python==0.18.0 3b0fe051551cc238f5febb873247c0949cd60ded556efa130aa57021804868e2"
  "ninja==1.11.1.4 096487995473320de7f65d622c3f1d16c3ad174797602218ca8c967f51ec38a0"
  "Cython==3.1.2 e05a36224e3002d48c7c1c695b3771343bd16bc57eab60d6c5d5e08f3cbbafd8"
  "pybind11==2.13.6 237c41e29157b962835d356b370ededd57594a26d5894a795960f0047cb5caf5"
  "cppy==1.3.1 7ca132b6ef6187384738804bd3a453d4eab7e3274df6dcd35e5d92aae3404717"
  "packaging==26.4 81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2"
  "pyproject-metadata==0.12.1 f7162d580a96386a8eb096da06215f981f547d1490f03055ef99e323bc2da427"
)
# numpy's extension modules linked into python-scientific.wasm (its test
# modules and _simd, a SIMD test helper, are left out).
NUMPY_MODULES=(
  numpy._core._multiarray_umath
  numpy.fft._pocketfft_umath
  numpy.linalg.lapack_lite
  numpy.linalg._umath_linalg
  numpy.random._bounded_integers
  numpy.random._common
  numpy.random._mt19937
  numpy.random._philox
  numpy.random._pcg64
  numpy.random._sfc64
  numpy.random.bit_generator
  numpy.random._generator
  numpy.random.mtrand
)
# pandas' sdist, fetched by pip by name like numpy's, built by the meson
# pinned in SCI_TOOLS (pandas' own pin needs distutils), against the numpy
# built here.
PANDAS_VERSION=2.2.3
PANDAS_SDIST=pandas-2.2.3.tar.gz
PANDAS_SHA256=4f18ba62b61d7e192368b84517265a99b4d7ee8912f8708660fb4a366cc82667
# pandas' extension modules (its test helper modules are not built by its
# meson.build: all of these are).
PANDAS_MODULES=(
  pandas._libs.algos pandas._libs.arrays pandas._libs.byteswap pandas._libs.groupby
  pandas._libs.hashing pandas._libs.hashtable pandas._libs.index pandas._libs.indexing
  pandas._libs.internals pandas._libs.interval pandas._libs.join pandas._libs.json
  pandas._libs.lib pandas._libs.missing pandas._libs.ops pandas._libs.ops_dispatch
  pandas._libs.pandas_datetime pandas._libs.pandas_parser pandas._libs.parsers
  pandas._libs.properties pandas._libs.reshape pandas._libs.sas pandas._libs.sparse
  pandas._libs.testing pandas._libs.tslib pandas._libs.writers
  pandas._libs.tslibs.base pandas._libs.tslibs.ccalendar pandas._libs.tslibs.conversion
  pandas._libs.tslibs.dtypes pandas._libs.tslibs.fields pandas._libs.tslibs.nattype
  pandas._libs.tslibs.np_datetime pandas._libs.tslibs.offsets pandas._libs.tslibs.parsing
  pandas._libs.tslibs.period pandas._libs.tslibs.strptime pandas._libs.tslibs.timedeltas
  pandas._libs.tslibs.timestamps pandas._libs.tslibs.timezones pandas._libs.tslibs.tzconversion
  pandas._libs.tslibs.vectorized pandas._libs.window.aggregations pandas._libs.window.indexers
)
# Pure-Python packages: pandas' dependencies, and sympy with the mpmath it
# needs. Wheels fetched by pip (--require-hashes) and put in
# site-scientific.zip as they are, less their tests/ packages (pytz and
# sympy patched, see patches/). name==version sha256 of the wheel.
SCI_WHEELS=(
  "python-dateutil==2.9.0.post0 a8b2bc7bffae282281c8140a97d3aa9c14da0b136dfe83f850eea9a5f7470427"
  "pytz==2025.2 5ddf76296dd8c44c26eb8f4b6f35488f3ccbf6fbbd7adee0b7262d43f0ec2f00"
  "six==1.17.0 4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"
  "mpmath==1.3.0 a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c"
  "sympy==1.14.0 e091cc3e99d2141a0ba2847328f5479b05d94a6635cb96148ccb3f34671bd8f5"
  "cycler==0.12.1 85cef7cff222d8644161529808465972e51340599459b8ac3ccbac5a854e0d30"
  "fonttools==4.68.0 d76f8fdcb6936f5e1045a0c9dd721a4bf11112e60d1e243bfa1d39f06a8b3104"
  "packaging==26.4 81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2"
  "pyparsing==3.3.3 ece8c00a69cf01b45d0b1dedabb469c90d8caf996d4fda40f147627a122849a4"
)
# Pillow's sdist, fetched by pip by name (its metadata prepared in pip's
# build isolation: Pillow builds with its own setuptools backend). Its C
# extension modules are compiled straight from the lists in its setup.py
# (no setuptools cross build): PIL._imaging with zlib (no JPEG, TIFF,
# WebP or littlecms), PIL._imagingmath, PIL._imagingmorph, and
# PIL._imagingft with the FreeType built for matplotlib (no raqm: basic
# text layout).
PILLOW_VERSION=11.3.0
PILLOW_SDIST=pillow-11.3.0.tar.gz
PILLOW_SHA256=3828ee7586cd0b2091b6209e5ad53e20d0649bbe87164a459d0676e035e8f523
PILLOW_MODULES=(PIL._imaging PIL._imagingft PIL._imagingmath PIL._imagingmorph)
# matplotlib and the compiled packages it needs, kiwisolver and contourpy:
# sdists fetched by pip by name (kiwisolver's metadata prepared in pip's
# build isolation, like Pillow's), their C++ compiled straight from the
# source lists of their build files with LLVM's Emscripten exception
# lowering (EH_CXXFLAGS, runtime in exceptions.cpp); FreeType and qhull,
# the C libraries matplotlib links, from Debian's orig tarballs, with the
# setjmp/longjmp lowering (EH_SJLJFLAGS, include/setjmp.h).
MATPLOTLIB_VERSION=3.10.9
MATPLOTLIB_SDIST=matplotlib-3.10.9.tar.gz
MATPLOTLIB_SHA256=fd66508e8c6877d98e586654b608a0456db8d7e8a546eb1e2600efd957302358
# name | its extension's sources in the sdist (src/ of matplotlib's
# src/meson.build; the Agg library of extern/agg24-svn is linked once)
MATPLOTLIB_EXTENSIONS=(
  "matplotlib._c_internal_utils|src/_c_internal_utils.cpp"
  "matplotlib._image|src/_image_wrapper.cpp src/py_converters.cpp"
  "matplotlib._path|src/_path_wrapper.cpp"
  "matplotlib._qhull|src/_qhull_wrapper.cpp"
  "matplotlib._tri|src/tri/_tri.cpp src/tri/_tri_wrapper.cpp"
  "matplotlib.ft2font|src/ft2font.cpp src/ft2font_wrapper.cpp"
  "matplotlib.backends._backend_agg|src/_backend_agg.cpp src/_backend_agg_wrapper.cpp"
)
MATPLOTLIB_AGG=(agg_bezier_arc agg_curves agg_image_filters agg_trans_affine agg_vcgen_contour
  agg_vcgen_dash agg_vcgen_stroke agg_vpgen_segmentator)
KIWISOLVER_VERSION=1.5.1
KIWISOLVER_SDIST=kiwisolver-1.5.1.tar.gz
KIWISOLVER_SHA256=f1303ef2eec81262a4b708c3e858afe58d7c75ad91c1c05266eda7673369859a
CONTOURPY_VERSION=1.3.3
CONTOURPY_SDIST=contourpy-1.3.3.tar.gz
CONTOURPY_SHA256=083e12155b210502d0bca491432bb04d56dc3432f95a979b429f2848c3dbe880
MATPLOTLIB_MODULES=(kiwisolver._cext contourpy._contourpy)
for _e in "${MATPLOTLIB_EXTENSIONS[@]}"; do MATPLOTLIB_MODULES+=("${_e%%|*}"); done
unset _e
SCI_SOURCES=(
  "freetype|freetype_2.13.3+dfsg.orig.tar.xz|686ec73cbf6783b245dd068a09ce807b729ac0f8a46dd70f7867923c32fdf4de"
  "qhull|qhull_2020.2.orig.tar.gz|b5c2d7eb833278881b952c8a52d20179eab87766b00b865000469a45c1838b7e"
)
# FreeType's files for its default module list (include/freetype/config/
# ftmodule.h; docs/INSTALL.ANY), under src/.
FREETYPE_FILES=(base/ftsystem base/ftinit base/ftdebug base/ftbase base/ftbbox base/ftglyph
  base/ftbdf base/ftbitmap base/ftcid base/ftfstype base/ftgasp base/ftgxval base/ftmm base/ftotval
  base/ftpatent base/ftpfr base/ftstroke base/ftsynth base/fttype1 base/ftwinfnt autofit/autofit
  bdf/bdf cff/cff cid/type1cid pcf/pcf pfr/pfr sfnt/sfnt truetype/truetype type1/type1 type42/type42
  winfonts/winfnt smooth/smooth raster/raster sdf/sdf svg/svg gzip/ftgzip lzw/ftlzw psaux/psaux
  pshinter/pshinter psnames/psnames cache/ftcache)
# qhull's reentrant library, as matplotlib's subprojects/packagefiles list it.
QHULL_FILES=(geom2_r geom_r global_r io_r libqhull_r mem_r merge_r poly2_r poly_r qset_r random_r
  rboxlib_r stat_r usermem_r userprintf_rbox_r userprintf_r user_r)
# libc++ and libc++abi for wasm32 (numpy has C++ parts); python3-venv for
# the tools' venv.
SCI_DEB_PACKAGES=(libc++-19-dev-wasm32 libc++abi-19-dev-wasm32 python3-venv patch)
GUEST_SITE_ZIP=/usr/local/lib/site-scientific.zip

# ---------------------------------------------------------------------------
# Arguments and environment
# ---------------------------------------------------------------------------

CHECK=0
PROFILE=default
FETCH_SOURCE=""
usage() {
  echo "usage: $0 [--check] [--profile default|scientific]" >&2
  echo "       $0 --fetch-source PACKAGE" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --check) CHECK=1 ;;
    --profile)
      [ $# -ge 2 ] || usage
      PROFILE=$2
      shift
      ;;
    --profile=*) PROFILE=${1#--profile=} ;;
    --fetch-source)
      [ $# -ge 2 ] || usage
      FETCH_SOURCE=$2
      shift
      ;;
    -h | --help)
      sed -n '2,/^set -Eeuo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) usage ;;
  esac
  shift
done
case "$PROFILE" in
  default) ;;
  scientific) DEB_PACKAGES+=("${SCI_DEB_PACKAGES[@]}") ;;
  *) usage ;;
esac

START_TIME=$(date +%s)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The committed artifacts live beside this script (embedded by cpython.go
# from there).
ARTIFACTS=$HERE
REPO=$(cd "$HERE/../../../../.." && pwd)
B=${CODEPORT_BUILD_DIR:-/var/tmp/codeport-cpython-build}
JOBS=${CODEPORT_JOBS:-$(nproc)}

case "$B" in
  /?*) ;;
  *)
    echo "build.sh: CODEPORT_BUILD_DIR must be an absolute path other than /" >&2
    exit 2
    ;;
esac
B=${B%/}

# Nothing from the caller's environment may reach a compiler, configure or
# Python: such settings would change the bytes. (MAKEFLAGS too: under
# `make runtime-rebuild` the outer make's jobserver is not ours.)
unset CC CXX CPP LD AR RANLIB NM STRIP OPT CFLAGS CXXFLAGS CPPFLAGS LDFLAGS LIBS \
  CONFIG_SITE PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR \
  MAKEFLAGS MFLAGS MAKELEVEL GNUMAKEFLAGS MAKEFILES \
  CCACHE_DIR WASI_SDK_PATH WASI_SYSROOT _PYTHON_HOST_PLATFORM \
  _PYTHON_PROJECT_BASE _PYTHON_SYSCONFIGDATA_NAME
for v in $(compgen -e); do
  case "$v" in PYTHON*) unset "$v" ;; esac
done
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH
# Without a fixed seed, set and frozenset constants in bytecode (frozen into
# the binary, and in the zip's .pyc files) come out in a random order.
export PYTHONHASHSEED=0
umask 022

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

LOGS=$B/logs
STEP_LOG=/dev/null
STEP_START=$START_TIME

die() {
  echo "build.sh: $*" >&2
  exit 1
}

# step NAME: starts a step; its commands log to $LOGS/NAME.log (run_logged).
step() {
  STEP_LOG=$LOGS/$1.log
  STEP_START=$(date +%s)
  : >"$STEP_LOG"
  printf '==> %-22s (+%ds)\n' "$1" "$((STEP_START - START_TIME))"
}

# run_logged CMD...: runs CMD with its output in the step's log, so that the
# terminal shows steps, not thousands of compiler lines.
run_logged() {
  "$@" >>"$STEP_LOG" 2>&1
}

on_error() {
  local rc=$?
  # A failing subshell reports through its parent.
  [ "$BASH_SUBSHELL" = 0 ] || exit "$rc"
  echo "build.sh: failed (exit $rc); the end of $STEP_LOG:" >&2
  tail -n 40 "$STEP_LOG" >&2 2>/dev/null || true
  exit "$rc"
}
trap on_error ERR

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# fresh DIR...: an empty directory, so no step sees what a previous run left.
fresh() {
  local d
  for d in "$@"; do
    rm -rf "$d"
    mkdir -p "$d"
  done
}

# ---------------------------------------------------------------------------
# Toolchain
# ---------------------------------------------------------------------------

install_toolchain() {
  local missing=() p
  for p in "${DEB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || die "missing Debian packages (install them as root): ${missing[*]}"
    echo "    installing ${missing[*]}"
    # A machine's package lists may be stale or absent; update and retry once.
    if ! run_logged env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; then
      run_logged apt-get update
      run_logged env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    fi
  fi
  for p in clang-19 wasm-ld-19 llvm-ar-19 llvm-ranlib-19 tclsh zip make gcc; do
    command -v "$p" >/dev/null || die "$p not found after installing ${DEB_PACKAGES[*]}"
  done
  [ -f /usr/lib/wasm32-wasi/libc.a ] || die "wasi-libc is not installed (no /usr/lib/wasm32-wasi/libc.a)"
  # Debian's python3 only runs pip; the Python that compiles anything is
  # built here from the pinned source.
  HOST_PYTHON=/usr/bin/python3

  GO=$(command -v go || true)
  [ -n "$GO" ] || [ ! -x /usr/local/go/bin/go ] || GO=/usr/local/go/bin/go
}

# ---------------------------------------------------------------------------
# Downloads (cached in $B/downloads; a file whose hash matches is not fetched
# again)
# ---------------------------------------------------------------------------

DL=$B/downloads
APT_DIR=$B/apt
APT_UPDATED=0

# A private apt configuration: trixie's Sources index only, from the mirror
# this machine already uses, in files under $APT_DIR. The system's own
# sources, lists and dpkg status stay out of it (with the system's status,
# `apt-get source bzip2` looks for the source of the installed bookworm
# binary package and fails). Sandbox::User=root: apt's _apt user may not
# write into the build directory; nothing here needs that sandbox.
apt_opts() {
  echo "-o Dir::Etc::SourceList=$APT_DIR/sources.list -o Dir::Etc::SourceParts=/nonexistent" \
    "-o Dir::State::Lists=$APT_DIR/lists -o Dir::Cache=$APT_DIR/cache" \
    "-o Dir::State::status=$APT_DIR/status -o APT::Sandbox::User=root" \
    "-o Acquire::Languages=none"
}

# The machine's Debian mirror, read from its own apt configuration, so that
# no host name is written into this repository.
debian_mirror() {
  local uri=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || die "cannot find the Debian mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
  echo "${uri%/}"
}

apt_update_once() {
  [ "$APT_UPDATED" = 0 ] || return 0
  mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
  : >"$APT_DIR/status"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) $DEBIAN_SUITE main" \
    >"$APT_DIR/sources.list"
  # shellcheck disable=SC2046
  run_logged apt-get $(apt_opts) update
  APT_UPDATED=1
}

# fetch_orig PACKAGE FILE SHA256: the orig tarball FILE of source package
# PACKAGE in $DEBIAN_SUITE. apt names its URI; apt-helper downloads just that
# file and checks its hash. (apt-get source --download-only would also fetch
# the .dsc and the Debian revision's tarball, which the mirror may already
# have replaced; we need neither.)
fetch_orig() {
  local pkg=$1 file=$2 want=$3 line uri listed
  if [ -f "$DL/$file" ] && [ "$(sha256 "$DL/$file")" = "$want" ]; then
    echo "    $file (cached)"
    return 0
  fi
  rm -f "$DL/$file"
  apt_update_once
  # shellcheck disable=SC2046
  line=$(apt-get $(apt_opts) -qq source --print-uris "$pkg/$DEBIAN_SUITE" 2>>"$STEP_LOG" |
    awk -v f="$file" '$2 == f')
  [ -n "$line" ] || die "Debian $DEBIAN_SUITE's source package $pkg no longer lists $file; pick a new pin"
  uri=$(echo "$line" | awk '{ print $1 }' | tr -d "'")
  listed=$(echo "$line" | awk '{ print $4 }')
  case "$listed" in
    SHA256:*) [ "${listed#SHA256:}" = "$want" ] ||
      die "Debian lists $file with sha256 ${listed#SHA256:}, but build.sh pins $want; refusing it" ;;
  esac
  echo "    fetching $file"
  run_logged /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$uri" "$DL/$file.partial" "SHA256:$want" ||
    die "downloading $file failed or its sha256 is not $want (see $STEP_LOG)"
  [ "$(sha256 "$DL/$file.partial")" = "$want" ] || die "$file: sha256 mismatch, want $want"
  mv "$DL/$file.partial" "$DL/$file"
}

fetch_tzdata() {
  if [ -f "$DL/$TZDATA_WHEEL" ] && [ "$(sha256 "$DL/$TZDATA_WHEEL")" = "$TZDATA_SHA256" ]; then
    echo "    $TZDATA_WHEEL (cached)"
    return 0
  fi
  rm -f "$DL/$TZDATA_WHEEL"
  echo "    fetching $TZDATA_WHEEL"
  "$HOST_PYTHON" -m pip --version >/dev/null 2>&1 || die "$HOST_PYTHON has no pip (python3-pip)"
  local tmp
  tmp=$(mktemp -d "$DL/pip.XXXXXX")
  run_logged "$HOST_PYTHON" -m pip download --no-deps --only-binary=:all: --no-cache-dir \
    --disable-pip-version-check -d "$tmp" "tzdata==$TZDATA_VERSION"
  [ -f "$tmp/$TZDATA_WHEEL" ] || die "pip did not produce $TZDATA_WHEEL"
  [ "$(sha256 "$tmp/$TZDATA_WHEEL")" = "$TZDATA_SHA256" ] ||
    die "$TZDATA_WHEEL has sha256 $(sha256 "$tmp/$TZDATA_WHEEL"), want $TZDATA_SHA256; refusing it"
  mv "$tmp/$TZDATA_WHEEL" "$DL/$TZDATA_WHEEL"
  rm -rf "$tmp"
}

fetch_all() {
  mkdir -p "$DL"
  local s pkg file want
  for s in "${SOURCES[@]}"; do
    IFS='|' read -r pkg file want <<<"$s"
    fetch_orig "$pkg" "$file" "$want"
  done
  fetch_tzdata
}

# orig FILE-PREFIX: the cached tarball whose name starts with FILE-PREFIX.
orig() {
  local s pkg file want
  for s in "${SOURCES[@]}" "${SCI_SOURCES[@]}"; do
    IFS='|' read -r pkg file want <<<"$s"
    case "$file" in "$1"*) echo "$DL/$file"; return 0 ;; esac
  done
  die "no pinned source $1"
}

# unpack TARBALL DIR: DIR holds the tarball's single top directory's content.
unpack() {
  fresh "$2"
  tar -xf "$1" -C "$2" --strip-components=1 --no-same-owner
}

# ---------------------------------------------------------------------------
# Build steps
# ---------------------------------------------------------------------------

SRC=$B/src
NATIVE=$B/native
SYSROOT=$B/sysroot
TOOLS=$B/tools
DEPS=$B/deps
PREFIX=$B/prefix
CROSS=$B/cpython-wasi
STAGE=$B/stage
WORK_OUT=$B/out

# The sources, with patches/cpython-* and patches/sqlite-* applied (the
# native Python, which only compiles, gets CPython's too: its bytecode is
# the same either way).
unpack_sources() {
  unpack "$(orig python3.13_)" "$SRC/cpython"
  unpack "$(orig zlib_)" "$SRC/zlib"
  unpack "$(orig bzip2_)" "$SRC/bzip2"
  unpack "$(orig xz-utils_)" "$SRC/xz"
  unpack "$(orig sqlite3_)" "$SRC/sqlite"
  local p
  for p in "$HERE"/patches/cpython-"$PY_VERSION"-*.patch; do
    run_logged patch -d "$SRC/cpython" -p1 --no-backup-if-mismatch -i "$p"
  done
  for p in "$HERE"/patches/sqlite-3.46.1-*.patch; do
    run_logged patch -d "$SRC/sqlite" -p1 --no-backup-if-mismatch -i "$p"
  done
}

# Cross-building CPython needs a Python of the very same version on the
# build machine: it freezes modules, generates sysconfigdata, and later
# compiles the zip's bytecode (which must match the interpreter's format).
# It is a tool only, so no tests, no PGO, no debug info.
build_native_python() {
  fresh "$NATIVE"
  cd "$NATIVE"
  run_logged "$SRC/cpython/configure" --prefix="$NATIVE/prefix" --without-ensurepip \
    --disable-test-modules OPT="-DNDEBUG -O2"
  run_logged make -j"$JOBS"
  NATIVE_PY=$NATIVE/python
  [ "$("$NATIVE_PY" -c 'import platform; print(platform.python_version())')" = "$PY_VERSION" ] ||
    die "the native Python is not $PY_VERSION"
}

# The compiler setup shared by every cross build.
#  * A private sysroot holding only wasi-libc: with Debian's default sysroot
#    (/) clang would also search /usr/include, the host's glibc headers.
#  * -B$TOOLS with a no-op wasm-opt: clang runs any wasm-opt it finds after
#    every link that has an -O flag (configure's link tests have one), which
#    makes results depend on whether binaryen is installed, and costs a
#    second per configure test. Whether wasm-opt runs is decided here, once.
setup_cross_toolchain() {
  fresh "$SYSROOT/include" "$SYSROOT/lib" "$TOOLS"
  ln -s /usr/include/wasm32-wasi "$SYSROOT/include/wasm32-wasi"
  ln -s /usr/lib/wasm32-wasi "$SYSROOT/lib/wasm32-wasi"
  cat >"$TOOLS/wasm-opt" <<'EOF'
#!/bin/sh
# Stand-in for binaryen's wasm-opt, which clang would run after optimized
# links ("wasm-opt IN -O2 -o IN"): leaves the linked module as it is.
exit 0
EOF
  chmod +x "$TOOLS/wasm-opt"
  XCC="clang-19 -B$TOOLS --target=wasm32-wasi --sysroot=$SYSROOT"
  XAR=llvm-ar-19
  XRANLIB=llvm-ranlib-19
  # -ffile-prefix-map: no build path in __FILE__ strings (assert messages).
  XCFLAGS="-O2 -ffile-prefix-map=$B=."
  fresh "$PREFIX/include" "$PREFIX/lib"
  # Smoke test: the toolchain links a WASI program.
  echo 'int main(void) { return 0; }' >"$TOOLS/t.c"
  run_logged $XCC $XCFLAGS "$TOOLS/t.c" -o "$TOOLS/t.wasm" || die "clang-19 cannot link for wasm32-wasi"
  rm -f "$TOOLS/t.c" "$TOOLS/t.wasm"
}

build_zlib() {
  fresh "$DEPS/zlib"
  cp -a "$SRC/zlib/." "$DEPS/zlib/"
  cd "$DEPS/zlib"
  run_logged env CHOST=wasm32-unknown-wasi CC="$XCC" AR="$XAR" RANLIB="$XRANLIB" CFLAGS="$XCFLAGS" \
    ./configure --static --prefix="$PREFIX"
  run_logged make -j"$JOBS" libz.a
  cp libz.a "$PREFIX/lib/"
  cp zlib.h zconf.h "$PREFIX/include/"
}

# What codeport adds to wasi-libc, as a library that every link of CPython
# takes (configure's LIBS: its own python.wasm, the reactors, configure's
# test programs): localtime.c, the time zone (TZ, tzset), whose object
# defines the symbols of wasi-libc's UTC-only one, which is then never
# linked; filemode.c, permission bits and chmod from the host module
# codeport_fs.
build_libcodeport() {
  fresh "$DEPS/libcodeport"
  cd "$DEPS/libcodeport"
  run_logged $XCC $XCFLAGS -Wall -Wextra -I"$PREFIX/include" -DCODEPORT_TZ_ZIP="\"$GUEST_STDLIB_ZIP\"" \
    -c "$HERE/localtime.c" -o localtime.o
  run_logged $XCC $XCFLAGS -Wall -Wextra -c "$HERE/filemode.c" -o filemode.o
  rm -f "$PREFIX/lib/libcodeport.a"
  run_logged $XAR rcs "$PREFIX/lib/libcodeport.a" localtime.o filemode.o
}

# bzip2's Makefile builds programs and a shared library too; the library is
# seven files, compiled here as its Makefile would (minus -g).
build_bzip2() {
  fresh "$DEPS/bzip2"
  cd "$DEPS/bzip2"
  local f objs=()
  for f in blocksort huffman crctable randtable compress decompress bzlib; do
    run_logged $XCC $XCFLAGS -Wall -D_FILE_OFFSET_BITS=64 -c "$SRC/bzip2/$f.c" -o "$f.o"
    objs+=("$f.o")
  done
  run_logged "$XAR" rcs libbz2.a "${objs[@]}"
  cp libbz2.a "$PREFIX/lib/"
  cp "$SRC/bzip2/bzlib.h" "$PREFIX/include/"
}

# liblzma only; no threads (WASI has none here), no programs, no NLS.
build_xz() {
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
}

# Debian's orig tarball is sqlite's full source tree, without the
# single-file amalgamation; generating sqlite3.c takes a native configure
# and some Tcl. Only sqlite3.c is cross-compiled.
build_sqlite() {
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
}

build_cpython() {
  fresh "$CROSS"
  cd "$CROSS"
  # configure cannot run wasm programs, and Debian's wasi-libc (2022)
  # differs from the WASI SDK CPython targets: start from CPython's own
  # answers and add what that libc gets wrong.
  cp "$SRC/cpython/Tools/wasm/config.site-wasm32-wasi" config.site
  cat >>config.site <<'EOF'

# --- codeport additions (build.sh) ---
# This wasi-libc has no <pthread.h>. CPython brings pthread stubs whose
# types are 32-bit, but configure checks the types against the header.
ac_cv_have_pthread_t=yes
ac_cv_sizeof_pthread_t=4
ac_cv_sizeof_pthread_key_t=4
# time.sleep() would sleep to an absolute deadline with clock_nanosleep
# (found in libc, or again through -lrt); the host refuses absolute-time
# waits. Without it CPython sleeps with a relative nanosleep().
ac_cv_func_clock_nanosleep=no
ac_cv_lib_rt_clock_nanosleep=no
# tzset() and TZ: localtime.c, in LIBS (see build_libcodeport); configure's
# check runs a program, which it cannot here.
ac_cv_working_tzset=yes
# chmod: filemode.c, in LIBS (CPython's own answer above is no).
ac_cv_func_chmod=yes
EOF
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
  # reactor's copies; it ends by listing the modules it could not build.
  run_logged make -j"$JOBS" all
  MODULE_REPORT=$(sed -n '/^The following modules are/,/^Checked [0-9]* modules/p' "$STEP_LOG")
  SYSCONFIGDATA=$(ls "$CROSS"/build/lib.wasi-wasm32-"$PY_SHORT"/_sysconfigdata_*.py)
}

# The reactor: entry.c plus exactly what CPython links into its own
# python.wasm (objects, LIBS, MODLIBS with the HACL, expat, mpdec and our
# zlib/bz2/lzma/sqlite libraries, SYSLIBS, and LDFLAGS_NODIST's stack size,
# --stack-first and initial memory), taken from CPython's Makefile by
# including it, but linked with wasi-libc's reactor start file instead of
# the command one. The link has no -O flag, so clang runs no wasm-opt.
#
# binaryen's wasm-opt -O2 (Debian's version 108) was measured on this module
# and left out: it is deterministic and makes the module 13-15% smaller,
# but it did not make Python code run faster under wazero, did not make
# wazero's compilation faster, costs 20-40 s per build, and splits the data
# into ~10,000 segments that wasmpatch then turns into as many passive ones.
link_reactor() {
  mkdir -p "$CROSS/codeport" "$WORK_OUT"
  cp "$HERE/entry.c" "$CROSS/codeport/entry.c"
  cat >"$CROSS/codeport/reactor.mk" <<'EOF'
# Included after CPython's Makefile: make -f Makefile -f codeport/reactor.mk
codeport/entry.o: codeport/entry.c $(PYTHON_HEADERS)
	$(CC) -c $(PY_STDMODULE_CFLAGS) -o $@ codeport/entry.c

codeport/python-reactor.wasm: codeport/entry.o $(LINK_PYTHON_DEPS)
	$(LINKCC) $(PY_CORE_LDFLAGS) $(LINKFORSHARED) -mexec-model=reactor -o $@ \
		codeport/entry.o $(LINK_PYTHON_OBJS) $(LIBS) $(MODLIBS) $(SYSLIBS)

.PHONY: codeport-reactor codeport-print-link
codeport-reactor: codeport/python-reactor.wasm
codeport-print-link:
	@echo '$(PY_CORE_LDFLAGS) $(LINKFORSHARED)'
EOF
  cd "$CROSS"
  run_logged make -f Makefile -f codeport/reactor.mk codeport-reactor
  LINK_FLAGS=$(make -s -f Makefile -f codeport/reactor.mk codeport-print-link | xargs)
  cp codeport/python-reactor.wasm "$WORK_OUT/python-linked.wasm"
  check_module "$WORK_OUT/python-linked.wasm"
}

# check_module FILE [EXPORT...]: the module imports nothing but WASI preview
# 1 functions and filemode.c's two of codeport_fs, and exports memory, _initialize, the codeport_* entry points
# and any further EXPORTs named. A small parser of the module's import and
# export sections, run by the native Python: no extra tool needed.
check_module() {
  local f=$1
  shift
  "$NATIVE_PY" -I - "$f" "$@" <<'EOF'
import sys

data = open(sys.argv[1], "rb").read()
want = {"memory", "_initialize", "codeport_buffer", "codeport_init",
        "codeport_boot", "codeport_run", *sys.argv[2:]}
if data[:8] != b"\0asm\1\0\0\0":
    sys.exit(f"{sys.argv[1]}: not a WebAssembly 1.0 module")
pos = 8

def leb():
    global pos
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result

def name():
    global pos
    n = leb()
    pos += n
    return data[pos - n:pos].decode()

def limits():
    flags = leb()
    leb()
    if flags & 1:
        leb()

imports, exports = [], {}
while pos < len(data):
    sid = data[pos]
    pos += 1
    size = leb()
    end = pos + size
    if sid == 2:
        for _ in range(leb()):
            mod, field, kind = name(), name(), data[pos]
            pos += 1
            imports.append((mod, field, kind))
            if kind == 0:
                leb()
            elif kind == 1:
                pos += 1
                limits()
            elif kind == 2:
                limits()
            elif kind == 3:
                pos += 2
    elif sid == 7:
        for _ in range(leb()):
            n = name()
            kind = data[pos]
            pos += 1
            exports[n] = (kind, leb())
    pos = end

# codeport_fs: filemode.c's permission bits (adapters/wasm provides it);
# in the scientific module, exceptions.cpp's unwinding: codeport_cxx.throw
# and the lowering's env.invoke_<signature> trampolines.
host = {("codeport_fs", "mode"), ("codeport_fs", "chmod"), ("codeport_cxx", "throw")}
bad = [f"{m}.{f}" for m, f, k in imports
       if (m != "wasi_snapshot_preview1" and (m, f) not in host
           and not (m == "env" and f.startswith("invoke_"))) or k != 0]
missing = sorted(want - exports.keys())
if bad or missing:
    sys.exit(f"{sys.argv[1]}: imports outside WASI preview 1 and codeport_fs: {bad}; missing exports: {missing}")
print(f"    {len(imports)} imports; exports: {' '.join(sorted(exports))}")
EOF
}

# wasmpatch (adapters/wasm/internal/wasmpatch) rewrites the module for the
# host: interrupt checks at loop headers, mutable globals exported, data
# segments made passive (restored by codeport_init_data). Its output is
# what gets committed, so SHA256SUMS covers the patcher's version too.
patch_module() {
  local tool=$REPO/adapters/wasm/internal/wasmpatch/cmd/wasmpatch
  if [ ! -d "$tool" ]; then
    echo "    WARNING: $tool does not exist; python.wasm is the UNPATCHED module" >&2
    cp "$WORK_OUT/python-linked.wasm" "$WORK_OUT/python.wasm"
    PATCHED=0
    return 0
  fi
  [ -n "$GO" ] || die "Go is needed to run wasmpatch (install it, or put go on PATH)"
  (cd "$REPO" && run_logged "$GO" run ./adapters/wasm/internal/wasmpatch/cmd/wasmpatch \
    -in "$WORK_OUT/python-linked.wasm" -out "$WORK_OUT/python.wasm")
  tail -n 1 "$STEP_LOG" | sed 's/^/    /'
  check_module "$WORK_OUT/python.wasm" codeport_init_data
  PATCHED=1
}

# The standard library as a zip of .pyc files, in the legacy layout (x.pyc
# where x.py was), with each x.py beside its x.pyc. zipimport loads the
# bytecode (unchecked-hash: it never reads the source to validate it); the
# sources are there for the zip importer's get_source, through which
# linecache shows stdlib lines in tracebacks and inspect.getsource finds
# them. The bytecode records the path it will have in the guest.
build_stdlib_zip() {
  fresh "$STAGE"
  # Lib/, less what cannot work in a WASI sandbox or is development-only;
  # no __pycache__ (the native build writes some into the source tree).
  (cd "$SRC/cpython/Lib" && find . \
    \( -path ./test -o -path ./idlelib -o -path ./tkinter -o -path ./turtledemo \
    -o -path ./ensurepip -o -path ./venv -o -path ./lib2to3 -o -path ./site-packages \
    -o -name __pycache__ \) -prune -o \
    -type f ! -name turtle.py \
    ! -name mypy.ini ! -name '*.rst' ! -name '*.bat' ! -name 'README*' ! -name fetch_macholib \
    -print | LC_ALL=C sort | tar -cf - --no-recursion -T - | tar -xf - -C "$STAGE")
  # The cross build's sysconfig data (sysconfig.get_config_vars()).
  cp "$SYSCONFIGDATA" "$STAGE/"
  # IANA time zones for zoneinfo: there is no system tz database in the guest.
  mkdir -p "$STAGE/tzwheel"
  "$NATIVE_PY" -I -m zipfile -e "$DL/$TZDATA_WHEEL" "$STAGE/tzwheel"
  mv "$STAGE/tzwheel/tzdata" "$STAGE/tzdata"
  rm -rf "$STAGE/tzwheel"

  # unchecked-hash: pyc files that do not depend on source mtimes (nothing
  # in the guest compares them with their sources). The hash seed is fixed
  # (see the top).
  run_logged "$NATIVE_PY" -I -m compileall -b -q -j "$JOBS" --invalidation-mode unchecked-hash \
    -d "$GUEST_STDLIB_ZIP" "$STAGE"
  local py missing=0
  while IFS= read -r -d '' py; do
    [ -f "${py}c" ] || { echo "no bytecode for $py" >>"$STEP_LOG"; missing=1; }
  done < <(find "$STAGE" -name '*.py' -print0)
  [ "$missing" = 0 ] || die "some modules did not compile (see $STEP_LOG)"

  # A deterministic archive: fixed modes and mtimes, sorted entries, no
  # extra fields (-X: uid/gid, extended times), no directory entries (-D;
  # zipimport finds packages by their __init__.pyc and implies
  # directories).
  find "$STAGE" -type f -exec chmod 0644 {} +
  find "$STAGE" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  rm -f "$WORK_OUT/python$PY_NODOT.zip"
  (cd "$STAGE" && find . -type f | sed 's|^\./||' | LC_ALL=C sort |
    zip -q -X -D -9 "$WORK_OUT/python$PY_NODOT.zip" -@)
  # What the interpreter imports while starting, and a time zone.
  "$NATIVE_PY" -I -c 'import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
lack = [n for n in sys.argv[2:] if n not in names]
sys.exit(f"{sys.argv[1]} lacks {lack}" if lack else None)' "$WORK_OUT/python$PY_NODOT.zip" \
    encodings/__init__.pyc encodings/utf_8.pyc os.pyc site.pyc json/__init__.pyc tzdata/zoneinfo/Europe/Paris
}

# ---------------------------------------------------------------------------
# The scientific profile (--profile scientific): numpy and pandas in a
# second reactor
# ---------------------------------------------------------------------------
#
# How. numpy's own meson build (the meson it vendors) cross-compiles with a
# cross file written here; the Python it introspects is the native CPython
# reporting the cross build's sysconfig (python-cross). Extension modules
# are meson shared modules, which wasm32-wasi cannot link: the compiler
# wrapper (cc-wrap) turns each such link into an archive of the module's
# objects plus a list (ARCHIVE.libs) of the static libraries it links.
# python-scientific.wasm is the reactor's link of CPython, with entry.c
# compiled with -DCODEPORT_SCIENTIFIC, plus those archives (whole, so that
# a symbol defined twice is an error, not a silent pick) and libraries.
#
# One namespace. Linked statically, all modules share one symbol namespace.
# After a first build, sci-plan.py lists with llvm-nm the global symbols
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
# Options. No threads, no SIMD (wasmpatch refuses SIMD; numpy's baseline C
# loops, no dispatch), no BLAS/LAPACK (numpy's bundled lapack_lite), no
# SVML, highway or x86-simd-sort. numpy's and pandas' C++ is compiled with
# -fexceptions but without the exception lowering (EH_CXXFLAGS, which the
# C++ of matplotlib and its dependencies gets): their catch blocks are
# compiled out, and a throw, which no invoke_ then catches, ends the call
# (exceptions.cpp); -Drestrict=__restrict because CPython's pthread
# stubs header uses C's restrict. wasi-libc's long double printf/strtold
# is linked: numpy's longdouble needs it.

SCI=$B/sci
SCI_ENV=$SCI/hostenv
SCI_GEN=$SCI/gen
NUMPY_SRC=$SCI/numpy-src
NUMPY_BLD=$SCI/numpy-build
# numpy as meson installs it (headers, .pxd), for building pandas.
SCI_NUMPY_DEV=$SCI/numpy-dev
PANDAS_SRC=$SCI/pandas-src
PANDAS_BLD=$SCI/pandas-build
PILLOW_SRC=$SCI/pillow-src
PILLOW_BLD=$SCI/pillow-build
SCI_STAGE=$SCI/stage
SCI_LINK=$CROSS/codeport/scientific
ARTIFACTS_SCI=$(cd "$HERE/.." && pwd)/scientific/runtime
SCI_EXT_SUFFIX=.cpython-$PY_NODOT-wasm32-wasi.so

# The build tools' venv (fresh each run; the wheels are cached in
# $DL/sci-tools, and pip checks each against its pinned hash).
sci_tools() {
  fresh "$SCI"
  mkdir -p "$DL/sci-tools"
  local t req=$SCI/requirements.txt
  : >"$req"
  for t in "${SCI_TOOLS[@]}"; do
    echo "${t% *} --hash=sha256:${t#* }" >>"$req"
  done
  "$HOST_PYTHON" -m pip --version >/dev/null 2>&1 || die "$HOST_PYTHON has no pip (python3-pip)"
  run_logged "$HOST_PYTHON" -m pip download --no-deps --only-binary=:all: --require-hashes \
    --no-cache-dir --disable-pip-version-check -d "$DL/sci-tools" -r "$req"
  run_logged "$HOST_PYTHON" -m venv "$SCI_ENV"
  run_logged "$SCI_ENV/bin/python" -m pip install --no-index --find-links "$DL/sci-tools" \
    --no-deps --only-binary=:all: --require-hashes --no-cache-dir --disable-pip-version-check -r "$req"
}

# fetch_sdist NAME VERSION FILE SHA256: a package's sdist (numpy's,
# pandas'), by pip by name, into $DL. Before saving an sdist, pip prepares
# its metadata through the sdist's build backend; meson-python has no hook
# for that, so pip would build all of numpy natively just to read its name
# and version (8.5 min here). A stand-in "mesonpy" module, first on
# PYTHONPATH with --no-build-isolation, answers with the sdist's own
# PKG-INFO instead.
fetch_sdist() {
  local name=$1 version=$2 file=$3 want=$4 isolation=${5:-} tmp
  if [ -f "$DL/$file" ] && [ "$(sha256 "$DL/$file")" = "$want" ]; then
    echo "    $file (cached)"
    return 0
  fi
  rm -f "$DL/$file"
  echo "    fetching $file"
  tmp=$(mktemp -d "$DL/pip.XXXXXX")
  mkdir -p "$tmp/stub/mesonpy"
  cat >"$tmp/stub/mesonpy/__init__.py" <<'EOF'
# Stand-in for meson-python while pip downloads an sdist (build.sh).
import email.parser
import os


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    with open("PKG-INFO", encoding="utf-8") as f:
        text = f.read()
    msg = email.parser.Parser().parsestr(text, headersonly=True)
    name = f"{msg['Name'].replace('-', '_')}-{msg['Version']}.dist-info"
    os.makedirs(os.path.join(metadata_directory, name))
    with open(os.path.join(metadata_directory, name, "METADATA"), "w", encoding="utf-8") as f:
        f.write(text)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("build.sh only downloads this sdist")
EOF
  # A meson-python sdist's metadata comes from the stub above; with
  # "isolated", pip prepares it in its build isolation (the sdist's own
  # backend and its requirements, fetched by name; only the sdist's bytes,
  # checked below, reach the build).
  local noiso=--no-build-isolation
  [ "$isolation" != isolated ] || noiso=
  run_logged env PYTHONPATH="$tmp/stub" "$HOST_PYTHON" -m pip download --no-deps --no-binary=:all: \
    $noiso --no-cache-dir --disable-pip-version-check -d "$tmp" "$name==$version"
  [ -f "$tmp/$file" ] || die "pip did not produce $file"
  [ "$(sha256 "$tmp/$file")" = "$want" ] ||
    die "$file has sha256 $(sha256 "$tmp/$file"), want $want; refusing it"
  mv "$tmp/$file" "$DL/$file"
  rm -rf "$tmp"
}

# pandas' pure-Python dependencies (SCI_WHEELS), checked by pip against
# their pinned hashes, cached in $DL/sci-wheels.
fetch_sci_wheels() {
  mkdir -p "$DL/sci-wheels"
  local t req=$SCI/wheels.txt
  : >"$req"
  for t in "${SCI_WHEELS[@]}"; do
    echo "${t% *} --hash=sha256:${t#* }" >>"$req"
  done
  run_logged "$HOST_PYTHON" -m pip download --no-deps --only-binary=:all: --require-hashes \
    --no-cache-dir --disable-pip-version-check -d "$DL/sci-wheels" -r "$req"
}

# sci_archive MODULE: the archive cc-wrap makes for a dotted module name,
# relative to the meson build directory.
sci_archive() {
  local m=$1
  echo "$(echo "${m%.*}" | tr . /)/${m##*.}$SCI_EXT_SUFFIX"
}

# The cross-compilation helpers: python-cross, cc-wrap, the cross file, and
# the clash finder.
write_sci_tools() {
  cat >"$SCI_GEN/python-cross" <<EOF
#!/bin/sh
# The native CPython $PY_VERSION, reporting the wasm32-wasi build's sysconfig
# (include directories, EXT_SUFFIX) to meson: a cross build's Python.
export _PYTHON_SYSCONFIGDATA_NAME=$(basename "$SYSCONFIGDATA" .py)
export _PYTHON_PROJECT_BASE=$CROSS
export PYTHONPATH=$(dirname "$SYSCONFIGDATA")
exec $NATIVE_PY "\$@"
EOF
  cat >"$SCI_GEN/cc-wrap" <<'EOF'
#!/bin/bash
# cc-wrap COMPILER ARG...: runs the cross compiler (clang), except:
#  * meson's links of Python extension modules (-shared), which wasm32-wasi
#    cannot make, become an archive of the module's objects (linked
#    statically into the reactor later), with the static libraries the
#    module links listed in OUTPUT.libs;
#  * no -fPIC (meson's default for modules): the objects are linked
#    statically like CPython's own, and PIC wasm code goes through GOT
#    imports;
#  * a compile of an extension module's source (an object under
#    MOD.so.p/) gets -include $SCI_RENAME_DIR/<dotted module>.h if the
#    build wrote one (symbol clashes, see build.sh).
shared=0 out= prev= args=()
for a in "$@"; do
  case "$a" in
    -shared) shared=1 ;;
    -fPIC) continue ;;
  esac
  [ "$prev" = -o ] && out=$a
  prev=$a
  args+=("$a")
done
if [ $shared = 0 ]; then
  case "$out" in
    *.so.p/*.o)
      base=${out%%.so.p/*}
      mod=${base##*/}
      mod=${mod%%.*}
      dir=.
      case "$base" in */*) dir=${base%/*} ;; esac
      key=$(echo "$dir/$mod" | sed 's|^\./||; s|/|.|g')
      if [ -n "${SCI_RENAME_DIR:-}" ] && [ -f "$SCI_RENAME_DIR/$key.h" ]; then
        args+=(-include "$SCI_RENAME_DIR/$key.h")
      fi
      ;;
  esac
  exec "${args[@]}"
fi
objs=() libs=()
prev=
for a in "${args[@]}"; do
  if [ "$prev" != -o ]; then
    case "$a" in
      *.o) objs+=("$a") ;;
      *.a) libs+=("$a") ;;
    esac
  fi
  prev=$a
done
rm -f "$out"
llvm-ar-19 rcD "$out" "${objs[@]}"
: >"$out.libs"
[ ${#libs[@]} = 0 ] || printf '%s\n' "${libs[@]}" >"$out.libs"
EOF
  chmod +x "$SCI_GEN/python-cross" "$SCI_GEN/cc-wrap"
  local cc="'$SCI_GEN/cc-wrap', 'clang-19', '-B$TOOLS', '--target=wasm32-wasi', '--sysroot=$SYSROOT'"
  local flags="'-O2', '-ffile-prefix-map=$B=.'"
  cat >"$SCI_GEN/cross.ini" <<EOF
[binaries]
c = [$cc]
cpp = [${cc/clang-19/clang++-19}]
ar = 'llvm-ar-19'
strip = 'llvm-strip-19'
python = '$SCI_GEN/python-cross'
cython = '$SCI_ENV/bin/cython'

[host_machine]
system = 'wasi'
cpu_family = 'wasm32'
cpu = 'wasm32'
endian = 'little'

[properties]
needs_exe_wrapper = true
# numpy runs a test program for this unless told (clang's wasm32 long
# double is IEEE binary128).
longdouble_format = 'IEEE_QUAD_LE'

[built-in options]
c_args = [$flags]
cpp_args = [$flags, '-fexceptions', '-Drestrict=__restrict']
EOF
  cat >"$SCI_GEN/sci-plan.py" <<'EOF'
# sci-plan.py RENAME_DIR [--fixed] BUILD_DIR:MODULE=ARCHIVE...: the global
# symbols that would clash in one static link of the modules, and for each
# module defining one, RENAME_DIR/MODULE.h renaming its own definitions. A
# symbol clashes if it is defined (strongly) by the objects of two modules,
# or by a module and a static library one of them links (the paths in
# ARCHIVE.libs are relative to the module's BUILD_DIR). Modules after
# --fixed (another package's, already built and renamed) are never renamed:
# a clash with one renames only the other side, and a clash among them is
# an error.
import os, subprocess, sys
from collections import defaultdict


def defined(path):
    out = subprocess.run(["llvm-nm-19", "--defined-only", "--extern-only", path],
                         check=True, capture_output=True, text=True).stdout
    return {f[2] for f in (l.split() for l in out.splitlines()) if len(f) == 3 and f[1] in "TDBR"}


rename_dir = sys.argv[1]
owners = defaultdict(set)
fixed = set()
libs = set()
is_fixed = False
for arg in sys.argv[2:]:
    if arg == "--fixed":
        is_fixed = True
        continue
    build_dir, spec = arg.split(":", 1)
    name, archive = spec.split("=", 1)
    if is_fixed:
        fixed.add(name)
    archive = os.path.join(build_dir, archive)
    for s in defined(archive):
        owners[s].add(name)
    with open(archive + ".libs") as f:
        libs.update(os.path.join(build_dir, l.strip()) for l in f if l.strip())
lib_syms = set()
for lib in sorted(libs):
    lib_syms |= defined(lib)
renames = defaultdict(list)
for s, who in owners.items():
    if s.startswith("PyInit_"):
        if len(who) > 1:
            sys.exit(f"two modules define {s}: {sorted(who)}")
        continue
    if len(who) > 1 or s in lib_syms:
        movable = who - fixed
        if not movable:
            sys.exit(f"{s} is defined by {sorted(who)}, none of which this build may rename")
        for m in movable:
            renames[m].append(s)
os.makedirs(rename_dir, exist_ok=True)
for m, syms in sorted(renames.items()):
    prefix = m.replace(".", "_") + "__"
    with open(os.path.join(rename_dir, m + ".h"), "w") as f:
        f.write(f"/* Generated by build.sh: {m}'s symbols that clash in the static link. */\n")
        for s in sorted(syms):
            f.write(f"#define {s} {prefix}{s}\n")
    print(f"    {m}: {len(syms)} symbols renamed ({', '.join(sorted(syms)[:3])}{', ...' if len(syms) > 3 else ''})")
EOF
}

# sci_specs BUILD_DIR MODULE...: sci-plan.py's arguments for the modules.
sci_specs() {
  local bld=$1 m
  shift
  for m in "$@"; do
    echo "$bld:$m=$(sci_archive "$m")"
  done
}

# sci_plan DIR SPEC...: runs sci-plan.py, writing DIR.
sci_plan() {
  local dir=$1
  shift
  rm -rf "$dir"
  "$NATIVE_PY" -I "$SCI_GEN/sci-plan.py" "$dir" "$@" | tee -a "$STEP_LOG"
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

build_numpy() {
  unpack "$DL/$NUMPY_SDIST" "$NUMPY_SRC"
  local p
  for p in "$HERE"/patches/numpy-"$NUMPY_VERSION"-*.patch; do
    run_logged patch -d "$NUMPY_SRC" -p1 --no-backup-if-mismatch -i "$p"
  done
  fresh "$SCI_GEN" "$NUMPY_BLD"
  write_sci_tools
  run_logged env PATH="$SCI_ENV/bin:$PATH" "$SCI_ENV/bin/python" "$NUMPY_SRC/vendored-meson/meson/meson.py" \
    setup "$NUMPY_BLD" "$NUMPY_SRC" --cross-file "$SCI_GEN/cross.ini" \
    -Dbuildtype=release -Db_ndebug=if-release -Dpython.bytecompile=-1 \
    -Ddisable-optimization=true -Ddisable-threading=true \
    -Dallow-noblas=true -Dblas=none -Dlapack=none \
    -Ddisable-svml=true -Ddisable-highway=true -Ddisable-intel-sort=true
  SCI_NINJA_ENV=()
  sci_modules "$NUMPY_BLD" "$SCI_GEN/rename-numpy" "" "${NUMPY_MODULES[@]}"
}

# pandas, built against the numpy above: meson (the one in SCI_TOOLS) with
# the same cross file, except that its Python also finds two build-time
# stand-ins: a numpy package whose get_include() names the headers of the
# numpy built here (pandas' meson.build asks numpy for them; the real numpy
# cannot run on the build machine's Python), and Cython, whose Tempita
# generates pandas' .pxi files. pandas' generate_version.py imports
# versioneer even when it only prints the version the sdist records: an
# empty versioneer module stands in. Cython finds numpy's .pxd in the
# installed numpy. pandas' modules are renamed against numpy's, never the
# other way round.
build_pandas() {
  unpack "$DL/$PANDAS_SDIST" "$PANDAS_SRC"
  local p st=$SCI_GEN/pandas-stand-ins npsp
  for p in "$HERE"/patches/pandas-"$PANDAS_VERSION"-*.patch; do
    run_logged patch -d "$PANDAS_SRC" -p1 --no-backup-if-mismatch -i "$p"
  done
  fresh "$PANDAS_BLD" "$SCI_NUMPY_DEV" "$st"
  run_logged env PATH="$SCI_ENV/bin:$PATH" "$SCI_ENV/bin/python" "$NUMPY_SRC/vendored-meson/meson/meson.py" \
    install -C "$NUMPY_BLD" --no-rebuild --destdir "$SCI_NUMPY_DEV" --tags devel,python-runtime
  npsp=$(find "$SCI_NUMPY_DEV" -type d -name site-packages)
  [ -f "$npsp/numpy/__init__.pxd" ] || die "numpy's install has no __init__.pxd (see $STEP_LOG)"
  mkdir -p "$st/numpy"
  printf '# build.sh: stand-in for numpy while meson configures pandas.\ndef get_include():\n    return %s\n' \
    "'$npsp/numpy/_core/include'" >"$st/numpy/__init__.py"
  echo "# build.sh: stand-in; pandas' sdist records its version in _version_meson.py." >"$st/versioneer.py"
  ln -s "$(echo "$SCI_ENV"/lib/python3*/site-packages/Cython)" "$st/Cython"
  sed "s|^export PYTHONPATH=\(.*\)|export PYTHONPATH=\1:$st|" "$SCI_GEN/python-cross" >"$SCI_GEN/python-cross-pandas"
  chmod +x "$SCI_GEN/python-cross-pandas"
  sed "s|^python = .*|python = '$SCI_GEN/python-cross-pandas'|" "$SCI_GEN/cross.ini" >"$SCI_GEN/cross-pandas.ini"
  run_logged env PATH="$SCI_ENV/bin:$PATH" PYTHONPATH="$st" "$SCI_ENV/bin/meson" \
    setup "$PANDAS_BLD" "$PANDAS_SRC" --cross-file "$SCI_GEN/cross-pandas.ini" \
    -Dbuildtype=release -Db_ndebug=if-release -Dpython.bytecompile=-1
  local fixed
  fixed=$(sci_specs "$NUMPY_BLD" "${NUMPY_MODULES[@]}")
  SCI_NINJA_ENV=(PYTHONPATH="$npsp")
  sci_modules "$PANDAS_BLD" "$SCI_GEN/rename-pandas" "$fixed" "${PANDAS_MODULES[@]}"
}

# Pillow: its extension modules compiled with the cross compiler, one
# archive each, from the source lists of its setup.py (_IMAGING and
# _LIB_IMAGING make PIL._imaging), with zlib; the sources of the codecs it
# is built without (JPEG, JPEG 2000, TIFF, libimagequant, Windows DIB)
# compile to nothing without their HAVE_* macros. Its symbols are checked
# against numpy's, pandas' and CPython's: a clash fails the build.
build_pillow() {
  unpack "$DL/$PILLOW_SDIST" "$PILLOW_SRC"
  local m src f o files p
  for p in "$HERE"/patches/pillow-"$PILLOW_VERSION"-*.patch; do
    run_logged patch -d "$PILLOW_SRC" -p1 --no-backup-if-mismatch -i "$p"
  done
  fresh "$PILLOW_BLD"
  for m in "${PILLOW_MODULES[@]}"; do
    case $m in
    PIL._imaging)
      files=$("$NATIVE_PY" -I -c 'import ast, sys
t = ast.parse(open(sys.argv[1]).read())
v = {n.targets[0].id: ast.literal_eval(n.value) for n in t.body
     if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and n.targets[0].id in ("_IMAGING", "_LIB_IMAGING")}
print("src/_imaging.c", *("src/%s.c" % x for x in v["_IMAGING"]), *("src/libImaging/%s.c" % x for x in v["_LIB_IMAGING"]))' \
        "$PILLOW_SRC/setup.py") || die "cannot read Pillow's source lists from its setup.py"
      ;;
    *) files=src/${m#PIL.}.c ;;
    esac
    mkdir -p "$PILLOW_BLD/${m#PIL.}"
    for src in $files; do
      f=$PILLOW_SRC/$src
      [ -f "$f" ] || die "Pillow has no $src"
      o=$PILLOW_BLD/${m#PIL.}/$(echo "$src" | tr / _).o
      run_logged $XCC $XCFLAGS -DNDEBUG -fno-strict-overflow -Werror=implicit-function-declaration \
        -I"$SRC/cpython/Include" -I"$CROSS" -I"$PREFIX/include" -I"$PILLOW_SRC/src/libImaging" \
        -I"$SRC/freetype/include" -I"$HERE/include" -DHAVE_LIBZ -DPILLOW_VERSION="\"$PILLOW_VERSION\"" -c "$f" -o "$o"
    done
    rm -f "$PILLOW_BLD/${m#PIL.}.a"
    run_logged $XAR rcsD "$PILLOW_BLD/${m#PIL.}.a" $(cd "$PILLOW_BLD" && ls "${m#PIL.}"/*.o | LC_ALL=C sort | sed "s|^|$PILLOW_BLD/|")
  done
  no_clash "Pillow's modules" "$PILLOW_BLD"/*.a -- $(find "$NUMPY_BLD" "$PANDAS_BLD" -name '*.a') "$CROSS/libpython$PY_SHORT.a"
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

# C++ exceptions and setjmp/longjmp (see exceptions.cpp): the flags that
# lower them to invoke_ calls the host unwinds, for C++ that throws and for
# C that calls setjmp.
EH_CXXFLAGS="-fexceptions -mllvm -enable-emscripten-cxx-exceptions"
EH_SJLJFLAGS="-mllvm -enable-emscripten-sjlj -I$HERE/include"
MPL_BLD=$SCI/mpl-build

# sci_cxx OUT SOURCE FLAG...: one C++ source of an extension module.
sci_cxx() {
  local out=$1 src=$2
  shift 2
  run_logged ${XCC/clang-19/clang++-19} $XCFLAGS -DNDEBUG -std=c++17 -fvisibility=hidden $EH_CXXFLAGS \
    -Drestrict=__restrict -I"$SRC/cpython/Include" -I"$CROSS" "$@" -c "$src" -o "$out"
}

# sci_archive_of DIR NAME: DIR/*.o (sorted) as the archive $MPL_BLD/NAME.a.
sci_archive_of() {
  rm -f "$MPL_BLD/$2.a"
  run_logged $XAR rcsD "$MPL_BLD/$2.a" $(ls "$1"/*.o | LC_ALL=C sort)
}

# FreeType (its default modules and options: zlib's inflate built in, no
# PNG, bzip2, Brotli or HarfBuzz) and qhull, as static libraries.
build_mpl_libs() {
  fresh "$MPL_BLD" "$SRC/freetype" "$SRC/qhull"
  unpack "$(orig freetype_)" "$SRC/freetype"
  unpack "$(orig qhull_)" "$SRC/qhull"
  local f
  mkdir -p "$MPL_BLD/freetype" "$MPL_BLD/qhull"
  for f in "${FREETYPE_FILES[@]}"; do
    run_logged $XCC $XCFLAGS -DNDEBUG $EH_SJLJFLAGS -DFT2_BUILD_LIBRARY -I"$SRC/freetype/include" \
      -c "$SRC/freetype/src/$f.c" -o "$MPL_BLD/freetype/$(echo "$f" | tr / _).o"
  done
  sci_archive_of "$MPL_BLD/freetype" libfreetype
  for f in "${QHULL_FILES[@]}"; do
    run_logged $XCC $XCFLAGS -DNDEBUG $EH_SJLJFLAGS -I"$SRC/qhull/src" \
      -c "$SRC/qhull/src/libqhull_r/$f.c" -o "$MPL_BLD/qhull/$f.o"
  done
  sci_archive_of "$MPL_BLD/qhull" libqhull_r
}

# kiwisolver's and contourpy's extension modules (their setup.py's and
# src/meson.build's source lists; contourpy's threaded generator runs on
# the calling thread, see patches/contourpy-*), and matplotlib's, each an
# archive named after its dotted module name, with Agg as a library.
build_matplotlib() {
  local e m files f p src inc pyb cppy
  # Their include directories, found without importing them (importing
  # cppy imports setuptools, which refuses Debian's distutils).
  pyb=$("$SCI_ENV/bin/python" -c 'import importlib.util as u; print(u.find_spec("pybind11").submodule_search_locations[0])')/include
  cppy=$("$SCI_ENV/bin/python" -c 'import importlib.util as u; print(u.find_spec("cppy").submodule_search_locations[0])')/include
  [ -f "$pyb/pybind11/pybind11.h" ] && [ -f "$cppy/cppy/cppy.h" ] || die "no pybind11 or cppy headers in $SCI_ENV"
  unpack "$DL/$KIWISOLVER_SDIST" "$SCI/kiwisolver-src"
  unpack "$DL/$CONTOURPY_SDIST" "$SCI/contourpy-src"
  unpack "$DL/$MATPLOTLIB_SDIST" "$SCI/matplotlib-src"
  for p in kiwisolver-"$KIWISOLVER_VERSION" contourpy-"$CONTOURPY_VERSION" matplotlib-"$MATPLOTLIB_VERSION"; do
    for f in "$HERE"/patches/"$p"-*.patch; do
      if [ -f "$f" ]; then
        run_logged patch -d "$SCI/${p%%-*}-src" -p1 --no-backup-if-mismatch -i "$f"
      fi
    done
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
}

# The scientific reactor: link_reactor's link plus numpy (see above).
link_scientific() {
  fresh "$SCI_LINK"
  cp "$HERE/entry.c" "$SCI_LINK/entry.c"
  local m mods libs="" archives=""
  mods=$(printf '%s\n' "${NUMPY_MODULES[@]}" "${PANDAS_MODULES[@]}" "${PILLOW_MODULES[@]}" "${MATPLOTLIB_MODULES[@]}" |
    LC_ALL=C sort)
  {
    echo "/* Generated by build.sh (--profile scientific), included by entry.c:"
    echo " * the extension modules linked into this module, by dotted name. */"
    echo "/* CPython's, internal: the dotted name a single-phase module's"
    echo " * PyModule_Create gives the module (a shared library's loader sets it"
    echo " * around the init function; pybind11's modules named themselves"
    echo " * \"ft2font\", their classes' __module__ too, without it). */"
    echo "extern const char *_PyImport_SwapPackageContext(const char *newcontext);"
    for m in $mods; do
      echo "extern PyObject *PyInit_${m##*.}(void);"
      echo "static PyObject *codeport_init_$(echo "$m" | tr . _)(void) {"
      echo "    const char *old = _PyImport_SwapPackageContext(\"$m\");"
      echo "    PyObject *mod = PyInit_${m##*.}();"
      echo "    _PyImport_SwapPackageContext(old);"
      echo "    return mod;"
      echo "}"
    done
    echo
    echo "static struct _inittab codeport_scientific_inittab[] = {"
    for m in $mods; do
      echo "    {\"$m\", codeport_init_$(echo "$m" | tr . _)},"
    done
    echo "    {NULL, NULL},"
    echo "};"
  } >"$SCI_LINK/scientific_modules.h"
  cp "$HERE/exceptions.cpp" "$SCI_LINK/exceptions.cpp"
  cat >"$CROSS/codeport/scientific.mk" <<'EOF'
# Included after CPython's Makefile: make -f Makefile -f codeport/scientific.mk
# SCI_MODULES: the modules' archives; SCI_LIBS: the static libraries they link.
codeport/scientific/entry.o: codeport/scientific/entry.c codeport/scientific/scientific_modules.h $(PYTHON_HEADERS)
	$(CC) -c $(PY_STDMODULE_CFLAGS) -DCODEPORT_SCIENTIFIC -Icodeport/scientific -o $@ codeport/scientific/entry.c

codeport/scientific/exceptions.o: codeport/scientific/exceptions.cpp
	$(CC) -c -x c++ -std=c++17 -O2 -fexceptions -o $@ codeport/scientific/exceptions.cpp

codeport/scientific/python.wasm: codeport/scientific/entry.o codeport/scientific/exceptions.o $(LINK_PYTHON_DEPS)
	$(LINKCC) $(PY_CORE_LDFLAGS) $(LINKFORSHARED) -mexec-model=reactor -Wl,--fatal-warnings -o $@ \
		codeport/scientific/entry.o codeport/scientific/exceptions.o $(LINK_PYTHON_OBJS) \
		-Wl,--whole-archive $(SCI_MODULES) -Wl,--no-whole-archive $(SCI_LIBS) \
		-lc++ -lc++abi -lc-printscan-long-double $(LIBS) $(MODLIBS) $(SYSLIBS)
EOF
  local spec bld
  while IFS= read -r spec; do
    bld=${spec%%:*}
    m=${spec#*:}
    m=${m#*=}
    archives+=" $bld/$m"
    libs+=$'\n'$(sed "s|^|$bld/|" "$bld/$m.libs")
  done < <(sci_specs "$NUMPY_BLD" "${NUMPY_MODULES[@]}"; sci_specs "$PANDAS_BLD" "${PANDAS_MODULES[@]}")
  libs=$(echo "$libs" | grep -v '/$' | grep . | LC_ALL=C sort -u | xargs)
  for m in "${PILLOW_MODULES[@]}"; do
    archives+=" $PILLOW_BLD/${m#PIL.}.a"
  done
  for m in "${MATPLOTLIB_MODULES[@]}"; do
    archives+=" $MPL_BLD/$m.a"
  done
  libs+=" $MPL_BLD/libagg.a $MPL_BLD/libfreetype.a $MPL_BLD/libqhull_r.a"
  cd "$CROSS"
  run_logged make -f Makefile -f codeport/scientific.mk codeport/scientific/python.wasm \
    SCI_MODULES="${archives# }" SCI_LIBS="$libs"
  ! grep -qi 'signature mismatch' "$STEP_LOG" || die "function signature mismatch in the link (see $STEP_LOG)"
  cp "$SCI_LINK/python.wasm" "$WORK_OUT/python-scientific-linked.wasm"
  check_module "$WORK_OUT/python-scientific-linked.wasm"
}

patch_scientific() {
  [ -n "$GO" ] && [ "$PATCHED" = 1 ] || die "the scientific profile needs Go and wasmpatch"
  (cd "$REPO" && run_logged "$GO" run ./adapters/wasm/internal/wasmpatch/cmd/wasmpatch \
    -in "$WORK_OUT/python-scientific-linked.wasm" -out "$WORK_OUT/python-scientific.wasm")
  tail -n 1 "$STEP_LOG" | sed 's/^/    /'
  check_module "$WORK_OUT/python-scientific.wasm" codeport_init_data
}

# numpy's Python code as build_stdlib_zip makes the stdlib's: what meson
# installs with the python-runtime tag (no tests), less headers, Cython
# declarations, type stubs, examples and PyInstaller hooks; bytecode with
# the sources beside it.
build_site_zip() {
  local dest=$SCI/install sp p
  fresh "$dest" "$SCI_STAGE"
  run_logged env PATH="$SCI_ENV/bin:$PATH" "$SCI_ENV/bin/python" "$NUMPY_SRC/vendored-meson/meson/meson.py" \
    install -C "$NUMPY_BLD" --no-rebuild --destdir "$dest" --tags python-runtime
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
  local t w
  for t in "${SCI_WHEELS[@]}"; do
    t=${t%% *}
    w=$(find "$DL/sci-wheels" -maxdepth 1 -name "$(echo "${t%%==*}" | tr - _)-${t#*==}-*.whl")
    [ -n "$w" ] || die "no wheel for $t in $DL/sci-wheels"
    "$NATIVE_PY" -I -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist()
               if not n.endswith(".dist-info/RECORD") and "tests" not in n.split("/")[:-1]])' "$w" "$SCI_STAGE"
  done
  for p in "$HERE"/patches/pytz-*.patch "$HERE"/patches/sympy-*.patch; do
    run_logged patch -d "$SCI_STAGE" -p1 --no-backup-if-mismatch -i "$p"
  done
  run_logged "$NATIVE_PY" -I -m compileall -b -q -j "$JOBS" --invalidation-mode unchecked-hash \
    -d "$GUEST_SITE_ZIP" "$SCI_STAGE"
  local py missing=0
  while IFS= read -r -d '' py; do
    [ -f "${py}c" ] || { echo "no bytecode for $py" >>"$STEP_LOG"; missing=1; }
  done < <(find "$SCI_STAGE" -name '*.py' -print0)
  [ "$missing" = 0 ] || die "some modules did not compile (see $STEP_LOG)"
  find "$SCI_STAGE" -type f -exec chmod 0644 {} +
  find "$SCI_STAGE" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  rm -f "$WORK_OUT/site-scientific.zip"
  (cd "$SCI_STAGE" && find . -type f | sed 's|^\./||' | LC_ALL=C sort |
    zip -q -X -D -9 "$WORK_OUT/site-scientific.zip" -@)
  "$NATIVE_PY" -I -c 'import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
lack = [n for n in sys.argv[2:] if n not in names]
sys.exit(f"{sys.argv[1]} lacks {lack}" if lack else None)' "$WORK_OUT/site-scientific.zip" \
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
}

# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

mkdir -p "$B"
# One build at a time in a build directory.
exec 9>"$B/.lock"
flock -n 9 || die "another build.sh is running in $B"

if [ -n "$FETCH_SOURCE" ]; then
  mkdir -p "$LOGS" "$DL"
  STEP_LOG=$LOGS/fetch-source.log
  : >"$STEP_LOG"
  for s in "${SOURCES[@]}"; do
    IFS='|' read -r pkg file want <<<"$s"
    if [ "$pkg" = "$FETCH_SOURCE" ]; then
      fetch_orig "$pkg" "$file" "$want" >&2
      echo "$DL/$file"
      exit 0
    fi
  done
  die "no pinned source package $FETCH_SOURCE"
fi

fresh "$LOGS" "$WORK_OUT"

if [ "$B" != /var/tmp/codeport-cpython-build ]; then
  echo "build.sh: NOTE: building in $B, not the default directory: the bytes will differ from SHA256SUMS" >&2
fi

step toolchain
install_toolchain
step download
fetch_all
if [ "$PROFILE" = scientific ]; then
  step sci-download
  sci_tools
  fetch_sdist numpy "$NUMPY_VERSION" "$NUMPY_SDIST" "$NUMPY_SHA256"
  fetch_sdist pandas "$PANDAS_VERSION" "$PANDAS_SDIST" "$PANDAS_SHA256"
  fetch_sdist pillow "$PILLOW_VERSION" "$PILLOW_SDIST" "$PILLOW_SHA256" isolated
  fetch_sdist matplotlib "$MATPLOTLIB_VERSION" "$MATPLOTLIB_SDIST" "$MATPLOTLIB_SHA256"
  fetch_sdist contourpy "$CONTOURPY_VERSION" "$CONTOURPY_SDIST" "$CONTOURPY_SHA256"
  fetch_sdist kiwisolver "$KIWISOLVER_VERSION" "$KIWISOLVER_SDIST" "$KIWISOLVER_SHA256" isolated
  for s in "${SCI_SOURCES[@]}"; do
    IFS='|' read -r pkg file want <<<"$s"
    fetch_orig "$pkg" "$file" "$want"
  done
  fetch_sci_wheels
fi
step unpack
unpack_sources
step native-python
build_native_python
step cross-toolchain
setup_cross_toolchain
step zlib
build_zlib
step libcodeport
build_libcodeport
step bzip2
build_bzip2
step xz
build_xz
step sqlite
build_sqlite
step cpython
build_cpython
step reactor
link_reactor
step wasmpatch
patch_module
step stdlib-zip
build_stdlib_zip
if [ "$PROFILE" = scientific ]; then
  step numpy
  build_numpy
  step pandas
  build_pandas
  step freetype-qhull
  build_mpl_libs
  step pillow
  build_pillow
  step matplotlib
  build_matplotlib
  step sci-reactor
  link_scientific
  step sci-wasmpatch
  patch_scientific
  step sci-zip
  build_site_zip
fi

# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------

step results
if [ "$CHECK" = 1 ]; then
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/codeport-cpython-check.XXXXXX")
else
  OUT=$ARTIFACTS
fi
for f in python.wasm "python$PY_NODOT.zip"; do
  cp "$WORK_OUT/$f" "$OUT/$f.tmp"
  mv "$OUT/$f.tmp" "$OUT/$f"
done
(cd "$OUT" && sha256sum python.wasm "python$PY_NODOT.zip" >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)

echo
if [ -n "${MODULE_REPORT:-}" ]; then
  echo "CPython's module report:"
  echo "$MODULE_REPORT" | sed 's/^/    /'
fi
echo "reactor link flags: $LINK_FLAGS -mexec-model=reactor"
echo "linked module before wasmpatch: $(sha256 "$WORK_OUT/python-linked.wasm")  $(stat -c %s "$WORK_OUT/python-linked.wasm") bytes"
[ "$PATCHED" = 1 ] || echo "WARNING: python.wasm is not patched by wasmpatch (the tool is missing)"
echo
for f in python.wasm "python$PY_NODOT.zip"; do
  printf '%s  %s  %d bytes\n' "$(sha256 "$OUT/$f")" "$OUT/$f" "$(stat -c %s "$OUT/$f")"
done

status=0
if [ "$CHECK" = 1 ]; then
  if [ ! -f "$ARTIFACTS/SHA256SUMS" ]; then
    echo "check: there is no committed $ARTIFACTS/SHA256SUMS to compare with" >&2
    status=1
  elif cmp -s "$ARTIFACTS/SHA256SUMS" "$OUT/SHA256SUMS"; then
    echo "check: the rebuilt artifacts match SHA256SUMS"
    rm -rf "$OUT"
    # The committed files themselves must be what SHA256SUMS names.
    if ! (cd "$ARTIFACTS" && sha256sum --quiet -c SHA256SUMS); then
      echo "check: but the committed files in $ARTIFACTS do not match SHA256SUMS" >&2
      status=1
    fi
  else
    echo "check: MISMATCH between the committed SHA256SUMS and the rebuild" >&2
    echo "  committed ($ARTIFACTS/SHA256SUMS):" >&2
    sed 's/^/    /' "$ARTIFACTS/SHA256SUMS" >&2
    echo "  rebuilt ($OUT, kept for comparison):" >&2
    sed 's/^/    /' "$OUT/SHA256SUMS" >&2
    status=1
  fi
else
  echo "wrote $ARTIFACTS/{python.wasm,python$PY_NODOT.zip,SHA256SUMS}"
fi

# The scientific profile's files, in their own folder, checked the same way.
if [ "$PROFILE" = scientific ]; then
  SCI_FILES=(python-scientific.wasm site-scientific.zip)
  if [ "$CHECK" = 1 ]; then
    OUT_SCI=$(mktemp -d "${TMPDIR:-/tmp}/codeport-cpython-check.XXXXXX")
  else
    OUT_SCI=$ARTIFACTS_SCI
    mkdir -p "$OUT_SCI"
  fi
  for f in "${SCI_FILES[@]}"; do
    cp "$WORK_OUT/$f" "$OUT_SCI/$f.tmp"
    mv "$OUT_SCI/$f.tmp" "$OUT_SCI/$f"
  done
  (cd "$OUT_SCI" && sha256sum "${SCI_FILES[@]}" >SHA256SUMS.tmp &&
    mv SHA256SUMS.tmp SHA256SUMS)
  echo
  echo "scientific: linked module before wasmpatch: $(sha256 "$WORK_OUT/python-scientific-linked.wasm")  $(stat -c %s "$WORK_OUT/python-scientific-linked.wasm") bytes"
  for f in "${SCI_FILES[@]}"; do
    printf '%s  %s  %d bytes\n' "$(sha256 "$OUT_SCI/$f")" "$OUT_SCI/$f" "$(stat -c %s "$OUT_SCI/$f")"
  done
  if [ "$CHECK" = 1 ]; then
    if [ ! -f "$ARTIFACTS_SCI/SHA256SUMS" ]; then
      echo "check: there is no committed $ARTIFACTS_SCI/SHA256SUMS to compare with" >&2
      status=1
    elif cmp -s "$ARTIFACTS_SCI/SHA256SUMS" "$OUT_SCI/SHA256SUMS"; then
      echo "check: the rebuilt scientific artifacts match SHA256SUMS"
      rm -rf "$OUT_SCI"
      if ! (cd "$ARTIFACTS_SCI" && sha256sum --quiet -c SHA256SUMS); then
        echo "check: but the committed files in $ARTIFACTS_SCI do not match SHA256SUMS" >&2
        status=1
      fi
    else
      echo "check: MISMATCH between the committed SHA256SUMS and the rebuild" >&2
      sed 's/^/    /' "$ARTIFACTS_SCI/SHA256SUMS" >&2
      echo "  rebuilt ($OUT_SCI, kept for comparison):" >&2
      sed 's/^/    /' "$OUT_SCI/SHA256SUMS" >&2
      status=1
    fi
  else
    echo "wrote $ARTIFACTS_SCI/{python-scientific.wasm,site-scientific.zip,SHA256SUMS}"
  fi
fi
echo "total wall time: $(($(date +%s) - START_TIME))s"
exit "$status"
