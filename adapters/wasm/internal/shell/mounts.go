package shell

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"syscall"
)

// The shell runs as a WASI guest whose only files are two preopened
// directories: the session's workspace at /workspace and its temporary
// directory at /tmp, the same mounts as the session's Python. The host's
// file system layer behind them (workspace.NewSysFS) confines every path
// to its directory, refuses to make links, and charges the session's byte
// and entry quota as bytes are written (a write over it fails with EIO,
// wazero having no ENOSPC to give; see isSpaceError). Nothing in this
// package can name a host path: there is none to name.

const (
	guestRoot = "/workspace"
	tmpRoot   = "/tmp"
)

// Paths below are "rel" paths as fsys uses them: relative to /workspace,
// or absolute below /tmp.

// locate splits a rel path into its mount and the path inside it ("." for
// the mount itself).
func locate(rel string) (mount, sub string) {
	if rest, ok := strings.CutPrefix(rel, tmpRoot); ok && (rest == "" || rest[0] == '/') {
		sub = strings.TrimPrefix(rest, "/")
		if sub == "" {
			sub = "."
		}
		return tmpRoot, sub
	}
	if rel == "" {
		rel = "."
	}
	return guestRoot, rel
}

// cleanSub checks a path inside a mount: relative and clean. An absolute
// sub is the "/" of path.Dir("/tmp") (the parent that ls -a shows, the
// directory a redirection to /tmp checks), outside the mounts. A ".."
// that climbs above the mount cannot come from resolve, which cleans, and
// the guest's file system would refuse it (see fs.go); it is refused here
// too, as an assertion that costs nothing, so that a slip in a caller
// reads "outside the workspace" rather than depending on the layer below.
func cleanSub(sub string) (string, error) {
	c := path.Clean(sub)
	if path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
		return "", errOutside
	}
	return c, nil
}

// guestPath is the absolute guest path of a rel path.
func guestPath(rel string) string {
	mount, sub := locate(rel)
	return path.Join(mount, sub)
}

// replace replaces (or creates) the regular file rel with what r yields:
// the bytes go to a temporary file beside it, renamed over the target once
// complete, so a refused write (over MaxFileBytes, over the quota) leaves
// what was there.
func (f *fsys) replace(rel string, r io.Reader) (int64, error) {
	target := guestPath(rel)
	if fi, err := os.Lstat(target); err == nil && fi.IsDir() {
		return 0, syscall.EISDIR
	}
	tmp := path.Join(path.Dir(target), workspaceTmpPrefix+rand.Text())
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(capped(out, 0, f.max), r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return 0, err
	}
	return n, nil
}

// appendTo adds what r yields to the end of the regular file rel, which it
// creates if need be, keeping the file within MaxFileBytes. As in bash, a
// refused write leaves what was appended before it.
func (f *fsys) appendTo(rel string, r io.Reader) (int64, error) {
	out, err := os.OpenFile(guestPath(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	fi, err := out.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errNotRegular
	}
	var n int64
	if err == nil {
		n, err = io.Copy(capped(out, fi.Size(), f.max), r)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// capped writes to w, which holds size bytes already, refusing (wholly)
// a write that would take it past maxBytes (<= 0: no cap): the limit is
// kept while the bytes are produced, and nothing over it is written.
func capped(w io.Writer, size, maxBytes int64) io.Writer {
	if maxBytes <= 0 {
		return w
	}
	return &capWriter{w: w, size: size, max: maxBytes}
}

type capWriter struct {
	w         io.Writer
	size, max int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.size+int64(len(p)) > c.max {
		return 0, fmt.Errorf("over %d bytes: %w", c.max, errFileTooLarge)
	}
	n, err := c.w.Write(p)
	c.size += int64(n)
	return n, err
}

// errFileTooLarge is a write over MaxFileBytes.
var errFileTooLarge = errors.New("file too large")
