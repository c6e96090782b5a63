package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/bench/internal/table"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// BenchmarkScale: one node holding CODEPORT_BENCH_LIVE (default 1,000)
// live idle sessions and CODEPORT_BENCH_HIBERNATED (default 10,000)
// hibernated ones, each created by a client through the server (HTTP on
// loopback) and having run one call. Reports the resident memory the live
// ones add (per session), the disk the hibernated ones take (saved as
// their difference from the process's image: no hibernate-dir), and p50/p99
// of a call to a random live session and to a random hibernated one
// (which wakes it). The hibernated sessions are made first, in batches
// that each wait for the reaper to hibernate them (they hold no
// max-sessions slot once asleep).
//
// It runs as BenchmarkScale/node, the peer the side-by-side table gives a
// section of its own (bench/internal/table, ScaleNode).
func BenchmarkScale(b *testing.B) {
	b.Run(table.ScaleNode, benchScale)
}

func benchScale(b *testing.B) {
	live := envInt("CODEPORT_BENCH_LIVE", 1000)
	asleep := envInt("CODEPORT_BENCH_HIBERNATED", 10000)
	batch := min(live, 500)
	// Each call to a hibernated session wakes it: woken, it holds a slot.
	wakes := min(asleep, reps(200))
	dir := b.TempDir()
	reg := prometheus.NewRegistry()
	p, err := wasm.New(wasm.NewConfig().WithSessionsDir(filepath.Join(dir, "sessions")).
		WithMaxSessions(live+max(batch, wakes)+8).WithSessionLifetimes(time.Hour, time.Hour, 4*time.Hour).
		WithHibernation(time.Second, "").WithMetrics(reg))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	if err := wasm.WaitWarm(ctx, p); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(server.NewHandler(p))
	defer srv.Close()
	c, err := httpadapter.New(httpadapter.NewConfig(srv.URL))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	create := func() string {
		s, err := c.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			b.Fatal(err)
		}
		if res, err := c.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x = 1"}); err != nil || res.ReturnCode != 0 {
			b.Fatalf("x = 1: %v %+v", err, res)
		}
		return s.ID
	}
	call := func(id string) time.Duration {
		t0 := time.Now()
		res, err := c.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"})
		if err != nil || res.Stdout != "1\n" {
			b.Fatalf("print(x) in %s: %v %+v", id, err, res)
		}
		return time.Since(t0)
	}
	hibernated := func() int { return int(gather(reg)["codeport_sessions_hibernated"]) }
	for b.Loop() {
		var sleeping, awake []string
		for len(sleeping) < asleep {
			for range min(batch, asleep-len(sleeping)) {
				sleeping = append(sleeping, create())
			}
			deadline := time.Now().Add(10 * time.Minute)
			for hibernated() < len(sleeping) {
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d sessions hibernated after 10 minutes", hibernated(), len(sleeping))
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		// Before any wakes: a woken session's file is gone.
		_, disk := measure.DiskUse(dir) // the hibernated sessions' files, in the sessions directory
		before := settledRSS()
		for range live {
			awake = append(awake, create())
		}
		grown := settledRSS() - before
		// Calls to live sessions come first: each call to a hibernated
		// one wakes it, and a woken session is live.
		var liveLat, wakeLat []time.Duration
		for range reps(2000) {
			liveLat = append(liveLat, call(awake[rand.IntN(len(awake))]))
		}
		for _, i := range rand.Perm(len(sleeping))[:wakes] {
			wakeLat = append(wakeLat, call(sleeping[i]))
		}
		measure.Report(b, "live-call", liveLat)
		measure.Report(b, "hibernated-call", wakeLat)
		b.ReportMetric(p99(liveLat), "live-call-p99-ms")
		b.ReportMetric(p99(wakeLat), "hibernated-call-p99-ms")
		b.ReportMetric(float64(grown)/float64(max(live, 1))/(1<<20), "MiB/live-session")
		b.ReportMetric(float64(disk)/float64(max(asleep, 1))/(1<<10), "KiB/hibernated-session")
		b.ReportMetric(float64(live), "live")
		b.ReportMetric(float64(asleep), "hibernated")
		fmt.Fprintf(os.Stderr, "scale: %d live sessions add %d MiB; %d hibernated take %d MiB of disk\n", live, grown>>20, asleep, disk>>20)
	}
}

// p99 is the 99th percentile of samples, in milliseconds.
func p99(samples []time.Duration) float64 {
	s := slices.Clone(samples)
	slices.Sort(s)
	return float64(s[int(0.99*float64(len(s)-1))]) / float64(time.Millisecond)
}
