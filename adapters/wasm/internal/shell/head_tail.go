package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// countShorthand turns the obsolete "-5" (and, for tail, "+5") first
// argument into "-n 5".
func countShorthand(args []string, plus bool) []string {
	if len(args) == 0 {
		return args
	}
	a := args[0]
	if len(a) > 1 && (a[0] == '-' || plus && a[0] == '+') && isDigits(a[1:]) {
		n := a[1:]
		if a[0] == '+' {
			n = a
		}
		return append([]string{"-n", n}, args[1:]...)
	}
	return args
}

// count is a head or tail count: n, with "-n -5" (negative) or "-n +5"
// (from) forms.
type count struct {
	n    int64
	neg  bool // head: all but the last n
	from bool // tail: starting with the nth
}

func parseCount(s string) (count, bool) {
	var c count
	switch {
	case strings.HasPrefix(s, "-"):
		c.neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		c.from, s = true, s[1:]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return c, false
	}
	c.n = n
	return c, true
}

var headTailLong = map[string]byte{"lines": 'n', "bytes": 'c', "quiet": 'q', "silent": 'q', "verbose": 'v'}

func cmdHead(c *call) int { return c.headTail(false) }

func cmdTail(c *call) int { return c.headTail(true) }

func (c *call) headTail(tail bool) int {
	long := headTailLong
	bools := "qv"
	if tail {
		bools = "qvfF"
	}
	o, files, ok := c.getopt(countShorthand(c.args, tail), bools, "nc", long)
	if !ok {
		return 1
	}
	if o.has('f') || o.has('F') {
		c.errorf("following a file (-f) is not supported")
		return 1
	}
	bytesMode := len(o.vals['c']) > 0
	spec := o.last('n', "10")
	if bytesMode {
		spec = o.last('c', "")
	}
	n, ok := parseCount(spec)
	if !ok {
		what := "lines"
		if bytesMode {
			what = "bytes"
		}
		c.errorf("invalid number of %s: '%s'", what, spec)
		return 1
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	headers := len(files) > 1 && !o.has('q') || o.has('v')
	w := c.out()
	status := 0
	for i, f := range files {
		if c.stopped() {
			break
		}
		r, done, err := c.openInput(f)
		if err != nil {
			if tail {
				c.errorf("cannot open '%s' for reading: %s", f, errText(err))
			} else {
				c.errorf("cannot open '%s' for reading: %s", f, errText(err))
			}
			status = 1
			continue
		}
		if headers {
			if i > 0 {
				w.WriteString("\n")
			}
			name := f
			if f == "-" {
				name = "standard input"
			}
			fmt.Fprintf(w, "==> %s <==\n", name)
		}
		var werr, rerr error
		switch {
		case bytesMode && !tail:
			werr, rerr = c.headBytes(w, r, n)
		case bytesMode:
			werr, rerr = c.tailBytes(w, r, n)
		case !tail:
			werr, rerr = c.headLines(w, r, n)
		default:
			werr, rerr = c.tailLines(w, r, n)
		}
		done()
		if werr != nil {
			return c.writeFailed(werr)
		}
		if rerr != nil {
			c.errorf("error reading '%s': %s", f, errText(rerr))
			status = 1
		}
	}
	return c.flush(w, status)
}

// writeLine writes a line and its newline if it had one.
func writeLine(w *bufio.Writer, line []byte, nl bool) error {
	w.Write(line)
	if nl {
		return w.WriteByte('\n')
	}
	_, err := w.Write(nil)
	return err
}

type heldLine struct {
	text []byte
	nl   bool
}

func (c *call) headLines(w *bufio.Writer, r io.Reader, n count) (werr, rerr error) {
	lr := c.lines(r)
	var held []heldLine // for "all but the last n"
	for i := int64(0); n.neg || i < n.n; i++ {
		line, nl, err := lr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, nil
			}
			return nil, err
		}
		if !n.neg {
			if err := writeLine(w, line, nl); err != nil {
				return err, nil
			}
			continue
		}
		held = append(held, heldLine{slices.Clone(line), nl})
		if int64(len(held)) > n.n {
			if err := writeLine(w, held[0].text, held[0].nl); err != nil {
				return err, nil
			}
			held = held[1:]
		}
	}
	return nil, nil
}

func (c *call) tailLines(w *bufio.Writer, r io.Reader, n count) (werr, rerr error) {
	lr := c.lines(r)
	var ring []heldLine
	var seen int64
	for {
		line, nl, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		seen++
		if n.from {
			if seen >= n.n {
				if err := writeLine(w, line, nl); err != nil {
					return err, nil
				}
			}
			continue
		}
		if n.n == 0 {
			continue
		}
		ring = append(ring, heldLine{slices.Clone(line), nl})
		if int64(len(ring)) > n.n {
			ring = ring[1:]
		}
	}
	for _, l := range ring {
		if err := writeLine(w, l.text, l.nl); err != nil {
			return err, nil
		}
	}
	return nil, nil
}

func (c *call) headBytes(w *bufio.Writer, r io.Reader, n count) (werr, rerr error) {
	if !n.neg {
		rerr, werr = c.copyOut(w, io.LimitReader(r, n.n))
		return werr, rerr
	}
	data, err := c.readAll(r)
	if err != nil {
		return nil, err
	}
	_, err = w.Write(data[:max(0, int64(len(data))-n.n)])
	return err, nil
}

func (c *call) tailBytes(w *bufio.Writer, r io.Reader, n count) (werr, rerr error) {
	if n.from {
		if _, err := io.CopyN(io.Discard, r, max(0, n.n-1)); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		rerr, werr = c.copyOut(w, r)
		return werr, rerr
	}
	var ring []byte
	buf, release := c.readBuf()
	defer release()
	for {
		k, err := r.Read(buf)
		ring = append(ring, buf[:k]...)
		if int64(len(ring)) > n.n {
			ring = append(ring[:0], ring[int64(len(ring))-n.n:]...)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	_, err := w.Write(ring)
	return err, nil
}
