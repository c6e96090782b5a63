package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Paths and the file operations on them.
//
// Path confinement is decided in one place, and it is not this file: the
// guest's file system. The shell's only files are the two WASI preopens
// that package wasmshell mounts, /workspace and /tmp (each a
// workspace.NewSysFS over wazero's DirFS, with the session's quota), so no
// guest path can name a host file: a path under neither mount has no
// preopen to go through, and one that climbs out of a mount is refused by
// wazero (a path that is not fs.ValidPath fails with EPERM) and by the
// os.Root that every walk here goes through.
//
// What this file checks of a path is therefore not confinement but what
// the shell makes of it:
//
//   - resolve maps a path to its mount (or device), or says that it names
//     none ("outside the workspace", which every command prints, where the
//     guest's file system would answer "Bad file descriptor"). It compares
//     whole components, where Go's wasip1 layer picks a preopen by string
//     prefix, so that /tmpx or /workspace2 is outside rather than /tmp/x
//     or /workspace/2. Every other function here takes a rel path resolve
//     made.
//   - The walk of at refuses a symbolic link, and says so ("symbolic links
//     are not followed in the workspace"). The mounts cannot get one (their
//     file system refuses to make one, and the workspace's API makes
//     none), but wazero's DirFS would follow one that the host's side of a
//     mount held; TestSymlinks plants such links. replace and appendTo
//     (mounts.go) open their guest path directly, outside the walk, so
//     their callers check the path through it first: a redirection in
//     createFile, the commands that write files (sort -o, sed's w,
//     split) in call.writeFile.
//   - remove never removes a mount's root (the gateway's directory).

// The device files the shell knows. Nothing else outside the workspace is
// reachable.
const (
	devNull   = "/dev/null"
	devStdin  = "/dev/stdin"
	devStdout = "/dev/stdout"
	devStderr = "/dev/stderr"
)

// workspaceTmpPrefix starts the names of the temporary files that replace
// (here) and the files API (on the host) rename into place; listings leave
// them out.
const workspaceTmpPrefix = ".codeport-tmp-"

// errOutside is the error of a path that names something outside the
// workspace.
var errOutside = errors.New("outside the workspace")

// guestAbs returns the cleaned absolute guest path that p names when the
// current directory is dir.
func guestAbs(dir, p string) string {
	if !path.IsAbs(p) {
		p = path.Join(dir, p)
	}
	return path.Clean(p)
}

// target is a path argument resolved against the shell's current directory.
type target struct {
	arg  string // as given, for messages
	abs  string // cleaned absolute guest path
	rel  string // relative to the workspace root ("." for the root); "" for a device
	dev  string // one of the device paths, or ""
	root bool   // the workspace root itself
}

// resolve maps p, relative to the guest directory dir, to a target. Paths
// outside the workspace other than the known devices are errOutside; an
// empty path does not exist.
func resolve(dir, p string) (target, error) {
	t := target{arg: p}
	if p == "" {
		// GNU's answer; joined to dir, "" would name the current
		// directory.
		return t, fs.ErrNotExist
	}
	if strings.IndexByte(p, 0) >= 0 {
		// Not confinement: no file name holds a NUL (bash cannot even
		// pass one), and Go's wasip1 layer hands a path to the host with
		// its length, NUL included. Refused here with the shell's
		// message rather than whatever the host makes of it.
		return t, errOutside
	}
	t.abs = guestAbs(dir, p)
	switch t.abs {
	case devNull, devStdin, devStdout, devStderr:
		t.dev = t.abs
		return t, nil
	case guestRoot:
		t.rel, t.root = ".", true
		return t, nil
	}
	if t.abs == tmpRoot || strings.HasPrefix(t.abs, tmpRoot+"/") {
		t.rel = t.abs // /tmp and below: rel paths there are absolute
		return t, nil
	}
	rel, ok := strings.CutPrefix(t.abs, guestRoot+"/")
	if !ok {
		// The sandbox would refuse it too (no preopen holds it), but
		// with EBADF; and a prefix of a mount's name ("/tmpx") is not
		// that mount (see the top of this file).
		return t, errOutside
	}
	t.rel = rel
	return t, nil
}

