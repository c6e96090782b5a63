package wasm

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// sessionState sets state a pickle would lose, and a file; stateProbe
// reads it back.
const (
	sessionState = "def gen():\n    for i in range(100):\n        yield i\n" +
		"g = gen()\nnext(g)\nnext(g)\n" +
		"class Box:\n    def __init__(self, v):\n        self.v = v\n" +
		"box = Box([1, 2, 3])\nadd = (lambda n: lambda x: x + n)(10)\n" +
		"open('kept.txt', 'w').write('file kept')\nprint('set')"
	stateProbe    = "print(next(g), box.v, add(5), open('kept.txt').read())"
	stateProbeOut = "2 [1, 2, 3] 15 file kept\n"
)

// waitAsleep waits until the session is hibernated.
func waitAsleep(t *testing.T, a *testAdapter, id string) *session {
	t.Helper()
	var s *session
	testwait.For(t, "session "+id+" to hibernate", func() bool {
		a.d.mu.Lock()
		s = a.d.sessions[id]
		a.d.mu.Unlock()
		return s != nil && s.asleep.Load()
	})
	return s
}

// An idle session is hibernated (its sandbox released, its state in a
// file) and woken by its next call, whatever the call: a file listing
// wakes it as well as code. Its state and files are back, state_lost is
// false, and a hibernated session holds no slot.
func TestHibernation(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config {
		return c.WithHibernation(300*time.Millisecond, "").WithMaxSessions(1).withReapInterval(50 * time.Millisecond)
	})
	ctx := context.Background()
	id := newSession(t, a)
	expect(t, run(t, a, id, sessionState), "set\n", 0, port.OutcomeCompleted)
	s := waitAsleep(t, a, id)
	s.mu.Lock()
	if s.sandbox != nil || s.hibFile == "" {
		t.Errorf("hibernated session keeps its sandbox (%v) or has no file (%q)", s.sandbox != nil, s.hibFile)
	}
	file := s.hibFile
	s.mu.Unlock()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hibernation file: %d bytes", fi.Size())
	// It held no slot: with max-sessions 1, another session starts.
	other, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatalf("a second session while the first is hibernated: %v", err)
	}
	if err := a.DestroySession(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	// A file call wakes it.
	files, err := a.ListFiles(ctx, id, "")
	if err != nil || len(files) != 1 || files[0].Path != "kept.txt" {
		t.Fatalf("listing a hibernated session: %v %+v", err, files)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("hibernation file still there after waking: %v", err)
	}
	res := run(t, a, id, stateProbe)
	expect(t, res, stateProbeOut, 0, port.OutcomeCompleted)
	if res.StateLost {
		t.Error("state_lost after waking")
	}
	// Asleep again, woken by code this time, then destroyed asleep.
	waitAsleep(t, a, id)
	expect(t, run(t, a, id, "print(next(g))"), "3\n", 0, port.OutcomeCompleted)
	s = waitAsleep(t, a, id)
	s.mu.Lock()
	file = s.hibFile
	s.mu.Unlock()
	if err := a.DestroySession(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("hibernation file of a destroyed session still there: %v", err)
	}
	if _, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"}); err == nil {
		t.Error("a destroyed hibernated session still runs code")
	}
}

