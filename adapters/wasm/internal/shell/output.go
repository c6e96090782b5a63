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

// out returns a buffered stdout; the command calls flush at the end.
func (c *call) out() *bufio.Writer { return bufio.NewWriterSize(c.stdout, 32<<10) }

// flush flushes w and returns status, or the status of a write error.
func (c *call) flush(w *bufio.Writer, status int) int {
	if err := w.Flush(); err != nil {
		return c.writeFailed(err)
	}
	return status
}

// copyOut copies r to w, telling a read error (rerr) from a write error
// (werr).
func copyOut(w io.Writer, r io.Reader) (rerr, werr error) {
	buf := make([]byte, 32<<10)
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
