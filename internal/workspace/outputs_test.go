package workspace

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// trackedEnv is a workspace, its guest file system and its kept outputs,
// as a session has them.
type trackedEnv struct {
	*sysEnv
	ws  *Workspace
	out *Outputs
}

func newTrackedEnv(t *testing.T, limit int64, maxFiles int) *trackedEnv {
	t.Helper()
	base := t.TempDir()
	q := NewQuota(limit)
	ws, err := New(filepath.Join(base, "ws"), q)
	if err != nil {
		t.Fatal(err)
	}
	out, err := NewOutputs(filepath.Join(base, "outputs"), q, maxFiles)
	if err != nil {
		t.Fatal(err)
	}
	return &trackedEnv{sysEnv: &sysEnv{t: t, dir: ws.Root(), q: q, fs: ws.SysFS()}, ws: ws, out: out}
}

func (e *trackedEnv) taken() []string {
	paths, overflow := e.ws.Changes().Take()
	if overflow {
		e.t.Fatal("overflow")
	}
	return paths
}

func TestChangesRecordWhatTheGuestWrites(t *testing.T) {
	e := newTrackedEnv(t, 0, 10)
	e.close(e.open("made", oWRONLY|oCREAT))
	if err := e.ws.WriteFile("dir/put", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	e.ws.Changes().Reset()

	// Read, or opened for writing and left alone: nothing changed.
	e.close(e.open("made", oRDONLY))
	e.close(e.open("dir/put", oRDWR))
	// Truncating an empty file changes nothing either.
	e.close(e.open("made", oWRONLY|oTRUNC))
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("recorded %q for reads", got)
	}

	f := e.open("dir/put", oWRONLY|oAPPEND)
	e.write(f, "a")
	e.write(f, "b")
	e.close(f)
	e.close(e.open("new", oWRONLY|oCREAT)) // made, even if empty
	f = e.open("tmp", oWRONLY|oCREAT)
	e.write(f, "t")
	e.close(f)
	if errno := e.fs.Rename("tmp", "dir/renamed"); errno != 0 {
		t.Fatal(errno)
	}
	if err := e.ws.WriteFile("via-host", []byte("h"), 0); err != nil {
		t.Fatal(err)
	}
	f = e.open("dir/put", oRDWR)
	if errno := f.Truncate(0); errno != 0 {
		t.Fatal(errno)
	}
	e.close(f)
	want := []string{"dir/put", "new", "tmp", "dir/renamed", "via-host"}
	if got := e.taken(); !slices.Equal(got, want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("a second Take gave %q", got)
	}

	// A file system made by NewSysFS records nothing.
	plain := NewSysFS(e.ws.Root(), e.q)
	g, errno := plain.OpenFile("untracked", oWRONLY|oCREAT, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	g.Write([]byte("u"))
	g.Close()
	if got := e.taken(); len(got) != 0 {
		t.Fatalf("NewSysFS recorded %q", got)
	}
}

func TestChangesAreBoundedAndSaySo(t *testing.T) {
	var c Changes
	for i := range MaxChanges + 10 {
		c.record(fmt.Sprintf("f%d", i))
	}
	c.record("f0") // seen: not a new path
	paths, overflow := c.Take()
	if len(paths) != MaxChanges || !overflow {
		t.Fatalf("%d paths, overflow %v; want %d and true", len(paths), overflow, MaxChanges)
	}
	if paths, overflow := c.Take(); len(paths) != 0 || overflow {
		t.Fatalf("after Take: %d paths, overflow %v", len(paths), overflow)
	}
}

func readOutput(t *testing.T, o *Outputs, id string) (string, port.FileInfo) {
	t.Helper()
	r, info, err := o.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), info
}

