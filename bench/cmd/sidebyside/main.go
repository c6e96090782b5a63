// Command sidebyside runs codeport's side-by-side benchmarks (package
// bench) and the same workloads on pydantic-monty and eryx, W5 and S1 on
// codeport's own module under Wasmtime (the ceiling of the same build) and
// W5 in native CPython of the runtime's version, prints the table and
// writes it, with a description of the machine, to bench/results.md.
//
//	go run ./bench/cmd/sidebyside -out bench/results.md   # what `make bench` runs
//	CODEPORT_BENCH_REFERENCE_URL=http://127.0.0.1:18080 go run ./bench/cmd/sidebyside
//
// pydantic-monty runs in a virtual environment under the user's cache
// directory (codeport/bench-venv-...), built on first use with python3 -m
// venv and pip; without python3 or pip its column is absent. eryx (pyeryx)
// runs the same way in a virtual environment of its own on the first of
// python3.13 and python3.12 that runs (its only wheel is cp312-abi3);
// without one its column is absent.
//
// The native reference is CPython of the runtime's own version
// (python3.13, found as eryx's is): bench/native_driver.py times W5 in it,
// and the scientific benchmarks' native peer uses it too
// (CODEPORT_BENCH_NATIVE_PYTHON); without it, the host's python3, and the
// table says which version it is. The wasmtime column (bench/wasmtime_driver.py)
// runs in a virtual environment of its own with the pinned wasmtime, made
// with that same interpreter; without it, or if pip fails, the column is
// absent.
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

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/bench/internal/table"
)

// montyVersion is the pydantic-monty the comparison pins (1.5.0 does not
// install: its client package was never published at that version).
const montyVersion = "1.4.0"

// eryxVersion is the pyeryx (eryx's Python package: CPython 3.14 in
// Wasmtime) the comparison pins.
const eryxVersion = "0.11.0"

// eryxPythons are the interpreters tried, in order, for eryx's environment:
// pyeryx's only wheel is cp312-abi3, so it needs a Python >= 3.12.
var eryxPythons = []string{"python3.13", "python3.12"}

// wasmtimeVersion is the wasmtime package (Wasmtime's Python embedding)
// that runs codeport's own module for the ceiling column.
const wasmtimeVersion = "51.0.0"

// nativePythonEnv names the interpreter the scientific benchmarks' native
// peer runs (bench/scientific_test.go), set for `go test` to the native
// reference found here.
const nativePythonEnv = "CODEPORT_BENCH_NATIVE_PYTHON"

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
	res.RuntimePython = wasm.RuntimeVersion
	notes := []string{}

	native, err := nativePython(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "native CPython absent:", err)
		notes = append(notes, "native CPython absent: "+firstLine(err.Error()))
	} else {
		if native.note != "" {
			fmt.Fprintln(os.Stderr, "native CPython:", native.note)
			notes = append(notes, native.note)
		}
		env = append(env, nativePythonEnv+"="+native.path)
	}

	fmt.Println("== go test -bench ./bench (codeport in process, over HTTP, subprocess, tenant workers, reference)")
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

	fmt.Println("== eryx (pyeryx)", eryxVersion)
	eryxMeta, err := eryx(ctx, root, env, &res)
	if err != nil {
		fmt.Fprintln(os.Stderr, "eryx column absent:", err)
		notes = append(notes, "eryx absent: "+firstLine(err.Error()))
	} else if o := eryxMeta["omitted"]; o != "" {
		notes = append(notes, "eryx cannot run: "+o)
	}

	fmt.Println("== wasmtime", wasmtimeVersion, "(codeport's own module)")
	wasmtimeMeta, err := wasmtimeColumn(ctx, root, env, native, &res)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmtime column absent:", err)
		notes = append(notes, "wasmtime absent: "+firstLine(err.Error()))
	} else if o := wasmtimeMeta["omitted"]; o != "" {
		notes = append(notes, "wasmtime cannot run: "+o)
	}

	if native.path != "" {
		fmt.Println("== native CPython", native.version)
		var o nativeOutput
		if err := runDriver(ctx, root, env, native.path, "native_driver.py", &o); err != nil {
			fmt.Fprintln(os.Stderr, "native CPython absent:", err)
			notes = append(notes, "native CPython absent: "+firstLine(err.Error()))
		} else {
			res.Add(table.Native, o.Native)
			res.NativePython = o.Meta["python"]
		}
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
	doc := document(ctx, md, meta, eryxMeta, wasmtimeMeta, res.NativePython, notes, elapsed)
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
	Monty map[string]table.Metrics `json:"monty"`
	Meta  map[string]string        `json:"meta"`
}

