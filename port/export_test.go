package port

import (
	"io"
	"os"
	"syscall"
)

// SetSpoolFull makes the temporary file of p's restores fail every write
// as a full disk does (ENOSPC), or work again with full false.
func SetSpoolFull(p *Port, full bool) {
	p.spoolSink = nil
	if full {
		p.spoolSink = func(w io.Writer) io.Writer { return FullDisk{} }
	}
}

// SetSpoolAlways makes p's restores spool the snapshot and check its seal
// before the driver reads it, even through a port.StreamRestorer.
func SetSpoolAlways(p *Port, on bool) { p.spoolAlways = on }

// FullDisk is a writer whose writes fail as on a full disk.
type FullDisk struct{}

func (FullDisk) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "spool", Err: syscall.ENOSPC}
}