// fsys performs file operations on the guest's mounts (see mounts.go).
// Reads of file contents and every directory operation walk the path one
// component at a time from the mount, through an os.Root opened on each
// directory in turn, and act on the last component in the directory so
// reached: a path of depth d costs O(d) calls, and the walk checks the
// context every 64 levels. Symbolic links cannot exist in the mounts; a
// walk refuses one anyway.
type fsys struct {
	max     int64 // MaxFileBytes; <= 0 means no cap
	chmodFn func(guestPath string, mode fs.FileMode) error
	modeFn  func(guestPath string) (fs.FileMode, bool)

	// roots are the mounts' roots, each opened at its first walk and kept
	// (the walks share them: an os.Root is safe for concurrent use).
	// Opening one for every walk was two host calls and a file with a
	// finalizer, twice for an `ls`.
	rootsMu sync.Mutex
	roots   map[string]*os.Root
}

// mountRoot returns the root of mount, guestRoot or tmpRoot.
func (f *fsys) mountRoot(mount string) (*os.Root, error) {
	f.rootsMu.Lock()
	defer f.rootsMu.Unlock()
	if r := f.roots[mount]; r != nil {
		return r, nil
	}
	r, err := os.OpenRoot(mount)
	if err != nil {
		return nil, err
	}
	if f.roots == nil {
		f.roots = make(map[string]*os.Root, 2)
	}
	f.roots[mount] = r
	return r, nil
}

// errSymlink is the refusal of a path through a symbolic link, the
// workspace's own (errText explains it).
func errSymlink(rel string) error {
	return fmt.Errorf("workspace: path %q goes through a symbolic link: %w", rel, errPathEscapes)
}

// at opens the directory that holds the last component of rel, after
// checking that every directory on the way is a plain one, and calls fn with
// it and the last component ("." for the workspace root). A missing or
// non-directory component on the way is the error os would give.
func (f *fsys) at(ctx context.Context, rel string, fn func(dir *os.Root, name string) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	mount, rel := locate(rel)
	rel, err := cleanSub(rel)
	if err != nil {
		return err
	}
	dir, err := f.mountRoot(mount)
	if err != nil {
		return err
	}
	if rel == "." {
		return fn(dir, ".")
	}
	var opened *os.Root // the directory the walk is in, when it opened it
	defer func() {
		if opened != nil {
			opened.Close()
		}
	}()
	parts := strings.Split(rel, "/")
	for i, name := range parts[:len(parts)-1] {
		sub, err := f.descend(ctx, dir, rel, name, i)
		if err != nil {
			return err
		}
		if opened != nil {
			opened.Close()
		}
		dir, opened = sub, sub
	}
	return fn(dir, parts[len(parts)-1])
}

// descend opens the subdirectory name of dir, the i-th component of rel,
// refusing a symbolic link.
func (f *fsys) descend(ctx context.Context, dir *os.Root, rel, name string, i int) (*os.Root, error) {
	if i%64 == 63 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	fi, err := dir.Lstat(name)
	switch {
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		// Not redundant: wazero's DirFS would follow a link that the
		// host's side of the mount held (see the top of this file).
		return nil, errSymlink(rel)
	case !fi.IsDir():
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	// A directory swapped for a link since the Lstat can only lead within
	// dir: an os.Root does not let a link out of itself.
	return dir.OpenRoot(name)
}

// lstatIn describes name in dir, refusing a symbolic link unless links is
// set: the operation that follows would go through it on the host's side
// (see the top of this file).
func lstatIn(dir *os.Root, rel, name string, links bool) (fs.FileInfo, error) {
	fi, err := dir.Lstat(name)
	if err == nil && !links && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, errSymlink(rel)
	}
	return fi, err
}

// stat describes rel; a symbolic link anywhere on the path, rel itself
// included, is refused.
func (f *fsys) stat(ctx context.Context, rel string) (fi fs.FileInfo, err error) {
	err = f.at(ctx, rel, func(dir *os.Root, name string) error {
		fi, err = lstatIn(dir, rel, name, false)
		return err
	})
	return f.withMode(rel, fi), err
}

// withMode gives fi, which describes rel, its real permission bits: WASI
// reports none, and Go makes up 0600 (0700 for a directory).
func (f *fsys) withMode(rel string, fi fs.FileInfo) fs.FileInfo {
	if fi == nil || f.modeFn == nil {
		return fi
	}
	perm, ok := f.modeFn(guestPath(rel))
	if !ok {
		return fi
	}
	return modeInfo{FileInfo: fi, mode: fi.Mode()&^fs.ModePerm | perm&fs.ModePerm}
}

// modeInfo is a FileInfo with its permission bits corrected.
type modeInfo struct {
	fs.FileInfo
	mode fs.FileMode
}

