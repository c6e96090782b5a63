package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/codeport/codeport/port"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// countEntries counts what is below dir on the host, dir excluded.
func countEntries(t *testing.T, dir string) (entries, dirs int64) {
	t.Helper()
	tr, err := scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tr.entries, tr.dirs
}

// checkEntries asserts that the quota counts what is on disk.
func (e *sysEnv) checkEntries(want int64) {
	e.t.Helper()
	got, _ := countEntries(e.t, e.dir)
	if got != want || e.q.Entries() != want {
		e.t.Errorf("entries on disk %d, charged %d; want %d", got, e.q.Entries(), want)
	}
}

// Issue #13: 51,000 empty files fitted in a 5 MiB workspace; the entry
// limit stops them.
func TestSysFSEntryLimit(t *testing.T) {
	e := newSysEnv(t, 5<<20)
	e.q.WithEntryLimit(50)
	made := 0
	var errno experimentalsys.Errno
	for i := range 51_000 {
		var f experimentalsys.File
		if f, errno = e.fs.OpenFile(fmt.Sprintf("f%d", i), oWRONLY|oCREAT, 0o644); errno != 0 {
			break
		}
		e.close(f)
		made++
	}
	if errno != QuotaErrno || made != 50 {
		t.Fatalf("made %d files, then %v; want 50, then %v", made, errno, QuotaErrno)
	}
	if e.q.Refusals() != 1 || e.q.EntryRefusals() != 1 {
		t.Errorf("refusals %d (%d for entries), want 1 (1)", e.q.Refusals(), e.q.EntryRefusals())
	}
	e.checkEntries(50)

	// At the limit, what makes no new name still works, and what would
	// fail anyway fails as it would without a quota.
	f := e.open("f1", oWRONLY|oCREAT|oTRUNC)
	e.write(f, "kept")
	e.close(f)
	plain := sysfs.DirFS(e.dir) // what the guest sees without a quota
	for _, c := range []struct {
		name      string
		got, want experimentalsys.Errno
	}{
		{"mkdir new", e.fs.Mkdir("new", 0o755), QuotaErrno},
		{"create new", openErrno(e.fs, "new", oWRONLY|oCREAT), QuotaErrno},
		{"mkdir existing", e.fs.Mkdir("f2", 0o755), plain.Mkdir("f2", 0o755)},
		{"mkdir, no parent", e.fs.Mkdir("missing/new", 0o755), plain.Mkdir("missing/new", 0o755)},
		{"mkdir, parent a file", e.fs.Mkdir("f3/new", 0o755), plain.Mkdir("f3/new", 0o755)},
		{"create exclusive, existing", openErrno(e.fs, "f4", oWRONLY|oCREAT|experimentalsys.O_EXCL), openErrno(plain, "f4", oWRONLY|oCREAT|experimentalsys.O_EXCL)},
		{"create, no parent", openErrno(e.fs, "missing/f", oWRONLY|oCREAT), openErrno(plain, "missing/f", oWRONLY|oCREAT)},
		{"create, parent a file", openErrno(e.fs, "f3/f", oWRONLY|oCREAT), openErrno(plain, "f3/f", oWRONLY|oCREAT)},
		{"link", e.fs.Link("f1", "hard"), experimentalsys.EPERM},
	} {
		if c.got != c.want || c.want == 0 {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	e.checkEntries(50)
	if e.q.Refusals() != 3 || e.q.EntryRefusals() != 3 {
		t.Errorf("refusals %d (%d for entries), want 3 (3): only the refusals the quota caused", e.q.Refusals(), e.q.EntryRefusals())
	}

	// A rename over a file frees the target's name; unlinking frees one.
	if errno := e.fs.Rename("f5", "f6"); errno != 0 {
		t.Fatal(errno)
	}
	e.checkEntries(49)
	if errno := e.fs.Unlink("f7"); errno != 0 {
		t.Fatal(errno)
	}
	e.checkEntries(48)
	if errno := e.fs.Mkdir("d", 0o755); errno != 0 {
		t.Fatalf("Mkdir with room: %v", errno)
	}
	f = e.open("d/inner", oWRONLY|oCREAT)
	e.close(f)
	e.checkEntries(50)
	// A directory renamed over an empty one frees it.
	if errno := e.fs.Unlink("d/inner"); errno != 0 {
		t.Fatal(errno)
	}
	if errno := e.fs.Mkdir("d2", 0o755); errno != 0 {
		t.Fatal(errno)
	}
	if errno := e.fs.Rename("d2", "d"); errno != 0 {
		t.Fatal(errno)
	}
	e.checkEntries(49)
	if e.q.Used() != 4+DirBytes {
		t.Errorf("Used %d, want %d (a file of 4 bytes, a directory)", e.q.Used(), 4+DirBytes)
	}
}

func openErrno(fsys experimentalsys.FS, p string, flag experimentalsys.Oflag) experimentalsys.Errno {
	f, errno := fsys.OpenFile(p, flag, 0o644)
	if errno == 0 {
		f.Close()
	}
	return errno
}

// Without an entry limit, entries are counted but directories cost no
// bytes, as before the limit existed.
func TestQuotaWithoutEntryLimit(t *testing.T) {
	e := newSysEnv(t, 100)
	if errno := e.fs.Mkdir("d", 0o755); errno != 0 {
		t.Fatal(errno)
	}
	e.check(0, true)
	e.checkEntries(1)
	if e.q.EntryLimit() != 0 {
		t.Errorf("EntryLimit %d", e.q.EntryLimit())
	}
}

func TestWorkspaceEntryLimit(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(root, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	q := NewQuota(1 << 20).WithEntryLimit(5)
	w, err := New(root, q)
	if err != nil {
		t.Fatal(err)
	}
	if q.Entries() != 1 || q.Used() != DirBytes {
		t.Fatalf("New charged %d entries, %d bytes; want 1, %d", q.Entries(), q.Used(), DirBytes)
	}
	// Parents made by Write count.
	if err := w.WriteFile("a/b/c.txt", []byte("abc"), 0); err != nil {
		t.Fatal(err)
	}
	if q.Entries() != 4 || q.Used() != 3*DirBytes+3 {
		t.Fatalf("after a/b/c.txt: %d entries, %d bytes; want 4, %d", q.Entries(), q.Used(), 3*DirBytes+3)
	}
	if err := w.MkdirAll("a/b/d"); err != nil {
		t.Fatal(err)
	}
	// Full: a new file, a new directory, a file needing a new parent are
	// refused; replacing a file is not.
	var le *EntryLimitError
	for name, err := range map[string]error{
		"write":         w.WriteFile("new.txt", nil, 0),
		"write, parent": w.WriteFile("x/new.txt", nil, 0),
		"mkdir":         w.Mkdir("y"),
		"mkdir all":     w.MkdirAll("a/b/z"),
	} {
		if !errors.As(err, &le) || !errors.Is(err, port.ErrFileTooLarge) || le.Limit != 5 ||
			!strings.Contains(err.Error(), "limit of 5 files and directories") {
			t.Errorf("%s at the entry limit: %v", name, err)
		}
	}
	if err := w.WriteFile("a/b/c.txt", []byte("replaced"), 0); err != nil {
		t.Fatalf("replacing a file at the entry limit: %v", err)
	}
	if got, _ := countEntries(t, root); got != 5 || q.Entries() != 5 {
		t.Fatalf("%d entries on disk, %d charged; want 5 (no temporary file left)", got, q.Entries())
	}
	// Errors of the new operations.
	if err := w.Mkdir("a"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Mkdir existing: %v", err)
	}
	if err := w.MkdirAll("a/b"); err != nil {
		t.Errorf("MkdirAll existing: %v", err)
	}
	if err := w.MkdirAll("a/b/c.txt/d"); !errors.Is(err, ErrNotDirectory) || !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("MkdirAll through a file: %v", err)
	}
	if err := w.RemoveDir("a"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Errorf("RemoveDir non-empty: %v", err)
	}
	if err := w.RemoveDir("a/b/c.txt"); !errors.Is(err, ErrNotDirectory) {
		t.Errorf("RemoveDir file: %v", err)
	}
	if err := w.RemoveDir("."); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("RemoveDir root: %v", err)
	}
	if err := w.RemoveDir("nope"); !errors.Is(err, port.ErrFileNotFound) {
		t.Errorf("RemoveDir missing: %v", err)
	}
	// Removing gives entries back.
	if err := w.RemoveDir("a/b/d"); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("a/b/c.txt"); err != nil {
		t.Fatal(err)
	}
	if err := w.Mkdir("y"); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("n.txt", []byte("n"), 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := countEntries(t, root); got != 5 || q.Entries() != 5 || q.Used() != 4*DirBytes+1 {
		t.Fatalf("%d entries on disk, %d charged, %d bytes; want 5, 5, %d", got, q.Entries(), q.Used(), 4*DirBytes+1)
	}
	if err := w.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if q.Entries() != 0 || q.Used() != 0 {
		t.Fatalf("after RemoveAll: %d entries, %d bytes", q.Entries(), q.Used())
	}
}

// A directory that does not fit the byte limit is refused with a
// *QuotaError, and Write leaves nothing behind.
func TestWorkspaceDirectoryOverBytes(t *testing.T) {
	q := NewQuota(DirBytes + 10).WithEntryLimit(100)
	w, err := New(filepath.Join(t.TempDir(), "ws"), q)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("a/f", []byte("0123456789"), 0); err != nil {
		t.Fatal(err)
	}
	var qe *QuotaError
	if err := w.WriteFile("b/f", nil, 0); !errors.As(err, &qe) || qe.Requested != DirBytes {
		t.Fatalf("a directory over the byte limit: %v", err)
	}
	if q.Refusals() != 1 || q.EntryRefusals() != 0 {
		t.Errorf("refusals %d (%d for entries)", q.Refusals(), q.EntryRefusals())
	}
	if got, _ := countEntries(t, w.Root()); got != 2 || q.Entries() != 2 {
		t.Errorf("%d entries on disk, %d charged; want 2", got, q.Entries())
	}
}

// Issue #13: a name component over 255 bytes came back from the host as
// ENAMETOOLONG, which named no port error (a 500). Every operation now
// refuses it as an invalid request, with a reason.
func TestLongNameComponent(t *testing.T) {
	w := newWS(t, 0)
	long := strings.Repeat("n", MaxNameBytes+1)
	ops := map[string]func(p string) error{
		"resolve":   func(p string) error { _, _, err := w.Resolve(p); return err },
		"stat":      func(p string) error { _, err := w.Stat(p); return err },
		"exists":    func(p string) error { _, err := w.Exists(p); return err },
		"list":      func(p string) error { _, err := w.List(p); return err },
		"open":      func(p string) error { _, _, err := w.Open(p); return err },
		"read":      func(p string) error { _, err := w.ReadFile(p, 0); return err },
		"write":     func(p string) error { return w.WriteFile(p, []byte("x"), 0) },
		"remove":    func(p string) error { return w.Remove(p) },
		"mkdir":     func(p string) error { return w.Mkdir(p) },
		"mkdir all": func(p string) error { return w.MkdirAll(p) },
		"rmdir":     func(p string) error { return w.RemoveDir(p) },
	}
	for name, op := range ops {
		for _, p := range []string{long, "dir/" + long, long + "/f", "/workspace/" + long} {
			err := op(p)
			var nt *NameTooLongError
			if !errors.Is(err, port.ErrInvalidRequest) || !errors.As(err, &nt) || !errors.Is(err, syscall.ENAMETOOLONG) ||
				port.ErrorCode(err) != "invalid_request" || !strings.Contains(err.Error(), "file name component over 255 bytes") {
				t.Errorf("%s(%d-byte name in %d-byte path): %v", name, len(long), len(p), err)
			}
		}
	}
	// The longest name works.
	ok := strings.Repeat("k", MaxNameBytes)
	if err := w.WriteFile("d/"+ok, []byte("fits"), 0); err != nil {
		t.Fatal(err)
	}
	if got, err := w.ReadFile("d/"+ok, 0); err != nil || string(got) != "fits" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	// What the host still finds too long is the request's fault too.
	if err := pathErr("open", "x", &fs.PathError{Op: "open", Path: "/host/x", Err: syscall.ENAMETOOLONG}); !errors.Is(err, port.ErrInvalidRequest) || strings.Contains(err.Error(), "/host") {
		t.Errorf("pathErr(ENAMETOOLONG) = %v", err)
	}
}
