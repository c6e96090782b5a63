package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// newTestAdapter starts an adapter over the real embedded runtime.
func newTestAdapter(t testing.TB, tweak func(Config) Config) *testAdapter {
	t.Helper()
	cfg := NewConfig().WithSessionsDir(t.TempDir()).WithCompilationCacheDir(testcache.Dir())
	if tweak != nil {
		cfg = tweak(cfg)
	}
	a, err := open(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	// Compiling the runtime takes minutes under the race detector on a
	// loaded machine: no deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	return a
}

// stuckAfter is how long past its deadline a call may return before a test
// calls the deadline ignored. A call that observes it returns well within
// a second on a quiet machine and within seconds under any load (12 s at
// load 11 on 2 cores, a wait for the shell's guest included); one that
// ignores it runs its program's course: a sleep of 1000 s, an endless
// loop, a computation or a walk of minutes to hours. A bound nearer the
// deadline made the verdict depend on the machine's load.
const stuckAfter = 100 * time.Second

func newSession(t testing.TB, a *testAdapter) string {
	t.Helper()
	s, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return s.ID
}

func run(t testing.TB, a *testAdapter, id, code string) port.Result {
	t.Helper()
	return runTimeout(t, a, id, code, 0)
}

func runTimeout(t testing.TB, a *testAdapter, id, code string, timeout time.Duration) port.Result {
	t.Helper()
	res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, Timeout: timeout})
	if err != nil {
		t.Fatalf("Execute(%q): %v", firstLineOf(code), err)
	}
	return res
}

func firstLineOf(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func expect(t testing.TB, res port.Result, stdout string, rc int, outcome port.Outcome) {
	t.Helper()
	if res.Stdout != stdout || res.ReturnCode != rc || res.Outcome != outcome {
		t.Fatalf("got stdout %q rc %d outcome %s (stderr %q); want stdout %q rc %d outcome %s",
			res.Stdout, res.ReturnCode, res.Outcome, res.Stderr, stdout, rc, outcome)
	}
}

func TestStatePersistsWithinSessionAndNotAcross(t *testing.T) {
	a := newTestAdapter(t, nil)
	s1, s2 := newSession(t, a), newSession(t, a)
	expect(t, run(t, a, s1, "import math\nx = 41"), "", 0, port.OutcomeCompleted)
	expect(t, run(t, a, s1, "def f(): return x + 1\nprint(f(), math.pi > 3)"), "42 True\n", 0, port.OutcomeCompleted)
	res := run(t, a, s2, "print(x)")
	expect(t, res, "", 1, port.OutcomeProgramError)
	if !strings.Contains(res.Stderr, "NameError") {
		t.Fatalf("fresh session should not see x; stderr %q", res.Stderr)
	}
	if res.ToolUseID == "" {
		t.Fatal("no tool use id generated")
	}
}

func TestTracebackShowsTheCellNotTheDriver(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	res := run(t, a, id, "def g():\n    return 1/0\ng()")
	expect(t, res, "", 1, port.OutcomeProgramError)
	for _, want := range []string{"Traceback", "<cell 1>", "line 2, in g", "return 1/0", "ZeroDivisionError"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.Stderr)
		}
	}
	for _, bad := range []string{"_codeport", "<string>", "exec(code"} {
		if strings.Contains(res.Stderr, bad) {
			t.Errorf("stderr shows the driver (%q):\n%s", bad, res.Stderr)
		}
	}
	// Lines of earlier cells show too, in our reports and in the
	// program's own use of traceback.
	run(t, a, id, "def h():\n    raise KeyError('k')")
	res = run(t, a, id, "import traceback\ntry:\n    h()\nexcept KeyError:\n    traceback.print_exc()\nh()")
	if strings.Count(res.Stderr, "raise KeyError('k')") != 2 || !strings.Contains(res.Stderr, "<cell 2>") {
		t.Errorf("earlier cell's source not shown:\n%s", res.Stderr)
	}
	res = run(t, a, id, "def broken(:\n  pass")
	expect(t, res, "", 1, port.OutcomeProgramError)
	if !strings.Contains(res.Stderr, "SyntaxError") || strings.Contains(res.Stderr, "_codeport") {
		t.Fatalf("syntax error report: %q", res.Stderr)
	}
}

