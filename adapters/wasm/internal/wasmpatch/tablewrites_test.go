package wasmpatch

import "testing"

func TestTableWritesCounted(t *testing.T) {
	refNull := []byte{opRefNull, tFuncref}
	drop := []byte{opDrop}
	mod := wasmModule(
		vecSec(secType, funcType(nil, nil)),
		vecSec(secFunction, uleb(0), uleb(0)),
		vecSec(secTable, []byte{tFuncref, 0x00, 0x02}),
		vecSec(secCode,
			// Reads only: table.get, table.size.
			body(nil, i32Const(0), []byte{0x25, 0x00}, drop, []byte{opPrefixMisc, 0x10, 0x00}, drop),
			// Writes: table.set, table.grow, table.fill, table.copy.
			body(nil,
				i32Const(0), refNull, []byte{0x26, 0x00},
				refNull, i32Const(1), []byte{opPrefixMisc, 0x0f, 0x00}, drop,
				i32Const(0), refNull, i32Const(1), []byte{opPrefixMisc, 0x11, 0x00},
				i32Const(0), i32Const(1), i32Const(1), []byte{opPrefixMisc, 0x0e, 0x00, 0x00},
			),
		),
	)
	n, err := TableWrites(mod)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("TableWrites = %d, want 4 (set, grow, fill, copy)", n)
	}
	if _, err := TableWrites(mod[:len(mod)-3]); err == nil {
		t.Fatal("a truncated module was read without an error")
	}
}
