package conformance

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codeport/codeport/port"
)

// Target is the backend under test.
type Target struct {
	// Port is the adapter the checks call.
	Port port.CodeExecutionPort
	// MaxSessions is how many sessions the backend admits at once, when the
	// caller knows it; zero means unknown, and the capacity check then asks
	// Describe.
	MaxSessions int
	// Stall, when set, arms the backend to stall the next Execute call on
	// the session: once admitted (the session busy), the call closes
	// started and waits until release is called, then runs as usual.
	// release may be called more than once. The busy check needs a call
	// that lasts: it makes one with code_execution (time.sleep) where that
	// is offered, and with Stall and the editor where it is not; without
	// either it is skipped. (*porttest.Driver).Stall is one.
	Stall func(sessionID string) (started <-chan struct{}, release func())
	// CPUTime, when set, reports the CPU time the backend has used so far
	// (its process, or its processes), so that the hostile checks can
	// assert a stopped call's CPU is released. Without it they check the
	// rest.
	CPUTime func() time.Duration
}

// Check is one behaviour of contract v1, runnable on any Target.
type Check struct {
	// Name identifies the check, "group/behaviour" ("session/state-persists").
	Name string
	// Run performs the check. It calls the target only with ctx (or contexts
	// derived from it), which ends when the check's time is up.
	Run func(ctx context.Context, t *T)
}

// Status is how a check ended.
type Status string

// The statuses of a Result.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Result is the outcome of one check.
type Result struct {
	Name   string
	Status Status
	// Message is why a check failed (its errors, joined by "; ") or was
	// skipped; empty for a pass.
	Message  string
	Duration time.Duration
	// Logs are the check's Logf lines, in order.
	Logs []string
}

// CheckTimeout bounds each check: its context ends after this long. A check
// whose target ignores the context gets a further CheckGrace to return before
// it is reported as failed and left behind.
const (
	CheckTimeout = 2 * time.Minute
	CheckGrace   = 30 * time.Second
)

// T records what a check finds. Its methods follow testing.T: Errorf marks
// the check failed and goes on, Fatalf and Skipf stop it (through
// runtime.Goexit, so they must be called from the goroutine running the
// check; other goroutines use Errorf), Logf notes something for the reader.
// Errorf and Logf are safe for concurrent use.
type T struct {
	name   string
	target Target
	ctx    context.Context // the check's context, for cleanups to derive from

	mu       sync.Mutex
	failed   bool
	skipped  bool
	finished bool // the result was taken; later reports are dropped
	errs     []string
	skip     string
	logs     []string
	cleanups []func()
}

// Name is the check's name.
func (t *T) Name() string { return t.name }

// Target is the backend under test.
func (t *T) Target() Target { return t.target }

// Port is the target's port.
func (t *T) Port() port.CodeExecutionPort { return t.target.Port }

// Errorf records a failure; the check goes on.
func (t *T) Errorf(format string, args ...any) {
	t.report(fmt.Sprintf(format, args...))
}

// report records a failure and says whether it was taken.
func (t *T) report(msg string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished {
		return false
	}
	t.failed = true
	t.errs = append(t.errs, msg)
	return true
}

// Fatalf records a failure and stops the check.
func (t *T) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

// Skipf records why the check does not apply and stops it. A check that
// failed before skipping still fails.
func (t *T) Skipf(format string, args ...any) {
	t.mu.Lock()
	if !t.finished {
		t.skipped = true
		t.skip = fmt.Sprintf(format, args...)
	}
	t.mu.Unlock()
	runtime.Goexit()
}

// Logf notes something about the run without failing it.
func (t *T) Logf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.finished {
		t.logs = append(t.logs, fmt.Sprintf(format, args...))
	}
}

// Failed reports whether the check has failed so far.
func (t *T) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

// Cleanup registers f to run when the check ends, however it ends; cleanups
// run last registered first. A cleanup should not call Fatalf or Skipf.
func (t *T) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *T) runCleanups() {
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.mu.Unlock()
			return
		}
		f := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("cleanup panicked: %v", r)
				}
			}()
			f()
		}()
	}
}

// result finishes the check and reports it.
func (t *T) result(d time.Duration) Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finished = true
	r := Result{Name: t.name, Status: Pass, Duration: d, Logs: append([]string(nil), t.logs...)}
	switch {
	case t.failed:
		r.Status, r.Message = Fail, strings.Join(t.errs, "; ")
	case t.skipped:
		r.Status, r.Message = Skip, t.skip
	}
	return r
}

// checkKey keys the running check's *T in its context.
type checkKey struct{}

// Errorf records a failure against the check whose context ctx is or derives
// from, as its T.Errorf would. It lets code that sees only a context, such as
// an http.RoundTripper under the adapter, fail the check that caused the
// call. A message the check already holds is not repeated. It reports
// false, and records nothing, when ctx belongs to no check that is still
// running.
func Errorf(ctx context.Context, format string, args ...any) bool {
	t, _ := ctx.Value(checkKey{}).(*T)
	if t == nil {
		return false
	}
	msg := fmt.Sprintf(format, args...)
	t.mu.Lock()
	if !t.finished && slices.Contains(t.errs, msg) {
		t.mu.Unlock()
		return true
	}
	t.mu.Unlock()
	return t.report(msg)
}

// RunChecks runs the checks whose names filter accepts (all of them when
// filter is nil) against tgt, one after the other, and returns their results
// in the order of Checks. Checks not started because ctx ended are reported
// as skipped.
func RunChecks(ctx context.Context, tgt Target, filter func(name string) bool) []Result {
	var results []Result
	for _, c := range Checks() {
		if filter != nil && !filter(c.Name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			results = append(results, Result{Name: c.Name, Status: Skip, Message: "not run: " + err.Error()})
			continue
		}
		results = append(results, runCheck(ctx, tgt, c, CheckTimeout, CheckGrace))
	}
	return results
}

// runCheck runs c in its own goroutine, bounded by timeout, and waits for it
// (and its cleanups) to end. Only a check that outlives timeout+grace, which
// takes a target that ignores its context, is abandoned.
func runCheck(parent context.Context, tgt Target, c Check, timeout, grace time.Duration) Result {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	t := &T{name: c.Name, target: tgt}
	ctx = context.WithValue(ctx, checkKey{}, t)
	t.ctx = ctx
	if tgt.Port == nil {
		t.report("Target.Port is nil")
		return t.result(0)
	}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.runCleanups()
		defer func() {
			// recover is nil when the check ended through Goexit.
			if r := recover(); r != nil {
				t.Errorf("check panicked: %v\n%s", r, debug.Stack())
			}
		}()
		c.Run(ctx, t)
	}()
	wait := time.NewTimer(timeout + grace)
	defer wait.Stop()
	select {
	case <-done:
	case <-wait.C:
		t.report(fmt.Sprintf("check did not return within %s of its %s deadline: the target does not honour context cancellation", grace, timeout))
	}
	return t.result(time.Since(start))
}

// Run runs every check as a subtest of t against the target newTarget
// returns; newTarget is called once per check and may return the same target
// each time. A failed check fails its subtest, a skipped one skips it.
func Run(t *testing.T, newTarget func(t *testing.T) Target) {
	t.Helper()
	for _, c := range Checks() {
		t.Run(c.Name, func(t *testing.T) {
			tgt := newTarget(t)
			r := runCheck(t.Context(), tgt, c, CheckTimeout, CheckGrace)
			for _, l := range r.Logs {
				t.Log(l)
			}
			switch r.Status {
			case Fail:
				t.Error(r.Message)
			case Skip:
				t.Skip(r.Message)
			}
		})
	}
}