// TestACellsSourceGoesWithItsCode: a session of many calls does not grow
// by each call's source (it once kept every cell's, for tracebacks, and a
// long session of tiny calls ran out of memory); a cell that defined a
// function keeps its source while the function lives, and loses it some
// calls after the function is gone.
func TestACellsSourceGoesWithItsCode(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	run(t, a, id, "import gc, linecache, sys")
	run(t, a, id, "def kept():\n    raise KeyError('still here')")
	// Objects, allocated blocks, and the cells whose sources are kept
	// besides the counting one (each cell appends to In, so that its
	// length is the cell's number).
	count := "gc.collect(); print(len(gc.get_objects()), sys.getallocatedblocks(), [k for k in sorted(linecache.cache) if k.startswith('<cell') and k != '<cell %d>' % len(In)])"
	run(t, a, id, "In = [None] * 3")
	before := strings.SplitN(strings.TrimSpace(run(t, a, id, "In.append(0); "+count).Stdout), " ", 3)
	for range 500 {
		run(t, a, id, "In.append(0)")
	}
	after := strings.SplitN(strings.TrimSpace(run(t, a, id, "In.append(0); "+count).Stdout), " ", 3)
	if len(before) != 3 || len(after) != 3 || after[2] != "['<cell 2>']" {
		t.Fatalf("kept cells before %.200q, after 500 calls %.200q; want only the defining cell 2", before, after)
	}
	// 500 more list items are 500 pointers: objects and blocks stay put.
	if mustAtoi(t, after[0]) > mustAtoi(t, before[0])+50 || mustAtoi(t, after[1]) > mustAtoi(t, before[1])+100 {
		t.Errorf("500 calls grew the session: objects %s -> %s, blocks %s -> %s", before[0], after[0], before[1], after[1])
	}
	res := run(t, a, id, "In.append(0); kept()")
	if !strings.Contains(res.Stderr, "raise KeyError('still here')") {
		t.Errorf("a living function's cell lost its source:\n%s", res.Stderr)
	}
	run(t, a, id, "In.append(0); del kept")
	for range 70 {
		run(t, a, id, "In.append(0)")
	}
	if got := run(t, a, id, "In.append(0); "+count).Stdout; !strings.HasSuffix(got, " []\n") {
		t.Errorf("a cell whose function is gone kept its source: %s", got)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSystemExitSetsReturnCodeAndSessionSurvives(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	run(t, a, id, "keep = 'yes'")
	res := run(t, a, id, "import sys\nprint('bye')\nsys.exit(3)")
	expect(t, res, "bye\n", 3, port.OutcomeProgramError)
	if res.StateLost {
		t.Fatal("SystemExit must not lose state")
	}
	expect(t, run(t, a, id, "raise SystemExit"), "", 0, port.OutcomeCompleted)
	res = run(t, a, id, "exit('message')")
	expect(t, res, "", 1, port.OutcomeProgramError)
	if !strings.Contains(res.Stderr, "message") {
		t.Fatalf("stderr %q", res.Stderr)
	}
	expect(t, run(t, a, id, "print(keep)"), "yes\n", 0, port.OutcomeCompleted)
}

func TestOsExitLosesStateAndSaysSo(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	run(t, a, id, "x = 1\nopen('kept.txt', 'w').write('data')")
	res := run(t, a, id, "import os\nprint('going', flush=True)\nos._exit(4)")
	expect(t, res, "going\n", 4, port.OutcomeProgramError)
	if !res.StateLost || !strings.Contains(res.Stderr, "fresh one") {
		t.Fatalf("state loss not reported: lost=%v stderr=%q", res.StateLost, res.Stderr)
	}
	res = run(t, a, id, "print(open('kept.txt').read())\nprint('x' in globals())")
	expect(t, res, "data\nFalse\n", 0, port.OutcomeCompleted)
}

func TestInputGetsEOF(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	res := run(t, a, id, "try:\n    input('name? ')\nexcept EOFError:\n    print('eof')")
	expect(t, res, "name? eof\n", 0, port.OutcomeCompleted)
}

func TestOutputCapturedAtTheStreamLevel(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	code := `import os, sys, io
os.write(1, b"raw-out\n")
os.write(2, b"raw-err\n")
print("to-err", file=sys.stderr)
sys.stdout = open(1, "w", closefd=False)
print("replaced")
sys.stdout = sys.__stdout__
`
	res := run(t, a, id, code)
	expect(t, res, "raw-out\nreplaced\n", 0, port.OutcomeCompleted)
	if res.Stderr != "raw-err\nto-err\n" {
		t.Fatalf("stderr %q", res.Stderr)
	}
}

func TestHostileOutputCannotDesynchronise(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	code := `import os, sys, struct
os.write(1, b"R\x00\x00\x00\x00\x00" + struct.pack(">Bi", 0, 0) + b"\xff\xfe\x00__END__\n")
os.write(2, b"\x00\x00\x00\x05" + b"R" * 64)
print("\x00tail")
`
	res := run(t, a, id, code)
	if res.Outcome != port.OutcomeCompleted || !strings.HasSuffix(res.Stdout, "\x00tail\n") {
		t.Fatalf("hostile cell: %+v", res)
	}
	if !bytes.Contains([]byte(res.Stdout), []byte{0xff, 0xfe, 0}) {
		t.Fatalf("raw bytes were not kept: %q", res.Stdout)
	}
	for i := range 3 {
		expect(t, run(t, a, id, fmt.Sprintf("print(%d)", i)), fmt.Sprintf("%d\n", i), 0, port.OutcomeCompleted)
	}
	// Writing to the driver's own descriptor cannot open a second handle.
	res = run(t, a, id, "import os\ntry:\n    os.open('/.codeport/ctl', os.O_RDWR)\n    print('opened')\nexcept OSError as e:\n    print('refused')")
	expect(t, res, "refused\n", 0, port.OutcomeCompleted)
}

func TestLargeOutputIsTruncatedWhileProduced(t *testing.T) {
	// Generous timeouts: the verdict is about what was kept, and must not
	// depend on how fast a busy machine produces 50 MB.
	const slow = 10 * time.Minute
	a := newTestAdapter(t, func(c Config) Config { return c.WithTimeouts(30*time.Second, slow) })
	id := newSession(t, a)
	res := runTimeout(t, a, id, "print('x' * 50_000_000)\nprint('done')", slow)
	if !res.OutputTruncated || len(res.Stdout) > (1<<20)+200 || !strings.Contains(res.Stdout, "output truncated") {
		t.Fatalf("truncated=%v len=%d tail=%q", res.OutputTruncated, len(res.Stdout), res.Stdout[max(0, len(res.Stdout)-120):])
	}
	if !strings.HasPrefix(res.Stdout, strings.Repeat("x", 1000)) {
		t.Fatal("kept output does not start with the program's output")
	}
	expect(t, run(t, a, id, "print('after')"), "after\n", 0, port.OutcomeCompleted)
	// Many small writes are capped as well, stderr independently.
	res = runTimeout(t, a, id, "import sys\nfor i in range(300000):\n    sys.stderr.write('e' * 10)\nprint('ok')", slow)
	if res.Stdout != "ok\n" || !res.OutputTruncated || !strings.Contains(res.Stderr, "bytes dropped") {
		t.Fatalf("stderr cap: stdout %q truncated %v", res.Stdout, res.OutputTruncated)
	}
}

func TestTimeoutStopsTheProgramAndKeepsEarlierOutput(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	run(t, a, id, "x = 1\nopen('kept.txt', 'w').write('still here')")
	res := runTimeout(t, a, id, "print('before the loop')\nwhile True:\n    pass", time.Second)
	expect(t, res, "before the loop\n", port.ReturnCodeTimedOut, port.OutcomeTimedOut)
	if !res.StateLost || !strings.Contains(res.Stderr, "timed out") {
		t.Fatalf("lost=%v stderr=%q", res.StateLost, res.Stderr)
	}
	res = run(t, a, id, "print(open('kept.txt').read(), 'x' in globals())")
	expect(t, res, "still here False\n", 0, port.OutcomeCompleted)
	// A program asleep in a host call is interrupted too.
	start := time.Now()
	res = runTimeout(t, a, id, "import time\nprint('zz', flush=True)\ntime.sleep(1000)", time.Second)
	expect(t, res, "zz\n", port.ReturnCodeTimedOut, port.OutcomeTimedOut)
	if waited := time.Since(start); waited > stuckAfter {
		t.Fatalf("sleep outlived its deadline: %s", waited)
	}
}

func TestTimeoutIsClampedNotRefused(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithTimeouts(time.Second, 2*time.Second) })
	id := newSession(t, a)
	res := runTimeout(t, a, id, "while True: pass", time.Hour)
	expect(t, res, "", port.ReturnCodeTimedOut, port.OutcomeTimedOut)
	if !strings.Contains(res.Stderr, "after 2s") {
		t.Fatalf("clamped timeout not reported: %q", res.Stderr)
	}
}

