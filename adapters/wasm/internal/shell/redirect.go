package shell

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// fileWriter is a file opened for writing by a redirection (> or >>) or by
// tee. The bytes stream into fsys.replace (or appendTo for >>), which runs
// in a goroutine of its own and puts the file in place when the writer is
// closed: the file is replaced atomically, its bytes are charged to the
// quota as they come, and a file over the size cap or the quota is refused
// without touching what was there.
//
// Each Write returns only once the writer has taken all of its bytes
// (charged them and written them to its temporary file), so a refusal is the
// error of the Write that caused it, and the command that wrote reports it.
type fileWriter struct {
	name   string        // as the user wrote it, for messages
	report io.Writer     // where a failure that no Write returned is reported
	wmu    sync.Mutex    // serialises writers (stdout and stderr may share a file)
	mu     sync.Mutex    // guards the fields below
	cond   sync.Cond     // signalled on every change of them
	buf    []byte        // bytes of the current Write not yet taken
	busy   bool          // a Write waits for the writer to take its bytes
	closed bool          // Close was called: the reader sees EOF
	done   bool          // the writer returned
	err    error         // what it returned
	told   bool          // err was returned by a Write
	finish chan struct{} // closed when the goroutine has ended
	once   sync.Once
	onDone func(*fileWriter) // called once, when closed
}

// startWrite starts writing the file rel: replacing it, or appending to it
// (in place, as bash does: an append never copies the file).
func (s *Shell) startWrite(name, rel string, appending bool, report io.Writer) *fileWriter {
	w := &fileWriter{name: name, report: report, finish: make(chan struct{}), onDone: s.forgetFile}
	w.cond.L = &w.mu
	s.trackFile(w)
	var r io.Reader = fileReader{w}
	go func() {
		defer close(w.finish)
		var err error
		if appending {
			_, err = s.fs.appendTo(rel, r)
		} else {
			_, err = s.fs.replace(rel, r)
		}
		w.mu.Lock()
		w.done, w.err = true, err
		w.cond.Broadcast()
		w.mu.Unlock()
	}()
	return w
}

// fileReader is the side of a fileWriter that the writer reads.
type fileReader struct{ w *fileWriter }

func (r fileReader) Read(p []byte) (int, error) {
	w := r.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy && len(w.buf) == 0 {
		// the writer asks for more: it has dealt with all the bytes
		// of the current Write.
		w.busy = false
		w.cond.Broadcast()
	}
	for len(w.buf) == 0 && !w.closed {
		w.cond.Wait()
	}
	if len(w.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, w.buf)
	w.buf = w.buf[n:]
	return n, nil
}

func (w *fileWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return 0, os.ErrClosed
	case w.done:
		return 0, w.failure()
	}
	w.buf, w.busy = p, true
	w.cond.Broadcast()
	for w.busy && !w.done {
		w.cond.Wait()
	}
	if w.busy { // the writer gave up before taking everything
		n := len(p) - len(w.buf)
		w.buf, w.busy = nil, false
		return n, w.failure()
	}
	return len(p), nil
}

// failure is the error of a write after the writer returned early.
func (w *fileWriter) failure() error {
	w.told = true
	if w.err == nil {
		return io.ErrShortWrite
	}
	return w.err
}

// Read makes fileWriter an io.ReadWriteCloser, as the interpreter's open
// handler needs; the file is write-only.
func (w *fileWriter) Read([]byte) (int, error) { return 0, os.ErrInvalid }

// Close puts the file in place and waits for the writing goroutine to end.
// A failure that no Write reported (the interpreter's own builtins do not
// check their writes, and it ignores this error) is printed as the shell
// would print it.
func (w *fileWriter) Close() error {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.cond.Broadcast()
		w.mu.Unlock()
		<-w.finish
		w.mu.Lock()
		err, told := w.err, w.told
		w.mu.Unlock()
		if err != nil && !told && w.report != nil {
			fmt.Fprintf(w.report, "bash: %s: %s\n", w.name, errText(err))
		}
		w.onDone(w)
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// trackFile and forgetFile keep the set of fileWriters not yet closed, so
// that Run can close those a command left open (exec > file) before it
// returns, and no writing goroutine outlives it.
func (s *Shell) trackFile(w *fileWriter) {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	s.files[w] = struct{}{}
}

func (s *Shell) forgetFile(w *fileWriter) {
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	delete(s.files, w)
}

func (s *Shell) closeFiles() {
	s.filesMu.Lock()
	open := make([]*fileWriter, 0, len(s.files))
	for w := range s.files {
		open = append(open, w)
	}
	kept := s.kept
	s.kept = nil
	s.filesMu.Unlock()
	for _, f := range kept {
		f.Close() // a here-document's pipe: its writer then ends
	}
	for _, w := range open {
		w.Close()
	}
}
