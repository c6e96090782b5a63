package table

import (
	"strings"
	"testing"
)

const goOutput = `goos: linux
pkg: github.com/codeport/codeport/bench
BenchmarkW1Warm/inproc-2         	       1	6905591970 ns/op	         1.543 first-p50-ms	         1.705 first-p95-ms
BenchmarkW1Warm/http-2           	       1	6510014528 ns/op	         4.586 first-p50-ms	         4.825 first-p95-ms
BenchmarkW1Warm/subprocess-2     	       1	      1335 ns/op	         1.000 absent
BenchmarkW1Warm/reference-2      	       1	  86000000 ns/op	        30.86 first-p50-ms	        40.00 first-p95-ms
BenchmarkW6IdleMemory/inproc-2   	       1	5854653318 ns/op	         9.975 MiB/session
--- FAIL: BenchmarkW6IdleMemory/reference
    workloads_test.go:138: boom
BenchmarkCurve/inproc-2          	       1	26311533954 ns/op	         1.123 c1-p50-ms	       488.5 c1-p95-ms	         3.974 c1-sessions/s	         1.310 c2-p50-ms	       742.8 c2-p95-ms	         5.205 c2-sessions/s
BenchmarkW5CPULoop/inproc-2      	       1	1900000000 ns/op	       350.0 loop-p50-ms	       360.0 loop-p95-ms
BenchmarkS1Matmul/inproc-2       	       1	 500000000 ns/op	        24.00 matmul-p50-ms	        26.00 matmul-p95-ms
BenchmarkS1Matmul/native-2       	       1	 400000000 ns/op	         0.400 matmul-p50-ms	         0.500 matmul-p95-ms
BenchmarkS2Groupby/inproc-2      	       1	 500000000 ns/op	        30.00 groupby-p50-ms	        33.00 groupby-p95-ms
BenchmarkS2Groupby/native-2      	       1	      1335 ns/op	         1.000 absent
BenchmarkNginxW2LiveCall/direct-2     	       1	 207949349 ns/op	         0.6677 call-p50-ms	         1.020 call-p95-ms
BenchmarkNginxW2LiveCall/nginx-2      	       1	 237216921 ns/op	         0.7687 call-p50-ms	         1.085 call-p95-ms
--- FAIL: BenchmarkNginxW3CreateCallDestroy/nginx
BenchmarkNginxSessions/1node-direct-2              	       1	5985810743 ns/op	         6.000 clients	         5.623 cpu-ms/session	        16.42 first-p50-ms	        51.33 first-p95-ms	       147.1 sessions/s
BenchmarkNginxSessions/1node-nginx-2               	       1	6008894597 ns/op	         6.000 clients	         4.961 cpu-ms/session	        16.76 first-p50-ms	        63.25 first-p95-ms	       153.1 sessions/s
BenchmarkNginxSessions/3nodes-nginx-2              	       1	6009564081 ns/op	         6.000 clients	         5.339 cpu-ms/session	        11.67 first-p50-ms	        28.84 first-p95-ms	       217.4 sessions/s
BenchmarkScale/node-2             	       1	90000000000 ns/op	         0.9000 hibernated-call-p50-ms	         3.100 hibernated-call-p95-ms	         4.200 hibernated-call-p99-ms	        10000 hibernated	         9.500 KiB/hibernated-session	         1000 live	         0.3100 live-call-p50-ms	         0.5000 live-call-p95-ms	         0.7100 live-call-p99-ms	         3.500 MiB/live-session
BenchmarkHTTPFloor/floor-2        	       1	 600000000 ns/op	         0.1000 inproc-p50-ms	         0.1400 inproc-p95-ms	         0.2100 nethttp-p50-ms	         0.2600 nethttp-p95-ms	         0.2800 codeport-p50-ms	         0.3500 codeport-p95-ms
BenchmarkBurst/inproc-2          	       1	15781189689 ns/op	      2406 burst-max-ms	      1840 burst-p50-ms	      2360 burst-p95-ms	         6.000 hits	        18.00 misses	         2.000 pool	        24.00 requests
FAIL
`

