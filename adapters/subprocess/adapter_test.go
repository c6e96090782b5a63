package subprocess_test

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/conformance"
	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/internal/testkit/metrictest"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// TestConformance runs the suite every adapter must pass, with room for
// four sessions (four workers) so that the capacity check runs, and with
// a snapshot key so that the snapshot checks run: a snapshot is written by
// the session's worker and restored into whichever worker is free.
func TestConformance(t *testing.T) {
	if workerBin == "" {
		t.Fatal("no worker binary: see TestMain's output")
	}
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 4)
	}, port.WithSnapshotKey([]byte("subprocess conformance snapshot key, 32+ bytes")))
	// The workers' CPU: a stopped call must not keep one busy.
	cpu := func() time.Duration { return measure.CPU(subprocess.WorkerPIDs(a)...) }
	conformance.Run(t, func(*testing.T) conformance.Target { return conformance.Target{Port: a, MaxSessions: 4, CPUTime: cpu} })
}

func newSession(t *testing.T, a port.CodeExecutionPort) string {
	t.Helper()
	s, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return s.ID
}

func run(t *testing.T, a port.CodeExecutionPort, id, code string) port.Result {
	t.Helper()
	res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
	if err != nil {
		t.Fatalf("Execute %q: %v", code, err)
	}
	return res
}

// lostAndGone checks a call's session_lost result, that the session is
// gone afterwards, and that another session still works.
func lostAndGone(t *testing.T, a *port.Port, res port.Result, id, other, why string, rc int) {
	t.Helper()
	if res.Outcome != port.OutcomeSessionLost || !res.StateLost || res.ReturnCode != rc || !strings.Contains(res.Stderr, why) {
		t.Errorf("lost call: outcome %q rc %d state lost %v stderr %q; want session_lost, rc %d, %q", res.Outcome, res.ReturnCode, res.StateLost, res.Stderr, rc, why)
	}
	if _, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"}); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("a call on the lost session: %v, want ErrSessionNotFound", err)
	}
	if _, err := a.ListFiles(context.Background(), id, ""); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("listing the lost session: %v, want ErrSessionNotFound", err)
	}
	if got := run(t, a, other, "print(y)"); got.Stdout != "7\n" {
		t.Errorf("the other session after the loss: %+v", got)
	}
}

// twoSessions starts a session to break and another holding y = 7, each in
// its own worker.
func twoSessions(t *testing.T, a *port.Port) (victim, other string) {
	t.Helper()
	victim, other = newSession(t, a), newSession(t, a)
	run(t, a, other, "y = 7")
	if subprocess.SessionPID(a, victim) == subprocess.SessionPID(a, other) {
		t.Fatal("two sessions share a worker")
	}
	return victim, other
}

func TestKillNineMidCall(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 4).WithMetrics(reg)
	})
	victim, other := twoSessions(t, a)
	pid := subprocess.SessionPID(a, victim)
	done := testwait.StartCall(context.Background(), t, a, victim, port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code: "import time\nprint('started', flush=True)\ntime.sleep(1000)"})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res := testwait.Receive(t, done, "the call after its worker was killed")
	lostAndGone(t, a, res, victim, other, "was killed", 128+int(syscall.SIGKILL))
	if n := metrictest.Value(t, reg, "codeport_worker_restarts_total", "cause", "killed"); n != 1 {
		t.Errorf("restarts{cause=killed} = %v, want 1", n)
	}
	// The pool is topped up again.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatalf("no worker replaced the lost one: %v", err)
	}
}