func TestCancellationStopsTheProgram(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('started', flush=True)\nwhile True: pass"})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, res, "started\n", port.ReturnCodeCancelled, port.OutcomeCancelled)
	if !res.StateLost {
		t.Fatal("cancelled call should report state loss")
	}
	expect(t, run(t, a, id, "print(2)"), "2\n", 0, port.OutcomeCompleted)
}

func TestMemoryBombGivesMemoryLimitAndServerSurvives(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithMemoryLimit(64 << 20) })
	id := newSession(t, a)
	run(t, a, id, "kept = 'state'")
	for _, bomb := range []string{
		"b = bytearray(1 << 30)",
		"chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 20))",
		"s = 'x' * (200 << 20)",
	} {
		res := run(t, a, id, bomb)
		if res.Outcome != port.OutcomeMemoryLimit || res.ReturnCode != port.ReturnCodeMemoryLimit {
			t.Fatalf("%q: outcome %s rc %d stderr %q", firstLineOf(bomb), res.Outcome, res.ReturnCode, res.Stderr)
		}
		if !strings.Contains(res.Stderr, "MemoryError") && !strings.Contains(res.Stderr, "out of memory") {
			t.Fatalf("stderr %q", res.Stderr)
		}
		run(t, a, id, "chunks = None")
	}
	// The session and other sessions keep working.
	res := run(t, a, id, "print(1 + 1)")
	expect(t, res, "2\n", 0, port.OutcomeCompleted)
	expect(t, run(t, a, newSession(t, a), "print('other')"), "other\n", 0, port.OutcomeCompleted)
}

func TestContainment(t *testing.T) {
	t.Setenv("CODEPORT_TEST_CANARY", "host-secret")
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	cases := []struct{ name, code, want string }{
		{"passwd", "try:\n    open('/etc/passwd').read()\n    print('read')\nexcept OSError:\n    print('denied')", "denied\n"},
		{"dotdot", "try:\n    open('/workspace/../../../../etc/passwd').read()\n    print('read')\nexcept OSError:\n    print('denied')", "denied\n"},
		{"relative dotdot", "try:\n    open('../../../../etc/hostname').read()\n    print('read')\nexcept OSError:\n    print('denied')", "denied\n"},
		{"symlink", "import os\ntry:\n    os.symlink('/etc/passwd', 'link')\n    print('made')\nexcept OSError:\n    print('denied')", "denied\n"},
		{"environ", "import os\nprint(sorted(os.environ))", "['HOME', 'LANG', 'TMPDIR']\n"},
		{"cwd", "import os\nprint(os.getcwd())", "/workspace\n"},
		{"network", "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 80), timeout=2)\n    print('connected')\nexcept Exception:\n    print('no network')", "no network\n"},
		{"subprocess", "import subprocess\ntry:\n    subprocess.run(['ls'])\n    print('ran')\nexcept Exception:\n    print('no processes')", "no processes\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expect(t, run(t, a, id, c.code), c.want, 0, port.OutcomeCompleted)
		})
	}
}

func TestTempfileWorksAndCountsAgainstTheQuota(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWorkspaceLimit(1 << 20) })
	id := newSession(t, a)
	res := run(t, a, id, "import tempfile\nwith tempfile.NamedTemporaryFile('w', delete=False) as f:\n    f.write('hi')\nprint(f.name.startswith('/tmp/'), open(f.name).read())")
	expect(t, res, "True hi\n", 0, port.OutcomeCompleted)
	for _, code := range []string{
		"import tempfile\ntry:\n    with tempfile.TemporaryFile() as f:\n        f.write(b'x' * (2 << 20))\n    print('wrote')\nexcept OSError as e:\n    print('refused')",
		"try:\n    open('big.bin', 'wb').write(b'y' * (2 << 20))\n    print('wrote')\nexcept OSError as e:\n    print('refused')",
	} {
		res = run(t, a, id, code)
		expect(t, res, "refused\n", 0, port.OutcomeCompleted)
		if !strings.Contains(res.Stderr, "workspace limit of 1MiB") {
			t.Fatalf("quota refusal not explained: %q", res.Stderr)
		}
	}
	// A python command of the bash tool is told the same.
	bres, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution,
		Command: "python -c \"open('big2.bin', 'wb').write(b'y' * (2 << 20))\""})
	if err != nil || bres.ReturnCode == 0 || !strings.Contains(bres.Stderr, "workspace limit of 1MiB") {
		t.Fatalf("quota refusal under bash: %v %+v", err, bres)
	}
	// Deleting files gives the space back.
	res = run(t, a, id, "import os\nos.remove('big.bin')\nopen('small.bin', 'wb').write(b'z' * (512 << 10))\nprint('ok')")
	expect(t, res, "ok\n", 0, port.OutcomeCompleted)
}

