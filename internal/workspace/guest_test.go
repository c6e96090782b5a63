package workspace

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// TestGuestThroughWazero runs a real WASI program (testdata/guest, built for
// wasip1 with the Go toolchain) against two NewSysFS mounts sharing a quota.
func TestGuestThroughWazero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasip1 program")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go toolchain to build the guest: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "guest.wasm")
	build := exec.Command(goBin, "build", "-o", bin, "./testdata/guest")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the guest: %v\n%s", err, out)
	}
	wasm, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	q := NewQuota(100)
	base := t.TempDir()
	ws, err := New(filepath.Join(base, "ws"), q)
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := New(filepath.Join(base, "tmp"), q)
	if err != nil {
		t.Fatal(err)
	}
	// The interpreter: compiling the guest under -race takes far longer.
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	fsConfig := wazero.NewFSConfig().(sysfs.FSConfig).
		WithSysFSMount(NewSysFS(ws.Root(), q), GuestRoot).(sysfs.FSConfig).
		WithSysFSMount(NewSysFS(tmp.Root(), q), "/tmp")
	var stdout, stderr bytes.Buffer
	cfg := wazero.NewModuleConfig().WithFSConfig(fsConfig).
		WithStdout(&stdout).WithStderr(&stderr).WithArgs("guest")
	if _, err := r.InstantiateWithConfig(ctx, wasm, cfg); err != nil {
		t.Fatalf("guest: %v\n%s", err, stderr.String())
	}

	want := `write a.txt: ok
open b.txt: ok
b.txt took 50 bytes
write b.txt: EIO
truncate b.txt: ok
close b.txt: ok
symlink: EPERM
link: EPERM
write /tmp/t.txt: ok
rename b.txt over a.txt: ok
rewrite a.txt: ok
remove /tmp/t.txt: ok
open app.log: ok
app.log took 97 bytes
append app.log: EIO
close app.log: ok
`
	if stdout.String() != want {
		t.Errorf("guest output:\n%s\nwant:\n%s", stdout.String(), want)
	}
	if q.Used() != 100 || diskUsage(t, ws.Root()) != 100 || diskUsage(t, tmp.Root()) != 0 {
		t.Errorf("Used %d, on disk %d + %d; want 100, 100 + 0", q.Used(), diskUsage(t, ws.Root()), diskUsage(t, tmp.Root()))
	}
	if q.Refusals() != 2 {
		t.Errorf("Refusals = %d, want 2", q.Refusals())
	}
	if _, err := os.Lstat(filepath.Join(ws.Root(), "link")); err == nil {
		t.Error("the guest made a symlink")
	}
}
