package server

import (
	"io"
	"net/http"
	"os"
	"syscall"
	"time"
)

// SetTenantsClock makes ts read the time from now, so that tests move the
// clock instead of waiting.
func SetTenantsClock(ts *Tenants, now func() time.Time) { ts.now = now }

// SetSnapshotDiskFull makes the handler h (of NewHandler, without
// tracing) fail every write of a snapshot's temporary file as a full disk
// does (ENOSPC).
func SetSnapshotDiskFull(h http.Handler) {
	h.(*server).tempSink = func(io.Writer) io.Writer { return fullDisk{} }
}

type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "snapshot", Err: syscall.ENOSPC}
}
