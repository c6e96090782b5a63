package wasmpatch

import (
	"bytes"
	"errors"
	"testing"
)

// SplitData hands back the active segments, offsets and bytes, and a
// module that is the input less its data section, byte for byte.
func TestSplitData(t *testing.T) {
	mem := rawSection(secMemory, vec([]byte{0x00, 0x01}))
	custom := customSec("keep", []byte("me"))
	in := wasmModule(mem, custom, vecSec(secData, activeData(16, "ab"), activeData(4096, "xyz")))
	code, data, err := SplitData(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := wasmModule(mem, custom); !bytes.Equal(code, want) {
		t.Errorf("code = % x, want % x", code, want)
	}
	if len(data) != 2 || data[0].Offset != 16 || string(data[0].Bytes) != "ab" || data[1].Offset != 4096 || string(data[1].Bytes) != "xyz" {
		t.Errorf("data = %+v", data)
	}
	if code, data, err := SplitData(wasmModule(mem)); err != nil || !bytes.Equal(code, wasmModule(mem)) || len(data) != 0 {
		t.Errorf("no data section: % x, %v, %v", code, data, err)
	}
}

// A module whose code may name its segments, or that has passive ones,
// would be invalid without them.
func TestSplitDataRefusesSegmentsInUse(t *testing.T) {
	mem := rawSection(secMemory, vec([]byte{0x00, 0x01}))
	for name, in := range map[string][]byte{
		"passive":    wasmModule(mem, vecSec(secData, passiveData("p"))),
		"data count": wasmModule(mem, rawSection(secDataCount, uleb(1)), vecSec(secData, activeData(0, "a"))),
		"negative":   wasmModule(mem, vecSec(secData, activeData(-8, "a"))),
	} {
		if _, _, err := SplitData(in); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
	if _, _, err := SplitData([]byte("\x00asm")); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated: %v, want ErrMalformed", err)
	}
}