func TestBusySessionRefusesASecondCall(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	// The long call lasts until the second one has been refused (it is
	// cancelled then), not for a time that a loaded machine may take to
	// get to the second call.
	long, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() {
		// The prober below may hold the session for a moment: retry
		// until the long call itself is admitted.
		for long.Err() == nil {
			_, err := a.Execute(long, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import time\ntime.sleep(1000)", Timeout: time.Hour})
			if !errors.Is(err, port.ErrSessionBusy) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	var err error
	testwait.For(t, "a second call refused as busy", func() bool {
		_, err = a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"})
		return errors.Is(err, port.ErrSessionBusy)
	})
	stop()
	wg.Wait()
}

func TestRequestValidation(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithSourceLimit(100) })
	id := newSession(t, a)
	cases := []struct {
		name string
		id   string
		req  port.ExecuteRequest
		want error
	}{
		{"unknown session", "nope", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"}, port.ErrSessionNotFound},
		{"unknown tool", id, port.ExecuteRequest{Tool: "rust_execution", Code: "1"}, port.ErrUnsupportedTool},
		{"empty code", id, port.ExecuteRequest{Tool: port.ToolCodeExecution}, port.ErrInvalidRequest},
		{"code too large", id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: strings.Repeat("#", 101)}, port.ErrInvalidRequest},
		{"invalid utf-8", id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('\xff')"}, port.ErrInvalidRequest},
		{"editor without input", id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution}, port.ErrInvalidRequest},
		{"bash without command", id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution}, port.ErrInvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := a.Execute(context.Background(), c.id, c.req); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestCapacityDestroyAndReclaim(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config {
		// No warm pool: its ready sandboxes would sit in the sessions
		// directory, which this test expects to empty (TestWarmPool covers
		// the pool's own cleanup).
		return c.WithMaxSessions(2).WithRetryAfter(3*time.Second).withReapInterval(50*time.Millisecond).WithWarmPool(0, nil)
	})
	ctx := context.Background()
	s1 := newSession(t, a)
	s2, err := a.CreateSession(ctx, port.CreateSessionRequest{IdleTimeout: 300 * time.Millisecond, MaxLifetime: 100 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if s2.IdleTimeout != 300*time.Millisecond || s2.MaxLifetime != time.Hour {
		t.Fatalf("hints not clamped down: idle %s lifetime %s", s2.IdleTimeout, s2.MaxLifetime)
	}
	// A session is not idle while a call runs in it: one running in s2
	// keeps it from being reclaimed before the check of the capacity,
	// however long a loaded machine takes to get there (300 ms did not
	// always suffice).
	sess2, err := a.d.lookup(s2.ID)
	if err != nil {
		t.Fatal(err)
	}
	hold, release := context.WithCancel(ctx)
	held := make(chan struct{})
	go func() {
		defer close(held)
		_, _ = a.Execute(hold, s2.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import time\ntime.sleep(1000)", Timeout: time.Hour})
	}()
	testwait.For(t, "the call in the idle session to start", sess2.busy.Load)
	_, err = a.CreateSession(ctx, port.CreateSessionRequest{})
	release()
	<-held
	var ce *port.CapacityError
	if !errors.As(err, &ce) || !errors.Is(err, port.ErrAtCapacity) || ce.RetryAfter != 3*time.Second {
		t.Fatalf("third session: %v", err)
	}
	// The idle session is reclaimed, which frees its slot. It is watched
	// through the driver: a call would touch it and keep it alive.
	testwait.For(t, "the idle session to be reclaimed", func() bool {
		_, err := a.d.lookup(s2.ID)
		return errors.Is(err, port.ErrSessionNotFound)
	})
	if _, err := a.Execute(ctx, s2.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"}); !errors.Is(err, port.ErrSessionNotFound) {
		t.Fatalf("a reclaimed session answers: %v", err)
	}
	// Its slot is freed once its interpreter has stopped, moments after
	// it left the map: wait for that event rather than for a time.
	var s3 string
	testwait.For(t, "a session after the reclaim", func() bool {
		s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil && !errors.Is(err, port.ErrAtCapacity) {
			t.Fatalf("a session after the reclaim: %v", err)
		}
		s3 = s.ID
		return err == nil
	})
	// Destroy is idempotent, and a destroyed session is gone.
	for range 2 {
		if err := a.DestroySession(ctx, s1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Execute(ctx, s1, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"}); !errors.Is(err, port.ErrSessionNotFound) {
		t.Fatalf("destroyed session: %v", err)
	}
	// Destroying a session stops its running call, which returns cancelled.
	done := make(chan port.Result, 1)
	go func() {
		res, _ := a.Execute(ctx, s3, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "while True: pass", Timeout: time.Hour})
		done <- res
	}()
	// Destroy once the call runs (an event, not a time: a busy machine may
	// take long to start it).
	sess3, err := a.d.lookup(s3)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the call to start", sess3.busy.Load)
	if err := a.DestroySession(ctx, s3); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.Outcome != port.OutcomeCancelled {
		t.Fatalf("call in a destroyed session: %s", res.Outcome)
	}
	// What is left is the emptied directories kept for the next sessions.
	left := dirEntries(t, a.d.sessionsDir)
	if len(left) != len(a.d.spareDirs) {
		t.Fatalf("%d session directories left behind, %d of them kept empty for the next sessions", len(left), len(a.d.spareDirs))
	}
	for _, e := range left {
		for _, sub := range sandboxSubdirs {
			if inside := dirEntries(t, filepath.Join(a.d.sessionsDir, e.Name(), sub)); len(inside) != 0 {
				t.Fatalf("a kept directory's %s holds %d entries", sub, len(inside))
			}
		}
	}
}

func dirEntries(t testing.TB, dir string) []os.DirEntry {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestFilesAreConfinedToTheWorkspace(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithFileLimit(1024) })
	ctx := context.Background()
	id := newSession(t, a)
	if _, err := a.PutFile(ctx, id, "data/in.csv", strings.NewReader("a,b\n1,2\n")); err != nil {
		t.Fatal(err)
	}
	res := run(t, a, id, "import csv\nrows = list(csv.reader(open('data/in.csv')))\nprint(rows)\n_ = open('out.txt', 'w').write('written by python')")
	expect(t, res, "[['a', 'b'], ['1', '2']]\n", 0, port.OutcomeCompleted)
	files, err := a.ListFiles(ctx, id, ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Path)
	}
	if strings.Join(names, ",") != "data,out.txt" {
		t.Fatalf("listing %v", names)
	}
	rc, info, err := a.GetFile(ctx, id, "out.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "written by python" || info.Size != int64(len(b)) {
		t.Fatalf("got %q (%d)", b, info.Size)
	}
	if _, err := a.PutFile(ctx, id, "big.bin", bytes.NewReader(make([]byte, 1025))); !errors.Is(err, port.ErrFileTooLarge) {
		t.Fatalf("oversized upload: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a.d.sessionsDir, id, "workspace", "big.bin")); !os.IsNotExist(err) {
		t.Fatalf("refused upload left a file: %v", err)
	}
	for _, p := range []string{"../x", "/etc/passwd", "/workspace/../../x", "a/../../x"} {
		if _, err := a.PutFile(ctx, id, p, strings.NewReader("x")); !errors.Is(err, port.ErrPathEscapesWorkspace) {
			t.Errorf("PutFile %q: %v", p, err)
		}
		if _, _, err := a.GetFile(ctx, id, p); !errors.Is(err, port.ErrPathEscapesWorkspace) {
			t.Errorf("GetFile %q: %v", p, err)
		}
		if _, err := a.ListFiles(ctx, id, p); !errors.Is(err, port.ErrPathEscapesWorkspace) {
			t.Errorf("ListFiles %q: %v", p, err)
		}
		res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorView, Path: p}})
		if err != nil || res.ReturnCode == 0 || !strings.Contains(res.Stderr, "outside") {
			t.Errorf("editor view %q: err %v rc %d stderr %q", p, err, res.ReturnCode, res.Stderr)
		}
	}
	if _, _, err := a.GetFile(ctx, id, "missing.txt"); !errors.Is(err, port.ErrFileNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := a.ListFiles(ctx, "nope", "."); !errors.Is(err, port.ErrSessionNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

func TestEditorCommandsThroughExecute(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	str := func(s string) *string { return &s }
	line := func(n int) *int { return &n }
	ed := func(in port.EditorInput) port.Result {
		t.Helper()
		res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
		if err != nil {
			t.Fatalf("%s: %v", in.Command, err)
		}
		return res
	}
	if res := ed(port.EditorInput{Command: port.EditorCreate, Path: "m.py", FileText: str("a = 1\nb = 2\n")}); res.ReturnCode != 0 {
		t.Fatalf("create: %+v", res)
	}
	if res := ed(port.EditorInput{Command: port.EditorCreate, Path: "m.py", FileText: str("x")}); res.ReturnCode == 0 {
		t.Fatal("create over an existing file succeeded")
	}
	if res := ed(port.EditorInput{Command: port.EditorStrReplace, Path: "m.py", OldStr: str("b = 2"), NewStr: str("b = 40")}); res.ReturnCode != 0 {
		t.Fatalf("str_replace: %+v", res)
	}
	if res := ed(port.EditorInput{Command: port.EditorInsert, Path: "m.py", InsertLine: line(2), NewStr: str("print(a + b + 1)")}); res.ReturnCode != 0 {
		t.Fatalf("insert: %+v", res)
	}
	res := ed(port.EditorInput{Command: port.EditorView, Path: "m.py", ViewRange: []int{2, -1}})
	if !strings.Contains(res.Stdout, "2\tb = 40") || !strings.Contains(res.Stdout, "3\tprint(a + b + 1)") || strings.Contains(res.Stdout, "a = 1") {
		t.Fatalf("view: %q", res.Stdout)
	}
	// The interpreter sees the editor's file.
	expect(t, run(t, a, id, "exec(open('m.py').read())"), "42\n", 0, port.OutcomeCompleted)
	if res := ed(port.EditorInput{Command: port.EditorUndoEdit, Path: "m.py"}); res.ReturnCode != 0 {
		t.Fatalf("undo: %+v", res)
	}
	expect(t, run(t, a, id, "print(open('m.py').read())"), "a = 1\nb = 40\n\n", 0, port.OutcomeCompleted)
	if _, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution,
		Editor: &port.EditorInput{Command: port.EditorCreate, Path: "n.py"}}); !errors.Is(err, port.ErrInvalidRequest) {
		t.Fatalf("create without file_text: %v", err)
	}
}

func bash(t *testing.T, a *testAdapter, id, command string, timeout time.Duration) port.Result {
	t.Helper()
	res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: command, Timeout: timeout})
	if err != nil {
		t.Fatalf("bash %q: %v", command, err)
	}
	return res
}

func TestBashRunsInTheWorkspaceBesideThePythonSession(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	run(t, a, id, "x = 21")
	cases := []struct{ command, want string }{
		{"echo hello | tr a-z A-Z || echo fallback", "HELLO\n"},
		{"printf 'b\\na\\nb\\n' | sort | uniq -c", "      1 a\n      2 b\n"},
		{"mkdir -p sub && echo data > sub/f.txt && cat sub/f.txt && pwd", "data\n/workspace\n"},
		// python is a program of its own: the session's x is not there.
		{"python -c 'print(\"x\" in globals(), __name__)'", "False __main__\n"},
		{"python3 -c 'secret = 41'; python3 -c 'print(\"secret\" in globals())'", "False\n"},
		{"cd sub && python3 -c 'import os; print(os.getcwd())'", "/workspace/sub\n"},
		{"pwd", "/workspace/sub\n"}, // the shell's directory persists
		{"cd /workspace && printf 'import sys\\nprint(sys.argv[1:])\\n' > s.py && python s.py a b", "['a', 'b']\n"},
		{"python -c 'print(1); print(2)' | python -c 'import sys; print(sum(int(l) for l in sys.stdin))'", "3\n"},
		{"export GREETING=hi && python -c 'import os; print(os.environ[\"GREETING\"])'", "hi\n"},
	}
	for _, c := range cases {
		res := bash(t, a, id, c.command, 0)
		if res.Stdout != c.want {
			t.Errorf("%s: stdout %q (rc %d, stderr %q), want %q", c.command, res.Stdout, res.ReturnCode, res.Stderr, c.want)
		}
	}
	// A command that closes the real stdout (json.tool does) leaves the
	// session's later output working.
	if res := bash(t, a, id, `printf '{"a": 1}' > j.json && python -m json.tool j.json && python -c 'print("again")'`, 0); res.Stdout != "{\n    \"a\": 1\n}\nagain\n" || res.ReturnCode != 0 {
		t.Errorf("json.tool then python: %+v", res)
	}
	expect(t, run(t, a, id, "print('after json.tool')"), "after json.tool\n", 0, port.OutcomeCompleted)
	// Python run from bash changed nothing of the session.
	expect(t, run(t, a, id, "import os\nprint(os.getcwd(), x)"), "/workspace 21\n", 0, port.OutcomeCompleted)

	res := bash(t, a, id, "frobnicate --now", 0)
	if res.ReturnCode != 127 || !strings.Contains(res.Stderr, "command not found") || res.Outcome != port.OutcomeProgramError {
		t.Fatalf("unknown command: %+v", res)
	}
	res = bash(t, a, id, "cat /etc/passwd", 0)
	if res.ReturnCode == 0 || strings.Contains(res.Stdout, "root:") {
		t.Fatalf("cat /etc/passwd: %+v", res)
	}
	res = bash(t, a, id, "python -c \"print('y' * 3_000_000)\"", 0)
	if !res.OutputTruncated || len(res.Stdout) > (1<<20)+200 {
		t.Fatalf("bash output limit: truncated %v, %d bytes", res.OutputTruncated, len(res.Stdout))
	}
	caps, _ := a.Describe(context.Background())
	if !slices.Contains(caps.Tools, port.ToolBashCodeExecution) {
		t.Fatal("capabilities do not list bash")
	}
}

func TestBashTimeouts(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	run(t, a, id, "kept = 1")
	// The first call starts the session's shell, which a loaded machine
	// may take seconds to do: pay that first, and give the loops below
	// deadlines far above what it takes to get to their first line.
	if res := bash(t, a, id, "true", 0); res.ReturnCode != 0 {
		t.Fatalf("true: %+v", res)
	}
	res := bash(t, a, id, "echo start; while true; do :; done", 5*time.Second)
	if res.Outcome != port.OutcomeTimedOut || res.ReturnCode != port.ReturnCodeTimedOut || res.Stdout != "start\n" || res.StateLost {
		t.Fatalf("shell loop: %+v", res)
	}
	expect(t, run(t, a, id, "print(kept)"), "1\n", 0, port.OutcomeCompleted)
	// The first python command of an interpreter imports what the driver
	// needs for it (json, runpy), which on a loaded machine can take much
	// of a second: pay that first, so the deadline below is the loop's.
	if res := bash(t, a, id, "python -c pass", 0); res.ReturnCode != 0 {
		t.Fatalf("python -c pass: %+v", res)
	}
	res = bash(t, a, id, "python -c \"print('py', flush=True)\nwhile True: pass\"", 10*time.Second)
	if res.Outcome != port.OutcomeTimedOut || res.StateLost || res.Stdout != "py\n" {
		t.Fatalf("python loop under bash: %+v", res)
	}
	// It ran in an interpreter of its own: the session's is untouched.
	expect(t, run(t, a, id, "print('kept' in globals())"), "True\n", 0, port.OutcomeCompleted)
}

func TestBashVariablesCannotExhaustTheGateway(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithMemoryLimit(32 << 20) })
	id := newSession(t, a)
	res := bash(t, a, id, "a=x; while true; do a=$a$a; done", time.Minute)
	if res.Outcome != port.OutcomeMemoryLimit || !res.StateLost || !strings.Contains(res.Stderr, "the shell ran out of memory") || strings.Contains(res.Stderr, "goroutine") {
		t.Fatalf("doubling loop: %s rc %d stderr %q", res.Outcome, res.ReturnCode, res.Stderr)
	}
	if res := bash(t, a, id, "echo still here", 0); res.Stdout != "still here\n" {
		t.Fatalf("after: %+v", res)
	}
}

