package wasmshell_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/workspace"
)

// engines holds one engine per memory limit and grace period for the
// package's tests; they share one cache of the compiled shell: the tests'
// shared file cache (internal/testkit/testcache), which make test fills outside
// the race detector, or one in memory when there is none. Compiling the
// shell under -race took 50 of this package's 72 CPU seconds.
var engines struct {
	sync.Mutex
	m     map[engineKey]*wasmshell.Engine
	cache wazero.CompilationCache
}

type engineKey struct {
	memory int64
	grace  time.Duration // 0: the engine's default
}

func engine(t *testing.T, key engineKey) *wasmshell.Engine {
	t.Helper()
	engines.Lock()
	defer engines.Unlock()
	if e := engines.m[key]; e != nil {
		return e
	}
	e, err := wasmshell.NewEngine(context.Background(), wasmshell.Config{MemoryBytes: key.memory, Grace: key.grace, Cache: cacheLocked()})
	if err != nil {
		t.Fatal(err)
	}
	if engines.m == nil {
		engines.m = map[engineKey]*wasmshell.Engine{}
	}
	engines.m[key] = e
	return e
}

// cache is the package's compilation cache (see engines).
func cache() wazero.CompilationCache {
	engines.Lock()
	defer engines.Unlock()
	return cacheLocked()
}

func cacheLocked() wazero.CompilationCache {
	if engines.cache == nil {
		engines.cache = testcache.Cache()
	}
	return engines.cache
}

func newShell(t *testing.T, memory int64) (*wasmshell.Shell, string) {
	t.Helper()
	return newShellGrace(t, memory, 0)
}

