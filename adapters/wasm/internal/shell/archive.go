package shell

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
	"time"
)

// The archive commands: tar, gzip/gunzip/zcat, zip and unzip, on the
// standard library's archive/tar, compress/gzip and archive/zip.
//
// What an archive holds is never trusted. Every member is written through
// c.writeFile and c.mkdirAll, so it lands inside the workspace, at most
// MaxFileBytes long and within the session quota, and is streamed from the
// archive to the file (a decompression bomb stops at the cap, never
// inflated in memory). A member name that is absolute loses its leading
// "/" (with GNU's message); one with a ".." component is refused (tar, as
// GNU tar does) or has it removed (unzip, as Info-ZIP does). Links,
// devices and FIFOs are never created: the workspace has none (its file
// system refuses them), so such members are reported and skipped, and the
// command fails at the end as GNU tar does for any error. Running out of
// quota or of workspace entries ends an extraction at once with a clear
// message, so that an archive of a million members costs one failure,
// not a million.

// errNoLinks explains the refusal of a link member.
const errNoLinks = "links are not supported in this sandbox's workspace"

// isSpaceError reports whether err is the workspace running out of bytes
// or entries: extraction stops there. (Under WASI the quota's refusal may
// come as EIO, wazero having no ENOSPC to give; an I/O error is reason
// enough to stop anyway.)
func isSpaceError(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EIO)
}

// pipeToFile writes the file p with what produce writes into the writer it
// is given, streaming (the writer side runs here, c.writeFile in a
// goroutine that ends before pipeToFile returns). A refused write (quota,
// cap) makes produce's writes fail; a failed produce leaves no file.
func (c *call) pipeToFile(p string, produce func(w io.Writer) error) (werr, perr error) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := c.writeFile(p, pr)
		pr.CloseWithError(errWriteEnded)
		done <- err
	}()
	perr = produce(pw)
	if perr != nil {
		pw.CloseWithError(perr)
	} else {
		pw.Close()
	}
	werr = <-done
	if errors.Is(perr, errWriteEnded) && werr != nil {
		perr = nil // the write's own error says why
	}
	return werr, perr
}

var errWriteEnded = errors.New("write ended")

// setMeta gives the extracted file p the permission bits and time it had
// in the archive, within what chmod allows (nothing group- or
// world-writable, as a umask of 022 does). Failures are ignored, as GNU
// tar run by a user does for what it may not change.
func (c *call) setMeta(p string, perm fs.FileMode, mtime time.Time) {
	t, err := c.target(p)
	if err != nil || t.dev != "" || t.root {
		return
	}
	if perm != 0 {
		mode := perm.Perm() &^ hostForbidden
		if fi, err := c.sh.fs.lstat(c.ctx, t.rel); err == nil && fi.IsDir() {
			mode |= dirOwnerBits
		}
		c.sh.fs.chmod(c.ctx, t.rel, mode)
	}
	if !mtime.IsZero() {
		c.sh.fs.touch(c.ctx, t.rel, mtime)
	}
}