func TestParseAndRender(t *testing.T) {
	var r Results
	if err := r.ParseGoBench(strings.NewReader(goOutput)); err != nil {
		t.Fatal(err)
	}
	if got := r.Get("inproc", "W1Warm")["first-p50-ms"]; got != 1.543 {
		t.Errorf("inproc W1Warm p50 = %v", got)
	}
	if _, ok := r.Get("inproc", "W1Warm")["ns/op"]; ok {
		t.Error("ns/op kept")
	}
	if !r.Failed("reference", "W6IdleMemory") || !r.AnyFailed() {
		t.Error("failure not recorded")
	}
	r.Add(Monty, map[string]Metrics{"W1Warm": {"first-p50-ms": 0.5, "first-p95-ms": 0.6}})
	r.Add(Eryx, map[string]Metrics{
		"W1Warm": {"first-p50-ms": 0.25, "first-p95-ms": 0.4},
		"Burst":  {"burst-p50-ms": 8, "burst-p95-ms": 14, "burst-max-ms": 18, "requests": 24, "pool": 2, "hits": 6, "misses": 18},
	})
	r.Add(Wasmtime, map[string]Metrics{
		"W5CPULoop": {"loop-p50-ms": 400, "loop-p95-ms": 420},
		"S1Matmul":  {"matmul-p50-ms": 20, "matmul-p95-ms": 22},
	})
	r.Add(Native, map[string]Metrics{"W5CPULoop": {"loop-p50-ms": 80, "loop-p95-ms": 90}})
	r.NativePython, r.RuntimePython = "3.13.0", "3.13.5"
	if got, want := strings.Join(r.Columns(), ","), "inproc,http,subprocess,monty,eryx,wasmtime,reference"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	md := r.Markdown()
	for _, want := range []string{
		"| W1 first result, warm pool hit (ms) | 1.54 / 1.71 | 4.59 / 4.83 | absent | 0.500 / 0.600 | 0.250 / 0.400 | n/a | 30.9 / 40.0 |",
		"| W5 CPU loop, 10**6 squares (ms) | 350 / 360 | n/a | n/a | n/a | n/a | 400 / 420 | n/a |",
		"| W6 RSS per idle session (MiB) | 9.97 | n/a | n/a | n/a | n/a | n/a | failed |",
		"| W1 first result, warm pool hit (ms) | ×3.09 | ×6.17 | n/a | ×0.050 | ×9.17 | ×18.3 | n/a | ×0.149 | absent | absent | absent | absent |",
		"| W5 CPU loop, 10**6 squares (ms) | n/a | n/a | ×0.875 | n/a |",
		"| codeport in process ÷ pydantic-monty | codeport in process ÷ eryx | codeport in process ÷ wasmtime (same module) | codeport in process ÷ reference (otari) |",
		"| clients | codeport in process | codeport over HTTP | codeport subprocess | pydantic-monty | eryx | reference (otari) |\n",
		"| 2 | 1.31 / 743 ms, 5.21/s |",
		"The same loop in native CPython 3.13.0 (the version of codeport's runtime, CPython 3.13.5), no sandbox: 80.0 ms p50.",
		"codeport in process ×4.38; codeport over HTTP n/a; codeport subprocess n/a; pydantic-monty n/a; eryx n/a; wasmtime (same module) ×5.00; reference (otari) n/a.",
		"wasmtime (same module) runs W5 in 400 ms p50. Codeport in process ÷ that: ×0.875",
		"wasmtime (same module) ÷ native: ×5.00",
		"| codeport in process | 2 | 24 | 1840 | 2360 | 2406 | 6 / 18 |",
		"| pydantic-monty | n/a |",
		"| eryx | 2 | 24 | 8.00 | 14.0 | 18.0 | 6 / 18 |",
		"| S1 numpy 200×200 matmul (ms) | 24.0 / 26.0 | 20.0 / 22.0 | 0.400 / 0.500 | ×1.20 | ×60.0 | ×50.0 |",
		"| S2 pandas groupby, 10**5 rows (ms) | 30.0 / 33.0 | n/a | absent | n/a | absent | n/a |",
		"| W2 `print(1)` in a live session (ms) | 0.668 / 1.02 | 0.769 / 1.08 | ×1.15 |",
		"| W3 create + call + destroy (ms) | n/a | failed | failed |",
		"from 6 concurrent clients",
		"| 1 node, direct | 147 | 5.62 | 16.4 / 51.3 |",
		"| 3 nodes behind nginx | 217 | 5.34 | 11.7 / 28.8 |",
		"3 nodes ÷ 1 node behind nginx: ×1.42 the sessions/s",
		"holding 1000 live idle sessions and 10000 hibernated ones",
		"| resident memory per live idle session (MiB) | 3.50 |",
		"| disk per hibernated session (KiB) | 9.50 |",
		"| call to a random live session, p50 / p99 (ms) | 0.310 / 0.710 |",
		"| call to a random hibernated session, p50 / p99 (ms) | 0.900 / 4.20 |",
		"| in process | 0.100 / 0.140 |  |",
		"| bare net/http (the floor) | 0.210 / 0.260 | 0.110 |",
		"| codeport over HTTP | 0.280 / 0.350 | 0.180 |",
		"codeport's server and client add 0.070 ms to the floor per call.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestNativeOfAnotherVersion(t *testing.T) {
	r := Results{NativePython: "3.11.7", RuntimePython: "3.13.5"}
	r.Add("inproc", map[string]Metrics{"W5CPULoop": {"loop-p50-ms": 350, "loop-p95-ms": 360}})
	r.Add(Native, map[string]Metrics{"W5CPULoop": {"loop-p50-ms": 85, "loop-p95-ms": 90}})
	md := r.Markdown()
	for _, want := range []string{
		"native CPython 3.11.7 (not the version of codeport's runtime, CPython 3.13.5: no python3.13 was found), no sandbox",
		"wasmtime (same module) absent; reference (otari) absent.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "The ceiling") {
		t.Errorf("a ceiling without the wasmtime peer:\n%s", md)
	}
}

func TestOddFieldsIsAnError(t *testing.T) {
	var r Results
	if err := r.ParseGoBench(strings.NewReader("BenchmarkW2LiveCall/inproc-2 1 100 ns/op 3\n")); err == nil {
		t.Fatal("no error")
	}
}

func TestMissingPeerIsAbsent(t *testing.T) {
	var r Results
	if err := r.ParseGoBench(strings.NewReader(goOutput)); err != nil {
		t.Fatal(err)
	}
	if md := r.Markdown(); !strings.Contains(md, "| W1 first result, warm pool hit (ms) | 1.54 / 1.71 | 4.59 / 4.83 | absent | absent | absent | absent | 30.9 / 40.0 |") {
		t.Errorf("monty, eryx and wasmtime not shown absent:\n%s", md)
	}
}
