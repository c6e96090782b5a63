// Command sidebyside runs codeport's side-by-side benchmarks (package
// bench) and the same workloads on pydantic-monty, prints the table and
// writes it, with a description of the machine, to bench/results.md.
//
//	go run ./bench/cmd/sidebyside -out bench/results.md   # what `make bench` runs
//	CODEPORT_BENCH_REFERENCE_URL=http://127.0.0.1:18080 go run ./bench/cmd/sidebyside
//
// pydantic-monty runs in a virtual environment under the user's cache
// directory (codeport/bench-venv-...), built on first use with python3 -m
// venv and pip; without python3 or pip its column is absent.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/codeport/codeport/bench/internal/table"
)

// montyVersion is the pydantic-monty the comparison pins (1.5.0 does not
// install: its client package was never published at that version).
const montyVersion = "1.4.0"

func main() {
	out := flag.String("out", "", "write the results to this markdown file (relative to the module root)")
	scale := flag.Float64("scale", 1, "multiply the sample counts (CODEPORT_BENCH_SCALE)")
	force := flag.Bool("force", false, "write the file even when a benchmark failed")
	flag.Parse()
	if err := run(*out, *scale, *force); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

func run(out string, scale float64, force bool) error {
	start := time.Now()
	ctx := context.Background()
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	env := append(os.Environ(), fmt.Sprintf("CODEPORT_BENCH_SCALE=%g", scale))

	var res table.Results
	notes := []string{}

	fmt.Println("== go test -bench ./bench (codeport in process, over HTTP, subprocess, reference)")
	goOut, goErr := goBench(ctx, root, env)
	if err := res.ParseGoBench(bytes.NewReader(goOut)); err != nil {
		return err
	}

	fmt.Println("== pydantic-monty", montyVersion)
	meta, err := monty(ctx, root, env, &res)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pydantic-monty column absent:", err)
		notes = append(notes, "pydantic-monty absent: "+firstLine(err.Error()))
	}

	md := res.Markdown()
	elapsed := time.Since(start).Round(time.Second)
	fmt.Println()
	fmt.Print(md)
	fmt.Printf("\n(total %s)\n", elapsed)

	if goErr != nil {
		notes = append(notes, "go test failed: "+goErr.Error())
	}
	if out == "" {
		return goErr
	}
	if (goErr != nil || res.AnyFailed()) && !force {
		return fmt.Errorf("not writing %s: a benchmark failed (-force writes it anyway): %w", out, errors.Join(goErr, errors.New("see the output above")))
	}
	doc := document(ctx, md, meta, notes, elapsed)
	path := out
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	fmt.Println("wrote", out)
	return nil
}

func moduleRoot(ctx context.Context) (string, error) {
	b, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the codeport module")
	}
	return filepath.Dir(gomod), nil
}

// goBench runs the bench package's benchmarks, one pass each, echoing
// their output as it comes.
func goBench(ctx context.Context, root string, env []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", ".", "-benchtime", "1x",
		"-count", "1", "-timeout", "30m", "./bench")
	cmd.Dir, cmd.Env, cmd.Stderr = root, env, os.Stderr
	var buf bytes.Buffer
	cmd.Stdout = io.MultiWriter(os.Stdout, &buf)
	if err := cmd.Run(); err != nil {
		return buf.Bytes(), fmt.Errorf("go test -bench ./bench: %w", err)
	}
	return buf.Bytes(), nil
}

// montyOutput is what bench/monty_driver.py prints.
type montyOutput struct {
	Monty  map[string]table.Metrics `json:"monty"`
	Native map[string]table.Metrics `json:"native"`
	Meta   map[string]string        `json:"meta"`
}

// monty runs the driver in the pinned environment and adds its columns.
func monty(ctx context.Context, root string, env []string, res *table.Results) (map[string]string, error) {
	py, err := montyPython(ctx)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, py, filepath.Join(root, "bench", "monty_driver.py"))
	cmd.Dir, cmd.Env, cmd.Stderr = root, env, os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bench/monty_driver.py: %w", err)
	}
	var o montyOutput
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("bench/monty_driver.py output: %w", err)
	}
	res.Add(table.Monty, o.Monty)
	res.Add(table.Native, o.Native)
	return o.Meta, nil
}