// With a hibernation directory of its own, closing the adapter saves every
// live session, and the next adapter on that directory answers the same
// ids with the same state: a restart of 50 live sessions loses no
// variable, import, generator position, closure or class instance. The
// directory is used by one adapter at a time, and a file that is not a
// session is set aside, not trusted.
func TestRestartKeepsSessions(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	first, err := open(NewConfig().WithSessionsDir(t.TempDir()).WithHibernation(0, dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := open(NewConfig().WithSessionsDir(t.TempDir()).WithHibernation(0, dir)); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a second adapter on the same hibernation directory: %v, want refused", err)
	}
	const live = 50
	var ids []string
	for i := range live {
		s, err := first.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
		expect(t, run(t, first, s.ID, sessionState+fmt.Sprintf("\nimport fractions\nn = fractions.Fraction(%d, 7)", i)), "set\n", 0, port.OutcomeCompleted)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "not-a-session"+hibernatedSuffix), []byte("junk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	second := newTestAdapter(t, func(c Config) Config { return c.WithHibernation(0, dir) })
	for i, id := range ids {
		res := run(t, second, id, stateProbe+"\nprint(n, fractions.Fraction(1, 7) + n)")
		expect(t, res, stateProbeOut+fmt.Sprintf("%v %v\n", frac(i, 7), frac(i+1, 7)), 0, port.OutcomeCompleted)
		if res.StateLost {
			t.Errorf("session %d: state_lost after a restart", i)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "not-a-session"+hibernatedSuffix+".unreadable")); err != nil {
		t.Errorf("the junk file was not set aside: %v", err)
	}
}

// BenchmarkHibernated: 1,000 sessions (CODEPORT_BENCH_HIBERNATED to
// change it) that each ran x = 1, hibernated as they are made (never more
// than 32 awake, under the default limit of 64 sessions): the resident
// memory they add to the process once all are asleep, their disk bytes,
// and the time from a call on a hibernated session to its result.
func BenchmarkHibernated(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("CODEPORT_BENCH_HIBERNATED")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	a := newTestAdapter(b, func(c Config) Config { return noPool(c).WithHibernation(time.Hour, "") })
	for b.Loop() {
		runtime.GC()
		debug.FreeOSMemory()
		before := measure.RSS()
		ids := make([]string, 0, n)
		var asleep []*session
		for i := range n {
			id := newSession(b, a)
			if res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: fmt.Sprintf("x = %d", i)}); err != nil || res.ReturnCode != 0 {
				b.Fatal(err, res.Stderr)
			}
			ids = append(ids, id)
			s, err := a.d.lookup(id)
			if err != nil {
				b.Fatal(err)
			}
			asleep = append(asleep, s)
			if len(asleep) == 32 || i == n-1 {
				for _, s := range asleep {
					if !a.d.hibernate(ctx, s, false) {
						b.Fatalf("session %s not hibernated", s.id)
					}
				}
				asleep = asleep[:0]
			}
		}
		runtime.GC()
		debug.FreeOSMemory()
		b.ReportMetric(float64(measure.RSS()-before)/float64(n)/1024, "KiB-RSS/hibernated-session")
		var disk int64
		entries, _ := os.ReadDir(a.d.hibDir)
		for _, e := range entries {
			if fi, err := e.Info(); err == nil {
				disk += fi.Size()
			}
		}
		b.ReportMetric(float64(disk)/float64(n)/1024, "KiB-disk/hibernated-session")
		var wakes []time.Duration
		for i, id := range ids[:min(len(ids), 20)] {
			t0 := time.Now()
			res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"})
			if err != nil || res.Stdout != fmt.Sprintf("%d\n", i) {
				b.Fatalf("woken session %d: %v %+v", i, err, res)
			}
			wakes = append(wakes, time.Since(t0))
		}
		measure.Report(b, "wake-first-result", wakes)
		for _, id := range ids {
			_ = a.DestroySession(ctx, id)
		}
	}
}

