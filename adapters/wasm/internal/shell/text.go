package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
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

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
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

// numLine is a line held for grep's before-context.
type numLine struct {
	text []byte
	no   int64
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
		rerr, werr = copyOut(w, io.LimitReader(r, n.n))
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
		rerr, werr = copyOut(w, r)
		return werr, rerr
	}
	var ring []byte
	buf := make([]byte, 32<<10)
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

// wcCounts are the counts of one input of wc.
type wcCounts struct{ lines, words, chars, bytes, longest int64 }

func isSpaceByte(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

func cmdWc(c *call) int {
	o, files, ok := c.getopt(c.args, "lwcmL", "", map[string]byte{"lines": 'l', "words": 'w', "bytes": 'c', "chars": 'm', "max-line-length": 'L'})
	if !ok {
		return 1
	}
	show := []byte{}
	for _, f := range []byte("lwmcL") {
		if o.has(f) {
			show = append(show, f)
		}
	}
	if len(show) == 0 {
		show = []byte("lwc")
	}
	named := len(files) > 0
	if !named {
		files = []string{"-"}
	}
	type result struct {
		name string
		n    wcCounts
	}
	var results []result
	var total wcCounts
	status := 0
	anyStream := false
	for _, f := range files {
		if c.stopped() {
			break
		}
		r, done, err := c.openInput(f)
		if err != nil {
			c.fail(1, f, err)
			status = 1
			continue
		}
		if t, terr := c.target(f); f == "-" || terr != nil || t.dev != "" {
			anyStream = true
		}
		var n wcCounts
		var lw lineWidth
		inWord := false
		buf := make([]byte, 32<<10)
		for {
			k, err := r.Read(buf)
			if o.has('L') {
				lw.add(buf[:k])
			}
			for _, b := range buf[:k] {
				n.bytes++
				if b&0xC0 != 0x80 {
					n.chars++
				}
				if b == '\n' {
					n.lines++
				}
				if isSpaceByte(b) {
					inWord = false
				} else if !inWord {
					inWord = true
					n.words++
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					c.fail(1, f, err)
					status = 1
				}
				break
			}
		}
		done()
		n.longest = int64(lw.longest())
		total.longest = max(total.longest, n.longest)
		total.lines += n.lines
		total.words += n.words
		total.chars += n.chars
		total.bytes += n.bytes
		name := f
		if !named {
			name = ""
		}
		results = append(results, result{name, n})
	}
	if len(files) > 1 {
		// GNU prints the total of several operands even when some
		// failed.
		results = append(results, result{"total", total})
	}
	width := 1
	if len(show) > 1 || len(results) > 1 {
		width = len(strconv.FormatInt(total.bytes, 10))
		if anyStream {
			width = max(width, 7)
		}
	}
	w := c.out()
	for _, res := range results {
		var fields []string
		for _, f := range show {
			var v int64
			switch f {
			case 'l':
				v = res.n.lines
			case 'w':
				v = res.n.words
			case 'm':
				v = res.n.chars
			case 'c':
				v = res.n.bytes
			case 'L':
				v = res.n.longest
			}
			fields = append(fields, fmt.Sprintf("%*d", width, v))
		}
		line := strings.Join(fields, " ")
		if res.name != "" {
			line += " " + res.name
		}
		w.WriteString(line + "\n")
	}
	return c.flush(w, status)
}

// Pseudo short flags for grep's long-only options.
const (
	grepInclude    = 0x01
	grepExclude    = 0x02
	grepExcludeDir = 0x03
)

var grepLong = map[string]byte{
	"ignore-case": 'i', "invert-match": 'v', "line-number": 'n', "count": 'c',
	"files-with-matches": 'l', "files-without-match": 'L', "no-filename": 'h',
	"with-filename": 'H', "only-matching": 'o', "quiet": 'q', "silent": 'q',
	"no-messages": 's', "recursive": 'r', "dereference-recursive": 'R',
	"word-regexp": 'w', "line-regexp": 'x', "extended-regexp": 'E',
	"fixed-strings": 'F', "basic-regexp": 'G', "perl-regexp": 'P', "regexp": 'e', "file": 'f',
	"after-context": 'A', "before-context": 'B', "context": 'C', "max-count": 'm',
	"text": 'a', "null-data": 'z', "include": grepInclude, "exclude": grepExclude, "exclude-dir": grepExcludeDir,
	"color": 0, "colour": 0, "line-buffered": 0,
}

// grep is one run of grep.
type grep struct {
	c             *call
	o             opts
	re            *regex
	w             *bufio.Writer
	withName      bool
	before, after int
	maxCount      int64
	matched       bool // a line was selected somewhere
	failed        bool // an input could not be read
	quit          bool // -q found a line: stop
	werr          error
}

func cmdGrep(c *call) int {
	o, rest, ok := c.getopt(grepContextShorthand(c.args), "ivynclLhHoqsrRwxEFGPaIZUz", "efABCm\x01\x02\x03", grepLong)
	if !ok {
		fmt.Fprintf(c.stderr, "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n")
		return 2
	}
	var patterns []string
	for _, e := range o.vals['e'] {
		patterns = append(patterns, strings.Split(e, "\n")...)
	}
	for _, pf := range o.vals['f'] {
		r, done, err := c.openInput(pf)
		if err != nil {
			c.fail(2, pf, err)
			return 2
		}
		data, err := c.readAll(r)
		done()
		if err != nil {
			return c.fail(2, pf, err)
		}
		if len(data) > 0 { // an empty file has no pattern, not an empty one
			patterns = append(patterns, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")...)
		}
	}
	if len(o.vals['e']) == 0 && len(o.vals['f']) == 0 {
		if len(rest) == 0 {
			fmt.Fprintf(c.stderr, "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n")
			return 2
		}
		patterns = strings.Split(rest[0], "\n")
		rest = rest[1:]
	}
	re, err := compileRegex(patterns, reSyntax{
		ere:   o.has('E'),
		fixed: o.has('F'),
		perl:  o.has('P'),
		icase: o.has('i') || o.has('y'),
		word:  o.has('w'),
		line:  o.has('x'),
	}, c.reTimeout())
	if err != nil {
		c.errorf("%v", err)
		return 2
	}
	g := &grep{c: c, o: o, re: re, maxCount: -1}
	for _, spec := range []struct {
		f   byte
		dst *int
	}{{'C', &g.before}, {'C', &g.after}, {'A', &g.after}, {'B', &g.before}} {
		if v := o.last(spec.f, ""); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				c.errorf("%s: invalid context length argument", v)
				return 2
			}
			*spec.dst = n
		}
	}
	if v := o.last('m', ""); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			c.errorf("invalid max count")
			return 2
		}
		g.maxCount = n
	}
	recursive := o.has('r') || o.has('R')
	implicit := false
	if len(rest) == 0 {
		if recursive {
			rest, implicit = []string{"."}, true
		} else {
			rest = []string{"-"}
		}
	}
	g.withName = (len(rest) > 1 || recursive) && !o.has('h') || o.has('H')
	g.w = c.out()
	for _, f := range rest {
		if g.quit || c.ctx.Err() != nil {
			break
		}
		g.operand(f, implicit)
	}
	status := g.c.flush(g.w, 0)
	switch {
	case g.werr != nil:
		return c.writeFailed(g.werr)
	case status != 0:
		return status
	case o.has('q') && g.matched:
		return 0
	case g.failed:
		return 2
	case g.matched:
		return 0
	}
	return 1
}

