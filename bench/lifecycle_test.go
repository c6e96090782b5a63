package bench

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// The lifecycle workloads: the parts of a session's life that W1–W6 do
// not isolate. A peer that has no such operation reports n/a.

// BenchmarkW7Destroy: ending a session that ran one call (the DELETE of
// the contract over HTTP).
func BenchmarkW7Destroy(b *testing.B) {
	forEachPeer(b, peerConfig{pool: defaultPool}, func(b *testing.B, t *target) {
		ctx := context.Background()
		sampled(b, "destroy", reps(30), func() time.Duration {
			waitPool(b, t)
			s, err := t.port.CreateSession(ctx, port.CreateSessionRequest{})
			if err != nil {
				b.Fatal(err)
			}
			if err := run(ctx, t.port, s.ID, liveCode, liveOut); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if err := t.port.DestroySession(ctx, s.ID); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		})
	})
}

// BenchmarkW8BashEcho: the bash tool's `echo hi` in a live session whose
// first bash call (which starts its shell) ran off the clock.
func BenchmarkW8BashEcho(b *testing.B) {
	forEachPeer(b, peerConfig{}, func(b *testing.B, t *target) {
		ctx := context.Background()
		caps, err := t.port.Describe(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if !slices.Contains(caps.Tools, port.ToolBashCodeExecution) {
			b.ReportMetric(1, "na")
			return
		}
		id := newSession(b, t.port)
		echo := port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "echo hi"}
		call := func() time.Duration {
			t0 := time.Now()
			res, err := t.port.Execute(ctx, id, echo)
			d := time.Since(t0)
			if err != nil || res.Outcome != port.OutcomeCompleted || res.Stdout != "hi\n" {
				b.Fatalf("echo hi: %v %+v", err, res)
			}
			return d
		}
		call()
		sampled(b, "bash", reps(200), call)
	})
}

// restoreCode fills a session with about 50 MB of Python objects (as
// adapters/wasm's BenchmarkSnapshot does); restoreCheck reads one back.
const (
	restoreCode  = "d = {f'key-{i}': i * 0.5 for i in range(720000)}\nprint(len(d))"
	restoreOut   = "720000\n"
	restoreCheck = "print(d['key-719999'])"
	restoreWant  = "359999.5\n"
)

// BenchmarkW9Restore: a snapshot of a session holding about 50 MB of
// objects restored, to its first result. Only codeport in process takes
// it (the other columns are n/a): over HTTP and in a worker the same code
// restores, behind a transport.
func BenchmarkW9Restore(b *testing.B) {
	inProcessOnly(b, func(b *testing.B) {
		ctx := context.Background()
		a := wasmtest.New(b, func(c wasm.Config) wasm.Config { return c.WithWarmPool(0, nil) },
			port.WithSnapshotKey(bytes.Repeat([]byte{7}, 32)))
		id := newSession(b, a)
		if err := run(ctx, a, id, restoreCode, restoreOut); err != nil {
			b.Fatal(err)
		}
		var snap bytes.Buffer
		if err := a.SnapshotSession(ctx, id, &snap, port.SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
		restore := func() time.Duration {
			r := bytes.NewReader(snap.Bytes())
			t0 := time.Now()
			s, err := a.RestoreSession(ctx, r, port.SnapshotOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if err := run(ctx, a, s.ID, restoreCheck, restoreWant); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			if err := a.DestroySession(ctx, s.ID); err != nil {
				b.Fatal(err)
			}
			return d
		}
		// One restore off the clock (the first pays for the fresh heap's
		// growth), then enough samples that the median is not the luck of
		// a few on a shared machine: each is about 30 ms.
		restore()
		sampled(b, "restore", reps(24), restore)
		b.ReportMetric(float64(snap.Len())/(1<<20), "snapshot-MiB")
	})
}

// BenchmarkW10ProcessStart: a process started, the first result printed
// and the process gone: `codeport exec -c 'print(1)'` with the compiled
// code and the interpreter image in the compile cache (one run off the
// clock fills it). Only the in-process column runs a process of its own.
func BenchmarkW10ProcessStart(b *testing.B) {
	inProcessOnly(b, func(b *testing.B) {
		if workerBin == "" {
			b.Fatal("no codeport binary: see TestMain's output")
		}
		start := func() time.Duration {
			cmd := exec.Command(workerBin, "exec", "--compile-cache-dir", testcache.Dir(), "-c", liveCode)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			t0 := time.Now()
			err := cmd.Run()
			d := time.Since(t0)
			if err != nil || stdout.String() != liveOut {
				b.Fatalf("codeport exec: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
			}
			return d
		}
		start()
		sampled(b, "start", reps(15), start)
	})
}

// inProcessOnly runs fn as the in-process column's sub-benchmark; every
// other column reports n/a.
func inProcessOnly(b *testing.B, fn func(b *testing.B)) {
	for _, p := range peers() {
		b.Run(p.name, func(b *testing.B) {
			if p.name != "inproc" {
				b.ReportMetric(1, "na")
				return
			}
			fn(b)
		})
	}
}
