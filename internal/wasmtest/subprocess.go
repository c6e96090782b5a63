package wasmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testcache"
	"github.com/codeport/codeport/port"
)

// BuildWorker builds the codeport binary into dir, for the subprocess
// adapter's workers: a test binary cannot be one (under -race it could
// not run under an address-space limit), so tests run the real command.
// Call it once per test binary, from TestMain.
func BuildWorker(dir string) (string, error) {
	bin := filepath.Join(dir, "codeport")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/codeport/codeport/cmd/codeport")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build codeport: %v\n%s", err, out)
	}
	return bin, nil
}

// NewSubprocess starts a subprocess adapter whose workers are bin (from
// BuildWorker) over the embedded runtime, with tweak applied to its
// configuration and opts to its port; it waits until its minimum of
// workers is up and closes it when t ends.
func NewSubprocess(t testing.TB, bin string, tweak func(subprocess.Config) subprocess.Config, opts ...port.Option) *port.Port {
	t.Helper()
	wc := wasm.NewConfig().WithCompilationCacheDir(testcache.Dir())
	cfg := subprocess.NewConfig().WithWorkerCommand(bin, "worker").WithWasm(wc).WithSessionsDir(t.TempDir())
	if tweak != nil {
		cfg = tweak(cfg)
	}
	a, err := subprocess.New(cfg, opts...)
	if err != nil {
		t.Fatalf("subprocess.New: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("subprocess adapter Close: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatalf("subprocess adapter WaitReady: %v", err)
	}
	return a
}

// MainWithWorker is a TestMain body for tests that need a worker binary:
// when build is true it builds one into a temporary directory and sets
// *bin (left empty, with the reason on stderr, if the build fails), runs
// the tests, and removes it. It returns the exit code for os.Exit.
func MainWithWorker(m *testing.M, build bool, bin *string) int {
	var dir string
	if build {
		var err error
		if dir, err = os.MkdirTemp("", "codeport-worker-bin-"); err == nil {
			*bin, err = BuildWorker(dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "no worker binary:", err)
		}
	}
	code := m.Run()
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
	return code
}
