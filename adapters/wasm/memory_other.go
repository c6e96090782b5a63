//go:build !linux

package wasm

import (
	"errors"
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// sharedImage is Linux's memfd mapping; elsewhere every session's memory
// is restored by copying the image.
type sharedImage struct{}

func newSharedImage(string, []byte, []bool) (*sharedImage, error) {
	return nil, errors.New("copy-on-write images need Linux")
}

func buildSharedImage(string, int, []bool, func(int, []byte) error) (*sharedImage, error) {
	return nil, errors.New("copy-on-write images need Linux")
}

func (*sharedImage) readAt([]byte, int) error { return errors.New("no shared image") }

func (*sharedImage) close() {}

type allocation struct {
	mapped      bool
	hostRefused atomic.Bool // never set: wazero's own memory has no such check
}

func (*sharedImage) allocation() *allocation { return &allocation{} }

func (*allocation) Allocate(capBytes, maxBytes uint64) experimental.LinearMemory {
	return newHeapMemory(capBytes, maxBytes)
}

func (*sharedImage) setHot([]bool) {}

func (*sharedImage) hotBytes() int { return 0 }

func (*allocation) writtenPages() ([]bool, error) {
	return nil, errors.New("no mapped memory to inspect")
}

func (*allocation) adviseHuge([]byte, int, []byte) {}

func (*allocation) reset() error { return errors.New("no mapped memory to reset") }

// dataRoom is known on Linux only.
func dataRoom() (uint64, bool) { return 0, false }