func TestUnavailableModulesAreReallyUnavailable(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	caps, err := a.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(caps.UnavailableModules) == 0 {
		t.Fatal("no unavailable modules listed: the loop below would check nothing")
	}
	for _, m := range caps.UnavailableModules {
		res := run(t, a, id, fmt.Sprintf("try:\n    import %s\n    print('imported')\nexcept Exception as e:\n    print('missing')", m))
		if res.Stdout != "missing\n" {
			t.Errorf("capabilities list %s as unavailable, but it imports", m)
		}
	}
}

func TestPythonBehavesAsAUserExpects(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	cases := []struct{ name, code, want string }{
		{"sleep waits", "import time\nt = time.monotonic()\ntime.sleep(0.2)\nprint(time.monotonic() - t >= 0.2)", "True\n"},
		{"from-imported sleep", "from time import sleep\nsleep(0.01)\nprint('slept')", "slept\n"},
		{"negative sleep", "import time\ntry:\n    time.sleep(-1)\nexcept ValueError:\n    print('refused')", "refused\n"},
		{"randomness differs per session", "import os\nprint(len(set(os.urandom(16) for _ in range(4))))", "4\n"},
		{"__name__", "print(__name__)", "__main__\n"},
		{"import from workspace", "open('helper.py', 'w').write('VALUE = 7\\n')\nimport helper\nprint(helper.VALUE)", "7\n"},
		{"unicode", "print('héllo ✓')", "héllo ✓\n"},
		{"non-ASCII file names", "open('données.txt', 'w').write('é')\nimport os\nprint('données.txt' in os.listdir('.'), open('données.txt').read())", "True é\n"},
		{"asyncio", "import asyncio\nasync def sq(n):\n    await asyncio.sleep(0.01)\n    return n * n\nasync def main():\n    return await asyncio.gather(*(sq(i) for i in range(4)))\nprint(asyncio.run(main()))", "[0, 1, 4, 9]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expect(t, run(t, a, id, c.code), c.want, 0, port.OutcomeCompleted)
		})
	}
	// Two sessions do not share random state.
	other := newSession(t, a)
	r1 := run(t, a, id, "import random\nprint(random.random())")
	r2 := run(t, a, other, "import random\nprint(random.random())")
	if r1.Stdout == r2.Stdout {
		t.Fatalf("two sessions drew the same random number %q", r1.Stdout)
	}
}