// montyPython returns the python of a cached virtual environment with the
// pinned pydantic-monty, building it on first use.
func montyPython(ctx context.Context) (string, error) {
	python3, err := exec.LookPath("python3")
	if err != nil {
		return "", fmt.Errorf("python3 is not on PATH: %w", err)
	}
	v, err := exec.CommandContext(ctx, python3, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		return "", fmt.Errorf("python3 does not run: %w", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	parent := filepath.Join(cache, "codeport")
	dir := filepath.Join(parent, fmt.Sprintf("bench-venv-py%s-monty%s", strings.TrimSpace(string(v)), montyVersion))
	py := filepath.Join(dir, "bin", "python")
	const marker = ".codeport-bench-complete"
	if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
		return py, nil
	}
	fmt.Println("building", dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	_ = os.RemoveAll(dir) // a half-built one
	steps := [][]string{
		{python3, "-m", "venv", dir},
		{py, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet", "pydantic-monty==" + montyVersion},
	}
	for _, s := range steps {
		if msg, err := exec.CommandContext(ctx, s[0], s[1:]...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s: %w\n%s", strings.Join(s, " "), err, msg)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, marker), nil, 0o644); err != nil {
		return "", fmt.Errorf("marking the environment complete: %w", err)
	}
	return py, nil
}

// document is bench/results.md: the table, the machine, the command.
func document(ctx context.Context, md string, meta map[string]string, notes []string, elapsed time.Duration) string {
	var sb strings.Builder
	sb.WriteString("# Side-by-side benchmarks\n\n")
	sb.WriteString("Written by `make bench` (bench/cmd/sidebyside); do not edit by hand. " +
		"Each workload runs on every peer in one run; see bench/doc.go and bench/workloads_test.go for what each measures, " +
		"bench/monty_driver.py for pydantic-monty.\n\n")
	sb.WriteString("Peers: codeport in process (adapters/wasm, CPython 3.13 on wazero); codeport over HTTP (the same behind " +
		"server.NewHandler on a loopback server, client adapters/http with keep-alive); codeport subprocess (adapters/subprocess: each session in a worker process of its own, idle workers kept warm; its memory is this process and its workers); " +
		"pydantic-monty (its worker pool, driven from Python); the reference backend (otari-sandbox-container, one CPython " +
		"subprocess per session, driven by the same adapters/http client as codeport over HTTP). " +
		"\"absent\": the peer is not there; \"n/a\": it cannot run or report that workload. " +
		"The reference has no warm pool: its two W1 rows measure the same path twice. " +
		"Codeport in process starts every session from an interpreter image made once per process (a restore, not a boot); " +
		"its warm pool holds restored interpreters and refills in the background after a take, " +
		"so on a 2-core host a refill competes with the session's first calls (W3).\n\n")
	sb.WriteString(md)
	sb.WriteString("\n## Machine\n\n")
	fmt.Fprintf(&sb, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&sb, "- nproc: %d\n", runtime.NumCPU())
	fmt.Fprintf(&sb, "- CPU: %s\n", procField("/proc/cpuinfo", "model name"))
	fmt.Fprintf(&sb, "- RAM: %s\n", procField("/proc/meminfo", "MemTotal"))
	fmt.Fprintf(&sb, "- kernel: %s\n", strings.TrimSpace(readFile("/proc/sys/kernel/osrelease")))
	gv, _ := exec.CommandContext(ctx, "go", "version").Output()
	fmt.Fprintf(&sb, "- go: %s\n", strings.TrimSpace(string(gv)))
	if meta != nil {
		fmt.Fprintf(&sb, "- pydantic-monty %s on Python %s; native CPython %s\n", meta["monty_version"], meta["python"], meta["native_python"])
	}
	if u := os.Getenv("CODEPORT_BENCH_REFERENCE_URL"); u != "" {
		fmt.Fprintf(&sb, "- reference backend at %s (same machine)\n", u)
	}
	fmt.Fprintf(&sb, "- total run time: %s\n", elapsed)
	for _, n := range notes {
		fmt.Fprintf(&sb, "- note: %s\n", n)
	}
	sb.WriteString("\n## Command\n\n```sh\n")
	var vars []string
	if os.Getenv("CODEPORT_BENCH_REFERENCE_URL") != "" {
		vars = append(vars, "CODEPORT_BENCH_REFERENCE_URL="+os.Getenv("CODEPORT_BENCH_REFERENCE_URL"))
	}
	if os.Getenv("CODEPORT_BENCH_REFERENCE_PID") != "" {
		vars = append(vars, "CODEPORT_BENCH_REFERENCE_PID=<its pid>")
	}
	fmt.Fprintf(&sb, "%s\n```\n\n", strings.TrimSpace(strings.Join(append(vars, "make bench"), " ")))
	sb.WriteString("which runs `go run ./bench/cmd/sidebyside -out bench/results.md`, i.e. " +
		"`go test -run '^$' -bench . -benchtime 1x ./bench` and `bench/monty_driver.py` in a pinned pydantic-monty environment.\n")
	return sb.String()
}

// procField is the value of the first "name: value" line of a /proc file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return string(b)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
