package wasm

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/port"
)

// noPool turns the warm pool off where its background refills would only
// add noise to what is measured.
func noPool(c Config) Config { return c.WithWarmPool(0, nil) }

// BenchmarkExecutePrint: print(1) in a live session, in process.
func BenchmarkExecutePrint(b *testing.B) {
	a := newTestAdapter(b, noPool)
	callLatency(b, a, newSession(b, a), port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"}, "1\n")
}

// BenchmarkZoneInfo: a call that loads a time zone's file anew
// (ZoneInfo.no_cache), as the first use of each key does. Natively CPython
// 3.13 takes about 0.25 ms for the load.
func BenchmarkZoneInfo(b *testing.B) {
	a := newTestAdapter(b, noPool)
	id := newSession(b, a)
	if res := run(b, a, id, "import zoneinfo"); res.Outcome != port.OutcomeCompleted {
		b.Fatalf("%+v", res)
	}
	callLatency(b, a, id, port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code: "print(zoneinfo.ZoneInfo.no_cache('Europe/Paris').key)"}, "Europe/Paris\n")
}

// BenchmarkLocalTime: a call converting 1,000 instants to local time
// (time.localtime), in UTC, in a zone of the tzdata (TZif transitions and
// their rule) and in a POSIX rule, and one switching zones (time.tzset,
// which reads the zone's file). Natively CPython 3.13 on glibc takes about
// 0.6 ms for 1,000 conversions and 5 us for a switch.
func BenchmarkLocalTime(b *testing.B) {
	for _, bc := range []struct{ name, setup, code, want string }{
		{"utc", "import os, time; os.environ.pop('TZ', None); time.tzset()", "for i in range(1000): time.localtime(1751371200 + i * 3600)\nprint(time.localtime(0).tm_zone)", "UTC\n"},
		{"zone", "import os, time; os.environ['TZ'] = 'Europe/Paris'; time.tzset()", "for i in range(1000): time.localtime(1751371200 + i * 3600)\nprint(time.localtime(0).tm_zone)", "CET\n"},
		{"rule", "import os, time; os.environ['TZ'] = 'EST+05EDT,M3.2.0,M11.1.0'; time.tzset()", "for i in range(1000): time.localtime(1751371200 + i * 3600)\nprint(time.localtime(0).tm_zone)", "EST\n"},
		{"tzset", "import os, time", "for z in ('Europe/Paris', 'America/New_York') * 10: os.environ['TZ'] = z; time.tzset()\nprint(time.tzname[0])", "EST\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := newTestAdapter(b, noPool)
			id := newSession(b, a)
			if res := run(b, a, id, bc.setup); res.Outcome != port.OutcomeCompleted {
				b.Fatalf("%+v", res)
			}
			callLatency(b, a, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: bc.code}, bc.want)
		})
	}
}

// BenchmarkFStringCompile: one eval of an f-string of 65,280 replacement
// fields, as test_fstring's test_many_expressions makes. Natively CPython
// 3.13.5 took about 0.9 s, inside the runtime 83 s, before the tokenizer
// stopped copying the rest of the source at every field
// (patches/cpython-3.13.5-fstring-linear.patch).
func BenchmarkFStringCompile(b *testing.B) {
	a := newTestAdapter(b, noPool)
	id := newSession(b, a)
	if res := run(b, a, id, "x = 'X'\nsrc = \"f'\" + '{x} ' * 65280 + \"'\""); res.Outcome != port.OutcomeCompleted {
		b.Fatalf("%+v", res)
	}
	callLatency(b, a, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(len(eval(src)))"}, "130560\n")
}

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
			if _, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "for i in range(20): open(f'f{i}.txt', 'w').close()"}); err != nil {
				b.Fatal(err)
			}
			callLatency(b, a, id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: bc.cmd}, bc.want)
		})
	}
}

// callLatency runs req in the session over and over (after one call off the
// clock, which starts what the session starts lazily) and reports the
// latency of a call; each must print want.
func callLatency(b *testing.B, a *testAdapter, id string, req port.ExecuteRequest, want string) {
	ctx := context.Background()
	if _, err := a.Execute(ctx, id, req); err != nil {
		b.Fatal(err)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t := time.Now()
		res, err := a.Execute(ctx, id, req)
		samples = append(samples, time.Since(t))
		if err != nil || res.Stdout != want {
			b.Fatalf("%v %q %q", err, res.Stdout, res.Stderr)
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
			firstResults(b, a, bc.pool, "print(1 + 1)", "2\n")
		})
	}
}

