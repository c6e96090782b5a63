package workspace

import (
	"fmt"
	"sync"

	"github.com/codeport/codeport/port"
)

// Quota is a byte budget shared by the directories of one session (its
// workspace and its tmp directory). It counts the sizes of the regular files
// in them, as charged by Workspace and the file systems of NewSysFS. A Quota
// is safe for concurrent use.
//
// Besides the byte count, a Quota remembers which files are open through a
// NewSysFS file system: a file removed or replaced while open keeps its bytes
// on disk until it is closed, so its size stays charged until then.
type Quota struct {
	mu       sync.Mutex
	limit    int64
	used     int64
	refusals int64
	open     map[fileKey]*openFile
}

// fileKey identifies a file on the host: device and inode.
type fileKey struct {
	dev uint64
	ino uint64
}

// openFile counts the handles open on one file, and whether the file was
// unlinked while open (its size is then released at the last close).
type openFile struct {
	refs     int
	orphaned bool
}

// QuotaError is the error of a reservation that would put the session over
// its quota. It matches port.ErrFileTooLarge with errors.Is.
type QuotaError struct {
	// Limit is the quota in bytes.
	Limit int64
	// Used is the number of bytes charged when the reservation was refused.
	Used int64
	// Requested is the number of bytes the refused reservation asked for.
	Requested int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("workspace quota of %d bytes exceeded (%d bytes in use, %d more requested): %v",
		e.Limit, e.Used, e.Requested, port.ErrFileTooLarge)
}

// Is makes errors.Is(err, port.ErrFileTooLarge) hold.
func (e *QuotaError) Is(target error) bool { return target == port.ErrFileTooLarge }

// NewQuota returns a quota of limit bytes. A limit <= 0 means unlimited:
// bytes are still counted, but no reservation is refused.
func NewQuota(limit int64) *Quota {
	if limit < 0 {
		limit = 0
	}
	return &Quota{limit: limit, open: make(map[fileKey]*openFile)}
}

// Used reports the number of bytes charged.
func (q *Quota) Used() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.used
}

// Limit reports the quota in bytes, 0 when unlimited.
func (q *Quota) Limit() int64 { return q.limit }

// Refusals reports how many reservations the quota has refused so far,
// including writes of a NewSysFS file system that failed for lack of room.
// Comparing it before and after running a program tells whether the program
// ran into the quota.
func (q *Quota) Refusals() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.refusals
}

// Reserve charges n bytes, or charges nothing and returns a *QuotaError
// (matching port.ErrFileTooLarge) if that would exceed the limit. A
// non-positive n is a no-op.
func (q *Quota) Reserve(n int64) error {
	if n <= 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limit > 0 && n > q.limit-q.used {
		q.refusals++
		return &QuotaError{Limit: q.limit, Used: q.used, Requested: n}
	}
	q.used += n
	return nil
}

// Release gives back n bytes charged earlier. The count never goes below
// zero. A non-positive n is a no-op.
func (q *Quota) Release(n int64) {
	if n <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.release(n)
}

func (q *Quota) release(n int64) {
	q.used -= n
	if q.used < 0 {
		q.used = 0
	}
}

// reserveUpTo charges as many of n bytes as fit and returns how many it
// charged (n when unlimited).
func (q *Quota) reserveUpTo(n int64) int64 {
	if n <= 0 {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limit > 0 {
		n = max(0, min(n, q.limit-q.used))
	}
	q.used += n
	return n
}

// refused counts a refusal that did not go through Reserve.
func (q *Quota) refused() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.refusals++
}

// charge adds n bytes without checking the limit: for bytes that are
// already on disk (files found by New, or bytes credited during a Write).
func (q *Quota) charge(n int64) {
	if n <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.used += n
}

// adjust settles a reservation: reserved bytes were charged for an
// operation that changed the file size by delta. It releases what was not
// used or charges (without checking the limit) what was used beyond it.
func (q *Quota) adjust(reserved, delta int64) {
	switch {
	case delta < reserved:
		q.Release(reserved - delta)
	case delta > reserved:
		q.charge(delta - reserved)
	}
}

// fileOpened records a handle opened on the file k.
func (q *Quota) fileOpened(k fileKey) {
	if k.ino == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	of := q.open[k]
	if of == nil {
		of = &openFile{}
		q.open[k] = of
	}
	of.refs++
}

// fileClosed records that a handle on the file k was closed while the file
// was size bytes long. At the last close of a file that was removed while
// open, its size is released.
func (q *Quota) fileClosed(k fileKey, size int64) {
	if k.ino == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	of := q.open[k]
	if of == nil {
		return
	}
	of.refs--
	if of.refs > 0 {
		return
	}
	delete(q.open, k)
	if of.orphaned {
		q.release(size)
	}
}

// fileRemoved records that the file k, size bytes long, lost its last name
// (unlinked, or replaced by a rename). Its size is released now, or at its
// last close if a NewSysFS handle still holds it open.
func (q *Quota) fileRemoved(k fileKey, size int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if of := q.open[k]; k.ino != 0 && of != nil {
		of.orphaned = true
		return
	}
	q.release(size)
}

// isOpen reports whether a NewSysFS handle holds the file k open.
func (q *Quota) isOpen(k fileKey) bool {
	if k.ino == 0 {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.open[k] != nil
}
