# shellcheck shell=bash disable=SC2034 # the layout and settings are read by the steps
# lib.sh: what every step of the runtime build shares (sourced first by
# each steps/NN-*.sh): the pins, the build directory's layout, a clean
# environment, and the helpers. Steps run one process each, under
# build.sh, and hand each other nothing but files in the build directory,
# so that any of them can run again alone (build.sh --from/--only).
set -Eeuo pipefail

[ -n "${CODEPORT_STEP_DRIVER:-}" ] || {
  echo "$0: a step of build.sh; run it as build.sh --only $(basename "$0" .sh | sed 's/^[0-9]*-//')" >&2
  exit 2
}

# The runtime folder: the patches, C files and files/ the steps use, and
# where the committed artifacts live (embedded by cpython.go from there).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ARTIFACTS=$HERE
REPO=$(cd "$HERE/../../../../.." && pwd)
FILES=$HERE/files
B=${CODEPORT_BUILD_DIR:-/var/tmp/codeport-cpython-build}
B=${B%/}
JOBS=${CODEPORT_JOBS:-$(nproc)}

# What build.sh passes to its steps, kept from the tools' environment.
PROFILE=${CODEPORT_STEP_PROFILE:-default}
CHECK=${CODEPORT_STEP_CHECK:-0}
START_TIME=${CODEPORT_STEP_START:-$(date +%s)}
unset CODEPORT_STEP_DRIVER CODEPORT_STEP_PROFILE CODEPORT_STEP_CHECK CODEPORT_STEP_START

# shellcheck source=pins.sh
. "$HERE/steps/pins.sh"
[ "$PROFILE" != scientific ] || DEB_PACKAGES+=("${SCI_DEB_PACKAGES[@]}")

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
# The build directory
# ---------------------------------------------------------------------------

LOGS=$B/logs
DL=$B/downloads # the only thing kept from run to run
APT_DIR=$B/apt
SRC=$B/src
NATIVE=$B/native
SYSROOT=$B/sysroot
TOOLS=$B/tools
DEPS=$B/deps
PREFIX=$B/prefix
CROSS=$B/cpython-wasi
STAGE=$B/stage
WORK_OUT=$B/out
ARTIFACTS_SCI=$(cd "$HERE/.." && pwd)/scientific/runtime

# Debian's python3 only runs pip; the Python that compiles anything is
# built here from the pinned source (03-native-python.sh).
HOST_PYTHON=/usr/bin/python3
NATIVE_PY=$NATIVE/python

# The cross compiler (04-cross-deps.sh sets up $SYSROOT and $TOOLS):
# -ffile-prefix-map: no build path in __FILE__ strings (assert messages).
XCC="clang-19 -B$TOOLS --target=wasm32-wasi --sysroot=$SYSROOT"
XAR=llvm-ar-19
XRANLIB=llvm-ranlib-19
XCFLAGS="-O2 -ffile-prefix-map=$B=."

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

STEP_LOG=/dev/null

die() {
  echo "build.sh: $*" >&2
  exit 1
}

