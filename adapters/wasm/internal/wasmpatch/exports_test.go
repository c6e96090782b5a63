package wasmpatch

import (
	"errors"
	"slices"
	"testing"
)

// SnapshotGlobals names exactly the globals Patch exported for snapshots,
// not the module's own exported globals nor the interrupt.
func TestSnapshotGlobals(t *testing.T) {
	patched, _ := mustPatch(t, globalsModule())
	got, err := SnapshotGlobals(patched)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"codeport_global.1", "codeport_global.4"}; !slices.Equal(got, want) {
		t.Fatalf("SnapshotGlobals = %q, want %q", got, want)
	}
	if got, err := SnapshotGlobals(globalsModule()); err != nil || len(got) != 0 {
		t.Fatalf("an unpatched module: %q, %v", got, err)
	}
	for _, bad := range [][]byte{nil, []byte("\x00asm\x01\x00\x00"), append([]byte(nil), patched[:12]...)} {
		if _, err := SnapshotGlobals(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("SnapshotGlobals(% x...) = %v, want ErrMalformed", bad[:min(len(bad), 8)], err)
		}
	}
}
