//go:build linux

package wasm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
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
	// the Go heap. mu is held for reading by what uses fd after an
	// allocation (a reset), and for writing by close.
	closed atomic.Bool
	mu     sync.RWMutex
	// hot are the runs of pages that a session writes as it starts and
	// runs its first call (learnHotPages): each new mapping has them
	// copied at once, in one system call per run. Left to the program,
	// each would be read first (WebAssembly loads and stores separately),
	// mapped shared, then written: a copy-on-write fault whose flush of
	// the shared entry interrupts every other core the process runs on.
	// Measured, those flushes were 40% of a session churn's CPU. Set
	// before the first session; read-only after. hotPage is the same per
	// page.
	hot     []pageRun
	hotPage []bool
	// view is the image mapped read-only and shared, until close.
	view []byte
	// pagemap is /proc/self/pagemap, for writtenPages, open until close.
	pagemapOnce sync.Once
	pagemap     *os.File
	pagemapErr  error
}

// pageRun is a run of pages, in bytes from the memory's start.
type pageRun struct{ lo, hi uint64 }

// newSharedImage makes the sharedImage of memory, whose non-zero chunks
// are chunks; name names its memfd (in /proc/PID/maps, "/memfd:NAME"), so
// that an operator reading a process's memory can tell whose it is.
func newSharedImage(name string, memory []byte, chunks []bool) (*sharedImage, error) {
	return buildSharedImage(name, len(memory), chunks, func(lo int, run []byte) error {
		copy(run, memory[lo:])
		return nil
	})
}

// buildSharedImage makes the sharedImage, its memfd named name, of a
// memory of size bytes whose non-zero chunks are chunks: fill writes each
// run of consecutive non-zero chunks, in order, into run (starting at
// byte lo).
func buildSharedImage(name string, size int, chunks []bool, fill func(lo int, run []byte) error) (*sharedImage, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	s := &sharedImage{fd: fd, size: uint64(size)}
	fail := func(what string, err error) (*sharedImage, error) {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.Ftruncate(fd, int64(s.size)); err != nil {
		return fail("ftruncate", err)
	}
	// Zero chunks stay holes: they take no memory, and read as zeros.
	var buf []byte
	for i := 0; i < len(chunks); {
		if !chunks[i] {
			i++
			continue
		}
		j := i + 1
		for j < len(chunks) && chunks[j] {
			j++
		}
		lo, hi := i*imageChunk, min(j*imageChunk, size)
		if cap(buf) < hi-lo {
			buf = make([]byte, hi-lo)
		}
		run := buf[:hi-lo]
		if err := fill(lo, run); err != nil {
			return fail("read the image", err)
		}
		if _, err := unix.Pwrite(fd, run, int64(lo)); err != nil {
			return fail("write the image", err)
		}
		i = j
	}
	// Sealed, nothing can change the image under the sessions mapping it.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		return fail("seal the image", err)
	}
	// A read-only view, which a reset copies pages from: the page cache's
	// pages themselves, no second copy.
	view, err := unix.Mmap(fd, 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fail("map the image", err)
	}
	s.view = view
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
		s.mu.Lock()
		defer s.mu.Unlock()
		_ = unix.Munmap(s.view)
		s.view = nil
		if s.pagemap != nil {
			_ = s.pagemap.Close()
		}
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
	mem    *mappedMemory // the mapping, when mapped
	// hostRefused is set when the memory did not grow for the process's
	// data limit (dataRoom), not the session's.
	hostRefused atomic.Bool
}

func (s *sharedImage) allocation() *allocation { return &allocation{image: s} }

