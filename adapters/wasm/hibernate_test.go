package wasm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/measure"
	"github.com/codeport/codeport/internal/testwait"
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
