package workspace

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/codeport/codeport/port"
)

// Why the workspace refused a path, for callers that word their own
// messages (the shell prints "Not a directory" after the path, as bash
// does) and so must tell refusals apart without reading the workspace's
// messages. Each is wrapped together with port.ErrInvalidRequest, the
// port's kind of these refusals, so errors.Is matches both.
var (
	// ErrNotRegular: the path names something other than a regular file
	// or a directory (a FIFO, a socket, a device) where a file was wanted.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNotDirectory: a directory was wanted (a listing, a parent of the
	// path) and something else is there.
	ErrNotDirectory = errors.New("not a directory")
	// ErrNotUTF8: the path is not valid UTF-8.
	ErrNotUTF8 = errors.New("not valid UTF-8")
)

// PathTooLongError is the error of a path over MaxPathBytes, or of a new
// file or directory whose host path would be over the host's PATH_MAX
// (see Workspace.Write). It matches port.ErrInvalidRequest with
// errors.Is.
type PathTooLongError struct {
	// Bytes is the length of the refused path.
	Bytes int
	// Limit is MaxPathBytes, or less under a root whose host path
	// leaves less room.
	Limit int
}

func (e *PathTooLongError) Error() string {
	return fmt.Sprintf("path of %d bytes is over the limit of %d: %v", e.Bytes, e.Limit, port.ErrInvalidRequest)
}

// Is makes errors.Is(err, port.ErrInvalidRequest) hold.
func (e *PathTooLongError) Is(target error) bool { return target == port.ErrInvalidRequest }

// NameTooLongError is the error of a path with a component (a file or
// directory name) over MaxNameBytes: no file system of the host can hold
// it. It matches port.ErrInvalidRequest with errors.Is, and
// syscall.ENAMETOOLONG too, so that a caller wording its own messages
// (the shell's "File name too long") tells it without reading this one.
type NameTooLongError struct {
	// Bytes is the length of the longest refused component.
	Bytes int
	// Limit is MaxNameBytes.
	Limit int
}

func (e *NameTooLongError) Error() string {
	return fmt.Sprintf("file name component over %d bytes (%d bytes): %v", e.Limit, e.Bytes, port.ErrInvalidRequest)
}

// Is makes errors.Is(err, port.ErrInvalidRequest) and errors.Is(err,
// syscall.ENAMETOOLONG) hold.
func (e *NameTooLongError) Is(target error) bool {
	return target == port.ErrInvalidRequest || target == syscall.ENAMETOOLONG
}

// notDirError is ErrNotDirectory for a listing that names a file: the
// contract counts that as port.ErrIsDirectory (its 400 is "a directory
// where a file was wanted, or the other way round"), so it matches both.
type notDirError struct{}

func (notDirError) Error() string { return ErrNotDirectory.Error() }

// Is makes errors.Is(err, ErrNotDirectory) and errors.Is(err,
// port.ErrIsDirectory) hold.
func (notDirError) Is(target error) bool {
	return target == ErrNotDirectory || target == port.ErrIsDirectory
}