// Allocate reserves the memory's whole address range without access, maps
// the image over its start, and lets Reallocate open the rest as the
// memory grows: a reservation without access is not charged to the
// process's data limit (RLIMIT_DATA), which process isolation relies on.
func (a *allocation) Allocate(capBytes, maxBytes uint64) experimental.LinearMemory {
	s := a.image
	reserve := max(maxBytes, s.size)
	heap := func() experimental.LinearMemory {
		m := newHeapMemory(capBytes, maxBytes)
		m.refused = &a.hostRefused
		return m
	}
	if s.closed.Load() || reserve == 0 || reserve > 1<<33 {
		return heap()
	}
	base, err := unix.MmapPtr(-1, 0, nil, uintptr(reserve), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return heap()
	}
	if _, err := unix.MmapPtr(s.fd, 0, base, uintptr(s.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
		_ = unix.MunmapPtr(base, uintptr(reserve))
		return heap()
	}
	a.mapped = true
	region := unsafe.Slice((*byte)(base), reserve)
	for _, r := range s.hot {
		// Best effort: a kernel without MADV_POPULATE_WRITE (before 5.14)
		// leaves the pages to fault one by one, as before.
		if err := unix.Madvise(region[r.lo:r.hi], unix.MADV_POPULATE_WRITE); err != nil {
			break
		}
	}
	a.mem = &mappedMemory{region: region, open: s.size, refused: &a.hostRefused}
	return a.mem
}

// setHot records the pages a session writes (written, a page per entry,
// over the image's size) as the ones every new mapping copies at once.
func (s *sharedImage) setHot(written []bool) {
	s.hot, s.hotPage = nil, written
	for i := 0; i < len(written); {
		if !written[i] {
			i++
			continue
		}
		j := i
		for j < len(written) && written[j] {
			j++
		}
		s.hot = append(s.hot, pageRun{uint64(i) * imageChunk, min(uint64(j)*imageChunk, s.size)})
		i = j
	}
}

// hotBytes is what setHot made every mapping copy at once.
func (s *sharedImage) hotBytes() int {
	n := 0
	for _, r := range s.hot {
		n += int(r.hi - r.lo)
	}
	return n
}

// reset makes the memory the image again, as a new mapping of it would
// be, for an instance used again (recycle.go). The pages the instance
// wrote (writtenPages) are copied back from the image in place: no fault,
// no flush of another core's view. That keeps them the instance's own;
// when more than keptPages of them are outside the hot set, those are
// dropped instead (the next access maps the image's page again). The
// memory must not have grown past the image, and nothing may run in it.
func (a *allocation) reset() error {
	s := a.image
	if a.mem == nil || a.mem.open != s.size {
		return errors.New("the memory is not the image's size")
	}
	written, err := a.writtenPages()
	if err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed.Load() {
		return errors.New("the image is closed")
	}
	hot := func(i int) bool { return i < len(s.hotPage) && s.hotPage[i] }
	cold := 0
	for i, w := range written {
		if w && !hot(i) {
			cold++
		}
	}
	region := a.mem.region
	for i := 0; i < len(written); {
		if !written[i] {
			i++
			continue
		}
		h := hot(i)
		j := i + 1
		for j < len(written) && written[j] && hot(j) == h {
			j++
		}
		lo, hi := uint64(i)*imageChunk, min(uint64(j)*imageChunk, s.size)
		if h || cold <= keptPages {
			copy(region[lo:hi], s.view[lo:hi])
		} else if err := unix.Madvise(region[lo:hi], unix.MADV_DONTNEED); err != nil {
			return fmt.Errorf("drop written pages: %w", err)
		}
		i = j
	}
	return nil
}

// keptPages bounds the pages outside the hot set that a reset copies back
// rather than drops: a session's own few (measured: 14 pages for a
// print) stay copied, at no memory cost beyond what that session held.
const keptPages = 256

// writtenPages tells, per page of the image's span of the mapping the
// allocation made, whether it is the instance's own copy (written) rather
// than the image's page or nothing: /proc/self/pagemap's present bit set
// and its file-or-shared bit clear, or its swapped bit set. Flags need no
// privilege to read; page frame numbers, which this does not use, would.
func (a *allocation) writtenPages() ([]bool, error) {
	if a.mem == nil || a.mem.region == nil {
		return nil, errors.New("the memory is not a mapping of the image")
	}
	if os.Getpagesize() != imageChunk {
		return nil, fmt.Errorf("host pages of %d bytes, not %d", os.Getpagesize(), imageChunk)
	}
	s := a.image
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed.Load() {
		return nil, errors.New("the image is closed")
	}
	// Opened once per image, not at every reset (which is on the way of
	// every session's end), and closed with it.
	s.pagemapOnce.Do(func() { s.pagemap, s.pagemapErr = os.Open("/proc/self/pagemap") })
	if s.pagemapErr != nil {
		return nil, s.pagemapErr
	}
	f := s.pagemap
	pages := int((a.image.size + imageChunk - 1) / imageChunk)
	entries := make([]byte, 8*pages)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(a.mem.region)))
	if _, err := f.ReadAt(entries, int64(base/imageChunk*8)); err != nil {
		return nil, fmt.Errorf("read pagemap: %w", err)
	}
	written := make([]bool, pages)
	for i := range written {
		e := binary.LittleEndian.Uint64(entries[8*i:])
		// A copy swapped out is the instance's too: only a private page
		// is swapped (a page of the image is dropped and read again).
		const present, swapped, fileOrShared = 1 << 63, 1 << 62, 1 << 61
		written[i] = e&present != 0 && e&fileOrShared == 0 || e&swapped != 0
	}
	return written, nil
}

