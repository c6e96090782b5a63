package workspace

import (
	"errors"
	"io"
	"io/fs"
	pathpkg "path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	wsys "github.com/tetratelabs/wazero/sys"
)

// QuotaErrno is the errno a NewSysFS file system returns when a write, a
// new file or a new directory would go over the quota (its bytes or its
// entries). It should be ENOSPC, but it cannot be: wazero v1.12.0's
// experimental/sys.Errno is a closed list of 20 values without ENOSPC (or
// EDQUOT), and its WASI layer (internal/wasip1.ToErrno) turns every value
// it does not list into EIO, so no custom Errno reaches the guest as
// anything else. It is EIO, then, said plainly: the guest sees
// OSError(errno.EIO), "[Errno 29] I/O error" under WASI, and
// Quota.Refusals (EntryRefusals for entries) tells the host that the quota
// was the cause, so that it can tell the program's user.
const QuotaErrno = experimentalsys.EIO

// NewSysFS returns the file system the guest sees for the host directory
// dir: wazero's sysfs.DirFS(dir), with every byte the guest adds charged to q
// while it is written.
//
//   - File writes (Write, Pwrite) and growth by Truncate reserve the bytes
//     that extend the file before writing them. A write that does not fit
//     is cut to what fits (a short write); one of which nothing fits fails
//     with QuotaErrno, as does a Truncate that does not fit.
//   - Shrinking a file by Truncate or by opening it with O_TRUNC, removing
//     it with Unlink, and replacing it with Rename release its bytes. A
//     removed or replaced file that is still open keeps its bytes charged
//     until its last handle is closed, since they stay on disk until then.
//   - Every new name (a file made by OpenFile with O_CREAT, a directory
//     made by Mkdir) takes an entry of the quota, and a directory DirBytes
//     of its bytes when the quota has an entry limit; one that does not
//     fit fails with QuotaErrno. Unlink, Rmdir and a Rename that replaces
//     its target give them back.
//   - Link and Symlink fail with EPERM: a link could lead outside dir on the
//     host.
//   - The temporary files of the workspace's own Write in flight (SysFS
//     only) cannot be opened, removed, moved or replaced: EACCES.
//   - A Rename of a directory that would put a path below it over the
//     host's PATH_MAX fails with ENAMETOOLONG, as no other call can make
//     one.
//
// Everything else is delegated to DirFS. Files already in dir are not
// charged here: pair NewSysFS with a Workspace over the same directory
// (workspace.New charges them, and RemoveAll releases them). A nil q means
// an unlimited quota of its own.
func NewSysFS(dir string, q *Quota) experimentalsys.FS {
	return newQuotaFS(dir, q, nil, nil)
}

// SysFS is NewSysFS over the workspace's root and quota that also records
// in Changes which files the guest writes.
func (w *Workspace) SysFS() experimentalsys.FS {
	return newQuotaFS(w.root, w.q, w.changes, w.writing)
}

func newQuotaFS(dir string, q *Quota, c *Changes, wr *writing) *quotaFS {
	if q == nil {
		q = NewQuota(0)
	}
	return &quotaFS{FS: sysfs.DirFS(dir), dir: dir, q: q, changes: c, writing: wr}
}

// InMount finds which of a guest's mounts, its workspace at GuestRoot and
// its /tmp, holds the guest path p (cleaned first, so ".." cannot leave
// one), and the path inside it ("." for the mount's root); fsys is nil for
// a path outside both or not absolute.
func InMount(p string, work, tmp experimentalsys.FS) (fsys experimentalsys.FS, sub string) {
	p = pathpkg.Clean(p)
	if !pathpkg.IsAbs(p) {
		return nil, ""
	}
	for _, m := range []struct {
		dir string
		fs  experimentalsys.FS
	}{{GuestRoot, work}, {"/tmp", tmp}} {
		if p == m.dir {
			return m.fs, "."
		}
		if rest, ok := strings.CutPrefix(p, m.dir+"/"); ok {
			return m.fs, rest
		}
	}
	return nil, ""
}

// MaxGuestPath bounds a guest path the host functions that read permission
// bits and chmod accept (WASI has neither; see GuestPerm).
const MaxGuestPath = 4096

// GuestPerm is the permission bits of sub in fsys (a mount InMount found),
// without following a link, or -1 when there is no such file: what the
// interpreter's and the shell's host functions answer for WASI, whose file
// status has no bits.
func GuestPerm(fsys experimentalsys.FS, sub string) int32 {
	st, errno := fsys.Lstat(sub)
	if errno != 0 {
		return -1
	}
	return int32(st.Mode.Perm())
}