func (m modeInfo) Mode() fs.FileMode { return m.mode }

// lstat describes rel without following it if it is a symbolic link; its
// parents must be plain directories.
func (f *fsys) lstat(ctx context.Context, rel string) (fi fs.FileInfo, err error) {
	err = f.at(ctx, rel, func(dir *os.Root, name string) error {
		fi, err = lstatIn(dir, rel, name, true)
		return err
	})
	return f.withMode(rel, fi), err
}

// check makes sure no existing component of rel is a symbolic link; a
// missing one is not an error (the operation that follows reports it).
func (f *fsys) check(ctx context.Context, rel string) error {
	_, err := f.stat(ctx, rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	return err
}

// readDir lists the directory rel, sorted by name, with the entries
// described as lstat does (symbolic links are listed, not followed). It
// reads a directory of many entries in batches, checking ctx between them.
func (f *fsys) readDir(ctx context.Context, rel string) ([]fs.FileInfo, error) {
	var infos []fs.FileInfo
	err := f.eachEntry(ctx, rel, func(e fs.DirEntry) error {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed since ReadDir
		}
		if err != nil {
			return err
		}
		infos = append(infos, f.withMode(joinRel(rel, info.Name()), info))
		return nil
	})
	slices.SortFunc(infos, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return infos, err
}

// readDirNames lists the names in the directory rel, sorted, as readDir
// would but describing none: a plain ls prints only names, and describing
// an entry takes host calls (its status and its permission bits; Go's
// ReadDir in an os.Root asks for the status of every entry, Readdirnames
// for none).
func (f *fsys) readDirNames(ctx context.Context, rel string) ([]string, error) {
	var names []string
	err := f.inDir(ctx, rel, func(d *os.File) error {
		return eachBatch(ctx, d.Readdirnames, func(name string) string { return name }, func(name string) error {
			names = append(names, name)
			return nil
		})
	})
	slices.Sort(names)
	return names, err
}

// eachEntry calls each for the entries of the directory rel, but the
// temporary files of replace, in batches, checking ctx between them.
func (f *fsys) eachEntry(ctx context.Context, rel string, each func(fs.DirEntry) error) error {
	return f.inDir(ctx, rel, func(d *os.File) error {
		return eachBatch(ctx, d.ReadDir, fs.DirEntry.Name, each)
	})
}

// inDir calls list with the directory rel, open.
func (f *fsys) inDir(ctx context.Context, rel string, list func(d *os.File) error) error {
	return f.at(ctx, rel, func(dir *os.Root, name string) error {
		fi, err := lstatIn(dir, rel, name, false)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return syscall.ENOTDIR
		}
		d, err := dir.Open(name)
		if err != nil {
			return err
		}
		defer d.Close()
		return list(d)
	})
}

// eachBatch calls each for what read returns (entries or names, named by
// name), but the temporary files of replace, checking ctx between batches.
func eachBatch[T any](ctx context.Context, read func(n int) ([]T, error), name func(T) string, each func(T) error) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch, err := read(1024)
		for _, e := range batch {
			if strings.HasPrefix(name(e), workspaceTmpPrefix) {
				continue
			}
			if err := each(e); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || err == nil && len(batch) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// open opens the regular file rel for reading. A directory is
// errIsDirectory, any other kind of file errNotRegular, as
// for the workspace's Open.
func (f *fsys) open(ctx context.Context, rel string) (file *os.File, err error) {
	err = f.at(ctx, rel, func(dir *os.Root, name string) error {
		fi, err := lstatIn(dir, rel, name, false)
		if err != nil {
			return err
		}
		if err := checkRegular(fi); err != nil {
			return err
		}
		file, err = dir.OpenFile(name, os.O_RDONLY, 0)
		if err != nil {
			return err
		}
		if st, err := file.Stat(); err != nil || checkRegular(st) != nil {
			file.Close()
			file = nil
			if err == nil {
				err = checkRegular(st)
			}
			return err
		}
		return nil
	})
	return file, err
}

func checkRegular(fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return errIsDirectory
	case !fi.Mode().IsRegular():
		return errNotRegular
	}
	return nil
}