# step NAME: starts a step; its commands log to $LOGS/NAME.log (run_logged).
step() {
  mkdir -p "$LOGS"
  STEP_LOG=$LOGS/$1.log
  : >"$STEP_LOG"
  printf '==> %-22s (+%ds)\n' "$1" "$(($(date +%s) - START_TIME))"
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

# template SRC DEST VAR...: SRC (a file of files/) with each @VAR@ replaced
# by the value of $VAR, written to DEST. A placeholder left over is an
# error.
template() {
  local src=$1 dest=$2 v val args=()
  shift 2
  for v in "$@"; do
    val=${!v}
    val=${val//\\/\\\\}
    val=${val//&/\\&}
    val=${val//|/\\|}
    args+=(-e "s|@$v@|$val|g")
  done
  sed "${args[@]}" "$src" >"$dest"
  ! grep -q '@[A-Z_][A-Z0-9_]*@' "$dest" || die "$src: a placeholder is left in $dest: $(grep -o '@[A-Z_][A-Z0-9_]*@' "$dest" | head -n 1)"
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

# apply_patches DIR PATCH...: applies patches/ files to DIR (a glob that
# matched nothing is skipped).
apply_patches() {
  local dir=$1 p
  shift
  for p in "$@"; do
    [ -f "$p" ] || continue
    run_logged patch -d "$dir" -p1 --no-backup-if-mismatch -i "$p"
  done
}

# sysconfigdata: the cross build's _sysconfigdata_*.py (05-cpython.sh).
sysconfigdata() {
  local f
  f=$(ls "$CROSS"/build/lib.wasi-wasm32-"$PY_SHORT"/_sysconfigdata_*.py) || die "no sysconfigdata in $CROSS; run the cpython step first"
  echo "$f"
}

# go_tool: the go command (on PATH, or Go's default install).
go_tool() {
  local go
  go=$(command -v go || true)
  [ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
  [ -n "$go" ] || die "Go is needed to run wasmpatch (install it, or put go on PATH)"
  echo "$go"
}

# wasmpatch ARG...: runs adapters/wasm/internal/wasmpatch's command.
wasmpatch() {
  local go
  go=$(go_tool)
  (cd "$REPO" && "$go" run ./adapters/wasm/internal/wasmpatch/cmd/wasmpatch "$@")
}

# check_module FILE [EXPORT...]: the module imports nothing but WASI preview
# 1 functions and the host's own (filemode.c's two of codeport_fs; in the
# scientific module, exceptions.cpp's unwinding: codeport_cxx.throw and the
# lowering's env.invoke_<signature> trampolines), and exports memory,
# _initialize, the codeport_* entry points and any further EXPORTs named
# (wasmpatch -check).
check_module() {
  wasmpatch -check "$@" | sed 's/^/    /'
}

# ---------------------------------------------------------------------------
# Downloads (cached in $DL; a file whose hash matches is not fetched again)
# ---------------------------------------------------------------------------

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
  mkdir -p "$DL"
  if [ -f "$DL/$file" ] && [ "$(sha256 "$DL/$file")" = "$want" ]; then
    echo "    $file (cached)"
    return 0
  fi
  # One fetch at a time into the download cache, across processes (a
  # build and make compat's --fetch-source); the file may have come
  # while this one waited.
  exec 8>"$DL/.fetch.lock"
  flock 8
  if [ -f "$DL/$file" ] && [ "$(sha256 "$DL/$file")" = "$want" ]; then
    exec 8>&-
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
      die "Debian lists $file with sha256 ${listed#SHA256:}, but steps/pins.sh pins $want; refusing it" ;;
  esac
  echo "    fetching $file"
  run_logged /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$uri" "$DL/$file.partial" "SHA256:$want" ||
    die "downloading $file failed or its sha256 is not $want (see $STEP_LOG)"
  [ "$(sha256 "$DL/$file.partial")" = "$want" ] || die "$file: sha256 mismatch, want $want"
  mv "$DL/$file.partial" "$DL/$file"
  exec 8>&-
}

# zip_stage STAGE GUEST_PATH ZIP: compiles every module under STAGE to
# bytecode that names GUEST_PATH as its file (unchecked-hash: pyc files
# that do not depend on source mtimes, since nothing in the guest compares
# them with their sources; the hash seed is fixed), fails if one did not
# compile, and writes ZIP: a deterministic archive, with fixed modes and
# mtimes, sorted entries, no extra fields (-X: uid/gid, extended times),
# no directory entries (-D; zipimport finds packages by their
# __init__.pyc and implies directories).
zip_stage() {
  local stage=$1 guest=$2 zip=$3 missing=0 py
  run_logged "$NATIVE_PY" -I -m compileall -b -q -j "$JOBS" --invalidation-mode unchecked-hash \
    -d "$guest" "$stage"
  while IFS= read -r -d '' py; do
    [ -f "${py}c" ] || { echo "no bytecode for $py" >>"$STEP_LOG"; missing=1; }
  done < <(find "$stage" -name '*.py' -print0)
  [ "$missing" = 0 ] || die "some modules did not compile (see $STEP_LOG)"
  find "$stage" -type f -exec chmod 0644 {} +
  find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  mkdir -p "$(dirname "$zip")"
  rm -f "$zip"
  (cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort |
    zip -q -X -D -9 "$zip" -@)
}

# zip_has ZIP NAME...: fails unless ZIP holds every NAME.
zip_has() {
  "$NATIVE_PY" -I "$FILES/zip-has.py" "$@"
}
