package cpython_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
)

func testZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f, err := w.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(f, files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestZipDirServesOneDirectoryOfTheZip(t *testing.T) {
	data := testZip(t, map[string]string{
		"pkg/__init__.pyc":            "code",
		"pkg/data/fonts/a.ttf":        "0123456789",
		"pkg/data/matplotlibrc":       "backend: Agg\n",
		"pkg/data/style/x.mplstyle":   "lines.linewidth: 2\n",
		"other/secret.txt":            "not served",
		"pkg/datafile-not-in-dir.txt": "not served either",
	})
	z, err := cpython.ZipDir(data, "site", "pkg/data")
	if err != nil {
		t.Fatal(err)
	}
	// The standard checks of an fs.FS: every listed name opens, stats and
	// reads consistently.
	if err := fstest.TestFS(z, "site/pkg/data/fonts/a.ttf", "site/pkg/data/matplotlibrc", "site/pkg/data/style/x.mplstyle"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"site/other/secret.txt", "site/pkg/__init__.pyc", "site/pkg/datafile-not-in-dir.txt", "pkg/data/matplotlibrc", "other"} {
		if _, err := z.Open(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open(%q) = %v, want not exist", name, err)
		}
	}
	if _, err := z.Open("site/../other/secret.txt"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Open of an invalid path = %v, want invalid", err)
	}
	// FreeType seeks and reads at offsets.
	f, err := z.Open("site/pkg/data/fonts/a.ttf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		t.Fatalf("%T cannot seek", f)
	}
	if _, err := rs.Seek(-3, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	tail, _ := io.ReadAll(rs)
	if string(tail) != "789" {
		t.Errorf("after seeking 3 from the end read %q, want 789", tail)
	}
	if ra, ok := f.(io.ReaderAt); !ok {
		t.Errorf("%T has no ReadAt", f)
	} else {
		b := make([]byte, 2)
		if _, err := ra.ReadAt(b, 4); err != nil || string(b) != "45" {
			t.Errorf("ReadAt(4) = %q, %v; want 45", b, err)
		}
	}
	// Beside another layer, the root lists both.
	u := cpython.Union(fstest.MapFS{"python313.zip": {Data: []byte("zip")}}, z)
	entries, err := fs.ReadDir(u, ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"python313.zip", "site"}) {
		t.Errorf("root of the union lists %q", names)
	}
}

func TestZipDirRefusesWhatItCannotServe(t *testing.T) {
	data := testZip(t, map[string]string{"pkg/data/a": "x"})
	for _, c := range []struct{ dir, keep string }{{"site", "pkg/nodata"}, {"site", "pkg/data/a"}, {".", "pkg/data"}, {"site", "../pkg"}} {
		if _, err := cpython.ZipDir(data, c.dir, c.keep); err == nil {
			t.Errorf("ZipDir(%q, %q) succeeded", c.dir, c.keep)
		}
	}
	if _, err := cpython.ZipDir([]byte("not a zip"), "site", "pkg/data"); err == nil {
		t.Error("ZipDir of bytes that are no zip succeeded")
	}
}
