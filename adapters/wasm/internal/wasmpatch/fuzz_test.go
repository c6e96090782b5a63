package wasmpatch

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzPatch feeds Patch arbitrary bytes: it must never panic, and what it
// accepts it must turn into a module that Patch can read back and refuses
// as already patched, the same on every run.
//
// wazero is not used as an oracle here: its decoder allocates by the
// counts a module declares (locals, name maps, segments) before reading
// them, so fuzzed counts would make it exhaust memory. The behaviour tests
// run every hand-written module through wazero instead.
func FuzzPatch(f *testing.F) {
	patchedSpin, _, err := Patch(spinModule())
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{
		computeModule(),
		mixedSegmentModule(),
		globalsModule(),
		twoSegmentModule(),
		benchModule(),
		invokeModule(),
		simdLoopModule(),
		everySIMDModule(simdOps),
		patchedSpin,
		wasmModule(),
		[]byte("\x00asm"),
		{0xff, 0x00},
	} {
		f.Add(seed)
	}

	f.Fuzz(func(t *testing.T, in []byte) {
		out, stats, err := Patch(in)
		if err != nil {
			if out != nil {
				t.Fatal("Patch returned output with an error")
			}
			if !strings.HasPrefix(err.Error(), "wasmpatch: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrAlreadyPatched) {
				t.Fatalf("error of no documented kind: %v", err)
			}
			return
		}
		if stats.InputSize != len(in) || stats.OutputSize != len(out) {
			t.Fatalf("stats sizes %d, %d; want %d, %d", stats.InputSize, stats.OutputSize, len(in), len(out))
		}
		if again, _, _ := Patch(in); !bytes.Equal(again, out) {
			t.Fatal("Patch is not deterministic")
		}
		if _, _, err := Patch(out); !errors.Is(err, ErrAlreadyPatched) {
			t.Fatalf("patching the output again: %v; want ErrAlreadyPatched", err)
		}
	})
}
