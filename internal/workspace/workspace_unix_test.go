//go:build unix

package workspace

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/codeport/codeport/port"
)

func TestSpecialFiles(t *testing.T) {
	w := newWS(t, 0)
	put(t, w, "plain", "p")
	if err := syscall.Mkfifo(filepath.Join(w.Root(), "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Opening a FIFO for reading would block: it must be refused first.
	if _, _, err := w.Open("fifo"); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("Open(fifo) = %v, want ErrInvalidRequest", err)
	}
	if _, err := w.ReadFile("fifo", 0); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("ReadFile(fifo) = %v, want ErrInvalidRequest", err)
	}
	if _, err := w.Write("fifo", strings.NewReader("x"), 0); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("Write(fifo) = %v, want ErrInvalidRequest", err)
	}
	if err := w.Remove("fifo"); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("Remove(fifo) = %v, want ErrInvalidRequest", err)
	}
	list, err := w.List("")
	if err != nil || len(list) != 1 || list[0].Path != "plain" {
		t.Errorf("List = %+v, %v; want only the regular file", list, err)
	}
	if info, err := w.Stat("fifo"); err != nil || info.Path != "fifo" {
		t.Errorf("Stat(fifo) = %+v, %v", info, err)
	}
}