// GuestChmod sets the permission bits of sub in fsys (a mount InMount
// found) as AllowedMode allows, for a guest's chmod, which WASI lacks; the
// mount's root is the gateway's directory and keeps its mode (EPERM).
func GuestChmod(fsys experimentalsys.FS, sub string, perm fs.FileMode) experimentalsys.Errno {
	if sub == "." {
		return experimentalsys.EPERM
	}
	st, errno := fsys.Lstat(sub)
	if errno != 0 {
		return errno
	}
	return fsys.Chmod(sub, AllowedMode(perm, st.Mode.IsDir()))
}

// The modes a guest's new files and directories get (WASI gives none;
// wazero asks for 0600 and 0700): what a program's get natively under the
// usual umask, which the process's umask may narrow. The workspace's and
// /tmp's roots are 0700, so no other user of the host reaches them.
const (
	newFileMode fs.FileMode = 0o644
	newDirMode  fs.FileMode = 0o755
)

// quotaFS wraps a DirFS, accounting for file sizes in its quota.
type quotaFS struct {
	experimentalsys.FS
	dir     string
	q       *Quota
	changes *Changes // nil: writes are not recorded
	writing *writing // the host's writes in flight; nil: none
	// mu makes each size check and the change it guards one step, so that
	// handles of this file system writing the same file account exactly.
	mu sync.Mutex
}

// String implements fmt.Stringer.
func (s *quotaFS) String() string { return s.dir }

// OpenFile implements experimentalsys.FS. Regular files are returned wrapped
// so that their writes are charged; O_TRUNC releases the old size.
func (s *quotaFS) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if s.hostWriting(path) {
		return nil, experimentalsys.EACCES
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var before wsys.Stat_t
	truncating := false
	if flag&experimentalsys.O_TRUNC != 0 {
		if st, errno := s.FS.Stat(path); errno == 0 && st.Mode.IsRegular() && st.Size > 0 {
			before, truncating = st, true
		}
	}
	// Only regular files and directories are opened: opening a FIFO or a
	// device (which no guest can make, but the host's side of a mount
	// could hold) blocks or acts on the host, in a call no deadline can
	// interrupt.
	st, lerr := s.FS.Lstat(path)
	if lerr == 0 && !st.Mode.IsRegular() && !st.Mode.IsDir() {
		return nil, experimentalsys.EPERM
	}
	creating := false
	if flag&experimentalsys.O_CREAT != 0 {
		if errno := lerr; errno == experimentalsys.ENOENT {
			if errno := s.reserveEntry(path, false); errno != 0 {
				return nil, errno
			}
			creating = true
		}
	}
	if creating {
		perm = newFileMode
	}
	f, errno := s.FS.OpenFile(path, flag, perm)
	if errno != 0 {
		if creating {
			s.q.releaseEntries(1, 0)
		}
		return nil, errno
	}
	st, errno = f.Stat()
	if errno != 0 {
		_ = f.Close()
		return nil, errno
	}
	if !st.Mode.IsRegular() {
		return f, 0 // directories take no bytes of the quota
	}
	if truncating && st.Dev == before.Dev && st.Ino == before.Ino && st.Size < before.Size {
		s.q.Release(before.Size - st.Size)
	}
	k := fileKey{dev: st.Dev, ino: st.Ino}
	s.q.fileOpened(k)
	qf := &quotaFile{File: f, fs: s, key: k, path: path}
	if creating || truncating {
		qf.changed()
	}
	return qf, 0
}

// hostWriting reports whether path names a temporary file the host's
// Write is writing (see writing), which the guest may not touch.
func (s *quotaFS) hostWriting(path string) bool {
	return strings.HasPrefix(pathpkg.Base(path), tmpPrefix) && s.writing.has(pathpkg.Base(path))
}

