//go:build linux

package wasm

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
)

// sharedImage holds an image's memory in a sealed memfd, which every
// session's linear memory maps copy-on-write: a restore copies nothing, and
// the pages a session only reads stay one copy in the host's page cache,
// shared by every session of the process. Only the pages a session writes
// become its own.
type sharedImage struct {
	fd   int
	size uint64
	// closed is set by close; allocations made after it fall back to
	// the Go heap.
	closed atomic.Bool
}

func newSharedImage(memory []byte, chunks []bool) (*sharedImage, error) {
	fd, err := unix.MemfdCreate("codeport-interpreter-image", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	s := &sharedImage{fd: fd, size: uint64(len(memory))}
	fail := func(what string, err error) (*sharedImage, error) {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.Ftruncate(fd, int64(s.size)); err != nil {
		return fail("ftruncate", err)
	}
	// Zero chunks stay holes: they take no memory, and read as zeros.
	for i, nonZero := range chunks {
		if !nonZero {
			continue
		}
		lo, hi := i*imageChunk, min((i+1)*imageChunk, len(memory))
		if _, err := unix.Pwrite(fd, memory[lo:hi], int64(lo)); err != nil {
			return fail("write the image", err)
		}
	}
	// Sealed, nothing can change the image under the sessions mapping it.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		return fail("seal the image", err)
	}
	return s, nil
}

// readAt copies the image's bytes at off into p: a restore whose memory
// could not be mapped.
func (s *sharedImage) readAt(p []byte, off int) error {
	for len(p) > 0 {
		n, err := unix.Pread(s.fd, p, int64(off))
		if err != nil {
			return fmt.Errorf("read the image: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("read the image: unexpected end at %d", off)
		}
		p, off = p[n:], off+n
	}
	return nil
}

func (s *sharedImage) close() {
	if s != nil && !s.closed.Swap(true) {
		_ = unix.Close(s.fd)
	}
}

// allocation is the memory of one instance being made: a MemoryAllocator
// for wazero, which reports afterwards whether the image was mapped
// (mapped) or the memory came from the Go heap and must be restored by
// copying.
type allocation struct {
	image  *sharedImage
	mapped bool
}

func (s *sharedImage) allocation() *allocation { return &allocation{image: s} }

// Allocate reserves the memory's whole address range without access, maps
// the image over its start, and lets Reallocate open the rest as the
// memory grows: a reservation without access is not charged to the
// process's data limit (RLIMIT_DATA), which process isolation relies on.
func (a *allocation) Allocate(capBytes, maxBytes uint64) experimental.LinearMemory {
	s := a.image
	reserve := max(maxBytes, s.size)
	if s.closed.Load() || reserve == 0 || reserve > 1<<33 {
		return newHeapMemory(capBytes, maxBytes)
	}
	base, err := unix.MmapPtr(-1, 0, nil, uintptr(reserve), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return newHeapMemory(capBytes, maxBytes)
	}
	if _, err := unix.MmapPtr(s.fd, 0, base, uintptr(s.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
		_ = unix.MunmapPtr(base, uintptr(reserve))
		return newHeapMemory(capBytes, maxBytes)
	}
	a.mapped = true
	return &mappedMemory{region: unsafe.Slice((*byte)(base), reserve), open: s.size}
}

// mappedMemory is a linear memory over a reservation whose first open
// bytes are accessible.
type mappedMemory struct {
	region []byte
	open   uint64
}

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.region)) {
		return nil
	}
	if size > m.open {
		if err := unix.Mprotect(m.region[m.open:size], unix.PROT_READ|unix.PROT_WRITE); err != nil {
			return nil // the memory cannot grow: memory.grow fails, malloc returns NULL
		}
		m.open = size
	}
	return m.region[:size:size]
}

func (m *mappedMemory) Free() {
	if m.region != nil {
		_ = unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(m.region)), uintptr(len(m.region)))
		m.region = nil
	}
}
