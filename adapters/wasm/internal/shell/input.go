package shell

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// openInput opens an input operand: "-" and /dev/stdin are stdin, /dev/null
// is empty, anything else a regular file of the workspace. The returned
// closer is never nil.
func (c *call) openInput(p string) (io.Reader, func(), error) {
	if p == "-" {
		return c.stdin, func() {}, nil
	}
	t, err := c.target(p)
	if err != nil {
		return nil, nil, err
	}
	switch t.dev {
	case devStdin:
		return c.stdin, func() {}, nil
	case devNull, devStdout, devStderr:
		return strings.NewReader(""), func() {}, nil
	}
	f, err := c.sh.fs.open(c.ctx, t.rel)
	if err != nil {
		return nil, nil, err
	}
	return &ctxReader{ctx: c.ctx, r: f}, func() { f.Close() }, nil
}

// readAll reads r whole, refusing more than MaxFileBytes.
func (c *call) readAll(r io.Reader) ([]byte, error) {
	max := c.sh.fs.max
	if max > 0 {
		r = io.LimitReader(r, max+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fmt.Errorf("input over %d bytes: %w", max, errInputTooLarge)
	}
	return data, nil
}

var errInputTooLarge = errors.New("input too large")

// lineReader reads lines of at most MaxFileBytes bytes.
type lineReader struct {
	r   *bufio.Reader
	max int64
}

func (c *call) lines(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: c.sh.fs.max}
}

// next returns the next line without its newline, and whether it had one.
// At the end it returns io.EOF.
func (l *lineReader) next() (line []byte, nl bool, err error) {
	for {
		chunk, err := l.r.ReadSlice('\n')
		line = append(line, chunk...)
		if l.max > 0 && int64(len(line)) > l.max {
			return nil, false, fmt.Errorf("line over %d bytes: %w", l.max, errInputTooLarge)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, false, nil
		default:
			return nil, false, err
		}
	}
}

// deadlinePassed is a read deadline in the past.
var deadlinePassed = time.Unix(1, 0)

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// eachLine calls fn for every line of the inputs (stdin when there are
// none), as the inputs are read; a missing input is reported and skipped.
// fn's error is a write error and ends the command. It returns the status.
func (c *call) eachLine(files []string, fn func(line []byte, nl bool) error) int {
	if len(files) == 0 {
		files = []string{"-"}
	}
	status := 0
	for _, f := range files {
		if c.stopped() {
			return 1
		}
		r, done, err := c.openInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		lr := c.lines(r)
		for n := 0; ; n++ {
			if n%1024 == 1023 && c.stopped() {
				done()
				return 1
			}
			line, nl, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				status = c.fail(1, f, err)
				break
			}
			if err := fn(line, nl); err != nil {
				done()
				return c.writeFailed(err)
			}
		}
		done()
	}
	return status
}

// readInput reads the operand f whole (capped at MaxFileBytes).
func (c *call) readInput(f string) ([]byte, error) {
	r, done, err := c.openInput(f)
	if err != nil {
		return nil, err
	}
	defer done()
	return c.readAll(r)
}

// dataLines splits data into lines without their newlines; a last line
// without one counts.
func dataLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// readTerminated reads up to and including eol, refusing a record over max
// bytes (max <= 0: no cap). At the end it returns what is left and io.EOF.
func readTerminated(br *bufio.Reader, eol byte, max int64) ([]byte, error) {
	var rec []byte
	for {
		chunk, err := br.ReadSlice(eol)
		rec = append(rec, chunk...)
		if max > 0 && int64(len(rec)) > max {
			return nil, fmt.Errorf("line over %d bytes: %w", max, errInputTooLarge)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return rec, err
	}
}

// readRecord reads a record ended by eol (grep -z reads NUL-ended ones), at
// most max bytes, as lineReader.next does.
func readRecord(r *bufio.Reader, eol byte, max int64) (rec []byte, ended bool, err error) {
	for {
		chunk, err := r.ReadSlice(eol)
		rec = append(rec, chunk...)
		if max > 0 && int64(len(rec)) > max {
			return nil, false, fmt.Errorf("line over %d bytes: %w", max, errInputTooLarge)
		}
		switch {
		case err == nil:
			return rec[:len(rec)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(rec) > 0:
			return rec, false, nil
		default:
			return nil, false, err
		}
	}
}
