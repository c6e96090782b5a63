#!/bin/sh
# Builds shell.wasm, the bash tool's shell as a WASI reactor (package
# ../../guest, -buildmode=c-shared: its host calls its exported functions,
# and it runs nothing between them), reproducibly: the same Go toolchain (pinned below; the go
# command fetches it from the Go module proxy if this machine has another)
# and the same module versions (go.sum) give the same bytes.
#
#   build.sh           rebuild shell.wasm and SHA256SUMS here
#   build.sh --check   rebuild into a temporary directory and fail if a byte
#                      differs from the committed shell.wasm
#   build.sh --out F   build into the file F only (the shell package's tests
#                      run a fresh build of the sources they test)
#
# mvdan.cc/sh/v3 v3.14.1 joins pipeline stages with os.Pipe, which wasip1
# lacks; this build gives its interp package in-process pipes instead (and
# two accessors of a runner's state that spare each command two runs, which
# the shell uses under the build tag codeport_interp; see the end of
# interp_wasip1.go.in): a copy of the module in a temporary directory, with
# interp_wasip1.go.in (ours) added and its stdin_os.go emptied, replaces the
# module through a temporary go.work. Nothing in the module cache or the
# tree is modified.
set -eu

GO_TOOLCHAIN=go1.26.8

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../../../.." && pwd)
check=false
out=
case "${1:-}" in
--check) check=true ;;
--out) out=${2:?--out needs a file} ;;
"") ;;
*) echo "usage: $0 [--check | --out FILE]" >&2; exit 2 ;;
esac

export GOTOOLCHAIN="$GO_TOOLCHAIN" GOFLAGS=-mod=readonly CGO_ENABLED=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$root"
go mod download mvdan.cc/sh/v3
cp -R "$(go list -m -f '{{.Dir}}' mvdan.cc/sh/v3)" "$work/sh"
chmod -R u+w "$work/sh"
[ -f "$work/sh/interp/stdin_os.go" ] || { echo "build.sh: interp/stdin_os.go not found; did mvdan.cc/sh change?" >&2; exit 1; }
printf 'package interp\n' >"$work/sh/interp/stdin_os.go"
cp "$here/interp_wasip1.go.in" "$work/sh/interp/stdin_wasip1.go"
cat >"$work/go.work" <<WORK
go 1.26.0

use $root

replace mvdan.cc/sh/v3 => ./sh
WORK
GOWORK="$work/go.work" GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -tags codeport_interp -trimpath -buildvcs=false -ldflags='-s -w -buildid=' \
	-o "$work/shell.wasm" ./adapters/wasm/internal/shell/guest

if [ -n "$out" ]; then
	cp "$work/shell.wasm" "$out"
	exit 0
fi
if $check; then
	if cmp -s "$work/shell.wasm" "$here/shell.wasm"; then
		echo "shell.wasm: identical to the committed one"
		exit 0
	fi
	echo "shell.wasm differs from a fresh build of the guest's sources: run $0 and commit the result" >&2
	exit 1
fi
cp "$work/shell.wasm" "$here/shell.wasm"
(cd "$here" && sha256sum shell.wasm >SHA256SUMS)
ls -l "$here/shell.wasm"
