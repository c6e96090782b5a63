package workspace

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/codeport/codeport/port"
)

// newWS returns a workspace in a fresh temp dir with the given quota limit.
func newWS(t *testing.T, limit int64) *Workspace {
	t.Helper()
	w, err := New(filepath.Join(t.TempDir(), "ws"), NewQuota(limit))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// put creates a host file under the workspace root, bypassing the quota.
func put(t *testing.T, w *Workspace, rel, content string) {
	t.Helper()
	p := filepath.Join(w.Root(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// diskUsage sums the sizes of the regular files under dir.
func diskUsage(t *testing.T, dir string) int64 {
	t.Helper()
	files, err := regularFiles(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var n int64
	for _, f := range files {
		n += f.size
	}
	return n
}

// checkUsage asserts that the quota matches the bytes on disk.
func checkUsage(t *testing.T, w *Workspace, want int64) {
	t.Helper()
	if got := w.Quota().Used(); got != want {
		t.Errorf("quota Used = %d, want %d", got, want)
	}
	if got := diskUsage(t, w.Root()); got != want {
		t.Errorf("bytes on disk = %d, want %d", got, want)
	}
}

func TestCleanPath(t *testing.T) {
	// A path of MaxPathBytes in names of 128 bytes.
	maxPath := strings.Repeat(strings.Repeat("a", 127)+"/", MaxPathBytes/128)[:MaxPathBytes-1] + "b"
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{"", ".", nil},
		{".", ".", nil},
		{"./", ".", nil},
		{"/workspace", ".", nil},
		{"/workspace/", ".", nil},
		{"//workspace", ".", nil},
		{"a.txt", "a.txt", nil},
		{"./a.txt", "a.txt", nil},
		{"a/b.txt", "a/b.txt", nil},
		{"a//b/./c/", "a/b/c", nil},
		{"a/../b", "b", nil},
		{"/workspace/a/b.txt", "a/b.txt", nil},
		{"/workspace/a/../b.txt", "b.txt", nil},
		{"/workspace/../workspace/c", "c", nil},
		{"..", "", port.ErrPathEscapesWorkspace},
		{"../x", "", port.ErrPathEscapesWorkspace},
		{"a/../../x", "", port.ErrPathEscapesWorkspace},
		{"/workspace/../x", "", port.ErrPathEscapesWorkspace},
		{"/workspace/..", "", port.ErrPathEscapesWorkspace},
		{"/etc/passwd", "", port.ErrPathEscapesWorkspace},
		{"/", "", port.ErrPathEscapesWorkspace},
		{"/tmp/x", "", port.ErrPathEscapesWorkspace},
		{"/workspacex/a", "", port.ErrPathEscapesWorkspace},
		{"a\x00b", "", port.ErrPathEscapesWorkspace},
		{"\x00", "", port.ErrPathEscapesWorkspace},
		{"bad\xffname", "", port.ErrInvalidRequest},
		{maxPath, maxPath, nil},
		{maxPath + "c", "", port.ErrInvalidRequest},
		{strings.Repeat("a", MaxNameBytes), strings.Repeat("a", MaxNameBytes), nil},
		{strings.Repeat("a", MaxNameBytes+1), "", port.ErrInvalidRequest},
		{"d/" + strings.Repeat("é", 128) + "/f", "", port.ErrInvalidRequest}, // 256 bytes
		{"/workspace/" + strings.Repeat("a", MaxNameBytes+1), "", port.ErrInvalidRequest},
		{"/workspace/" + strings.Repeat("a", MaxNameBytes+1) + "/../b", "b", nil}, // cleaned away first
		{"dir/ünïcödé.txt", "dir/ünïcödé.txt", nil},
	}
	for _, tt := range tests {
		got, err := CleanPath(tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("CleanPath(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	w := newWS(t, 0)
	outside := t.TempDir()
	put(t, w, "a/b.txt", "x")
	put(t, w, "inside.txt", "y")
	if err := os.Symlink(outside, filepath.Join(w.Root(), "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("inside.txt", filepath.Join(w.Root(), "in")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(w.Root(), "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(w.Root(), "a", "dangling")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		in   string
		rel  string
		err  error
		desc string
	}{
		{"", ".", nil, "empty is the root"},
		{".", ".", nil, "dot is the root"},
		{"/workspace", ".", nil, "guest root"},
		{"/workspace/a/b.txt", "a/b.txt", nil, "guest absolute"},
		{"a/b.txt", "a/b.txt", nil, "relative"},
		{"a/new/deeper.txt", "a/new/deeper.txt", nil, "missing components are fine"},
		{"a/b.txt/under", "a/b.txt/under", nil, "a file used as a directory does not exist"},
		{"../x", "", port.ErrPathEscapesWorkspace, "dot-dot"},
		{"a/../../x", "", port.ErrPathEscapesWorkspace, "dot-dot in the middle"},
		{"/etc/passwd", "", port.ErrPathEscapesWorkspace, "host absolute"},
		{"/workspace/../x", "", port.ErrPathEscapesWorkspace, "guest dot-dot"},
		{"out", "", port.ErrPathEscapesWorkspace, "symlink to outside"},
		{"out/secret", "", port.ErrPathEscapesWorkspace, "through symlink to outside"},
		{"/workspace/out/secret", "", port.ErrPathEscapesWorkspace, "guest path through symlink"},
		{"in", "", port.ErrPathEscapesWorkspace, "symlink pointing inside"},
		{"dirlink/b.txt", "", port.ErrPathEscapesWorkspace, "through symlink to inside dir"},
		{"a/dangling", "", port.ErrPathEscapesWorkspace, "dangling symlink"},
		{"a\x00", "", port.ErrPathEscapesWorkspace, "NUL"},
		{"\xc3\x28", "", port.ErrInvalidRequest, "invalid UTF-8"},
		{strings.Repeat("x/", MaxPathBytes/2+1), "", port.ErrInvalidRequest, "overlong"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			host, rel, err := w.Resolve(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Resolve(%q) error = %v, want %v", tt.in, err, tt.err)
				}
				if strings.Contains(err.Error(), w.Root()) {
					t.Errorf("error %q reveals the host root", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.in, err)
			}
			if rel != tt.rel {
				t.Errorf("rel = %q, want %q", rel, tt.rel)
			}
			wantHost := filepath.Join(w.Root(), filepath.FromSlash(tt.rel))
			if host != wantHost {
				t.Errorf("host = %q, want %q", host, wantHost)
			}
		})
	}
}

func TestNew(t *testing.T) {
	t.Run("creates root", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "x", "y")
		w, err := New(root, nil)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(root)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("root: %v, %v", fi, err)
		}
		if w.Root() != root || w.Quota() == nil || w.Quota().Limit() != 0 {
			t.Fatalf("Root %q, Quota %v", w.Root(), w.Quota())
		}
	})
	t.Run("relative root made absolute", func(t *testing.T) {
		t.Chdir(t.TempDir())
		w, err := New("rel", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsAbs(w.Root()) {
			t.Fatalf("Root %q is not absolute", w.Root())
		}
	})
	t.Run("charges existing files", func(t *testing.T) {
		root := t.TempDir()
		big := filepath.Join(t.TempDir(), "big")
		if err := os.WriteFile(big, make([]byte, 1000), 0o644); err != nil {
			t.Fatal(err)
		}
		for p, n := range map[string]int{"a": 10, "d/b": 20, "d/e/c": 30} {
			fp := filepath.Join(root, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(fp, make([]byte, n), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(big, filepath.Join(root, "link")); err != nil {
			t.Fatal(err)
		}
		q := NewQuota(40) // already over: charged anyway
		if _, err := New(root, q); err != nil {
			t.Fatal(err)
		}
		if q.Used() != 60 {
			t.Fatalf("Used = %d, want 60 (symlinks not charged)", q.Used())
		}
		if err := q.Reserve(1); !errors.Is(err, port.ErrFileTooLarge) {
			t.Fatalf("Reserve over a full quota = %v", err)
		}
	})
	t.Run("errors", func(t *testing.T) {
		if _, err := New("", nil); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("New(\"\") = %v", err)
		}
		file := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := New(file, nil); err == nil {
			t.Errorf("New(file) succeeded")
		}
	})
}

func TestList(t *testing.T) {
	w := newWS(t, 0)
	put(t, w, "b.txt", "bb")
	put(t, w, "a.png", "png")
	put(t, w, "noext", "n")
	put(t, w, "sub/inner.json", "{}")
	put(t, w, "sub/deeper/x.bin", "x")
	if err := os.Symlink("/etc/passwd", filepath.Join(w.Root(), "link")); err != nil {
		t.Fatal(err)
	}

	got, err := w.List("")
	if err != nil {
		t.Fatal(err)
	}
	want := []port.FileInfo{
		{Path: "a.png", Size: 3, MimeType: "image/png"},
		{Path: "b.txt", Size: 2},
		{Path: "noext", Size: 1, MimeType: "application/octet-stream"},
		{Path: "sub", IsDir: true},
	}
	if len(got) != len(want) {
		t.Fatalf("List = %+v, want %d entries", got, len(want))
	}
	for i, g := range got {
		wt := want[i]
		if g.Path != wt.Path || g.Size != wt.Size || g.IsDir != wt.IsDir || g.ModTime.IsZero() {
			t.Errorf("entry %d = %+v, want %+v", i, g, wt)
		}
		if wt.MimeType != "" && g.MimeType != wt.MimeType {
			t.Errorf("entry %s MimeType = %q, want %q", g.Path, g.MimeType, wt.MimeType)
		}
		if g.IsDir && g.MimeType != "" {
			t.Errorf("directory %s has MimeType %q", g.Path, g.MimeType)
		}
		if !g.IsDir && g.MimeType == "" {
			t.Errorf("file %s has no MimeType", g.Path)
		}
	}
	if !strings.HasPrefix(got[1].MimeType, "text/plain") {
		t.Errorf("b.txt MimeType = %q", got[1].MimeType)
	}

	for _, dir := range []string{"sub", "/workspace/sub", "./sub/"} {
		sub, err := w.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(sub) != 2 || sub[0].Path != "sub/deeper" || !sub[0].IsDir || sub[1].Path != "sub/inner.json" || sub[1].MimeType != "application/json" {
			t.Errorf("List(%q) = %+v", dir, sub)
		}
	}

	errTests := []struct {
		dir string
		err error
	}{
		{"missing", port.ErrFileNotFound},
		{"b.txt", port.ErrIsDirectory}, // the contract's 400: a file where a directory was wanted
		{"../", port.ErrPathEscapesWorkspace},
		{"/etc", port.ErrPathEscapesWorkspace},
		{"link", port.ErrPathEscapesWorkspace},
	}
	for _, tt := range errTests {
		if _, err := w.List(tt.dir); !errors.Is(err, tt.err) {
			t.Errorf("List(%q) = %v, want %v", tt.dir, err, tt.err)
		}
	}
	empty, err := w.List("sub/deeper/../deeper")
	if err != nil || len(empty) != 1 {
		t.Errorf("List(sub/deeper) = %v, %v", empty, err)
	}
}

func TestOpen(t *testing.T) {
	w := newWS(t, 0)
	put(t, w, "d/f.txt", "hello")
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.Root(), "link")); err != nil {
		t.Fatal(err)
	}

	rc, info, err := w.Open("/workspace/d/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(data) != "hello" {
		t.Fatalf("read %q, %v", data, err)
	}
	if info.Path != "d/f.txt" || info.Size != 5 || info.IsDir || !strings.HasPrefix(info.MimeType, "text/plain") {
		t.Fatalf("info = %+v", info)
	}

	for _, tt := range []struct {
		p   string
		err error
	}{
		{"missing.txt", port.ErrFileNotFound},
		{"d/f.txt/x", port.ErrFileNotFound},
		{"d", port.ErrIsDirectory},
		{"", port.ErrIsDirectory},
		{"link", port.ErrPathEscapesWorkspace},
		{"../secret", port.ErrPathEscapesWorkspace},
	} {
		rc, _, err := w.Open(tt.p)
		if !errors.Is(err, tt.err) {
			t.Errorf("Open(%q) = %v, want %v", tt.p, err, tt.err)
		}
		if rc != nil {
			t.Errorf("Open(%q) returned a reader with error", tt.p)
			rc.Close()
		}
	}
}

func TestReadFile(t *testing.T) {
	w := newWS(t, 0)
	put(t, w, "f", "0123456789")
	for _, tt := range []struct {
		max  int64
		want string
		err  error
	}{
		{0, "0123456789", nil},
		{-1, "0123456789", nil},
		{10, "0123456789", nil},
		{9, "", port.ErrFileTooLarge},
	} {
		got, err := w.ReadFile("f", tt.max)
		if !errors.Is(err, tt.err) || string(got) != tt.want {
			t.Errorf("ReadFile(max %d) = %q, %v; want %q, %v", tt.max, got, err, tt.want, tt.err)
		}
	}
	if _, err := w.ReadFile("nope", 0); !errors.Is(err, port.ErrFileNotFound) {
		t.Errorf("ReadFile(missing) = %v", err)
	}
}

// countingReader yields an endless stream of 'x' and counts what it gave.
type countingReader struct{ n int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	r.n += int64(len(p))
	return len(p), nil
}

func TestWrite(t *testing.T) {
	t.Run("new file with parents", func(t *testing.T) {
		w := newWS(t, 100)
		info, err := w.Write("/workspace/a/b/c.txt", strings.NewReader("hello"), 0)
		if err != nil {
			t.Fatal(err)
		}
		if info.Path != "a/b/c.txt" || info.Size != 5 || info.IsDir || info.ModTime.IsZero() || info.MimeType == "" {
			t.Fatalf("info = %+v", info)
		}
		data, err := os.ReadFile(filepath.Join(w.Root(), "a", "b", "c.txt"))
		if err != nil || string(data) != "hello" {
			t.Fatalf("on disk: %q, %v", data, err)
		}
		checkUsage(t, w, 5)
	})

	t.Run("replace releases the old size", func(t *testing.T) {
		w := newWS(t, 100)
		if err := w.WriteFile("f", bytes.Repeat([]byte("a"), 40), 0); err != nil {
			t.Fatal(err)
		}
		checkUsage(t, w, 40)
		if err := w.WriteFile("f", []byte("short"), 0); err != nil {
			t.Fatal(err)
		}
		checkUsage(t, w, 5)
		if err := w.WriteFile("f", bytes.Repeat([]byte("b"), 90), 0); err != nil {
			t.Fatal(err)
		}
		checkUsage(t, w, 90)
		// 90 bytes in use of 100: a 95-byte replacement fits, since the
		// replaced file's bytes are freed by it.
		if err := w.WriteFile("f", bytes.Repeat([]byte("c"), 95), 0); err != nil {
			t.Fatalf("replacement that fits the quota: %v", err)
		}
		checkUsage(t, w, 95)
	})

	t.Run("over maxBytes leaves the old file", func(t *testing.T) {
		w := newWS(t, 0)
		if err := w.WriteFile("f", []byte("old"), 0); err != nil {
			t.Fatal(err)
		}
		r := &countingReader{}
		_, err := w.Write("f", r, 10)
		if !errors.Is(err, port.ErrFileTooLarge) {
			t.Fatalf("Write over maxBytes = %v", err)
		}
		if r.n > 11 {
			t.Errorf("read %d bytes from the reader, want at most 11", r.n)
		}
		data, _ := os.ReadFile(filepath.Join(w.Root(), "f"))
		if string(data) != "old" {
			t.Errorf("old file = %q", data)
		}
		checkUsage(t, w, 3)
		assertNoTemp(t, w)
	})

	t.Run("exactly maxBytes", func(t *testing.T) {
		w := newWS(t, 0)
		info, err := w.Write("f", iotest.OneByteReader(strings.NewReader("0123456789")), 10)
		if err != nil || info.Size != 10 {
			t.Fatalf("Write of exactly maxBytes = %+v, %v", info, err)
		}
		checkUsage(t, w, 10)
	})

	t.Run("over the quota leaves the old file", func(t *testing.T) {
		w := newWS(t, 50)
		if err := w.WriteFile("other", bytes.Repeat([]byte("o"), 30), 0); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFile("f", []byte("old"), 0); err != nil {
			t.Fatal(err)
		}
		_, err := w.Write("f", strings.NewReader("SECRET-"+strings.Repeat("z", 40)), 0)
		if !errors.Is(err, port.ErrFileTooLarge) {
			t.Fatalf("Write over quota = %v", err)
		}
		var qe *QuotaError
		if !errors.As(err, &qe) || qe.Limit != 50 {
			t.Errorf("error %v is not a QuotaError with limit 50", err)
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), w.Root()) {
			t.Errorf("error %q leaks contents or host path", err)
		}
		data, _ := os.ReadFile(filepath.Join(w.Root(), "f"))
		if string(data) != "old" {
			t.Errorf("old file = %q", data)
		}
		checkUsage(t, w, 33)
		assertNoTemp(t, w)
		// A new file over the quota leaves nothing behind.
		if _, err := w.Write("new/file", strings.NewReader(strings.Repeat("n", 18)), 0); !errors.Is(err, port.ErrFileTooLarge) {
			t.Fatalf("new file over quota = %v", err)
		}
		if ok, _ := w.Exists("new/file"); ok {
			t.Error("refused file exists")
		}
		checkUsage(t, w, 33)
		if _, err := w.Write("new/file", strings.NewReader(strings.Repeat("n", 17)), 0); err != nil {
			t.Fatalf("file that just fits: %v", err)
		}
		checkUsage(t, w, 50)
	})

	t.Run("reader error", func(t *testing.T) {
		w := newWS(t, 100)
		boom := errors.New("boom")
		r := io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom))
		if _, err := w.Write("f", r, 0); !errors.Is(err, boom) {
			t.Fatalf("Write = %v, want boom", err)
		}
		if ok, _ := w.Exists("f"); ok {
			t.Error("file exists after a failed write")
		}
		checkUsage(t, w, 0)
		assertNoTemp(t, w)
	})

	t.Run("preserves mode", func(t *testing.T) {
		w := newWS(t, 0)
		put(t, w, "run.sh", "#!/bin/sh\n")
		if err := os.Chmod(filepath.Join(w.Root(), "run.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFile("run.sh", []byte("#!/bin/sh\necho\n"), 0); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(w.Root(), "run.sh"))
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("mode = %v, %v", fi.Mode(), err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		w := newWS(t, 0)
		put(t, w, "file", "f")
		put(t, w, "dir/x", "x")
		outside := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(w.Root(), "out")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("file", filepath.Join(w.Root(), "in")); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			p   string
			err error
		}{
			{"dir", port.ErrIsDirectory},
			{"", port.ErrIsDirectory},
			{"/workspace", port.ErrIsDirectory},
			{"file/child", port.ErrInvalidRequest},
			{"../x", port.ErrPathEscapesWorkspace},
			{"/etc/passwd", port.ErrPathEscapesWorkspace},
			{"/workspace/../x", port.ErrPathEscapesWorkspace},
			{"out/x", port.ErrPathEscapesWorkspace},
			{"out", port.ErrPathEscapesWorkspace},
			{"in", port.ErrPathEscapesWorkspace},
			{"a\x00", port.ErrPathEscapesWorkspace},
			{"\xff", port.ErrInvalidRequest},
		} {
			if _, err := w.Write(tt.p, strings.NewReader("data"), 0); !errors.Is(err, tt.err) {
				t.Errorf("Write(%q) = %v, want %v", tt.p, err, tt.err)
			}
		}
		entries, err := os.ReadDir(outside)
		if err != nil || len(entries) != 0 {
			t.Errorf("outside dir has %d entries, %v", len(entries), err)
		}
		if data, _ := os.ReadFile(filepath.Join(w.Root(), "file")); string(data) != "f" {
			t.Errorf("symlink target changed: %q", data)
		}
		if w.Quota().Used() != 0 || diskUsage(t, w.Root()) != 2 {
			t.Errorf("Used %d, on disk %d; want 0 and 2 (put bypasses the quota)", w.Quota().Used(), diskUsage(t, w.Root()))
		}
		assertNoTemp(t, w)
	})
}

func assertNoTemp(t *testing.T, w *Workspace) {
	t.Helper()
	err := filepath.WalkDir(w.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), tmpPrefix) {
			t.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRemoveStatExists(t *testing.T) {
	w := newWS(t, 100)
	if err := w.WriteFile("d/f.txt", []byte("12345"), 0); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("g", []byte("123"), 0); err != nil {
		t.Fatal(err)
	}
	checkUsage(t, w, 8)

	info, err := w.Stat("/workspace/d/f.txt")
	if err != nil || info.Path != "d/f.txt" || info.Size != 5 || info.IsDir {
		t.Fatalf("Stat = %+v, %v", info, err)
	}
	info, err = w.Stat("d")
	if err != nil || info.Path != "d" || !info.IsDir || info.Size != 0 || info.MimeType != "" {
		t.Fatalf("Stat(dir) = %+v, %v", info, err)
	}
	if info, err := w.Stat(""); err != nil || info.Path != "." || !info.IsDir {
		t.Fatalf("Stat(root) = %+v, %v", info, err)
	}
	if _, err := w.Stat("nope"); !errors.Is(err, port.ErrFileNotFound) {
		t.Errorf("Stat(missing) = %v", err)
	}
	for p, want := range map[string]bool{"d/f.txt": true, "d": true, "nope": false, "d/f.txt/x": false} {
		if got, err := w.Exists(p); err != nil || got != want {
			t.Errorf("Exists(%q) = %v, %v; want %v", p, got, err, want)
		}
	}
	if _, err := w.Exists("../x"); !errors.Is(err, port.ErrPathEscapesWorkspace) {
		t.Errorf("Exists(../x) = %v", err)
	}

	if err := w.Remove("d"); !errors.Is(err, port.ErrIsDirectory) {
		t.Errorf("Remove(dir) = %v", err)
	}
	if err := w.Remove("nope"); !errors.Is(err, port.ErrFileNotFound) {
		t.Errorf("Remove(missing) = %v", err)
	}
	if err := w.Remove("/etc/passwd"); !errors.Is(err, port.ErrPathEscapesWorkspace) {
		t.Errorf("Remove(/etc/passwd) = %v", err)
	}
	if err := w.Remove("d/f.txt"); err != nil {
		t.Fatal(err)
	}
	checkUsage(t, w, 3)
	if ok, _ := w.Exists("d/f.txt"); ok {
		t.Error("removed file exists")
	}
	if err := w.Remove("g"); err != nil {
		t.Fatal(err)
	}
	checkUsage(t, w, 0)
}

func TestRemoveAll(t *testing.T) {
	q := NewQuota(1000)
	base := t.TempDir()
	w1, err := New(filepath.Join(base, "ws"), q)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := New(filepath.Join(base, "tmp"), q)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", "b/c", "b/d/e"} {
		if err := w1.WriteFile(p, []byte("0123456789"), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w2.WriteFile("t", []byte("01234"), 0); err != nil {
		t.Fatal(err)
	}
	if q.Used() != 35 {
		t.Fatalf("Used = %d, want 35", q.Used())
	}
	if err := w1.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w1.Root()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("root still there: %v", err)
	}
	if q.Used() != 5 {
		t.Fatalf("Used after RemoveAll = %d, want 5 (the other directory's)", q.Used())
	}
	if err := w1.RemoveAll(); err != nil {
		t.Fatalf("second RemoveAll: %v", err)
	}
	if q.Used() != 5 {
		t.Fatalf("Used after second RemoveAll = %d, want 5", q.Used())
	}
	if _, err := w1.Stat("a"); !errors.Is(err, port.ErrFileNotFound) {
		t.Errorf("Stat after RemoveAll = %v", err)
	}
	if err := w2.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if q.Used() != 0 {
		t.Fatalf("Used = %d, want 0", q.Used())
	}
}

func TestErrorsNameNoHostPath(t *testing.T) {
	w := newWS(t, 10)
	put(t, w, "d/x", "x")
	calls := map[string]error{}
	_, calls["open"] = w.ReadFile("missing", 0)
	calls["remove"] = w.Remove("d")
	_, calls["list"] = w.List("d/x")
	_, calls["write"] = w.Write("d/x/y", strings.NewReader("1"), 0)
	_, calls["quota"] = w.Write("z", strings.NewReader("0123456789A"), 0)
	for name, err := range calls {
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), w.Root()) {
			t.Errorf("%s: error %q contains the host root", name, err)
		}
	}
}

// TestWriteMode: a file written with a mode gets it as AllowedMode allows
// (a restored snapshot's files), where Write keeps a replaced file's bits.
func TestWriteMode(t *testing.T) {
	w := newWS(t, 0)
	bits := func(p string) fs.FileMode {
		t.Helper()
		fi, err := os.Stat(filepath.Join(w.Root(), p))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	for perm, want := range map[fs.FileMode]fs.FileMode{0o600: 0o600, 0o777: 0o755, 0o000: 0o000} {
		if _, err := w.WriteMode("f", strings.NewReader("x"), 0, perm); err != nil {
			t.Fatal(err)
		}
		if got := bits("f"); got != want {
			t.Errorf("WriteMode %o: %o, want %o", perm, got, want)
		}
	}
	if err := w.Chmod("f", 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write("f", strings.NewReader("y"), 0); err != nil {
		t.Fatal(err)
	}
	if got := bits("f"); got != 0o640 {
		t.Errorf("Write over a 0640 file: %o", got)
	}
}

// A path that names a directory by its spelling ("out/", "out/.",
// "out/sub/..") was cleaned to "out" and written as a file of that name:
// an upload meant for a directory landed beside it, under the directory's
// name. Now it is refused as a directory, as open(2) refuses it, and
// nothing is written.
func TestWriteRefusesAPathSpeltAsADirectory(t *testing.T) {
	for _, p := range []string{"out/", "out/.", "out/sub/..", "/workspace/out/", "out//"} {
		w := newWS(t, 100)
		_, err := w.Write(p, strings.NewReader("x"), 0)
		if !errors.Is(err, port.ErrIsDirectory) {
			t.Errorf("Write(%q) = %v; want ErrIsDirectory", p, err)
		}
		if _, err := os.Lstat(filepath.Join(w.Root(), "out")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Write(%q) left something at out: %v", p, err)
		}
		checkUsage(t, w, 0)
	}
}

// A limit of math.MaxInt64 (a configured "no limit") overflowed the
// reader's bound of limit+1 bytes: Write wrote an empty file and
// reported success, ReadFile returned no bytes. Every byte is kept now.
func TestLargestLimitKeepsEveryByte(t *testing.T) {
	w := newWS(t, 0)
	info, err := w.Write("f", strings.NewReader("hello"), math.MaxInt64)
	if err != nil || info.Size != 5 {
		t.Errorf("Write under a limit of MaxInt64: %+v, %v; want 5 bytes", info, err)
	}
	put(t, w, "g", "world")
	if b, err := w.ReadFile("g", math.MaxInt64); err != nil || string(b) != "world" {
		t.Errorf("ReadFile under a limit of MaxInt64: %q, %v; want %q", b, err, "world")
	}
}

// A path spelt as a directory ("a.txt/") that names a file opened the
// file, where every host says ENOTDIR: a client could read a.txt under a
// name that is not its own. It is refused as not a directory (which the
// contract counts as port.ErrIsDirectory, as a listing of a file is).
func TestOpenRefusesAFileSpeltAsADirectory(t *testing.T) {
	w := newWS(t, 0)
	put(t, w, "a.txt", "x")
	for _, p := range []string{"a.txt/", "a.txt/.", "/workspace/a.txt/"} {
		if _, _, err := w.Open(p); !errors.Is(err, port.ErrIsDirectory) || !errors.Is(err, ErrNotDirectory) {
			t.Errorf("Open(%q) = %v; want ErrIsDirectory with ErrNotDirectory", p, err)
		}
		if _, err := w.ReadFile(p, 0); !errors.Is(err, ErrNotDirectory) {
			t.Errorf("ReadFile(%q) = %v; want ErrNotDirectory", p, err)
		}
	}
}

// A file a program made unreadable (chmod 000) is still the host's to
// read: a download, an output's copy and the editor open it, and its bits
// stay as the program set them. Root never meets the bits, so the check
// needs another user (the container image runs as one).
func TestHostReadsAFileTheProgramMadeUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a file whatever its bits; run this test as another user (the Dockerfile's uid 65532) to exercise it")
	}
	w := newWS(t, 0)
	if _, err := w.Write("f", strings.NewReader("kept"), 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Chmod("f", 0); err != nil {
		t.Fatal(err)
	}
	rc, _, err := w.Open("f")
	if err != nil {
		t.Fatalf("Open of a file chmod 000: %v", err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(b) != "kept" {
		t.Fatalf("read %q, %v", b, err)
	}
	if b, err := w.ReadFile("f", 0); err != nil || string(b) != "kept" {
		t.Fatalf("ReadFile: %q, %v", b, err)
	}
	fi, err := os.Stat(filepath.Join(w.Root(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0 {
		t.Errorf("bits after the host's reads: %o, want 0", fi.Mode().Perm())
	}
}