// mkdir creates the directory rel, and its parents if parents is set (an
// existing directory is then not an error).
//
// The mount's file system charges each directory to the session's entry
// and byte quota, as Python's are. The walk of at refuses a link on the way.
func (f *fsys) mkdir(ctx context.Context, rel string, parents bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Through the walk of at, which refuses a link on the way: WASI's
	// mkdir would follow one the host's side of the mount held.
	mk := func(rel string) error {
		return f.at(ctx, rel, func(dir *os.Root, name string) error { return dir.Mkdir(name, 0o755) })
	}
	if !parents {
		return mk(rel)
	}
	mount, sub := locate(rel)
	prefix := ""
	if mount == tmpRoot {
		prefix = tmpRoot + "/"
	}
	parts := strings.Split(sub, "/")
	for i := range parts {
		p := prefix + strings.Join(parts[:i+1], "/")
		err := mk(p)
		if err == nil || errors.Is(err, fs.ErrExist) {
			if fi, serr := f.stat(ctx, p); serr != nil {
				return serr
			} else if !fi.IsDir() {
				return syscall.ENOTDIR
			}
			continue
		}
		return err
	}
	return nil
}

// remove removes the file, symbolic link or empty directory rel, never a
// mount. The mount's file system gives its bytes and its entry back to the
// quota.
func (f *fsys) remove(ctx context.Context, rel string) error {
	if _, sub := locate(rel); sub == "." {
		// Not redundant: a mount's root is the gateway's directory, and
		// nothing below refuses to remove it (wazero's DirFS takes "." for
		// the mount's host directory itself). rmdir /tmp is "Permission
		// denied".
		return fs.ErrPermission
	}
	return f.at(ctx, rel, func(dir *os.Root, name string) error {
		if _, err := lstatIn(dir, rel, name, true); err != nil {
			return err
		}
		return dir.Remove(name)
	})
}

// removeAll removes rel and, for a directory, everything below it, without
// following symbolic links. It stops at the first error, and when ctx is
// done.
func (f *fsys) removeAll(ctx context.Context, rel string) error {
	fi, err := f.lstat(ctx, rel)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		infos, err := f.readDir(ctx, rel)
		if err != nil {
			return err
		}
		for _, info := range infos {
			if err := f.removeAll(ctx, joinRel(rel, info.Name())); err != nil {
				return err
			}
		}
	}
	return f.remove(ctx, rel)
}

// rename moves src to dst (both workspace-relative). A regular file or
// symbolic link at dst is replaced, its bytes going back to the quota.
func (f *fsys) rename(ctx context.Context, src, dst string) error {
	sfi, err := f.lstat(ctx, src)
	if err != nil {
		return err
	}
	// os.Rename below goes to the guest paths directly, not through the
	// walk of at: refuse a link among dst's directories first, as the walk
	// would (lstat refused one on src's way).
	if err := f.check(ctx, path.Dir(dst)); err != nil {
		return err
	}
	if dfi, err := f.lstat(ctx, dst); err == nil {
		switch {
		case dfi.IsDir() && !sfi.IsDir():
			return fmt.Errorf("cannot overwrite directory with non-directory: %w", errIsDirectory)
		case !dfi.IsDir() && sfi.IsDir():
			return errNotDirOverwrite
		default:
			// A file, or an empty directory, that the move replaces:
			// removed first, so that its bytes or entry go back to the
			// quota (a directory that is not empty is refused here as
			// rename(2) would refuse it).
			if err := f.remove(ctx, dst); err != nil {
				return err
			}
		}
	}
	if m1, _ := locate(src); m1 != func() string { m2, _ := locate(dst); return m2 }() {
		// The mounts are two file systems: a file crosses by a copy, a
		// directory (as between two devices without mv's copying) not.
		if !sfi.Mode().IsRegular() {
			return fmt.Errorf("moving a directory between /tmp and /workspace: %w", syscall.EXDEV)
		}
		if err := f.copyFile(ctx, src, dst); err != nil {
			return err
		}
		return f.remove(ctx, src)
	}
	return os.Rename(guestPath(src), guestPath(dst))
}

var errNotDirOverwrite = errors.New("cannot overwrite non-directory with directory")

// chmod sets the permission bits of rel.
func (f *fsys) chmod(ctx context.Context, rel string, mode fs.FileMode) error {
	return f.at(ctx, rel, func(dir *os.Root, name string) error {
		if _, err := lstatIn(dir, rel, name, false); err != nil {
			return err
		}
		if f.chmodFn == nil {
			return errors.ErrUnsupported
		}
		return f.chmodFn(guestPath(rel), mode)
	})
}