// A worker's OS data limit is its containment, which none of its
// sessions may spend: a program whose memory would grow past it (the wasm
// limit, 3 GiB, is set above the worker's 700 MiB) gets a MemoryError, as
// at its own limit, and the worker and its other session live on. Before,
// the Go runtime died of the allocation (and, one run in thirty, of a nil
// dereference in its garbage collector instead), taking both sessions.
func TestMemoryBombMeetsTheWorkersOSLimitAsAMemoryError(t *testing.T) {
	var logs logtest.Buffer
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		wc := wasm.NewConfig().WithMemoryLimit(3 << 30)
		return c.WithWasm(wc).WithWorkers(1, 2).WithSessionsPerWorker(2).WithWorkerMemoryLimit(700 << 20).
			WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	})
	defer func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	}()
	victim, other := newSession(t, a), newSession(t, a)
	pid := subprocess.SessionPID(a, victim)
	if subprocess.SessionPID(a, other) != pid {
		t.Fatal("the two sessions are in different workers")
	}
	run(t, a, victim, "x = 'kept'")
	run(t, a, other, "y = 7")
	for _, bomb := range []string{
		"a = bytearray(1200 * 1024 * 1024)",
		"chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 20))",
		"a = bytearray(1200 * 1024 * 1024)\nb = bytearray(1200 * 1024 * 1024)",
	} {
		// A long timeout: the bomb must meet the limit, however slowly a
		// busy machine fills 700 MiB, not its deadline.
		res, err := a.Execute(context.Background(), victim, port.ExecuteRequest{Tool: port.ToolCodeExecution, Timeout: 5 * time.Minute, Code: bomb})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != port.OutcomeMemoryLimit || res.ReturnCode != port.ReturnCodeMemoryLimit ||
			!strings.Contains(res.Stderr, "MemoryError") || !strings.Contains(res.Stderr, "OS memory limit") {
			t.Fatalf("%q: outcome %s rc %d stderr %q", bomb, res.Outcome, res.ReturnCode, res.Stderr)
		}
		run(t, a, victim, "chunks = None")
	}
	if got := subprocess.SessionPID(a, victim); got != pid || !alive(pid) {
		t.Fatalf("the worker %d was replaced by %d (alive: %v)", pid, got, alive(pid))
	}
	if res := run(t, a, victim, "print(x)"); res.Stdout != "kept\n" {
		t.Errorf("the bombing session after its bombs: %+v", res)
	}
	if res := run(t, a, other, "print(y)"); res.Stdout != "7\n" {
		t.Errorf("the other session after the bombs: %+v", res)
	}
}

// A worker that does not stop a cancelled call within the grace is
// killed, and the call says it was cancelled, not that it overran its
// deadline, which was hours away.
func TestHungWorkerIsKilledAfterItsCancellation(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 4).WithKillGrace(500 * time.Millisecond)
	})
	victim, other := twoSessions(t, a)
	pid := subprocess.SessionPID(a, victim)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := testwait.StartCall(ctx, t, a, victim, port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code: "print('started', flush=True)\nwhile True: pass", Timeout: time.Hour})
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Stopped before the cancellation, or it might still answer it.
	testwait.For(t, "the worker to be stopped", func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err == nil && procState(string(b)) == "T"
	})
	cancel()
	res := testwait.Receive(t, done, "the call")
	lostAndGone(t, a, res, victim, other, "did not stop when the call was cancelled", port.ReturnCodeCancelled)
	if alive(pid) {
		t.Errorf("the hung worker %d is still alive", pid)
	}
}

func TestHungWorkerIsKilledAfterTheGrace(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 4).WithKillGrace(500 * time.Millisecond)
	})
	victim, other := twoSessions(t, a)
	pid := subprocess.SessionPID(a, victim)
	// The worker is stopped once the call runs, well before its deadline
	// even on a loaded machine.
	const timeout = 5 * time.Second
	start := time.Now()
	done := testwait.StartCall(context.Background(), t, a, victim, port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code: "print('started', flush=True)\nwhile True: pass", Timeout: timeout})
	// A stopped process answers nothing, as a worker stuck in host code
	// would not.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	res := testwait.Receive(t, done, "the call")
	// Never killed, the worker would never answer; killed after the
	// grace, it is gone seconds after the deadline on a loaded machine.
	if d := time.Since(start); d > timeout+100*time.Second {
		t.Errorf("the hung call returned after %v", d)
	}
	lostAndGone(t, a, res, victim, other, "did not stop at the call's deadline", port.ReturnCodeTimedOut)
	if alive(pid) {
		t.Errorf("the hung worker %d is still alive", pid)
	}
}

// A call may ask for as long as max-timeout allows, however long that
// is: its watchdog, the timeout plus the kill grace, must not overflow
// into a deadline already past, which killed the worker at once and
// reported a call that ran for milliseconds as overrunning.
func TestLongestTimeoutDoesNotKillTheWorker(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		wc := wasm.NewConfig().WithCompilationCacheDir(testcache.Dir()).WithTimeouts(30*time.Second, math.MaxInt64)
		return c.WithWasm(wc).WithWorkers(1, 2)
	})
	id := newSession(t, a)
	res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(6 * 7)", Timeout: math.MaxInt64})
	if err != nil || res.Outcome != port.OutcomeCompleted || res.Stdout != "42\n" {
		t.Fatalf("a call with the longest timeout: %v: outcome %s rc %d stderr %q", err, res.Outcome, res.ReturnCode, res.Stderr)
	}
}

