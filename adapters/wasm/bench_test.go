package wasm

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/measure"
	"github.com/codeport/codeport/port"
)

// noPool turns the warm pool off where its background refills would only
// add noise to what is measured.
func noPool(c Config) Config { return c.WithWarmPool(0, nil) }

// BenchmarkExecutePrint: print(1) in a live session, in process.
func BenchmarkExecutePrint(b *testing.B) {
	a := newTestAdapter(b, noPool)
	id := newSession(b, a)
	ctx := context.Background()
	req := port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t := time.Now()
		res, err := a.Execute(ctx, id, req)
		samples = append(samples, time.Since(t))
		if err != nil || res.Stdout != "1\n" {
			b.Fatalf("%v %q", err, res.Stdout)
		}
	}
	measure.Report(b, "call", samples)
}

// BenchmarkSessionFirstResult: create a session, run print(1 + 1), destroy
// it; the time to the first result is what a gateway's user waits for.
// "pool": a warm interpreter is waiting (the pool is refilled between
// iterations); "cold": the pool is off and CPython starts on demand.
func BenchmarkSessionFirstResult(b *testing.B) {
	for _, bc := range []struct {
		name string
		pool int
	}{{"pool", 1}, {"cold", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			a := newTestAdapter(b, func(c Config) Config { return c.WithWarmPool(bc.pool, nil) })
			ctx := context.Background()
			var first, whole []time.Duration
			for b.Loop() {
				// Waiting for the refill stays on the clock, so ns/op is
				// the sustained rate; the samples below are the latency.
				for len(a.d.pool) < bc.pool {
					time.Sleep(5 * time.Millisecond)
				}
				t := time.Now()
				s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
				if err != nil {
					b.Fatal(err)
				}
				res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1 + 1)"})
				if err != nil || res.Stdout != "2\n" {
					b.Fatalf("%v %q", err, res.Stdout)
				}
				first = append(first, time.Since(t))
				if err := a.DestroySession(ctx, s.ID); err != nil {
					b.Fatal(err)
				}
				whole = append(whole, time.Since(t))
			}
			measure.Report(b, "first-result", first)
			measure.Report(b, "create-call-destroy", whole)
		})
	}
}

// BenchmarkDeadlineOverrun: how long after its deadline a busy loop's call
// returns (the instance stopped and awaited).
func BenchmarkDeadlineOverrun(b *testing.B) {
	a := newTestAdapter(b, noPool)
	id := newSession(b, a)
	ctx := context.Background()
	const deadline = 200 * time.Millisecond
	var overrun []time.Duration
	for b.Loop() {
		t := time.Now()
		res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "while True: pass", Timeout: deadline})
		overrun = append(overrun, time.Since(t)-deadline)
		if err != nil || res.Outcome != port.OutcomeTimedOut {
			b.Fatalf("%v %s", err, res.Outcome)
		}
		// The next call boots a fresh interpreter; do that outside the
		// measurement.
		b.StopTimer()
		if res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "pass"}); err != nil || res.Outcome != port.OutcomeCompleted {
			b.Fatalf("%v %s", err, res.Outcome)
		}
		b.StartTimer()
	}
	measure.Report(b, "overrun", overrun)
}

// BenchmarkIdleSessionMemory: resident memory added per idle session that
// has run one call, over 32 sessions. Each iteration is timed whole (the
// time is of creating 32 sessions); the metric is what counts.
func BenchmarkIdleSessionMemory(b *testing.B) {
	const n = 32
	// No pool: its refills would be counted as the sessions' memory.
	a := newTestAdapter(b, noPool)
	ctx := context.Background()
	for b.Loop() {
		runtime.GC()
		debug.FreeOSMemory()
		before := measure.RSS()
		ids := make([]string, 0, n)
		for range n {
			id := newSession(b, a)
			if _, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x = 1"}); err != nil {
				b.Fatal(err)
			}
			ids = append(ids, id)
		}
		runtime.GC()
		debug.FreeOSMemory()
		b.ReportMetric(float64(measure.RSS()-before)/n/(1<<20), "MiB/idle-session")
		for _, id := range ids {
			_ = a.DestroySession(ctx, id)
		}
	}
}
