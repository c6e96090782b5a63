package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func init() {
	commands["cut"] = cmdCut
	commands["tr"] = cmdTr
	commands["paste"] = cmdPaste
}

// usageError prints "name: message" and GNU's "Try" line; it returns
// status.
func (c *call) usageError(status int, format string, args ...any) int {
	c.errorf(format, args...)
	fmt.Fprintf(c.stderr, "Try '%s --help' for more information.\n", c.name)
	return status
}

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
	buf := make([]byte, 32<<10)
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

// sortKey is a -k key of sort (or, without -k, the whole line), as GNU
// sort's: fields and characters are 0-based here; eword < 0 is the end of
// the line, echar 0 the end of field eword.
type sortKey struct {
	sword, schar int
	eword, echar int
	skipStart    bool // b on POS1: skip blanks before counting schar
	skipEnd      bool // b on POS2
	numeric      bool // n
	general      bool // g
	human        bool // h
	month        bool // M
	version      bool // V
	reverse      bool // r
	fold         bool // f
	dictionary   bool // d
	printable    bool // i
}

// sortOrdering tells whether a key has an ordering option of its own, in
// which case the global ones do not apply to it.
func (k sortKey) ordering() bool {
	return k.skipStart || k.skipEnd || k.numeric || k.general || k.human || k.month ||
		k.version || k.reverse || k.fold || k.dictionary || k.printable
}

// setSortModifier applies one modifier letter to k; start tells whether it
// follows POS1 (for b).
func (k *sortKey) setModifier(m byte, start bool) bool {
	switch m {
	case 'b':
		if start {
			k.skipStart = true
		} else {
			k.skipEnd = true
		}
	case 'n':
		k.numeric = true
	case 'g':
		k.general = true
	case 'h':
		k.human = true
	case 'M':
		k.month = true
	case 'V':
		k.version = true
	case 'r':
		k.reverse = true
	case 'f':
		k.fold = true
	case 'd':
		k.dictionary = true
	case 'i':
		k.printable = true
	default:
		return false
	}
	return true
}

// parseSortKey parses -k POS1[,POS2], POS being F[.C][OPTS]. The error is
// GNU's message.
func parseSortKey(spec string) (sortKey, string) {
	k := sortKey{eword: -1}
	bad := func(why string) (sortKey, string) {
		return k, fmt.Sprintf("%s: invalid field specification '%s'", why, spec)
	}
	count := func(s string, what string) (int, string, string) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, s, fmt.Sprintf("invalid number %s: invalid count at start of '%s'", what, s)
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil || n > 1<<30 {
			n = 1 << 30 // as GNU, a huge count is "as far as possible"
		}
		return n, s[i:], ""
	}
	n, rest, msg := count(spec, "at field start")
	if msg != "" {
		return k, msg
	}
	if n == 0 {
		return bad("field number is zero")
	}
	k.sword = n - 1
	if strings.HasPrefix(rest, ".") {
		if n, rest, msg = count(rest[1:], "after '.'"); msg != "" {
			return k, msg
		}
		if n == 0 {
			return bad("character offset is zero")
		}
		k.schar = n - 1
	}
	for len(rest) > 0 && rest[0] != ',' {
		if !k.setModifier(rest[0], true) {
			return bad("stray character in field spec")
		}
		rest = rest[1:]
	}
	if rest == "" {
		return k, ""
	}
	if n, rest, msg = count(rest[1:], "after ','"); msg != "" {
		return k, msg
	}
	if n == 0 {
		return bad("field number is zero")
	}
	k.eword = n - 1
	if strings.HasPrefix(rest, ".") {
		if n, rest, msg = count(rest[1:], "after '.'"); msg != "" {
			return k, msg
		}
		k.echar = n
	}
	for len(rest) > 0 {
		if !k.setModifier(rest[0], false) {
			return bad("stray character in field spec")
		}
		rest = rest[1:]
	}
	return k, ""
}

func isBlankByte(b byte) bool { return b == ' ' || b == '\t' }