// A session's first bash call starts its shell before the command's
// timeout begins. That start is not the command overrunning: with a
// kill grace shorter than it, the call must still end as its command
// did (at its timeout here), not with its worker killed and the session
// reported lost for missing its deadline.
func TestFirstBashCallIsNotTakenForAnOverrun(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 2).WithKillGrace(time.Millisecond)
	})
	id := newSession(t, a)
	res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "while :; do :; done", Timeout: time.Second})
	if err != nil || res.Outcome != port.OutcomeTimedOut {
		t.Fatalf("first bash call: %v: outcome %s rc %d stderr %q; want timed_out", err, res.Outcome, res.ReturnCode, res.Stderr)
	}
	if got := run(t, a, id, "print(6 * 7)"); got.Stdout != "42\n" {
		t.Errorf("the session after its first bash call: %+v", got)
	}
	// Nor is a cancelled one: the shell's start goes on, and the command
	// is then cancelled.
	id = newSession(t, a)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = a.Execute(gone, id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "while :; do :; done", Timeout: time.Minute})
	if err != nil || res.Outcome != port.OutcomeCancelled {
		t.Fatalf("first bash call, cancelled: %v: outcome %s rc %d stderr %q; want cancelled", err, res.Outcome, res.ReturnCode, res.Stderr)
	}
}

func TestCancelledCallIsStoppedAndTheSessionKept(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(1, 2) })
	id := newSession(t, a)
	run(t, a, id, "open('kept.txt', 'w').write('x')")
	// Cancelled once it runs (its first output), not after a time that a
	// loaded machine may take to get the call to the worker at all.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('started', flush=True)\nwhile True: pass",
		OnOutput: func(port.Stream, []byte) { cancel() }})
	if err != nil || res.Outcome != port.OutcomeCancelled || res.ReturnCode != port.ReturnCodeCancelled {
		t.Fatalf("cancelled call: %+v %v", res, err)
	}
	if got := run(t, a, id, "print(open('kept.txt').read())"); got.Stdout != "x\n" {
		t.Errorf("after the cancellation: %+v", got)
	}
}

func TestCreateDestroyLeavesNoProcesses(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(1, 4) })
	ctx := context.Background()
	for i := range 50 {
		id := newSession(t, a)
		if got := run(t, a, id, "print(6 * 7)"); got.Stdout != "42\n" {
			t.Fatalf("session %d: %+v", i, got)
		}
		if err := a.DestroySession(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// Retired workers are stopped in the background: wait until only the
	// live ones are left, then count.
	wait, cancel := testwait.Context(t)
	defer cancel()
	var kids []int
	var zombies, live int
	if err := testwait.Poll(wait, 50*time.Millisecond, func() bool {
		kids, zombies = children(t)
		live = len(subprocess.WorkerPIDs(a))
		return len(kids) == live && zombies == 0
	}); err != nil {
		t.Fatalf("after 50 sessions: %d child processes (%d zombies), %d live workers", len(kids), zombies, live)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if kids, zombies := children(t); len(kids) != 0 || zombies != 0 {
		t.Errorf("after Close: child processes %v (%d zombies)", kids, zombies)
	}
	if orphans := processesRunning(t, workerBin); len(orphans) != 0 {
		t.Errorf("worker processes left running: %v", orphans)
	}
}

func TestDescribeSaysProcessIsolation(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(1, 3) })
	c, err := a.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend != "subprocess" || c.Limits.MaxSessions != 3 || c.Runtime != "CPython" {
		t.Errorf("Describe: %+v", c)
	}
	if !strings.Contains(strings.Join(c.Limitations, " "), "worker process of its own") {
		t.Errorf("limitations do not say what isolation means: %q", c.Limitations)
	}
}

