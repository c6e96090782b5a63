package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/port"
)

// The workloads' programs; bench/monty_driver.py and bench/eryx_driver.py
// run the same ones.
const (
	firstCode = "print(1 + 1)"
	firstOut  = "2\n"
	liveCode  = "print(1)"
	liveOut   = "1\n"
	// cpuCode sums 10**6 squares in a pure-Python loop.
	cpuCode = "total = 0\nfor i in range(10**6):\n    total += i * i\nprint(total)"
	cpuOut  = "333332833333500000\n"
	// idleCode is the one call each idle session of W6 has run.
	idleCode = "x = 1"
)

// tenCells build on each other; the last prints what they computed.
var tenCells = []string{
	"x = 1",
	"x += 1",
	"x *= 3",
	"def f(n):\n    return n * x + 1",
	"y = f(2)",
	"xs = [f(i) for i in range(5)]",
	"s = sum(xs) + y",
	"d = {'x': x, 'y': y, 's': s}",
	"x = d['s'] - x",
	"print(x, y, s, xs)",
}

const tenCellsOut = "72 13 78 [1, 7, 13, 19, 25]\n"

// defaultPool is the warm pool `codeport serve` starts with.
const defaultPool = 2

// The curve's client counts, and the burst's default shape.
var curveClients = []int{1, 2, 4, 8, 16}

const (
	idleSessions = 16
	burstSize    = 8
	burstRounds  = 5
)

// scale multiplies the sample counts (CODEPORT_BENCH_SCALE, default 1).
func scale() float64 {
	if v, err := strconv.ParseFloat(os.Getenv("CODEPORT_BENCH_SCALE"), 64); err == nil && v > 0 {
		return v
	}
	return 1
}

// reps is n scaled, and at least 3.
func reps(n int) int { return max(3, int(math.Round(float64(n)*scale()))) }

// envInt reads a positive integer from the environment, def otherwise.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// run executes code in session id and checks its output.
func run(ctx context.Context, p port.CodeExecutionPort, id, code, want string) error {
	res, err := p.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
	if err != nil {
		return fmt.Errorf("execute: %w", err)
	}
	// The reference backend drops stdout's final newline; the comparison
	// does too.
	if res.Outcome != port.OutcomeCompleted || strings.TrimSuffix(res.Stdout, "\n") != strings.TrimSuffix(want, "\n") {
		return fmt.Errorf("execute %q: %s, stdout %q, stderr %q", code, res.Outcome, res.Stdout, res.Stderr)
	}
	return nil
}

// firstResult creates a session and runs print(1 + 1) in it: W1's span.
// The caller destroys the session.
func firstResult(ctx context.Context, p port.CodeExecutionPort) (string, time.Duration, error) {
	t0 := time.Now()
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		return "", 0, fmt.Errorf("create session: %w", err)
	}
	if err := run(ctx, p, s.ID, firstCode, firstOut); err != nil {
		_ = p.DestroySession(ctx, s.ID)
		return "", 0, err
	}
	return s.ID, time.Since(t0), nil
}

// waitPool waits for t's warm pool when it has one.
func waitPool(b *testing.B, t *target) {
	if t.waitPool == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := t.waitPool(ctx); err != nil {
		b.Fatal(err)
	}
}

func newSession(b *testing.B, p port.CodeExecutionPort) string {
	s, err := p.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.DestroySession(context.Background(), s.ID) })
	return s.ID
}

// benchFirstResult is W1 with the given pool: each sample waits, off the
// clock, for a full pool (a pool hit), or has none (a cold start).
func benchFirstResult(b *testing.B, pool int) {
	forEachPeer(b, peerConfig{pool: pool}, func(b *testing.B, t *target) {
		ctx := context.Background()
		sampled(b, "first", reps(20), func() time.Duration {
			waitPool(b, t)
			id, d, err := firstResult(ctx, t.port)
			if err != nil {
				b.Fatal(err)
			}
			_ = t.port.DestroySession(ctx, id)
			return d
		})
	})
}

// sampled runs each benchmark iteration as n samples of one, whose
// durations it reports as name's p50 and p95.
func sampled(b *testing.B, name string, n int, one func() time.Duration) {
	for b.Loop() {
		samples := make([]time.Duration, 0, n)
		for range n {
			samples = append(samples, one())
		}
		measure.Report(b, name, samples)
	}
}

