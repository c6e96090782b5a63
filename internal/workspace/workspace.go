package workspace

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"mime"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/codeport/codeport/port"
	wsys "github.com/tetratelabs/wazero/sys"
)

// GuestRoot is where the workspace is mounted in the guest, and the
// interpreter's working directory. Absolute paths are accepted only under it.
const GuestRoot = "/workspace"

// MaxPathBytes is the longest path Resolve accepts.
const MaxPathBytes = 4096

// MaxNameBytes is the longest name of one path component Resolve accepts:
// NAME_MAX of Linux file systems. A longer one cannot exist on the host,
// and would otherwise come back from the operating system as an
// ENAMETOOLONG that names no port error.
const MaxNameBytes = 255

// tmpPrefix starts the names of the temporary files Write renames into place.
const tmpPrefix = ".codeport-tmp-"

// Workspace is one confined host directory. Every path it is given is
// resolved inside its root and no symbolic link is ever followed; every byte
// it writes is charged to its Quota.
//
// A Workspace holds no open descriptors and is safe for concurrent use as far
// as the file system is: concurrent writes to the same path leave one of them.
type Workspace struct {
	root    string
	q       *Quota
	changes *Changes
	writing *writing
}

// writing holds the names of the temporary files Write is writing. The
// workspace's SysFS keeps its guest from opening, removing, moving or
// replacing them: what the guest did to one would be charged or released
// once more when the write ends (a moved temporary kept bytes the failed
// write released). Names are random, so a name alone identifies one.
type writing struct {
	mu    sync.Mutex
	names map[string]struct{}
}

func (wr *writing) add(name string) {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	if wr.names == nil {
		wr.names = make(map[string]struct{})
	}
	wr.names[name] = struct{}{}
}

func (wr *writing) remove(name string) {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	delete(wr.names, name)
}

// has reports whether name is a temporary being written; a nil writing
// has none.
func (wr *writing) has(name string) bool {
	if wr == nil {
		return false
	}
	wr.mu.Lock()
	defer wr.mu.Unlock()
	_, ok := wr.names[name]
	return ok
}

// New returns the workspace rooted at the host directory root, creating it
// (mode 0o700) if missing. The sizes of the regular files already in it,
// and its entries, are charged to q even if that goes over its limits
// (they are on disk already); later writes are then refused until enough
// is removed. A nil q means an unlimited quota of the workspace's own.
func New(root string, q *Quota) (*Workspace, error) {
	if root == "" {
		return nil, fmt.Errorf("workspace: empty root: %w", port.ErrInvalidRequest)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace: root: %w", err)
	}
	if q == nil {
		q = NewQuota(0)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: creating root: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: root is %w: %w", ErrNotDirectory, port.ErrInvalidRequest)
	}
	tree, err := scan(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: scanning root: %w", err)
	}
	var total int64
	for _, f := range tree.files {
		total += f.size
	}
	q.charge(total)
	q.chargeEntries(tree.entries, tree.dirs)
	return &Workspace{root: abs, q: q, changes: &Changes{}, writing: &writing{}}, nil
}

// Root returns the host path of the workspace root.
func (w *Workspace) Root() string { return w.root }

// Quota returns the quota the workspace charges.
func (w *Workspace) Quota() *Quota { return w.q }

// Changes is the record of the files written through the workspace's Write
// and its SysFS.
func (w *Workspace) Changes() *Changes { return w.changes }

// Resolve maps p to a host path inside the workspace. p is relative to the
// workspace root, or absolute under GuestRoot; "", "." and GuestRoot name the
// root itself. rel is the cleaned, slash-separated path relative to the root
// ("." for the root).
//
// Errors wrap port.ErrPathEscapesWorkspace for any other absolute path, a
// path whose cleaned form leaves the root, a NUL byte, or an existing path
// component that is a symbolic link (wherever it points); they wrap
// port.ErrInvalidRequest for invalid UTF-8 (with ErrNotUTF8) and paths over
// MaxPathBytes (a *PathTooLongError).
func (w *Workspace) Resolve(p string) (hostPath, rel string, err error) {
	root, rel, _, err := w.openAt(p)
	if err != nil {
		return "", "", err
	}
	defer root.Close()
	return w.hostPath(rel), rel, nil
}

