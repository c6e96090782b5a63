package wasmshell

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
)

// Image holds the memory every shell starts with: the guest's data (its
// Go program's read-only data, type information and initialised
// variables, about 4.5 MiB) laid out as instantiation would. Writing
// that into each shell's memory made it each shell's own, resident for the
// session's life, though a command writes a few pages of it at most. An
// Image lets each shell's memory map it copy-on-write instead: the pages a
// shell only reads stay one copy for the process, and a shell owns only
// the pages it writes.
//
// The image is taken before any of the guest's code has run, so a shell
// started from it is exactly a freshly instantiated one: its Go runtime
// starts anew in each session, and nothing of another session's is in it.
type Image interface {
	// Allocation returns the allocator of one shell's memory, and a
	// function that reports, once the shell is instantiated, whether its
	// memory maps the image; when it does not (a mapping failed, the
	// image is closed), the memory is zeroed and the shell writes the data
	// into it.
	Allocation() (alloc experimental.MemoryAllocator, mapped func() bool)
	// Close releases the image. Shells started before keep their memory.
	Close()
}

// loadData puts the guest's data into a new instance's memory, unless the
// memory maps the image (mapped reports true), and checks that the data
// fits it, as instantiation checked when the module still carried it.
func (e *Engine) loadData(mod api.Module, mapped func() bool) error {
	mem := mod.Memory()
	if mem == nil || uint64(mem.Size()) < e.dataEnd {
		return errors.New("the shell's data does not fit its memory")
	}
	if mapped != nil && mapped() {
		return nil
	}
	for _, seg := range e.data {
		if !mem.Write(seg.Offset, seg.Bytes) {
			return errors.New("the shell's data does not fit its memory")
		}
	}
	return nil
}

// layOut returns the memory the data makes: its segments at their
// offsets, zeros elsewhere, up to the end of the last one rounded up to a
// page of linear memory.
func layOut(data []wasmpatch.Segment, end uint64) []byte {
	mem := make([]byte, (end+wasmPage-1)/wasmPage*wasmPage)
	for _, seg := range data {
		copy(mem[seg.Offset:], seg.Bytes)
	}
	return mem
}

// dataEnd is where the last byte of the data ends.
func dataEnd(data []wasmpatch.Segment) uint64 {
	var end uint64
	for _, seg := range data {
		end = max(end, uint64(seg.Offset)+uint64(len(seg.Bytes)))
	}
	return end
}

// runStart runs the guest's _start, which returns when the shell ends; an
// exit with status 0 is a clean end.
func runStart(ctx context.Context, mod api.Module) error {
	start := mod.ExportedFunction("_start")
	if start == nil {
		return errors.New("the shell exports no _start")
	}
	_, err := start.Call(ctx)
	var exit *sys.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("_start: %w", err)
	}
	return nil
}
