package wasm

import "sync/atomic"

// heapMemory is a linear memory on the Go heap, as wazero makes by
// default: the fallback of an allocation that cannot map the image.
type heapMemory struct {
	buf []byte
	max uint64
	// refused is set when the memory did not grow for the process's
	// data limit rather than its own maximum; nil: not recorded.
	refused *atomic.Bool
}

func newHeapMemory(capBytes, maxBytes uint64) *heapMemory {
	return &heapMemory{buf: make([]byte, 0, capBytes), max: maxBytes}
}

func (m *heapMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		// Bytes past the old length were zeroed by make or by a
		// previous growth and never written since.
		m.buf = m.buf[:size]
		return m.buf
	}
	want := min(max(size, 2*uint64(cap(m.buf))), m.max)
	if room, limited := growthRoom(); limited {
		// Past the process's data limit (RLIMIT_DATA) the Go runtime dies,
		// and every session in it: a worker of the subprocess adapter,
		// whose limit is its containment, is not to be killed by one of
		// its sessions. Where the limit is near, the memory does not grow
		// (the program gets its MemoryError, as a mapped memory's program
		// does at the same limit) or grows only as far as asked. The new
		// buffer is counted whole, the free space in the Go heap not at
		// all (the old buffer is freed only after the copy): the check
		// errs on refusing.
		switch {
		case size > room:
			if m.refused != nil {
				m.refused.Store(true)
			}
			return nil
		case want > room:
			want = size
		}
	}
	grown := make([]byte, size, want)
	copy(grown, m.buf)
	m.buf = grown
	return m.buf
}

func (m *heapMemory) Free() { m.buf = nil }

// dataReserve is the room under the process's data limit that a memory
// on the Go heap leaves when it grows: for the runtime's own allocations
// (a worker's gRPC buffers, the other sessions' bookkeeping, the garbage
// collector's work queues) and the copy's source, freed only after it.
const dataReserve = 64 << 20

// growthRoom is how many bytes a linear memory may still add to the
// process's private mappings, its data limit's room (dataRoom) less
// dataReserve, and whether the process has a data limit.
func growthRoom() (uint64, bool) {
	room, limited := dataRoom()
	return max(room, dataReserve) - dataReserve, limited
}