// List returns the entries of directory dir, sorted by path, with paths
// relative to the workspace root. Subdirectories are included with IsDir
// set (and are not descended into); symbolic links and other special files
// are left out. A missing dir is port.ErrFileNotFound, a file is
// port.ErrInvalidRequest with ErrNotDirectory.
func (w *Workspace) List(dir string) ([]port.FileInfo, error) {
	root, rel, fi, err := w.openAt(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if fi == nil {
		return nil, fmt.Errorf("workspace: list %s: %w", rel, port.ErrFileNotFound)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: list %s: %w", rel, notDirError{})
	}
	d, err := root.Open(rel)
	if err != nil {
		return nil, pathErr("list", rel, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, pathErr("list", rel, err)
	}
	out := make([]port.FileInfo, 0, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() && !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since ReadDir
			}
			return nil, pathErr("list", rel, err)
		}
		out = append(out, fileInfo(joinRel(rel, e.Name()), info))
	}
	slices.SortFunc(out, func(a, b port.FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Open opens the regular file p for reading. A missing file is
// port.ErrFileNotFound, a directory (or a file spelt as one, "a.txt/":
// ErrNotDirectory) port.ErrIsDirectory, any other kind of file
// port.ErrInvalidRequest with ErrNotRegular.
func (w *Workspace) Open(p string) (io.ReadCloser, port.FileInfo, error) {
	root, err := w.openRoot()
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	defer root.Close()
	f, info, err := w.openIn(root, p)
	if err != nil {
		return nil, port.FileInfo{}, err // not a nil *os.File in an interface
	}
	return f, info, nil
}

// OpenUnreadable opens rel in root for reading after an open failed
// with openErr (fs.ErrPermission) because a program cleared the owner's
// read bit of the file (chmod 000, which AllowedMode lets a guest set):
// the host owns the sessions' files, and a download, an output's copy, a
// snapshot or a hibernation must read them whatever bits the program set
// (a host running as root never saw the bits at all). The owner's read
// bit, absent from perm (the file's bits), is set for the open and perm
// restored at once, so the program sees its bits unchanged; otherwise
// openErr is returned.
func OpenUnreadable(root *os.Root, rel string, perm fs.FileMode, openErr error) (*os.File, error) {
	if perm&0o400 != 0 || root.Chmod(rel, perm|0o400) != nil {
		return nil, openErr
	}
	f, err := root.Open(rel)
	if cerr := root.Chmod(rel, perm); cerr != nil && err == nil {
		f.Close()
		return nil, cerr
	}
	return f, err
}

func (w *Workspace) openIn(root *os.Root, p string) (*os.File, port.FileInfo, error) {
	rel, fi, err := w.resolveIn(root, p)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	if err := checkRegular("open", rel, fi); err != nil {
		return nil, port.FileInfo{}, err
	}
	if spelledAsDir(p) { // "a.txt/": ENOTDIR on every host
		return nil, port.FileInfo{}, fmt.Errorf("workspace: open %s/: %w", rel, notDirError{})
	}
	f, err := root.OpenFile(rel, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrPermission) {
		f, err = OpenUnreadable(root, rel, fi.Mode().Perm(), err)
	}
	if err != nil {
		return nil, port.FileInfo{}, pathErr("open", rel, err)
	}
	st, err := f.Stat()
	if err == nil {
		err = checkRegular("open", rel, st)
	}
	if err != nil {
		f.Close()
		return nil, port.FileInfo{}, err
	}
	return f, fileInfo(rel, st), nil
}

// ReadFile returns the contents of the regular file p. A file over maxBytes
// (when maxBytes > 0) is refused with an error wrapping port.ErrFileTooLarge.
func (w *Workspace) ReadFile(p string, maxBytes int64) ([]byte, error) {
	root, err := w.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, info, err := w.openIn(root, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if maxBytes > 0 && info.Size > maxBytes {
		return nil, tooLarge(info.Path, info.Size, maxBytes)
	}
	data, err := io.ReadAll(overLimit(f, maxBytes))
	if err != nil {
		return nil, pathErr("read", info.Path, err)
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return nil, tooLarge(info.Path, int64(len(data)), maxBytes)
	}
	return data, nil
}

// WriteFile writes data to p as Write does.
func (w *Workspace) WriteFile(p string, data []byte, maxBytes int64) error {
	_, err := w.Write(p, bytes.NewReader(data), maxBytes)
	return err
}

// Write writes everything r yields to the file p, creating parent
// directories and replacing an existing file. The bytes go to a temporary
// file in the same directory that is renamed over p only once complete, so a
// refused or failed write leaves an existing p as it was.
//
// At most maxBytes+1 bytes are read from r when maxBytes > 0: more than
// maxBytes is refused with an error wrapping port.ErrFileTooLarge. Bytes are
// reserved from the quota as they are copied; a write that would go over the
// quota is refused with a *QuotaError (also port.ErrFileTooLarge). The
// bytes of a file being replaced count as free for its replacement, unless a
// guest handle holds that file open. p naming a directory, or spelt as one
// (ending in "/", "." or ".."), is port.ErrIsDirectory; one whose host
// path would be over the host's PATH_MAX is a *PathTooLongError.
func (w *Workspace) Write(p string, r io.Reader, maxBytes int64) (port.FileInfo, error) {
	return w.write(p, r, maxBytes, nil)
}

// WriteMode is Write giving the file the permission bits perm, as
// AllowedMode allows, instead of keeping a replaced file's (or 0644).
func (w *Workspace) WriteMode(p string, r io.Reader, maxBytes int64, perm fs.FileMode) (port.FileInfo, error) {
	perm = AllowedMode(perm, false)
	return w.write(p, r, maxBytes, &perm)
}

func (w *Workspace) write(p string, r io.Reader, maxBytes int64, mode *fs.FileMode) (port.FileInfo, error) {
	root, rel, fi, err := w.openAt(p)
	if err != nil {
		return port.FileInfo{}, err
	}
	defer root.Close()
	if rel == "." || (fi != nil && fi.IsDir()) || spelledAsDir(p) {
		return port.FileInfo{}, fmt.Errorf("workspace: write %s: %w", rel, port.ErrIsDirectory)
	}
	if err := w.hostFits(rel); err != nil {
		return port.FileInfo{}, err
	}
	if fi != nil && !fi.Mode().IsRegular() {
		return port.FileInfo{}, fmt.Errorf("workspace: write %s: %w: %w", rel, ErrNotRegular, port.ErrInvalidRequest)
	}
	parent := path.Dir(rel)
	if parent != "." {
		if err := w.mkdirAllIn(root, "write", rel, parent); err != nil {
			return port.FileInfo{}, err
		}
		// Mkdir follows links it finds inside the root, should one appear
		// between the checks: make sure the parents are plain directories.
		if _, _, err := w.resolveIn(root, parent); err != nil {
			return port.FileInfo{}, err
		}
	}
	// The rest happens in the parent through a handle on it: a guest
	// that moves it meanwhile moves the write with it, and the file is
	// renamed into place beside its temporary, as charged.
	dir := root
	if parent != "." {
		pdir, err := root.OpenRoot(parent)
		if err != nil {
			return port.FileInfo{}, pathErr("write", rel, err)
		}
		defer pdir.Close()
		dir = pdir
	}
	name := path.Base(rel)

	perm := fs.FileMode(0o644)
	var credit int64
	if fi != nil {
		perm = fi.Mode().Perm()
		if !w.q.isOpen(keyOf(fi)) {
			credit = fi.Size()
		}
	}
	if mode != nil {
		perm = *mode
	}
	// A new name takes an entry, reserved for the temporary file that will
	// bear it; replacing a file takes none.
	entry := fi == nil
	if entry {
		if err := w.q.reserveEntry(false); err != nil {
			return port.FileInfo{}, fmt.Errorf("workspace: write %s: %w", rel, err)
		}
	}
	tmpName := tmpPrefix + rand.Text()
	w.writing.add(tmpName)
	defer w.writing.remove(tmpName)
	f, err := dir.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if entry {
			w.q.releaseEntries(1, 0)
		}
		return port.FileInfo{}, pathErr("write", rel, err)
	}
	var charged int64 // bytes reserved from the quota for the temp file
	fail := func(err error) (port.FileInfo, error) {
		f.Close()
		dir.Remove(tmpName)
		w.q.Release(charged)
		if entry {
			w.q.releaseEntries(1, 0)
		}
		return port.FileInfo{}, err
	}
	if err := f.Chmod(perm); err != nil { // umask may have narrowed it
		return fail(pathErr("write", rel, err))
	}

	r = overLimit(r, maxBytes)
	var written int64
	buf := make([]byte, 32<<10)
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if maxBytes > 0 && written+int64(n) > maxBytes {
				return fail(tooLarge(rel, written+int64(n), maxBytes))
			}
			if need := written + int64(n) - credit - charged; need > 0 {
				if err := w.q.Reserve(need); err != nil {
					return fail(fmt.Errorf("workspace: write %s: %w", rel, err))
				}
				charged += need
			}
			if _, err := f.Write(buf[:n]); err != nil {
				return fail(pathErr("write", rel, err))
			}
			written += int64(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fail(fmt.Errorf("workspace: write %s: reading input: %w", rel, rerr))
		}
	}
	if err := f.Close(); err != nil {
		return fail(pathErr("write", rel, err))
	}

	// What is at rel now is what the rename replaces.
	cur, err := dir.Lstat(name)
	switch {
	case err == nil && cur.IsDir():
		return fail(fmt.Errorf("workspace: write %s: %w", rel, port.ErrIsDirectory))
	case err == nil && !cur.Mode().IsRegular():
		return fail(fmt.Errorf("workspace: write %s: %w: %w", rel, ErrNotRegular, port.ErrInvalidRequest))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fail(pathErr("write", rel, err))
	case err != nil:
		cur = nil
	}
	if err := dir.Rename(tmpName, name); err != nil {
		return fail(pathErr("write", rel, err))
	}
	if cur != nil {
		w.q.fileRemoved(keyOf(cur), cur.Size())
	}
	w.q.charge(written - charged) // the credited bytes are now the new file's
	// The entry: one more name if nothing was replaced. What was here may
	// have changed since the start (another writer): settle the difference.
	switch {
	case cur == nil && !entry:
		w.q.chargeEntries(1, 0)
	case cur != nil && entry:
		w.q.releaseEntries(1, 0)
	}

	w.changes.record(rel)
	st, err := dir.Lstat(name)
	if err != nil {
		return port.FileInfo{}, pathErr("write", rel, err)
	}
	return fileInfo(rel, st), nil
}

// spelledAsDir reports whether p names a directory by its last component
// ("out/", "out/.", "out/sub/.."), which cleaning would drop: writing a
// file there would put it beside the directory meant, under its name.
func spelledAsDir(p string) bool {
	switch p[strings.LastIndexByte(p, '/')+1:] {
	case "", ".", "..":
		return true
	}
	return false
}

// Remove removes the regular file p and releases its bytes. A missing file
// is port.ErrFileNotFound, a directory port.ErrIsDirectory.
func (w *Workspace) Remove(p string) error {
	root, rel, fi, err := w.openAt(p)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := checkRegular("remove", rel, fi); err != nil {
		return err
	}
	if err := root.Remove(rel); err != nil {
		return pathErr("remove", rel, err)
	}
	w.q.fileRemoved(keyOf(fi), fi.Size())
	w.q.releaseEntries(1, 0)
	return nil
}

// Mkdir makes the directory p, whose parent must exist, charging its entry
// (and DirBytes, under an entry limit) to the quota. An existing p is an
// error wrapping fs.ErrExist, a missing parent port.ErrFileNotFound, a
// parent that is a file port.ErrInvalidRequest with ErrNotDirectory, and a
// directory the quota has no room for an *EntryLimitError or a
// *QuotaError (both port.ErrFileTooLarge).
func (w *Workspace) Mkdir(p string) error {
	root, rel, fi, err := w.openAt(p)
	if err != nil {
		return err
	}
	defer root.Close()
	if rel == "." || fi != nil {
		return fmt.Errorf("workspace: mkdir %s: %w", rel, fs.ErrExist)
	}
	if err := w.hostFits(rel); err != nil {
		return err
	}
	parent := path.Dir(rel)
	pfi, err := w.statIn(root, parent)
	switch {
	case err != nil:
		return err
	case pfi == nil:
		return fmt.Errorf("workspace: mkdir %s: %w", rel, port.ErrFileNotFound)
	case !pfi.IsDir():
		return fmt.Errorf("workspace: mkdir %s: a parent is %w: %w", rel, ErrNotDirectory, port.ErrInvalidRequest)
	}
	return w.mkdirIn(root, "mkdir", rel, rel)
}

// MkdirAll makes the directory p and any missing parents, charging each
// one it makes as Mkdir does. An existing directory is not an error;
// anything else in the way is port.ErrInvalidRequest with ErrNotDirectory.
func (w *Workspace) MkdirAll(p string) error {
	root, rel, _, err := w.openAt(p)
	if err != nil {
		return err
	}
	defer root.Close()
	if rel == "." {
		return nil
	}
	if err := w.hostFits(rel); err != nil {
		return err
	}
	return w.mkdirAllIn(root, "mkdir", rel, rel)
}

// hostFits refuses (a *PathTooLongError) making rel when its host path
// would be longer than the host's calls take (hostPathMax): the guest's
// file system and the saves of a session reach each file by its whole
// host path, so such a file would be out of the program's reach and
// would make every snapshot and hibernation of the session fail.
func (w *Workspace) hostFits(rel string) error {
	if limit := hostPathMax - len(w.root) - 1; len(rel) > limit {
		return fmt.Errorf("workspace: %w", &PathTooLongError{Bytes: len(rel), Limit: limit})
	}
	return nil
}

// AllowedMode is what a guest may set of perm on a file of the host's
// (the bash tool's chmod, Python's os.chmod, a restored snapshot):
// nothing group- or world-writable, set-id or sticky, and a directory
// keeps its owner's rwx, which the gateway needs to list and remove it.
func AllowedMode(perm fs.FileMode, dir bool) fs.FileMode {
	perm &= 0o755
	if dir {
		perm |= 0o700
	}
	return perm
}

// Chmod sets the permission bits of p, as AllowedMode allows; the root
// keeps its mode (port.ErrInvalidRequest), a missing p is
// port.ErrFileNotFound.
func (w *Workspace) Chmod(p string, perm fs.FileMode) error {
	root, rel, fi, err := w.openAt(p)
	if err != nil {
		return err
	}
	defer root.Close()
	switch {
	case rel == ".":
		return fmt.Errorf("workspace: chmod: the workspace root keeps its mode: %w", port.ErrInvalidRequest)
	case fi == nil:
		return fmt.Errorf("workspace: chmod %s: %w", rel, port.ErrFileNotFound)
	}
	return root.Chmod(rel, AllowedMode(perm, fi.IsDir()))
}

// RemoveDir removes the empty directory p and gives its entry back. A
// missing p is port.ErrFileNotFound, a file port.ErrInvalidRequest with
// ErrNotDirectory, the root port.ErrInvalidRequest, and a directory that
// is not empty an error wrapping syscall.ENOTEMPTY.
func (w *Workspace) RemoveDir(p string) error {
	root, rel, fi, err := w.openAt(p)
	if err != nil {
		return err
	}
	defer root.Close()
	switch {
	case rel == ".":
		return fmt.Errorf("workspace: rmdir: the workspace root cannot be removed: %w", port.ErrInvalidRequest)
	case fi == nil:
		return fmt.Errorf("workspace: rmdir %s: %w", rel, port.ErrFileNotFound)
	case !fi.IsDir():
		return fmt.Errorf("workspace: rmdir %s: %w: %w", rel, ErrNotDirectory, port.ErrInvalidRequest)
	}
	if err := root.Remove(rel); err != nil {
		return pathErr("rmdir", rel, err)
	}
	w.q.releaseEntries(1, 1)
	return nil
}

// statIn describes the existing directory or file rel (nil when missing),
// refusing symbolic links as resolveIn does.
func (w *Workspace) statIn(root *os.Root, rel string) (fs.FileInfo, error) {
	_, fi, err := w.resolveIn(root, rel)
	return fi, err
}

// mkdirAllIn makes each missing directory of dir (a cleaned path relative
// to the root), charging each to the quota before making it. Errors name
// rel, the path the caller (op) was asked about.
func (w *Workspace) mkdirAllIn(root *os.Root, op, rel, dir string) error {
	d := dirWalk{dir: root} // one lookup per step, as in resolveIn
	defer d.close()
	parts := strings.Split(dir, "/")
	raced := false
	for i := 0; i < len(parts); i++ {
		name := parts[i]
		fi, err := d.dir.Lstat(name)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("workspace: path %q goes through a symbolic link: %w", rel, port.ErrPathEscapesWorkspace)
		case err == nil && !fi.IsDir():
			return fmt.Errorf("workspace: %s %s: a parent is %w: %w", op, rel, ErrNotDirectory, port.ErrInvalidRequest)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return pathErr(op, rel, err)
		case err != nil:
			if err := w.mkdirIn(d.dir, op, rel, name); err != nil {
				if errors.Is(err, fs.ErrExist) && !raced {
					raced = true
					i-- // made meanwhile by someone else: look at it again
					continue
				}
				return err
			}
		}
		raced = false
		if err := d.enter(name); err != nil {
			return pathErr(op, rel, err)
		}
	}
	return nil
}

// mkdirIn makes the directory dir, whose parent exists, charging it first.
// An error wrapping fs.ErrExist means something is at dir already.
func (w *Workspace) mkdirIn(root *os.Root, op, rel, dir string) error {
	if err := w.q.reserveEntry(true); err != nil {
		return fmt.Errorf("workspace: %s %s: %w", op, rel, err)
	}
	if err := root.Mkdir(dir, 0o755); err != nil {
		w.q.releaseEntries(1, 1)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("workspace: %s %s: %w", op, rel, fs.ErrExist)
		}
		return pathErr(op, rel, err)
	}
	return nil
}