// keySpan returns the part of line key k covers, by GNU's rules: without
// -t a field is its leading blanks and the non-blanks after them.
func keySpan(line []byte, k *sortKey, tab int) []byte {
	lim := len(line)
	beg := 0
	for w := k.sword; beg < lim && w > 0; w-- {
		if tab >= 0 {
			for beg < lim && int(line[beg]) != tab {
				beg++
			}
			if beg < lim {
				beg++
			}
		} else {
			for beg < lim && isBlankByte(line[beg]) {
				beg++
			}
			for beg < lim && !isBlankByte(line[beg]) {
				beg++
			}
		}
	}
	if k.skipStart {
		for beg < lim && isBlankByte(line[beg]) {
			beg++
		}
	}
	beg = min(lim, beg+k.schar)
	end := lim
	if k.eword >= 0 {
		end = 0
		eword, echar := k.eword, k.echar
		if echar == 0 {
			eword++
		}
		for ; end < lim && eword > 0; eword-- {
			if tab >= 0 {
				for end < lim && int(line[end]) != tab {
					end++
				}
				if end < lim && (eword > 1 || echar != 0) {
					end++
				}
			} else {
				for end < lim && isBlankByte(line[end]) {
					end++
				}
				for end < lim && !isBlankByte(line[end]) {
					end++
				}
			}
		}
		if echar != 0 {
			if k.skipEnd {
				for end < lim && isBlankByte(line[end]) {
					end++
				}
			}
			end = min(lim, end+echar)
		}
	}
	if end < beg {
		end = beg
	}
	return line[beg:end]
}

// numParts splits the number a -n/-h key starts with (after blanks): its
// sign, integer digits without leading zeros, fraction digits without
// trailing zeros, and the rest.
func numParts(s []byte) (neg bool, intPart, frac, rest []byte) {
	i := 0
	for i < len(s) && isBlankByte(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	st := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart = s[st:i]
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[fs:i]
	}
	if len(intPart) == 0 && len(frac) == 0 && neg {
		// "-" alone is not a number; neither is "-.".
		return false, nil, nil, s[i:]
	}
	intPart = bytes.TrimLeft(intPart, "0")
	frac = bytes.TrimRight(frac, "0")
	if len(intPart) == 0 && len(frac) == 0 {
		neg = false // -0 is 0
	}
	return neg, intPart, frac, s[i:]
}