// monty runs the driver in the pinned environment and adds its columns.
func monty(ctx context.Context, root string, env []string, res *table.Results) (map[string]string, error) {
	py, err := montyPython(ctx)
	if err != nil {
		return nil, err
	}
	var o montyOutput
	if err := runDriver(ctx, root, env, py, "monty_driver.py", &o); err != nil {
		return nil, err
	}
	res.Add(table.Monty, o.Monty)
	return o.Meta, nil
}

// eryxOutput is what bench/eryx_driver.py prints.
type eryxOutput struct {
	Eryx map[string]table.Metrics `json:"eryx"`
	Meta map[string]string        `json:"meta"`
}

// eryx runs its driver in the pinned environment and adds its column.
func eryx(ctx context.Context, root string, env []string, res *table.Results) (map[string]string, error) {
	py, err := eryxPython(ctx)
	if err != nil {
		return nil, err
	}
	var o eryxOutput
	if err := runDriver(ctx, root, env, py, "eryx_driver.py", &o); err != nil {
		return nil, err
	}
	res.Add(table.Eryx, o.Eryx)
	return o.Meta, nil
}

// wasmtimeOutput is what bench/wasmtime_driver.py prints.
type wasmtimeOutput struct {
	Wasmtime map[string]table.Metrics `json:"wasmtime"`
	Meta     map[string]string        `json:"meta"`
}

// wasmtimeColumn runs the Wasmtime driver in the pinned environment, made
// with the native reference's interpreter (the host's python3 without
// one), and adds its column.
func wasmtimeColumn(ctx context.Context, root string, env []string, native nativeRef, res *table.Results) (map[string]string, error) {
	python, v := native.path, native.version
	if python == "" {
		var err error
		if python, err = exec.LookPath("python3"); err != nil {
			return nil, fmt.Errorf("python3 is not on PATH: %w", err)
		}
		if v, err = pythonVersion(ctx, python); err != nil {
			return nil, fmt.Errorf("python3 does not run: %w", err)
		}
	}
	py, err := venvPython(ctx, python, fmt.Sprintf("py%s-wasmtime%s", series(v), wasmtimeVersion), "wasmtime=="+wasmtimeVersion)
	if err != nil {
		return nil, err
	}
	var o wasmtimeOutput
	if err := runDriver(ctx, root, env, py, "wasmtime_driver.py", &o); err != nil {
		return nil, err
	}
	res.Add(table.Wasmtime, o.Wasmtime)
	return o.Meta, nil
}

// nativeOutput is what bench/native_driver.py prints.
type nativeOutput struct {
	Native map[string]table.Metrics `json:"native"`
	Meta   map[string]string        `json:"meta"`
}

// nativeRef is the interpreter of the native reference: its path, its
// "major.minor", and a note when it is not of the runtime's version.
type nativeRef struct {
	path, version, note string
}

// nativePython finds the native reference: python<major.minor> of the
// runtime's version (through pyenv if its shim does not run it, as
// findPython does), or else the host's python3, with a note saying so.
func nativePython(ctx context.Context) (nativeRef, error) {
	want := series(wasm.RuntimeVersion)
	name := "python" + want
	path, v, err := findPython(ctx, name, 0, 0)
	if err == nil && v == want {
		return nativeRef{path: path, version: v}, nil
	}
	why := fmt.Sprintf("%s is Python %s", path, v)
	if err != nil {
		why = err.Error()
	}
	python3, lookErr := exec.LookPath("python3")
	if lookErr != nil {
		return nativeRef{}, fmt.Errorf("no %s (%s) and python3 is not on PATH", name, why)
	}
	v3, err := pythonVersion(ctx, python3)
	if err != nil {
		return nativeRef{}, fmt.Errorf("no %s (%s) and python3 does not run: %v", name, why, firstLine(err.Error()))
	}
	note := fmt.Sprintf("native CPython is the host's python3, Python %s, not the runtime's %s: %s", v3, want, firstLine(why))
	return nativeRef{path: python3, version: v3, note: note}, nil
}

