package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
)

// nopPort satisfies the port for checks that never call it.
type nopPort struct{ port.CodeExecutionPort }

func runOne(body func(ctx context.Context, t *T), timeout, grace time.Duration) Result {
	return runCheck(context.Background(), Target{Port: nopPort{}}, Check{Name: "x", Run: body}, timeout, grace)
}

func TestRunnerRecordsHowAChecksEnds(t *testing.T) {
	var order []string
	cases := []struct {
		name   string
		body   func(ctx context.Context, t *T)
		status Status
		msg    string
	}{
		{"pass", func(_ context.Context, t *T) { t.Logf("note") }, Pass, ""},
		{"errors go on", func(_ context.Context, t *T) {
			t.Errorf("one")
			t.Errorf("two")
		}, Fail, "one; two"},
		{"fatal stops", func(_ context.Context, t *T) {
			t.Fatalf("stop")
			t.Errorf("not reached")
		}, Fail, "stop"},
		{"skip stops", func(_ context.Context, t *T) {
			t.Skipf("not here")
			t.Errorf("not reached")
		}, Skip, "not here"},
		{"failure outranks skip", func(_ context.Context, t *T) {
			t.Errorf("bad")
			t.Skipf("skip")
		}, Fail, "bad"},
		{"panic is a failure", func(_ context.Context, t *T) { panic("boom") }, Fail, "check panicked: boom"},
		{"cleanups run last first, after a fatal", func(_ context.Context, t *T) {
			order = nil
			t.Cleanup(func() { order = append(order, "first") })
			t.Cleanup(func() { order = append(order, "second") })
			t.Fatalf("fatal")
		}, Fail, "fatal"},
		{"context errorf", func(ctx context.Context, t *T) {
			if !Errorf(ctx, "via %s", "context") {
				t.Errorf("Errorf found no check")
			}
		}, Fail, "via context"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runOne(c.body, time.Minute, time.Second)
			if r.Status != c.status || !strings.HasPrefix(r.Message, c.msg) {
				t.Fatalf("got %s %q, want %s %q", r.Status, r.Message, c.status, c.msg)
			}
		})
	}
	if !slices.Equal(order, []string{"second", "first"}) {
		t.Fatalf("cleanup order %q", order)
	}
	if Errorf(context.Background(), "nobody") {
		t.Fatal("Errorf outside a check reported success")
	}
}

func TestRunnerBoundsACheckThatIgnoresItsContext(t *testing.T) {
	release := make(chan struct{})
	cleaned := make(chan struct{})
	r := runOne(func(ctx context.Context, t *T) {
		t.Cleanup(func() { close(cleaned) })
		<-ctx.Done()
		<-release // a target that does not honour cancellation
		t.Errorf("late report")
	}, 50*time.Millisecond, 50*time.Millisecond)
	if r.Status != Fail || !strings.Contains(r.Message, "did not return") || strings.Contains(r.Message, "late") {
		t.Fatalf("got %s %q", r.Status, r.Message)
	}
	// The abandoned goroutine still ends, cleanups included, once its
	// target returns.
	close(release)
	wait, cancel := testwait.Context(t)
	defer cancel()
	select {
	case <-cleaned:
	case <-wait.Done():
		t.Fatal("the abandoned check never ran its cleanups")
	}
}

func TestRunChecksFiltersAndStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs := RunChecks(ctx, Target{Port: nopPort{}}, func(name string) bool { return strings.HasPrefix(name, "session/") })
	if len(rs) == 0 {
		t.Fatal("no results")
	}
	for _, r := range rs {
		if !strings.HasPrefix(r.Name, "session/") || r.Status != Skip || !strings.Contains(r.Message, "not run") {
			t.Errorf("%+v", r)
		}
	}
	seen := map[string]bool{}
	for _, c := range Checks() {
		if seen[c.Name] || c.Run == nil {
			t.Errorf("check %q duplicated or empty", c.Name)
		}
		seen[c.Name] = true
	}
}

// defective wraps a port and breaks one promise of the contract.
type defective struct {
	port.CodeExecutionPort
	losePartialOutput bool
	listBash          bool
	refuseBash        bool
	overlapBusy       bool
	ignoreDestroy     bool
}

func (d defective) DestroySession(ctx context.Context, id string) error {
	if d.ignoreDestroy {
		return nil
	}
	return d.CodeExecutionPort.DestroySession(ctx, id)
}

func (d defective) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	if d.refuseBash && req.Tool == port.ToolBashCodeExecution {
		return port.Result{}, fmt.Errorf("%w: no bash", port.ErrUnsupportedTool)
	}
	res, err := d.CodeExecutionPort.Execute(ctx, id, req)
	if d.overlapBusy && errors.Is(err, port.ErrSessionBusy) {
		// Pretend the call ran beside the one in progress, now.
		now := float64(time.Now().UnixNano()) / 1e9
		return port.Result{Stdout: fmt.Sprintf("%f\n", now), Outcome: port.OutcomeCompleted}, nil
	}
	if d.losePartialOutput && res.Outcome == port.OutcomeTimedOut {
		res.Stdout = ""
	}
	return res, err
}

func (d defective) Describe(ctx context.Context) (port.Capabilities, error) {
	caps, err := d.CodeExecutionPort.Describe(ctx)
	if d.listBash && !slices.Contains(caps.Tools, port.ToolBashCodeExecution) {
		caps.Tools = append(caps.Tools, port.ToolBashCodeExecution)
	}
	return caps, err
}

