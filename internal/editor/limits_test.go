package editor

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// The editor says which limit refused a path or a file, from the
// workspace's typed errors: not a size limit for a full entry count, not
// "not valid UTF-8" for an over-long name.
func TestEditorNamesTheLimitThatRefused(t *testing.T) {
	ws, err := workspace.New(filepath.Join(t.TempDir(), "ws"), workspace.NewQuota(1<<20).WithEntryLimit(2))
	if err != nil {
		t.Fatal(err)
	}
	ed := New(ws, Options{MaxFileBytes: 1 << 20, MaxHistoryBytes: 1 << 20})
	text := "x\n"
	create := func(path string) Output {
		t.Helper()
		out, err := ed.Run(port.EditorInput{Command: port.EditorCreate, Path: path, FileText: &text})
		if err != nil {
			t.Fatalf("create %s: %v", path, err)
		}
		return out
	}
	for _, p := range []string{"a.txt", "b.txt"} {
		if out := create(p); out.ReturnCode != 0 {
			t.Fatalf("create %s: %q", p, out.Stderr)
		}
	}
	if out := create("c.txt"); out.ReturnCode == 0 || !strings.Contains(out.Stderr, "limit of 2 files and directories") {
		t.Errorf("over the entry limit: %q", out.Stderr)
	}
	long := strings.Repeat("n", 300) + ".txt"
	if out := create(long); out.ReturnCode == 0 || !strings.Contains(out.Stderr, "304 bytes long, over the limit of 255") {
		t.Errorf("an over-long name: %q", out.Stderr)
	}
	if out := create("bad\xff.txt"); out.ReturnCode == 0 || !strings.Contains(out.Stderr, "not valid UTF-8") {
		t.Errorf("a name that is not UTF-8: %q", out.Stderr)
	}
}