// Unlink implements experimentalsys.FS, releasing the file's bytes.
func (s *quotaFS) Unlink(path string) experimentalsys.Errno {
	if s.hostWriting(path) {
		return experimentalsys.EACCES
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, serr := s.FS.Lstat(path)
	if errno := s.FS.Unlink(path); errno != 0 {
		return errno
	}
	if serr == 0 && st.Mode.IsRegular() {
		s.q.fileRemoved(fileKey{dev: st.Dev, ino: st.Ino}, st.Size)
	}
	s.q.releaseEntries(1, 0) // Unlink removes no directory
	return 0
}

// Mkdir implements experimentalsys.FS, charging the new directory's entry
// (and DirBytes) first.
func (s *quotaFS) Mkdir(path string, perm fs.FileMode) experimentalsys.Errno {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, errno := s.FS.Lstat(path); errno != experimentalsys.ENOENT {
		return s.FS.Mkdir(path, perm) // EEXIST, ENOTDIR, ...: nothing to charge
	}
	if errno := s.reserveEntry(path, true); errno != 0 {
		return errno
	}
	if errno := s.FS.Mkdir(path, newDirMode); errno != 0 {
		s.q.releaseEntries(1, 1)
		return errno
	}
	return 0
}

// Rmdir implements experimentalsys.FS, releasing the directory's entry.
func (s *quotaFS) Rmdir(path string) experimentalsys.Errno {
	s.mu.Lock()
	defer s.mu.Unlock()
	if errno := s.FS.Rmdir(path); errno != 0 {
		return errno
	}
	s.q.releaseEntries(1, 1)
	return 0
}

// reserveEntry charges the entry of a file or directory about to be made
// at path, which does not exist. When the quota refuses, it reports what
// making it would have failed with anyway (a missing parent), so that a
// program sees the ENOENT it would see without a quota, and QuotaErrno
// otherwise.
func (s *quotaFS) reserveEntry(path string, dir bool) experimentalsys.Errno {
	err := s.q.tryReserveEntry(dir)
	if err == nil {
		return 0
	}
	if parent := pathpkg.Dir(path); parent != "." && parent != "/" {
		if _, errno := s.FS.Stat(parent); errno != 0 {
			return errno // not the quota's refusal: not counted as one
		}
	}
	s.q.noteRefusal(err)
	return QuotaErrno
}

// Rename implements experimentalsys.FS, releasing the entry of what it
// replaces, and the bytes of a regular file it replaces.
func (s *quotaFS) Rename(from, to string) experimentalsys.Errno {
	if s.hostWriting(from) || s.hostWriting(to) {
		return experimentalsys.EACCES
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fromSt, ferr := s.FS.Lstat(from)
	toSt, terr := s.FS.Lstat(to)
	if ferr == 0 && fromSt.Mode.IsDir() && len(to) > len(from) {
		if errno := s.fitsMoved(from, to); errno != 0 {
			return errno
		}
	}
	if errno := s.FS.Rename(from, to); errno != 0 {
		return errno
	}
	if ferr == 0 && fromSt.Mode.IsRegular() {
		s.changes.record(pathpkg.Clean(to))
	}
	if terr != 0 {
		return 0 // nothing was replaced
	}
	if ferr == 0 && toSt.Ino != 0 && fromSt.Dev == toSt.Dev && fromSt.Ino == toSt.Ino {
		return 0 // the same file: nothing was replaced
	}
	// The target's name now belongs to what was renamed: one entry fewer.
	if toSt.Mode.IsDir() {
		s.q.releaseEntries(1, 1) // an empty directory, replaced
		return 0
	}
	s.q.releaseEntries(1, 0)
	if toSt.Mode.IsRegular() {
		s.q.fileRemoved(fileKey{dev: toSt.Dev, ino: toSt.Ino}, toSt.Size)
	}
	return 0
}

// hostPathMax is the longest host path the host's calls take (Linux's
// PATH_MAX less its NUL). DirFS, and the saves of a session, reach each
// file by its whole host path.
const hostPathMax = 4095

// errPathTooLong stops fitsMoved's walk.
var errPathTooLong = errors.New("path too long")

// fitsMoved refuses (ENAMETOOLONG) moving the directory from to to when
// a path below it would become longer than the host takes. Each call of
// a program names paths the host takes, but moving a deep directory
// under another made longer ones: files that neither DirFS, nor a
// snapshot or hibernation of the session (which then always failed),
// nor a restore could reach. Only a move to a longer name can lengthen
// paths, so only those walk what they move.
func (s *quotaFS) fitsMoved(from, to string) experimentalsys.Errno {
	base := filepath.Join(s.dir, filepath.FromSlash(from))
	room := hostPathMax - len(filepath.Join(s.dir, filepath.FromSlash(to)))
	err := filepath.WalkDir(base, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if len(p)-len(base) > room {
			return errPathTooLong
		}
		return nil
	})
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errPathTooLong), errors.Is(err, syscall.ENAMETOOLONG):
		return experimentalsys.ENAMETOOLONG
	default:
		return experimentalsys.UnwrapOSError(err)
	}
}

// Link implements experimentalsys.FS: refused.
func (s *quotaFS) Link(_, _ string) experimentalsys.Errno { return experimentalsys.EPERM }

// Symlink implements experimentalsys.FS: refused.
func (s *quotaFS) Symlink(_, _ string) experimentalsys.Errno { return experimentalsys.EPERM }

