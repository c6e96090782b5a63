package wasm

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// A file operation that had found its session before the session was
// destroyed (DestroySession, or the reaper) went on in the session's
// directories after they were emptied and handed to the next session
// made: a listing of a destroyed session showed another session's files.
// One that finds its session destroyed now answers that it is not found.
func TestFileOperationOfADestroyedSessionSeesNoOther(t *testing.T) {
	a := newTestAdapter(t, noPool)
	ctx := context.Background()
	idA := newSession(t, a)
	sA, err := a.d.lookup(idA)
	if err != nil {
		t.Fatal(err)
	}
	type listing struct {
		files []port.FileInfo
		err   error
	}
	// Held, as a hibernation holds it, so that the listing waits for the
	// session's files after it has found the session.
	sA.hmu.Lock()
	listed := make(chan listing, 1)
	go func() {
		files, err := a.d.ListFiles(ctx, idA, "")
		listed <- listing{files, err}
	}()
	testwait.For(t, "the listing to wait for the session's files", func() bool {
		return testwait.InStack("(*adapter).awake", "(*adapter).ListFiles")
	})
	if err := a.d.DestroySession(ctx, idA); err != nil {
		t.Fatal(err)
	}
	// The destroyed session's directories go to the next session.
	idB := newSession(t, a)
	if _, err := a.d.PutFile(ctx, idB, "secret.txt", strings.NewReader("B's")); err != nil {
		t.Fatal(err)
	}
	sA.hmu.Unlock()
	got := testwait.Receive(t, listed, "the listing")
	for _, f := range got.files {
		t.Errorf("the listing of destroyed session %s shows %s (another session's)", idA, f.Path)
	}
	if !errors.Is(got.err, port.ErrSessionNotFound) {
		t.Errorf("the listing of a destroyed session: %v; want ErrSessionNotFound", got.err)
	}
}

// A session destroyed while one of its file operations is under way (an
// upload, which may take long) is not held up by it, and its directories
// go to no other session: the upload cannot land in one.
func TestUploadUnderWayLandsInNoOtherSession(t *testing.T) {
	a := newTestAdapter(t, noPool)
	ctx := context.Background()
	idA := newSession(t, a)
	sA, err := a.d.lookup(idA)
	if err != nil {
		t.Fatal(err)
	}
	rootA := sA.ws.Root()
	pr, pw := io.Pipe()
	put := make(chan error, 1)
	go func() {
		_, err := a.d.PutFile(ctx, idA, "up.bin", pr)
		pr.CloseWithError(err)
		put <- err
	}()
	if _, err := pw.Write([]byte("uploaded")); err != nil { // under way
		t.Fatal(err)
	}
	if err := a.d.DestroySession(ctx, idA); err != nil {
		t.Fatal(err)
	}
	idB := newSession(t, a)
	sB, err := a.d.lookup(idB)
	if err != nil {
		t.Fatal(err)
	}
	if sB.ws.Root() == rootA {
		t.Error("the next session has the directories of a session destroyed during an upload")
	}
	pw.Close()
	if err := testwait.Receive(t, put, "the upload"); err == nil {
		t.Error("an upload to a session destroyed under it succeeded")
	}
	if _, _, err := a.d.GetFile(ctx, idB, "up.bin"); !errors.Is(err, port.ErrFileNotFound) {
		t.Errorf("the upload in the next session: %v; want ErrFileNotFound", err)
	}
}
