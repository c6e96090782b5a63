package wasm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
)

// interpreterImageName names the memfd of the interpreter's image; the
// shell's is "codeport-shell-image" (shellimage.go).
const interpreterImageName = "codeport-interpreter-image"

// image is an initialised interpreter, as the template left it: its linear
// memory and its mutable globals (the C stack pointer above all). An
// instance of the same module given both is that interpreter, with the
// driver ready and the common modules imported, without having run any of
// CPython's start-up.
//
// What is not in an image: the host's side of WASI (open descriptors, which
// are the standard streams and the preopened directories, made the same for
// every instance), and the interrupt global, which starts clear.
type image struct {
	size int // bytes of memory
	// chunks says, per imageChunk bytes of memory, whether any is non-zero:
	// a restore writes only those, so the pages an idle session has
	// touched are the ones CPython's state is in.
	chunks  []bool
	globals []globalValue
	// shared holds the memory in a memfd that sessions map copy-on-write
	// (or read, when a mapping fails); where the host has none, memory
	// holds it instead. Never both: the image is 20 MiB.
	shared *sharedImage
	memory []byte
	// id names this image, which is this process's own (its hash secret
	// is drawn at boot): a snapshot made as a difference from it is
	// meaningful only here.
	id string
}

type globalValue struct {
	name  string
	value uint64
}

// imageChunk is the unit of a restore: the host's page size.
const imageChunk = 4096

// takeImage copies an instance's memory and its exported mutable globals:
// the memory into a sharedImage, or where that fails (notShared says why)
// onto the heap.
func takeImage(mod api.Module, module []byte) (img *image, notShared, err error) {
	mem := mod.Memory()
	if mem == nil {
		return nil, nil, errors.New("the interpreter has no memory")
	}
	view, ok := mem.Read(0, mem.Size())
	if !ok {
		return nil, nil, errors.New("cannot read the interpreter's memory")
	}
	img = &image{size: len(view)}
	img.chunks = make([]bool, (len(view)+imageChunk-1)/imageChunk)
	for i := range img.chunks {
		img.chunks[i] = !allZero(view[i*imageChunk : min((i+1)*imageChunk, len(view))])
	}
	if img.globals, err = snapshotGlobals(mod, module); err != nil {
		return nil, nil, err
	}
	if img.shared, notShared = newSharedImage(interpreterImageName, view, img.chunks); notShared != nil {
		img.memory = bytes.Clone(view)
	}
	return img, notShared, nil
}

// snapshotGlobals reads the mutable globals that module (the bytes mod was
// compiled from) exports for snapshots.
func snapshotGlobals(mod api.Module, module []byte) ([]globalValue, error) {
	names, err := wasmpatch.SnapshotGlobals(module)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("the runtime module exports no globals to snapshot")
	}
	globals := make([]globalValue, 0, len(names))
	for _, name := range names {
		g := mod.ExportedGlobal(name)
		if g == nil {
			return nil, fmt.Errorf("global %s is not exported", name)
		}
		globals = append(globals, globalValue{name, g.Get()})
	}
	return globals, nil
}

// restore makes a fresh instance of the module the image's interpreter.
// mapped says its memory already holds the image (a sharedImage mapping):
// then only the globals are set.
func (img *image) restore(mod api.Module, mapped bool) error {
	mem := mod.Memory()
	if have := mem.Size(); uint64(have) < uint64(img.size) {
		if _, ok := mem.Grow((uint32(img.size) - have) / wasmPage); !ok {
			return fmt.Errorf("cannot grow memory to %d bytes (is the memory limit below the image?)", img.size)
		}
	}
	view, ok := mem.Read(0, uint32(img.size))
	if !ok {
		return errors.New("cannot address the instance's memory")
	}
	for i, nonZero := range img.chunks {
		if mapped {
			break
		}
		lo, hi := i*imageChunk, min((i+1)*imageChunk, img.size)
		switch {
		case nonZero && img.shared != nil:
			if err := img.shared.readAt(view[lo:hi], lo); err != nil {
				return err
			}
		case nonZero:
			copy(view[lo:hi], img.memory[lo:hi])
		case !allZero(view[lo:hi]):
			// Only when the module initialised its memory itself; a
			// patched module's data is passive and its memory starts
			// zeroed. Reading a zero page does not make it resident.
			clear(view[lo:hi])
		}
	}
	return img.setGlobals(mod)
}

// setGlobals sets mod's mutable globals to the image's.
func (img *image) setGlobals(mod api.Module) error {
	for _, g := range img.globals {
		mg, ok := mod.ExportedGlobal(g.name).(api.MutableGlobal)
		if !ok {
			return fmt.Errorf("global %s is not mutable", g.name)
		}
		mg.Set(g.value)
	}
	return nil
}

// residentBytes is what a restore writes: the non-zero part of the image.
func (img *image) residentBytes() int {
	n := 0
	for _, nz := range img.chunks {
		if nz {
			n += imageChunk
		}
	}
	return n
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// chunk reads chunk i of the image into buf (imageChunk bytes) and
// returns the part of buf it fills; nil for a chunk past the image.
func (img *image) chunk(i int, buf []byte) ([]byte, error) {
	lo := i * imageChunk
	if lo >= img.size {
		return nil, nil
	}
	hi := min(lo+imageChunk, img.size)
	b := buf[:hi-lo]
	switch {
	case !img.chunks[i]:
		clear(b)
	case img.shared != nil:
		if err := img.shared.readAt(b, lo); err != nil {
			return nil, err
		}
	default:
		copy(b, img.memory[lo:hi])
	}
	return b, nil
}
