package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

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

// ordering tells whether a key has an ordering option of its own, in
// which case the global ones do not apply to it.
func (k sortKey) ordering() bool {
	return k.skipStart || k.skipEnd || k.numeric || k.general || k.human || k.month ||
		k.version || k.reverse || k.fold || k.dictionary || k.printable
}

// setModifier applies one modifier letter to k; start tells whether it
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