// grepContextShorthand turns GNU's -NUM (context of NUM lines) into -C NUM.
func grepContextShorthand(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		valueOf := i > 0 && len(args[i-1]) == 2 && strings.IndexByte("efmABC", args[i-1][1]) >= 0 && args[i-1][0] == '-'
		if !valueOf && len(a) > 1 && a[0] == '-' && isDigits(a[1:]) {
			out = append(out, "-C", a[1:])
			continue
		}
		out = append(out, a)
	}
	return out
}

// operand greps a command-line operand (a file, a directory with -r, or -
// for stdin).
func (g *grep) operand(f string, implicit bool) {
	c := g.c
	if f == "-" {
		g.input(c.stdin, "(standard input)")
		return
	}
	t, err := c.target(f)
	if err == nil && t.dev != "" {
		r, done, _ := c.openInput(f)
		g.input(r, f)
		done()
		return
	}
	if err == nil {
		info, serr := c.sh.fs.stat(c.ctx, t.rel)
		switch {
		case serr != nil:
			err = serr
		case info.IsDir() && (g.o.has('r') || g.o.has('R')):
			shown := f
			if implicit {
				shown = ""
			}
			g.walk(t.rel, shown)
			return
		case info.IsDir():
			if !g.o.has('s') {
				c.errorf("%s: Is a directory", f)
			}
			g.failed = true
			return
		}
	}
	if err != nil {
		if !g.o.has('s') {
			c.fail(2, f, err)
		}
		g.failed = true
		return
	}
	g.file(t.rel, f)
}

