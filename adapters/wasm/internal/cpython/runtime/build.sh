#!/usr/bin/env bash
# build.sh: builds codeport's CPython for WASI from upstream sources.
#
# Output, written beside this script (the project keeps every committed
# build artifact in a runtime/ folder, with the script that reproduces it):
#   python.wasm    CPython 3.13 as a WASI *reactor* module: no _start; the
#                  host calls _initialize and then entry.c's codeport_*
#                  exports (after wasmpatch has rewritten it: the patch
#                  step), with localtime.c's time zones (TZ, tzset) in place of
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
#        build.sh --from STEP [--check] [--profile ...]
#                           run STEP and the steps after it, reusing what
#                           the earlier steps left in the build directory
#        build.sh --only STEP [--profile ...]
#                           run STEP alone, the same way
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
#                             (C++ exceptions, setjmp), FreeType, qhull
#                             and OpenBLAS (numpy's BLAS)
#     site-scientific.zip     their Python code (Pillow's PIL, matplotlib
#                             with its mpl-data), their pure-Python
#                             dependencies (dateutil, pytz, six, fontTools,
#                             cycler, pyparsing, packaging), and sympy with
#                             mpmath, bytecode with sources, which that
#                             entry.c puts on sys.path after the stdlib zip,
#                             as /usr/local/lib/site-scientific.zip
#     SHA256SUMS   sha256sum(1) lines for both
#   The default profile's files are the same bytes with either profile. See
#   steps/sci-lib.sh for how numpy is built.
#
# Steps. build.sh is a driver: the work is done by steps/NN-NAME.sh, one
# process each, in the order of NN (`build.sh --help` lists them; the
# sci-* ones run with --profile scientific only). They share steps/lib.sh
# (the build directory's layout, a clean environment, helpers) and the
# pins in steps/pins.sh, and hand each other nothing but files in the
# build directory, so --from and --only can start at any step once a
# full build has run there. The files the steps install or fill in (the
# compiler wrapper, meson's cross file, makefiles, ...) are in files/.
# README.md has the list too.
#
# Why a build of our own: the host instantiates one module per program and
# drives it through exports, so it needs a reactor with exactly the entry
# points of entry.c, and the result has to be reproducible byte for byte so
# that the committed binaries can be checked against their sources.
#
# Where things come from. Every input is pinned in steps/pins.sh, by sha256
# or by exact version, and checked before use; a mismatch stops the build.
#   * The toolchain is Debian bookworm's (clang-19, lld-19, wasi-libc, ...),
#     installed with apt-get at its pinned versions when missing.
#   * Sources are the upstream ("orig") tarballs of Debian trixie's source
#     packages, fetched by package name through apt from the mirror this
#     machine already uses. Only orig tarballs are used: Debian revisions
#     come and go, the upstream tarball of a stable release stays.
#   * tzdata (for zoneinfo, and localtime.c's TZ) is the PyPI wheel,
#     fetched by pip.
#   * --profile scientific only: numpy's, pandas', Pillow's, matplotlib's,
#     contourpy's and kiwisolver's sdists, fetched by pip by name; FreeType,
#     qhull and OpenBLAS, orig tarballs like the sources above; the pure-Python
#     dependencies and sympy with mpmath, wheels fetched by pip with
#     --require-hashes; the tools that build them (meson, meson-python,
#     Cython, ninja, ...), wheels installed by pip with --require-hashes
#     into a venv in the build directory; Debian's libc++/libc++abi for
#     wasm32.
#   * Upstream code is patched by patches/*.patch (small documented diffs):
#     CPython's f-string tokenizer, sqlite's locking for WASI; with
#     --profile scientific, OpenBLAS (with a SIMD128 DGEMM kernel of our
#     own), numpy (np.sort by a radix sort and Highway's vqsort, the only
#     numpy code built with -msimd128), pandas, Pillow, pytz, sympy, kiwisolver, contourpy
#     and matplotlib.
#
# Reproducibility. The build runs in a fixed absolute directory (paths end
# up in _sysconfigdata and in the configure-time strings of the binary),
# with a fixed SOURCE_DATE_EPOCH, TZ, locale, umask and hash seed, and
# without inherited compiler or Python settings. Everything except the
# download cache is rebuilt from scratch on every full run.
#
# Environment:
#   CODEPORT_BUILD_DIR  build directory (default /var/tmp/codeport-cpython-build);
#                       another directory gives other bytes, so --check is
#                       only meaningful with the default
#   CODEPORT_JOBS       parallel jobs for make (default: nproc)
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() {
  echo "build.sh: $*" >&2
  exit 1
}

