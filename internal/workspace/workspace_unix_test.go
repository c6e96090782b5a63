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
	// Opening a FIFO for reading would block: it must be refused first,
	// as not a regular file, which callers tell by ErrNotRegular.
	notRegular := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, port.ErrInvalidRequest) || !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s = %v, want ErrInvalidRequest and ErrNotRegular", what, err)
		}
	}
	_, _, err := w.Open("fifo")
	notRegular("Open(fifo)", err)
	if want := "workspace: open fifo: not a regular file: invalid request"; err == nil || err.Error() != want {
		t.Errorf("Open(fifo) message %v, want %q", err, want)
	}
	_, err = w.ReadFile("fifo", 0)
	notRegular("ReadFile(fifo)", err)
	_, err = w.Write("fifo", strings.NewReader("x"), 0)
	notRegular("Write(fifo)", err)
	notRegular("Remove(fifo)", w.Remove("fifo"))
	list, err := w.List("")
	if err != nil || len(list) != 1 || list[0].Path != "plain" {
		t.Errorf("List = %+v, %v; want only the regular file", list, err)
	}
	if info, err := w.Stat("fifo"); err != nil || info.Path != "fifo" {
		t.Errorf("Stat(fifo) = %+v, %v", info, err)
	}
}
