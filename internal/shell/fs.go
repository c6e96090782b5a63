package shell

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// guestRoot is the workspace as the shell sees it: the initial and home
// directory.
const guestRoot = workspace.GuestRoot

// The device files the shell knows. Nothing else outside the workspace is
// reachable.
const (
	devNull   = "/dev/null"
	devStdin  = "/dev/stdin"
	devStdout = "/dev/stdout"
	devStderr = "/dev/stderr"
)

// workspaceTmpPrefix starts the names of the temporary files workspace.Write
// renames into place; listings leave them out.
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
		return t, fs.ErrNotExist
	}
	if strings.IndexByte(p, 0) >= 0 {
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
	rel, ok := strings.CutPrefix(t.abs, guestRoot+"/")
	if !ok {
		return t, errOutside
	}
	t.rel = rel
	return t, nil
}

// fsys performs file operations inside one workspace. Reads and writes of
// file contents go through the workspace (Open, Write, Remove), which
// resolves every path inside its root, refuses symbolic links and charges
// the quota. Operations the workspace does not offer (directories, renames,
// modes and times) first resolve the path through the workspace, which
// refuses any symbolic link on the way, and then act on that
// workspace-relative path through an os.Root opened on the workspace root,
// so that they cannot leave it either.
type fsys struct {
	ws  *workspace.Workspace
	max int64 // MaxFileBytes; <= 0 means no cap
}

func (f *fsys) withRoot(fn func(root *os.Root) error) error {
	root, err := os.OpenRoot(f.ws.Root())
	if err != nil {
		return err
	}
	defer root.Close()
	return fn(root)
}

// check makes sure no existing component of rel is a symbolic link.
func (f *fsys) check(rel string) error {
	_, _, err := f.ws.Resolve(rel)
	return err
}

// stat describes rel; a symbolic link anywhere on the path is refused.
func (f *fsys) stat(rel string) (fs.FileInfo, error) {
	if err := f.check(rel); err != nil {
		return nil, err
	}
	return f.lstatChecked(rel)
}

// lstat describes rel without following it if it is a symbolic link; its
// parents must be plain directories.
func (f *fsys) lstat(rel string) (fs.FileInfo, error) {
	if err := f.check(path.Dir(rel)); err != nil {
		return nil, err
	}
	return f.lstatChecked(rel)
}

// lstatChecked describes rel, whose path the caller has checked.
func (f *fsys) lstatChecked(rel string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := f.withRoot(func(root *os.Root) (err error) {
		fi, err = root.Lstat(rel)
		return err
	})
	return fi, err
}

// readDir lists the directory rel, sorted by name, with the entries
// described as lstat does (symbolic links are listed, not followed).
func (f *fsys) readDir(rel string) ([]fs.FileInfo, error) {
	if err := f.check(rel); err != nil {
		return nil, err
	}
	var infos []fs.FileInfo
	err := f.withRoot(func(root *os.Root) error {
		fi, err := root.Lstat(rel)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return syscall.ENOTDIR
		}
		d, err := root.Open(rel)
		if err != nil {
			return err
		}
		defer d.Close()
		entries, err := d.ReadDir(-1)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), workspaceTmpPrefix) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed since ReadDir
				}
				return err
			}
			infos = append(infos, info)
		}
		return nil
	})
	slices.SortFunc(infos, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return infos, err
}

// open opens the regular file rel for reading.
func (f *fsys) open(rel string) (*os.File, error) {
	rc, _, err := f.ws.Open(rel)
	if err != nil {
		return nil, err
	}
	if file, ok := rc.(*os.File); ok {
		return file, nil
	}
	rc.Close()
	return nil, fmt.Errorf("unexpected reader: %w", port.ErrRuntimeFailure)
}

// mkdir creates the directory rel, and its parents if parents is set (an
// existing directory is then not an error).
func (f *fsys) mkdir(rel string, parents bool) error {
	if err := f.check(rel); err != nil {
		return err
	}
	err := f.withRoot(func(root *os.Root) error {
		if parents {
			return root.MkdirAll(rel, 0o755)
		}
		return root.Mkdir(rel, 0o755)
	})
	if err != nil {
		return err
	}
	// MkdirAll follows links it meets inside the root: make sure the
	// directories it found or made are plain ones.
	return f.check(rel)
}

// remove removes the file, symbolic link or empty directory rel. The bytes
// of a regular file go back to the quota.
func (f *fsys) remove(rel string) error {
	fi, err := f.lstat(rel)
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		return f.ws.Remove(rel)
	}
	return f.withRoot(func(root *os.Root) error { return root.Remove(rel) })
}

