package wasmtest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// BuildWorker builds the codeport binary into dir, for the subprocess
// adapter's workers: a test binary cannot be one (under -race it could
// not run under an address-space limit), so tests run the real command.
// Call it once per test binary, from TestMain.
//
// When $CODEPORT_TEST_BINARY names a built codeport (`make test` builds
// one before the tests, outside the race detector), that binary is
// copied instead of building one per test package.
func BuildWorker(dir string) (string, error) {
	bin := filepath.Join(dir, "codeport")
	if prebuilt := os.Getenv(TestBinaryEnv); prebuilt != "" {
		if err := copyExecutable(prebuilt, bin); err != nil {
			return "", fmt.Errorf("$%s: %w", TestBinaryEnv, err)
		}
		return bin, nil
	}
	cmd := exec.Command("go", "build", "-o", bin, "github.com/codeport/codeport/cmd/codeport")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build codeport: %v\n%s", err, out)
	}
	return bin, nil
}

// TestBinaryEnv names the environment variable through which `make test`
// hands the tests a codeport binary it built.
const TestBinaryEnv = "CODEPORT_TEST_BINARY"

// copyExecutable copies the binary src to dst (a copy, not a link: a test
// may remove its directory, and the binary must be the one it checked).
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", src)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// KillGrace is the kill grace of NewSubprocess's adapters: far above what
// load adds to a stopped call's answer, and below the test binary's
// timeout.
const KillGrace = 100 * time.Second

// NewSubprocess starts a subprocess adapter whose workers are bin (from
// BuildWorker) over the embedded runtime, with tweak applied to its
// configuration and opts to its port; it waits until its minimum of
// workers is up and closes it when t ends.
//
// Its kill grace (how long past a call's deadline a worker that has not
// answered is killed, 2 s by default) is KillGrace: a worker starved of
// CPU beside a loaded machine's other work took longer than 2 s to answer
// a call it had stopped, and was killed, its session lost, in the
// conformance suite's deep-tree check. A test of the grace itself sets
// its own in tweak.
func NewSubprocess(t testing.TB, bin string, tweak func(subprocess.Config) subprocess.Config, opts ...port.Option) *port.Port {
	t.Helper()
	wc := wasm.NewConfig().WithCompilationCacheDir(testcache.Dir())
	cfg := subprocess.NewConfig().WithWorkerCommand(bin, "worker").WithWasm(wc).WithSessionsDir(t.TempDir()).
		WithKillGrace(KillGrace)
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
	// Workers compile the runtime (or load it from the cache) as they
	// start, for minutes under load: no deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
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
