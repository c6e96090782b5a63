package shell

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// trSet parses a tr operand into its sequence of bytes. repeat marks, in
// string2, the position of a [c*] (fill) entry; -1 if none.
type trSet struct {
	chars  []byte
	fill   int // index of [c*] in chars, -1 if none
	upper  []int
	lower  []int
	classy bool // holds a class other than upper and lower
}

var trClasses = map[string]func(b byte) bool{
	"alpha":  func(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' },
	"digit":  func(b byte) bool { return b >= '0' && b <= '9' },
	"upper":  func(b byte) bool { return b >= 'A' && b <= 'Z' },
	"lower":  func(b byte) bool { return b >= 'a' && b <= 'z' },
	"space":  func(b byte) bool { return b == ' ' || b >= '\t' && b <= '\r' },
	"blank":  func(b byte) bool { return b == ' ' || b == '\t' },
	"punct":  func(b byte) bool { return b > ' ' && b < 0x7f && !isAlnumByte(b) },
	"alnum":  isAlnumByte,
	"cntrl":  func(b byte) bool { return b < ' ' || b == 0x7f },
	"print":  func(b byte) bool { return b >= ' ' && b < 0x7f },
	"graph":  func(b byte) bool { return b > ' ' && b < 0x7f },
	"xdigit": func(b byte) bool { return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F' },
}

func isAlnumByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// trUnescape reads one possibly escaped byte at s[i:]; it returns the byte
// and the length read.
func trUnescape(s string, i int) (byte, int) {
	if s[i] != '\\' || i+1 >= len(s) {
		return s[i], 1
	}
	switch e := s[i+1]; e {
	case 'n':
		return '\n', 2
	case 't':
		return '\t', 2
	case 'r':
		return '\r', 2
	case 'a':
		return '\a', 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'v':
		return '\v', 2
	case '0', '1', '2', '3', '4', '5', '6', '7':
		n, j := 0, i+1
		for j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7' && n*8+int(s[j]-'0') < 256 {
			n = n*8 + int(s[j]-'0')
			j++
		}
		return byte(n), j - i
	default:
		return e, 2
	}
}

// parseTrSet expands ranges, classes, [=c=] and, in string2, [c*n].
func parseTrSet(s string, second bool) (trSet, string) {
	set := trSet{fill: -1}
	for i := 0; i < len(s); {
		if s[i] == '[' && i+1 < len(s) {
			if s[i+1] == ':' {
				if end := strings.Index(s[i+2:], ":]"); end >= 0 {
					name := s[i+2 : i+2+end]
					in, ok := trClasses[name]
					if !ok {
						return set, fmt.Sprintf("invalid character class '%s'", name)
					}
					switch name {
					case "upper":
						set.upper = append(set.upper, len(set.chars))
					case "lower":
						set.lower = append(set.lower, len(set.chars))
					default:
						set.classy = true
					}
					for b := 0; b < 256; b++ {
						if in(byte(b)) {
							set.chars = append(set.chars, byte(b))
						}
					}
					i += 2 + end + 2
					continue
				}
			}
			if s[i+1] == '=' && i+4 < len(s)+1 {
				if end := strings.Index(s[i+2:], "=]"); end >= 0 {
					inner := s[i+2 : i+2+end]
					b, n := trUnescape(inner+"x", 0)
					if n != len(inner) {
						return set, fmt.Sprintf("%s: equivalence class operand must be a single character", inner)
					}
					set.chars = append(set.chars, b)
					i += 2 + end + 2
					continue
				}
			}
			// [c*n] or [c*]
			if i+1 < len(s) {
				b, n := trUnescape(s, i+1)
				j := i + 1 + n
				if j < len(s) && s[j] == '*' {
					if end := strings.IndexByte(s[j:], ']'); end >= 0 {
						if !second {
							return set, "the [c*] repeat construct may not appear in string1"
						}
						count := s[j+1 : j+end]
						if count == "" {
							if set.fill >= 0 {
								return set, "only one [c*] repeat construct may appear in string2"
							}
							set.fill = len(set.chars)
							set.chars = append(set.chars, b)
						} else {
							base := 10
							if count[0] == '0' {
								base = 8
							}
							k, err := strconv.ParseInt(count, base, 32)
							if err != nil || k > 1<<20 {
								return set, fmt.Sprintf("invalid repeat count '%s' in [c*n] construct", count)
							}
							if k == 0 {
								if set.fill >= 0 {
									return set, "only one [c*] repeat construct may appear in string2"
								}
								set.fill = len(set.chars)
								set.chars = append(set.chars, b)
							}
							for ; k > 0; k-- {
								set.chars = append(set.chars, b)
							}
						}
						i = j + end + 1
						continue
					}
				}
			}
		}
		b, n := trUnescape(s, i)
		if i+n < len(s)-1 && s[i+n] == '-' {
			hi, m := trUnescape(s, i+n+1)
			if hi < b {
				return set, fmt.Sprintf("range-endpoints of '%s-%s' are in reverse collating sequence order", trShow(b), trShow(hi))
			}
			for x := int(b); x <= int(hi); x++ {
				set.chars = append(set.chars, byte(x))
			}
			i += n + 1 + m
			continue
		}
		set.chars = append(set.chars, b)
		i += n
	}
	return set, ""
}

func trShow(b byte) string {
	if b >= ' ' && b < 0x7f {
		return string(rune(b))
	}
	return fmt.Sprintf("\\%03o", b)
}

// cmdTr is GNU tr on bytes.
func cmdTr(c *call) int {
	o, sets, ok := c.getopt(c.args, "cCdst", "", map[string]byte{
		"complement": 'c', "delete": 'd', "squeeze-repeats": 's', "truncate-set1": 't',
	})
	if !ok {
		fmt.Fprintf(c.stderr, "Try 'tr --help' for more information.\n")
		return 1
	}
	del, squeeze, comp := o.has('d'), o.has('s'), o.has('c') || o.has('C')
	need, most := 2, 2
	switch {
	case del && !squeeze:
		need, most = 1, 1
	case squeeze && !del:
		need = 1
	}
	if len(sets) == 0 {
		return c.usageError(1, "missing operand")
	}
	if len(sets) < need {
		if del && squeeze {
			c.errorf("missing operand after '%s'", sets[0])
			fmt.Fprintln(c.stderr, "Two strings must be given when both deleting and squeezing repeats.")
		} else {
			c.errorf("missing operand after '%s'", sets[0])
			fmt.Fprintln(c.stderr, "Two strings must be given when translating.")
		}
		fmt.Fprintf(c.stderr, "Try 'tr --help' for more information.\n")
		return 1
	}
	if len(sets) > most {
		c.errorf("extra operand '%s'", sets[most])
		if del && !squeeze {
			fmt.Fprintln(c.stderr, "Only one string may be given when deleting without squeezing repeats.")
		}
		fmt.Fprintf(c.stderr, "Try 'tr --help' for more information.\n")
		return 1
	}
	s1, msg := parseTrSet(sets[0], false)
	if msg != "" {
		c.errorf("%s", msg)
		return 1
	}
	var in1 [256]bool
	for _, b := range s1.chars {
		in1[b] = true
	}
	if comp {
		for i := range in1 {
			in1[i] = !in1[i]
		}
		s1.chars = s1.chars[:0]
		for b := 0; b < 256; b++ {
			if in1[b] {
				s1.chars = append(s1.chars, byte(b))
			}
		}
	}
	var s2 trSet
	var in2 [256]bool
	translate := !del && len(sets) == 2
	if len(sets) == 2 {
		s2, msg = parseTrSet(sets[1], true)
		if msg != "" {
			c.errorf("%s", msg)
			return 1
		}
		for _, b := range s2.chars {
			in2[b] = true
		}
	}
	var table [256]byte
	for i := range table {
		table[i] = byte(i)
	}
	if translate {
		if s2.classy || (len(s2.upper) > 0 || len(s2.lower) > 0) && len(s1.upper)+len(s1.lower) == 0 {
			c.errorf("when translating, the only character classes that may appear in\nstring2 are 'upper' and 'lower'")
			return 1
		}
		if len(s2.chars) == 0 && len(s1.chars) > 0 && !o.has('t') {
			c.errorf("when not truncating set1, string2 must be non-empty")
			return 1
		}
		t := s2.chars
		if s2.fill >= 0 {
			extra := len(s1.chars) - len(t) + 1
			if extra < 1 {
				extra = 1
			}
			filled := append([]byte{}, t[:s2.fill]...)
			for k := 0; k < extra; k++ {
				filled = append(filled, t[s2.fill])
			}
			t = append(filled, t[s2.fill+1:]...)
		}
		src := s1.chars
		if o.has('t') && len(src) > len(t) {
			src = src[:len(t)]
		}
		for i, b := range src {
			to := t[len(t)-1]
			if i < len(t) {
				to = t[i]
			}
			table[b] = to
		}
	}
	// The set squeezing applies to: string2 when translating, else string1.
	squeezeSet := &in1
	if len(sets) == 2 {
		squeezeSet = &in2
	}
	w := c.out()
	buf, release := c.readBuf()
	defer release()
	out := make([]byte, 0, len(buf))
	last, haveLast := byte(0), false
	for !c.stopped() {
		n, rerr := c.stdin.Read(buf)
		out = out[:0]
		for _, b := range buf[:n] {
			if del && in1[b] {
				continue
			}
			b = table[b]
			if squeeze && squeezeSet[b] && haveLast && last == b {
				continue
			}
			last, haveLast = b, true
			out = append(out, b)
		}
		if _, err := w.Write(out); err != nil {
			return c.writeFailed(err)
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && !c.stopped() {
				c.errorf("read error: %s", errText(rerr))
				c.flush(w, 1)
				return 1
			}
			break
		}
	}
	return c.flush(w, 0)
}
