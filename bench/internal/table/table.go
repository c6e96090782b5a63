// Package table turns the side-by-side benchmarks' results into the
// markdown tables of bench/results.md: it parses `go test -bench` output
// (the Go-driven peers) and merges the JSON of bench/monty_driver.py,
// bench/eryx_driver.py, bench/wasmtime_driver.py and bench/native_driver.py.
//
//	var r table.Results
//	if err := r.ParseGoBench(goTestOutput); err != nil { ... }
//	r.Add("monty", montyResults)
//	r.Add("eryx", eryxResults)
//	r.Add("wasmtime", wasmtimeResults)
//	r.Add("native", nativeResults)
//	r.NativePython, r.RuntimePython = "3.13.0", "3.13.5"
//	fmt.Print(r.Markdown())
package table

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Metrics are one peer's results for one workload, by unit.
type Metrics map[string]float64

// Results are the numbers by peer, then by workload (the benchmark's name
// without "Benchmark").
type Results struct {
	// Peers in the order they were first seen.
	Peers []string
	m     map[string]map[string]Metrics
	// failed holds "workload/peer" of the sub-benchmarks that failed.
	failed map[string]bool
	// NativePython is the version of the native CPython peer ("3.13.0"),
	// and RuntimePython codeport's runtime's ("3.13.5"): the text beside
	// the native numbers names both. Empty: unknown, and not said.
	NativePython, RuntimePython string
}

// The peers that are not codeport; every codeport column gets a ratio to
// each of them. native is CPython with no sandbox (of the runtime's version
// when the host has it; see Results.NativePython), measured for W5 and
// the scientific workloads only. wasmtime is codeport's own module under
// Wasmtime (bench/wasmtime_driver.py): the ceiling for the same build,
// measured for W5 and S1 only.
const (
	Monty     = "monty"
	Eryx      = "eryx"
	Wasmtime  = "wasmtime"
	Reference = "reference"
	Native    = "native"
)

// others are the peers each codeport column is compared with, in the
// table's order.
var others = []string{Monty, Eryx, Wasmtime, Reference}

// sectionOnly are the peers of others that run only the workloads of the
// main table's rows (and of the scientific table): the curve and the
// burst leave them out.
var sectionOnly = []string{Wasmtime}

var labels = map[string]string{
	"inproc":     "codeport in process",
	"http":       "codeport over HTTP",
	"subprocess": "codeport subprocess",
	// Workers bound to a tenant, several sessions each (WithTenantWorkers).
	"tenantworkers": "codeport subprocess, tenant workers",
	Monty:           "pydantic-monty",
	Eryx:            "eryx",
	Wasmtime:        "wasmtime (same module)",
	Reference:       "reference (otari)",
	Native:          "native CPython",
}

// Label is a peer's column heading.
func Label(peer string) string {
	if l, ok := labels[peer]; ok {
		return l
	}
	return peer
}

// Add records a peer's metrics by workload.
func (r *Results) Add(peer string, byWorkload map[string]Metrics) {
	for w, ms := range byWorkload {
		for unit, v := range ms {
			r.set(peer, w, unit, v)
		}
	}
	r.seen(peer)
}

func (r *Results) seen(peer string) {
	if !slices.Contains(r.Peers, peer) {
		r.Peers = append(r.Peers, peer)
	}
}

func (r *Results) set(peer, workload, unit string, v float64) {
	if r.m == nil {
		r.m = map[string]map[string]Metrics{}
	}
	if r.m[peer] == nil {
		r.m[peer] = map[string]Metrics{}
	}
	if r.m[peer][workload] == nil {
		r.m[peer][workload] = Metrics{}
	}
	r.m[peer][workload][unit] = v
	r.seen(peer)
}

// Get returns a peer's metrics for a workload (nil when it has none).
func (r *Results) Get(peer, workload string) Metrics {
	return r.m[peer][workload]
}

// Failed reports whether the workload's sub-benchmark for peer failed.
func (r *Results) Failed(peer, workload string) bool {
	return r.failed[workload+"/"+peer]
}

// AnyFailed reports whether any sub-benchmark failed.
func (r *Results) AnyFailed() bool { return len(r.failed) > 0 }

