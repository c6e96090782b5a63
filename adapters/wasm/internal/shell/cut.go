package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// cutRange is an inclusive range of 1-based positions; hi 0 means to the
// end of the line.
type cutRange struct{ lo, hi int }

// cutList is a parsed LIST of cut: the positions it selects.
type cutList struct {
	ranges     []cutRange
	complement bool
}

// parseCutList parses "N,N-,-M,N-M" (commas or blanks between items). The
// error is GNU's message; field tells which message to use for a zero.
func parseCutList(s string, field bool) (cutList, string) {
	var l cutList
	items := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(items) == 0 {
		if field {
			return l, "fields are numbered from 1"
		}
		return l, "byte/character positions are numbered from 1"
	}
	zero := "byte/character positions are numbered from 1"
	if field {
		zero = "fields are numbered from 1"
	}
	num := func(t string) (int, string) {
		for _, ch := range t {
			if ch < '0' || ch > '9' {
				what := "byte/character position"
				if field {
					what = "field value"
				}
				return 0, fmt.Sprintf("invalid %s '%s'", what, s)
			}
		}
		n, err := strconv.Atoi(t)
		if err != nil || n > 1<<40 {
			what := "byte/character offset"
			if field {
				what = "field number"
			}
			return 0, fmt.Sprintf("%s '%s' is too large", what, t)
		}
		if n == 0 {
			return 0, zero
		}
		return n, ""
	}
	for _, it := range items {
		lo, hi, isRange := strings.Cut(it, "-")
		if !isRange {
			n, msg := num(it)
			if msg != "" {
				return l, msg
			}
			l.ranges = append(l.ranges, cutRange{n, n})
			continue
		}
		if lo == "" && hi == "" {
			return l, "invalid range with no endpoint: -"
		}
		r := cutRange{lo: 1}
		if lo != "" {
			n, msg := num(lo)
			if msg != "" {
				return l, msg
			}
			r.lo = n
		}
		if hi != "" {
			n, msg := num(hi)
			if msg != "" {
				return l, msg
			}
			if n < r.lo {
				return l, "invalid decreasing range"
			}
			r.hi = n
		}
		l.ranges = append(l.ranges, r)
	}
	return l, ""
}

// has reports whether position i (1-based) is selected.
func (l cutList) has(i int) bool {
	in := false
	for _, r := range l.ranges {
		if i >= r.lo && (r.hi == 0 || i <= r.hi) {
			in = true
			break
		}
	}
	return in != l.complement
}

// cmdCut is GNU cut. -c works on bytes, as GNU's does.
func cmdCut(c *call) int {
	o, files, ok := c.getopt(c.args, "snzC", "bcfdO", map[string]byte{
		"bytes": 'b', "characters": 'c', "fields": 'f', "delimiter": 'd',
		"only-delimited": 's', "complement": 'C', "output-delimiter": 'O', "zero-terminated": 'z',
	})
	if !ok {
		fmt.Fprintf(c.stderr, "Try 'cut --help' for more information.\n")
		return 1
	}
	var kind byte
	var spec string
	for _, f := range []byte("bcf") {
		if v, ok := o.vals[f]; ok {
			if kind != 0 || len(v) > 1 {
				return c.usageError(1, "only one list may be specified")
			}
			kind, spec = f, v[0]
		}
	}
	if kind == 0 {
		return c.usageError(1, "you must specify a list of bytes, characters, or fields")
	}
	delim := byte('\t')
	if d, ok := o.vals['d']; ok {
		if kind != 'f' {
			return c.usageError(1, "an input delimiter may be specified only when operating on fields")
		}
		switch v := d[len(d)-1]; len(v) {
		case 0:
			delim = 0 // -d '' is NUL, as GNU takes it
		case 1:
			delim = v[0]
		default:
			return c.usageError(1, "the delimiter must be a single character")
		}
	}
	if o.has('s') && kind != 'f' {
		return c.usageError(1, "suppressing non-delimited lines makes sense\n\tonly when operating on fields")
	}
	list, msg := parseCutList(spec, kind == 'f')
	if msg != "" {
		return c.usageError(1, "%s", msg)
	}
	list.complement = o.has('C')
	outDelim, hasOut := []byte{delim}, false
	if v, ok := o.vals['O']; ok {
		outDelim, hasOut = []byte(v[len(v)-1]), true
	}
	eol := byte('\n')
	if o.has('z') {
		eol = 0
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	w := c.out()
	status := 0
	for _, f := range files {
		if c.stopped() {
			break
		}
		r, done, err := c.openInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		br := bufio.NewReaderSize(r, 64<<10)
		for !c.stopped() {
			line, err := readTerminated(br, eol, c.maxBytes())
			if len(line) == 0 && err != nil {
				if !errors.Is(err, io.EOF) {
					status = c.fail(1, f, err)
				}
				break
			}
			hadEOL := len(line) > 0 && line[len(line)-1] == eol
			if hadEOL {
				line = line[:len(line)-1]
			}
			if kind == 'f' {
				if bytes.IndexByte(line, delim) < 0 {
					if o.has('s') {
						continue
					}
					w.Write(line)
				} else {
					first := true
					for i, field := range bytes.Split(line, []byte{delim}) {
						if !list.has(i + 1) {
							continue
						}
						if !first {
							w.Write(outDelim)
						}
						first = false
						w.Write(field)
					}
				}
			} else {
				prev := -1
				for i := range line {
					if !list.has(i + 1) {
						continue
					}
					if hasOut && prev >= 0 && prev != i-1 {
						w.Write(outDelim)
					}
					prev = i
					w.WriteByte(line[i])
				}
			}
			if err := w.WriteByte(eol); err != nil {
				done()
				return c.writeFailed(err)
			}
			if err != nil {
				break
			}
		}
		done()
	}
	return c.flush(w, status)
}
