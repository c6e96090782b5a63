package workspace

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

const (
	oRDWR   = experimentalsys.O_RDWR
	oWRONLY = experimentalsys.O_WRONLY
	oRDONLY = experimentalsys.O_RDONLY
	oCREAT  = experimentalsys.O_CREAT
	oTRUNC  = experimentalsys.O_TRUNC
	oAPPEND = experimentalsys.O_APPEND
)

// sysEnv is a quota'd guest file system over a temp dir.
type sysEnv struct {
	t   *testing.T
	dir string
	q   *Quota
	fs  experimentalsys.FS
}

func newSysEnv(t *testing.T, limit int64) *sysEnv {
	t.Helper()
	dir := t.TempDir()
	q := NewQuota(limit)
	return &sysEnv{t: t, dir: dir, q: q, fs: NewSysFS(dir, q)}
}

func (e *sysEnv) open(p string, flag experimentalsys.Oflag) experimentalsys.File {
	e.t.Helper()
	f, errno := e.fs.OpenFile(p, flag, 0o644)
	if errno != 0 {
		e.t.Fatalf("OpenFile(%q): %v", p, errno)
	}
	return f
}

func (e *sysEnv) write(f experimentalsys.File, data string) {
	e.t.Helper()
	n, errno := f.Write([]byte(data))
	if errno != 0 || n != len(data) {
		e.t.Fatalf("Write(%d bytes) = %d, %v", len(data), n, errno)
	}
}

func (e *sysEnv) close(f experimentalsys.File) {
	e.t.Helper()
	if errno := f.Close(); errno != 0 {
		e.t.Fatalf("Close: %v", errno)
	}
}

// check asserts that the quota is at want and, when onDisk, that the bytes
// on disk agree.
func (e *sysEnv) check(want int64, onDisk bool) {
	e.t.Helper()
	if got := e.q.Used(); got != want {
		e.t.Errorf("quota Used = %d, want %d", got, want)
	}
	if onDisk {
		if got := diskUsage(e.t, e.dir); got != want {
			e.t.Errorf("bytes on disk = %d, want %d", got, want)
		}
	}
}

func (e *sysEnv) content(p string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.dir, p))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

func TestSysFSWriteAccounting(t *testing.T) {
	e := newSysEnv(t, 100)
	f := e.open("f", oRDWR|oCREAT)
	e.check(0, true)

	e.write(f, "0123456789")
	e.check(10, true)

	// Overwriting in place does not grow the file.
	if _, errno := f.Seek(0, io.SeekStart); errno != 0 {
		t.Fatal(errno)
	}
	e.write(f, "abcde")
	e.check(10, true)

	// Pwrite past the end charges the hole too.
	if n, errno := f.Pwrite([]byte("XY"), 20); errno != 0 || n != 2 {
		t.Fatalf("Pwrite = %d, %v", n, errno)
	}
	e.check(22, true)
	// Pwrite inside the file does not grow it.
	if n, errno := f.Pwrite([]byte("zz"), 1); errno != 0 || n != 2 {
		t.Fatalf("Pwrite inside = %d, %v", n, errno)
	}
	e.check(22, true)

	// Truncate grows and shrinks.
	if errno := f.Truncate(50); errno != 0 {
		t.Fatal(errno)
	}
	e.check(50, true)
	if errno := f.Truncate(8); errno != 0 {
		t.Fatal(errno)
	}
	e.check(8, true)

	// Seek past the end, then write: the hole is charged.
	if _, errno := f.Seek(30, io.SeekStart); errno != 0 {
		t.Fatal(errno)
	}
	e.write(f, "w")
	e.check(31, true)

	// Zero-length writes change nothing.
	if n, errno := f.Write(nil); n != 0 || errno != 0 {
		t.Fatalf("Write(nil) = %d, %v", n, errno)
	}
	if n, errno := f.Pwrite(nil, 500); n != 0 || errno != 0 {
		t.Fatalf("Pwrite(nil) = %d, %v", n, errno)
	}
	e.check(31, true)
	// Invalid arguments are the inner file's errors.
	if _, errno := f.Pwrite([]byte("x"), -1); errno == 0 {
		t.Fatal("Pwrite at -1 succeeded")
	}
	if errno := f.Truncate(-1); errno != experimentalsys.EINVAL {
		t.Fatalf("Truncate(-1) = %v, want EINVAL", errno)
	}
	e.check(31, true)

	e.close(f)
	e.check(31, true)
	if q := e.q.Refusals(); q != 0 {
		t.Errorf("Refusals = %d, want 0", q)
	}
}