// mappedMemory is a linear memory over a reservation whose first open
// bytes are accessible.
type mappedMemory struct {
	region  []byte
	open    uint64
	refused *atomic.Bool // as a heapMemory's
}

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.region)) {
		return nil
	}
	if size > m.open {
		// Opened pages count against the data limit, which the memory
		// leaves the Go runtime its reserve of, as a heap memory does.
		if room, limited := growthRoom(); limited && size-m.open > room {
			m.refused.Store(true)
			return nil
		}
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

// hugeExtent is a huge page: 2 MiB on x86-64 and on arm64 with 4 KiB
// pages, which imageChunk already assumes.
const hugeExtent = 2 << 20

// adviseHuge asks the kernel to back with huge pages the hugeExtent
// extents of view past its first from bytes of which listing (a bit per
// imageChunk of view) marks at least half: a restore is about to write
// them. Filling tens of MiB of fresh memory a 4 KiB fault at a time was
// the larger part of restoring a large session (measured on the 2-core
// development machine: 66 MB copied into fresh memory in 74 ms, in 18 ms
// with huge pages). An extent the restore fills less than half of keeps
// small pages, so that a sparse memory does not grow to whole extents.
// Only a mapping the allocation made is advised, never the Go heap; and
// where transparent huge pages are off, nothing changes.
func (a *allocation) adviseHuge(view []byte, from int, listing []byte) {
	if a == nil || !a.mapped || a.mem == nil || len(view) == 0 {
		return
	}
	// Extents are aligned in the address space, not in the memory.
	base := uintptr(unsafe.Pointer(unsafe.SliceData(view)))
	first := int((base+uintptr(from)+hugeExtent-1)&^(hugeExtent-1) - base)
	runLo, runHi := 0, 0
	advise := func() {
		if runHi > runLo {
			_ = unix.Madvise(view[runLo:runHi], unix.MADV_HUGEPAGE)
		}
		runLo, runHi = 0, 0
	}
	for off := first; off+hugeExtent <= len(view); off += hugeExtent {
		n := 0
		for i := off / imageChunk; i < (off+hugeExtent)/imageChunk; i++ {
			if listing[i/8]&(1<<(i%8)) != 0 {
				n++
			}
		}
		if 2*n < hugeExtent/imageChunk {
			advise()
			continue
		}
		if runHi != off {
			advise()
			runLo = off
		}
		runHi = off + hugeExtent
	}
	advise()
}

// dataRoom is how many more bytes the process may map privately before
// its data limit (RLIMIT_DATA), and whether it has one: its soft limit
// less its VmData now.
func dataRoom() (uint64, bool) {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_DATA, &lim) != nil || lim.Cur == unix.RLIM_INFINITY {
		return 0, false
	}
	// Without /proc, how near the limit is cannot be told: the limit
	// alone stops the memory, as it did before this check.
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	_, line, ok := bytes.Cut(status, []byte("\nVmData:"))
	if !ok {
		return 0, false
	}
	line, _, _ = bytes.Cut(line, []byte("\n"))
	kib, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(line), []byte(" kB"))), 10, 64)
	if err != nil {
		return 0, false
	}
	return lim.Cur - min(kib*1024, lim.Cur), true
}