// BenchmarkSessionFirstBash: the first bash call of a session, `echo hi`,
// timed from its request: what starting the session's shell adds to a
// call. The session (and its interpreter) is made before the clock
// starts; the process's first shell, which compiles the guest and makes
// its image, runs before the measurement.
func BenchmarkSessionFirstBash(b *testing.B) {
	a := newTestAdapter(b, noPool)
	ctx := context.Background()
	echo := port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "echo hi"}
	if res, err := a.Execute(ctx, newSession(b, a), echo); err != nil || res.Stdout != "hi\n" {
		b.Fatal(err, res.Stderr)
	}
	var first []time.Duration
	for b.Loop() {
		b.StopTimer()
		id := newSession(b, a)
		b.StartTimer()
		t := time.Now()
		res, err := a.Execute(ctx, id, echo)
		first = append(first, time.Since(t))
		if err != nil || res.Stdout != "hi\n" {
			b.Fatalf("%v %q %q", err, res.Stdout, res.Stderr)
		}
		b.StopTimer()
		_ = a.DestroySession(ctx, id)
		b.StartTimer()
	}
	measure.Report(b, "first-bash", first)
}

// firstResults creates a session, runs code (which must print want) and
// destroys the session, over and over, and reports the time to the first
// result and to the end of the destroy. The pool, of size pool, is
// refilled between iterations.
func firstResults(b *testing.B, a *testAdapter, pool int, code, want string) {
	ctx := context.Background()
	var first, whole []time.Duration
	for b.Loop() {
		// Waiting for the refill stays on the clock, so ns/op is the
		// sustained rate; the samples below are the latency.
		for len(a.d.pool) < pool {
			time.Sleep(5 * time.Millisecond)
		}
		t := time.Now()
		s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
		if err != nil || res.Stdout != want {
			b.Fatalf("%v %q %q", err, res.Stdout, res.Stderr)
		}
		first = append(first, time.Since(t))
		if err := a.DestroySession(ctx, s.ID); err != nil {
			b.Fatal(err)
		}
		whole = append(whole, time.Since(t))
	}
	measure.Report(b, "first-result", first)
	measure.Report(b, "create-call-destroy", whole)
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
// has run one call, over 32 sessions: a Python cell ("python"), or a bash
// command ("bash": the shell's guest besides the interpreter, whose linear
// memory is reported too). Each iteration is timed whole (the time is of
// creating the sessions); the metrics are what counts.
func BenchmarkIdleSessionMemory(b *testing.B) {
	b.Run("python", func(b *testing.B) {
		sessionMemory(b, newTestAdapter(b, noPool), 32, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x = 1"}, nil)
	})
	b.Run("bash", func(b *testing.B) {
		sessionMemory(b, newTestAdapter(b, noPool), 32, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "x=1; ls | wc -l"}, func(a *testAdapter, ids []string) {
			var linear int64
			for _, id := range ids {
				s, err := a.d.lookup(id)
				if err != nil {
					b.Fatal(err)
				}
				linear += s.shell.MemoryBytes()
			}
			b.ReportMetric(float64(linear)/float64(len(ids))/(1<<20), "MiB-shell-linear/session")
		})
	})
}

// BenchmarkFirstBashMemory: the memory a session's first bash command
// adds (its shell guest started, the command run), over 32 idle sessions
// that have each run a Python cell: "MiB/first-bash" is resident memory,
// "MiB-pss/first-bash" proportional, which counts once a page that every
// shell maps from the shared image of the shell's memory (RSS counts it in
// each mapping that has read it). The first shell of the process, which
// compiles the guest and makes the image, runs before the measurement.
func BenchmarkFirstBashMemory(b *testing.B) {
	for _, bc := range []struct{ name, cmd string }{
		{"echo", "echo hi"},
		{"ls_wc", "x=1; ls | wc -l"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const n = 32
			a := newTestAdapter(b, noPool)
			ctx := context.Background()
			bash := port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: bc.cmd}
			if res, err := a.Execute(ctx, newSession(b, a), bash); err != nil || res.ReturnCode != 0 {
				b.Fatal(err, res.Stderr)
			}
			for b.Loop() {
				ids := sessionsThatRan(b, a, n, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x = 1"})
				settle()
				rss, pss := measure.RSS(), measure.PSS()
				for _, id := range ids {
					if res, err := a.Execute(ctx, id, bash); err != nil || res.ReturnCode != 0 {
						b.Fatal(err, res.Stderr)
					}
				}
				settle()
				b.ReportMetric(float64(measure.RSS()-rss)/n/(1<<20), "MiB/first-bash")
				b.ReportMetric(float64(measure.PSS()-pss)/n/(1<<20), "MiB-pss/first-bash")
				for _, id := range ids {
					_ = a.DestroySession(ctx, id)
				}
			}
		})
	}
}

