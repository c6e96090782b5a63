package shell

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// cmp compares two files byte by byte.
func cmdCmp(c *call) int {
	long := map[string]byte{"silent": 's', "quiet": 's', "verbose": 'l', "print-bytes": 'b', "bytes": 'n', "ignore-initial": 'i'}
	o, operands, ok := c.getopt(c.args, "slb", "ni", long)
	if !ok {
		fmt.Fprintf(c.stderr, "cmp: Try 'cmp --help' for more information.\n")
		return 2
	}
	limit := int64(-1)
	if v := o.last('n', ""); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			c.errorf("invalid --bytes value '%s'", v)
			fmt.Fprintf(c.stderr, "cmp: Try 'cmp --help' for more information.\n")
			return 2
		}
		limit = n
	}
	skip := [2]int64{}
	if v := o.last('i', ""); v != "" {
		s1, s2, two := strings.Cut(v, ":")
		for i, s := range []string{s1, s2} {
			if i == 1 && !two {
				skip[1] = skip[0]
				break
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				c.errorf("invalid --ignore-initial value '%s'", v)
				fmt.Fprintf(c.stderr, "cmp: Try 'cmp --help' for more information.\n")
				return 2
			}
			skip[i] = n
		}
	}
	switch len(operands) {
	case 0:
		c.errorf("missing operand after 'cmp'")
		fmt.Fprintf(c.stderr, "cmp: Try 'cmp --help' for more information.\n")
		return 2
	case 1:
		operands = append(operands, "-")
	case 2:
	case 3, 4:
		for i, s := range operands[2:] {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				c.errorf("invalid --ignore-initial value '%s'", s)
				fmt.Fprintf(c.stderr, "cmp: Try 'cmp --help' for more information.\n")
				return 2
			}
			skip[i] = n
		}
		operands = operands[:2]
	default:
		c.errorf("extra operand '%s'", operands[4])
		fmt.Fprintf(c.stderr, "cmp: Try 'cmp --help' for more information.\n")
		return 2
	}
	var data [2][]byte
	for i, p := range operands {
		r, done, err := c.openInput(p)
		if err != nil {
			return c.fail(2, p, err)
		}
		data[i], err = c.readAll(r)
		done()
		if err != nil {
			return c.fail(2, p, err)
		}
		data[i] = data[i][min(int64(len(data[i])), skip[i]):]
		if limit >= 0 && int64(len(data[i])) > limit {
			data[i] = data[i][:limit]
		}
	}
	a, b := data[0], data[1]
	silent, verbose, printBytes := o.has('s'), o.has('l'), o.has('b')
	w := c.out()
	n := min(len(a), len(b))
	line := 1
	status := 0
	width := len(strconv.Itoa(n)) // the offsets of -l, as GNU aligns them
	for i := 0; i < n; i++ {
		if i&0xffff == 0xffff && c.stopped() {
			return 2
		}
		if a[i] == b[i] {
			if a[i] == '\n' {
				line++
			}
			continue
		}
		status = 1
		switch {
		case silent:
			return 1
		case verbose:
			if printBytes {
				fmt.Fprintf(w, "%*d %3o %-4s %3o %s\n", width, i+1, a[i], cmpChar(a[i]), b[i], cmpChar(b[i]))
			} else {
				fmt.Fprintf(w, "%*d %3o %3o\n", width, i+1, a[i], b[i])
			}
			continue
		case printBytes:
			fmt.Fprintf(w, "%s %s differ: byte %d, line %d is %3o %s %3o %s\n", operands[0], operands[1], i+1, line, a[i], cmpChar(a[i]), b[i], cmpChar(b[i]))
		default:
			fmt.Fprintf(w, "%s %s differ: byte %d, line %d\n", operands[0], operands[1], i+1, line)
		}
		return c.flush(w, 1)
	}
	if st := c.flush(w, status); st != status {
		return st
	}
	if len(a) != len(b) {
		if !silent {
			short, data := operands[0], a
			if len(b) < len(a) {
				short, data = operands[1], b
			}
			switch {
			case len(data) == 0:
				c.errorf("EOF on %s which is empty", short)
			case verbose:
				c.errorf("EOF on %s after byte %d", short, len(data))
			case data[len(data)-1] == '\n':
				c.errorf("EOF on %s after byte %d, line %d", short, len(data), bytes.Count(data, []byte{'\n'}))
			default:
				c.errorf("EOF on %s after byte %d, in line %d", short, len(data), bytes.Count(data, []byte{'\n'})+1)
			}
		}
		return 1
	}
	return status
}

// cmpChar shows a byte as cat -v does, for cmp -b.
func cmpChar(b byte) string {
	var s string
	if b >= 0x80 {
		s = "M-"
		b -= 0x80
	}
	switch {
	case b < 0x20:
		return s + "^" + string(rune(b+'@'))
	case b == 0x7f:
		return s + "^?"
	}
	return s + string(rune(b))
}
