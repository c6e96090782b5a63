package wasm

// heapMemory is a linear memory on the Go heap, as wazero makes by
// default: the fallback of an allocation that cannot map the image.
type heapMemory struct {
	buf []byte
	max uint64
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
	grown := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.max))
	copy(grown, m.buf)
	m.buf = grown
	return m.buf
}

func (m *heapMemory) Free() { m.buf = nil }