// touch sets the times of rel to t.
func (f *fsys) touch(ctx context.Context, rel string, t time.Time) error {
	return f.at(ctx, rel, func(dir *os.Root, name string) error {
		if _, err := lstatIn(dir, rel, name, false); err != nil {
			return err
		}
		return dir.Chtimes(name, t, t)
	})
}

// readlink returns the text of the symbolic link rel (without following
// it).
func (f *fsys) readlink(ctx context.Context, rel string) (s string, err error) {
	err = f.at(ctx, rel, func(dir *os.Root, name string) error {
		s, err = dir.Readlink(name)
		return err
	})
	return s, err
}

// copyFile copies the regular file src to dst.
func (f *fsys) copyFile(ctx context.Context, src, dst string) error {
	in, err := f.open(ctx, src)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = f.replace(dst, &ctxReader{ctx: ctx, r: in})
	return err
}

func joinRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

// errText is the message of err as a command prints it after the path:
// "No such file or directory", "outside the workspace", ... Every kind is
// told by errors.Is or errors.As, never by an error's text.
func errText(err error) string {
	var pe *fs.PathError
	var errno syscall.Errno
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errOutside):
		return errOutside.Error()
	case errors.Is(err, syscall.ENOSPC):
		return "No space left on device (the workspace's byte or file quota)"
	case errors.Is(err, errFileTooLarge), errors.Is(err, syscall.EFBIG):
		return "File too large"
	case errors.Is(err, errPathEscapes):
		return "symbolic links are not followed in the workspace"
	case errors.Is(err, errNotDirOverwrite):
		return errNotDirOverwrite.Error()
	case errors.Is(err, syscall.ENOTDIR):
		return "Not a directory"
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, errIsDirectory), errors.Is(err, syscall.EISDIR):
		return "Is a directory"
	case errors.Is(err, syscall.ENOTEMPTY):
		return "Directory not empty"
	case errors.Is(err, fs.ErrExist):
		return "File exists"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied"
	case errors.Is(err, syscall.EPIPE):
		return "Broken pipe"
	case errors.Is(err, syscall.EXDEV):
		return "Invalid cross-device link"
	case errors.Is(err, errNotRegular):
		return errNotRegular.Error()
	case errors.Is(err, syscall.ENAMETOOLONG):
		return "File name too long"
	case errors.Is(err, syscall.EILSEQ):
		return "file name is not valid UTF-8"
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &errno):
		// What the system said, without the operation and the path
		// before it.
		return errno.Error()
	}
	return err.Error()
}

// errNotRegular is a file that is neither a regular file nor a directory.
var errNotRegular = errors.New("not a regular file")

// The shell's own kinds of file errors, with the texts of port's sentinels
// of the same meaning. The shell runs only in its guest, where nothing of
// port is needed: the guest does not link package port, so that a change
// to port does not change the committed shell.wasm.
var (
	errIsDirectory = errors.New("is a directory")
	errPathEscapes = errors.New("path escapes workspace")
)

// The return codes of a command stopped by its deadline or cancelled, as
// port's ReturnCodeTimedOut and ReturnCodeCancelled (the shell's timeout
// and bash's code for SIGINT).
const (
	returnCodeTimedOut  = 124
	returnCodeCancelled = 130
)

// pathError is the error an interpreter handler returns for a path: the
// interpreter prints it as "bash: PATH: message" and fails the command with
// status 1.
func pathError(p string, err error) error {
	return &fs.PathError{Op: "bash:", Path: p, Err: errors.New(errText(err))}
}

// devInfo describes a device file.
type devInfo struct{ name string }

func (d devInfo) Name() string       { return d.name }
func (d devInfo) Size() int64        { return 0 }
func (d devInfo) Mode() fs.FileMode  { return fs.ModeDevice | fs.ModeCharDevice | 0o666 }
func (d devInfo) ModTime() time.Time { return time.Time{} }
func (d devInfo) IsDir() bool        { return false }
func (d devInfo) Sys() any           { return devSys() }

// emptyFile returns a file that reads as empty (and discards writes).
func emptyFile() (io.ReadWriteCloser, error) { return nopWriteCloser{io.Discard}, nil }

// nopWriteCloser discards what is written to it (for /dev/null), or
// forwards it to a writer it must not close (for /dev/stdout).
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error                  { return nil }
func (nopWriteCloser) Read([]byte) (int, error)      { return 0, io.EOF }
func (w nopWriteCloser) Write(p []byte) (int, error) { return w.Writer.Write(p) }