// series is the "major.minor" of a version.
func series(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// runDriver runs bench/<script> with py and decodes the JSON it prints
// into out.
func runDriver(ctx context.Context, root string, env []string, py, script string, out any) error {
	cmd := exec.CommandContext(ctx, py, filepath.Join(root, "bench", script))
	cmd.Dir, cmd.Env, cmd.Stderr = root, env, os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("bench/%s: %w", script, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("bench/%s output: %w", script, err)
	}
	return nil
}

// montyPython returns the python of a cached virtual environment with the
// pinned pydantic-monty, building it on first use.
func montyPython(ctx context.Context) (string, error) {
	python3, err := exec.LookPath("python3")
	if err != nil {
		return "", fmt.Errorf("python3 is not on PATH: %w", err)
	}
	v, err := pythonVersion(ctx, python3)
	if err != nil {
		return "", fmt.Errorf("python3 does not run: %w", err)
	}
	return venvPython(ctx, python3, fmt.Sprintf("py%s-monty%s", v, montyVersion), "pydantic-monty=="+montyVersion)
}

// eryxPython returns the python of a cached virtual environment with the
// pinned pyeryx, building it on first use on the first of eryxPythons that
// runs and is at least 3.12.
func eryxPython(ctx context.Context) (string, error) {
	var tried []string
	for _, name := range eryxPythons {
		python, v, err := findPython(ctx, name, 3, 12)
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		return venvPython(ctx, python, fmt.Sprintf("py%s-eryx%s", v, eryxVersion), "pyeryx=="+eryxVersion)
	}
	return "", fmt.Errorf("no Python >= 3.12 for pyeryx (its only wheel is cp312-abi3): %s", strings.Join(tried, "; "))
}

// findPython returns the path and "major.minor" version of the
// interpreter name on PATH, when it runs and is at least major.minor. A
// pyenv shim whose version is not the selected one does not run ("pyenv:
// python3.12: command not found"); then the interpreter is the one of
// the last pyenv version that has name (pyenv whence lists them in version
// order; pyenv prefix gives its directory).
func findPython(ctx context.Context, name string, major, minor int) (string, string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", "", fmt.Errorf("%s is not on PATH", name)
	}
	v, err := pythonVersion(ctx, path)
	if err != nil {
		alt, altErr := pyenvPython(ctx, name)
		if altErr != nil {
			return "", "", fmt.Errorf("%s does not run (%v) and %v", name, firstLine(err.Error()), altErr)
		}
		if v, err = pythonVersion(ctx, alt); err != nil {
			return "", "", fmt.Errorf("%s does not run: %v", alt, firstLine(err.Error()))
		}
		path = alt
	}
	var gotMajor, gotMinor int
	if _, err := fmt.Sscanf(v, "%d.%d", &gotMajor, &gotMinor); err != nil {
		return "", "", fmt.Errorf("%s: version %q: %w", path, v, err)
	}
	if gotMajor < major || gotMajor == major && gotMinor < minor {
		return "", "", fmt.Errorf("%s is Python %s, older than %d.%d", path, v, major, minor)
	}
	return path, v, nil
}

// pyenvPython is name in the last pyenv version that has it.
func pyenvPython(ctx context.Context, name string) (string, error) {
	pyenv, err := exec.LookPath("pyenv")
	if err != nil {
		return "", errors.New("pyenv is not on PATH")
	}
	out, err := exec.CommandContext(ctx, pyenv, "whence", name).Output()
	versions := strings.Fields(string(out))
	if err != nil || len(versions) == 0 {
		return "", fmt.Errorf("no pyenv version has %s", name)
	}
	version := versions[len(versions)-1]
	prefix, err := exec.CommandContext(ctx, pyenv, "prefix", version).Output()
	if err != nil {
		return "", fmt.Errorf("pyenv prefix %s: %w", version, err)
	}
	return filepath.Join(strings.TrimSpace(string(prefix)), "bin", name), nil
}

