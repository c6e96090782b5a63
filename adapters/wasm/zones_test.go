package wasm

import (
	"os"
	"strings"
	"testing"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
)

// TestZonesFromTheStdlibZip: the shell's time zones are the TZif files of
// the runtime's tzdata; a name that is not a zone's is refused before any
// lookup, and a file of the package that is not a zone is not one.
func TestZonesFromTheStdlibZip(t *testing.T) {
	z := newZones(cpython.Stdlib())
	for _, name := range []string{"Europe/Paris", "UTC", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "EST5EDT"} {
		if b, ok := z.data(name); !ok || !strings.HasPrefix(string(b), "TZif") {
			t.Errorf("%s: %d bytes, %v", name, len(b), ok)
		}
	}
	for _, name := range []string{"", "Europe", "Europe/", "/Europe/Paris", "Europe/../Europe/Paris", "./UTC", "..",
		"Nowhere/Zone", "__init__.py", "zone1970.tab", "Europe/Paris\x00", "Europe\\Paris", strings.Repeat("A", 300)} {
		if b, ok := z.data(name); ok {
			t.Errorf("%q: %d bytes, want none", name, len(b))
		}
	}
	if _, ok := newZones(os.DirFS(t.TempDir())).data("UTC"); ok {
		t.Error("a zones without a zip found a zone")
	}
}
