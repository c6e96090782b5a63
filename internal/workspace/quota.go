package workspace

import (
	"errors"
	"fmt"
	"sync"

	"github.com/codeport/codeport/port"
)

// DirBytes is what a directory costs against the byte limit of a quota
// with an entry limit (WithEntryLimit). Measured on ext4, where the
// sessions directory usually lives: an empty directory takes one 4 KiB
// block (st_size 4096, st_blocks 8), while an empty file takes none. Without
// this charge a program could fill the host's disk with empty directories
// while its files stayed under the byte limit (20,000 os.mkdir took 79 MB).
// A fixed charge, rather than st_size, keeps the accounting the same on
// every file system and for the lifetime of the directory.
const DirBytes = 4096

// Quota is a budget shared by the directories of one session (its
// workspace and its tmp directory): bytes, and optionally entries. It
// counts the sizes of the regular files in them, as charged by Workspace
// and the file systems of NewSysFS, and the entries (names: files,
// directories and anything else) below their roots. A Quota is safe for
// concurrent use.
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

	// entryLimit caps entries (0: unlimited); dirBytes is charged per
	// directory, DirBytes once an entry limit is set. entries counts the
	// names below the roots whatever the limit, entryRefusals the
	// refusals for lack of entries (also counted in refusals).
	entryLimit    int64
	dirBytes      int64
	entries       int64
	entryRefusals int64

	// reclaim, when set, is asked to give back bytes or entries before a
	// reservation that does not fit is refused (see WithReclaim).
	reclaim func(bytes, entries int64)
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

// EntryLimitError is the error of a new file or directory that would put
// the session over its entry limit (Quota.WithEntryLimit). It matches
// port.ErrFileTooLarge with errors.Is, as a refusal for lack of bytes does:
// both are "the workspace is full".
type EntryLimitError struct {
	// Limit is the entry limit.
	Limit int64
}

func (e *EntryLimitError) Error() string {
	return fmt.Sprintf("workspace limit of %d files and directories reached (/tmp included; remove some to make room): %v",
		e.Limit, port.ErrFileTooLarge)
}

// Is makes errors.Is(err, port.ErrFileTooLarge) hold.
func (e *EntryLimitError) Is(target error) bool { return target == port.ErrFileTooLarge }

// NewQuota returns a quota of limit bytes. A limit <= 0 means unlimited:
// bytes are still counted, but no reservation is refused. Entries are
// counted but unlimited, and directories cost no bytes, unless
// WithEntryLimit says otherwise.
func NewQuota(limit int64) *Quota {
	if limit < 0 {
		limit = 0
	}
	return &Quota{limit: limit, open: make(map[fileKey]*openFile)}
}

// WithEntryLimit caps the entries below the quota's roots (files,
// directories and anything else, each name once) at n, and charges each
// directory DirBytes against the byte limit, and returns q. Call it before
// the quota is used. A file or directory that would go beyond either limit
// is refused: with an *EntryLimitError or a *QuotaError on the host side,
// with QuotaErrno in the guest. n <= 0 leaves entries unlimited and
// directories free, as a quota without the call has them. Why: the byte
// limit alone bounds neither inodes nor the blocks directories take, so a
// session could exhaust the host's file system with empty files or
// directories.
func (q *Quota) WithEntryLimit(n int64) *Quota {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n <= 0 {
		q.entryLimit, q.dirBytes = 0, 0
		return q
	}
	q.entryLimit, q.dirBytes = n, DirBytes
	return q
}

// WithReclaim makes fn the quota's source of room: when a reservation of
// bytes or of an entry does not fit, fn is called with the bytes and the
// entries missing, without the quota's lock held, and may give back bytes
// and entries of things it can drop (kept copies of outputs, which must
// never make a program's write fail); the reservation is then tried once
// more. Call it before the quota is used.
func (q *Quota) WithReclaim(fn func(bytes, entries int64)) *Quota {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reclaim = fn
	return q
}