// newShellGrace is newShell with the given grace period before a shell
// that does not stop is ended (0: the default).
func newShellGrace(t *testing.T, memory int64, grace time.Duration) (*wasmshell.Shell, string) {
	t.Helper()
	dir, ws, tmp := shellDirs(t)
	sh, err := engine(t, engineKey{memory, grace}).Start(wasmshell.Options{Workspace: ws, Tmp: tmp, MaxFileBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	return sh, dir
}

func run(t *testing.T, sh *wasmshell.Shell, ctx context.Context, cmd string) (string, string, wasmshell.Result) {
	t.Helper()
	var out, errb strings.Builder
	res, err := sh.Run(ctx, cmd, &out, &errb)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return out.String(), errb.String(), res
}

func TestStateFilesAndPipes(t *testing.T) {
	sh, ws := newShell(t, 128<<20)
	ctx := context.Background()
	if out, errOut, res := run(t, sh, ctx, "x=5; f() { echo f$1; }; cd /tmp && echo data > /workspace/f.txt && echo hi | cat"); out != "hi\n" || errOut != "" || res != (wasmshell.Result{}) {
		t.Fatalf("first call: %q %q %+v", out, errOut, res)
	}
	out, errOut, res := run(t, sh, ctx, "echo $x $(f 1) $(pwd) $$; while true; do echo y; done | head -3; ls /workspace")
	if want := "5 f1 /tmp 3\ny\ny\ny\nf.txt\n"; out != want || errOut != "" || res.Code != 0 {
		t.Fatalf("second call: %q %q %+v, want %q", out, errOut, res, want)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "f.txt")); err != nil || string(b) != "data\n" {
		t.Fatalf("the file the shell wrote: %q %v", b, err)
	}
	if _, errOut, res := run(t, sh, ctx, "exit 3"); res.Code != 3 || errOut != "" {
		t.Fatalf("exit 3: %+v %q", res, errOut)
	}
}

func TestDeadlineAndCancellation(t *testing.T) {
	// The guest polls the host's stop at every command: a grace far above
	// what any load delays that by means that a shell ended by force
	// (Lost) did not poll, not that the machine was busy (the default 2 s
	// was reached under load).
	sh, _ := newShellGrace(t, 128<<20, 100*time.Second)
	ctx := context.Background()
	run(t, sh, ctx, "kept=yes")
	for _, cmd := range []string{"sleep 1000; echo no", "while :; do :; done", "yes > /dev/null", "sleep 1000 | cat"} {
		tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		out, _, res := run(t, sh, tctx, cmd)
		cancel()
		if res.Stop != wasmshell.StopDeadline || res.Code != 124 || out != "" {
			t.Errorf("%s: %+v %q, want the deadline's stop and 124", cmd, res, out)
		}
		if res.Lost {
			t.Errorf("%s: the shell was ended, but it polls the host's stop", cmd)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, _, res := run(t, sh, cctx, "sleep 1000"); res.Stop != wasmshell.StopCancelled || res.Code != 130 {
		t.Errorf("cancelled: %+v", res)
	}
	if _, _, res := run(t, sh, cctx, "echo x > f"); res.Code != 130 {
		t.Errorf("an ended context runs nothing: %+v", res)
	}
	if out, _, _ := run(t, sh, ctx, "echo $kept; ls"); out != "yes\n" {
		t.Errorf("after the stops: %q, want the state kept and no file f", out)
	}
	// A loop that never runs a command never polls: the host ends the
	// guest after its grace period, and the next call has a fresh shell.
	sh, _ = newShell(t, 128<<20)
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, _, res := run(t, sh, tctx, "for ((;;)); do x=1; done"); res.Stop != wasmshell.StopDeadline || res.Code != 124 {
		t.Errorf("busy loop: %+v", res)
	}
	if out, _, res := run(t, sh, ctx, "echo alive"); out != "alive\n" || res.Code != 0 {
		t.Errorf("after the busy loop: %q %+v", out, res)
	}
}

// A memory bomb ends its own shell, within the memory limit, while another
// session's shell in the same engine goes on undisturbed.
func TestMemoryBombIsConfined(t *testing.T) {
	bomb, _ := newShell(t, 64<<20)
	other, _ := newShell(t, 64<<20)
	ctx := context.Background()
	var wg sync.WaitGroup
	var otherOut string
	var otherRes wasmshell.Result
	wg.Go(func() {
		var out, errb strings.Builder
		res, err := other.Run(ctx, "n=0; for i in $(seq 20000); do n=$((n+i)); done; echo $n", &out, &errb)
		if err != nil {
			t.Error(err)
		}
		otherOut, otherRes = out.String(), res
	})
	for _, cmd := range []string{`x=a; while true; do x=$x$x; done`, `x=$(yes | head -c 2000000000); echo ${#x}`} {
		_, errOut, res := run(t, bomb, ctx, cmd)
		switch {
		case res.OutOfMemory && res.Lost:
		case strings.Contains(cmd, "head -c") && res.Code == 0 && strings.Contains(errOut, "command substitution output over"):
			// MaxFileBytes caps $(...) before memory runs out.
		default:
			t.Errorf("%s: %+v %.200q, want out of memory", cmd, res, errOut)
		}
		if m := bomb.MemoryBytes(); m > 64<<20 {
			t.Errorf("%s: memory %d over the limit", cmd, m)
		}
	}
	wg.Wait()
	if otherOut != "200010000\n" || otherRes.Code != 0 || otherRes.Lost {
		t.Errorf("the other session: %q %+v", otherOut, otherRes)
	}
	if out, _, res := run(t, bomb, ctx, "echo again"); out != "again\n" || res.Code != 0 {
		t.Errorf("after the bomb: %q %+v", out, res)
	}
}

// What would have ended the gateway when the shell ran in its process ends
// one guest now; the next call gets a fresh shell.
func TestCrashesAreConfined(t *testing.T) {
	sh, _ := newShell(t, 64<<20)
	ctx := context.Background()
	for _, cmd := range []string{
		// regexp.MustCompile panics inside the interpreter, in a
		// pipeline goroutine.
		`p=$(printf "@(%.0s" $(seq 1100))x$(printf ")%.0s" $(seq 1100)); [[ x == $p ]] | cat`,
		// A pipeline per level of recursion: goroutines without end.
		`f() { f | cat; }; f`,
		`f() { f; }; f`,
	} {
		tctx, cancel := testwait.Context(t)
		_, errOut, res := run(t, sh, tctx, cmd)
		cancel()
		switch {
		case res.Lost && res.Code != 0:
		case res.Code == 1 && strings.Contains(errOut, "maximum function nesting level exceeded"):
			// The shell's stack guard refused first.
		default:
			t.Errorf("%.40s: %+v %.200q, want the guest lost or the recursion refused", cmd, res, errOut)
		}
		if out, _, res := run(t, sh, ctx, "echo next"); out != "next\n" || res.Code != 0 {
			t.Errorf("%.40s: the next call: %q %+v", cmd, out, res)
		}
	}
}

func TestTrimCrashReport(t *testing.T) {
	for in, want := range map[string]string{
		"mine\nruntime: out of memory: cannot allocate\nfatal error: out of memory\n\ngoroutine 1 [running]:\nx\n": "mine\nruntime: out of memory: cannot allocate\nfatal error: out of memory\n",
		"fatal error: stack overflow\n\nruntime stack:\nruntime.throw\n":                                           "fatal error: stack overflow\n",
		"fatal error: mine, no dump\nmore\n":                                                                       "fatal error: mine, no dump\nmore\n",
		"plain\n":                                                                                                  "plain\n",
	} {
		if got := wasmshell.TrimCrashReport(in); got != want {
			t.Errorf("TrimCrashReport(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClosedShell(t *testing.T) {
	sh, _ := newShell(t, 64<<20)
	run(t, sh, context.Background(), "echo started")
	sh.Close()
	sh.Close()
	if _, err := sh.Run(context.Background(), "echo x", nil, nil); !errors.Is(err, wasmshell.ErrClosed) {
		t.Fatalf("Run after Close: %v", err)
	}
}

// shellDirs are a shell's workspace and temporary directory: fresh
// directories under one 64 MiB quota, and the workspace's path.
func shellDirs(t *testing.T) (wsPath string, ws, tmp experimentalsys.FS) {
	t.Helper()
	dir := t.TempDir()
	wsDir, tmpDir := filepath.Join(dir, "ws"), filepath.Join(dir, "tmp")
	for _, d := range []string{wsDir, tmpDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	q := workspace.NewQuota(64 << 20)
	return wsDir, workspace.NewSysFS(wsDir, q), workspace.NewSysFS(tmpDir, q)
}