// With no worker kept started, Describe answers at once and starts none
// (it once waited for a worker that nothing would start).
func TestDescribeNeedsNoWorker(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(0, 2) })
	ctx, cancel := testwait.Context(t)
	defer cancel()
	c, err := a.Describe(ctx)
	if err != nil || c.Backend != "subprocess" || c.RuntimeVersion != wasm.RuntimeVersion {
		t.Fatalf("Describe: %v %+v", err, c)
	}
	if pids := subprocess.WorkerPIDs(a); len(pids) != 0 {
		t.Fatalf("Describe started workers: %v", pids)
	}
}

func TestCapacityIsWorkers(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(0, 1) })
	id := newSession(t, a)
	_, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
	var ce *port.CapacityError
	if !errors.As(err, &ce) || ce.Limit != 1 || ce.RetryAfter <= 0 {
		t.Fatalf("second session with one worker: %v", err)
	}
	if err := a.DestroySession(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	newSession(t, a) // the slot is free again
}

// A refusal counts what ran out, the worker processes: with workers
// shared by sessions, it does not call the sessions they hold processes.
func TestCapacityErrorCountsWorkerProcesses(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(0, 1).WithSessionsPerWorker(2)
	})
	newSession(t, a)
	newSession(t, a)
	_, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
	var ce *port.CapacityError
	if !errors.As(err, &ce) || ce.Resource != "worker processes" || ce.Limit != 1 {
		t.Fatalf("a third session with one worker of two sessions: %v (%+v), want 1 worker processes", err, ce)
	}
}

// With one worker, kept started, that hosts one session: each session's
// end retires the worker and the filler starts the next one. A session
// asked for meanwhile waits for that worker instead of being refused for
// a slot that is about to open (CI once saw "at capacity" here).
func TestCreateWaitsForTheWorkerBeingStarted(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(1, 1) })
	ctx := context.Background()
	waited := 0
	for i := range 4 {
		if i > 0 {
			// Ask while the filler starts the next worker (or, on a
			// machine fast enough to have started it already, after).
			testwait.For(t, "the filler starting the next worker", func() bool {
				return subprocess.Warming(a) > 0 || len(subprocess.WorkerPIDs(a)) > 0
			})
			if subprocess.Warming(a) > 0 {
				waited++
			}
		}
		s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		if res := run(t, a, s.ID, "print(6 * 7)"); res.Stdout != "42\n" {
			t.Fatalf("session %d: %q %q", i, res.Stdout, res.Stderr)
		}
		if err := a.DestroySession(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d of 3 sessions were asked for while their worker was being started", waited)
	// With the one worker busy and none being started, a second session
	// is refused at once: there is nothing to wait for.
	id := newSession(t, a)
	var ce *port.CapacityError
	if _, err := a.CreateSession(ctx, port.CreateSessionRequest{}); !errors.As(err, &ce) {
		t.Fatalf("second session while the one worker is busy: %v", err)
	}
	if err := a.DestroySession(ctx, id); err != nil {
		t.Fatal(err)
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	return procState(string(b)) != "Z"
}

// procState is the state field of a /proc/PID/stat line.
func procState(stat string) string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return ""
	}
	return f[0]
}

// children lists this process's child processes and counts the zombies.
func children(t *testing.T) (pids []int, zombies int) {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[1] != me {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		pids = append(pids, pid)
		if f[0] == "Z" {
			zombies++
		}
	}
	return pids, zombies
}

// processesRunning lists live processes whose executable is bin.
func processesRunning(t *testing.T, bin string) []int {
	t.Helper()
	exes, err := filepath.Glob("/proc/[0-9]*/exe")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range exes {
		target, err := os.Readlink(e)
		if err != nil || target != bin {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(e)))
		if alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestWorkerInheritsNoEnvironment reads a worker's environment from /proc:
// only its spec and go-plugin's handshake variables, nothing of ours.
func TestWorkerInheritsNoEnvironment(t *testing.T) {
	t.Setenv("CODEPORT_TEST_SECRET", "must-not-leak")
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(1, 1) })
	pids := subprocess.WorkerPIDs(a)
	if len(pids) != 1 {
		t.Fatalf("workers %v", pids)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for kv := range strings.SplitSeq(strings.TrimRight(string(b), "\x00"), "\x00") {
		name, _, _ := strings.Cut(kv, "=")
		if name != "CODEPORT_WORKER_SPEC" && name != "CODEPORT_WORKER_COOKIE" && !strings.HasPrefix(name, "PLUGIN_") {
			t.Errorf("worker environment holds %s", name)
		}
	}
}