// compareMagnitude compares two non-negative decimal numbers.
func compareMagnitude(ai, af, bi, bf []byte) int {
	if len(ai) != len(bi) {
		return cmpInt(len(ai), len(bi))
	}
	if r := bytes.Compare(ai, bi); r != 0 {
		return r
	}
	return bytes.Compare(af, bf)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareNumeric(a, b []byte) int {
	an, ai, af, _ := numParts(a)
	bn, bi, bf, _ := numParts(b)
	switch {
	case an && !bn:
		return -1
	case !an && bn:
		return 1
	}
	r := compareMagnitude(ai, af, bi, bf)
	if an {
		r = -r
	}
	return r
}

const humanSuffixes = "KMGTPEZYRQ"

func compareHuman(a, b []byte) int {
	an, ai, af, ar := numParts(a)
	bn, bi, bf, br := numParts(b)
	sign := func(neg bool, i, f []byte) int {
		switch {
		case len(i) == 0 && len(f) == 0:
			return 0
		case neg:
			return -1
		}
		return 1
	}
	as, bs := sign(an, ai, af), sign(bn, bi, bf)
	if as != bs {
		return cmpInt(as, bs)
	}
	suffix := func(rest []byte) int {
		if len(rest) == 0 {
			return 0
		}
		if rest[0] == 'k' {
			return 1
		}
		return strings.IndexByte(humanSuffixes, rest[0]) + 1
	}
	r := cmpInt(suffix(ar), suffix(br))
	if r == 0 {
		r = compareMagnitude(ai, af, bi, bf)
	}
	if as < 0 {
		r = -r
	}
	return r
}

var generalNumber = regexp.MustCompile(`^[ \t]*[-+]?(?:(?i:inf(?:inity)?|nan)|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|0[xX][0-9a-fA-F]+)`)

// compareGeneral is -g: numbers as strtod reads them; what is not a number
// sorts first, then NaN, then the numbers.
func compareGeneral(a, b []byte) int {
	rank := func(s []byte) (int, float64) {
		m := generalNumber.Find(s)
		if m == nil {
			return 0, 0
		}
		f, err := strconv.ParseFloat(strings.TrimLeft(string(m), " \t"), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, 0
		}
		if f != f {
			return 1, 0
		}
		return 2, f
	}
	ar, af := rank(a)
	br, bf := rank(b)
	if ar != br {
		return cmpInt(ar, br)
	}
	switch {
	case af < bf:
		return -1
	case af > bf:
		return 1
	}
	return 0
}

func monthIndex(s []byte) int {
	s = bytes.TrimLeft(s, " \t")
	if len(s) < 3 {
		return 0
	}
	i := strings.Index("JANFEBMARAPRMAYJUNJULAUGSEPOCTNOVDEC", strings.ToUpper(string(s[:3])))
	if i < 0 || i%3 != 0 {
		return 0
	}
	return i/3 + 1
}

// compareVersion is -V, the ordering of filevercmp / Debian versions:
// digits compare as numbers, '~' sorts before everything, letters before
// other characters.
func compareVersion(a, b []byte) int {
	order := func(c byte, ok bool) int {
		switch {
		case !ok:
			return 0
		case c >= '0' && c <= '9':
			return 0
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return int(c)
		case c == '~':
			return -1
		}
		return int(c) + 256
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		for i < len(a) && !(a[i] >= '0' && a[i] <= '9') || j < len(b) && !(b[j] >= '0' && b[j] <= '9') {
			var ca, cb byte
			oka, okb := i < len(a) && !(a[i] >= '0' && a[i] <= '9'), j < len(b) && !(b[j] >= '0' && b[j] <= '9')
			if oka {
				ca = a[i]
			}
			if okb {
				cb = b[j]
			}
			if r := cmpInt(order(ca, oka), order(cb, okb)); r != 0 {
				return r
			}
			if oka {
				i++
			}
			if okb {
				j++
			}
		}
		si := i
		for i < len(a) && a[i] == '0' {
			i++
		}
		ni := i
		for i < len(a) && a[i] >= '0' && a[i] <= '9' {
			i++
		}
		sj := j
		for j < len(b) && b[j] == '0' {
			j++
		}
		nj := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		_, _ = si, sj
		if r := cmpInt(i-ni, j-nj); r != 0 {
			return r
		}
		if r := bytes.Compare(a[ni:i], b[nj:j]); r != 0 {
			return r
		}
	}
	return 0
}

// compareText compares with -f, -d and -i applied.
func compareText(a, b []byte, k *sortKey) int {
	if !k.fold && !k.dictionary && !k.printable {
		return bytes.Compare(a, b)
	}
	skip := func(c byte) bool {
		return k.dictionary && !(isAlnumByte(c) || isBlankByte(c)) || k.printable && !(c >= ' ' && c < 0x7f)
	}
	i, j := 0, 0
	for {
		for i < len(a) && skip(a[i]) {
			i++
		}
		for j < len(b) && skip(b[j]) {
			j++
		}
		if i >= len(a) || j >= len(b) {
			return cmpInt(len(a)-i, len(b)-j) // the shorter one first
		}
		ca, cb := a[i], b[j]
		if k.fold {
			if ca >= 'a' && ca <= 'z' {
				ca -= 'a' - 'A'
			}
			if cb >= 'a' && cb <= 'z' {
				cb -= 'a' - 'A'
			}
		}
		if ca != cb {
			return cmpInt(int(ca), int(cb))
		}
		i++
		j++
	}
}

// compareSortKey compares the spans a and b of key k.
func compareSortKey(a, b []byte, k *sortKey) int {
	var r int
	switch {
	case k.numeric:
		r = compareNumeric(a, b)
	case k.human:
		r = compareHuman(a, b)
	case k.general:
		r = compareGeneral(a, b)
	case k.month:
		r = cmpInt(monthIndex(a), monthIndex(b))
	case k.version:
		r = compareVersion(a, b)
	default:
		r = compareText(a, b, k)
	}
	if k.reverse {
		r = -r
	}
	return r
}

// cmdSort is GNU sort in the C.UTF-8 locale: bytes compare as unsigned
// values, and lines equal by every key compare whole (unless -s or -u).
// The whole input is held in memory, at most MaxFileBytes of it.
func cmdSort(c *call) int {
	o, files, ok := c.getopt(c.args, "bcCdfghiMmnrsuVz", "kot", map[string]byte{
		"ignore-leading-blanks": 'b', "check": 'c', "dictionary-order": 'd', "ignore-case": 'f',
		"general-numeric-sort": 'g', "human-numeric-sort": 'h', "ignore-nonprinting": 'i',
		"month-sort": 'M', "merge": 'm', "numeric-sort": 'n', "reverse": 'r', "stable": 's',
		"unique": 'u', "version-sort": 'V', "zero-terminated": 'z', "key": 'k', "output": 'o',
		"field-separator": 't',
	})
	if !ok {
		fmt.Fprintf(c.stderr, "Try 'sort --help' for more information.\n")
		return 2
	}
	var global sortKey
	for _, f := range []byte("bdfghiMnrV") {
		if o.has(f) {
			global.setModifier(f, true)
			if f == 'b' {
				global.skipEnd = true
			}
		}
	}
	global.eword = -1
	if n := boolCount(global.numeric, global.general, global.human, global.month, global.version); n > 1 {
		c.errorf("options '-%s' are incompatible", sortOptString(global))
		return 2
	}
	tab := -1
	if v, ok := o.vals['t']; ok {
		t := v[len(v)-1]
		switch {
		case t == "":
			c.errorf("empty tab")
			return 2
		case t == `\0`:
			tab = 0
		case len(t) == 1:
			tab = int(t[0])
		default:
			c.errorf("multi-character tab '%s'", t)
			return 2
		}
	}
	var keys []sortKey
	for _, spec := range o.vals['k'] {
		k, msg := parseSortKey(spec)
		if msg != "" {
			c.errorf("%s", msg)
			return 2
		}
		if !k.ordering() {
			sw, sc, ew, ec := k.sword, k.schar, k.eword, k.echar
			k = global
			k.sword, k.schar, k.eword, k.echar = sw, sc, ew, ec
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		keys = []sortKey{global}
	}
	check := o.has('c') || o.has('C')
	if len(files) == 0 {
		files = []string{"-"}
	}
	if check && len(files) > 1 {
		c.errorf("extra operand '%s' not allowed with -%c", files[1], map[bool]byte{true: 'c', false: 'C'}[o.has('c')])
		return 2
	}
	eol := byte('\n')
	if o.has('z') {
		eol = 0
	}
	var data []byte
	for _, f := range files {
		if c.stopped() {
			return 2
		}
		r, done, err := c.openInput(f)
		if err != nil {
			c.errorf("cannot read: %s: %s", f, errText(err))
			return 2
		}
		d, err := c.readAll(r)
		done()
		if err == nil && c.maxBytes() > 0 && int64(len(data)+len(d)) > c.maxBytes() {
			err = fmt.Errorf("input over %d bytes: %w", c.maxBytes(), errInputTooLarge)
		}
		if err != nil {
			c.errorf("cannot read: %s: %s", f, errText(err))
			return 2
		}
		data = append(data, d...)
		if len(d) > 0 && d[len(d)-1] != eol {
			data = append(data, eol)
		}
	}
	var lines [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, eol)
		lines = append(lines, data[:i])
		data = data[i+1:]
	}
	type rec struct {
		line []byte
		keys [][]byte
	}
	recs := make([]rec, len(lines))
	for i, l := range lines {
		recs[i].line = l
		recs[i].keys = make([][]byte, len(keys))
		for j := range keys {
			recs[i].keys[j] = keySpan(l, &keys[j], tab)
		}
	}
	stopped := false
	calls := 0
	cmpKeys := func(a, b *rec) int {
		if calls++; calls&0xfff == 0 && c.stopped() {
			stopped = true
		}
		if stopped {
			return 0
		}
		for j := range keys {
			if r := compareSortKey(a.keys[j], b.keys[j], &keys[j]); r != 0 {
				return r
			}
		}
		return 0
	}
	lastResort := !o.has('s') && !o.has('u')
	cmpRecs := func(a, b rec) int {
		if r := cmpKeys(&a, &b); r != 0 || !lastResort {
			return r
		}
		r := bytes.Compare(a.line, b.line)
		if global.reverse {
			r = -r
		}
		return r
	}
	if check {
		for i := 1; i < len(recs); i++ {
			r := cmpRecs(recs[i-1], recs[i])
			if r > 0 || o.has('u') && r == 0 {
				if o.has('c') {
					c.errorf("%s:%d: disorder: %s", files[0], i+1, recs[i].line)
				}
				return 1
			}
		}
		return 0
	}
	slices.SortStableFunc(recs, cmpRecs)
	if stopped || c.stopped() {
		return 2
	}
	if o.has('u') {
		recs = slices.CompactFunc(recs, func(a, b rec) bool { return cmpKeys(&a, &b) == 0 })
	}
	var buf bytes.Buffer
	outFile, toFile := "", false
	if v, ok := o.vals['o']; ok {
		outFile, toFile = v[len(v)-1], true
	}
	var w *bufio.Writer
	if toFile {
		w = bufio.NewWriter(&buf)
	} else {
		w = c.out()
	}
	for _, r := range recs {
		w.Write(r.line)
		if err := w.WriteByte(eol); err != nil {
			return c.writeFailed(err)
		}
	}
	if !toFile {
		return c.flush(w, 0)
	}
	w.Flush()
	if err := c.writeFile(outFile, &buf); err != nil {
		c.errorf("open failed: %s: %s", outFile, errText(err))
		return 2
	}
	return 0
}

func boolCount(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// sortOptString lists the incompatible ordering options of k as GNU does.
func sortOptString(k sortKey) string {
	var s []byte
	for _, p := range []struct {
		on bool
		f  byte
	}{{k.general, 'g'}, {k.human, 'h'}, {k.month, 'M'}, {k.numeric, 'n'}, {k.version, 'V'}} {
		if p.on {
			s = append(s, p.f)
		}
	}
	return string(s)
}
