package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// peerConfig is what a workload asks of a peer. A peer applies what it
// can and ignores the rest (the reference backend has no warm pool).
type peerConfig struct {
	// pool is the warm pool's size: 0 turns it off.
	pool int
}

// target is a started peer.
type target struct {
	port port.CodeExecutionPort
	// waitPool blocks until the warm pool holds its configured size; nil
	// where the peer has no pool or cannot tell.
	waitPool func(ctx context.Context) error
	// poolTakes reports the sessions created so far from the pool (hits)
	// and with a cold start (misses); nil where unknown.
	poolTakes func() (hits, misses float64)
	// rss is the resident memory, in bytes, of the process or processes
	// that host the sessions; nil where unknown.
	rss func() int64
}

// peer is one column of the table. start is nil for a peer that does not
// exist yet; it returns an error wrapping errAbsent when the peer is not
// available on this machine.
type peer struct {
	name  string
	start func(b *testing.B, c peerConfig) (*target, error)
}

var errAbsent = errors.New("peer absent")

// peers lists the Go-driven columns in the table's order. Adding a peer is
// one entry. (pydantic-monty and eryx are driven from Python by
// bench/monty_driver.py and bench/eryx_driver.py.)
func peers() []peer {
	return []peer{
		{name: "inproc", start: startInProcess},
		{name: "http", start: startOverHTTP},
		{name: "subprocess", start: startSubprocess},
		{name: "tenantworkers", start: startTenantWorkers},
		{name: "reference", start: startReference},
	}
}

// startWasm starts the in-process adapter with its metrics in a private
// registry, and the probes that read them.
func startWasm(b *testing.B, c peerConfig) (*port.Port, *target) {
	reg := prometheus.NewRegistry()
	a := wasmtest.New(b, func(cfg wasm.Config) wasm.Config {
		return cfg.WithWarmPool(c.pool, nil).WithMetrics(reg)
	})
	t := &target{
		port: a,
		rss:  settledRSS,
		poolTakes: func() (float64, float64) {
			m := gather(reg)
			return m["codeport_pool_takes_total/hit"], m["codeport_pool_takes_total/miss"]
		},
	}
	if c.pool > 0 {
		t.waitPool = func(ctx context.Context) error {
			for {
				// Every interpreter start is counted once it is ready; the
				// ones not handed out (neither a hit nor a cold start) are
				// waiting in the pool.
				m := gather(reg)
				if m["codeport_instance_start_duration_seconds"]-m["codeport_pool_takes_total/hit"]-m["codeport_pool_takes_total/miss"] >= float64(c.pool) {
					return nil
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("waiting for the warm pool: %w", ctx.Err())
				case <-time.After(5 * time.Millisecond):
				}
			}
		}
	}
	return a, t
}

// gather reads counters (by name, or name/label-value for a one-label
// vector) and histogram sample counts from reg.
func gather(reg *prometheus.Registry) map[string]float64 {
	out := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			if l := m.GetLabel(); len(l) == 1 {
				key += "/" + l[0].GetValue()
			}
			switch {
			case m.GetCounter() != nil:
				out[key] += m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key] += float64(m.GetHistogram().GetSampleCount())
			case m.GetGauge() != nil:
				out[key] += m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// settledRSS is this process's resident memory after a collection, so
// that garbage does not count as a session's memory.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return measure.RSS()
}

func startInProcess(b *testing.B, c peerConfig) (*target, error) {
	_, t := startWasm(b, c)
	return t, nil
}

// startOverHTTP serves the in-process adapter on loopback, as `codeport
// serve` does, and drives it with adapters/http (keep-alive).
func startOverHTTP(b *testing.B, c peerConfig) (*target, error) {
	a, t := startWasm(b, c)
	srv := httptest.NewServer(server.NewHandler(a))
	b.Cleanup(srv.Close)
	client, err := httpadapter.New(httpadapter.NewConfig(srv.URL))
	if err != nil {
		return nil, fmt.Errorf("http adapter: %w", err)
	}
	b.Cleanup(func() { _ = client.Close() })
	t.port = client
	return t, nil
}

// startSubprocess starts adapters/subprocess with workers running the
// codeport binary TestMain built; its pool is the idle workers it keeps,
// each with a warm interpreter. Its memory is this process and its
// workers.
func startSubprocess(b *testing.B, c peerConfig) (*target, error) {
	return startWorkers(b, c, func(cfg subprocess.Config) subprocess.Config {
		return cfg.WithWorkers(c.pool, 64) // as many as the in-process max-sessions
	})
}

// startTenantWorkers starts adapters/subprocess as an operator who wants
// tenants kept apart, not sessions, would: each worker hosts up to 8
// sessions of one tenant at once and 256 in its life, its interpreter reset
// to the image between them (the benchmark's sessions are all one
// tenant's). Its pool is the idle workers it keeps, each able to take 8.
func startTenantWorkers(b *testing.B, c peerConfig) (*target, error) {
	return startWorkers(b, c, func(cfg subprocess.Config) subprocess.Config {
		return cfg.WithWorkers(c.pool, 8).WithSessionsPerWorker(8).WithRecycleAfter(256).WithTenantWorkers(true)
	})
}

// startWorkers starts adapters/subprocess configured by opt, with workers
// running the binary TestMain built.
func startWorkers(b *testing.B, c peerConfig, opt func(subprocess.Config) subprocess.Config) (*target, error) {
	if workerBin == "" {
		return nil, fmt.Errorf("%w: no worker binary (TestMain builds one only for benchmarks)", errAbsent)
	}
	a := wasmtest.NewSubprocess(b, workerBin, opt)
	t := &target{port: a, rss: func() int64 { runtime.GC(); debug.FreeOSMemory(); return treeRSS(os.Getpid()) }}
	if c.pool > 0 {
		t.waitPool = a.WaitReady
	}
	return t, nil
}

// startReference drives the backend at CODEPORT_BENCH_REFERENCE_URL with
// the same client as startOverHTTP. Its memory is the process tree of
// CODEPORT_BENCH_REFERENCE_PID when that is set.
func startReference(b *testing.B, _ peerConfig) (*target, error) {
	url := os.Getenv("CODEPORT_BENCH_REFERENCE_URL")
	if url == "" {
		return nil, fmt.Errorf("%w: CODEPORT_BENCH_REFERENCE_URL is not set", errAbsent)
	}
	client, err := httpadapter.New(httpadapter.NewConfig(url))
	if err != nil {
		return nil, fmt.Errorf("reference adapter: %w", err)
	}
	b.Cleanup(func() { _ = client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not answer: %w", errAbsent, url, err)
	}
	_ = client.DestroySession(ctx, s.ID)
	t := &target{port: client}
	if v := os.Getenv("CODEPORT_BENCH_REFERENCE_PID"); v != "" {
		pid, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("CODEPORT_BENCH_REFERENCE_PID: %w", err)
		}
		t.rss = func() int64 { return treeRSS(pid) }
	}
	return t, nil
}

// forEachPeer runs fn as one sub-benchmark per peer. An absent peer
// reports the metric "absent" and nothing else.
func forEachPeer(b *testing.B, c peerConfig, fn func(b *testing.B, t *target)) {
	for _, p := range peers() {
		b.Run(p.name, func(b *testing.B) {
			if p.start == nil {
				b.ReportMetric(1, "absent")
				return
			}
			t, err := p.start(b, c)
			if errors.Is(err, errAbsent) {
				b.Logf("%s: %v", p.name, err)
				b.ReportMetric(1, "absent")
				return
			}
			if err != nil {
				b.Fatal(err)
			}
			fn(b, t)
		})
	}
}