func TestLimitationsAreReal(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	res := run(t, a, id, `import threading, subprocess, zoneinfo, datetime
try:
    threading.Thread(target=print).start(); print("thread started")
except RuntimeError:
    print("no threads")
try:
    subprocess.run(["true"]); print("process started")
except OSError:
    print("no processes")
import multiprocessing
try:
    multiprocessing.Process(target=print).start(); print("process started")
except Exception:
    print("no multiprocessing")
import os, time
try:
    os.dup(1); print("duplicated")
except OSError:
    print("no dup", hasattr(os, "dup2"))
open("m.txt", "w").close()
os.chmod("m.txt", 0o777)
with open("m.txt") as f:
    print(oct(os.stat("m.txt").st_mode), oct(os.fstat(f.fileno()).st_mode), hasattr(os, "fchmod"))
os.environ["TZ"] = "America/New_York"
time.tzset()
print(time.localtime(0).tm_zone, time.timezone, datetime.datetime.fromtimestamp(0).hour)
paris = zoneinfo.ZoneInfo("Europe/Paris")
print(datetime.datetime(2026, 7, 1, 12, tzinfo=datetime.timezone.utc).astimezone(paris).isoformat())`)
	expect(t, res, "no threads\nno processes\nno multiprocessing\nno dup False\n0o100755 0o100000 False\nEST 18000 19\n2026-07-01T14:00:00+02:00\n", 0, port.OutcomeCompleted)
	caps, _ := a.Describe(context.Background())
	if caps.RuntimeVersion != RuntimeVersion || !strings.HasPrefix(caps.RuntimeVersion, "3.13.") {
		t.Fatalf("runtime version %q", caps.RuntimeVersion)
	}
	// Every unavailable module is named in a limitation saying why.
	text := strings.Join(caps.Limitations, " ")
	for _, m := range caps.UnavailableModules {
		if !strings.Contains(text, m) {
			t.Errorf("no limitation says why %s is missing", m)
		}
	}
	// What the pinned npm runtime had, and more, is there.
	res = run(t, a, id, "import sqlite3, lzma, bz2, zlib, decimal, _decimal, json, csv, xml.etree.ElementTree, hashlib, unicodedata\n"+
		"c = sqlite3.connect(':memory:'); c.execute('create table t(x)'); c.execute('insert into t values (42)')\n"+
		"print(c.execute('select x from t').fetchone()[0], lzma.decompress(lzma.compress(b'ok')).decode(), decimal.Decimal('1.1') + decimal.Decimal('2.2'), hashlib.sha256(b'').hexdigest()[:8])")
	expect(t, res, "42 ok 3.3 e3b0c442\n", 0, port.OutcomeCompleted)
}

