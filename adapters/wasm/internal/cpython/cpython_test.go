package cpython_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/adapters/wasm/internal/cpython/scientific"
)

// TestEmbeddedArtifactsMatchSHA256SUMS keeps each runtime's embedded bytes
// and the hashes that build.sh --check compares against in step: a
// rebuilt artifact committed without its hash, or the reverse, fails here.
func TestEmbeddedArtifactsMatchSHA256SUMS(t *testing.T) {
	sci := scientific.Runtime()
	for _, c := range []struct {
		sums       string
		rt         cpython.Runtime
		moduleName string
		zip        string
	}{
		{"runtime/SHA256SUMS", cpython.Default(), "python.wasm", cpython.StdlibZip},
		{"scientific/runtime/SHA256SUMS", sci, "python-scientific.wasm", scientific.SiteZip},
	} {
		want := readSums(t, c.sums)
		// The runtime's ID is its SHA256SUMS (what hosts key derived
		// state by).
		if text, err := os.ReadFile(c.sums); err != nil || !strings.HasPrefix(c.rt.ID, string(text)) {
			t.Errorf("%s's ID does not begin with %s (%v)", c.rt.Profile, c.sums, err)
		}
		zip, err := fs.ReadFile(c.rt.Lib, c.zip)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]byte{c.moduleName: c.rt.Module, c.zip: zip}
		if len(want) != len(got) {
			t.Fatalf("%s names %d files, want %d", c.sums, len(want), len(got))
		}
		for name, b := range got {
			sum := sha256.Sum256(b)
			if hex.EncodeToString(sum[:]) != want[name] {
				t.Errorf("%s: sha256 %x, %s says %s", name, sum, c.sums, want[name])
			}
		}
	}
	// The scientific library is the default's standard library plus its
	// site zip.
	if _, err := fs.Stat(sci.Lib, cpython.StdlibZip); err != nil {
		t.Errorf("the scientific library lacks the standard library: %v", err)
	}
}

// readSums reads sha256sum(1) lines: file name to hex digest.
func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("malformed %s line %q", path, sc.Text())
		}
		sums[name] = sum
	}
	return sums
}

// TestMatplotlibDataIsServed: the scientific library serves matplotlib's
// data directory beside the site zip, as files with the zip's bytes, where
// matplotlib's get_data_path (patched) looks for it.
func TestMatplotlibDataIsServed(t *testing.T) {
	lib := scientific.Runtime().Lib
	zipData, err := fs.ReadFile(lib, scientific.SiteZip)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zipData), int64(len(zipData)))
	if err != nil {
		t.Fatal(err)
	}
	served := 0
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, scientific.MatplotlibData+"/") {
			continue
		}
		want, err := fs.ReadFile(zr, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fs.ReadFile(lib, scientific.SiteDir+"/"+f.Name)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s/%s: %d bytes, %v; the zip has %d", scientific.SiteDir, f.Name, len(got), err, len(want))
		}
		served++
	}
	if served < 100 {
		t.Errorf("only %d files of %s are served", served, scientific.MatplotlibData)
	}
	for _, name := range []string{"matplotlibrc", "fonts/ttf/DejaVuSans.ttf", "stylelib/ggplot.mplstyle"} {
		if _, err := fs.Stat(lib, scientific.SiteDir+"/"+scientific.MatplotlibData+"/"+name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Only the data: the packages' code is imported from the zip.
	if _, err := fs.Stat(lib, scientific.SiteDir+"/matplotlib/__init__.pyc"); err == nil {
		t.Errorf("the served directory holds more than matplotlib's data")
	}
}
