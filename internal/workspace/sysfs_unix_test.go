//go:build unix

package workspace

import (
	"path/filepath"
	"syscall"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A FIFO that the host's side of a mount holds is refused, not opened:
// opening it would block in a call no deadline interrupts, holding the
// file system's lock.
func TestSysFSRefusesAFIFO(t *testing.T) {
	e := newSysEnv(t, 0)
	if err := syscall.Mkfifo(filepath.Join(e.dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, flag := range []experimentalsys.Oflag{experimentalsys.O_RDONLY, experimentalsys.O_WRONLY, experimentalsys.O_RDWR | experimentalsys.O_CREAT} {
		if f, errno := e.fs.OpenFile("fifo", flag, 0o644); errno != experimentalsys.EPERM {
			if f != nil {
				f.Close()
			}
			t.Errorf("OpenFile(fifo, %v) = %v, want EPERM", flag, errno)
		}
	}
}