// reserve charges the bytes by which writing buf at offset start extends a
// file of size bytes. It returns the part of buf that fits (all of it, or a
// prefix) and the bytes reserved, or QuotaErrno when nothing fits.
func (s *quotaFS) reserve(size, start int64, buf []byte) ([]byte, int64, experimentalsys.Errno) {
	need := start + int64(len(buf)) - size
	if need <= 0 {
		return buf, 0, 0
	}
	got := s.q.reserveUpTo(need)
	if got == need {
		return buf, got, 0
	}
	fit := int64(len(buf)) - (need - got)
	if fit <= 0 {
		s.q.Release(got)
		s.q.refused()
		return nil, 0, QuotaErrno
	}
	return buf[:fit], got, 0
}

// growth is by how much writing n bytes at offset start extended a file of
// size bytes.
func growth(size, start int64, n int) int64 {
	return max(0, start+int64(n)-size)
}

// quotaFile wraps a regular file of a quotaFS.
type quotaFile struct {
	experimentalsys.File
	fs     *quotaFS
	key    fileKey
	closed bool
	// path is the name the file was opened by, for the change record;
	// noted is set once it is recorded.
	path  string
	noted bool
}

// changed records the file as written, once per handle; the caller holds
// fs.mu.
func (f *quotaFile) changed() {
	if !f.noted {
		f.noted = true
		f.fs.changes.record(pathpkg.Clean(f.path))
	}
}

var _ experimentalsys.PollableFile = (*quotaFile)(nil)

// Write implements experimentalsys.File, reserving the growth first.
func (f *quotaFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return f.File.Write(buf)
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	st, errno := f.File.Stat()
	if errno != 0 {
		return 0, errno
	}
	start := st.Size
	if !f.File.IsAppend() {
		if start, errno = f.File.Seek(0, io.SeekCurrent); errno != 0 {
			return 0, errno
		}
	}
	buf, reserved, errno := f.fs.reserve(st.Size, start, buf)
	if errno != 0 {
		return 0, errno
	}
	n, errno := f.File.Write(buf)
	f.fs.q.adjust(reserved, growth(st.Size, start, n))
	if n > 0 {
		f.changed()
	}
	return n, errno
}

// Pwrite implements experimentalsys.File, reserving the growth first.
func (f *quotaFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if len(buf) == 0 || off < 0 {
		return f.File.Pwrite(buf, off)
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	st, errno := f.File.Stat()
	if errno != 0 {
		return 0, errno
	}
	buf, reserved, errno := f.fs.reserve(st.Size, off, buf)
	if errno != 0 {
		return 0, errno
	}
	n, errno := f.File.Pwrite(buf, off)
	f.fs.q.adjust(reserved, growth(st.Size, off, n))
	if n > 0 {
		f.changed()
	}
	return n, errno
}

// Truncate implements experimentalsys.File: growth is reserved first (all
// or nothing), shrinking releases.
func (f *quotaFile) Truncate(size int64) experimentalsys.Errno {
	if size < 0 {
		return f.File.Truncate(size)
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	st, errno := f.File.Stat()
	if errno != 0 {
		return errno
	}
	delta := size - st.Size
	if delta > 0 && f.fs.q.Reserve(delta) != nil {
		return QuotaErrno
	}
	if errno := f.File.Truncate(size); errno != 0 {
		if delta > 0 {
			f.fs.q.Release(delta)
		}
		return errno
	}
	if delta < 0 {
		f.fs.q.Release(-delta)
	}
	if delta != 0 {
		f.changed()
	}
	return 0
}

// Close implements experimentalsys.File. The last close of a file removed
// while open releases its bytes.
func (f *quotaFile) Close() experimentalsys.Errno {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return f.File.Close()
	}
	f.closed = true
	var size int64
	if st, errno := f.File.Stat(); errno == 0 {
		size = st.Size
	}
	errno := f.File.Close()
	f.fs.q.fileClosed(f.key, size)
	return errno
}

// IsNonblock implements experimentalsys.PollableFile.
func (f *quotaFile) IsNonblock() bool {
	if pf, ok := f.File.(experimentalsys.PollableFile); ok {
		return pf.IsNonblock()
	}
	return false
}

// SetNonblock implements experimentalsys.PollableFile.
func (f *quotaFile) SetNonblock(enable bool) experimentalsys.Errno {
	if pf, ok := f.File.(experimentalsys.PollableFile); ok {
		return pf.SetNonblock(enable)
	}
	return experimentalsys.ENOSYS
}

// Poll implements experimentalsys.Pollable.
func (f *quotaFile) Poll(flag experimentalsys.Pflag, timeoutMillis int32) (bool, experimentalsys.Errno) {
	if p, ok := f.File.(experimentalsys.Pollable); ok {
		return p.Poll(flag, timeoutMillis)
	}
	return false, experimentalsys.ENOSYS
}
