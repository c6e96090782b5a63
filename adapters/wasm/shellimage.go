package wasm

import (
	"errors"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
)

// shellImage is the memory every shell guest starts with (that of an
// initialised instance of it: see wasmshell.Image), in a sharedImage as
// the interpreter's image is: each session's shell maps it copy-on-write,
// so the 5.5 MiB that each shell had written into its own memory are one
// copy for the process, and a session owns only the pages its shell
// writes.
type shellImage struct{ s *sharedImage }

// newShellImage is wasmshell.Config.Image.
func newShellImage(memory []byte) (wasmshell.Image, error) {
	chunks := make([]bool, (len(memory)+imageChunk-1)/imageChunk)
	for i := range chunks {
		chunks[i] = !allZero(memory[i*imageChunk : min((i+1)*imageChunk, len(memory))])
	}
	s, err := newSharedImage("codeport-shell-image", memory, chunks)
	if err != nil {
		return nil, err
	}
	return shellImage{s}, nil
}

func (img shellImage) Allocation() (experimental.MemoryAllocator, func() bool) {
	a := img.s.allocation()
	return a, func() bool { return a.mapped }
}

func (img shellImage) CopyTo(memory []byte) error { return img.s.readAt(memory, 0) }

func (img shellImage) Close() { img.s.close() }

// LearnHot has every later shell's mapping of the image copy at once the
// pages of it that the shell whose memory alloc is wrote (see
// wasmshell's hotLearner), as the interpreter's image does with its probe
// session's (learnHotPages). The engine calls it before any other shell
// starts.
func (img shellImage) LearnHot(alloc experimental.MemoryAllocator) error {
	a, ok := alloc.(*allocation)
	if !ok || !a.mapped {
		return errors.New("the shell's memory is not a mapping of the image")
	}
	written, err := a.writtenPages()
	if err != nil {
		return err
	}
	img.s.setHot(written)
	return nil
}