// TestWorkerLogsReachTheParentWithoutUserData: a worker's own log records
// arrive in the parent's logger; what a program prints or writes does not.
func TestWorkerLogsReachTheParentWithoutUserData(t *testing.T) {
	var logs logtest.Buffer
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 2).WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	})
	id := newSession(t, a)
	run(t, a, id, "import sys\nprint('OUT-7f3a')\nprint('ERR-7f3a', file=sys.stderr)\nopen('f.txt', 'w').write('FILE-7f3a')")
	if err := a.DestroySession(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	got := logs.String()
	if !strings.Contains(got, `"worker: wasm runtime ready"`) || !strings.Contains(got, "level=INFO") {
		t.Errorf("the workers' log records did not reach the parent:\n%s", got)
	}
	if strings.Contains(got, "7f3a") {
		t.Errorf("user output or file contents in the logs:\n%s", got)
	}
}

// kindsHandler is a slog handler that keeps, for each message, the kind
// of each attribute, and closes seen when a record of the message want
// arrives.
type kindsHandler struct {
	want string
	seen chan struct{}
	mu   sync.Mutex
	got  map[string]map[string]slog.Kind
}

func (h *kindsHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *kindsHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *kindsHandler) WithGroup(string) slog.Handler            { return h }
func (h *kindsHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	kinds := map[string]slog.Kind{}
	r.Attrs(func(a slog.Attr) bool {
		kinds[a.Key] = a.Value.Kind()
		return true
	})
	if _, dup := h.got[r.Message]; !dup && r.Message == h.want {
		close(h.seen)
	}
	h.got[r.Message] = kinds
	return nil
}

// TestWorkerLogKeepsIntegers: an integer a real worker logs (its pid)
// reaches the parent's handler as an integer, not as a float.
func TestWorkerLogKeepsIntegers(t *testing.T) {
	h := &kindsHandler{want: "worker: wasm runtime ready", seen: make(chan struct{}), got: map[string]map[string]slog.Kind{}}
	wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 1).WithLogger(slog.New(h))
	})
	<-h.seen // the worker logs it before it answers the handshake
	h.mu.Lock()
	defer h.mu.Unlock()
	if k := h.got[h.want]["pid"]; k != slog.KindInt64 {
		t.Errorf("the worker's pid arrived as %v, want Int64 (attributes %v)", k, h.got[h.want])
	}
}

// TestIdleWorkerDeathIsNoticed: a worker killed while it waits for a
// session is replaced without anyone calling it.
func TestIdleWorkerDeathIsNoticed(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 2).WithMetrics(reg)
	})
	pids := subprocess.WorkerPIDs(a)
	if len(pids) != 1 {
		t.Fatalf("workers %v", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "a worker in place of the dead idle one", func() bool {
		now := subprocess.WorkerPIDs(a)
		return len(now) == 1 && now[0] != pids[0] && a.Ready()
	})
	if n := metrictest.Value(t, reg, "codeport_worker_restarts_total", "cause", "killed"); n != 1 {
		t.Errorf("restarts{cause=killed} = %v, want 1", n)
	}
	if got := run(t, a, newSession(t, a), "print('fine')"); got.Stdout != "fine\n" {
		t.Errorf("after the replacement: %+v", got)
	}
}