// pythonVersion is the "major.minor" of the interpreter at path.
func pythonVersion(ctx context.Context, path string) (string, error) {
	cmd := exec.CommandContext(ctx, path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	v, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(v)), nil
}

// venvPython returns the python of the cached virtual environment
// bench-venv-<tag> made with python and holding requirement (a pinned
// package name), building it on first use.
func venvPython(ctx context.Context, python, tag, requirement string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	parent := filepath.Join(cache, "codeport")
	dir := filepath.Join(parent, "bench-venv-"+tag)
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
		{python, "-m", "venv", dir},
		{py, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet", requirement},
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
func document(ctx context.Context, md string, meta, eryxMeta, wasmtimeMeta map[string]string, nativeVersion string, notes []string, elapsed time.Duration) string {
	var sb strings.Builder
	sb.WriteString("# Side-by-side benchmarks\n\n")
	sb.WriteString("Written by `make bench` (bench/cmd/sidebyside); do not edit by hand. " +
		"Each workload runs on every peer in one run; see bench/doc.go and bench/workloads_test.go for what each measures, " +
		"bench/monty_driver.py for pydantic-monty, bench/eryx_driver.py for eryx, bench/wasmtime_driver.py for wasmtime (same module), " +
		"bench/native_driver.py for native CPython's W5.\n\n")
	sb.WriteString("Peers: codeport in process (adapters/wasm, CPython 3.13 on wazero); codeport over HTTP (the same behind " +
		"server.NewHandler on a loopback server, client adapters/http with keep-alive); codeport subprocess (adapters/subprocess: each session in a worker process of its own, idle workers kept warm; its memory is this process and its workers); " +
		"codeport subprocess, tenant workers (the same, each worker hosting up to 8 sessions of one tenant at once and 256 in its life, " +
		"its interpreter reset to the image between them: tenants share no process, a tenant's sessions do; the benchmark's sessions are one tenant's); " +
		"pydantic-monty (its worker pool, driven from Python); " +
		"eryx (pyeryx: CPython 3.14 in Wasmtime inside the Python process that drives it; W1 warm, W3, the curve and the burst lease " +
		"stateless sandboxes from its SandboxPool, which refills only on demand; W1 cold, W2, W4, W5 and W6 use a fresh eryx.Session, " +
		"its only stateful kind, of which it keeps no pool; concurrent clients are threads, as execute releases the GIL; " +
		"its memory is that one process); wasmtime (same module): codeport's own python.wasm (and for S1 its scientific module), byte for byte, " +
		"run by Wasmtime from Python with the same WASI setup, exports and driver, W5 and S1 only: the ceiling of the same build; " +
		"native CPython: the runtime's own version with no sandbox, W5 and the scientific profile only; the reference backend (otari-sandbox-container, one CPython " +
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
		fmt.Fprintf(&sb, "- pydantic-monty %s on Python %s\n", meta["monty_version"], meta["python"])
	}
	if nativeVersion != "" {
		fmt.Fprintf(&sb, "- native CPython %s (codeport's runtime: CPython %s)\n", nativeVersion, wasm.RuntimeVersion)
	}
	if eryxMeta != nil {
		fmt.Fprintf(&sb, "- pyeryx %s (sandbox CPython %s) on Python %s; the driver's first session, off the clock: %s ms; its SandboxFactory: %s\n",
			eryxMeta["eryx_version"], eryxMeta["sandbox_python"], eryxMeta["python"], eryxMeta["first_session_ms"], eryxMeta["factory"])
	}
	if wasmtimeMeta != nil {
		fmt.Fprintf(&sb, "- wasmtime %s (sandbox CPython %s) on Python %s; its modules, off the clock: %s; env.invoke_ calls per S1 sample: %s\n",
			wasmtimeMeta["wasmtime_version"], wasmtimeMeta["sandbox_python"], wasmtimeMeta["python"], wasmtimeMeta["modules"], wasmtimeMeta["s1_invokes_per_call"])
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
		"`go test -run '^$' -bench . -benchtime 1x ./bench`, `bench/monty_driver.py` in a pinned pydantic-monty environment, " +
		"`bench/eryx_driver.py` in a pinned pyeryx environment, `bench/wasmtime_driver.py` in a pinned wasmtime environment " +
		"and `bench/native_driver.py` in the native CPython.\n")
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
