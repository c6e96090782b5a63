package wasmshell_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
	"github.com/codeport/codeport/internal/workspace"
)

// copiedImage is an Image whose allocations come filled with it, as a
// copy-on-write mapping of it would: the shell must not write its data
// over them (mapped reports true) and must run as one whose data was
// written at its start.
type copiedImage struct {
	memory      []byte
	allocations atomic.Int32
}

func (img *copiedImage) Allocation() (experimental.MemoryAllocator, func() bool) {
	img.allocations.Add(1)
	return experimental.MemoryAllocatorFunc(func(capBytes, maxBytes uint64) experimental.LinearMemory {
		return &filledMemory{buf: append(make([]byte, 0, max(capBytes, uint64(len(img.memory)))), img.memory...), max: maxBytes}
	}), func() bool { return true }
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

// Shells whose memory starts as the engine's image run as shells whose
// data their start wrote, and so does a shell of an engine whose image
// could not be made.
func TestShellsStartFromTheImage(t *testing.T) {
	img := &copiedImage{}
	engines := map[string]wasmshell.Config{
		"image": {MemoryBytes: 64 << 20, Image: func(memory []byte) (wasmshell.Image, error) {
			img.memory = append([]byte(nil), memory...)
			return img, nil
		}},
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
			for range 2 {
				sh := startShell(t, eng)
				out, errOut, res := run(t, sh, context.Background(), "f() { echo \"$1\"; }; f hi | tr a-z A-Z; printf '%s\\n' b a | sort | awk '{print NR\": \"$0}'")
				if want := "HI\n1: a\n2: b\n"; out != want || errOut != "" || res.Code != 0 {
					t.Fatalf("%q %q %+v, want %q", out, errOut, res, want)
				}
			}
		})
	}
	if n := img.allocations.Load(); n != 2 {
		t.Errorf("%d shells' memories came from the image, want 2", n)
	}
}

// startShell starts a shell of eng over fresh directories.
func startShell(t *testing.T, eng *wasmshell.Engine) *wasmshell.Shell {
	t.Helper()
	dir := t.TempDir()
	ws, tmp := filepath.Join(dir, "ws"), filepath.Join(dir, "tmp")
	for _, d := range []string{ws, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	q := workspace.NewQuota(64 << 20)
	sh, err := eng.Start(wasmshell.Options{Workspace: workspace.NewSysFS(ws, q), Tmp: workspace.NewSysFS(tmp, q)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	return sh
}