// removeAll removes rel and, for a directory, everything below it, without
// following symbolic links. It stops at the first error.
func (f *fsys) removeAll(rel string) error {
	fi, err := f.lstat(rel)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		infos, err := f.readDir(rel)
		if err != nil {
			return err
		}
		for _, info := range infos {
			if err := f.removeAll(joinRel(rel, info.Name())); err != nil {
				return err
			}
		}
	}
	return f.remove(rel)
}

// rename moves src to dst (both workspace-relative). A regular file or
// symbolic link at dst is replaced, its bytes going back to the quota.
func (f *fsys) rename(src, dst string) error {
	sfi, err := f.lstat(src)
	if err != nil {
		return err
	}
	if err := f.check(path.Dir(dst)); err != nil {
		return err
	}
	if dfi, err := f.lstat(dst); err == nil {
		switch {
		case dfi.IsDir() && !sfi.IsDir():
			return fmt.Errorf("cannot overwrite directory with non-directory: %w", port.ErrIsDirectory)
		case !dfi.IsDir() && sfi.IsDir():
			return errNotDirOverwrite
		case !dfi.IsDir():
			if err := f.remove(dst); err != nil {
				return err
			}
		}
	}
	return f.withRoot(func(root *os.Root) error { return root.Rename(src, dst) })
}

var errNotDirOverwrite = errors.New("cannot overwrite non-directory with directory")

// chmod sets the permission bits of rel.
func (f *fsys) chmod(rel string, mode fs.FileMode) error {
	if err := f.check(rel); err != nil {
		return err
	}
	return f.withRoot(func(root *os.Root) error { return root.Chmod(rel, mode) })
}

// touch sets the times of rel to t.
func (f *fsys) touch(rel string, t time.Time) error {
	if err := f.check(rel); err != nil {
		return err
	}
	return f.withRoot(func(root *os.Root) error { return root.Chtimes(rel, t, t) })
}

// readlink returns the text of the symbolic link rel (without following
// it).
func (f *fsys) readlink(rel string) (string, error) {
	if err := f.check(path.Dir(rel)); err != nil {
		return "", err
	}
	var s string
	err := f.withRoot(func(root *os.Root) (err error) {
		s, err = root.Readlink(rel)
		return err
	})
	return s, err
}

// copyFile copies the regular file src to dst through the workspace.
func (f *fsys) copyFile(src, dst string) error {
	in, err := f.open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = f.ws.Write(dst, in, f.max)
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
// told by errors.Is or errors.As, never by an error's text: the
// workspace's refusals carry typed reasons (workspace.ErrNotRegular, ...)
// for that.
func errText(err error) string {
	var qe *workspace.QuotaError
	var tooLong *workspace.PathTooLongError
	var pe *fs.PathError
	var errno syscall.Errno
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errOutside):
		return errOutside.Error()
	case errors.As(err, &qe):
		return fmt.Sprintf("No space left on device (workspace quota of %d bytes)", qe.Limit)
	case errors.Is(err, port.ErrFileTooLarge):
		return "File too large"
	case errors.Is(err, port.ErrPathEscapesWorkspace):
		return "symbolic links are not followed in the workspace"
	case errors.Is(err, errNotDirOverwrite):
		return errNotDirOverwrite.Error()
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, workspace.ErrNotDirectory):
		return "Not a directory"
	case errors.Is(err, port.ErrFileNotFound), errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, port.ErrIsDirectory), errors.Is(err, syscall.EISDIR):
		return "Is a directory"
	case errors.Is(err, syscall.ENOTEMPTY):
		return "Directory not empty"
	case errors.Is(err, fs.ErrExist):
		return "File exists"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied"
	case errors.Is(err, syscall.EPIPE):
		return "Broken pipe"
	case errors.Is(err, workspace.ErrNotRegular):
		return workspace.ErrNotRegular.Error()
	case errors.As(err, &tooLong), errors.Is(err, syscall.ENAMETOOLONG):
		return "File name too long"
	case errors.Is(err, workspace.ErrNotUTF8):
		return "file name is not valid UTF-8"
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &errno):
		// What the operating system said, without the operation and the
		// path before it.
		return errno.Error()
	}
	return err.Error()
}

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

// emptyFile returns a file that reads as empty: the read end of a pipe whose
// write end is closed. The interpreter then uses it as standard input
// directly, without a copying goroutine.
func emptyFile() (*os.File, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	pw.Close()
	return pr, nil
}

// nopWriteCloser discards what is written to it (for /dev/null), or
// forwards it to a writer it must not close (for /dev/stdout).
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error                  { return nil }
func (nopWriteCloser) Read([]byte) (int, error)      { return 0, io.EOF }
func (w nopWriteCloser) Write(p []byte) (int, error) { return w.Writer.Write(p) }