func TestOutputsKeepThatVersion(t *testing.T) {
	e := newTrackedEnv(t, 0, 10)
	if err := e.ws.WriteFile("out.csv", []byte("a\n1\n"), 0); err != nil {
		t.Fatal(err)
	}
	info, id, err := e.out.Keep(e.ws, "out.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, FileIDPrefix) || info.Path != "out.csv" || info.Size != 4 {
		t.Fatalf("kept %q as %+v", id, info)
	}
	// Changed in place by the guest, then replaced by the host, then removed.
	f := e.open("out.csv", oWRONLY|oTRUNC)
	e.write(f, "changed")
	e.close(f)
	if err := e.ws.WriteFile("out.csv", []byte("replaced"), 0); err != nil {
		t.Fatal(err)
	}
	if err := e.ws.Remove("out.csv"); err != nil {
		t.Fatal(err)
	}
	got, gi := readOutput(t, e.out, id)
	if got != "a\n1\n" || gi.Path != "out.csv" || gi.Size != 4 || gi.MimeType != "text/csv; charset=utf-8" {
		t.Fatalf("output %q, %+v", got, gi)
	}
	if e.q.Used() != 4 {
		t.Fatalf("quota holds %d bytes, want the kept 4", e.q.Used())
	}

	for _, bad := range []string{"", "file_", id + "x", "../" + id, strings.ToLower(id), "file_AAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		if _, _, err := e.out.Open(bad); !errors.Is(err, port.ErrFileNotFound) {
			t.Errorf("Open(%q) = %v, want ErrFileNotFound", bad, err)
		}
	}
	for _, gone := range []string{"missing", "."} {
		if _, _, err := e.out.Keep(e.ws, gone); !errors.Is(err, port.ErrFileNotFound) {
			t.Errorf("Keep(%q) = %v, want ErrFileNotFound", gone, err)
		}
	}
}

func TestOutputsNeverCostAProgramRoom(t *testing.T) {
	e := newTrackedEnv(t, 100, 10)
	var ids []string
	for i := range 3 {
		name := fmt.Sprintf("f%d", i)
		if err := e.ws.WriteFile(name, []byte(strings.Repeat("x", 20)), 0); err != nil {
			t.Fatal(err)
		}
		_, id, err := e.out.Keep(e.ws, name)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Three files of 20 and their copies do not fit in 100: keeping the
	// third dropped the oldest copy.
	if _, _, err := e.out.Open(ids[0]); !errors.Is(err, port.ErrFileNotFound) {
		t.Fatalf("the oldest copy is still there (%v) with %d bytes used", err, e.q.Used())
	}
	if got, _ := readOutput(t, e.out, ids[2]); got != strings.Repeat("x", 20) {
		t.Fatalf("newest copy %q", got)
	}
	// The guest needs 40 bytes: only copies can give them; it is not refused.
	f := e.open("big", oWRONLY|oCREAT)
	e.write(f, strings.Repeat("y", 40))
	e.close(f)
	if e.q.Refusals() != 0 {
		t.Fatalf("%d refusals", e.q.Refusals())
	}
	if e.q.Used() > 100 {
		t.Fatalf("used %d of 100", e.q.Used())
	}
	if _, _, err := e.out.Open(ids[2]); !errors.Is(err, port.ErrFileNotFound) {
		t.Fatalf("the program's write left a copy (%v) with %d bytes used", err, e.q.Used())
	}
	// A file larger than all the room there is is not kept, and says why.
	before := e.q.Used()
	if _, _, err := e.out.Keep(e.ws, "big"); !errors.Is(err, port.ErrFileTooLarge) {
		t.Fatalf("Keep over the room left = %v, want ErrFileTooLarge", err)
	}
	if e.q.Used() > before {
		t.Fatalf("a refused Keep left %d bytes charged", e.q.Used()-before)
	}
}

func TestOutputsKeepAtMostMaxFiles(t *testing.T) {
	e := newTrackedEnv(t, 0, 2)
	if err := e.ws.WriteFile("f", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 3 {
		_, id, err := e.out.Keep(e.ws, "f")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, _, err := e.out.Open(ids[0]); !errors.Is(err, port.ErrFileNotFound) {
		t.Fatalf("the third copy left the first (%v)", err)
	}
	for _, id := range ids[1:] {
		readOutput(t, e.out, id)
	}
	if e.q.Used() != 1+2 {
		t.Fatalf("used %d, want the file and two copies", e.q.Used())
	}
}

var _ experimentalsys.FS = (*quotaFS)(nil)

func TestChangesAreBoundedInBytes(t *testing.T) {
	var c Changes
	long := strings.Repeat("d/", 1000) + "f"
	for i := range 200 {
		c.record(fmt.Sprintf("%s%d", long, i))
	}
	paths, overflow := c.Take()
	total := 0
	for _, p := range paths {
		total += len(p)
	}
	if !overflow || len(paths) == 0 || total > MaxChangeBytes {
		t.Fatalf("%d paths of %d bytes, overflow %v", len(paths), total, overflow)
	}
}