// Exists reports whether p names an existing file or directory. The error is
// non-nil only when p is not a valid workspace path (see Resolve) or the
// file system fails.
func (w *Workspace) Exists(p string) (bool, error) {
	_, err := w.Stat(p)
	if errors.Is(err, port.ErrFileNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Stat describes the file or directory p. A missing one is
// port.ErrFileNotFound.
func (w *Workspace) Stat(p string) (port.FileInfo, error) {
	root, rel, fi, err := w.openAt(p)
	if err != nil {
		return port.FileInfo{}, err
	}
	defer root.Close()
	if fi == nil {
		return port.FileInfo{}, fmt.Errorf("workspace: stat %s: %w", rel, port.ErrFileNotFound)
	}
	return fileInfo(rel, fi), nil
}

// RemoveAll deletes the workspace root and everything in it, and releases
// the bytes and entries of what it removed. A root already gone is not an
// error.
func (w *Workspace) RemoveAll() error {
	before, err := scan(w.root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("workspace: remove all: %w", err)
	}
	rerr := os.RemoveAll(w.root)
	var after tree
	if rerr != nil {
		after, _ = scan(w.root) // what is still there stays charged
	}
	for _, f := range before.files {
		if rerr != nil {
			if _, err := os.Lstat(f.path); err == nil {
				continue // still there
			}
		}
		w.q.fileRemoved(f.key, f.size)
	}
	w.q.releaseEntries(before.entries-after.entries, before.dirs-after.dirs)
	if rerr != nil {
		return fmt.Errorf("workspace: remove all: %w", stripPath(rerr))
	}
	return nil
}

// openRoot opens the workspace root; every operation works through it so
// that no path can leave the root even if the tree changes underneath.
func (w *Workspace) openRoot() (*os.Root, error) {
	root, err := os.OpenRoot(w.root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("workspace: root is gone: %w", port.ErrFileNotFound)
		}
		return nil, fmt.Errorf("workspace: opening root: %w", stripPath(err))
	}
	return root, nil
}

func (w *Workspace) hostPath(rel string) string {
	if rel == "." {
		return w.root
	}
	return filepath.Join(w.root, filepath.FromSlash(rel))
}

// openAt opens the root and resolves p in it (resolveIn); the caller
// closes root, which is nil when err is set.
func (w *Workspace) openAt(p string) (root *os.Root, rel string, fi fs.FileInfo, err error) {
	root, err = w.openRoot()
	if err != nil {
		return nil, "", nil, err
	}
	rel, fi, err = w.resolveIn(root, p)
	if err != nil {
		root.Close()
		return nil, "", nil, err
	}
	return root, rel, fi, nil
}

// resolveIn cleans p (see CleanPath) and Lstats each existing component in
// turn, refusing symbolic links. fi describes the file p names, nil when it
// does not exist (or a parent is not a directory).
func (w *Workspace) resolveIn(root *os.Root, p string) (rel string, fi fs.FileInfo, err error) {
	rel, err = CleanPath(p)
	if err != nil {
		return "", nil, err
	}
	if rel == "." {
		fi, err := root.Lstat(".")
		if err != nil {
			return "", nil, pathErr("stat", rel, err)
		}
		return rel, fi, nil
	}
	// Walk down with a handle on each directory, so that each step looks
	// up one name: looking up each prefix from the root would cost time
	// quadratic in the depth (a 2,000-deep path took seconds).
	d := dirWalk{dir: root}
	defer d.close()
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		cur, err := d.dir.Lstat(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return rel, nil, nil
			}
			return "", nil, pathErr("stat", rel, err)
		}
		if cur.Mode()&fs.ModeSymlink != 0 {
			return "", nil, fmt.Errorf("workspace: path %q goes through a symbolic link: %w", p, port.ErrPathEscapesWorkspace)
		}
		if i == len(parts)-1 {
			return rel, cur, nil
		}
		if !cur.IsDir() {
			return rel, nil, nil // a file used as a directory
		}
		if err := d.enter(name); err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return rel, nil, nil // removed or replaced since the Lstat
			}
			return "", nil, pathErr("stat", rel, err)
		}
	}
	return rel, nil, nil // not reached: the last part returns
}

