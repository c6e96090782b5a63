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

// numLine is a line held for grep's before-context.
type numLine struct {
	text []byte
	no   int64
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
