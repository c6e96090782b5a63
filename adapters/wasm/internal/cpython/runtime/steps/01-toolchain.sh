#!/usr/bin/env bash
# toolchain: Debian's compilers and tools at their pinned versions; Go.
#
# The Debian packages of DEB_PACKAGES (steps/pins.sh), at their pinned
# versions, installed with apt-get when missing; Go for wasmpatch.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# installed PACKAGE: its installed version, or nothing.
installed() {
  dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | awk '$1 == "install" && $3 == "installed" { print $4 }'
}

step toolchain
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  [ "$(installed "${p%%=*}")" = "${p#*=}" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing Debian packages or versions (install them as root): ${missing[*]}"
  echo "    installing ${missing[*]}"
  # A machine's package lists may be stale or absent; update and retry once.
  if ! run_logged env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; then
    run_logged apt-get update
    run_logged env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" ||
      die "cannot install ${missing[*]} (see $STEP_LOG); if the archive no longer has a pinned version, pick a new pin in steps/pins.sh"
  fi
fi
for p in "${DEB_PACKAGES[@]}"; do
  v=$(installed "${p%%=*}")
  [ "$v" = "${p#*=}" ] || die "Debian package ${p%%=*} is at version ${v:-(none)}, but steps/pins.sh pins ${p#*=}"
done
for p in clang-19 wasm-ld-19 llvm-ar-19 llvm-ranlib-19 tclsh zip make gcc; do
  command -v "$p" >/dev/null || die "$p not found after installing ${DEB_PACKAGES[*]}"
done
[ -f /usr/lib/wasm32-wasi/libc.a ] || die "wasi-libc is not installed (no /usr/lib/wasm32-wasi/libc.a)"
go_tool >/dev/null