// dirWalk holds a handle on one directory of a walk down from a root, so
// that each step of a walk costs one lookup. Handles it opened are closed
// as it moves on, and by close; the root it started from is not.
type dirWalk struct {
	dir    *os.Root
	opened bool // dir is the walk's own handle
}

// enter moves the walk into the subdirectory name of the current one.
// os.Root confines the handle to the root it started from whatever name
// has become since it was checked.
func (d *dirWalk) enter(name string) error {
	sub, err := d.dir.OpenRoot(name)
	if err != nil {
		return err
	}
	d.close()
	d.dir, d.opened = sub, true
	return nil
}

func (d *dirWalk) close() {
	if d.opened {
		d.dir.Close()
		d.opened = false
	}
}

// CleanPath is the lexical half of Resolve: it returns the cleaned,
// slash-separated path relative to the workspace root that p names, without
// looking at the file system (so without the symbolic-link check).
func CleanPath(p string) (string, error) {
	if len(p) > MaxPathBytes {
		return "", fmt.Errorf("workspace: %w", &PathTooLongError{Bytes: len(p), Limit: MaxPathBytes})
	}
	if !utf8.ValidString(p) {
		return "", fmt.Errorf("workspace: path %q is %w: %w", p, ErrNotUTF8, port.ErrInvalidRequest)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("workspace: path %q contains a NUL byte: %w", p, port.ErrPathEscapesWorkspace)
	}
	if p == "" {
		return ".", nil
	}
	c := path.Clean(p)
	if path.IsAbs(c) {
		switch {
		case c == GuestRoot:
			return ".", nil
		case strings.HasPrefix(c, GuestRoot+"/"):
			c = c[len(GuestRoot)+1:]
		default:
			return "", fmt.Errorf("workspace: path %q is outside %s: %w", p, GuestRoot, port.ErrPathEscapesWorkspace)
		}
	} else if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("workspace: path %q leads outside the workspace: %w", p, port.ErrPathEscapesWorkspace)
	}
	for name := range strings.SplitSeq(c, "/") {
		if len(name) > MaxNameBytes {
			return "", fmt.Errorf("workspace: %w", &NameTooLongError{Bytes: len(name), Limit: MaxNameBytes})
		}
	}
	return c, nil
}

