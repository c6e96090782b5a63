package workspace

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// writeHeld starts w.Write(p) from a pipe and returns once chunk has been
// written to the write's temporary file, with the temporary's name (in
// dir, a directory of the workspace) and the pipe's writer, which ends
// the write when closed; the write's error comes on done.
func writeHeld(t *testing.T, w *Workspace, p, dir string, chunk []byte) (tmp string, pw *io.PipeWriter, done <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		_, err := w.Write(p, pr, 0)
		pr.CloseWithError(err)
		errc <- err
	}()
	// The second write returns once the first chunk has been written:
	// Write reads again only after writing what it read.
	for range 2 {
		if _, err := pw.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			return e.Name(), pw, errc
		}
	}
	t.Fatal("no temporary file of the write")
	return "", nil, nil
}

// A guest that removed or moved the temporary file of a host write in
// flight (its name is in the listing) made the quota forget bytes: the
// guest's unlink released them and the failed write released them again,
// or the moved file kept bytes the failed write released. The quota
// stays the bytes on disk, and the guest can neither remove nor move a
// temporary being written.
func TestGuestCannotTakeAWritesTemporary(t *testing.T) {
	chunk := bytes.Repeat([]byte("x"), 1000)
	for name, touch := range map[string]func(fsys experimentalsys.FS, tmp string) experimentalsys.Errno{
		"unlink":  func(fsys experimentalsys.FS, tmp string) experimentalsys.Errno { return fsys.Unlink(tmp) },
		"rename":  func(fsys experimentalsys.FS, tmp string) experimentalsys.Errno { return fsys.Rename(tmp, "kept") },
		"replace": func(fsys experimentalsys.FS, tmp string) experimentalsys.Errno { return fsys.Rename("other", tmp) },
		"truncate": func(fsys experimentalsys.FS, tmp string) experimentalsys.Errno {
			f, errno := fsys.OpenFile(tmp, experimentalsys.O_RDWR|experimentalsys.O_TRUNC, 0)
			if errno == 0 {
				f.Close()
			}
			return errno
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWS(t, 100_000)
			fsys := w.SysFS()
			// Bytes already charged, so that a release too many shows.
			if err := w.WriteFile("other", chunk, 0); err != nil {
				t.Fatal(err)
			}
			tmp, pw, done := writeHeld(t, w, "up.bin", w.Root(), chunk)
			errno := touch(fsys, tmp)
			if _, err := pw.Write(chunk); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			err := <-done
			t.Logf("guest's %s: %v; write: %v", name, errno, err)
			checkUsage(t, w, diskUsage(t, w.Root()))
			if errno == 0 {
				t.Errorf("the guest's %s of a write's temporary succeeded", name)
			}
			if err != nil {
				t.Errorf("the write: %v", err)
			}
		})
	}
}

// A guest that moved the directory a host write in flight was writing
// into left the written file uncharged (the write's rename by its old
// path failed, and it released the bytes of a file it could no longer
// remove). The write now finishes in the directory it began in, wherever
// that is now, and the quota is the bytes on disk.
func TestGuestMovingAWritesDirectory(t *testing.T) {
	chunk := bytes.Repeat([]byte("x"), 1000)
	w := newWS(t, 100_000)
	fsys := w.SysFS()
	if err := w.MkdirAll("d"); err != nil {
		t.Fatal(err)
	}
	_, pw, done := writeHeld(t, w, "d/up.bin", w.Root()+"/d", chunk)
	if errno := fsys.Rename("d", "e"); errno != 0 {
		t.Fatalf("the guest's rename: %v", errno)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Errorf("the write: %v", err)
	}
	checkUsage(t, w, diskUsage(t, w.Root()))
	if b, err := os.ReadFile(w.Root() + "/e/up.bin"); err != nil || len(b) != 2*len(chunk) {
		t.Errorf("the file written in the moved directory: %d bytes, %v", len(b), err)
	}
}
