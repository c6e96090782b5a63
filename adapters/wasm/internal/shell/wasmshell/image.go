package wasmshell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sysfs"

	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
)

// Image holds the memory every shell starts with: that of the engine's
// template, an instance of the guest whose Go runtime has started and
// whose packages are initialised (about 7.5 MiB, 5.5 of them not zero).
// Each shell's memory maps it copy-on-write: the pages a shell only reads
// stay one copy for the process, and a shell owns only the pages it
// writes. Without an image each shell's start copies the template's
// memory (and before the template, each wrote the guest's 4.5 MiB of data
// and started the Go runtime: reading 2.8 MiB of the data and writing
// 0.7 MiB of memory, its own for the session's life).
type Image interface {
	// Allocation returns the allocator of one shell's memory, and a
	// function that reports, once the shell is instantiated, whether its
	// memory maps the image; when it does not (a mapping failed, the
	// image is closed), the shell copies the image in (CopyTo).
	Allocation() (alloc experimental.MemoryAllocator, mapped func() bool)
	// CopyTo writes the image into the start of memory.
	CopyTo(memory []byte) error
	// Close releases the image. Shells started before keep their memory.
	Close()
}

// hotLearner is an Image that can have every later shell's memory copy
// at once, when it is mapped, the pages of the image that a shell wrote
// (alloc, from the image's Allocation, is that shell's memory): the pages
// every shell writes as it starts and runs its first command. Left to the
// guest, each is read first (WebAssembly loads before it stores), which
// maps it shared with its neighbours (the kernel maps the pages around a
// read fault too, up to 64 KiB of them), then written, which copies it:
// the neighbours stay mapped, in the shell's resident memory, and so each
// of those writes costs two faults.
type hotLearner interface {
	LearnHot(alloc experimental.MemoryAllocator) error
}

// probeCommand is what the probe shell of learnHot runs: the least of a
// first command, so that what it writes every shell writes.
const probeCommand = "echo hi"

// learnHot starts a shell from the image, runs probeCommand in it and has
// the image learn what the shell wrote (hotLearner), before any other
// shell starts. Measured (BenchmarkFirstBashMemory), a session's first
// `echo hi` then added 2.52 MiB of resident memory instead of 2.74, its
// first `x=1; ls | wc -l` 2.86 instead of 3.08 (the neighbours no longer
// mapped); what a shell owns is about the same (proportional memory 0.60
// and 0.65 MiB, from 0.61 and 0.69), and its first command is faster
// (BenchmarkSessionFirstBash: 3.3 ms from 3.7). A probe that fails leaves
// the image as it was: shells then fault those pages in one by one.
func (e *Engine) learnHot() {
	l, ok := e.tmpl.image.(hotLearner)
	if !ok {
		return
	}
	none := &sysfs.AdaptFS{FS: emptyDir{}}
	s := &Shell{eng: e, opts: Options{Workspace: none, Tmp: none}}
	defer s.Close()
	inst, err := s.start()
	if err != nil {
		return
	}
	s.inst = inst
	res, err := s.Run(context.Background(), probeCommand, io.Discard, io.Discard)
	if err != nil || res.Lost || res.Code != 0 || inst.alloc == nil {
		return
	}
	_ = l.LearnHot(inst.alloc)
}

// template is what every shell starts from: the memory and the mutable
// globals of an instance of the guest whose _initialize has run, and
// nothing else (no call of it under way, no session's anything: setup,
// which makes a session's shell, runs in each shell after the restore).
// The guest is a reactor whose calls return between the host's calls, so
// those are all of its state; the host's side of it (WASI's descriptors:
// the standard streams and the two mounts) each shell's configuration
// makes the same (moduleConfig). The monotonic clock every instance reads
// is the process's, so the times the template's runtime recorded stay in
// the past of every shell's.
// What the Go runtime drew from randomness in the template is every
// shell's too, until setup moves its generator (see the guest's reseed).
type template struct {
	size    uint32 // bytes of memory
	names   []string
	globals []uint64 // the value of each global of names
	// image holds the memory, or where there is none memory does.
	image  Image
	memory []byte
}

