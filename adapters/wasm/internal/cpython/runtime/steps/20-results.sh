#!/usr/bin/env bash
# results: the files written beside build.sh, or with --check compared.
#
# The built files of $WORK_OUT written beside build.sh (and, with the
# scientific profile, to ../scientific/runtime/) with their SHA256SUMS, or,
# with --check, written to a temporary directory and compared with the
# committed SHA256SUMS; a difference fails the build.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# deliver WHAT ARTIFACT_DIR FILE...: FILEs of $WORK_OUT with their
# SHA256SUMS into ARTIFACT_DIR, or with --check into a temporary directory,
# compared with ARTIFACT_DIR's; sets status to 1 on any difference.
deliver() {
  local what=$1 dir=$2 out f
  shift 2
  if [ "$CHECK" = 1 ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/codeport-cpython-check.XXXXXX")
  else
    out=$dir
    mkdir -p "$out"
  fi
  for f in "$@"; do
    cp "$WORK_OUT/$f" "$out/$f.tmp"
    mv "$out/$f.tmp" "$out/$f"
  done
  (cd "$out" && sha256sum "$@" >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
  for f in "$@"; do
    printf '%s  %s  %d bytes\n' "$(sha256 "$out/$f")" "$out/$f" "$(stat -c %s "$out/$f")"
  done
  if [ "$CHECK" != 1 ]; then
    echo "wrote $dir/{$(printf '%s,' "$@")SHA256SUMS}"
  elif [ ! -f "$dir/SHA256SUMS" ]; then
    echo "check: there is no committed $dir/SHA256SUMS to compare with" >&2
    status=1
  elif cmp -s "$dir/SHA256SUMS" "$out/SHA256SUMS"; then
    echo "check: the rebuilt $what match SHA256SUMS"
    rm -rf "$out"
    # The committed files themselves must be what SHA256SUMS names.
    if ! (cd "$dir" && sha256sum --quiet -c SHA256SUMS); then
      echo "check: but the committed files in $dir do not match SHA256SUMS" >&2
      status=1
    fi
  else
    echo "check: MISMATCH between the committed SHA256SUMS and the rebuild" >&2
    echo "  committed ($dir/SHA256SUMS):" >&2
    sed 's/^/    /' "$dir/SHA256SUMS" >&2
    echo "  rebuilt ($out, kept for comparison):" >&2
    sed 's/^/    /' "$out/SHA256SUMS" >&2
    status=1
  fi
}

step results
status=0
echo
if [ -s "$WORK_OUT/module-report.txt" ]; then
  echo "CPython's module report:"
  sed 's/^/    /' "$WORK_OUT/module-report.txt"
fi
if [ -f "$WORK_OUT/link-flags.txt" ]; then
  echo "reactor link flags: $(cat "$WORK_OUT/link-flags.txt") -mexec-model=reactor"
fi
echo "linked module before wasmpatch: $(sha256 "$WORK_OUT/python-linked.wasm")  $(stat -c %s "$WORK_OUT/python-linked.wasm") bytes"
echo
deliver artifacts "$ARTIFACTS" python.wasm "python$PY_NODOT.zip"

# The scientific profile's files, in their own folder, checked the same way.
if [ "$PROFILE" = scientific ]; then
  echo
  echo "scientific: linked module before wasmpatch: $(sha256 "$WORK_OUT/python-scientific-linked.wasm")  $(stat -c %s "$WORK_OUT/python-scientific-linked.wasm") bytes"
  deliver "scientific artifacts" "$ARTIFACTS_SCI" python-scientific.wasm site-scientific.zip
fi
echo "total wall time: $(($(date +%s) - START_TIME))s"
exit "$status"