func (g *grep) walk(rel, shown string) {
	infos, err := g.c.sh.fs.readDir(g.c.ctx, rel)
	if err != nil {
		if !g.o.has('s') {
			g.c.fail(2, shown, err)
		}
		g.failed = true
		return
	}
	for _, info := range infos {
		if g.quit || g.c.ctx.Err() != nil {
			return
		}
		name := info.Name()
		sub := name
		if shown != "" {
			sub = strings.TrimSuffix(shown, "/") + "/" + name
		}
		switch {
		case info.IsDir():
			if globAny(g.o.vals[grepExcludeDir], name) {
				continue
			}
			g.walk(joinRel(rel, name), sub)
		case info.Mode().IsRegular():
			g.file(joinRel(rel, name), sub)
		}
	}
}

func globAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func (g *grep) file(rel, shown string) {
	base := shown[strings.LastIndexByte(shown, '/')+1:]
	if inc := g.o.vals[grepInclude]; len(inc) > 0 && !globAny(inc, base) {
		return
	}
	if globAny(g.o.vals[grepExclude], base) {
		return
	}
	f, err := g.c.sh.fs.open(g.c.ctx, rel)
	if err != nil {
		if !g.o.has('s') {
			g.c.fail(2, shown, err)
		}
		g.failed = true
		return
	}
	defer f.Close()
	g.input(&ctxReader{ctx: g.c.ctx, r: f}, shown)
}