// makeRoom asks the reclaimer, if any, for what n more bytes and entries
// more entries lack now.
func (q *Quota) makeRoom(n, entries int64) {
	q.mu.Lock()
	fn := q.reclaim
	var bytes, ents int64
	if q.limit > 0 && n > q.limit-q.used {
		bytes = n - (q.limit - q.used)
	}
	if q.entryLimit > 0 && entries > q.entryLimit-q.entries {
		ents = entries - (q.entryLimit - q.entries)
	}
	q.mu.Unlock()
	if fn != nil && (bytes > 0 || ents > 0) {
		fn(bytes, ents)
	}
}

// reserveSpare charges n bytes and one entry for something the quota's
// reclaimer holds (a kept copy), asking it for room first, without
// counting a refusal: it is not a program's.
func (q *Quota) reserveSpare(n int64) error {
	q.makeRoom(n, 1)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.entryLimit > 0 && q.entries >= q.entryLimit {
		return &EntryLimitError{Limit: q.entryLimit}
	}
	if q.limit > 0 && n > q.limit-q.used {
		return &QuotaError{Limit: q.limit, Used: q.used, Requested: n}
	}
	q.used += n
	q.entries++
	return nil
}

// releaseSpare gives back what reserveSpare charged.
func (q *Quota) releaseSpare(n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.release(n)
	q.entries = max(0, q.entries-1)
}

// EntryLimit reports the entry limit, 0 when unlimited.
func (q *Quota) EntryLimit() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.entryLimit
}

// Entries reports the number of entries charged.
func (q *Quota) Entries() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.entries
}

// EntryRefusals reports how many of Refusals were for lack of entries
// rather than bytes, so that a host can tell which limit a program met.
func (q *Quota) EntryRefusals() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.entryRefusals
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
	q.makeRoom(n, 0)
	return q.reserve(n)
}

// reserve is Reserve without asking the reclaimer for room.
func (q *Quota) reserve(n int64) error {
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

// reserveEntry charges one new entry, and DirBytes more bytes when it is a
// directory and an entry limit is set, or charges nothing, counts the
// refusal and returns an *EntryLimitError or a *QuotaError (both
// port.ErrFileTooLarge).
func (q *Quota) reserveEntry(dir bool) error {
	err := q.tryReserveEntry(dir)
	if err != nil {
		q.noteRefusal(err)
	}
	return err
}

// tryReserveEntry is reserveEntry without counting a refusal, for a
// caller that may find the operation would have failed anyway.
func (q *Quota) tryReserveEntry(dir bool) error {
	var dirBytes int64
	if dir {
		q.mu.Lock()
		dirBytes = q.dirBytes
		q.mu.Unlock()
	}
	q.makeRoom(dirBytes, 1)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.entryLimit > 0 && q.entries >= q.entryLimit {
		return &EntryLimitError{Limit: q.entryLimit}
	}
	var n int64
	if dir {
		n = q.dirBytes
	}
	if q.limit > 0 && n > q.limit-q.used {
		return &QuotaError{Limit: q.limit, Used: q.used, Requested: n}
	}
	q.entries++
	q.used += n
	return nil
}

// noteRefusal counts the refusal err of tryReserveEntry.
func (q *Quota) noteRefusal(err error) {
	var le *EntryLimitError
	q.mu.Lock()
	defer q.mu.Unlock()
	q.refusals++
	if errors.As(err, &le) {
		q.entryRefusals++
	}
}

// releaseEntries gives back entries, dirs of them directories, charged
// earlier. The counts never go below zero.
func (q *Quota) releaseEntries(entries, dirs int64) {
	if entries <= 0 {
		return
	}
	dirs = max(0, min(dirs, entries))
	q.mu.Lock()
	defer q.mu.Unlock()
	q.entries = max(0, q.entries-entries)
	q.release(dirs * q.dirBytes)
}

// chargeEntries adds entries, dirs of them directories, without checking
// the limits: for entries already on disk (found by New, or left by a
// write that raced with another).
func (q *Quota) chargeEntries(entries, dirs int64) {
	if entries <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.entries += entries
	q.used += dirs * q.dirBytes
}

// reserveUpTo charges as many of n bytes as fit and returns how many it
// charged (n when unlimited).
func (q *Quota) reserveUpTo(n int64) int64 {
	if n <= 0 {
		return 0
	}
	q.makeRoom(n, 0)
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
