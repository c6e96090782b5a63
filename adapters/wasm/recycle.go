package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// Recycling: an instance whose session ended cleanly is made the image
// again and kept for the next session, instead of being closed while
// another is instantiated. Instantiating cost about 0.6 ms of CPU, more
// than a short session's calls (wazero evaluates each element of the
// function table, the memory is mapped and unmapped, and a new mapping
// faults its pages in one by one); a reset costs the pages the session
// wrote, copied in place: about 0.1 ms after a print.
//
// What an instance carries from one session to the next, and how each is
// put back:
//   - linear memory: the pages it wrote are copied back from the image, or
//     dropped so that the image's page shows again (allocation.reset; a
//     page swapped out counts as written); an instance whose memory grew
//     is not recycled (a memory cannot shrink, and a larger one would be
//     the next session's to see);
//   - mutable globals: set to the image's, as a new instance's are;
//   - the function table: never written (the runtime modules have no
//     instruction that writes a table: wasmpatch.TableWrites, which
//     TestCommittedRuntimesWriteNoTable checks);
//   - descriptors: an instance is recycled only with no file open and with
//     its standard streams and preopened directories as they were at
//     instantiation (fdCensus, read through WASI's own functions);
//   - mounts: /workspace and /tmp are slots (mountSlot) pointed at the next
//     session's directories, and every mount's root handle (which WASI
//     opens itself) is opened anew;
//   - a call stopped, trapped or out of memory, and a module that exited:
//     never recycled.

// spareInstances bounds the recycled instances kept for the next
// sessions: the pool's refills and cold starts take them.
const spareInstances = 4

// mountSlot is an instance's mount of a file system that can change
// between its sessions (/workspace's and /tmp's do; the library's and the
// root's stay) and that counts the files opened through it and not yet
// closed.
//
// WASI opens each preopened directory itself, once, the first time a path
// is resolved through it, and keeps it open for the instance's life. That
// handle (the only OpenFile of "." with no permission bits: a program's
// opens come with 0o600) is the slot's root: not counted, and re-opened in
// the slot's current file system when the slot is pointed elsewhere.
type mountSlot struct {
	fs   atomic.Pointer[mountedFS]
	open *atomic.Int64
	root atomic.Pointer[slotRoot]
}

type mountedFS struct{ experimentalsys.FS }

func newMountSlot(fsys experimentalsys.FS, open *atomic.Int64) *mountSlot {
	m := &mountSlot{open: open}
	m.fs.Store(&mountedFS{fsys})
	return m
}

// set points the slot at fsys, and its root handle, if WASI opened it, at
// fsys's root.
func (m *mountSlot) set(fsys experimentalsys.FS) error {
	m.fs.Store(&mountedFS{fsys})
	r := m.root.Load()
	if r == nil {
		return nil
	}
	if r.File != nil {
		_ = r.File.Close()
	}
	f, errno := fsys.OpenFile(".", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		r.File = nil
		return fmt.Errorf("open the mount's root: %w", errno)
	}
	r.File = f
	return nil
}

// park closes the slot's root handle while its instance waits for a next
// session (set opens it again): a kept instance holds no descriptor of
// the host's.
func (m *mountSlot) park() {
	if r := m.root.Load(); r != nil && r.File != nil {
		_ = r.File.Close()
		r.File = nil
	}
}

func (m *mountSlot) cur() experimentalsys.FS { return m.fs.Load().FS }

func (m *mountSlot) String() string { return fmt.Sprint(m.cur()) }

// OpenFile counts the file until it is closed.
func (m *mountSlot) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	f, errno := m.cur().OpenFile(path, flag, perm)
	if errno != 0 {
		return nil, errno
	}
	if path == "." && flag == experimentalsys.O_RDONLY && perm == 0 {
		r := &slotRoot{File: f, slot: m}
		m.root.Store(r)
		return r, 0
	}
	m.open.Add(1)
	c := &countedFile{File: f, open: m.open}
	if p, ok := f.(experimentalsys.PollableFile); ok {
		return &countedPollable{countedFile: c, p: p}, 0
	}
	return c, 0
}

func (m *mountSlot) Lstat(path string) (sys.Stat_t, experimentalsys.Errno) {
	return m.cur().Lstat(path)
}

func (m *mountSlot) Stat(path string) (sys.Stat_t, experimentalsys.Errno) {
	return m.cur().Stat(path)
}