// A worker streams a call's output to the parent as it is written: the
// cell waits for a file that the test puts only once the first chunk has
// arrived, so the call ends only if that chunk came first.
func TestWorkerStreamsOutput(t *testing.T) {
	p := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(1, 2) })
	ctx := context.Background()
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out strings.Builder
	first := make(chan struct{})
	go func() {
		select {
		case <-first:
			_, _ = p.PutFile(ctx, s.ID, "go", strings.NewReader("go"))
		case <-t.Context().Done():
		}
	}()
	// The longest timeout admitted, far above what a loaded machine takes
	// to stream the first line: only a call whose output is not streamed
	// runs into it.
	res, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Timeout: 300 * time.Second,
		Code: "import os, time\nprint(0, flush=True)\nwhile not os.path.exists('go'):\n    time.sleep(0.01)\nprint(1)",
		OnOutput: func(st port.Stream, b []byte) {
			mu.Lock()
			defer mu.Unlock()
			if st == port.Stdout {
				if out.Len() == 0 {
					close(first)
				}
				out.Write(b)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if res.Stdout != "0\n1\n" || out.String() != res.Stdout {
		t.Fatalf("streamed %q, result %q (stderr %q)", out.String(), res.Stdout, res.Stderr)
	}
}

// A worker's go-plugin server puts its socket in a directory the parent
// makes for it and removes when the worker ends: a worker killed (its
// memory exceeded, its deadline ignored) left its socket in the temporary
// directory for good. Both places are checked: beside the workers'
// directories when that path is short enough for a socket's address,
// under the temporary directory otherwise.
func TestKilledWorkerLeavesNoSocket(t *testing.T) {
	short, err := os.MkdirTemp("", "cps")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 60))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, sessions string
		inSessions     bool
	}{{"beside the workers", short, true}, {"in the temporary directory", long, false}} {
		t.Run(c.name, func(t *testing.T) {
			a := wasmtest.NewSubprocess(t, workerBin, func(cfg subprocess.Config) subprocess.Config {
				return cfg.WithWorkers(1, 2).WithSessionsDir(c.sessions)
			})
			pids := subprocess.WorkerPIDs(a)
			if len(pids) != 1 {
				t.Fatalf("workers %v", pids)
			}
			dir := workerSocketDir(t, pids[0])
			if got := strings.HasPrefix(dir, c.sessions+string(filepath.Separator)); got != c.inSessions {
				t.Fatalf("socket directory %s: under %s %v, want %v", dir, c.sessions, got, c.inSessions)
			}
			if socks, _ := filepath.Glob(filepath.Join(dir, "plugin*")); len(socks) != 1 {
				t.Fatalf("%s holds %v, want the worker's socket", dir, socks)
			}
			if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			testwait.For(t, "the killed worker's socket directory removed", func() bool {
				_, err := os.Stat(dir)
				return errors.Is(err, os.ErrNotExist)
			})
			testwait.For(t, "a worker in place of the killed one", func() bool {
				now := subprocess.WorkerPIDs(a)
				return len(now) == 1 && now[0] != pids[0] && a.Ready()
			})
			next := workerSocketDir(t, subprocess.WorkerPIDs(a)[0])
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(next); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after Close, the last worker's socket directory: %v", err)
			}
		})
	}
}

// workerSocketDir is where worker pid was told to put its socket.
func workerSocketDir(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for kv := range strings.SplitSeq(string(b), "\x00") {
		if dir, ok := strings.CutPrefix(kv, "PLUGIN_UNIX_SOCKET_DIR="); ok && dir != "" {
			return dir
		}
	}
	t.Fatalf("worker %d was given no socket directory", pid)
	return ""
}

