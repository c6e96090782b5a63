// Package testwait gives tests the context to wait on an event with: a
// server listening, a runtime compiled, a call started.
//
//	ctx, cancel := testwait.Context(t)
//	defer cancel()
//	if err := a.WaitReady(ctx); err != nil {
//		t.Fatalf("WaitReady: %v", err)
//	}
//
//	testwait.For(t, "the pool to fill", func() bool { return len(pool) == 2 })
//
// A fixed deadline on such a wait (3 minutes, say) is a verdict on the
// machine's load, not on the code: on a shared 2-core machine under load
// the same wait takes many times longer. The context has no deadline of
// its own: it ends a little before the test binary's -timeout, so that a
// wait that never sees its event fails with the test's own message (and
// whatever log it shows) rather than with the binary's panic, which drops
// both.
package testwait

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/codeport/codeport/port"
)

// Context returns a context that ends early enough before the test
// binary's -timeout for t to report why it waited. Call cancel when the
// wait is over. It is not derived from t.Context(), which ends before t's
// cleanups run, so that a cleanup can wait with it too.
func Context(t testing.TB) (context.Context, context.CancelFunc) {
	d := Deadline(t)
	if d.IsZero() {
		return context.WithCancel(context.Background())
	}
	return context.WithDeadline(context.Background(), d)
}

// Deadline is when a Context(t) made now ends, or the zero time (none)
// when t has no deadline: for what takes a deadline rather than a context,
// such as a net.Conn.
func Deadline(t testing.TB) time.Time {
	d, ok := deadline(t)
	if !ok {
		return time.Time{}
	}
	return d.Add(-margin(time.Until(d)))
}

// margin is how long before the binary's deadline a wait gives up, with
// left the time left until it: a tenth of it, at most a minute (room to
// fail, log and run the test's cleanups).
func margin(left time.Duration) time.Duration {
	return min(left/10, time.Minute)
}

// deadline is t's deadline (the test binary's -timeout), if t has one: a
// benchmark has none.
func deadline(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

// Every is how often For polls.
const Every = 20 * time.Millisecond

// For polls cond every Every until it holds. If Context(t) ends first it
// fails t, saying what it waited for.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := Context(t)
	defer cancel()
	if err := Poll(ctx, Every, cond); err != nil {
		t.Fatalf("gave up waiting for %s: %v", what, err)
	}
}

// Poll calls cond every interval until it holds (and returns nil) or ctx
// ends (and returns ctx's error).
func Poll(ctx context.Context, interval time.Duration, cond func() bool) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// Receive returns the value sent on ch, failing t with what (the thing
// awaited, "the call after Close") if the test's wait ends first.
func Receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	ctx, cancel := Context(t)
	defer cancel()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("%s did not come", what)
		var zero T
		return zero
	}
}

// StartCall runs req in session id of p in the background and returns
// once the call's first output has come: the call is then running in the
// backend, which no sleep can promise on a loaded machine. req's program
// must print before anything else; its OnOutput is replaced. The result
// comes on the channel, with an error of Execute's in its Stderr. ctx
// ends the call; t fails if the call ends before it prints.
func StartCall(ctx context.Context, t testing.TB, p port.CodeExecutionPort, id string, req port.ExecuteRequest) <-chan port.Result {
	t.Helper()
	done := make(chan port.Result, 1)
	printed := make(chan struct{})
	var once sync.Once
	req.OnOutput = func(port.Stream, []byte) { once.Do(func() { close(printed) }) }
	go func() {
		res, err := p.Execute(ctx, id, req)
		if err != nil {
			res.Stderr = "Execute error: " + err.Error()
		}
		done <- res
	}()
	select {
	case <-printed:
	case res := <-done:
		t.Fatalf("the call ended before it printed: %+v", res)
	}
	return done
}