func TestSysFSQuotaExceeded(t *testing.T) {
	e := newSysEnv(t, 100)
	f := e.open("f", oWRONLY|oCREAT)
	e.write(f, strings.Repeat("a", 60))
	e.check(60, true)

	// A write that does not fit is cut to what fits.
	n, errno := f.Write(bytes.Repeat([]byte("b"), 70))
	if errno != 0 || n != 40 {
		t.Fatalf("Write over quota = %d, %v; want a short write of 40", n, errno)
	}
	e.check(100, true)
	if e.q.Refusals() != 0 {
		t.Errorf("a short write counted as a refusal")
	}

	// Then nothing fits.
	n, errno = f.Write([]byte("c"))
	if errno != QuotaErrno || n != 0 {
		t.Fatalf("Write at quota = %d, %v; want 0, %v", n, errno, QuotaErrno)
	}
	if _, errno := f.Pwrite([]byte("c"), 100); errno != QuotaErrno {
		t.Fatalf("Pwrite at quota = %v", errno)
	}
	if errno := f.Truncate(101); errno != QuotaErrno {
		t.Fatalf("Truncate over quota = %v", errno)
	}
	if e.q.Refusals() != 3 {
		t.Errorf("Refusals = %d, want 3", e.q.Refusals())
	}
	e.check(100, true)

	// Overwriting inside a full file still works.
	if n, errno := f.Pwrite([]byte("ZZ"), 0); errno != 0 || n != 2 {
		t.Fatalf("Pwrite inside a full file = %d, %v", n, errno)
	}
	e.check(100, true)

	// Shrink, then a hole that alone is over the quota is refused outright.
	if errno := f.Truncate(90); errno != 0 {
		t.Fatal(errno)
	}
	e.check(90, true)
	if n, errno := f.Pwrite([]byte("far"), 200); errno != QuotaErrno || n != 0 {
		t.Fatalf("Pwrite far past the quota = %d, %v", n, errno)
	}
	e.check(90, true)
	// A Truncate that fits exactly is fine.
	if errno := f.Truncate(100); errno != 0 {
		t.Fatal(errno)
	}
	e.check(100, true)
	e.close(f)

	// Another file shares the same quota.
	g := e.open("g", oWRONLY|oCREAT)
	if n, errno := g.Write([]byte("x")); errno != QuotaErrno || n != 0 {
		t.Fatalf("second file at quota = %d, %v", n, errno)
	}
	e.close(g)
	e.check(100, true)
}

func TestSysFSAppend(t *testing.T) {
	e := newSysEnv(t, 20)
	f := e.open("log", oWRONLY|oCREAT|oAPPEND)
	e.write(f, "12345")
	e.write(f, "67890")
	e.check(10, true)
	if !f.IsAppend() {
		t.Fatal("IsAppend = false")
	}
	// With append mode, the write goes to the end whatever the offset.
	if _, errno := f.Seek(0, io.SeekStart); errno != 0 {
		t.Fatal(errno)
	}
	n, errno := f.Write([]byte("abcdefghijklmno"))
	if errno != 0 || n != 10 {
		t.Fatalf("append over quota = %d, %v; want short write 10", n, errno)
	}
	e.check(20, true)
	e.close(f)
	if got := e.content("log"); got != "1234567890abcdefghij" {
		t.Fatalf("content = %q", got)
	}

	// SetAppend on an open file switches to end-of-file growth.
	e2 := newSysEnv(t, 0)
	g := e2.open("g", oRDWR|oCREAT)
	e2.write(g, "abc")
	if _, errno := g.Seek(0, io.SeekStart); errno != 0 {
		t.Fatal(errno)
	}
	if errno := g.SetAppend(true); errno != 0 {
		t.Fatal(errno)
	}
	e2.write(g, "de")
	e2.check(5, true)
	e2.close(g)
	if got := e2.content("g"); got != "abcde" {
		t.Fatalf("content = %q", got)
	}
}

