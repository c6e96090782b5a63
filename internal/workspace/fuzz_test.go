package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
)

// FuzzResolve feeds arbitrary paths to path resolution and to the
// read-only operations built on it, over a workspace holding files,
// directories and symbolic links (one leading outside). Whatever the path:
// nothing panics; a resolved path is inside the root and goes through no
// symbolic link; CleanPath's result is relative, clean, within the limits
// and a fixed point; and every error wraps one of the port's sentinels
// (so that it never becomes a 500) and names no host path.
//
//	go test -run '^$' -fuzz FuzzResolve ./internal/workspace/
func FuzzResolve(f *testing.F) {
	for _, seed := range []string{
		"", ".", "..", "/", "a.txt", "/workspace", "/workspace/", "/workspace/../x", "/workspacex",
		"d/e", "d/../../x", "link", "link/secret", "d/in", "d/in/x", "a.txt/x", "./d//e/.",
		"\x00", "a\x00b", "\xff", "/workspace/\xc3", strings.Repeat("n", MaxNameBytes+1),
		"d/" + strings.Repeat("é", 128), strings.Repeat("a/", MaxPathBytes/2), strings.Repeat("x", MaxPathBytes+1),
		"/workspace/" + strings.Repeat("n", MaxNameBytes+1) + "/..", "~", "$HOME", "C:\\x", "d\\..\\..\\x",
	} {
		f.Add(seed)
	}
	base := f.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600); err != nil {
		f.Fatal(err)
	}
	w, err := New(filepath.Join(base, "ws"), nil)
	if err != nil {
		f.Fatal(err)
	}
	root := w.Root()
	if err := w.WriteFile("a.txt", []byte("a"), 0); err != nil {
		f.Fatal(err)
	}
	if err := w.MkdirAll("d/e"); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("../a.txt", filepath.Join(root, "d", "in")); err != nil {
		f.Fatal(err)
	}

	classified := func(t *testing.T, op, p string, err error) {
		t.Helper()
		if err == nil {
			return
		}
		if port.ErrorCode(err) == "" {
			t.Errorf("%s(%q): %v wraps no port error", op, p, err)
		}
		if strings.Contains(err.Error(), base) {
			t.Errorf("%s(%q): %v names a host path", op, p, err)
		}
	}

	f.Fuzz(func(t *testing.T, p string) {
		rel, cerr := CleanPath(p)
		classified(t, "CleanPath", p, cerr)
		if cerr == nil {
			if strings.HasPrefix(rel, "/") || len(rel) > MaxPathBytes {
				t.Errorf("CleanPath(%q) = %q", p, rel)
			}
			for name := range strings.SplitSeq(rel, "/") {
				if name == ".." || name == "" || len(name) > MaxNameBytes || (name == "." && rel != ".") {
					t.Errorf("CleanPath(%q) = %q: component %q", p, rel, name)
				}
			}
			if again, err := CleanPath(rel); err != nil || again != rel {
				t.Errorf("CleanPath(CleanPath(%q)) = %q, %v; want %q", p, again, err, rel)
			}
		}

		host, rel2, err := w.Resolve(p)
		classified(t, "Resolve", p, err)
		if cerr != nil && port.ErrorCode(err) != port.ErrorCode(cerr) {
			t.Errorf("Resolve(%q) = %v, but CleanPath refused it: %v", p, err, cerr)
		}
		if err == nil {
			if rel2 != rel {
				t.Errorf("Resolve(%q) rel %q, CleanPath %q", p, rel2, rel)
			}
			r, rerr := filepath.Rel(root, host)
			if rerr != nil || r == ".." || strings.HasPrefix(r, "../") || filepath.IsAbs(r) {
				t.Fatalf("Resolve(%q) = %q, outside the root %q", p, host, root)
			}
			// No existing component between the root and host is a link.
			for cur := host; cur != root; cur = filepath.Dir(cur) {
				if fi, err := os.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
					t.Fatalf("Resolve(%q) = %q, through the link %q", p, host, cur)
				}
			}
		}

		_, err = w.Stat(p)
		classified(t, "Stat", p, err)
		_, err = w.Exists(p)
		classified(t, "Exists", p, err)
		_, err = w.List(p)
		classified(t, "List", p, err)
		_, err = w.ReadFile(p, 1<<10)
		classified(t, "ReadFile", p, err)
		if rc, info, err := w.Open(p); err == nil {
			rc.Close()
			if info.Path == "link/secret" || strings.HasPrefix(info.Path, "../") {
				t.Fatalf("Open(%q) opened %q", p, info.Path)
			}
		} else {
			classified(t, "Open", p, err)
		}
	})
}
