package wasm

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHugePages asks the kernel to back p's memory with huge pages
// where it can (whole 2 MiB pages) when it is first touched: a hint, which
// transparent huge pages set to madvise or always honour and never does
// not, and which changes nothing of what the memory holds. p is advised
// from its first whole page to its last, so that memory mapped for p alone
// stays one mapping.
func adviseHugePages(p []byte) {
	page := uintptr(unix.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	first, last := (start+page-1)&^(page-1), (start+uintptr(len(p)))&^(page-1)
	if first >= last {
		return
	}
	_ = unix.Madvise(p[first-start:last-start], unix.MADV_HUGEPAGE)
}