func TestSysFSTruncOnOpen(t *testing.T) {
	e := newSysEnv(t, 100)
	f := e.open("f", oWRONLY|oCREAT)
	e.write(f, strings.Repeat("x", 40))
	e.close(f)
	e.check(40, true)

	f = e.open("f", oWRONLY|oTRUNC)
	e.check(0, true)
	e.write(f, "new")
	e.close(f)
	e.check(3, true)

	// O_TRUNC of a missing file with O_CREAT, and of an empty file.
	g := e.open("g", oWRONLY|oCREAT|oTRUNC)
	e.close(g)
	g = e.open("g", oWRONLY|oTRUNC)
	e.close(g)
	e.check(3, true)

	// A failed O_TRUNC open changes nothing.
	if _, errno := e.fs.OpenFile("missing", oWRONLY|oTRUNC, 0); errno != experimentalsys.ENOENT {
		t.Fatalf("OpenFile(missing, O_TRUNC) = %v", errno)
	}
	e.check(3, true)
}

func TestSysFSReadOnly(t *testing.T) {
	e := newSysEnv(t, 100)
	f := e.open("f", oWRONLY|oCREAT)
	e.write(f, "hello")
	e.close(f)

	r := e.open("f", oRDONLY)
	if n, errno := r.Write([]byte("more")); errno == 0 || n != 0 {
		t.Fatalf("Write on read-only file = %d, %v", n, errno)
	}
	if errno := r.Truncate(50); errno == 0 {
		t.Fatal("Truncate on read-only file succeeded")
	}
	e.check(5, true)
	buf := make([]byte, 10)
	n, errno := r.Read(buf)
	if errno != 0 || string(buf[:n]) != "hello" {
		t.Fatalf("Read = %q, %v", buf[:n], errno)
	}
	if n, errno := r.Pread(buf, 1); errno != 0 || string(buf[:n]) != "ello" {
		t.Fatalf("Pread = %q, %v", buf[:n], errno)
	}
	e.close(r)
	e.check(5, true)
}

func TestSysFSUnlinkAndRename(t *testing.T) {
	e := newSysEnv(t, 100)
	for name, size := range map[string]int{"a": 10, "b": 20, "c": 30} {
		f := e.open(name, oWRONLY|oCREAT)
		e.write(f, strings.Repeat("x", size))
		e.close(f)
	}
	e.check(60, true)

	if errno := e.fs.Unlink("a"); errno != 0 {
		t.Fatal(errno)
	}
	e.check(50, true)
	if errno := e.fs.Unlink("a"); errno != experimentalsys.ENOENT {
		t.Fatalf("Unlink(missing) = %v", errno)
	}
	e.check(50, true)

	// Rename to a new name: nothing changes.
	if errno := e.fs.Rename("b", "b2"); errno != 0 {
		t.Fatal(errno)
	}
	e.check(50, true)
	// Rename over an existing file releases the replaced one.
	if errno := e.fs.Rename("b2", "c"); errno != 0 {
		t.Fatal(errno)
	}
	e.check(20, true)
	// Rename onto itself changes nothing.
	if errno := e.fs.Rename("c", "c"); errno != 0 {
		t.Fatal(errno)
	}
	e.check(20, true)
	// A failed rename changes nothing.
	if errno := e.fs.Rename("missing", "c"); errno != experimentalsys.ENOENT {
		t.Fatalf("Rename(missing) = %v", errno)
	}
	e.check(20, true)

	// Directories: mkdir, rename, unlink refused, rmdir.
	if errno := e.fs.Mkdir("d", 0o755); errno != 0 {
		t.Fatal(errno)
	}
	if errno := e.fs.Rename("c", "d/c"); errno != 0 {
		t.Fatal(errno)
	}
	if errno := e.fs.Rename("d", "d2"); errno != 0 {
		t.Fatal(errno)
	}
	e.check(20, true)
	if errno := e.fs.Unlink("d2"); errno == 0 {
		t.Fatal("Unlink(dir) succeeded")
	}
	if errno := e.fs.Rename("d2/c", "d2"); errno == 0 {
		t.Fatal("Rename(file over dir) succeeded")
	}
	e.check(20, true)
	if errno := e.fs.Unlink("d2/c"); errno != 0 {
		t.Fatal(errno)
	}
	if errno := e.fs.Rmdir("d2"); errno != 0 {
		t.Fatal(errno)
	}
	e.check(0, true)
}