// makeTemplate starts the template: an instance over empty mounts, its
// data written, its _initialize run.
func (e *Engine) makeTemplate() (*template, error) {
	// An instance of its own for warm's calls to the host (its stops,
	// which say go on).
	ctx := context.WithValue(context.Background(), instanceKey{}, &instance{})
	none := &sysfs.AdaptFS{FS: emptyDir{}}
	sleep := func(ns int64) { time.Sleep(time.Duration(ns)) }
	mod, err := e.rt.InstantiateModule(ctx, e.compiled, moduleConfig(none, none, io.Discard, io.Discard, sleep))
	if err != nil {
		return nil, fmt.Errorf("wasmshell: instantiate the template: %w", err)
	}
	defer mod.Close(ctx)
	if err := e.loadData(mod); err != nil {
		return nil, fmt.Errorf("wasmshell: the template: %w", err)
	}
	initialize := mod.ExportedFunction("_initialize")
	if initialize == nil {
		return nil, errors.New("wasmshell: the shell exports no _initialize (is it built as a reactor?)")
	}
	if _, err := initialize.Call(ctx); err != nil {
		return nil, fmt.Errorf("wasmshell: initialise the template: %w", err)
	}
	if warm := mod.ExportedFunction("warm"); warm == nil {
		return nil, errors.New("wasmshell: the shell exports no warm")
	} else if _, err := warm.Call(ctx); err != nil {
		return nil, fmt.Errorf("wasmshell: warm the template: %w", err)
	}
	t := &template{size: mod.Memory().Size(), names: e.globals}
	for _, name := range e.globals {
		g := mod.ExportedGlobal(name)
		if g == nil {
			return nil, fmt.Errorf("wasmshell: global %s is not exported", name)
		}
		t.globals = append(t.globals, g.Get())
	}
	view, ok := mod.Memory().Read(0, t.size)
	if !ok {
		return nil, errors.New("wasmshell: cannot read the template's memory")
	}
	if e.cfg.Image != nil {
		if img, err := e.cfg.Image(view); err == nil {
			t.image = img
			return t, nil
		}
	}
	t.memory = bytes.Clone(view)
	return t, nil
}

// restore makes a fresh instance the template: its memory (already, when
// mapped reports that it maps the image) and its globals.
func (t *template) restore(mod api.Module, mapped func() bool) error {
	mem := mod.Memory()
	if have := mem.Size(); have < t.size {
		if _, ok := mem.Grow((t.size - have) / wasmPage); !ok {
			return fmt.Errorf("cannot grow the shell's memory to %d bytes (is the memory limit below it?)", t.size)
		}
	}
	if mapped == nil || !mapped() {
		view, ok := mem.Read(0, t.size)
		if !ok {
			return errors.New("cannot address the shell's memory")
		}
		if t.image != nil {
			if err := t.image.CopyTo(view); err != nil {
				return err
			}
		} else {
			copy(view, t.memory)
		}
	}
	for i, name := range t.names {
		g, ok := mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return fmt.Errorf("global %s is not exported mutable", name)
		}
		g.Set(t.globals[i])
	}
	return nil
}

// loadData puts the guest's data into a new instance's memory, checking
// that it fits, as instantiation did when the module still carried it.
func (e *Engine) loadData(mod api.Module) error {
	mem := mod.Memory()
	if mem == nil || uint64(mem.Size()) < e.dataEnd {
		return errors.New("the shell's data does not fit its memory")
	}
	for _, seg := range e.data {
		if !mem.Write(seg.Offset, seg.Bytes) {
			return errors.New("the shell's data does not fit its memory")
		}
	}
	return nil
}

// dataEnd is where the last byte of the data ends.
func dataEnd(data []wasmpatch.Segment) uint64 {
	var end uint64
	for _, seg := range data {
		end = max(end, uint64(seg.Offset)+uint64(len(seg.Bytes)))
	}
	return end
}

// emptyDir is an empty directory: the template's two mounts. The Go
// runtime's start records each mount's name and that it is a directory
// (which opens it) and reads nothing of it; a mount that cannot be
// opened would be left out of what it records, and so of every shell's.
type emptyDir struct{}

func (emptyDir) Open(name string) (fs.File, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return emptyDirFile{}, nil
}

type emptyDirFile struct{}

func (emptyDirFile) Stat() (fs.FileInfo, error) { return emptyDirInfo{}, nil }
func (emptyDirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: ".", Err: errors.New("is a directory")}
}
func (emptyDirFile) Close() error { return nil }
func (emptyDirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if n > 0 {
		return nil, io.EOF
	}
	return nil, nil
}

type emptyDirInfo struct{}

func (emptyDirInfo) Name() string       { return "." }
func (emptyDirInfo) Size() int64        { return 0 }
func (emptyDirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (emptyDirInfo) ModTime() time.Time { return time.Time{} }
func (emptyDirInfo) IsDir() bool        { return true }
func (emptyDirInfo) Sys() any           { return nil }
