package shell

import (
	"bufio"
	"errors"
	"io"
	"os"
	"syscall"
)

// writeFailed reports a failed write of the output and returns the status:
// a closed pipe ends the command quietly (as SIGPIPE would).
func (c *call) writeFailed(err error) int {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		return 141
	}
	if c.ctx.Err() != nil {
		return 1
	}
	c.errorf("write error: %s", errText(err))
	return 1
}

// outBufSize is the size of a command's output buffer.
const outBufSize = 32 << 10

// out returns a buffered stdout; the command calls flush at the end. The
// buffer is the shell's, reused by a later command once this one has
// returned (releaseBufs): a command must not hand it to anything that
// outlives it.
func (c *call) out() *bufio.Writer {
	if w, ok := c.stdout.(*bufio.Writer); ok && w.Size() >= outBufSize {
		// Another command's buffer (find -exec's, say): written through,
		// as bufio.NewWriterSize would, and never this call's to give back.
		return w
	}
	w, _ := c.sh.outBufs.Get().(*bufio.Writer)
	if w == nil {
		w = bufio.NewWriterSize(c.stdout, outBufSize)
	} else {
		w.Reset(c.stdout)
	}
	c.bufs = append(c.bufs, w)
	return w
}

// releaseBufs gives the call's output buffers back to the shell, emptied
// of what was not flushed and of their writer. dispatch calls it when the
// command has returned; a call a command runs within itself (a copy, as
// xargs, env and find -exec make) starts with no buffers and leaves its
// own to the garbage collector, so that no buffer is given back while its
// command may still write to it.
func (c *call) releaseBufs() {
	for _, w := range c.bufs {
		w.Reset(nil)
		c.sh.outBufs.Put(w)
	}
	c.bufs = nil
}

// flush flushes w and returns status, or the status of a write error.
func (c *call) flush(w *bufio.Writer, status int) int {
	if err := w.Flush(); err != nil {
		return c.writeFailed(err)
	}
	return status
}

// readBufSize is the size of the buffers commands read their input
// through.
const readBufSize = 32 << 10

// readBuf returns a read buffer of readBufSize bytes from the shell's
// (Shell.readBufs), and the function that gives it back, to call once
// nothing reads into it or writes from it any more (readers and writers
// retain no buffer they were given, as io.Reader and io.Writer require).
func (c *call) readBuf() (buf []byte, release func()) {
	b, _ := c.sh.readBufs.Get().(*[]byte)
	if b == nil {
		buf := make([]byte, readBufSize)
		b = &buf
	}
	return *b, func() { c.sh.readBufs.Put(b) }
}

// copyOut copies r to w, telling a read error (rerr) from a write error
// (werr).
func (c *call) copyOut(w io.Writer, r io.Reader) (rerr, werr error) {
	buf, release := c.readBuf()
	defer release()
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil, werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return err, nil
		}
	}
}