func TestSysFSRemovedWhileOpen(t *testing.T) {
	e := newSysEnv(t, 100)
	f := e.open("f", oRDWR|oCREAT)
	e.write(f, strings.Repeat("x", 30))

	// Unlinked while open: the bytes stay on disk, so they stay charged.
	if errno := e.fs.Unlink("f"); errno != 0 {
		t.Fatal(errno)
	}
	e.check(30, false)
	// Writing to it still goes through the quota.
	e.write(f, strings.Repeat("y", 20))
	e.check(50, false)
	if n, errno := f.Write(bytes.Repeat([]byte("z"), 60)); errno != 0 || n != 50 {
		t.Fatalf("Write = %d, %v; want short write 50", n, errno)
	}
	e.check(100, false)
	if errno := f.Truncate(40); errno != 0 {
		t.Fatal(errno)
	}
	e.check(40, false)
	e.close(f)
	e.check(0, true)
	// Closing twice is harmless.
	if errno := f.Close(); errno != 0 {
		t.Fatalf("second Close = %v", errno)
	}
	e.check(0, true)

	// Two handles, replaced by a rename: released at the last close.
	a := e.open("g", oWRONLY|oCREAT)
	e.write(a, strings.Repeat("g", 10))
	b := e.open("g", oRDONLY)
	n := e.open("new", oWRONLY|oCREAT)
	e.write(n, "12345")
	e.close(n)
	e.check(15, true)
	if errno := e.fs.Rename("new", "g"); errno != 0 {
		t.Fatal(errno)
	}
	e.check(15, false)
	e.close(a)
	e.check(15, false)
	e.close(b)
	e.check(5, true)
}

func TestSysFSLinksRefused(t *testing.T) {
	e := newSysEnv(t, 0)
	f := e.open("f", oWRONLY|oCREAT)
	e.write(f, "data")
	e.close(f)
	if errno := e.fs.Symlink("/etc/passwd", "s"); errno != experimentalsys.EPERM {
		t.Errorf("Symlink(outside) = %v, want EPERM", errno)
	}
	if errno := e.fs.Symlink("f", "s2"); errno != experimentalsys.EPERM {
		t.Errorf("Symlink(inside) = %v, want EPERM", errno)
	}
	if errno := e.fs.Link("f", "h"); errno != experimentalsys.EPERM {
		t.Errorf("Link = %v, want EPERM", errno)
	}
	entries, err := os.ReadDir(e.dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("dir has %d entries (%v), want only f", len(entries), err)
	}
	e.check(4, true)
}