func TestWarmPool(t *testing.T) {
	dir := t.TempDir()
	reg := prometheus.NewRegistry()
	cfg := NewConfig().WithSessionsDir(dir).WithWarmPool(2, []string{"json", "fractions"}).WithMetrics(reg)
	a, err := open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// Wait for the pool to fill, then take from it.
	testwait.For(t, "the pool to fill", func() bool { return len(a.d.pool) >= 2 })
	var ids []string
	for range 3 { // two hits, then one restored on demand
		ids = append(ids, newSession(t, a))
	}
	for i, id := range ids {
		// Warm modules are loaded (all sessions start from the image that
		// imported them) but not in the user's namespace, and nothing of
		// another session is there.
		res := run(t, a, id, fmt.Sprintf("import sys\nprint('fractions' in sys.modules, 'fractions' in globals(), 'mine' in globals())\nmine = %d", i))
		expect(t, res, "True False False\n", 0, port.OutcomeCompleted)
		res = run(t, a, id, "1/0")
		if !strings.Contains(res.Stderr, "<cell 2>") {
			t.Fatalf("warm-up counted as a cell: %q", res.Stderr)
		}
	}
	hits := testutil.ToFloat64(a.d.metrics.PoolTakes("hit"))
	misses := testutil.ToFloat64(a.d.metrics.PoolTakes("miss"))
	if hits < 2 || hits+misses != 3 {
		t.Fatalf("pool takes: %v hits, %v misses", hits, misses)
	}
	// The pool refills after being drained.
	testwait.For(t, "the pool to refill", func() bool { return len(a.d.pool) >= 2 })
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(dirEntries(t, dir)); n != 0 {
		t.Fatalf("%d directories left after Close (sessions and pool)", n)
	}
}

// Every session starts from one interpreter image, made once per process:
// each must still get its own random state and its own objects.
func TestSessionsFromOneImageAreIndependent(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWarmPool(0, []string{"random", "json"}) })
	one, two := newSession(t, a), newSession(t, a)
	draw := "import random, sys\nprint(random.random(), random.getrandbits(64), 'random' in sys.modules)"
	r1, r2 := run(t, a, one, draw), run(t, a, two, draw)
	if r1.ReturnCode != 0 || r2.ReturnCode != 0 || r1.Stdout == r2.Stdout {
		t.Fatalf("two sessions from one image drew %q and %q", r1.Stdout, r2.Stdout)
	}
	// An object made in one is nowhere in the other, even by identity.
	expect(t, run(t, a, one, "import json\nmarker = object()\njson.codeport_marker = 1\nprint(type(marker).__name__)"), "object\n", 0, port.OutcomeCompleted)
	expect(t, run(t, a, two, "import gc, json\nprint('marker' in globals(), hasattr(json, 'codeport_marker'), any(getattr(o, '__name__', None) == 'marker' for o in gc.get_objects()))"),
		"False False False\n", 0, port.OutcomeCompleted)
	// A session that replaces its interpreter (os._exit) gets a fresh one
	// from the same image, with the warm modules, and nothing of before.
	res := run(t, a, one, "import os\nos._exit(3)")
	if !res.StateLost || res.ReturnCode != 3 {
		t.Fatalf("os._exit: %+v", res)
	}
	expect(t, run(t, a, one, "import sys\nprint('json' in sys.modules, 'marker' in globals())"), "True False\n", 0, port.OutcomeCompleted)
}

// A loop in C never returns to the bytecode loop: the interrupt checks the
// build put at every loop header stop it at the deadline all the same, and
// the session goes on with a fresh interpreter and its files.
func TestCLoopsAreStoppedAtTheDeadline(t *testing.T) {
	a := newTestAdapter(t, noPool)
	id := newSession(t, a)
	for _, code := range []string{
		"import collections, itertools\ncollections.deque(itertools.count(), maxlen=0)",
		"sum(range(10**12))",
		"x = 10**10**8",
		"import re\nre.match('(a+)+$', 'a' * 40 + 'b')",
	} {
		t.Run(firstLineOf(code), func(t *testing.T) {
			start := time.Now()
			res := runTimeout(t, a, id, code, time.Second)
			if res.Outcome != port.OutcomeTimedOut || !res.StateLost || res.ReturnCode != port.ReturnCodeTimedOut {
				t.Fatalf("%+v", res)
			}
			// Each program runs for minutes to hours, or without end, if
			// not stopped.
			if took := time.Since(start); took > stuckAfter {
				t.Fatalf("a 1 s deadline returned after %s", took)
			}
			expect(t, run(t, a, id, "print('alive')"), "alive\n", 0, port.OutcomeCompleted)
		})
	}
}

// A program spinning in compiled code must not hold off the Go runtime's
// stop-the-world: the module's safepoints exit to Go, so collections made
// while it spins complete, and a stop still ends it. (Without them a
// collection waits for the program's end.)
//
// The collections start once the program runs (its first line is out),
// not after a sleep, and its deadline is far above what load makes of
// them, so a collection that came back before the program ended came back
// while it spun (a 3 s deadline could pass before a loaded machine got to
// collect at all). The test then stops the program by cancelling the
// call, which halts it as its deadline would.
func TestSpinningProgramDoesNotStopTheWorld(t *testing.T) {
	a := newTestAdapter(t, noPool)
	id := newSession(t, a)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := testwait.StartCall(ctx, t, a, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Timeout: time.Hour,
		Code: "print('spinning', flush=True)\nwhile True:\n    pass"})
	const collections = 3
	for range collections {
		runtime.GC()
	}
	select {
	case res := <-done:
		t.Fatalf("the program ended (%s) before %d collections came back: they waited for it", res.Outcome, collections)
	default:
	}
	stop()
	if res := <-done; res.Outcome != port.OutcomeCancelled {
		t.Fatalf("outcome %s after %d collections, want the call stopped: %q", res.Outcome, collections, res.Stderr)
	}
}

