package cpython_test

import (
	"bufio"
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