// sessionMemory measures the resident memory of n sessions of a (which
// should keep no warm pool: its refills would be counted as the sessions'
// memory) that each ran req, and hands them to report before destroying
// them.
func sessionMemory(b *testing.B, a *testAdapter, n int, req port.ExecuteRequest, report func(*testAdapter, []string)) {
	ctx := context.Background()
	for b.Loop() {
		settle()
		before := measure.RSS()
		ids := sessionsThatRan(b, a, n, req)
		settle()
		b.ReportMetric(float64(measure.RSS()-before)/float64(n)/(1<<20), "MiB/idle-session")
		if report != nil {
			report(a, ids)
		}
		for _, id := range ids {
			_ = a.DestroySession(ctx, id)
		}
	}
}

// sessionsThatRan opens n sessions of a, each of which has run req.
func sessionsThatRan(b *testing.B, a *testAdapter, n int, req port.ExecuteRequest) []string {
	b.Helper()
	ids := make([]string, 0, n)
	for range n {
		id := newSession(b, a)
		if res, err := a.Execute(context.Background(), id, req); err != nil || res.ReturnCode != 0 {
			b.Fatal(err, res.Stderr)
		}
		ids = append(ids, id)
	}
	return ids
}

// settle collects the garbage and hands freed memory back to the OS, so
// that resident memory read next is what is live.
func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}

// BenchmarkOutputFiles: what listing produced files costs a call. A call
// in a session holding 10,000 files ("print_10k") must cost what it costs
// in an empty one ("print_empty"): the files a call wrote are recorded as
// it writes them, not found by walking the tree. "write_10k" writes (and
// so lists and copies) one 1 KiB file in the large session.
func BenchmarkOutputFiles(b *testing.B) {
	const fill = "import os\nos.mkdir('many')\nfor i in range(10_000):\n    open(f'many/{i}', 'w').close()"
	for _, bc := range []struct {
		name, setup, code, want string
		files                   int
	}{
		{"print_empty", "", "print(1)", "1\n", 0},
		{"print_10k", fill, "print(1)", "1\n", 0},
		{"write_10k", fill, "open('out.txt', 'w').write('x' * 1024)\nprint(1)", "1\n", 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := newTestAdapter(b, func(c Config) Config { return noPool(c).WithWorkspaceEntries(20_000) })
			id := newSession(b, a)
			ctx := context.Background()
			if bc.setup != "" {
				if res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: bc.setup}); err != nil || res.ReturnCode != 0 {
					b.Fatalf("setup: %v %q", err, res.Stderr)
				}
			}
			req := port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: bc.code}
			samples := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t := time.Now()
				res, err := a.Execute(ctx, id, req)
				samples = append(samples, time.Since(t))
				if err != nil || res.Stdout != bc.want || len(res.Files) != bc.files {
					b.Fatalf("%v %q %q %d files", err, res.Stdout, res.Stderr, len(res.Files))
				}
			}
			measure.Report(b, "call", samples)
		})
	}
}

// BenchmarkDisplay: what displaying values costs a call. "print_off" is a
// print(1) cell run as before display existed; "print_on" the same cell
// with display on (one expression: compiled as one, its None shows
// nothing); "expr_on" a cell whose value is shown; "two_off" and "two_on"
// a cell of two statements, which display parses into a syntax tree to
// split off its last expression.
func BenchmarkDisplay(b *testing.B) {
	off, on := false, true
	for _, bc := range []struct {
		name, code, want string
		display          *bool
	}{
		{"print_off", "print(1)", "1\n", &off},
		{"print_on", "print(1)", "1\n", &on},
		{"expr_on", "1", "1\n", &on},
		{"two_off", "x = 1\nprint(x)", "1\n", &off},
		{"two_on", "x = 1\nprint(x)", "1\n", &on},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := newTestAdapter(b, noPool)
			callLatency(b, a, newSession(b, a), port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: bc.code, DisplayValues: bc.display}, bc.want)
		})
	}
}

