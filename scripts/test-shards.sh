#!/usr/bin/env bash
# The test stage of make test: every package's tests against the real
# runtime, as several test processes at once, so that one's waits (a
# deadline that must pass, a worker that starts, a peer that answers)
# overlap another's work. On two cores one go test process left a core
# idle for most of the suite's wall time.
#
#   GO=go TEST_TIMEOUT=15m PARALLEL_PACKAGES=3 scripts/test-shards.sh [command...]
#
# Each test binary is built once (go test -c) and then run, rather than
# several go test processes building the same race-instrumented standard
# library and dependencies side by side (on an empty build cache, three
# did, for a minute of CPU each).
#
# - adapters/wasm holds most of the guest-bound tests, one after another.
#   Its tests of the host's own concurrency (wasm_race below: deadlines
#   and cancellations that stop a running guest, streaming, the warm
#   pool, capacity, hibernation, restarts and shutdown, snapshots of a
#   busy session, host steps with deadlines) run under -race. The rest run
#   without it, in three processes split by test name (a process each, so
#   a test that counts the process's goroutines, threads or CPU time sees
#   only its own shard): what they check is what the guest does and
#   answers (the conformance suite, the scientific profile, hostile
#   scripts, files and limits), and -race, which instruments only the
#   host's Go code, cost CPU and checked nothing more there (measured on
#   a warm compilation cache, CPU seconds under -race against without:
#   the conformance suites 78 against 62, the hostile, bash and
#   scientific tests 118 against 66, the rest 155 against 53; in clean
#   clones of make test on 2 quiet cores the package's processes took 977
#   s of wall time all under -race, 419 s split so). The host code those
#   tests pass through runs under -race too: in wasm_race, and in
#   adapters/http, whose conformance suite runs this adapter in process
#   under -race. The plain binary is built and
#   started first: the longest, and cheap to build (make test's go vet
#   and go build compiled its dependencies without -race).
# - the shell package runs without -race (see the Makefile).
# - every other package runs under -race, PARALLEL_PACKAGES at a time,
#   longest first (adapters/wasm's race tests among them), but
#   internal/testkit/testcache, whose one test (TestPrecompile) make test ran just
#   before, to fill the cache.
# - the command given as arguments (make test's fuzz stage) runs once
#   those packages are done, beside what is left of the wasm shards.
#
# go test's own vet pass is off (-vet=off): make test's check stage ran go
# vet ./..., every analyser of which go test's pass is a subset.
#
# Each test process's output is printed when it ends, whole, after a
# line "ok|FAIL <package> <seconds>s, CPU <seconds>s"; the exit status
# is non-zero if any failed or did not build.
set -uo pipefail
go=${GO:-go}
timeout=${TEST_TIMEOUT:-15m}
parallel=${PARALLEL_PACKAGES:-3}
module=$("$go" list -m)
root=$(pwd)
wasm=$module/adapters/wasm
shell=$module/adapters/wasm/internal/shell
testcache=$module/internal/testkit/testcache
# adapters/wasm's tests of the host's concurrency, run under -race (see
# above); a test added to the package runs without it unless named here.
wasm_race_tests=(
  TestTimeoutStopsTheProgramAndKeepsEarlierOutput TestCancellationStopsTheProgram
  TestCLoopsAreStoppedAtTheDeadline TestBusySessionRefusesASecondCall
  TestCapacityDestroyAndReclaim TestWarmPool TestWarmPoolFilledOnce
  TestSpinningProgramDoesNotStopTheWorld TestBashMemoryBombLeavesOtherSessionsAlone
  TestCloseDuringStartIsNoFailure TestHibernation TestRestartKeepsSessions
  TestCloseKeepsSessionsItNeverWoke TestShutdownKeepsEverySessionOrSaysItLost TestCxxInterruptIsNotCaught
  TestCallDuringHibernationWaitsForIt TestWakeAfterAHostErrorKeepsTheSession
  TestHostileSnapshotStepNeverLosesStateSilently TestRestoredStepIsBounded
  TestSnapshotOfABusySession TestOutputIsStreamedWhileTheCellRuns
  TestStreamedOutputIsThePrefixOfTheResult TestBashStdoutIsStreamed
  TestRecycledInstanceCarriesNothing TestInstancesRecyclingCannotResetAreClosed
)
wasm_race="^($(IFS='|'; echo "${wasm_race_tests[*]}"))\$"
# The shards of the rest, as -run patterns, each skipping what the ones
# before it ran, and a last one that skips them all: about the same CPU
# time each (see the figures above).
wasm_shards=('^TestConformance' '^Test(Hostile|Bash|Scientific)')
# The longest of the other packages, started first.
longest=(adapters/wasm cmd/codeport adapters/subprocess adapters/wasm/internal/shell/wasmshell
  adapters/http internal/testkit/schemacheck internal/testkit/sdkcheck deploy/nginx mcpserver server)

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/race" "$dir/out"