# The steps, in order: steps/NN-NAME.sh; NAME is what --from and --only
# take (or NN, or the file's name).
STEP_FILES=()
for f in "$HERE"/steps/[0-9][0-9]-*.sh; do
  STEP_FILES+=("$f")
done
step_name() {
  local n
  n=$(basename "$1" .sh)
  echo "${n#[0-9][0-9]-}"
}

usage() {
  echo "usage: $0 [--check] [--profile default|scientific] [--from STEP | --only STEP]" >&2
  echo "       $0 --fetch-source PACKAGE" >&2
  echo "       $0 --help    (lists the steps)" >&2
  exit 2
}
help() {
  sed -n '2,/^set -Eeuo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  echo
  echo "The steps (steps/NN-NAME.sh; sci-* with --profile scientific only):"
  local f
  for f in "${STEP_FILES[@]}"; do
    # A step's summary is the line after its #! line: "# NAME: SUMMARY".
    printf '  %-20s %s\n' "$(step_name "$f")" "$(sed -n '2s/^# [a-z-]*: //p' "$f")"
  done
}

CHECK=0
PROFILE=default
FETCH_SOURCE=""
FROM=""
ONLY=""
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
    --from | --only)
      [ $# -ge 2 ] || usage
      if [ "$1" = --from ]; then FROM=$2; else ONLY=$2; fi
      shift
      ;;
    --from=*) FROM=${1#--from=} ;;
    --only=*) ONLY=${1#--only=} ;;
    -h | --help)
      help
      exit 0
      ;;
    *) usage ;;
  esac
  shift
done
case "$PROFILE" in
  default | scientific) ;;
  *) usage ;;
esac
[ -z "$FROM" ] || [ -z "$ONLY" ] || usage

B=${CODEPORT_BUILD_DIR:-/var/tmp/codeport-cpython-build}
case "$B" in
  /?*) ;;
  *)
    echo "build.sh: CODEPORT_BUILD_DIR must be an absolute path other than /" >&2
    exit 2
    ;;
esac
B=${B%/}

# What the steps are told (lib.sh reads these, and keeps them from the
# tools it runs).
export CODEPORT_STEP_DRIVER=1 CODEPORT_STEP_PROFILE=$PROFILE CODEPORT_STEP_CHECK=$CHECK
CODEPORT_STEP_START=$(date +%s)
export CODEPORT_STEP_START

mkdir -p "$B"

# Fetching a source touches only the download cache, whose fetches lock it
# themselves (fetch_orig): it runs beside a build (make compat during a
# runtime rebuild), and logs apart from the build's logs, which a build
# clears.
if [ -n "$FETCH_SOURCE" ]; then
  # shellcheck source=steps/lib.sh
  . "$HERE/steps/lib.sh"
  mkdir -p "$DL"
  STEP_LOG=$DL/.fetch-source.log
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

# One build at a time in a build directory (the steps inherit the lock).
exec 9>"$B/.lock"
flock -n 9 || die "another build.sh is running in $B"

# The steps of this profile, and where to start and stop.
RUN=()
for f in "${STEP_FILES[@]}"; do
  case "$(step_name "$f")" in
    sci-*) [ "$PROFILE" = scientific ] || continue ;;
  esac
  RUN+=("$f")
done
pick() {
  local i f
  for i in "${!RUN[@]}"; do
    f=${RUN[$i]}
    case "$1" in
      "$(step_name "$f")" | "$(basename "$f" .sh)" | "$(basename "$f")" | "$(basename "$f" | cut -c1-2)")
        echo "$i"
        return 0
        ;;
    esac
  done
  die "no step $1 in the $PROFILE profile (build.sh --help lists them)"
}
first=0
last=$((${#RUN[@]} - 1))
if [ -n "$FROM" ]; then
  first=$(pick "$FROM")
elif [ -n "$ONLY" ]; then
  first=$(pick "$ONLY")
  last=$first
else
  # A full build: nothing of a previous run's logs or outputs is kept.
  rm -rf "$B/logs" "$B/out"
  mkdir -p "$B/logs" "$B/out"
fi

if [ "$B" != /var/tmp/codeport-cpython-build ]; then
  echo "build.sh: NOTE: building in $B, not the default directory: the bytes will differ from SHA256SUMS" >&2
fi

for f in "${RUN[@]:$first:$((last - first + 1))}"; do
  rc=0
  bash "$f" || rc=$?
  # The step has said why; its status is the build's.
  [ "$rc" = 0 ] || exit "$rc"
done
