package cpython

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// TestEmbeddedArtifactsMatchSHA256SUMS keeps the embedded bytes and the
// hashes that build.sh --check compares against in step: a rebuilt artifact
// committed without its hash, or the reverse, fails here.
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
	zip, err := fs.ReadFile(Stdlib(), StdlibZip)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{"python.wasm": Module(), StdlibZip: zip}
	if len(want) != len(got) {
		t.Fatalf("SHA256SUMS names %d files, want %d", len(want), len(got))
	}
	for name, b := range got {
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != want[name] {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", name, sum, want[name])
		}
	}
}
