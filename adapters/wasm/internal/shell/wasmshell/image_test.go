package wasmshell_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
)

// copiedImage is an Image whose allocations come filled with it, as a
// copy-on-write mapping of it would (the shell must not write over them:
// mapped reports true), or, when notMapped, zeroed, as a failed mapping's
// (the shell must copy the image in).
type copiedImage struct {
	memory      []byte
	notMapped   bool
	allocations atomic.Int32
	copies      atomic.Int32
}

func (img *copiedImage) Allocation() (experimental.MemoryAllocator, func() bool) {
	img.allocations.Add(1)
	return experimental.MemoryAllocatorFunc(func(capBytes, maxBytes uint64) experimental.LinearMemory {
		m := &filledMemory{buf: make([]byte, 0, max(capBytes, uint64(len(img.memory)))), max: maxBytes}
		if !img.notMapped {
			m.buf = append(m.buf, img.memory...)
		}
		return m
	}), func() bool { return !img.notMapped }
}

func (img *copiedImage) CopyTo(memory []byte) error {
	img.copies.Add(1)
	copy(memory, img.memory)
	return nil
}

func (*copiedImage) Close() {}

// filledMemory is a linear memory on the heap that starts with the image.
type filledMemory struct {
	buf []byte
	max uint64
}

func (m *filledMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size > uint64(len(m.buf)) {
		m.buf = append(m.buf, make([]byte, size-uint64(len(m.buf)))...)
	}
	return m.buf[:size:size]
}

func (m *filledMemory) Free() { m.buf = nil }

// Shells start as the engine's template: from its image, mapped or
// copied in, and from the template's memory when the image could not be
// made. Each runs commands as a shell of its own.
func TestShellsStartFromTheImage(t *testing.T) {
	mapped, copied := &copiedImage{}, &copiedImage{notMapped: true}
	imageOf := func(img *copiedImage) func([]byte) (wasmshell.Image, error) {
		return func(memory []byte) (wasmshell.Image, error) {
			img.memory = append([]byte(nil), memory...)
			return img, nil
		}
	}
	engines := map[string]wasmshell.Config{
		"mapped": {MemoryBytes: 64 << 20, Image: imageOf(mapped)},
		"copied": {MemoryBytes: 64 << 20, Image: imageOf(copied)},
		"no image": {MemoryBytes: 64 << 20, Image: func([]byte) (wasmshell.Image, error) {
			return nil, errors.New("no image here")
		}},
	}
	for name, cfg := range engines {
		t.Run(name, func(t *testing.T) {
			cfg.Cache = cache()
			eng, err := wasmshell.NewEngine(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = eng.Close(context.Background()) })
			for i := range 2 {
				sh := startShell(t, eng)
				out, errOut, res := run(t, sh, context.Background(), "echo ${x-unset}; x=set; f() { echo \"$1\"; }; f hi | tr a-z A-Z; printf '%s\\n' b a | sort | awk '{print NR\": \"$0}'")
				if want := "unset\nHI\n1: a\n2: b\n"; out != want || errOut != "" || res.Code != 0 {
					t.Fatalf("shell %d: %q %q %+v, want %q", i, out, errOut, res, want)
				}
			}
		})
	}
	if n := mapped.allocations.Load(); n != 2 || mapped.copies.Load() != 0 {
		t.Errorf("%d shells' memories mapped the image, %d copied it; want 2 and 0", n, mapped.copies.Load())
	}
	if n := copied.copies.Load(); n != 2 {
		t.Errorf("%d shells copied the image they could not map, want 2", n)
	}
}

// learningImage is a copiedImage that learns what a shell wrote
// (LearnHot): it records the allocators it made and the ones it learned
// from.
type learningImage struct {
	copiedImage
	mu      sync.Mutex
	allocs  []experimental.MemoryAllocator
	learned []int // the index in allocs of each allocator learned from
}

func (img *learningImage) Allocation() (experimental.MemoryAllocator, func() bool) {
	alloc, mapped := img.copiedImage.Allocation()
	a := &recordedAllocator{alloc}
	img.mu.Lock()
	img.allocs = append(img.allocs, a)
	img.mu.Unlock()
	return a, mapped
}

func (img *learningImage) LearnHot(alloc experimental.MemoryAllocator) error {
	img.mu.Lock()
	defer img.mu.Unlock()
	for i, a := range img.allocs {
		if a == alloc {
			img.learned = append(img.learned, i)
			return nil
		}
	}
	img.learned = append(img.learned, -1)
	return nil
}

type recordedAllocator struct{ experimental.MemoryAllocator }

// An image that learns which pages a shell writes is taught once, by a
// probe shell started from it before any session's, and sessions' shells
// then start from it as before.
func TestImageLearnsFromAProbeShell(t *testing.T) {
	img := &learningImage{}
	eng, err := wasmshell.NewEngine(context.Background(), wasmshell.Config{MemoryBytes: 64 << 20, Cache: cache(),
		Image: func(memory []byte) (wasmshell.Image, error) {
			img.memory = append([]byte(nil), memory...)
			return img, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	for i := range 2 {
		out, errOut, res := run(t, startShell(t, eng), context.Background(), "echo ${x-unset}; x=set; echo a | tr a A")
		if want := "unset\nA\n"; out != want || errOut != "" || res.Code != 0 {
			t.Fatalf("shell %d: %q %q %+v, want %q", i, out, errOut, res, want)
		}
	}
	img.mu.Lock()
	defer img.mu.Unlock()
	if len(img.learned) != 1 || img.learned[0] != 0 {
		t.Fatalf("learned from allocations %v of %d; want once, from the first (the probe's)", img.learned, len(img.allocs))
	}
	if len(img.allocs) != 3 {
		t.Errorf("%d allocations, want 3: the probe's and two sessions'", len(img.allocs))
	}
}

// startShell starts a shell of eng over fresh directories.
func startShell(t *testing.T, eng *wasmshell.Engine) *wasmshell.Shell {
	t.Helper()
	_, ws, tmp := shellDirs(t)
	sh, err := eng.Start(wasmshell.Options{Workspace: ws, Tmp: tmp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	return sh
}