// BenchmarkStreamedOutput: a cell writing 1 MiB in 64 KiB flushed writes,
// its output returned at the end ("whole") or also handed to OnOutput as
// it is written ("streamed"): the cost of streaming in process.
func BenchmarkStreamedOutput(b *testing.B) {
	const code = "import sys\ns = 'x' * 65536\nfor _ in range(16):\n    sys.stdout.write(s)\n    sys.stdout.flush()"
	for _, streamed := range []bool{false, true} {
		name := "whole"
		if streamed {
			name = "streamed"
		}
		b.Run(name, func(b *testing.B) {
			a := newTestAdapter(b, func(c Config) Config { return noPool(c).WithOutputLimit(2 << 20) })
			id := newSession(b, a)
			ctx := context.Background()
			var got int
			req := port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code}
			if streamed {
				req.OnOutput = func(_ port.Stream, p []byte) { got += len(p) }
			}
			samples := make([]time.Duration, 0, b.N)
			for b.Loop() {
				got = 0
				t := time.Now()
				res, err := a.Execute(ctx, id, req)
				samples = append(samples, time.Since(t))
				if err != nil || len(res.Stdout) != 1<<20 || streamed && got != 1<<20 {
					b.Fatalf("%v: %d bytes, %d streamed, stderr %q", err, len(res.Stdout), got, res.Stderr)
				}
			}
			measure.Report(b, "call", samples)
		})
	}
}

// BenchmarkScientific: the scientific profile. "first_result": create a
// session and run a numpy expression (numpy is in the image, so this is a
// restore, not an import); "first_result_pandas": the same with a pandas
// DataFrame (the acceptance line of the scientific issue); "matmul200": a 200x200 float64 matrix product
// in a live session (numpy with OpenBLAS, steps/11-sci-openblas.sh); "idle_memory": resident
// memory per idle session that has used numpy, over 16 sessions.
func BenchmarkScientific(b *testing.B) {
	sci := func(pool int) func(Config) Config {
		return func(c Config) Config { return c.WithProfile("scientific").WithWarmPool(pool, nil) }
	}
	b.Run("first_result", func(b *testing.B) {
		firstResults(b, newTestAdapter(b, sci(1)), 1, "import numpy as np\nprint(np.arange(4).sum())", "6\n")
	})
	b.Run("first_result_pandas", func(b *testing.B) {
		firstResults(b, newTestAdapter(b, sci(1)), 1, "import numpy as np, pandas as pd\nprint(pd.DataFrame({'a': np.arange(3)}).a.sum())", "3\n")
	})
	b.Run("matmul200", func(b *testing.B) {
		a := newTestAdapter(b, sci(0))
		id := newSession(b, a)
		if _, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import numpy as np\nm = np.random.default_rng(0).random((200, 200))"}); err != nil {
			b.Fatal(err)
		}
		callLatency(b, a, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print((m @ m).shape)"}, "(200, 200)\n")
	})
	b.Run("idle_memory", func(b *testing.B) {
		sessionMemory(b, newTestAdapter(b, sci(0)), 16, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import numpy as np\nx = np.arange(1000).sum()"}, nil)
	})
}

// BenchmarkColdCompile: each profile's interpreter module compiled with an
// empty compilation cache, as a machine's first start (or a cache wiped)
// compiles it, on every core the process may use (GOMAXPROCS). What comes
// after the compile (the image, the first session) is measured elsewhere.
func BenchmarkColdCompile(b *testing.B) {
	for _, profile := range []string{"default", "scientific"} {
		b.Run(profile, func(b *testing.B) {
			py, ok := cpython.Lookup(profile)
			if !ok {
				b.Fatalf("profile %q is not linked into the test binary", profile)
			}
			ctx := context.Background()
			for b.Loop() {
				t0, c0 := time.Now(), measure.SelfCPU()
				rt, _, _, err := newInterpreterRuntime(ctx, py, wazero.NewCompilationCache(), DefaultSettings().MemoryLimit)
				d, cpu := time.Since(t0), measure.SelfCPU()-c0
				if err != nil {
					b.Fatal(err)
				}
				_ = rt.Close(ctx)
				// The compile leaves hundreds of MB of garbage (about 900 MB
				// for the scientific module), which the benchmarks after it
				// would otherwise pay to collect.
				settle()
				b.ReportMetric(d.Seconds(), "compile-s")
				// The CPU it took, which a busy machine stretches less than
				// the wall time: about compile-s × cores when both are free.
				b.ReportMetric(cpu.Seconds(), "compile-cpu-s")
				b.ReportMetric(float64(len(py.Module))/(1<<20), "module-MiB")
				b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
			}
		})
	}
}