# run PKG BINARY ARGS...: runs a test binary in its package's directory
# (as go test does), and prints its verdict and output, whole, when it
# ends; its status is kept for the end.
run() {
  local pkg=$1 bin=$2
  shift 2
  local key=${pkg//\//_}${name:+-${name// /-}} start rc verdict=ok cpu TIMEFORMAT='%U %S'
  start=$(date +%s)
  # The CPU time (user+system, its child processes included) is printed
  # beside the wall time: on a busy machine it is the figure that says
  # where make test's time goes.
  { time { (cd "$root${pkg#"$module"}" && "$bin" -test.timeout "$timeout" -test.paniconexit0 "$@") >"$dir/out/$key.log" 2>&1; }; } 2>"$dir/out/$key.cpu"
  rc=$?
  [ "$rc" = 0 ] || verdict=FAIL
  cpu=$(awk '{s = $1 + $2} END {printf "%d", s + 0.5}' "$dir/out/$key.cpu")
  echo "$rc" >"$dir/out/$key.rc"
  flock "$dir/print.lock" sh -c 'printf "%s\t%s\t%ss, CPU %ss%s\n" "$1" "$2" "$3" "$4" "$5"; cat "$6"' \
    sh "$verdict" "$pkg" "$(($(date +%s) - start))" "$cpu" "${name:+ ($name)}" "$dir/out/$key.log"
}

# build OUT PKG...: go test -c, or a failure recorded under "build".
build() {
  local out=$1
  shift
  if ! "$go" test -vet=off -c -o "$out" "$@" >>"$dir/out/build.log" 2>&1; then
    echo 1 >"$dir/out/build.rc"
    return 1
  fi
}

status=0
if build "$dir/wasm.test" "$wasm"; then
  # A name in wasm_race that names no test (one renamed) would leave
  # nothing under -race in its place: fail instead.
  listed=$(cd "$root${wasm#"$module"}" && "$dir/wasm.test" -test.list "$wasm_race" | grep -c '^Test')
  if [ "$listed" != "${#wasm_race_tests[@]}" ]; then
    echo "test-shards.sh: wasm_race names ${#wasm_race_tests[@]} tests, adapters/wasm has $listed of them" >>"$dir/out/build.log"
    echo 1 >"$dir/out/build.rc"
  fi
  skip=$wasm_race
  for i in "${!wasm_shards[@]}"; do
    name="shard $((i + 1))" run "$wasm" "$dir/wasm.test" -test.run "${wasm_shards[$i]}" -test.skip "$skip" &
    skip="$skip|${wasm_shards[$i]}"
  done
  name="shard $((${#wasm_shards[@]} + 1))" run "$wasm" "$dir/wasm.test" -test.skip "$skip" &
fi
if build "$dir/shell.test" "$shell"; then
  name="" run "$shell" "$dir/shell.test" &
fi

others=$("$go" list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./... |
  grep -v -x -F -e "$shell" -e "$testcache")
# shellcheck disable=SC2086 # a list of package paths
if build "$dir/race/" -race $others; then
  {
    for p in "${longest[@]}"; do
      grep -x -F "$module/$p" <<<"$others"
    done
    printf '%s\n' "${longest[@]/#/$module/}" >"$dir/longest"
    grep -v -x -F -f "$dir/longest" <<<"$others"
  } >"$dir/order"
  export -f run
  export dir root module timeout wasm wasm_race
  # shellcheck disable=SC2016 # expanded by the inner shell
  xargs -P "$parallel" -I{} bash -c 'b=$dir/race/${0##*/}.test; args=(); name=""
    if [ "$0" = "$wasm" ]; then args=(-test.run "$wasm_race"); name="race"; fi
    if [ -x "$b" ]; then run "$0" "$b" "${args[@]}"; fi' {} <"$dir/order"
fi

if [ $# -gt 0 ]; then
  "$@" || status=1
fi
wait

if [ -f "$dir/out/build.rc" ]; then
  cat "$dir/out/build.log"
  status=1
fi
for f in "$dir"/out/*.rc; do
  [ -e "$f" ] || continue
  [ "$(cat "$f")" = 0 ] || status=1
done
exit "$status"
