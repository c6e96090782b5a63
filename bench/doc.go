// Package bench measures codeport side by side with its peers: the same
// workloads, in one run, against every backend that is available.
//
// The package holds only benchmarks (bench_test.go and friends); they run
// with -bench and never under a plain `go test`. Each workload is one
// Benchmark function with one sub-benchmark per peer:
//
//   - inproc: the in-process wasm adapter;
//   - http: the same adapter behind server.NewHandler on a loopback
//     server, driven by adapters/http with keep-alive;
//   - subprocess: adapters/subprocess, each session in a worker process
//     running the codeport binary TestMain builds;
//   - tenantworkers: the same with tenant workers: each worker hosts up
//     to 8 sessions of one tenant at once and 256 in its life;
//   - reference: a running reference backend named by
//     CODEPORT_BENCH_REFERENCE_URL, driven by the same adapters/http client
//     (CODEPORT_BENCH_REFERENCE_PID, when set, lets its memory be read).
//
// Each sub-benchmark takes its own fixed number of samples per pass and
// reports medians and 95th percentiles as custom metrics (p50-ms, p95-ms,
// MiB/session, c<N>-sessions/s, ...). A peer that is not there reports the
// metric "absent"; one that cannot run a workload reports "na". Run one
// pass with -benchtime 1x; CODEPORT_BENCH_SCALE (default 1) scales the
// sample counts.
//
// The workloads: W1 a new session's first result (warm pool, cold), W2
// a call in a live session, W3 create + call + destroy, W4 ten dependent
// cells, W5 a CPU loop, W6 idle memory and sessions per second
// (workloads_test.go); and a session's lifecycle apart (lifecycle_test.go):
// W7 ending a session, W8 the bash tool's `echo hi`, W9 restoring a
// 50 MB session to its first result (in process only), W10 a process
// started to `print(1)` and gone (`codeport exec`; the Python peers
// start an interpreter that imports theirs).
//
// The scientific profile's workloads (S1 numpy matmul, S2 pandas groupby,
// S3 sympy integrate, S4 sympy solve, S5 a matplotlib chart saved as PNG)
// run on two peers only: inproc with
// --profile scientific, and native, CPython in a cached virtual
// environment with the package versions the profile's Describe lists (installed by pip on first use;
// "absent" without python3 or pip): the interpreter CODEPORT_BENCH_NATIVE_PYTHON
// names, which bench/cmd/sidebyside sets to one of the runtime's version
// (python3.13), else the host's python3.
//
// BenchmarkScale (scale_test.go) fills one in-process node through its
// server with CODEPORT_BENCH_LIVE live idle sessions (default 1,000) and
// CODEPORT_BENCH_HIBERNATED hibernated ones (default 10,000), and reports
// the memory and disk they take and the latency of a call to a random one
// of each kind; it is not in the side-by-side table (no peer holds as
// many).
//
// BenchmarkHTTPFloor (httpfloor_test.go) puts HTTP's cost per call beside
// its floor: W2 on one in-process session called directly, behind a bare
// net/http JSON handler with a net/http client (the least any server and
// client can cost), and behind codeport's server with adapters/http, in
// alternating blocks; a section of its own.
//
// Several nodes behind nginx (multinode_test.go) have workloads of their
// own, named Nginx*, on real `codeport serve` processes and Debian's nginx
// with deploy/nginx's configuration: W2 and W3 straight to a node of a
// three-node cluster ("direct") and through nginx ("nginx"), and whole
// sessions per second with their CPU time per session (the nodes' and
// nginx's processes, from /proc) on one node directly, one node behind
// nginx and three nodes behind nginx (CODEPORT_BENCH_NGINX_CLIENTS
// clients, default 6). They are skipped, with the reason, where nginx is
// not installed.
//
// The table is made by bench/cmd/sidebyside, which runs these benchmarks,
// drives pydantic-monty through bench/monty_driver.py and eryx (pyeryx)
// through bench/eryx_driver.py for the same workloads, runs W5 and S1 on
// codeport's own WebAssembly module under Wasmtime through
// bench/wasmtime_driver.py (the ceiling of the same build: the same module,
// WASI setup, exports and in-guest driver, with Cranelift's code instead of
// wazero's), times W5 in native CPython of the runtime's version through
// bench/native_driver.py, and writes bench/results.md (`make bench`):
//
//	go test -run '^$' -bench . -benchtime 1x ./bench        # the numbers alone
//	go run ./bench/cmd/sidebyside -out bench/results.md    # the table
package bench