// overLimit bounds r to one byte over maxBytes (when maxBytes > 0), so
// that a reader that goes over the limit is told from one that meets it
// without reading more. A limit of math.MaxInt64 has no byte over it (the
// bound would overflow, and read nothing): r is read whole.
func overLimit(r io.Reader, maxBytes int64) io.Reader {
	if maxBytes <= 0 || maxBytes == math.MaxInt64 {
		return r
	}
	return io.LimitReader(r, maxBytes+1)
}

func checkRegular(op, rel string, fi fs.FileInfo) error {
	switch {
	case fi == nil:
		return fmt.Errorf("workspace: %s %s: %w", op, rel, port.ErrFileNotFound)
	case fi.IsDir():
		return fmt.Errorf("workspace: %s %s: %w", op, rel, port.ErrIsDirectory)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("workspace: %s %s: %w: %w", op, rel, ErrNotRegular, port.ErrInvalidRequest)
	}
	return nil
}

func tooLarge(rel string, size, limit int64) error {
	return fmt.Errorf("workspace: %s: %d bytes is over the limit of %d bytes: %w", rel, size, limit, port.ErrFileTooLarge)
}

// pathErr maps a file-system error to one that names the workspace path, not
// the host path, and wraps the port sentinel that fits.
func pathErr(op, rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("workspace: %s %s: %w", op, rel, port.ErrFileNotFound)
	}
	if errors.Is(err, syscall.EISDIR) {
		return fmt.Errorf("workspace: %s %s: %w", op, rel, port.ErrIsDirectory)
	}
	if errors.Is(err, syscall.ENAMETOOLONG) {
		// CleanPath bounds each name; a whole path the host finds too long
		// is still the request's fault, not the backend's.
		return fmt.Errorf("workspace: %s %s: %w: %w", op, rel, stripPath(err), port.ErrInvalidRequest)
	}
	return fmt.Errorf("workspace: %s %s: %w", op, rel, stripPath(err))
}

