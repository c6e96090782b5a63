package workspace

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/codeport/codeport/port"
)

// Outputs keeps copies of files a program produced, each under an id of
// its own, so that the id names that version of the file even after the
// program changes or removes it: the file_id of a result's
// code_execution_output entries.
//
// The copies live in a directory of their own beside the workspace (no
// guest mounts it) and are charged to the workspace's quota, bytes and an
// entry each. They never cost a program room: the quota asks Outputs for
// room before it refuses a write or a new file (Quota.WithReclaim), and
// the oldest copies are dropped first.
// Their number is bounded by maxFiles, beyond which the oldest go too. An
// id whose copy was dropped is port.ErrFileNotFound, and says why.
//
// An Outputs is safe for concurrent use.
type Outputs struct {
	dir      string
	q        *Quota
	maxFiles int

	mu    sync.Mutex
	byID  map[string]*keptFile
	order []*keptFile // oldest first
}

// keptFile is one kept copy: its id, the workspace path it was copied
// from, its size (charged to the quota) and modification time.
type keptFile struct {
	id, rel string
	size    int64
	info    port.FileInfo
}

// FileIDPrefix starts every id Outputs hands out.
const FileIDPrefix = "file_"

// NewOutputs keeps copies in dir (created, mode 0o700; it must not be
// inside a workspace), at most maxFiles of them (at least 1), charged to
// q, and makes itself q's reclaimer.
func NewOutputs(dir string, q *Quota, maxFiles int) (*Outputs, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: outputs directory: %w", err)
	}
	o := &Outputs{dir: dir, q: q, maxFiles: max(1, maxFiles), byID: map[string]*keptFile{}}
	q.WithReclaim(o.reclaim)
	return o, nil
}

// Keep copies the regular file rel of ws and returns the id of the copy.
// A file that is gone, or is not a regular file, is port.ErrFileNotFound
// (nothing to keep); one that does not fit in the quota even once every
// older copy is dropped is a *QuotaError, and nothing is kept.
func (o *Outputs) Keep(ws *Workspace, rel string) (port.FileInfo, string, error) {
	src, info, err := ws.Open(rel)
	if err != nil {
		if errors.Is(err, port.ErrIsDirectory) || errors.Is(err, ErrNotRegular) {
			err = fmt.Errorf("workspace: keep %s: %w", rel, port.ErrFileNotFound)
		}
		return port.FileInfo{}, "", err
	}
	defer src.Close()
	if err := o.q.reserveSpare(info.Size); err != nil {
		return port.FileInfo{}, "", fmt.Errorf("workspace: keep %s: %w", rel, err)
	}
	id := FileIDPrefix + rand.Text()
	dst, err := os.OpenFile(filepath.Join(o.dir, id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		o.q.releaseSpare(info.Size)
		return port.FileInfo{}, "", fmt.Errorf("workspace: keep %s: %w", rel, stripPath(err))
	}
	// The program is not running: the file is as long as it was at the
	// Stat, unless the host changes it; never copy more than was charged.
	n, err := io.Copy(dst, io.LimitReader(src, info.Size))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(filepath.Join(o.dir, id))
		o.q.releaseSpare(info.Size)
		return port.FileInfo{}, "", fmt.Errorf("workspace: keep %s: %w", rel, stripPath(err))
	}
	o.q.Release(info.Size - n)
	info.Size = n
	o.mu.Lock()
	k := &keptFile{id: id, rel: rel, size: n, info: info}
	o.byID[id] = k
	o.order = append(o.order, k)
	var drop []*keptFile
	for len(o.order) > o.maxFiles {
		drop = append(drop, o.evictOldest())
	}
	o.mu.Unlock()
	o.remove(drop)
	return info, id, nil
}

// Open opens the copy id. The FileInfo is the file's as it was kept (its
// workspace path, size, modification time and media type).
func (o *Outputs) Open(id string) (io.ReadCloser, port.FileInfo, error) {
	o.mu.Lock()
	k := o.byID[id]
	o.mu.Unlock()
	if k == nil || !validFileID(id) {
		return nil, port.FileInfo{}, fmt.Errorf("workspace: no output file %q in this session (never produced here, or dropped to make room, oldest first): %w", clip(id), port.ErrFileNotFound)
	}
	f, err := os.Open(filepath.Join(o.dir, id))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, port.FileInfo{}, fmt.Errorf("workspace: output file %q was dropped to make room: %w", id, port.ErrFileNotFound)
		}
		return nil, port.FileInfo{}, fmt.Errorf("workspace: output file %q: %w", id, stripPath(err))
	}
	return f, k.info, nil
}

// reclaim drops the oldest copies until bytes bytes and entries entries
// are free, or none is left: the quota's reclaimer.
func (o *Outputs) reclaim(bytes, entries int64) {
	var drop []*keptFile
	o.mu.Lock()
	for freedBytes, freedEntries := int64(0), int64(0); (freedBytes < bytes || freedEntries < entries) && len(o.order) > 0; freedEntries++ {
		k := o.evictOldest()
		freedBytes += k.size
		drop = append(drop, k)
	}
	o.mu.Unlock()
	o.remove(drop)
}

// evictOldest takes the oldest copy out of the index; o.mu is held. The
// caller removes it (outside the lock).
func (o *Outputs) evictOldest() *keptFile {
	k := o.order[0]
	o.order[0] = nil
	o.order = o.order[1:]
	delete(o.byID, k.id)
	return k
}

// remove deletes the files of copies taken out of the index and gives
// their bytes back. A copy open for reading stays readable until closed
// (the file system keeps an unlinked file's bytes).
func (o *Outputs) remove(ks []*keptFile) {
	for _, k := range ks {
		_ = os.Remove(filepath.Join(o.dir, k.id))
		o.q.releaseSpare(k.size)
	}
}

// validFileID reports whether id has the form Keep gives ids, so that
// nothing else is ever joined to the directory.
func validFileID(id string) bool {
	rest, ok := strings.CutPrefix(id, FileIDPrefix)
	if !ok || len(rest) != 26 {
		return false
	}
	for _, c := range rest {
		if !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// clip shortens an id for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
