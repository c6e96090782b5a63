package scientific

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
)

// TestEmbeddedArtifactsMatchSHA256SUMS keeps the embedded bytes and the
// hashes build.sh --profile scientific --check compares against in step.
func TestEmbeddedArtifactsMatchSHA256SUMS(t *testing.T) {
	f, err := os.Open("runtime/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("malformed SHA256SUMS line %q", sc.Text())
		}
		want[name] = sum
	}
	rt := Runtime()
	zip, err := fs.ReadFile(rt.Lib, SiteZip)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{"python-scientific.wasm": rt.Module, SiteZip: zip}
	if len(want) != len(got) {
		t.Fatalf("SHA256SUMS names %d files, want %d", len(want), len(got))
	}
	for name, b := range got {
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != want[name] {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", name, sum, want[name])
		}
	}
	// The library is the default's standard library plus the site zip.
	if _, err := fs.Stat(rt.Lib, cpython.StdlibZip); err != nil {
		t.Errorf("the scientific library lacks the standard library: %v", err)
	}
}