// timedRun is one sample of a call that must print want.
func timedRun(b *testing.B, p port.CodeExecutionPort, id, code, want string) time.Duration {
	t0 := time.Now()
	if err := run(context.Background(), p, id, code, want); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// BenchmarkW1Warm: a fresh session's first result, create to result, with
// a warm interpreter waiting in the pool.
func BenchmarkW1Warm(b *testing.B) { benchFirstResult(b, defaultPool) }

// BenchmarkW1Cold: the same with the pool off: CPython starts on demand.
func BenchmarkW1Cold(b *testing.B) { benchFirstResult(b, 0) }

// BenchmarkW2LiveCall: print(1) in a live session.
func BenchmarkW2LiveCall(b *testing.B) {
	forEachPeer(b, peerConfig{}, func(b *testing.B, t *target) {
		ctx := context.Background()
		id := newSession(b, t.port)
		if err := run(ctx, t.port, id, liveCode, liveOut); err != nil { // the first call's one-off costs
			b.Fatal(err)
		}
		sampled(b, "call", reps(300), func() time.Duration { return timedRun(b, t.port, id, liveCode, liveOut) })
	})
}

// BenchmarkW3CreateCallDestroy: create, print(1), destroy. Each sample
// starts with a full warm pool (waited for off the clock): the steady
// state of a server that is not saturated (W6's throughput is the
// saturated one).
func BenchmarkW3CreateCallDestroy(b *testing.B) {
	forEachPeer(b, peerConfig{pool: defaultPool}, func(b *testing.B, t *target) {
		ctx := context.Background()
		sampled(b, "ccd", reps(15), func() time.Duration {
			waitPool(b, t)
			t0 := time.Now()
			s, err := t.port.CreateSession(ctx, port.CreateSessionRequest{})
			if err != nil {
				b.Fatal(err)
			}
			if err := run(ctx, t.port, s.ID, liveCode, liveOut); err != nil {
				b.Fatal(err)
			}
			if err := t.port.DestroySession(ctx, s.ID); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		})
	})
}

// BenchmarkW4TenCells: ten small cells that build on each other, in a
// fresh live session created off the clock from the default warm pool (as
// `codeport serve` would hand it out); the time of all ten.
func BenchmarkW4TenCells(b *testing.B) {
	forEachPeer(b, peerConfig{pool: defaultPool}, func(b *testing.B, t *target) {
		ctx := context.Background()
		sampled(b, "cells", reps(15), func() time.Duration {
			waitPool(b, t)
			s, err := t.port.CreateSession(ctx, port.CreateSessionRequest{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = t.port.DestroySession(ctx, s.ID) }()
			var d time.Duration
			for i, code := range tenCells {
				want := ""
				if i == len(tenCells)-1 {
					want = tenCellsOut
				}
				d += timedRun(b, t.port, s.ID, code, want)
			}
			return d
		})
	})
}

// BenchmarkW5CPULoop: a pure-Python loop summing 10**6 squares.
func BenchmarkW5CPULoop(b *testing.B) {
	forEachPeer(b, peerConfig{}, func(b *testing.B, t *target) {
		id := newSession(b, t.port)
		sampled(b, "loop", reps(5), func() time.Duration { return timedRun(b, t.port, id, cpuCode, cpuOut) })
	})
}

// BenchmarkW6IdleMemory: resident memory added per idle live session that
// has run one call (x = 1), over idleSessions sessions, in the process or
// process tree that hosts them.
func BenchmarkW6IdleMemory(b *testing.B) {
	forEachPeer(b, peerConfig{}, func(b *testing.B, t *target) {
		if t.rss == nil {
			b.ReportMetric(1, "na")
			return
		}
		ctx := context.Background()
		for b.Loop() {
			// One session first, so one-off costs (the first instance's
			// code pages, a server's imports) do not count as the sessions'.
			warm := newSession(b, t.port)
			if err := run(ctx, t.port, warm, idleCode, ""); err != nil {
				b.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			before := t.rss()
			ids := make([]string, 0, idleSessions)
			for range idleSessions {
				s, err := t.port.CreateSession(ctx, port.CreateSessionRequest{})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, s.ID)
				if err := run(ctx, t.port, s.ID, idleCode, ""); err != nil {
					b.Fatal(err)
				}
			}
			time.Sleep(200 * time.Millisecond)
			after := t.rss()
			b.ReportMetric(float64(after-before)/idleSessions/(1<<20), "MiB/session")
			for _, id := range ids {
				_ = t.port.DestroySession(ctx, id)
			}
		}
	})
}

// BenchmarkCurve: clients concurrent clients, each creating a session,
// running print(1 + 1) and destroying it, over and over, with the default
// warm pool. Per client count: the first result's p50 and p95 and the
// sessions completed per second (W6's throughput at 2 clients).
func BenchmarkCurve(b *testing.B) {
	forEachPeer(b, peerConfig{pool: defaultPool}, func(b *testing.B, t *target) {
		span := time.Duration(float64(3*time.Second) * scale())
		for b.Loop() {
			for _, clients := range curveClients {
				waitPool(b, t)
				lat, rate, err := curve(t.port, clients, span)
				if err != nil {
					b.Fatal(err)
				}
				measure.Report(b, fmt.Sprintf("c%d", clients), lat)
				b.ReportMetric(rate, fmt.Sprintf("c%d-sessions/s", clients))
			}
		}
	})
}

// curve runs clients loops of create, first result, destroy until span
// has passed, and returns the first results' latencies and the sessions
// completed per second (the last ones are awaited and counted).
func curve(p port.CodeExecutionPort, clients int, span time.Duration) ([]time.Duration, float64, error) {
	ctx := context.Background()
	var (
		mu    sync.Mutex
		lat   []time.Duration
		first error
		wg    sync.WaitGroup
	)
	start := time.Now()
	stop := start.Add(span)
	for range clients {
		wg.Go(func() {
			for time.Now().Before(stop) {
				id, d, err := firstResult(ctx, p)
				if err == nil {
					err = p.DestroySession(ctx, id)
				}
				mu.Lock()
				if err != nil {
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	return lat, float64(len(lat)) / elapsed.Seconds(), first
}

// BenchmarkBurst: a warm pool of CODEPORT_BENCH_BURST_POOL (default 2)
// hit by CODEPORT_BENCH_BURST (default 8) simultaneous create + first
// result, burstRounds times with the pool full at each start. Reports the
// requests' latency distribution and, where the peer can tell, how many
// were pool hits.
func BenchmarkBurst(b *testing.B) {
	pool := envInt("CODEPORT_BENCH_BURST_POOL", defaultPool)
	size := envInt("CODEPORT_BENCH_BURST", burstSize)
	forEachPeer(b, peerConfig{pool: pool}, func(b *testing.B, t *target) {
		ctx := context.Background()
		rounds := reps(burstRounds)
		for b.Loop() {
			var lat []time.Duration
			var hits, misses float64
			for range rounds {
				if t.waitPool != nil {
					waitPool(b, t)
				} else {
					time.Sleep(300 * time.Millisecond)
				}
				var h0, m0 float64
				if t.poolTakes != nil {
					h0, m0 = t.poolTakes()
				}
				ids, d, err := burst(ctx, t.port, size)
				if err != nil {
					b.Fatal(err)
				}
				if t.poolTakes != nil {
					h1, m1 := t.poolTakes()
					hits, misses = hits+h1-h0, misses+m1-m0
				}
				lat = append(lat, d...)
				for _, id := range ids {
					_ = t.port.DestroySession(ctx, id)
				}
			}
			measure.Report(b, "burst", lat)
			b.ReportMetric(float64(slices.Max(lat))/float64(time.Millisecond), "burst-max-ms")
			b.ReportMetric(float64(len(lat)), "requests")
			if t.poolTakes != nil {
				b.ReportMetric(hits, "hits")
				b.ReportMetric(misses, "misses")
			}
			b.ReportMetric(float64(pool), "pool")
		}
	})
}

// burst starts n create + first result at once and returns the sessions
// and each one's latency.
func burst(ctx context.Context, p port.CodeExecutionPort, n int) ([]string, []time.Duration, error) {
	var (
		wg    sync.WaitGroup
		ids   = make([]string, n)
		lat   = make([]time.Duration, n)
		errs  = make([]error, n)
		start = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			ids[i], lat[i], errs[i] = firstResult(ctx, p)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for _, id := range ids {
				if id != "" {
					_ = p.DestroySession(ctx, id)
				}
			}
			return nil, nil, fmt.Errorf("burst request %d: %w", i, err)
		}
	}
	return ids, lat, nil
}
