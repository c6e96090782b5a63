package shell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// odSpec is one output format of od: its kind (o, x, d, u, c or a), the
// size of a datum in bytes, the digits of a datum and whether the
// printable characters follow (z).
type odSpec struct {
	kind   byte
	size   int
	digits int
	z      bool
}

// odDigits are the widths of a datum by kind and size (1, 2, 4, 8).
var odDigits = map[byte][4]int{
	'o': {3, 6, 11, 22},
	'x': {2, 4, 8, 16},
	'd': {4, 6, 11, 20},
	'u': {3, 5, 10, 20},
}

// parseOdType parses the argument of -t: one or more of a, c, or d, o, u,
// x with an optional size (1, 2, 4, 8, C, S, I, L), each with an optional
// z.
func parseOdType(t string) ([]odSpec, error) {
	var specs []odSpec
	orig := t
	for t != "" {
		k := t[0]
		t = t[1:]
		var s odSpec
		switch k {
		case 'a', 'c':
			s = odSpec{kind: k, size: 1, digits: 3}
		case 'd', 'o', 'u', 'x':
			size := 4
			switch {
			case t != "" && t[0] >= '0' && t[0] <= '9':
				j := 0
				for j < len(t) && t[j] >= '0' && t[j] <= '9' {
					j++
				}
				n, _ := strconv.Atoi(t[:j])
				if n != 1 && n != 2 && n != 4 && n != 8 {
					return nil, fmt.Errorf("invalid type string '%s';\nthis system doesn't provide a %s-byte integral type", orig, t[:j])
				}
				size, t = n, t[j:]
			case t != "" && strings.IndexByte("CSIL", t[0]) >= 0:
				size = map[byte]int{'C': 1, 'S': 2, 'I': 4, 'L': 8}[t[0]]
				t = t[1:]
			}
			idx := map[int]int{1: 0, 2: 1, 4: 2, 8: 3}[size]
			s = odSpec{kind: k, size: size, digits: odDigits[k][idx]}
		default:
			return nil, fmt.Errorf("invalid character '%c' in type string '%s'", k, orig)
		}
		if t != "" && t[0] == 'z' {
			s.z, t = true, t[1:]
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// odNames are the names od -t a gives the control characters.
var odNames = [...]string{"nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel",
	"bs", "ht", "nl", "vt", "ff", "cr", "so", "si", "dle", "dc1", "dc2", "dc3",
	"dc4", "nak", "syn", "etb", "can", "em", "sub", "esc", "fs", "gs", "rs", "us", "sp"}

// odDatum formats one datum of spec s from b (len s.size, little-endian).
func odDatum(s odSpec, b []byte) string {
	if s.kind == 'c' {
		switch c := b[0]; c {
		case 0:
			return `\0`
		case '\a':
			return `\a`
		case '\b':
			return `\b`
		case '\f':
			return `\f`
		case '\n':
			return `\n`
		case '\r':
			return `\r`
		case '\t':
			return `\t`
		case '\v':
			return `\v`
		default:
			if c >= 0x20 && c < 0x7f {
				return string(rune(c))
			}
			return fmt.Sprintf("%03o", c)
		}
	}
	if s.kind == 'a' {
		c := b[0] & 0x7f
		switch {
		case int(c) < len(odNames):
			return odNames[c]
		case c == 0x7f:
			return "del"
		}
		return string(rune(c))
	}
	var u uint64
	for i := s.size - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	switch s.kind {
	case 'o':
		return fmt.Sprintf("%0*o", s.digits, u)
	case 'x':
		return fmt.Sprintf("%0*x", s.digits, u)
	case 'u':
		return strconv.FormatUint(u, 10)
	}
	shift := 64 - 8*s.size
	return strconv.FormatInt(int64(u<<shift)>>shift, 10)
}

// parseOdSize parses a byte count of od or split: decimal, 0x hex or 0
// octal, with an optional multiplier suffix (b 512, K/KiB 1024, KB 1000,
// M, MB, G, GB...).
func parseOdSize(s string) (int64, bool) {
	digits := "0123456789"
	start := 0
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		digits, start = "0123456789abcdefABCDEF", 2
	}
	end := start
	for end < len(s) && strings.IndexByte(digits, s[end]) >= 0 {
		end++
	}
	num, suffix := s[:end], s[end:]
	n, err := strconv.ParseInt(num, 0, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	mult := int64(1)
	if suffix != "" {
		units := map[string]int64{"b": 512, "c": 1, "w": 2}
		pow := func(base int64, e int) int64 {
			m := int64(1)
			for range e {
				m *= base
			}
			return m
		}
		for e, l := range []string{"K", "M", "G", "T", "P", "E"} {
			units[l] = pow(1024, e+1)
			units[strings.ToLower(l)] = pow(1024, e+1)
			units[l+"iB"] = pow(1024, e+1)
			units[l+"B"] = pow(1000, e+1)
		}
		m, ok := units[suffix]
		if !ok {
			return 0, false
		}
		mult = m
	}
	if n > 0 && mult > (1<<62)/n {
		return 0, false
	}
	return n * mult, true
}

// od dumps its input (the files, one after the other) in the formats of
// -t (octal 2-byte words by default), 16 bytes a line, each line preceded
// by its offset (-A); repeated lines become "*" unless -v.
func cmdOd(c *call) int {
	args := make([]string, 0, len(c.args))
	for _, a := range c.args {
		if a == "-w" || a == "--width" {
			a = "--width=32"
		}
		args = append(args, a)
	}
	o, files, ok := c.getopt(args, "bcdosxilvh", "AtjNw", map[string]byte{
		"address-radix": 'A', "format": 't', "skip-bytes": 'j', "read-bytes": 'N',
		"width": 'w', "output-duplicates": 'v'})
	if !ok {
		return 1
	}
	// The traditional letters and -t, in the order given (getopt has
	// checked the syntax).
	var specs []odSpec
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if t, ok := strings.CutPrefix(a, "--format="); ok {
			s, err := parseOdType(t)
			if err != nil {
				c.errorf("%s", err)
				return 1
			}
			specs = append(specs, s...)
			continue
		}
		if a == "--format" && i+1 < len(args) {
			i++
			s, err := parseOdType(args[i])
			if err != nil {
				c.errorf("%s", err)
				return 1
			}
			specs = append(specs, s...)
			continue
		}
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			continue
		}
		for j := 1; j < len(a); j++ {
			if strings.IndexByte("AtjNw", a[j]) >= 0 {
				v := a[j+1:]
				if v == "" && i+1 < len(args) {
					i++
					v = args[i]
				}
				if a[j] == 't' {
					s, err := parseOdType(v)
					if err != nil {
						c.errorf("%s", err)
						return 1
					}
					specs = append(specs, s...)
				}
				break
			}
			t := map[byte]string{'b': "o1", 'c': "c", 'd': "u2", 'o': "o2", 's': "d2", 'x': "x2", 'h': "x2", 'i': "d4", 'l': "d8"}[a[j]]
			if t != "" {
				s, _ := parseOdType(t)
				specs = append(specs, s...)
			}
		}
	}
	if len(specs) == 0 {
		specs = []odSpec{{kind: 'o', size: 2, digits: 6}}
	}
	radix := o.last('A', "o")
	addrWidth := map[string]int{"o": 7, "d": 7, "x": 6, "n": 0}
	if _, ok := addrWidth[radix]; !ok || len(radix) != 1 {
		c.errorf("invalid output address radix '%s'; it must be one character from [doxn]", radix)
		return 1
	}
	skip, limit := int64(0), int64(-1)
	if v := o.vals['j']; len(v) > 0 {
		n, ok := parseOdSize(v[len(v)-1])
		if !ok {
			c.errorf("invalid -j argument '%s'", v[len(v)-1])
			return 1
		}
		skip = n
	}
	if v := o.vals['N']; len(v) > 0 {
		n, ok := parseOdSize(v[len(v)-1])
		if !ok {
			c.errorf("invalid -N argument '%s'", v[len(v)-1])
			return 1
		}
		limit = n
	}
	perLine := 16
	if v := o.vals['w']; len(v) > 0 {
		n, err := strconv.Atoi(v[len(v)-1])
		if err != nil || n < 1 || n > 1<<16 {
			c.errorf("invalid -w argument '%s'", v[len(v)-1])
			return 1
		}
		perLine = n
	}
	for _, s := range specs {
		if perLine%s.size != 0 {
			c.errorf("invalid width %d: not a multiple of the datum sizes", perLine)
			return 1
		}
	}
	// Align the formats: every line of a block is as wide as the widest.
	lineWidth := 0
	for _, s := range specs {
		lineWidth = max(lineWidth, (s.digits+1)*(perLine/s.size))
	}

	if len(files) == 0 {
		files = []string{"-"}
	}
	status := 0
	var readers []io.Reader
	for _, f := range files {
		r, done, err := c.openInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		defer done()
		readers = append(readers, r)
	}
	in := io.MultiReader(readers...)
	if skip > 0 {
		n, err := io.CopyN(io.Discard, in, skip)
		if err != nil && !errors.Is(err, io.EOF) {
			c.errorf("%s", errText(err))
			return 1
		}
		if n < skip {
			c.errorf("cannot skip past end of combined input")
			return 1
		}
	}
	if limit >= 0 {
		in = io.LimitReader(in, limit)
	}
	addr := func(off int64) string {
		switch radix {
		case "o":
			return fmt.Sprintf("%07o", off)
		case "d":
			return fmt.Sprintf("%07d", off)
		case "x":
			return fmt.Sprintf("%06x", off)
		}
		return ""
	}
	w := c.out()
	block := make([]byte, perLine)
	prev := make([]byte, perLine)
	off := skip
	first, starred := true, false
	for n := 0; ; n++ {
		if n%256 == 255 && c.stopped() {
			return 1
		}
		k, err := io.ReadFull(in, block)
		if k == 0 {
			if err != nil && !errors.Is(err, io.EOF) {
				c.errorf("%s", errText(err))
				status = 1
			}
			break
		}
		if !o.has('v') && !first && k == perLine && bytes.Equal(block, prev) {
			if !starred {
				w.WriteString("*\n")
				starred = true
			}
		} else {
			starred = false
			clear(block[k:])
			for i, s := range specs {
				if i == 0 {
					w.WriteString(addr(off))
				} else {
					w.WriteString(strings.Repeat(" ", addrWidth[radix]))
				}
				fields := perLine / s.size
				blank := (perLine - k) / s.size
				pad := lineWidth - (s.digits+1)*fields
				remaining := pad
				for f := fields; f > blank; f-- {
					next := pad * (f - 1) / fields
					at := (fields - f) * s.size
					fmt.Fprintf(w, " %*s", remaining-next+s.digits, odDatum(s, block[at:at+s.size]))
					remaining = next
				}
				if s.z {
					w.WriteString(strings.Repeat(" ", blank*(s.digits+1)))
					w.WriteString("  >")
					for _, b := range block[:k] {
						if b >= 0x20 && b < 0x7f {
							w.WriteByte(b)
						} else {
							w.WriteByte('.')
						}
					}
					w.WriteString("<")
				}
				if _, err := w.WriteString("\n"); err != nil {
					return c.writeFailed(err)
				}
			}
		}
		copy(prev, block)
		first = false
		off += int64(k)
		if k < perLine {
			break
		}
	}
	if radix != "n" {
		w.WriteString(addr(off) + "\n")
	}
	return c.flush(w, status)
}