// input greps one input, shown as name.
func (g *grep) input(r io.Reader, name string) {
	o := g.o
	br := bufio.NewReaderSize(r, 64<<10)
	br.Peek(1) // the first read: binary data shows in it (as for GNU grep)
	head, _ := br.Peek(br.Buffered())
	eol := byte('\n')
	if o.has('z') {
		eol = 0
	}
	binary := !o.has('a') && !o.has('z') && bytes.IndexByte(head, 0) >= 0
	lr := &lineReader{r: br, max: g.c.sh.fs.max}
	next := lr.next
	if o.has('z') {
		next = func() ([]byte, bool, error) { return readRecord(br, 0, g.c.sh.fs.max) }
	}
	listOnly := o.has('l') || o.has('L')
	var (
		selected  int64
		lineNo    int64
		lastOut   int64 = -1 // number of the last line printed
		afterLeft int
		before    []numLine
	)
	prefix := func(no int64, sep byte) {
		if g.withName {
			g.w.WriteString(name)
			g.w.WriteByte(sep)
		}
		if o.has('n') {
			g.w.WriteString(strconv.FormatInt(no, 10))
			g.w.WriteByte(sep)
		}
	}
	emit := func(line []byte, no int64, sep byte) {
		if lastOut >= 0 && no > lastOut+1 && (g.before > 0 || g.after > 0) {
			g.w.WriteString("--\n")
		}
		prefix(no, sep)
		g.w.Write(line)
		if err := g.w.WriteByte(eol); err != nil && g.werr == nil {
			g.werr = err
		}
		lastOut = no
	}
	for {
		if g.werr != nil || g.c.ctx.Err() != nil {
			return
		}
		if g.maxCount >= 0 && selected >= g.maxCount && afterLeft == 0 {
			break
		}
		line, _, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if !o.has('s') {
				g.c.fail(2, name, err)
			}
			g.failed = true
			return
		}
		lineNo++
		found, err := g.re.match(line)
		if err != nil {
			g.c.errorf("%s: %v", name, err)
			g.failed = true
			return
		}
		isMatch := found != o.has('v')
		if isMatch && (g.maxCount < 0 || selected < g.maxCount) {
			selected++
			g.matched = true
			if o.has('q') {
				g.quit = true
				return
			}
			if listOnly {
				break
			}
			if o.has('c') {
				continue
			}
			if binary {
				// GNU grep 3.5 and later say so on stderr, after what
				// was printed before.
				if err := g.w.Flush(); err != nil && g.werr == nil {
					g.werr = err
				}
				fmt.Fprintf(g.c.stderr, "grep: %s: binary file matches\n", name)
				return
			}
			for _, b := range before {
				emit(b.text, b.no, '-')
			}
			before = before[:0]
			switch {
			case o.has('o') && o.has('v'):
				// GNU: the selected lines have no matching part to show.
			case o.has('o'):
				locs, err := g.re.findAll(line, -1)
				if err != nil {
					g.c.errorf("%s: %v", name, err)
					g.failed = true
					return
				}
				for _, loc := range locs {
					if loc[0] == loc[1] {
						continue
					}
					emit(line[loc[0]:loc[1]], lineNo, ':')
				}
			default:
				emit(line, lineNo, ':')
			}
			afterLeft = g.after
			continue
		}
		if o.has('c') || listOnly || binary {
			continue
		}
		if afterLeft > 0 {
			afterLeft--
			emit(line, lineNo, '-')
			continue
		}
		if g.before > 0 {
			if len(before) == g.before {
				before = before[1:]
			}
			before = append(before, numLine{text: slices.Clone(line), no: lineNo})
		}
	}
	switch {
	case o.has('l') && selected > 0, o.has('L') && selected == 0:
		g.w.WriteString(name + "\n")
	case o.has('c'):
		if g.withName {
			g.w.WriteString(name + ":")
		}
		g.w.WriteString(strconv.FormatInt(selected, 10) + "\n")
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

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

func cmdUniq(c *call) int {
	o, files, ok := c.getopt(c.args, "cdui", "fsw", map[string]byte{"count": 'c', "repeated": 'd', "unique": 'u', "ignore-case": 'i',
		"skip-fields": 'f', "skip-chars": 's', "check-chars": 'w'})
	if !ok {
		return 1
	}
	// -f N skips N fields (blanks then non-blanks), -s N then N bytes;
	// -w N compares at most N bytes of the rest.
	var skipFields, skipChars, checkChars int64 = 0, 0, -1
	for f, dst := range map[byte]*int64{'f': &skipFields, 's': &skipChars, 'w': &checkChars} {
		if v := o.vals[f]; len(v) > 0 {
			n, err := strconv.ParseInt(v[len(v)-1], 10, 64)
			if err != nil || n < 0 {
				what := map[byte]string{'f': "fields to skip", 's': "bytes to skip", 'w': "bytes to compare"}[f]
				c.errorf("%s: invalid number of %s", v[len(v)-1], what)
				return 1
			}
			*dst = n
		}
	}
	key := func(line []byte) []byte {
		i := 0
		for k := int64(0); k < skipFields && i < len(line); k++ {
			for i < len(line) && isBlank(line[i]) {
				i++
			}
			for i < len(line) && !isBlank(line[i]) {
				i++
			}
		}
		line = line[i+int(min(skipChars, int64(len(line)-i))):]
		if checkChars >= 0 && int64(len(line)) > checkChars {
			line = line[:checkChars]
		}
		return line
	}
	if len(files) > 2 {
		c.errorf("extra operand '%s'", files[2])
		return 1
	}
	in := "-"
	if len(files) > 0 {
		in = files[0]
	}
	r, done, err := c.openInput(in)
	if err != nil {
		return c.fail(1, in, err)
	}
	defer done()
	out := c.stdout
	var fw *fileWriter
	if len(files) == 2 {
		t, err := c.target(files[1])
		if err == nil {
			if t.dev != "" {
				err = errors.New("not a regular file")
			} else {
				fw, err = c.sh.createFile(c.ctx, t, false, nil)
			}
		}
		if err != nil {
			return c.fail(1, files[1], err)
		}
		out = fw
	}
	w := bufio.NewWriterSize(out, 32<<10)
	equal := bytes.Equal
	if o.has('i') {
		equal = bytes.EqualFold
	}
	var cur []byte
	var n int64
	status := 0
	put := func() {
		if n == 0 || o.has('d') && n < 2 || o.has('u') && n > 1 {
			return
		}
		if o.has('c') {
			fmt.Fprintf(w, "%7d ", n)
		}
		w.Write(cur)
		w.WriteByte('\n')
	}
	lr := c.lines(r)
	for {
		line, _, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			c.fail(1, in, err)
			status = 1
			break
		}
		if n > 0 && equal(key(line), key(cur)) {
			n++
			continue
		}
		put()
		cur, n = slices.Clone(line), 1
	}
	put()
	status = c.flush(w, status)
	if fw != nil {
		if err := fw.Close(); err != nil && status == 0 {
			return c.fail(1, files[1], err)
		}
	}
	return status
}