// Sessions a previous process left hibernated are kept when this one is
// closed before its runtime is ready (or before they are called): closing
// never deletes what it did not restore.
func TestCloseKeepsSessionsItNeverWoke(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	first, err := open(NewConfig().WithSessionsDir(t.TempDir()).WithHibernation(0, dir))
	if err != nil {
		t.Fatal(err)
	}
	s, err := first.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, run(t, first, s.ID, "x = 'kept'\nprint(x)"), "kept\n", 0, port.OutcomeCompleted)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// Opened and closed at once, without a call: the session is untouched.
	second, err := open(NewConfig().WithSessionsDir(t.TempDir()).WithHibernation(0, dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	third := newTestAdapter(t, func(c Config) Config { return c.WithHibernation(0, dir) })
	expect(t, run(t, third, s.ID, "print(x)"), "kept\n", 0, port.OutcomeCompleted)
}

// frac prints a/b as Python's Fraction does (reduced; an integer alone).
func frac(a, b int) string {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	a, b = a/x, b/x
	if b == 1 {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d/%d", a, b)
}

// openLogged opens an adapter on the hibernation directory dir, logging
// to logs, and waits for its runtime.
func openLogged(t *testing.T, dir string, logs *logtest.Buffer) *testAdapter {
	t.Helper()
	a, err := open(NewConfig().WithSessionsDir(t.TempDir()).WithCompilationCacheDir(testcache.Dir()).
		WithHibernation(0, dir).WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := testwait.Context(t)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}

// The shutdown of issue 27: 16 sessions, 12 of which spin in the host's
// snapshot step (6 in their stdout's flush, which the driver no longer
// calls there, and 6 in a trace function as well, which runs there
// whatever the driver does). Each spinning session used to burn 30 s of
// a 60 s budget saving two at a time, then be saved without its memory
// as a success, and the budget's end wiped the normal ones too: after
// the restart they answered NameError with state_lost false while the
// log said kept=16 lost=0. Now every normal session keeps its variables,
// each spinning one keeps them or answers state_lost, and the log's
// counts are what came back.
func TestShutdownKeepsEverySessionOrSaysItLost(t *testing.T) {
	dir := t.TempDir()
	var logs logtest.Buffer
	first := openLogged(t, dir, &logs)
	const normal, spinning = 4, 12
	var ids []string
	for i := range normal + spinning {
		code := fmt.Sprintf("x = %d\n", i)
		switch {
		case i >= normal+spinning/2:
			code += spinInFlush + spinInTrace
		case i >= normal:
			code += spinInFlush
		}
		s, err := first.CreateSession(context.Background(), port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
		expect(t, run(t, first, s.ID, code+"print('armed')"), "armed\n", 0, port.OutcomeCompleted)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`sessions kept hibernated for the next start.* kept=(\d+) kept_without_memory=(\d+) lost=(\d+)`).FindStringSubmatch(logs.String())
	second := newTestAdapter(t, func(c Config) Config { return c.WithHibernation(0, dir) })
	var kept, keptLost, lost int
	for i, id := range ids {
		res, err := second.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"})
		switch {
		case err != nil:
			lost++
			t.Errorf("session %d after the restart: %v", i, err)
		case res.Stdout == fmt.Sprintf("%d\n", i) && !res.StateLost:
			kept++
		case res.StateLost && i >= normal:
			keptLost++
		default:
			t.Errorf("session %d (normal: %v) after the restart: stdout %q state_lost %v stderr %.200q", i, i < normal, res.Stdout, res.StateLost, res.Stderr)
		}
	}
	t.Logf("kept %d, kept without memory %d, lost %d", kept, keptLost, lost)
	if m == nil {
		t.Fatalf("no counts in the log:\n%s", logs.String())
	}
	if got := fmt.Sprintf("kept=%d kept_without_memory=%d lost=%d", kept, keptLost, lost); got != fmt.Sprintf("kept=%s kept_without_memory=%s lost=%s", m[1], m[2], m[3]) {
		t.Errorf("the log says %q; what came back: %s", m[0], got)
	}
}

// A call that met the reaper hibernating its session was refused with
// session_busy; it now waits for the hibernation and wakes the session.
// The hibernation here is a slow one: the session's trace function spins
// in its snapshot step until the step's deadline, so its interpreter is
// lost, and the call that wakes it says so (state_lost), once.
func TestCallDuringHibernationWaitsForIt(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config {
		return noPool(c).WithHibernation(200*time.Millisecond, "").withReapInterval(50 * time.Millisecond)
	})
	ctx := context.Background()
	id := newSession(t, a)
	s, err := a.d.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	marker := filepath.Join(s.ws.Root(), "spinning.txt")
	s.mu.Unlock()
	expect(t, run(t, a, id, "x = 1\n"+spinInTrace+"print('armed')"), "armed\n", 0, port.OutcomeCompleted)
	testwait.For(t, "the hibernation's snapshot step to spin", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('x' in globals())"})
	if err != nil {
		t.Fatalf("a call during a hibernation: %v, want it to wait for it", err)
	}
	if res.Stdout != "False\n" || !res.StateLost {
		t.Errorf("the call that woke the session: %+v, want state_lost", res)
	}
	if res := run(t, a, id, "print('again')"); res.StateLost {
		t.Errorf("the loss reported twice: %+v", res)
	}
}

// A hibernated session whose wake meets a host error (here the sessions
// directory is not a directory; ENOSPC or EIO are the same) was taken for
// a corrupt file: renamed *.unreadable, and the session answered 404 for
// ever. Now the call is refused as at capacity, with a retry hint, the
// file and the session are left as they were, and the next call, once
// the host has recovered, wakes the session whole.
func TestWakeAfterAHostErrorKeepsTheSession(t *testing.T) {
	a, hib := hibernatingAdapter(t)
	ctx := context.Background()
	id := newSession(t, a)
	expect(t, run(t, a, id, "x = 7\nprint(x)"), "7\n", 0, port.OutcomeCompleted)
	hibernateNow(t, a, id)
	dir := a.d.sessionsDir
	if err := os.Rename(dir, dir+".aside"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"})
	var ce *port.CapacityError
	if !errors.As(err, &ce) || ce.RetryAfter <= 0 {
		t.Errorf("waking during a host error: %v, want a capacity refusal with a retry hint", err)
	}
	file := filepath.Join(hib, id+hibernatedSuffix)
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the hibernation file after the failed wake: %v", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".aside", dir); err != nil {
		t.Fatal(err)
	}
	res := run(t, a, id, "print(x)")
	expect(t, res, "7\n", 0, port.OutcomeCompleted)
	if res.StateLost {
		t.Error("state_lost after the host recovered")
	}
}

// Files in the hibernation directory were opened following links: a link
// at <id>.hibernated.tmp had the session's memory written over its
// target, mode 0644. Now the link is replaced, not followed, and the file
// is written 0600. A directory others can write is refused; one they can
// read is accepted with a warning.
func TestHibernateDirFollowsNoLinksAndChecksItsMode(t *testing.T) {
	a, hib := hibernatingAdapter(t)
	id := newSession(t, a)
	expect(t, run(t, a, id, "x = 'kept'\nprint(x)"), "kept\n", 0, port.OutcomeCompleted)
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(hib, id+hibernatedSuffix+".tmp")); err != nil {
		t.Fatal(err)
	}
	hibernateNow(t, a, id)
	if b, err := os.ReadFile(target); err != nil || string(b) != "precious" {
		t.Errorf("the link's target: %.40q (%d bytes) %v, want it untouched", b, len(b), err)
	}
	fi, err := os.Lstat(filepath.Join(hib, id+hibernatedSuffix))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("the hibernation file: %v %v, want a regular file, mode 0600", fi.Mode(), err)
	}
	expect(t, run(t, a, id, "print(x)"), "kept\n", 0, port.OutcomeCompleted)

	wide := t.TempDir()
	if err := os.Chmod(wide, 0o777); err != nil {
		t.Fatal(err)
	}
	if b, err := open(NewConfig().WithSessionsDir(t.TempDir()).WithHibernation(0, wide)); err == nil {
		t.Error("a hibernate-dir anyone can write was accepted")
		b.Close()
	} else {
		t.Logf("refused: %v", err)
	}
	readable := t.TempDir()
	if err := os.Chmod(readable, 0o755); err != nil {
		t.Fatal(err)
	}
	var logs logtest.Buffer
	b, err := open(NewConfig().WithSessionsDir(t.TempDir()).WithHibernation(0, readable).WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatalf("a hibernate-dir others can read: %v, want accepted with a warning", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "hibernate-dir") {
		t.Errorf("no warning for a hibernate-dir others can read:\n%s", logs.String())
	}
}

// A restart with a smaller memory limit dropped the sessions whose
// interpreter had grown past it (404, their files set aside): now such a
// session comes back with its workspace and says state_lost. Temporaries
// a killed process left are swept at start, and so are files set aside
// longer ago than unreadableKeep; newer ones are kept for an operator.
func TestRestartWithASmallerMemoryLimitKeepsTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	var logs logtest.Buffer
	first := openLogged(t, dir, &logs)
	id := newSession(t, first)
	expect(t, run(t, first, id, "x = 1\nopen('kept.txt', 'w').write('files kept')\nb = bytearray(160 << 20)\ndel b\nprint('grown')"), "grown\n", 0, port.OutcomeCompleted)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, "0a1b2c"+hibernatedSuffix+".tmp")
	old := filepath.Join(dir, "old"+hibernatedSuffix+".unreadable")
	recent := filepath.Join(dir, "recent"+hibernatedSuffix+".unreadable")
	for _, f := range []string{leftover, old, recent} {
		if err := os.WriteFile(f, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	second := newTestAdapter(t, func(c Config) Config { return c.WithHibernation(0, dir).WithMemoryLimit(128 << 20) })
	res := run(t, second, id, "print(open('kept.txt').read(), 'x' in globals())")
	if res.Stdout != "files kept False\n" || !res.StateLost {
		t.Errorf("the session after a restart with a smaller memory limit: %+v, want its files and state_lost", res)
	}
	for _, f := range []string{leftover, old} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s not swept: %v", filepath.Base(f), err)
		}
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a recent unreadable file was not kept: %v", err)
	}
}

// A hibernation file cut short inside one of its files' contents (a disk
// that filled, an operator's copy, tampering) was taken for a host error:
// every call on the session was refused as at capacity, for ever, and the
// file was never set aside. What a file holds is the file's fault: it is
// set aside and the session answered as not found, as for any other file
// that fails its checks.
func TestWakeFromAFileCutInsideItsContents(t *testing.T) {
	a, hib := hibernatingAdapter(t)
	ctx := context.Background()
	id := newSession(t, a)
	// Incompressible, and several of the files section's compressed
	// blocks long, so that the cut falls inside its contents, after its
	// header.
	body := make([]byte, 3<<20)
	if _, err := rand.Read(body); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PutFile(ctx, id, "big.bin", bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	hibernateNow(t, a, id)
	file := filepath.Join(hib, id+hibernatedSuffix)
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, fi.Size()-(1<<20)); err != nil {
		t.Fatal(err)
	}
	_, err = a.ListFiles(ctx, id, "")
	if !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("waking from a cut file: %v, want ErrSessionNotFound", err)
	}
	if _, err := os.Stat(file + unreadableSuffix); err != nil {
		t.Errorf("the cut file was not set aside: %v", err)
	}
}

