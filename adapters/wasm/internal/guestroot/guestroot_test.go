package guestroot_test

import (
	"io/fs"
	"slices"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/codeport/codeport/adapters/wasm/internal/guestroot"
)

func TestTree(t *testing.T) {
	r := guestroot.New("/workspace", "/tmp", "/usr/local/lib")
	for path, want := range map[string]fs.FileMode{
		".": fs.ModeDir, "": fs.ModeDir, "workspace": fs.ModeDir, "usr": fs.ModeDir,
		"usr/local": fs.ModeDir, "usr/local/lib": fs.ModeDir, "dev": fs.ModeDir,
		"dev/null": fs.ModeDevice | fs.ModeCharDevice, "./usr/../dev/null": fs.ModeDevice | fs.ModeCharDevice,
		"../../tmp": fs.ModeDir,
	} {
		st, errno := r.Stat(path)
		if errno != 0 || st.Mode.Type() != want {
			t.Errorf("Stat(%q): %v %v, want type %v", path, st.Mode, errno, want)
		}
	}
	for path, want := range map[string]experimentalsys.Errno{
		"etc/passwd": experimentalsys.ENOENT, "nonexistent": experimentalsys.ENOENT,
		"usr/share/zoneinfo/UTC": experimentalsys.ENOENT, "dev/null/x": experimentalsys.ENOTDIR,
		"dev/zero": experimentalsys.ENOENT,
	} {
		if _, errno := r.Stat(path); errno != want {
			t.Errorf("Stat(%q): %v, want %v", path, errno, want)
		}
	}

	d, errno := r.OpenFile(".", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	var names []string
	for {
		ents, errno := d.Readdir(2)
		if errno != 0 {
			t.Fatal(errno)
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			names = append(names, e.Name)
			if e.Type != fs.ModeDir || e.Ino == 0 {
				t.Errorf("entry %+v", e)
			}
		}
	}
	if want := []string{"dev", "tmp", "usr", "workspace"}; !slices.Equal(names, want) {
		t.Errorf("entries of the root %v, want %v", names, want)
	}
	if _, errno := d.Seek(0, 0); errno != 0 {
		t.Fatal(errno)
	}
	if ents, _ := d.Readdir(-1); len(ents) != 4 {
		t.Errorf("after a rewind: %v", ents)
	}
}

func TestNullDevice(t *testing.T) {
	r := guestroot.New("/workspace")
	f, errno := r.OpenFile("dev/null", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_TRUNC, 0o666)
	if errno != 0 {
		t.Fatal(errno)
	}
	if n, errno := f.Write(make([]byte, 1<<20)); n != 1<<20 || errno != 0 {
		t.Errorf("Write: %d %v", n, errno)
	}
	if n, errno := f.Read(make([]byte, 10)); n != 0 || errno != 0 {
		t.Errorf("Read: %d %v, want the end", n, errno)
	}
	if _, errno := r.OpenFile("dev/null", experimentalsys.O_CREAT|experimentalsys.O_EXCL|experimentalsys.O_WRONLY, 0); errno != experimentalsys.EEXIST {
		t.Errorf("O_EXCL: %v", errno)
	}
	if errno := r.Utimens("dev/null", experimentalsys.UTIME_OMIT, experimentalsys.UTIME_OMIT); errno != 0 {
		t.Errorf("Utimens: %v", errno)
	}
}

// TestNothingChanges: the root refuses every change as a directory owned
// by another user does, and a name under a missing directory is missing.
func TestNothingChanges(t *testing.T) {
	r := guestroot.New("/workspace", "/tmp")
	const (
		acces  = experimentalsys.EACCES
		noent  = experimentalsys.ENOENT
		exist  = experimentalsys.EEXIST
		create = experimentalsys.O_CREAT | experimentalsys.O_WRONLY
	)
	for name, got := range map[string]experimentalsys.Errno{
		"open new":          second(r.OpenFile("x", create, 0o644)),
		"open new in dev":   second(r.OpenFile("dev/x", create, 0o644)),
		"open under none":   second(r.OpenFile("nonexistent/x", create, 0o644)),
		"open missing":      second(r.OpenFile("x", experimentalsys.O_RDONLY, 0)),
		"open dir to write": second(r.OpenFile("dev", experimentalsys.O_WRONLY, 0)),
		"mkdir new":         r.Mkdir("x", 0o755),
		"mkdir existing":    r.Mkdir("workspace", 0o755),
		"mkdir under none":  r.Mkdir("a/b", 0o755),
		"rmdir":             r.Rmdir("tmp"),
		"rmdir missing":     r.Rmdir("x"),
		"unlink":            r.Unlink("dev/null"),
		"rename":            r.Rename("dev", "x"),
		"chmod":             r.Chmod("dev", 0o777),
		"link":              r.Link("dev/null", "x"),
		"symlink":           r.Symlink("dev/null", "x"),
		"symlink over":      r.Symlink("x", "dev"),
		"utimens dir":       r.Utimens("dev", 0, 0),
	} {
		want := map[string]experimentalsys.Errno{
			"open new": acces, "open new in dev": acces, "open under none": noent, "open missing": noent,
			"open dir to write": experimentalsys.EISDIR, "mkdir new": acces, "mkdir existing": exist,
			"mkdir under none": noent, "rmdir": acces, "rmdir missing": noent, "unlink": acces,
			"rename": acces, "chmod": acces, "link": acces, "symlink": acces, "symlink over": exist,
			"utimens dir": acces,
		}[name]
		if got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}

func second[T any](_ T, errno experimentalsys.Errno) experimentalsys.Errno { return errno }