func TestSysFSDelegates(t *testing.T) {
	e := newSysEnv(t, 0)
	if errno := e.fs.Mkdir("dir", 0o755); errno != 0 {
		t.Fatal(errno)
	}
	f := e.open("dir/f", oRDWR|oCREAT)
	e.write(f, "abc")
	if st, errno := f.Stat(); errno != 0 || st.Size != 3 || !st.Mode.IsRegular() {
		t.Fatalf("Stat = %+v, %v", st, errno)
	}
	if isDir, errno := f.IsDir(); errno != 0 || isDir {
		t.Fatalf("IsDir = %v, %v", isDir, errno)
	}
	if ino, errno := f.Ino(); errno != 0 || ino == 0 {
		t.Fatalf("Ino = %v, %v", ino, errno)
	}
	if errno := f.Sync(); errno != 0 {
		t.Fatal(errno)
	}
	if errno := f.Datasync(); errno != 0 {
		t.Fatal(errno)
	}
	pf, ok := f.(experimentalsys.PollableFile)
	if !ok {
		t.Fatal("file is not a PollableFile")
	}
	if pf.IsNonblock() {
		t.Fatal("IsNonblock = true")
	}
	if errno := pf.SetNonblock(true); errno != 0 {
		t.Fatal(errno)
	}
	if !pf.IsNonblock() {
		t.Fatal("IsNonblock = false after SetNonblock(true)")
	}
	if errno := pf.SetNonblock(false); errno != 0 {
		t.Fatal(errno)
	}
	if ready, errno := pf.Poll(experimentalsys.POLLIN, 0); errno != 0 || !ready {
		t.Fatalf("Poll = %v, %v", ready, errno)
	}
	e.close(f)

	st, errno := e.fs.Stat("dir/f")
	if errno != 0 || st.Size != 3 {
		t.Fatalf("FS.Stat = %+v, %v", st, errno)
	}
	if errno := e.fs.Chmod("dir/f", 0o600); errno != 0 {
		t.Fatal(errno)
	}
	d := e.open("dir", oRDONLY)
	if isDir, _ := d.IsDir(); !isDir {
		t.Fatal("directory not reported as one")
	}
	ents, errno := d.Readdir(-1)
	if errno != 0 || len(ents) != 1 || ents[0].Name != "f" {
		t.Fatalf("Readdir = %+v, %v", ents, errno)
	}
	e.close(d)
	if _, errno := e.fs.Readlink("dir/f"); errno == 0 {
		t.Fatal("Readlink of a regular file succeeded")
	}
	if s, ok := e.fs.(interface{ String() string }); !ok || s.String() != e.dir {
		t.Fatalf("String() = %v", e.fs)
	}
	e.check(3, true)
}