// An instance whose memory could not be mapped from the shared image (the
// allocation fell back to the Go heap) is restored by reading the image,
// and is the same interpreter.
func TestImageRestoredByCopyWhenNotMapped(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWarmPool(0, []string{"json"}) })
	if a.d.eng.image.shared == nil || a.d.eng.image.memory != nil {
		t.Fatalf("the image should be shared only: shared %v, %d bytes on the heap", a.d.eng.image.shared != nil, len(a.d.eng.image.memory))
	}
	dir := t.TempDir()
	q := workspace.NewQuota(1 << 20)
	it, err := a.d.eng.instantiate(context.Background(), mounts{workspace.NewSysFS(dir, q), workspace.NewSysFS(dir, q)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.kill()
	if err := a.d.eng.image.restore(it.mod, false); err != nil {
		t.Fatal(err)
	}
	r := it.run(context.Background(), requestCell, "import sys\nprint('json' in sys.modules, json.dumps([1]) if 'json' in globals() else 'fresh')", time.Minute, 4096, 1<<30)
	if r.stdout != "True fresh\n" || r.outcome != port.OutcomeCompleted {
		t.Fatalf("%+v", r)
	}
}

// testAdapter is the adapter as tests use it: through its port, with the
// driver at hand for what only the driver knows (its pool, its image).
type testAdapter struct {
	*port.Port
	d *adapter
}

func open(cfg Config) (*testAdapter, error) {
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &testAdapter{Port: p, d: p.Driver().(*adapter)}, nil
}

// A memory bomb in a bash command ends with a typed outcome inside its
// session's memory limit, while another session's bash commands, running at
// the same time in the same process, finish undisturbed.
func TestBashMemoryBombLeavesOtherSessionsAlone(t *testing.T) {
	const limit = 64 << 20
	a := newTestAdapter(t, func(c Config) Config { return c.WithMemoryLimit(limit) })
	bombID, otherID := newSession(t, a), newSession(t, a)
	bash(t, a, bombID, "echo warm", 0)
	bash(t, a, otherID, "echo warm", 0)

	var wg sync.WaitGroup
	var other []port.Result
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := a.Execute(context.Background(), otherID, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "n=0; for i in $(seq 2000); do n=$((n+i)); done; echo $n | tr 0-9 a-j"})
			if err != nil {
				t.Errorf("the other session: %v", err)
				return
			}
			other = append(other, res)
		}
	})
	// The producers write 4 KiB lines, so that the bombs reach the limit
	// in a few thousand pipe writes rather than millions. The deadline is
	// far beyond what they take (seconds on a quiet machine): only a shell
	// that never ends could meet it, whatever the machine's load.
	for _, bomb := range []string{
		`x=a; while true; do x=$x$x; done`,
		`x=$(yes "$(printf '%4096s')" | head -c 2000000000); echo ${#x}`,
		`yes "$(printf '%4096s')" | sort > /dev/null`,
	} {
		res := bash(t, a, bombID, bomb, 5*time.Minute) // the default max-timeout
		t.Logf("%s: %s in %s", bomb, res.Outcome, res.Duration)
		switch {
		case res.Outcome == port.OutcomeMemoryLimit && res.ReturnCode == port.ReturnCodeMemoryLimit && res.StateLost &&
			strings.Contains(res.Stderr, "the session's limit is 64MiB"):
			// The guest's memory cannot grow past the limit: wazero
			// refuses the page, and the guest's runtime reports it.
		case res.Outcome == port.OutcomeProgramError && strings.Contains(res.Stderr, "over"):
			// A command's own cap (a substitution's or sort's input
			// bound) refused first, with a message.
		default:
			t.Errorf("%s: outcome %s rc %d lost %v stderr %.300q; want memory_limit or a refusal", bomb, res.Outcome, res.ReturnCode, res.StateLost, res.Stderr)
		}
		if res := bash(t, a, bombID, "echo again", 0); res.Stdout != "again\n" {
			t.Errorf("after %s: %+v", bomb, res)
		}
	}
	close(stop)
	wg.Wait()
	if len(other) == 0 {
		t.Fatal("the other session ran no command")
	}
	for i, res := range other {
		if res.Stdout != "caabaaa\n" || res.Outcome != port.OutcomeCompleted || res.StateLost {
			t.Errorf("the other session's command %d: %+v", i, res)
		}
	}
}

// TestCloseDuringStartIsNoFailure: an adapter closed while its runtime is
// still starting (serve closes the port it opened when it cannot listen)
// does not log the start it stopped as a failure of the runtime.
func TestCloseDuringStartIsNoFailure(t *testing.T) {
	var logs logtest.Buffer
	cfg := NewConfig().WithSessionsDir(t.TempDir()).WithCompilationCacheDir(testcache.Dir()).
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // waits for the start to end
		t.Fatal(err)
	}
	got := logs.String()
	if strings.Contains(got, "wasm runtime failed") || strings.Contains(got, "level=ERROR") {
		t.Errorf("closing during the start was logged as a failure:\n%s", got)
	}
	if !strings.Contains(got, "wasm runtime start stopped") && !strings.Contains(got, "wasm runtime ready") {
		t.Errorf("the start's end was not logged:\n%s", got)
	}
}

// A session is not idle while a file operation runs in it: an upload
// slower than the idle timeout keeps its session, as a call does, and
// the session's idle time starts as it ends.
func TestAnUploadKeepsItsSessionFromIdling(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return noPool(c).withReapInterval(20 * time.Millisecond) })
	ctx := context.Background()
	short := port.CreateSessionRequest{IdleTimeout: 200 * time.Millisecond}
	up, err := a.CreateSession(ctx, short)
	if err != nil {
		t.Fatal(err)
	}
	body := testwait.NewBody(strings.NewReader("uploaded"))
	t.Cleanup(body.Release) // before the adapter closes, if the test fails
	done := make(chan error, 1)
	go func() {
		_, err := a.PutFile(ctx, up.ID, "slow.txt", body)
		done <- err
	}()
	<-body.Started()
	// A session made after the upload started, and idle since: once it
	// is reclaimed, the uploading one has been idle as long, by the
	// clock, in a pass of the reaper.
	witness, err := a.CreateSession(ctx, short)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the idle witness session to be reclaimed", func() bool {
		_, err := a.d.lookup(witness.ID)
		return errors.Is(err, port.ErrSessionNotFound)
	})
	if _, err := a.d.lookup(up.ID); err != nil {
		t.Fatalf("the session of an upload under way was reclaimed: %v", err)
	}
	body.Release()
	if err := <-done; err != nil {
		t.Fatalf("PutFile: %v", err)
	}
	rc, _, err := a.GetFile(ctx, up.ID, "slow.txt")
	if err != nil {
		t.Fatalf("GetFile after the upload: %v", err)
	}
	defer rc.Close()
	if b, _ := io.ReadAll(rc); string(b) != "uploaded" {
		t.Errorf("the upload's content: %q", b)
	}
}

// A produced file the host could not copy (here its copies' directory is
// gone) is still named in the result's note, which says why: not the
// workspace limit, which would send the program looking for room it has.
func TestAnOutputTheHostCouldNotCopyIsNotBlamedOnTheLimit(t *testing.T) {
	a := newTestAdapter(t, noPool)
	id := newSession(t, a)
	s, err := a.d.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(s.sandbox.dir, "outputs")); err != nil {
		t.Fatal(err)
	}
	res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "open('out.txt', 'w').write('x')"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stderr, "the host could not copy it") || !strings.Contains(res.Stderr, `"out.txt"`) || strings.Contains(res.Stderr, "workspace limit") {
		t.Errorf("stderr %q", res.Stderr)
	}
}
