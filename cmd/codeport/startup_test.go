package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// The tests of this file run the codeport binary (built once per package,
// without the race detector, or handed over by make test), because what
// they check is a first start on an empty compilation cache: compiling
// under the race detector would take minutes and say nothing more.

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// codeportBinary is the binary those tests run.
func codeportBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "codeport-cmd-test-"); binErr == nil {
			binPath, binErr = wasmtest.BuildWorker(binDir)
		}
	})
	if binErr != nil {
		t.Fatalf("codeport binary: %v", binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// cacheListing names every file of a compilation cache directory with its
// size: a compile adds an entry, a load adds none.
func cacheListing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, fmt.Sprintf("%s %d", rel, fi.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// serveBinary runs `codeport serve` from the binary on a free loopback
// port with extra args, and returns its base URL and its log as soon as
// /healthz answers 200. It is stopped (SIGTERM) when the test ends.
func serveBinary(t *testing.T, args ...string) (string, *logtest.Buffer) {
	t.Helper()
	log := &logtest.Buffer{}
	cmd := exec.Command(codeportBinary(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--sessions-dir", t.TempDir()}, args...)...)
	cmd.Stderr = log
	cmd.Env = append(os.Environ(), "CODEPORT_CONFIG=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-done
	})
	base := "http://" + log.Await(t, serveAddr, done)
	awaitHealthy(t, base, done, log)
	return base, log
}

// A node started on an empty compilation cache says it is ready only once
// it has compiled everything it runs: a bash call made right after
// /healthz turns 200 is answered well within its own timeout, and
// compiles nothing (the cache gains no entry during it). Before, the
// first bash call waited for the shell to compile after readiness, 11 to
// 22 s past a 2 s timeout.
func TestFirstBashCallAfterReadyIsWarm(t *testing.T) {
	cache := t.TempDir()
	base, log := serveBinary(t, "--compile-cache-dir", cache)
	before := cacheListing(t, cache)
	if len(before) < 2 {
		t.Fatalf("ready with %d compiled modules in the cache, want the interpreter and the shell: %q\nlog:\n%s", len(before), before, log.String())
	}
	c := client(t, base, "")
	ctx := t.Context()
	s, err := c.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 10 * time.Second
	start := time.Now()
	res, err := c.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "echo ready", Timeout: timeout})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != port.OutcomeCompleted || res.Stdout != "ready\n" {
		t.Fatalf("first bash call: %s %q %q", res.Outcome, res.Stdout, res.Stderr)
	}
	if after := cacheListing(t, cache); !slices.Equal(before, after) {
		t.Errorf("the first bash call compiled something after readiness: cache %q, then %q", before, after)
	}
	if took >= timeout {
		t.Errorf("the first bash call took %s, not within its own %s timeout", took, timeout)
	}
	if !strings.Contains(log.String(), `msg="wasm modules ready" profile=default compiled=2 loaded_from_cache=0`) {
		t.Errorf("the start-up log does not say it compiled both modules:\n%s", log.String())
	}
}

var compiledLine = regexp.MustCompile(`(?m)^(interpreter \(profile default\)|shell)\s+[0-9.]+ MB, (compiled|already cached; loaded) in [0-9.]+s$`)

// `codeport compile` into an empty directory compiles the interpreter and
// the shell; a server started on that directory then loads both and
// compiles nothing; a second compile finds them cached.
func TestCompileThenServeCompilesNothing(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	compile := func() string {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(t.Context(), codeportBinary(t), "compile", "--compile-cache-dir", cache)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Env = append(os.Environ(), "CODEPORT_CONFIG=")
		if err := cmd.Run(); err != nil {
			t.Fatalf("codeport compile: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	out := compile()
	lines := compiledLine.FindAllStringSubmatch(out, -1)
	if len(lines) != 2 || lines[0][2] != "compiled" || lines[1][2] != "compiled" {
		t.Fatalf("codeport compile into an empty directory:\n%s", out)
	}
	compiled := cacheListing(t, cache)

	_, log := serveBinary(t, "--compile-cache-dir", cache)
	if !strings.Contains(log.String(), `msg="wasm modules ready" profile=default compiled=0 loaded_from_cache=2`) {
		t.Errorf("serve did not load both modules from the cache:\n%s", log.String())
	}
	// Serve keeps its interpreter image there too (image-cache), and a
	// mark of each module it loaded (codeport-loaded, empty files named
	// as the modules): not compiled code.
	var marks, wantMarks []string
	after := slices.DeleteFunc(cacheListing(t, cache), func(f string) bool {
		if name, ok := strings.CutPrefix(f, "codeport-loaded/"); ok {
			marks = append(marks, name)
			return true
		}
		return strings.HasPrefix(f, "codeport-images/")
	})
	if !slices.Equal(compiled, after) {
		t.Errorf("serve compiled into the cache: %q, then %q", compiled, after)
	}
	for _, f := range compiled {
		wantMarks = append(wantMarks, filepath.Base(strings.Fields(f)[0])+" 0")
	}
	if !slices.Equal(marks, wantMarks) {
		t.Errorf("serve marked %q loaded, want %q", marks, wantMarks)
	}

	out = compile()
	lines = compiledLine.FindAllStringSubmatch(out, -1)
	if len(lines) != 2 || lines[0][2] != "already cached; loaded" || lines[1][2] != "already cached; loaded" {
		t.Fatalf("codeport compile again:\n%s", out)
	}
}

func TestCompileUsage(t *testing.T) {
	ctx := t.Context()
	if code, _, errs := cli(t, ctx, "", "compile", "--compile-cache-dir", ""); code != 2 || !strings.Contains(errs, "no compilation cache directory") {
		t.Errorf("no cache directory: %d %q", code, errs)
	}
	if code, _, errs := cli(t, ctx, "", "compile", "extra"); code != 2 || !strings.Contains(errs, "unexpected arguments") {
		t.Errorf("extra argument: %d %q", code, errs)
	}
	if code, _, errs := cli(t, ctx, "", "compile", "--profile", "nope"); code != 2 || !strings.Contains(errs, "profile") {
		t.Errorf("unknown profile: %d %q", code, errs)
	}
	// A cache directory that cannot be made is an error, not a silent
	// compile in memory: the point of the command is the cache.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := cli(t, ctx, "", "compile", "--compile-cache-dir", filepath.Join(file, "sub")); code != 1 || !strings.Contains(errs, "compilation cache") {
		t.Errorf("unusable cache directory: %d %q", code, errs)
	}
}

// readyAt is a readiness the test controls.
type readyAt struct{ ch chan struct{} }

func (r readyAt) WaitReady(ctx context.Context) error {
	select {
	case <-r.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// exec's start-up report says nothing when the runtime is ready at once;
// when it is not, it says that it compiles and where the result is
// cached, then that it is ready.
func TestReportStartup(t *testing.T) {
	ready := readyAt{make(chan struct{})}
	close(ready.ch)
	var quiet bytes.Buffer
	reportStartup(t.Context(), ready, "/cache", &quiet)
	if quiet.Len() != 0 {
		t.Errorf("ready at once, it said: %q", quiet.String())
	}

	slow := readyAt{make(chan struct{})}
	log := &logtest.Buffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		reportStartup(t.Context(), slow, "/cache", log)
	}()
	log.Await(t, regexp.MustCompile(`codeport: compiling the Python runtime .*cached in /cache`), done)
	close(slow.ch)
	<-done
	if !strings.Contains(log.String(), "codeport: runtime ready after") {
		t.Errorf("no word that it is ready: %q", log.String())
	}

	// A start-up that fails or is abandoned ends the report too.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	reportStartup(ctx, readyAt{make(chan struct{})}, "", &quiet)
	if quiet.Len() != 0 {
		t.Errorf("abandoned at once, it said: %q", quiet.String())
	}
}

// A compilation cache directory that cannot be made costs start-up time,
// not service: the runtime compiles in memory and runs. (The binary, not
// the race-instrumented test, compiles here: an in-memory compile is the
// whole of this check, and it takes a minute under the race detector.)
func TestUnusableCompilationCacheFallsBackToMemory(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "not-a-directory")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), codeportBinary(t), "exec", "--sessions-dir", t.TempDir(),
		"--compile-cache-dir", filepath.Join(blocker, "cache"), "-c", "print('compiled in memory')")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "CODEPORT_CONFIG=")
	if err := cmd.Run(); err != nil || stdout.String() != "compiled in memory\n" {
		t.Fatalf("exec with an unusable cache: %v %q %q", err, stdout.String(), stderr.String())
	}
}
