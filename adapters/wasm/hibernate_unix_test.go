//go:build unix

package wasm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// A hibernation file replaced by a FIFO after the start was opened for
// reading, which blocks until a writer comes: the call that woke the
// session hung, whatever its deadline, holding the session (and a
// shutdown waiting for it). What is not a regular file is now refused
// without opening it, and set aside.
func TestWakeOpensNoFIFO(t *testing.T) {
	a, hib := hibernatingAdapter(t)
	ctx := context.Background()
	id := newSession(t, a)
	hibernateNow(t, a, id)
	file := filepath.Join(hib, id+hibernatedSuffix)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(file, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.ListFiles(ctx, id, "")
		done <- err
	}()
	// Either the call returns, or the wake opens the FIFO for reading
	// (a writer's non-blocking open then succeeds): it would wait there
	// for ever. The writer lets it go on.
	var err2 error
	returned := false
	testwait.For(t, "the call to return or to open the FIFO", func() bool {
		select {
		case err2 = <-done:
			returned = true
			return true
		default:
		}
		w, err := os.OpenFile(file, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return false
		}
		w.Close()
		return true
	})
	if !returned {
		t.Error("the wake opened a FIFO for reading: it blocks until a writer comes")
		err2 = testwait.Receive(t, done, "the call")
	}
	if !errors.Is(err2, port.ErrSessionNotFound) {
		t.Errorf("waking from a FIFO: %v, want ErrSessionNotFound", err2)
	}
	if _, err := os.Lstat(file + unreadableSuffix); err != nil {
		t.Errorf("the FIFO was not set aside: %v", err)
	}
}
