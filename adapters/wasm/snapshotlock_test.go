package wasm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// A snapshot taken while an upload was being written walked the upload's
// temporary as one of the session's files (a restore could have a
// partial ".codeport-tmp-" file, charged), and a release (a move to
// another node) could see an upload reported done after its snapshot was
// taken, and lost. A file operation under way now makes the session busy
// for a snapshot, as a call does; once it has ended, the snapshot holds
// the upload whole.
func TestSnapshotDuringAnUploadIsBusy(t *testing.T) {
	a := newTestAdapter(t, noPool)
	ctx := context.Background()
	id := newSession(t, a)
	chunk := bytes.Repeat([]byte("u"), 1000)
	pr, pw := io.Pipe()
	put := make(chan error, 1)
	go func() {
		_, err := a.d.PutFile(ctx, id, "up.bin", pr)
		pr.CloseWithError(err)
		put <- err
	}()
	if _, err := pw.Write(chunk); err != nil { // the upload is under way
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.d.SnapshotSession(ctx, id, &buf); !errors.Is(err, port.ErrSessionBusy) {
		t.Errorf("a snapshot during an upload: %v; want ErrSessionBusy", err)
	}
	if _, err := pw.Write(chunk); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := testwait.Receive(t, put, "the upload"); err != nil {
		t.Fatalf("the upload: %v", err)
	}
	buf.Reset()
	if err := a.d.SnapshotSession(ctx, id, &buf); err != nil {
		t.Fatalf("the snapshot after the upload: %v", err)
	}
	r, err := a.d.RestoreSession(ctx, bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	files, err := a.d.ListFiles(ctx, r.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "up.bin" || files[0].Size != 2*int64(len(chunk)) {
		t.Errorf("the restored session's files: %+v; want up.bin, %d bytes", files, 2*len(chunk))
	}
}