// TestDefectsAreCaught checks that the suite fails backends with known
// defects, with a message that names the defect.
func TestDefectsAreCaught(t *testing.T) {
	a := newWasm(t)
	cases := []struct {
		name  string
		port  defective
		check string
		want  string
	}{
		{"lost partial output", defective{losePartialOutput: true}, "timeout/partial-output", "output printed before the timeout was lost"},
		{"listed tool refused", defective{listBash: true, refuseBash: true}, "tool/bash_code_execution", "lists bash_code_execution among its tools but refused it"},
		{"busy calls overlapped", defective{overlapBusy: true}, "errors/busy", "calls on one session overlapped"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.port.CodeExecutionPort = a
			rs := RunChecks(t.Context(), Target{Port: c.port}, func(n string) bool { return n == c.check })
			if len(rs) != 1 || rs[0].Status != Fail || !strings.Contains(rs[0].Message, c.want) {
				t.Fatalf("got %+v, want a failure mentioning %q", rs, c.want)
			}
		})
	}
}

// leaky gives every session it did not make first the workspace of the
// first: sessions that are not fresh.
type leaky struct {
	port.CodeExecutionPort
	mu    sync.Mutex
	first string
}

func (l *leaky) CreateSession(ctx context.Context, req port.CreateSessionRequest) (port.Session, error) {
	s, err := l.CodeExecutionPort.CreateSession(ctx, req)
	l.mu.Lock()
	if l.first == "" {
		l.first = s.ID
	}
	l.mu.Unlock()
	return s, err
}

func (l *leaky) route(id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first != "" {
		return l.first
	}
	return id
}

func (l *leaky) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	return l.CodeExecutionPort.Execute(ctx, l.route(id), req)
}

func (l *leaky) ListFiles(ctx context.Context, id, dir string) ([]port.FileInfo, error) {
	return l.CodeExecutionPort.ListFiles(ctx, l.route(id), dir)
}

func (l *leaky) GetFile(ctx context.Context, id, path string) (io.ReadCloser, port.FileInfo, error) {
	return l.CodeExecutionPort.GetFile(ctx, l.route(id), path)
}

func (l *leaky) GetOutputFile(ctx context.Context, id, fileID string) (io.ReadCloser, port.FileInfo, error) {
	return l.CodeExecutionPort.GetOutputFile(ctx, l.route(id), fileID)
}

func (l *leaky) PutFile(ctx context.Context, id, path string, r io.Reader) (port.FileInfo, error) {
	return l.CodeExecutionPort.PutFile(ctx, l.route(id), path, r)
}

// TestDefectsAreCaughtWithoutPython checks that the paths the suite takes
// where code_execution is not offered (the editor, the file operations and
// Target.Stall, on porttest's fake) fail backends with known defects too.
func TestDefectsAreCaughtWithoutPython(t *testing.T) {
	type wrapper func(port.CodeExecutionPort) port.CodeExecutionPort
	var (
		overlapping wrapper = func(p port.CodeExecutionPort) port.CodeExecutionPort {
			return defective{CodeExecutionPort: p, overlapBusy: true}
		}
		undying wrapper = func(p port.CodeExecutionPort) port.CodeExecutionPort {
			return defective{CodeExecutionPort: p, ignoreDestroy: true}
		}
		sharing wrapper = func(p port.CodeExecutionPort) port.CodeExecutionPort { return &leaky{CodeExecutionPort: p} }
	)
	cases := []struct {
		name  string
		wrap  wrapper
		check string
		want  string
	}{
		{"busy calls overlapped", overlapping, "errors/busy", "calls on one session overlapped"},
		{"destroy ignored", undying, "session/destroy", "Execute in a destroyed session: want ErrSessionNotFound"},
		{"shared workspace", sharing, "session/fresh", "a file of another session"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := porttest.NewDriver(porttest.WithMaxSessions(4))
			p := port.New(d)
			t.Cleanup(func() { _ = p.Close() })
			tgt := Target{Port: c.wrap(p), Stall: d.Stall}
			rs := RunChecks(t.Context(), tgt, func(n string) bool { return n == c.check })
			if len(rs) != 1 || rs[0].Status != Fail || !strings.Contains(rs[0].Message, c.want) {
				t.Fatalf("got %+v, want a failure mentioning %q", rs, c.want)
			}
		})
	}
	// The same checks pass on the fake as it is.
	d := porttest.NewDriver(porttest.WithMaxSessions(4))
	p := port.New(d)
	t.Cleanup(func() { _ = p.Close() })
	for _, r := range RunChecks(t.Context(), Target{Port: p, Stall: d.Stall}, func(n string) bool {
		return n == "errors/busy" || n == "session/destroy" || n == "session/fresh"
	}) {
		if r.Status != Pass {
			t.Errorf("%s on the fake: %s %s", r.Name, r.Status, r.Message)
		}
	}
	// Without Target.Stall the busy check cannot make a call last.
	rs := RunChecks(t.Context(), Target{Port: p}, func(n string) bool { return n == "errors/busy" })
	if len(rs) != 1 || rs[0].Status != Skip || !strings.Contains(rs[0].Message, "Target.Stall") {
		t.Errorf("busy without Target.Stall: got %+v, want a skip naming Target.Stall", rs)
	}
}
