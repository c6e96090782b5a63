package editor

import (
	"fmt"
	"path/filepath"
	"runtime"
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

// allocated is how many bytes f allocates (the process's, so no other
// test may run meanwhile: the callers are not parallel).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A file of newlines, which a program may write up to the file limit,
// costs the host neither a view nine times its size nor a slice of line
// spans 24 times its size: a view over the output limit is refused with
// the lines that fit, and an insert finds its line by scanning.
func TestAFileOfNewlinesCostsTheHostLittle(t *testing.T) {
	const size = 8 << 20
	e := newEnv(t, Options{MaxFileBytes: 16 << 20, MaxHistoryBytes: -1}, 64<<20)
	e.put("nl.txt", strings.Repeat("\n", size))
	var out Output
	if n := allocated(func() { out = e.run(view("nl.txt")) }); n > 16*size {
		t.Errorf("a view allocated %d MiB for a file of %d MiB", n>>20, size>>20)
	}
	if out.ReturnCode == 0 || out.Stdout != "" || !strings.Contains(out.Stderr, "output limit of 1048576 bytes") || !strings.Contains(out.Stderr, "view_range, such as [1, 131072]") {
		t.Errorf("view of %d newlines: %d bytes of stdout, stderr %q", size, len(out.Stdout), out.Stderr)
	}
	if got := e.ok(view("nl.txt", 1, 131072)); len(got) != 1<<20 {
		t.Errorf("the range the refusal suggests: %d bytes", len(got))
	}
	if n := allocated(func() { e.ok(insert("nl.txt", size-1, "x")) }); n > 16*size {
		t.Errorf("an insert allocated %d MiB for a file of %d MiB", n>>20, size>>20)
	}
	e.wantFile("nl.txt", strings.Repeat("\n", size-1)+"x\n\n")
	// What fits is shown as before, and a line too long for the limit
	// alone is refused by its number.
	small := newEnv(t, Options{MaxViewBytes: 32}, 1<<20)
	small.put("a.txt", "one\ntwo\nthree\n"+strings.Repeat("x", 40)+"\n")
	if got := small.ok(view("a.txt", 1, 2)); got != "     1\tone\n     2\ttwo\n" {
		t.Errorf("view within the limit = %q", got)
	}
	small.fail(view("a.txt", 1, 3), "lines 1-3 of a.txt", "limit of 32 bytes", "such as [1, 2]")
	small.fail(view("a.txt", 4, 4), "line 4 of a.txt is 40 bytes long")
}

// A directory's listing is bounded as a file's view is: one over the
// output limit is refused, and its subdirectories can be viewed.
func TestAListingOverTheOutputLimitIsRefused(t *testing.T) {
	e := newEnv(t, Options{MaxViewBytes: 300}, 1<<20)
	for i := range 10 {
		e.put(fmt.Sprintf("sub/file-with-a-long-name-%02d.txt", i), "x")
	}
	e.put("small/a.txt", "x")
	e.fail(view("."), "listing of /workspace (13 entries)", "output limit of 300 bytes", "subdirectories")
	if got := e.ok(view("small")); !strings.HasSuffix(got, "\nsmall/a.txt\n") {
		t.Errorf("view small = %q", got)
	}
}

// Counting every overlapping occurrence of old_str cost a comparison of
// old_str at each of them: a long old_str in a file of one repeated
// character kept the host busy for minutes, past any call's timeout (the
// editor has none). Past maxReportedLines occurrences the count stops,
// and the message says so.
func TestStrReplaceStopsCountingOccurrences(t *testing.T) {
	e := newEnv(t, Options{MaxFileBytes: 4 << 20}, 8<<20)
	e.put("a.txt", strings.Repeat("a", 1<<20))
	e.fail(replace("a.txt", strings.Repeat("a", 64<<10), "b"), "occurs more than 20 times", "(at lines 1, ...)")
	e.put("many.txt", strings.Repeat("k\n", 21))
	e.fail(replace("many.txt", "k", "j"), "occurs more than 20 times", " 20, ...)")
	e.put("twenty.txt", strings.Repeat("k\n", 20))
	e.fail(replace("twenty.txt", "k", "j"), "occurs 20 times", " 20)")
}