func TestSysFSAndWorkspaceShareQuota(t *testing.T) {
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
	wsFS := NewSysFS(ws.Root(), q)
	tmpFS := NewSysFS(tmp.Root(), q)

	if err := ws.WriteFile("host.txt", bytes.Repeat([]byte("h"), 40), 0); err != nil {
		t.Fatal(err)
	}
	f, errno := tmpFS.OpenFile("scratch", oWRONLY|oCREAT, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	if n, errno := f.Write(bytes.Repeat([]byte("s"), 70)); errno != 0 || n != 60 {
		t.Fatalf("guest write in tmp = %d, %v; want 60", n, errno)
	}
	if _, err := ws.Write("more.txt", strings.NewReader("m"), 0); !errors.Is(err, port.ErrFileTooLarge) {
		t.Fatalf("host write with a full quota = %v", err)
	}
	if errno := f.Close(); errno != 0 {
		t.Fatal(errno)
	}
	if q.Used() != 100 {
		t.Fatalf("Used = %d, want 100", q.Used())
	}

	// The guest removes the host's file: released.
	if errno := wsFS.Unlink("host.txt"); errno != 0 {
		t.Fatal(errno)
	}
	if q.Used() != 60 {
		t.Fatalf("Used = %d, want 60", q.Used())
	}

	// A file the guest holds open is replaced by the host: its bytes stay
	// charged (no credit for the replacement) until the guest closes it.
	g, errno := wsFS.OpenFile("open.txt", oWRONLY|oCREAT, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	if n, errno := g.Write(bytes.Repeat([]byte("o"), 20)); errno != 0 || n != 20 {
		t.Fatalf("Write = %d, %v", n, errno)
	}
	if _, err := ws.Write("open.txt", strings.NewReader(strings.Repeat("r", 21)), 0); !errors.Is(err, port.ErrFileTooLarge) {
		t.Fatalf("replacing an open file beyond the quota = %v", err)
	}
	if _, err := ws.Write("open.txt", strings.NewReader(strings.Repeat("r", 15)), 0); err != nil {
		t.Fatal(err)
	}
	if q.Used() != 95 {
		t.Fatalf("Used with the replaced file open = %d, want 95", q.Used())
	}
	if errno := g.Close(); errno != 0 {
		t.Fatal(errno)
	}
	if q.Used() != 75 {
		t.Fatalf("Used after closing the replaced file = %d, want 75", q.Used())
	}

	// The host removes a file the guest holds open.
	h, errno := wsFS.OpenFile("open.txt", oRDONLY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if err := ws.Remove("open.txt"); err != nil {
		t.Fatal(err)
	}
	if q.Used() != 75 {
		t.Fatalf("Used with the removed file open = %d, want 75", q.Used())
	}
	if errno := h.Close(); errno != 0 {
		t.Fatal(errno)
	}
	if q.Used() != 60 {
		t.Fatalf("Used = %d, want 60", q.Used())
	}

	if err := tmp.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if err := ws.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if q.Used() != 0 {
		t.Fatalf("Used after RemoveAll = %d, want 0", q.Used())
	}
}

func TestNewSysFSNilQuota(t *testing.T) {
	dir := t.TempDir()
	fsys := NewSysFS(dir, nil)
	f, errno := fsys.OpenFile("f", oWRONLY|oCREAT, 0o644)
	if errno != 0 {
		t.Fatal(errno)
	}
	if n, errno := f.Write(make([]byte, 1<<16)); errno != 0 || n != 1<<16 {
		t.Fatalf("Write = %d, %v", n, errno)
	}
	if errno := f.Close(); errno != 0 {
		t.Fatal(errno)
	}
	fi, err := os.Stat(filepath.Join(dir, "f"))
	if err != nil || fi.Size() != 1<<16 {
		t.Fatalf("size = %v, %v", fi, err)
	}
}

// TestInMount: a guest path is found in the mount that holds it, cleaned
// first, so that ".." never leads out of one; anything else is in none.
func TestInMount(t *testing.T) {
	work, tmp := NewSysFS(t.TempDir(), nil), NewSysFS(t.TempDir(), nil)
	for p, want := range map[string]struct {
		fs  experimentalsys.FS
		sub string
	}{
		"/workspace":              {work, "."},
		"/workspace/a/b":          {work, "a/b"},
		"/workspace/a/../b/":      {work, "b"},
		"/tmp/x":                  {tmp, "x"},
		"/workspace/../tmp/x":     {tmp, "x"},
		"/workspace/../etc":       {nil, ""},
		"/workspacex/a":           {nil, ""},
		"workspace/a":             {nil, ""},
		"/usr/local/lib":          {nil, ""},
		"/tmp/../../workspace/.a": {work, ".a"},
	} {
		fs, sub := InMount(p, work, tmp)
		if fs != want.fs || sub != want.sub {
			t.Errorf("InMount(%q) = %v %q, want %v %q", p, fs, sub, want.fs, want.sub)
		}
	}
}

// GuestPerm and GuestChmod: the bits of a file or directory, set within
// AllowedMode's rules; the mount's root keeps its mode, and a missing
// file has no bits and cannot be chmodded.
func TestGuestPermAndChmod(t *testing.T) {
	dir := t.TempDir()
	fsys := NewSysFS(dir, nil)
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sub        string
		mode, want fs.FileMode
	}{{"f", 0o4777, 0o755}, {"f", 0o600, 0o600}, {"d", 0o000, 0o700}, {"d", 0o750, 0o750}} {
		if errno := GuestChmod(fsys, c.sub, c.mode); errno != 0 {
			t.Fatalf("GuestChmod(%s, %o): %v", c.sub, c.mode, errno)
		}
		if got := GuestPerm(fsys, c.sub); got != int32(c.want) {
			t.Errorf("after chmod %o, %s has bits %o, want %o", c.mode, c.sub, got, c.want)
		}
	}
	if errno := GuestChmod(fsys, ".", 0o777); errno != experimentalsys.EPERM {
		t.Errorf("chmod of the root: %v", errno)
	}
	if errno := GuestChmod(fsys, "missing", 0o644); errno != experimentalsys.ENOENT {
		t.Errorf("chmod of a missing file: %v", errno)
	}
	if got := GuestPerm(fsys, "missing"); got != -1 {
		t.Errorf("bits of a missing file: %o", got)
	}
}