func (m *mountSlot) Mkdir(path string, perm fs.FileMode) experimentalsys.Errno {
	return m.cur().Mkdir(path, perm)
}

func (m *mountSlot) Chmod(path string, perm fs.FileMode) experimentalsys.Errno {
	return m.cur().Chmod(path, perm)
}

func (m *mountSlot) Rename(from, to string) experimentalsys.Errno { return m.cur().Rename(from, to) }

func (m *mountSlot) Rmdir(path string) experimentalsys.Errno { return m.cur().Rmdir(path) }

func (m *mountSlot) Unlink(path string) experimentalsys.Errno { return m.cur().Unlink(path) }

func (m *mountSlot) Link(oldPath, newPath string) experimentalsys.Errno {
	return m.cur().Link(oldPath, newPath)
}

func (m *mountSlot) Symlink(oldPath, linkName string) experimentalsys.Errno {
	return m.cur().Symlink(oldPath, linkName)
}

func (m *mountSlot) Readlink(path string) (string, experimentalsys.Errno) {
	return m.cur().Readlink(path)
}

func (m *mountSlot) Utimens(path string, atim, mtim int64) experimentalsys.Errno {
	return m.cur().Utimens(path, atim, mtim)
}

// slotRoot is a slot's root handle: the root directory of the file system
// the slot is pointed at, re-opened by set in the next one. Only set
// changes File, when nothing runs in the instance.
type slotRoot struct {
	experimentalsys.File
	slot *mountSlot
}

func (r *slotRoot) Close() experimentalsys.Errno {
	r.slot.root.CompareAndSwap(r, nil)
	if r.File == nil {
		return 0
	}
	return r.File.Close()
}

// countedFile is a file a mountSlot counts as open until its first Close.
type countedFile struct {
	experimentalsys.File
	open   *atomic.Int64
	closed atomic.Bool
}

func (f *countedFile) Close() experimentalsys.Errno {
	if !f.closed.Swap(true) {
		f.open.Add(-1)
	}
	return f.File.Close()
}

// countedPollable keeps what WASI asks of a pollable file (non-blocking
// mode, poll_oneoff) reaching it.
type countedPollable struct {
	*countedFile
	p experimentalsys.PollableFile
}

func (f *countedPollable) IsNonblock() bool { return f.p.IsNonblock() }

func (f *countedPollable) SetNonblock(enable bool) experimentalsys.Errno {
	return f.p.SetNonblock(enable)
}

func (f *countedPollable) Poll(flag experimentalsys.Pflag, timeoutMillis int32) (bool, experimentalsys.Errno) {
	return f.p.Poll(flag, timeoutMillis)
}

// fdCensus reads, through WASI's own functions, what an instance's
// descriptor table holds where a new instance's holds its standard streams
// and preopened directories, and one descriptor past them (which a new
// instance does not have). Two instances with equal censuses and no file
// open through their mounts have the same table.
type fdCensus struct {
	fdstat, prestat, dirName api.GoModuleFunction
	preopens                 int
}

// censusScratch is where the census has WASI write its answers: the
// bottom of memory, below the data, which the reset that follows puts
// back.
const censusScratch = 0

func newFdCensus(e *engine) (*fdCensus, error) {
	wasi := e.runtime.Module(wasi_snapshot_preview1.ModuleName)
	if wasi == nil {
		return nil, errors.New("WASI is not instantiated")
	}
	defs := wasi.ExportedFunctionDefinitions()
	get := func(name string) (api.GoModuleFunction, error) {
		d := defs[name]
		if d == nil {
			return nil, fmt.Errorf("WASI has no %s", name)
		}
		fn, ok := d.GoFunction().(api.GoModuleFunction)
		if !ok {
			return nil, fmt.Errorf("WASI's %s is not a Go function of the calling module", name)
		}
		return fn, nil
	}
	c := &fdCensus{preopens: len(guestMounts())}
	var err error
	if c.fdstat, err = get("fd_fdstat_get"); err != nil {
		return nil, err
	}
	if c.prestat, err = get("fd_prestat_get"); err != nil {
		return nil, err
	}
	if c.dirName, err = get("fd_prestat_dir_name"); err != nil {
		return nil, err
	}
	return c, nil
}