// stripPath drops the host path from *fs.PathError and *os.LinkError.
func stripPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func fileInfo(rel string, fi fs.FileInfo) port.FileInfo {
	info := port.FileInfo{Path: rel, IsDir: fi.IsDir(), ModTime: fi.ModTime()}
	if !info.IsDir {
		info.Size = fi.Size()
		info.MimeType = MimeType(rel)
	}
	return info
}

// MimeType is the media type a file is served with, from its name's
// extension; application/octet-stream when there is none to go by.
func MimeType(rel string) string {
	if t := mime.TypeByExtension(path.Ext(rel)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

func keyOf(fi fs.FileInfo) fileKey {
	st := wsys.NewStat_t(fi)
	return fileKey{dev: st.Dev, ino: st.Ino}
}

type regularFile struct {
	path string
	key  fileKey
	size int64
}

// tree is what scan found under a directory.
type tree struct {
	files   []regularFile
	entries int64 // everything below the directory, itself excluded
	dirs    int64 // the directories among entries
}

// regularFiles lists the regular files under dir, without following links.
func regularFiles(dir string) ([]regularFile, error) {
	t, err := scan(dir)
	return t.files, err
}

// scan lists the regular files under dir and counts its entries, without
// following links.
func scan(dir string) (tree, error) {
	var t tree
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil
			}
			return err
		}
		if p == dir {
			return nil
		}
		t.entries++
		if d.IsDir() {
			t.dirs++
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		t.files = append(t.files, regularFile{path: p, key: keyOf(fi), size: fi.Size()})
		return nil
	})
	return t, err
}
