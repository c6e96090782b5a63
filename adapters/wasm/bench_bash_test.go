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

// BenchmarkBash: one bash call in a live session whose shell has started,
// for a builtin alone and for a two-command pipeline over a directory.
func BenchmarkBash(b *testing.B) {
	for _, bc := range []struct{ name, cmd, want string }{
		{"echo", "echo hi", "hi\n"},
		{"ls_wc", "ls | wc -l", "20\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := newTestAdapter(b, noPool)
			id := newSession(b, a)
			ctx := context.Background()
			if _, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "for i in range(20): open(f'f{i}.txt', 'w').close()"}); err != nil {
				b.Fatal(err)
			}
			req := port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: bc.cmd}
			if _, err := a.Execute(ctx, id, req); err != nil {
				b.Fatal(err)
			}
			samples := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				t := time.Now()
				res, err := a.Execute(ctx, id, req)
				samples = append(samples, time.Since(t))
				if err != nil || res.Stdout != bc.want {
					b.Fatalf("%v %q %q", err, res.Stdout, res.Stderr)
				}
			}
			measure.Report(b, "call", samples)
		})
	}
}

// BenchmarkBashSessionMemory: resident memory added per idle session whose
// shell has run one command, over 16 sessions (the Python interpreter's
// share included: compare with BenchmarkIdleSessionMemory).
func BenchmarkBashSessionMemory(b *testing.B) {
	const n = 16
	a := newTestAdapter(b, noPool)
	ctx := context.Background()
	for b.Loop() {
		runtime.GC()
		debug.FreeOSMemory()
		before := measure.RSS()
		ids := make([]string, 0, n)
		for range n {
			id := newSession(b, a)
			if res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "x=1; ls | wc -l"}); err != nil || res.ReturnCode != 0 {
				b.Fatal(err, res.Stderr)
			}
			ids = append(ids, id)
		}
		runtime.GC()
		debug.FreeOSMemory()
		b.ReportMetric(float64(measure.RSS()-before)/n/(1<<20), "MiB/session")
		var linear int64
		for _, id := range ids {
			s, err := a.d.lookup(id)
			if err != nil {
				b.Fatal(err)
			}
			linear += s.shell.MemoryBytes()
		}
		b.ReportMetric(float64(linear)/n/(1<<20), "MiB-shell-linear/session")
		for _, id := range ids {
			_ = a.DestroySession(ctx, id)
		}
	}
}