var (
	benchLine = regexp.MustCompile(`^Benchmark([^/\s]+)/(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)
	failLine  = regexp.MustCompile(`^\s*--- FAIL: Benchmark([^/\s]+)/(\S+)`)
)

// ParseGoBench reads `go test -bench` output whose benchmarks are named
// Benchmark<workload>/<peer> and report "value unit" pairs.
func (r *Results) ParseGoBench(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := failLine.FindStringSubmatch(line); m != nil {
			if r.failed == nil {
				r.failed = map[string]bool{}
			}
			r.failed[m[1]+"/"+m[2]] = true
			r.seen(m[2])
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		workload, peer := m[1], m[2]
		f := strings.Fields(m[3])
		if len(f)%2 != 0 {
			return fmt.Errorf("benchmark line with an odd number of fields: %q", line)
		}
		for i := 0; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return fmt.Errorf("benchmark line %q: %w", line, err)
			}
			if f[i+1] == "ns/op" {
				continue // one pass of a fixed number of samples: not a figure
			}
			r.set(peer, workload, f[i+1], v)
		}
		r.seen(peer)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading benchmark output: %w", err)
	}
	return nil
}

// The peers of the benchmarks of several nodes behind nginx
// (bench/multinode_test.go), which have a section of their own rather than
// columns of the main table.
const (
	Direct      = "direct"       // straight to one node of three
	Nginx       = "nginx"        // the same cluster through nginx
	OneDirect   = "1node-direct" // one node, no router
	OneNginx    = "1node-nginx"  // one node behind nginx
	ThreeNginx  = "3nodes-nginx" // three nodes behind nginx
	nginxPrefix = "Nginx"        // the workloads' names begin so
)

// ScaleNode is the peer of BenchmarkScale (bench/scale_test.go): one node
// holding many live and hibernated sessions, a section of its own.
const ScaleNode = "node"

// FloorPeer is the peer of BenchmarkHTTPFloor (bench/httpfloor_test.go):
// one in-process adapter called directly, behind a bare net/http handler,
// and behind codeport's server, in alternating blocks; a section of its own.
const FloorPeer = "floor"

var clusterPeers = []string{Direct, Nginx, OneDirect, OneNginx, ThreeNginx, ScaleNode, FloorPeer}

// Columns are the peers in the table's order: the Go-driven peers as they
// came, then monty, eryx, wasmtime and the reference; native and the
// cluster peers left out.
func (r *Results) Columns() []string {
	var cols []string
	for _, p := range r.Peers {
		if !slices.Contains(others, p) && p != Native && !slices.Contains(clusterPeers, p) {
			cols = append(cols, p)
		}
	}
	return append(cols, others...)
}

// codeport is the codeport columns: the ones compared with the peers.
func (r *Results) codeport() []string {
	var out []string
	for _, c := range r.Columns() {
		if !slices.Contains(others, c) {
			out = append(out, c)
		}
	}
	return out
}

// status is "absent", "failed", "n/a" or "" (there are numbers).
func (r *Results) status(peer, workload, unit string) string {
	if _, ok := r.m[peer]; !ok && !r.hasFailure(peer) {
		return "absent"
	}
	if r.Failed(peer, workload) {
		return "failed"
	}
	ms := r.Get(peer, workload)
	if _, ok := ms["absent"]; ok {
		return "absent"
	}
	if _, ok := ms[unit]; !ok {
		return "n/a"
	}
	return ""
}

func (r *Results) hasFailure(peer string) bool {
	for k := range r.failed {
		if strings.HasSuffix(k, "/"+peer) {
			return true
		}
	}
	return false
}

// row is one line of the main table: a latency (prefix-p50-ms and
// prefix-p95-ms) or a single value (unit).
type row struct {
	label, workload, prefix, unit string
	higherBetter                  bool
}

var rows = []row{
	{label: "W1 first result, warm pool hit (ms)", workload: "W1Warm", prefix: "first"},
	{label: "W1 first result, cold start (ms)", workload: "W1Cold", prefix: "first"},
	{label: "W2 `print(1)` in a live session (ms)", workload: "W2LiveCall", prefix: "call"},
	{label: "W3 create + call + destroy (ms)", workload: "W3CreateCallDestroy", prefix: "ccd"},
	{label: "W4 10 dependent cells, live session (ms)", workload: "W4TenCells", prefix: "cells"},
	{label: "W5 CPU loop, 10**6 squares (ms)", workload: "W5CPULoop", prefix: "loop"},
	{label: "W6 RSS per idle session (MiB)", workload: "W6IdleMemory", unit: "MiB/session"},
	{label: "W6 sessions/s, 2 clients (higher is better)", workload: "Curve", unit: "c2-sessions/s", higherBetter: true},
	{label: "W7 destroy a session that ran a call (ms)", workload: "W7Destroy", prefix: "destroy"},
	{label: "W8 bash `echo hi` in a live session (ms)", workload: "W8BashEcho", prefix: "bash"},
	{label: "W9 restore a 50 MB session to its first result (ms)", workload: "W9Restore", prefix: "restore"},
	{label: "W10 process start → `print(1)` → exit (ms)", workload: "W10ProcessStart", prefix: "start"},
}

// sciRows are the scientific profile's workloads, compared with native
// CPython only (the other peers run the default profile).
var sciRows = []row{
	{label: "S1 numpy 200×200 matmul (ms)", workload: "S1Matmul", prefix: "matmul"},
	{label: "S2 pandas groupby, 10**5 rows (ms)", workload: "S2Groupby", prefix: "groupby"},
	{label: "S3 sympy integrate(sin(x)**2), cache cleared (ms)", workload: "S3SympyIntegrate", prefix: "integrate"},
	{label: "S4 sympy solve of a quadratic, cache cleared (ms)", workload: "S4SympySolve", prefix: "solve"},
	{label: "S5 matplotlib chart saved as PNG (ms)", workload: "S5Chart", prefix: "chart"},
}

// key is the metric a row's ratios compare: the median, or the value.
func (w row) key() string {
	if w.unit != "" {
		return w.unit
	}
	return w.prefix + "-p50-ms"
}

func (r *Results) cell(peer string, w row) string {
	if s := r.status(peer, w.workload, w.key()); s != "" {
		return s
	}
	ms := r.Get(peer, w.workload)
	if w.unit != "" {
		return num(ms[w.unit])
	}
	return num(ms[w.prefix+"-p50-ms"]) + " / " + num(ms[w.prefix+"-p95-ms"])
}

func (r *Results) ratio(a, b string, w row) string {
	for _, p := range []string{a, b} {
		if s := r.status(p, w.workload, w.key()); s != "" {
			return s
		}
	}
	den := r.Get(b, w.workload)[w.key()]
	if den == 0 {
		return "n/a"
	}
	return "×" + num(r.Get(a, w.workload)[w.key()]/den)
}

// num prints a value with three significant digits or so.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

func mdRow(cells ...string) string { return "| " + strings.Join(cells, " | ") + " |\n" }

func mdHead(cells ...string) string {
	seps := make([]string, len(cells))
	for i := range seps {
		seps[i] = "---"
	}
	return mdRow(cells...) + mdRow(seps...)
}

// Markdown renders the tables: the workloads by peer (p50 / p95), the
// ratios of each codeport column to monty, eryx and the reference, the curve by
// concurrent clients, the burst, W5 against native CPython, and the
// scientific profile's workloads against native CPython.
func (r *Results) Markdown() string {
	var sb strings.Builder
	cols := r.Columns()

	sb.WriteString("### Workloads (p50 / p95 unless one value; lower is better unless noted)\n\n")
	head := []string{"workload"}
	for _, c := range cols {
		head = append(head, Label(c))
	}
	sb.WriteString(mdHead(head...))
	for _, w := range rows {
		cells := []string{w.label}
		for _, c := range cols {
			cells = append(cells, r.cell(c, w))
		}
		sb.WriteString(mdRow(cells...))
	}

	sb.WriteString("\n### Ratios: codeport ÷ peer, on the medians (×0.5 = codeport takes half the time; for sessions/s above ×1 is better)\n\n")
	head = []string{"workload"}
	for _, c := range r.codeport() {
		for _, o := range others {
			head = append(head, Label(c)+" ÷ "+Label(o))
		}
	}
	sb.WriteString(mdHead(head...))
	for _, w := range rows {
		cells := []string{w.label}
		for _, c := range r.codeport() {
			for _, o := range others {
				cells = append(cells, r.ratio(c, o, w))
			}
		}
		sb.WriteString(mdRow(cells...))
	}

	sessionCols := slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return slices.Contains(sectionOnly, c) })
	sb.WriteString("\n### Curve: first result p50 / p95 ms, and sessions/s, by concurrent clients (create + `print(1 + 1)` + destroy in a loop, default warm pool)\n\n")
	head = []string{"clients"}
	for _, c := range sessionCols {
		head = append(head, Label(c))
	}
	sb.WriteString(mdHead(head...))
	for _, n := range r.curveClients() {
		cells := []string{strconv.Itoa(n)}
		for _, c := range sessionCols {
			w := row{workload: "Curve", prefix: fmt.Sprintf("c%d", n)}
			s := r.cell(c, w)
			if rate, ok := r.Get(c, "Curve")[fmt.Sprintf("c%d-sessions/s", n)]; ok && r.status(c, "Curve", w.key()) == "" {
				s += " ms, " + num(rate) + "/s"
			}
			cells = append(cells, s)
		}
		sb.WriteString(mdRow(cells...))
	}

	sb.WriteString("\n### Burst: simultaneous create + first result against a warm pool\n\n")
	sb.WriteString(mdHead("peer", "pool", "requests", "p50 ms", "p95 ms", "max ms", "pool hits / cold starts"))
	for _, c := range sessionCols {
		if s := r.status(c, "Burst", "burst-p50-ms"); s != "" {
			sb.WriteString(mdRow(Label(c), s, "", "", "", "", ""))
			continue
		}
		ms := r.Get(c, "Burst")
		hits := "not observable"
		if h, ok := ms["hits"]; ok {
			hits = fmt.Sprintf("%.0f / %.0f", h, ms["misses"])
		}
		pool := fmt.Sprintf("%.0f", ms["pool"])
		if c == Reference {
			pool = "none"
		}
		sb.WriteString(mdRow(Label(c), pool, fmt.Sprintf("%.0f", ms["requests"]),
			num(ms["burst-p50-ms"]), num(ms["burst-p95-ms"]), num(ms["burst-max-ms"]), hits))
	}

	if nat := r.Get(Native, "W5CPULoop")["loop-p50-ms"]; nat > 0 {
		fmt.Fprintf(&sb, "\n### W5 against native CPython\n\nThe same loop in %s, no sandbox: %s ms p50. Each peer's W5 median ÷ that: ", r.nativeName(), num(nat))
		var parts []string
		for _, c := range cols {
			if s := r.status(c, "W5CPULoop", "loop-p50-ms"); s != "" {
				parts = append(parts, Label(c)+" "+s)
				continue
			}
			parts = append(parts, Label(c)+" ×"+num(r.Get(c, "W5CPULoop")["loop-p50-ms"]/nat))
		}
		sb.WriteString(strings.Join(parts, "; ") + ".\n")
		if s := r.ceiling(); s != "" {
			sb.WriteString("\n" + s)
		}
	}

	r.floorMarkdown(&sb)
	r.clusterMarkdown(&sb)
	r.scaleMarkdown(&sb)

	if r.Get("inproc", sciRows[0].workload) != nil || r.Failed("inproc", sciRows[0].workload) {
		sb.WriteString("\n### Scientific profile against native CPython (p50 / p95)\n\n" +
			"codeport in process with `--profile scientific`, each sample one Execute as a client sees it; " +
			"wasmtime (same module): the same scientific module under Wasmtime, each sample one call of its codeport_run export (S1 only); " +
			r.nativeName() + " with the same numpy and pandas versions (the wheels from PyPI: numpy with OpenBLAS and SIMD, " +
			"held to one thread), timed inside the interpreter.\n\n")
		sb.WriteString(mdHead("workload", Label("inproc"), Label(Wasmtime), Label(Native),
			"codeport ÷ wasmtime", "codeport ÷ native", "wasmtime ÷ native"))
		for _, w := range sciRows {
			sb.WriteString(mdRow(w.label, r.cell("inproc", w), r.cell(Wasmtime, w), r.cell(Native, w),
				r.ratio("inproc", Wasmtime, w), r.ratio("inproc", Native, w), r.ratio(Wasmtime, Native, w)))
		}
	}
	return sb.String()
}

// nativeName names the native peer in a sentence, with its version and,
// when that is not the runtime's major.minor, the runtime's.
func (r *Results) nativeName() string {
	if r.NativePython == "" {
		return "native CPython"
	}
	s := "native CPython " + r.NativePython
	if r.RuntimePython == "" {
		return s
	}
	if series(r.NativePython) == series(r.RuntimePython) {
		return s + " (the version of codeport's runtime, CPython " + r.RuntimePython + ")"
	}
	return s + " (not the version of codeport's runtime, CPython " + r.RuntimePython + ": no python" + series(r.RuntimePython) + " was found)"
}

// series is the "major.minor" of a version.
func series(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// ceiling is the sentence on what W5's gap is made of: codeport in
// process against its own module under Wasmtime (code generation and the
// host) and that against native CPython (the build and WebAssembly).
// Empty when either number is missing.
func (r *Results) ceiling() string {
	w := rows[slices.IndexFunc(rows, func(w row) bool { return w.workload == "W5CPULoop" })]
	inproc, wt := r.ratio("inproc", Wasmtime, w), r.ratio(Wasmtime, Native, w)
	if !strings.HasPrefix(inproc, "×") || !strings.HasPrefix(wt, "×") {
		return ""
	}
	return "The ceiling, on the same module: " + Label(Wasmtime) + " runs W5 in " + num(r.Get(Wasmtime, w.workload)[w.key()]) +
		" ms p50. Codeport in process ÷ that: " + inproc + " (wazero's code generation and codeport's host against Wasmtime's Cranelift); " +
		Label(Wasmtime) + " ÷ native: " + wt + " (what the build and WebAssembly cost with Cranelift's code).\n"
}

// curveClients are the client counts any peer reported, in order.
func (r *Results) curveClients() []int {
	var out []int
	for _, byW := range r.m {
		for unit := range byW["Curve"] {
			var n int
			if _, err := fmt.Sscanf(unit, "c%d-sessions/s", &n); err == nil && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// clusterRows are the workloads measured directly on a node and through
// nginx.
var clusterRows = []row{
	{label: "W2 `print(1)` in a live session (ms)", workload: nginxPrefix + "W2LiveCall", prefix: "call"},
	{label: "W3 create + call + destroy (ms)", workload: nginxPrefix + "W3CreateCallDestroy", prefix: "ccd"},
}

// clusterMarkdown renders the section of several nodes behind nginx: W2
// and W3 direct and through the router, then whole sessions per second
// and their CPU cost by cluster shape.
func (r *Results) clusterMarkdown(sb *strings.Builder) {
	sb.WriteString("\n### Several nodes behind nginx (deploy/nginx; p50 / p95)\n\n" +
		"Real `codeport serve` processes and Debian's nginx with the shipped configuration, on loopback, " +
		"driven by adapters/http with keep-alive. Direct: straight to one node of three; nginx: the same cluster through the router.\n\n")
	sb.WriteString(mdHead("workload", "direct to a node", "through nginx", "nginx ÷ direct"))
	for _, w := range clusterRows {
		sb.WriteString(mdRow(w.label, r.cell(Direct, w), r.cell(Nginx, w), r.ratio(Nginx, Direct, w)))
	}
	const sessions = nginxPrefix + "Sessions"
	clients := ""
	for _, p := range []string{OneDirect, OneNginx, ThreeNginx} {
		if n, ok := r.Get(p, sessions)["clients"]; ok {
			clients = fmt.Sprintf("%.0f ", n)
		}
	}
	fmt.Fprintf(sb, "\nWhole sessions (create + `print(1 + 1)` + destroy) from %sconcurrent clients; CPU is the nodes' and nginx's "+
		"processes' user + system time per session. The nodes share this machine's cores, so sessions/s cannot exceed the cores divided by the CPU per session, "+
		"however many nodes there are.\n\n", clients)
	sb.WriteString(mdHead("cluster", "sessions/s (higher is better)", "CPU ms per session", "first result ms"))
	labels := map[string]string{OneDirect: "1 node, direct", OneNginx: "1 node behind nginx", ThreeNginx: "3 nodes behind nginx"}
	for _, p := range []string{OneDirect, OneNginx, ThreeNginx} {
		rate := row{workload: sessions, unit: "sessions/s"}
		cpu := row{workload: sessions, unit: "cpu-ms/session"}
		first := row{workload: sessions, prefix: "first"}
		sb.WriteString(mdRow(labels[p], r.cell(p, rate), r.cell(p, cpu), r.cell(p, first)))
	}
	rate := row{workload: sessions, unit: "sessions/s", higherBetter: true}
	if s := r.ratio(ThreeNginx, OneNginx, rate); strings.HasPrefix(s, "×") {
		fmt.Fprintf(sb, "\n3 nodes ÷ 1 node behind nginx: %s the sessions/s, on %d cores.\n", s, runtime.NumCPU())
	}
}

// scaleMarkdown renders the section of one node at scale: the resident
// memory a live idle session adds, the disk a hibernated one takes, and a
// call to a random one of each. Nothing when BenchmarkScale did not run.
func (r *Results) scaleMarkdown(sb *strings.Builder) {
	const workload = "Scale"
	m := r.Get(ScaleNode, workload)
	failed := r.Failed(ScaleNode, workload)
	if m == nil && !failed {
		return
	}
	fmt.Fprintf(sb, "\n### One node at scale (bench/scale_test.go)\n\n"+
		"One in-process node behind its HTTP server on loopback, holding %s live idle sessions and %s hibernated ones, "+
		"each created by a client through the server and having run one call; calls go to a random session of each kind "+
		"(a call to a hibernated one wakes it).\n\n", num(m["live"]), num(m["hibernated"]))
	sb.WriteString(mdHead("measure", "value"))
	call := func(prefix string) string {
		if s := r.status(ScaleNode, workload, prefix+"-p50-ms"); s != "" {
			return s
		}
		return num(m[prefix+"-p50-ms"]) + " / " + num(m[prefix+"-p99-ms"])
	}
	one := func(unit string) string { return r.cell(ScaleNode, row{workload: workload, unit: unit}) }
	sb.WriteString(mdRow("resident memory per live idle session (MiB)", one("MiB/live-session")))
	sb.WriteString(mdRow("disk per hibernated session (KiB)", one("KiB/hibernated-session")))
	sb.WriteString(mdRow("call to a random live session, p50 / p99 (ms)", call("live-call")))
	sb.WriteString(mdRow("call to a random hibernated session, p50 / p99 (ms)", call("hibernated-call")))
}

// floorMarkdown renders the section of HTTP's cost per call against its
// floor: W2 in process, behind a bare net/http handler and behind
// codeport's server, and the differences of their medians. Nothing when
// BenchmarkHTTPFloor did not run.
func (r *Results) floorMarkdown(sb *strings.Builder) {
	const workload = "HTTPFloor"
	m := r.Get(FloorPeer, workload)
	failed := r.Failed(FloorPeer, workload)
	if m == nil && !failed {
		return
	}
	sb.WriteString("\n### HTTP per call against the net/http floor (W2 `print(1)`, one session, alternating blocks of 50 calls; p50 / p95)\n\n" +
		"The same in-process adapter and session three ways: called directly; behind the least a JSON-over-HTTP service is " +
		"(a net/http handler that decodes the code, calls Execute and encodes the output; a net/http client with keep-alive), " +
		"the floor no server and client code can go under; and behind codeport's server, driven by adapters/http.\n\n")
	sb.WriteString(mdHead("way", "ms", "over in process (ms)"))
	ways := []struct{ prefix, label string }{
		{"inproc", "in process"},
		{"nethttp", "bare net/http (the floor)"},
		{"codeport", "codeport over HTTP"},
	}
	base := m["inproc-p50-ms"]
	for _, w := range ways {
		over := ""
		if w.prefix != "inproc" && r.status(FloorPeer, workload, "inproc-p50-ms") == "" && r.status(FloorPeer, workload, w.prefix+"-p50-ms") == "" {
			over = num(m[w.prefix+"-p50-ms"] - base)
		}
		sb.WriteString(mdRow(w.label, r.cell(FloorPeer, row{workload: workload, prefix: w.prefix}), over))
	}
	if r.status(FloorPeer, workload, "codeport-p50-ms") == "" && r.status(FloorPeer, workload, "nethttp-p50-ms") == "" {
		fmt.Fprintf(sb, "\ncodeport's server and client add %s ms to the floor per call.\n", num(m["codeport-p50-ms"]-m["nethttp-p50-ms"]))
	}
}