// A hibernation file replaced, after the start read its header, by one
// whose first line never ends was read whole into memory by the wake (the
// header line was read without a bound): a file on disk cost the process
// its size in memory. The line is bounded as at start; the file is set
// aside.
func TestWakeBoundsTheHeaderLine(t *testing.T) {
	a, hib := hibernatingAdapter(t)
	ctx := context.Background()
	id := newSession(t, a)
	hibernateNow(t, a, id)
	const lineBytes = 64 << 20
	file := filepath.Join(hib, id+hibernatedSuffix)
	if err := os.WriteFile(file, bytes.Repeat([]byte("x"), lineBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := a.ListFiles(ctx, id, "")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("waking from a file without a header line: %v, want ErrSessionNotFound", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got >= lineBytes/4 {
		t.Errorf("the wake allocated %d bytes reading a %d-byte line; want it bounded", got, lineBytes)
	}
	if _, err := os.Stat(file + unreadableSuffix); err != nil {
		t.Errorf("the file was not set aside: %v", err)
	}
}

// A hibernation file whose header dates the session's creation in the
// future (a clock set back between two runs, or an edited file) gave the
// session a lifetime that never ran out: its age was negative. The
// creation is taken as no later than the start, as the last activity is.
func TestRestartBoundsACreationInTheFuture(t *testing.T) {
	dir := t.TempDir()
	var logs logtest.Buffer
	first := openLogged(t, dir, &logs)
	id := newSession(t, first)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, id+hibernatedSuffix)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := bytes.Cut(b, []byte("\n"))
	re := regexp.MustCompile(`"created":"[^"]*"`)
	if !re.Match(header) {
		t.Fatalf("no creation in the header %.200q", header)
	}
	header = re.ReplaceAll(header, []byte(`"created":"3000-01-01T00:00:00Z"`))
	if err := os.WriteFile(file, append(append(header, '\n'), rest...), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	second := newTestAdapter(t, func(c Config) Config { return c.WithHibernation(0, dir) })
	s, err := second.d.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	if s.created.After(time.Now()) || s.created.Before(start) {
		t.Errorf("the session's creation after the restart: %v; want between %v and now", s.created, start)
	}
}

// hibernatingAdapter is an adapter that hibernates a session into hib
// (a directory of the test's) when the test says (hibernateNow), not on
// a timer.
func hibernatingAdapter(t *testing.T) (a *testAdapter, hib string) {
	t.Helper()
	hib = t.TempDir()
	return newTestAdapter(t, func(c Config) Config { return noPool(c).WithHibernation(time.Hour, hib) }), hib
}

// hibernateNow hibernates session id of a.
func hibernateNow(t *testing.T, a *testAdapter, id string) {
	t.Helper()
	s, err := a.d.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	if !a.d.hibernate(context.Background(), s, false) {
		t.Fatal("not hibernated")
	}
}
