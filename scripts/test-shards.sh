#!/usr/bin/env bash
# The test stage of make test: every package's tests against the real
# runtime, as several go test processes at once, so that one's waits (a
# deadline that must pass, a worker that starts, a peer that answers)
# overlap another's work. On two cores one go test process left a core
# idle for most of the suite's wall time.
#
#   GO=go TEST_TIMEOUT=15m PARALLEL_PACKAGES=3 scripts/test-shards.sh
#
# - adapters/wasm holds most of the guest-bound tests, one after another:
#   it runs as two processes, split by the first letter of its tests'
#   names (a process each, so a test that counts the process's goroutines,
#   threads or CPU time sees only its own half).
# - the shell package runs without -race (see RACE_EXEMPT in the
#   Makefile).
# - every other package runs under -race, PARALLEL_PACKAGES at a time,
#   but internal/testcache, whose one test (TestPrecompile) make test ran
#   just before, to fill the cache.
# The shards' output is printed when they end, each whole; the exit status
# is non-zero if any failed.
set -uo pipefail
go=${GO:-go}
timeout=${TEST_TIMEOUT:-15m}
parallel=${PARALLEL_PACKAGES:-3}
module=$("$go" list -m)
wasm=$module/adapters/wasm
shell=$module/adapters/wasm/internal/shell
testcache=$module/internal/testcache
split='^Test[A-H]'

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
shard() {
  local name=$1
  shift
  "$go" test -count=1 -timeout "$timeout" "$@" >"$dir/$name.out" 2>&1
  echo $? >"$dir/$name.rc"
}
shard wasm-first-half -race -run "$split" "$wasm" &
shard wasm-second-half -race -skip "$split" "$wasm" &
shard shell "$shell" &

others=$("$go" list ./... | grep -v -x -F -e "$wasm" -e "$shell" -e "$testcache")
# shellcheck disable=SC2086 # a list of package paths
"$go" test -race -count=1 -timeout "$timeout" -p "$parallel" $others
status=$?
wait
for name in wasm-first-half wasm-second-half shell; do
  echo "== $name"
  cat "$dir/$name.out"
  rc=$(cat "$dir/$name.rc" 2>/dev/null || echo 1)
  [ "$rc" = 0 ] || status=1
done
exit "$status"