// With recycle-after above one, a worker whose session ended hosts the
// next, and that session finds nothing of the last one; after that many
// sessions the worker is retired.
func TestRecycleAfterReusesAWorkerCleanly(t *testing.T) {
	if workerBin == "" {
		t.Fatal("no worker binary: see TestMain's output")
	}
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 1).WithRecycleAfter(3)
	})
	ctx := context.Background()
	var pids []int
	for i := range 4 {
		id := newSession(t, a)
		pids = append(pids, subprocess.SessionPID(a, id))
		if res := run(t, a, id, "print('secret' in globals())\nsecret = 1\nn = open('/workspace/left', 'w').write('x')"); res.Stdout != "False\n" {
			t.Fatalf("session %d: %q %q: the last session's state carried over", i, res.Stdout, res.Stderr)
		}
		if res := run(t, a, id, "import os\nprint(os.listdir('/workspace'))"); res.Stdout != "['left']\n" {
			t.Fatalf("session %d sees files %q", i, res.Stdout)
		}
		if err := a.DestroySession(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if pids[0] == 0 || pids[1] != pids[0] || pids[2] != pids[0] {
		t.Fatalf("three sessions in a row had workers %v, want one", pids[:3])
	}
	if pids[3] == pids[0] {
		t.Fatalf("the worker hosted a fourth session (%v): recycle-after 3 retires it after three", pids)
	}
}

// With tenant workers, a worker hosts one tenant's sessions, at once and
// one after another: a second tenant never gets a slot in the first's
// worker, even one that its sessions left free, while the first tenant's
// next session does; without, the same calls share the worker.
func TestTenantWorkersKeepTenantsApart(t *testing.T) {
	if workerBin == "" {
		t.Fatal("no worker binary: see TestMain's output")
	}
	for _, tenantWorkers := range []bool{true, false} {
		a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
			return c.WithWorkers(0, 3).WithSessionsPerWorker(2).WithRecycleAfter(4).WithTenantWorkers(tenantWorkers)
		})
		bg := context.Background()
		as := func(tenant string) (string, int) {
			t.Helper()
			s, err := a.CreateSession(port.WithTenant(bg, tenant), port.CreateSessionRequest{})
			if err != nil {
				t.Fatalf("tenant %q: %v", tenant, err)
			}
			if res := run(t, a, s.ID, "print('ok')"); res.Stdout != "ok\n" {
				t.Fatalf("tenant %q: %+v", tenant, res)
			}
			return s.ID, subprocess.SessionPID(a, s.ID)
		}
		a1, pidA := as("a")
		a2, pidA2 := as("a")
		if pidA2 != pidA {
			t.Fatalf("tenant workers %v: one tenant's two sessions in workers %d and %d; want one worker", tenantWorkers, pidA, pidA2)
		}
		// Tenant a's worker is full: b starts a worker of its own either way.
		_, pidB := as("b")
		if pidB == pidA {
			t.Fatalf("tenant workers %v: a full worker took another session", tenantWorkers)
		}
		for _, id := range []string{a1, a2} {
			if err := a.DestroySession(bg, id); err != nil {
				t.Fatal(err)
			}
		}
		// a's worker has two free slots, b's one: c, a newcomer, goes to
		// a's worker only without tenant workers.
		_, pidC := as("c")
		if tenantWorkers && (pidC == pidA || pidC == pidB) {
			t.Fatalf("tenant c was given a worker of another tenant (a %d, b %d, c %d)", pidA, pidB, pidC)
		}
		if !tenantWorkers && pidC != pidA && pidC != pidB {
			t.Fatalf("without tenant workers, c started a third worker %d beside a's %d and b's %d with free slots", pidC, pidA, pidB)
		}
		if tenantWorkers {
			// a's next session goes back to a's worker, its third.
			if _, pid := as("a"); pid != pidA {
				t.Fatalf("tenant a's third session is in worker %d, not its worker %d", pid, pidA)
			}
		}
	}
}

// With tenant workers and every worker that may live alive, a new
// tenant's session retires a worker of another tenant that hosts nothing
// and gets a fresh one; when every worker hosts a session, it is refused
// at capacity rather than put beside another tenant's.
func TestTenantWorkersMakeRoomForANewTenant(t *testing.T) {
	if workerBin == "" {
		t.Fatal("no worker binary: see TestMain's output")
	}
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(0, 2).WithSessionsPerWorker(2).WithRecycleAfter(8).WithTenantWorkers(true)
	})
	bg := context.Background()
	as := func(tenant string) (string, int, error) {
		s, err := a.CreateSession(port.WithTenant(bg, tenant), port.CreateSessionRequest{})
		if err != nil {
			return "", 0, err
		}
		if res := run(t, a, s.ID, "print('ok')"); res.Stdout != "ok\n" {
			t.Fatalf("tenant %q: %+v", tenant, res)
		}
		return s.ID, subprocess.SessionPID(a, s.ID), nil
	}
	a1, pidA, err := as("a")
	if err != nil {
		t.Fatal(err)
	}
	_, pidB, err := as("b")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.DestroySession(bg, a1); err != nil {
		t.Fatal(err)
	}
	_, pidC, err := as("c")
	if err != nil {
		t.Fatalf("tenant c, with a's worker hosting nothing: %v", err)
	}
	if pidC == pidA || pidC == pidB {
		t.Fatalf("tenant c was put in worker %d (a's %d, b's %d)", pidC, pidA, pidB)
	}
	if slices.Contains(subprocess.WorkerPIDs(a), pidA) {
		t.Fatalf("a's idle worker %d is still alive beside b's and c's: %v", pidA, subprocess.WorkerPIDs(a))
	}
	var ce *port.CapacityError
	if _, pid, err := as("a"); !errors.As(err, &ce) {
		t.Fatalf("tenant a with both workers hosting other tenants' sessions: worker %d, %v; want a capacity refusal", pid, err)
	}
}
