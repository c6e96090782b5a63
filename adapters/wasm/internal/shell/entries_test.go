package shell

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/workspace"
)

// The shell's mkdir, rmdir, rm -r and mv make and remove directories
// through the workspace, so they count against the session's entry limit
// as Python's do: made directly, they escaped it.
func TestShellDirectoriesCountAgainstTheEntryLimit(t *testing.T) {
	q := workspace.NewQuota(1 << 20).WithEntryLimit(3)
	root := filepath.Join(t.TempDir(), "ws")
	if _, err := workspace.New(root, q); err != nil {
		t.Fatal(err)
	}
	shell, err := guestEngine(t).Start(wasmshell.Options{
		Workspace: workspace.NewSysFS(root, q), Tmp: workspace.NewSysFS(t.TempDir(), q), MaxFileBytes: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer shell.Close()
	sh := testShell{shell}
	run := func(cmd string) (string, int) {
		t.Helper()
		ctx, cancel := testwait.Context(t)
		defer cancel()
		var out, errb bytes.Buffer
		code, err := sh.Run(ctx, cmd, &out, &errb)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return out.String() + errb.String(), code
	}
	if out, code := run("mkdir a b c"); code != 0 {
		t.Fatalf("three directories within the limit: %d %s", code, out)
	}
	// The guest sees EIO (WASI has no ENOSPC a host can return); the
	// adapter adds the cause to the call's stderr.
	if out, code := run("mkdir d"); code == 0 || !strings.Contains(out, "mkdir: cannot create directory 'd'") {
		t.Fatalf("a fourth directory over the limit of 3: %d %q", code, out)
	}
	if out, code := run("mkdir -p e/f"); code == 0 {
		t.Fatalf("mkdir -p over the limit: %d %q", code, out)
	}
	if got := q.Entries(); got != 3 {
		t.Fatalf("%d entries counted, want 3", got)
	}
	if out, code := run("rmdir a && mv b c/b && rm -r c && mkdir x y"); code != 0 {
		t.Fatalf("removing gives entries back: %d %s", code, out)
	}
	if got := q.Entries(); got != 2 {
		t.Fatalf("%d entries counted after the removals, want 2", got)
	}
}
