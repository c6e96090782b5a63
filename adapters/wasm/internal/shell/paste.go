package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// pasteDelims expands paste's -d list: \n \t \\ and \0 (no delimiter).
func pasteDelims(s string) [][]byte {
	var d [][]byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				d = append(d, []byte{'\n'})
			case 't':
				d = append(d, []byte{'\t'})
			case '0':
				d = append(d, nil)
			default:
				d = append(d, []byte{s[i]})
			}
			continue
		}
		d = append(d, []byte{s[i]})
	}
	return d
}

// cmdPaste is GNU paste: lines of the files side by side, or with -s each
// file on one line.
func cmdPaste(c *call) int {
	o, files, ok := c.getopt(c.args, "sz", "d", map[string]byte{"serial": 's', "delimiters": 'd', "zero-terminated": 'z'})
	if !ok {
		fmt.Fprintf(c.stderr, "Try 'paste --help' for more information.\n")
		return 1
	}
	delims := [][]byte{{'\t'}}
	if v, ok := o.vals['d']; ok {
		delims = pasteDelims(v[len(v)-1])
		if len(delims) == 0 {
			delims = [][]byte{nil}
		}
	}
	eol := byte('\n')
	if o.has('z') {
		eol = 0
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	type src struct {
		br   *bufio.Reader
		done func()
		eof  bool
	}
	var stdinReader *bufio.Reader
	srcs := make([]*src, len(files))
	closeAll := func() {
		for _, s := range srcs {
			if s != nil && s.done != nil {
				s.done()
			}
		}
	}
	defer closeAll()
	open := func(i int) bool {
		f := files[i]
		r, done, err := c.openInput(f)
		if err != nil {
			c.fail(1, f, err)
			return false
		}
		s := &src{done: done}
		if r == c.stdin {
			if stdinReader == nil {
				stdinReader = bufio.NewReaderSize(c.stdin, 64<<10)
			}
			s.br = stdinReader
		} else {
			s.br = bufio.NewReaderSize(r, 64<<10)
		}
		srcs[i] = s
		return true
	}
	w := c.out()
	next := func(s *src) ([]byte, bool, error) {
		if s.eof {
			return nil, false, nil
		}
		rec, err := readTerminated(s.br, eol, c.maxBytes())
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		if len(rec) == 0 {
			s.eof = true
			return nil, false, nil
		}
		return bytes.TrimSuffix(rec, []byte{eol}), true, nil
	}
	if o.has('s') {
		for i, f := range files {
			if c.stopped() {
				break
			}
			if !open(i) {
				return c.flush(w, 1)
			}
			n := 0
			for !c.stopped() {
				rec, ok, err := next(srcs[i])
				if err != nil {
					c.fail(1, f, err)
					return c.flush(w, 1)
				}
				if !ok {
					break
				}
				if n > 0 {
					w.Write(delims[(n-1)%len(delims)])
				}
				w.Write(rec)
				n++
			}
			if err := w.WriteByte(eol); err != nil {
				return c.writeFailed(err)
			}
		}
		return c.flush(w, 0)
	}
	for i := range files {
		if !open(i) {
			return 1
		}
	}
	for !c.stopped() {
		any := false
		var line []byte
		for i, s := range srcs {
			rec, ok, err := next(s)
			if err != nil {
				c.fail(1, files[i], err)
				return c.flush(w, 1)
			}
			any = any || ok
			line = append(line, rec...)
			if i < len(srcs)-1 {
				line = append(line, delims[i%len(delims)]...)
			}
			if m := c.maxBytes(); m > 0 && int64(len(line)) > m {
				c.errorf("line over %d bytes", m)
				return c.flush(w, 1)
			}
		}
		if !any {
			break
		}
		line = append(line, eol)
		if _, err := w.Write(line); err != nil {
			return c.writeFailed(err)
		}
	}
	return c.flush(w, 0)
}