// take reads the census of mod, which nothing may be running in. It
// writes into mod's memory at censusScratch.
func (c *fdCensus) take(ctx context.Context, mod api.Module) ([]byte, error) {
	mem := mod.Memory()
	var out []byte
	call := func(fn api.GoModuleFunction, params ...uint64) uint64 {
		stack := make([]uint64, max(len(params), 1))
		copy(stack, params)
		fn.Call(ctx, mod, stack)
		return stack[0]
	}
	read := func(n uint32) error {
		b, ok := mem.Read(censusScratch, n)
		if !ok {
			return errors.New("census scratch out of range")
		}
		out = append(out, b...)
		return nil
	}
	// The standard streams: their fdstat (type, flags, rights).
	for fd := range uint64(3) {
		errno := call(c.fdstat, fd, censusScratch)
		out = append(out, byte(errno))
		if errno == 0 {
			if err := read(24); err != nil {
				return nil, err
			}
		}
	}
	// The preopened directories: their prestat and name, which open
	// nothing (an fdstat of a preopen would open its directory).
	first := uint64(3)
	for fd := first; fd < first+uint64(c.preopens); fd++ {
		errno := call(c.prestat, fd, censusScratch)
		out = append(out, byte(errno))
		if errno != 0 {
			continue
		}
		b, ok := mem.Read(censusScratch, 8)
		if !ok {
			return nil, errors.New("census scratch out of range")
		}
		out = append(out, b...)
		n := uint64(b[4]) | uint64(b[5])<<8 | uint64(b[6])<<16 | uint64(b[7])<<24
		if n > 4096 {
			return nil, fmt.Errorf("a preopen's name of %d bytes", n)
		}
		if errno := call(c.dirName, fd, censusScratch, n); errno != 0 {
			out = append(out, byte(errno))
			continue
		}
		if err := read(uint32(n)); err != nil {
			return nil, err
		}
	}
	// Nothing past them.
	out = append(out, byte(call(c.fdstat, first+uint64(c.preopens), censusScratch)))
	return out, nil
}

// recycle makes it, whose session has ended, the image's interpreter again
// and keeps it for a next session; it reports false, having killed it,
// when it cannot be (see the top of this file) or enough are kept.
func (e *engine) recycle(it *interpreter) bool {
	if err := e.recycleErr(it); err != nil {
		it.kill()
		return false
	}
	e.sparesMu.Lock()
	defer e.sparesMu.Unlock()
	if !e.closed.Load() {
		select {
		case e.spares <- it:
			e.recycled.Add(1)
			return true
		default:
		}
	}
	it.kill()
	return false
}

// recycleErr says why it cannot be recycled, having reset it if it can.
func (e *engine) recycleErr(it *interpreter) error {
	switch {
	case e.census == nil || e.spares == nil:
		return errors.New("recycling is off")
	case e.closed.Load():
		return errors.New("the engine is closed")
	case it.stopped.Load():
		return errors.New("the instance was stopped")
	case it.alloc == nil || !it.alloc.mapped:
		return errors.New("the memory is not a mapping of the image")
	case it.openFiles.Load() != 0:
		return errors.New("files are open")
	case !it.cxx.idle():
		return errors.New("a C++ call is under way")
	case it.memoryBytes() != int64(e.image.size):
		return errors.New("the memory grew")
	}
	ctx := context.Background()
	got, err := e.census.take(ctx, it.mod)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, e.freshCensus) {
		return errors.New("the descriptor table changed")
	}
	if err := it.alloc.reset(); err != nil {
		return err
	}
	if err := e.image.setGlobals(it.mod); err != nil {
		return err
	}
	for _, slot := range it.slots {
		slot.park()
	}
	return nil
}

// spare takes a recycled instance, its mounts pointed at m, or returns nil
// when none is kept.
func (e *engine) spare(m mounts) *interpreter {
	select {
	case it := <-e.spares:
		// /workspace and /tmp are the next session's; the library and
		// the root are the same file systems, their root handles opened
		// anew (a directory read left half done is not the next
		// session's).
		lib, root := it.slots[2].cur(), it.slots[3].cur()
		if err := errors.Join(it.slots[0].set(m.work), it.slots[1].set(m.tmp), it.slots[2].set(lib), it.slots[3].set(root)); err != nil {
			it.kill()
			return nil
		}
		it.mounts = m
		e.reused.Add(1)
		return it
	default:
		return nil
	}
}

// closeSpares kills the instances kept; recycle kills any it is given
// after.
func (e *engine) closeSpares() {
	e.sparesMu.Lock()
	defer e.sparesMu.Unlock()
	e.closed.Store(true)
	for {
		select {
		case it := <-e.spares:
			it.kill()
		default:
			return
		}
	}
}
