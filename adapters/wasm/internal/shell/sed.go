package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// sed is GNU sed's language over the workspace: the script is parsed into
// a flat list of commands (a block's "{" knows where its "}" is), then run
// over the input one cycle per line. Regular expressions are the POSIX ones
// of regex.go; the e command and s///e, which run a shell, are refused.
// Pattern and hold space are bounded by MaxFileBytes, and the command loop
// checks the deadline, so that "sed ':a;ba'" ends with the call.

var sedLong = map[string]byte{
	"quiet": 'n', "silent": 'n', "expression": 'e', "file": 'f',
	"regexp-extended": 'E', "in-place": 'i', "separate": 's', "null-data": 'z',
	"line-length": 'l', "posix": 0, "unbuffered": 'u', "sandbox": 0,
	"follow-symlinks": 0, "debug": 0,
}

// sedError is a script error: GNU prints it with where it was found.
type sedError struct {
	pos int // offset in the script just past the offending character; -1 for none
	msg string
}

func (e *sedError) Error() string { return e.msg }

// sedAddr is one address.
type sedAddr struct {
	kind  byte // 'n' line, '$' last, '/' regex, '~' first~step, '0' line 0; for addr2 also '+' and 't' (~N)
	n     int64
	step  int64
	re    *regex
	empty bool // "//": the last regex used
}

// sedCmd is one command.
type sedCmd struct {
	a1, a2 *sedAddr
	neg    bool
	name   byte

	// range state
	active bool
	end    int64

	// s
	re      *regex
	reEmpty bool
	repl    []sedPiece
	global  bool
	nth     int
	print   int
	wfile   string
	text    string // a, i, c: the text with its newline; r, R, w, W: the file
	label   string // b, t, T, :
	jump    int    // b, t, T: index to go to; {: index of the matching }
	intArg  int    // q, Q: exit status; l: line length (-1: the default)
	ySrc    []rune
	yDst    []rune
}

// sedPiece is part of a replacement: a literal, a group (& is 0), or a case
// conversion (\U \L \u \l \E).
type sedPiece struct {
	lit   string
	group int // -1 for a literal or a case conversion
	conv  byte
}

// sedParser reads a script.
type sedParser struct {
	s       string
	i       int
	ere     bool
	timeout time.Duration
	lastRe  *regex // the regex compiled last: "//" before any is run
	cmds    []*sedCmd
	open    []int // indexes of the open {
}

func (p *sedParser) errAt(pos int, format string, args ...any) error {
	return &sedError{pos: pos, msg: fmt.Sprintf(format, args...)}
}

func (p *sedParser) err(format string, args ...any) error {
	return p.errAt(p.i, format, args...)
}

func (p *sedParser) eof() bool { return p.i >= len(p.s) }

func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sedParser) skipSpace() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// parseSed parses a whole script.
func parseSed(script string, ere bool, timeout time.Duration) ([]*sedCmd, error) {
	p := &sedParser{s: script, ere: ere, timeout: timeout}
	for {
		for !p.eof() && strings.IndexByte(" \t\n;", p.s[p.i]) >= 0 {
			p.i++
		}
		if p.eof() {
			break
		}
		if err := p.command(); err != nil {
			return nil, err
		}
	}
	if len(p.open) > 0 {
		return nil, &sedError{pos: 0, msg: "unmatched `{'"}
	}
	labels := map[string]int{}
	for i, c := range p.cmds {
		if c.name == ':' {
			if _, dup := labels[c.label]; dup {
				return nil, &sedError{pos: -1, msg: fmt.Sprintf("duplicate label `%s'", c.label)}
			}
			labels[c.label] = i
		}
	}
	for _, c := range p.cmds {
		if c.name == 'b' || c.name == 't' || c.name == 'T' {
			if c.label == "" {
				c.jump = len(p.cmds)
				continue
			}
			j, ok := labels[c.label]
			if !ok {
				return nil, &sedError{pos: -2, msg: fmt.Sprintf("can't find label for jump to `%s'", c.label)}
			}
			c.jump = j
		}
	}
	return p.cmds, nil
}

func (p *sedParser) command() error {
	c := &sedCmd{intArg: -1}
	if p.peek() == '#' {
		for !p.eof() && p.s[p.i] != '\n' {
			p.i++
		}
		return nil
	}
	var err error
	if c.a1, err = p.address(); err != nil {
		return err
	}
	if c.a1 != nil {
		p.skipSpace()
		if p.peek() == ',' {
			p.i++
			p.skipSpace()
			if c.a2, err = p.address2(); err != nil {
				return err
			}
			if c.a2 == nil {
				return p.errAt(p.i+1, "unexpected `,'")
			}
		}
	}
	p.skipSpace()
	if p.peek() == '!' {
		c.neg = true
		p.i++
		p.skipSpace()
		if p.peek() == '!' {
			return p.errAt(p.i+1, "multiple `!'s")
		}
	}
	if p.eof() {
		return p.err("missing command")
	}
	c.name = p.s[p.i]
	p.i++
	if c.a1 != nil && c.a1.kind == '0' && (c.a2 == nil || c.a2.kind != '/') {
		return p.err("invalid usage of line address 0")
	}
	addrs := 0
	if c.a1 != nil {
		addrs = 1
		if c.a2 != nil {
			addrs = 2
		}
	}
	switch c.name {
	case '{':
		p.open = append(p.open, len(p.cmds))
		p.cmds = append(p.cmds, c)
		return nil
	case '}':
		if addrs > 0 || c.neg {
			return p.err("} doesn't want any addresses")
		}
		if len(p.open) == 0 {
			return p.err("unexpected `}'")
		}
		p.cmds[p.open[len(p.open)-1]].jump = len(p.cmds) + 1
		p.open = p.open[:len(p.open)-1]
		p.cmds = append(p.cmds, c)
		return p.end()
	case '#':
		return p.err("comments don't accept any addresses")
	case ':':
		if addrs > 0 {
			return p.err(": doesn't want any addresses")
		}
		p.skipSpace()
		c.label = p.label(true)
		if c.label == "" {
			return p.err("\":\" lacks a label")
		}
	case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		if err := p.end(); err != nil {
			return err
		}
	case 'q', 'Q', 'l', 'L':
		if (c.name == 'q' || c.name == 'Q') && addrs > 1 {
			return p.err("command only uses one address")
		}
		p.skipSpace()
		if n, ok := p.number(); ok {
			c.intArg = int(min(n, 1<<30))
		}
		if err := p.end(); err != nil {
			return err
		}
	case 'b', 't', 'T':
		p.skipSpace()
		c.label = p.label(false)
		if err := p.end(); err != nil {
			return err
		}
	case 'a', 'i', 'c':
		text, err := p.text()
		if err != nil {
			return err
		}
		c.text = text
	case 'r', 'R', 'w', 'W':
		p.skipSpace()
		name := p.restOfLine()
		if name == "" {
			return p.err("missing filename in r/R/w/W commands")
		}
		c.text = name
	case 's':
		if err := p.subst(c); err != nil {
			return err
		}
	case 'y':
		if err := p.translit(c); err != nil {
			return err
		}
	case 'e':
		return p.err("the e command is not supported (it runs a shell)")
	default:
		return p.err("unknown command: `%c'", c.name)
	}
	p.cmds = append(p.cmds, c)
	return nil
}

// end checks what follows a command: spaces, then ; } # or a newline.
func (p *sedParser) end() error {
	p.skipSpace()
	if p.eof() {
		return nil
	}
	switch p.s[p.i] {
	case ';', '\n':
		p.i++
		return nil
	case '}', '#':
		return nil
	}
	return p.errAt(p.i+1, "extra characters after command")
}

func (p *sedParser) number() (int64, bool) {
	j := p.i
	for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if j == p.i {
		return 0, false
	}
	n, err := strconv.ParseInt(p.s[j:p.i], 10, 64)
	if err != nil {
		n = 1<<62 - 1
	}
	return n, true
}

// label reads a label: up to a newline or ";" (and, for b, t and T,
// whitespace).
func (p *sedParser) label(colon bool) string {
	j := p.i
	for !p.eof() && p.s[p.i] != '\n' && p.s[p.i] != ';' {
		if !colon && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '}') {
			break
		}
		p.i++
	}
	l := p.s[j:p.i]
	if colon {
		l = strings.TrimRight(l, " \t")
		if !p.eof() && p.s[p.i] == ';' {
			p.i++
		}
	}
	return l
}

func (p *sedParser) restOfLine() string {
	j := p.i
	for !p.eof() && p.s[p.i] != '\n' {
		p.i++
	}
	s := p.s[j:p.i]
	if !p.eof() {
		p.i++
	}
	return s
}

// text reads the text of a, i or c, which ends with a newline.
func (p *sedParser) text() (string, error) {
	p.skipSpace()
	if p.eof() {
		return "", p.err("expected \\ after `a', `c' or `i'")
	}
	if p.s[p.i] == '\\' {
		// "a\" then the text on the next line, or (GNU) on the same line
		// with its leading blanks kept.
		p.i++
		j := p.i
		p.skipSpace()
		if !p.eof() && p.s[p.i] == '\n' {
			p.i++
		} else {
			p.i = j
		}
	}
	var b strings.Builder
	if p.eof() {
		return "", nil // "a\" at the very end: GNU adds nothing
	}
	for !p.eof() {
		ch := p.s[p.i]
		p.i++
		if ch == '\n' {
			break
		}
		if ch == '\\' {
			if p.eof() {
				break
			}
			ch = p.s[p.i]
			p.i++
		}
		b.WriteByte(ch)
	}
	return b.String() + "\n", nil
}

// delimited reads up to the unescaped delimiter d; \d becomes d, a newline
// is an error (unterminated). Other escapes stay for the regex translator,
// except that "\n" stays as it is too.
func (p *sedParser) delimited(d byte, regex bool) (string, bool) {
	var b strings.Builder
	for !p.eof() {
		ch := p.s[p.i]
		p.i++
		switch {
		case ch == d:
			return b.String(), true
		case ch == '[' && regex:
			end := bracketEnd(p.s, p.i-1)
			if end < 0 {
				return "", false
			}
			b.WriteString(p.s[p.i-1 : end])
			p.i = end
		case ch == '\\' && !p.eof():
			n := p.s[p.i]
			p.i++
			switch {
			case n == d && d != '\n':
				b.WriteByte(d)
			case n == '\n' && regex:
				b.WriteString(`\n`)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case ch == '\n' && regex:
			return "", false
		default:
			b.WriteByte(ch)
		}
	}
	return "", false
}

// bracketEnd returns the offset just past the bracket expression that
// starts at s[i] ("["), or -1 if it does not end on its line.
func bracketEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '^' {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for j < len(s) && s[j] != '\n' {
		switch {
		case s[j] == ']':
			return j + 1
		case s[j] == '[' && j+1 < len(s) && strings.IndexByte(":.=", s[j+1]) >= 0:
			if k := strings.Index(s[j+2:], string(s[j+1])+"]"); k >= 0 {
				j += k + 4
				continue
			}
		}
		j++
	}
	return -1
}

// compile compiles a regex of the script; "" is the last regex used, and
// it is an error before any.
func (p *sedParser) compile(pat string, icase, multi bool) (*regex, bool, error) {
	if pat == "" {
		if p.lastRe == nil {
			return nil, false, &sedError{pos: 0, msg: "no previous regular expression"}
		}
		return p.lastRe, true, nil
	}
	re, err := compileRegex([]string{pat}, reSyntax{ere: p.ere, sed: true, icase: icase, multiline: multi}, p.timeout)
	if err != nil {
		return nil, false, p.err("%v", err)
	}
	p.lastRe = re
	return re, false, nil
}

func (p *sedParser) address() (*sedAddr, error) {
	ch := p.peek()
	switch {
	case ch >= '0' && ch <= '9':
		n, _ := p.number()
		if p.peek() == '~' {
			p.i++
			step, _ := p.number()
			return &sedAddr{kind: '~', n: n, step: step}, nil
		}
		if n == 0 {
			return &sedAddr{kind: '0'}, nil
		}
		return &sedAddr{kind: 'n', n: n}, nil
	case ch == '$':
		p.i++
		return &sedAddr{kind: '$'}, nil
	case ch == '/' || ch == '\\':
		p.i++
		d := byte('/')
		if ch == '\\' {
			if p.eof() {
				return nil, p.err("unexpected end of script")
			}
			d = p.s[p.i]
			p.i++
		}
		pat, ok := p.delimited(d, true)
		if !ok {
			return nil, p.err("unterminated address regex")
		}
		icase, multi := false, false
		for !p.eof() && (p.s[p.i] == 'I' || p.s[p.i] == 'M') {
			if p.s[p.i] == 'I' {
				icase = true
			} else {
				multi = true
			}
			p.i++
		}
		re, empty, err := p.compile(pat, icase, multi)
		if err != nil {
			return nil, err
		}
		return &sedAddr{kind: '/', re: re, empty: empty}, nil
	}
	return nil, nil
}

func (p *sedParser) address2() (*sedAddr, error) {
	switch p.peek() {
	case '+', '~':
		k := p.s[p.i]
		p.i++
		n, ok := p.number()
		if !ok {
			return nil, p.errAt(p.i+1, "expected newer version of sed")
		}
		if k == '~' {
			k = 't'
		}
		return &sedAddr{kind: k, n: n}, nil
	}
	a, err := p.address()
	if err != nil || a == nil {
		return a, err
	}
	switch a.kind {
	case '~': // "2,3~4" is line 3 as an end
		a.kind = 'n'
	case '0':
		return nil, p.err("invalid usage of line address 0")
	}
	return a, nil
}

// subst parses s/regex/replacement/flags.
func (p *sedParser) subst(c *sedCmd) error {
	if p.eof() || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
		return p.err("unterminated `s' command")
	}
	d := p.s[p.i]
	p.i++
	pat, ok := p.delimited(d, true)
	if !ok {
		return p.errAt(len(p.s), "unterminated `s' command")
	}
	repl, ok := p.replacement(d)
	if !ok {
		return p.errAt(len(p.s), "unterminated `s' command")
	}
	icase, multi := false, false
flags:
	for !p.eof() {
		ch := p.s[p.i]
		p.i++
		switch {
		case ch == 'g':
			if c.global {
				return p.err("multiple `g' options to `s' command")
			}
			c.global = true
		case ch == 'p':
			if c.print > 0 {
				return p.err("multiple `p' options to `s' command")
			}
			c.print++
		case ch == 'i' || ch == 'I':
			icase = true
		case ch == 'm' || ch == 'M':
			multi = true
		case ch == 'e':
			return p.err("the e flag is not supported (it runs a shell)")
		case ch >= '0' && ch <= '9':
			if c.nth > 0 {
				return p.err("multiple number options to `s' command")
			}
			p.i--
			n, _ := p.number()
			if n == 0 {
				return p.err("number option to `s' command may not be zero")
			}
			c.nth = int(min(n, 1<<30))
		case ch == 'w':
			p.skipSpace()
			c.wfile = p.restOfLine()
			if c.wfile == "" {
				return p.err("missing filename in r/R/w/W commands")
			}
			break flags
		case ch == ';' || ch == '\n':
			break flags
		case ch == '}' || ch == '#':
			p.i--
			break flags
		case ch == ' ' || ch == '\t':
			if err := p.end(); err != nil {
				return err
			}
			break flags
		default:
			return p.err("unknown option to `s'")
		}
	}
	re, empty, err := p.compile(pat, icase, multi)
	if err != nil {
		return err
	}
	c.re, c.reEmpty = re, empty
	c.repl = repl
	if re != nil {
		for _, pc := range repl {
			if pc.group > re.groups {
				return p.err("invalid reference \\%d on `s' command's RHS", pc.group)
			}
		}
	}
	return nil
}

// replacement parses the right-hand side of s, up to the delimiter d.
func (p *sedParser) replacement(d byte) ([]sedPiece, bool) {
	var out []sedPiece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, sedPiece{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	for !p.eof() {
		ch := p.s[p.i]
		p.i++
		switch {
		case ch == d:
			flush()
			return out, true
		case ch == '&':
			flush()
			out = append(out, sedPiece{group: 0})
		case ch == '\\' && !p.eof():
			n := p.s[p.i]
			p.i++
			switch {
			case n == d:
				lit.WriteByte(d)
			case n >= '0' && n <= '9':
				flush()
				out = append(out, sedPiece{group: int(n - '0')})
			case n == '&' || n == '\\':
				lit.WriteByte(n)
			case n == '\n':
				lit.WriteByte('\n')
			case strings.IndexByte("ULulE", n) >= 0:
				flush()
				out = append(out, sedPiece{group: -1, conv: n})
			default:
				if r, ok := sedEscape(n); ok {
					lit.WriteRune(r)
				} else {
					lit.WriteByte(n)
				}
			}
		default:
			lit.WriteByte(ch)
		}
	}
	return nil, false
}

// translit parses y/src/dst/.
func (p *sedParser) translit(c *sedCmd) error {
	if p.eof() || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
		return p.err("unterminated `y' command")
	}
	d := p.s[p.i]
	p.i++
	part := func() ([]rune, bool) {
		var rs []rune
		for !p.eof() {
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			p.i += n
			switch {
			case r == rune(d):
				return rs, true
			case r == '\\' && !p.eof():
				e := p.s[p.i]
				p.i++
				switch {
				case e == d:
					rs = append(rs, rune(d))
				case e == '\\':
					rs = append(rs, '\\')
				case e == '\n':
					rs = append(rs, '\n')
				default:
					if r, ok := sedEscape(e); ok {
						rs = append(rs, r)
					} else {
						rs = append(rs, '\\', rune(e))
					}
				}
			default:
				rs = append(rs, r)
			}
		}
		return nil, false
	}
	src, ok := part()
	if !ok {
		return p.errAt(len(p.s), "unterminated `y' command")
	}
	dst, ok := part()
	if !ok {
		return p.errAt(len(p.s), "unterminated `y' command")
	}
	if len(src) != len(dst) {
		return p.err("strings for `y' command are different lengths")
	}
	c.ySrc, c.yDst = src, dst
	return p.end()
}

// sedScript is the program and where its pieces came from, for messages.
type sedScript struct {
	text   string
	pieces []sedPieceSrc
}

type sedPieceSrc struct {
	start int
	file  string // "" for an -e expression
	expr  int    // its number among the -e expressions
}

// message formats a parse error as GNU does.
func (s *sedScript) message(err error) string {
	var se *sedError
	if !errors.As(err, &se) {
		return err.Error()
	}
	switch se.pos {
	case -1, -2:
		return se.msg
	}
	k := 0
	for i, pc := range s.pieces {
		if pc.start < se.pos || pc.start == 0 {
			k = i
		}
	}
	pc := s.pieces[k]
	if se.pos == 0 {
		return fmt.Sprintf("-e expression #%d, char 0: %s", max(pc.expr, 1), se.msg)
	}
	if pc.file != "" {
		line := 1 + strings.Count(s.text[pc.start:min(se.pos, len(s.text))], "\n")
		if se.pos > pc.start && se.pos <= len(s.text) && s.text[se.pos-1] == '\n' {
			line--
		}
		return fmt.Sprintf("file %s line %d: %s", pc.file, line, se.msg)
	}
	return fmt.Sprintf("-e expression #%d, char %d: %s", pc.expr, se.pos-pc.start, se.msg)
}

// sedRun is one run of a parsed script.
type sedRun struct {
	c       *call
	cmds    []*sedCmd
	quiet   bool
	sep     bool // -s or -i: each file on its own
	eol     byte
	lineLen int
	max     int64

	in       *sedInput
	out      *bufio.Writer // where the pattern space goes (a file with -i)
	stdout   *bufio.Writer
	missNL   bool // the last line written lacked its newline
	ps, hs   []byte
	lineNo   int64
	chomped  bool // the current line had its newline
	tflag    bool
	lastRe   *regex
	appendQ  []sedAppend
	wfiles   map[string]*bytes.Buffer
	worder   []string
	rfiles   map[string]*sedRFile
	quit     bool
	status   int
	steps    int
	errFatal error
}

type sedAppend struct {
	text string // a literal text
	file string // or a file (r)
	line bool   // R: one line of file
}

type sedRFile struct {
	lr  *lineReader
	eof bool
	fin func()
}

// sedInput reads the lines of the inputs in turn, with one line of
// lookahead (for $).
type sedInput struct {
	r       *sedRun
	files   []string
	fi      int
	lr      func() ([]byte, bool, error)
	done    func()
	name    string
	failed  bool
	peeked  bool
	pline   []byte
	pnl     bool
	pok     bool
	curName string
}

func (in *sedInput) open() bool {
	for in.lr == nil {
		if in.fi >= len(in.files) {
			return false
		}
		f := in.files[in.fi]
		in.fi++
		rd, done, err := in.r.c.openInput(f)
		if err != nil {
			in.r.c.errorf("can't read %s: %s", f, errText(err))
			in.failed = true
			continue
		}
		if in.r.eol == '\n' {
			lr := in.r.c.lines(rd)
			in.lr = lr.next
		} else {
			br := bufio.NewReaderSize(rd, 64<<10)
			in.lr = func() ([]byte, bool, error) { return readRecord(br, 0, in.r.max) }
		}
		in.done = done
		in.name = f
	}
	return true
}

// fill reads the next line into the lookahead. When sep is set, it stays
// within the current file.
func (in *sedInput) fill(sep bool) error {
	if in.peeked {
		return nil
	}
	for {
		if in.lr == nil && (sep || !in.open()) {
			in.peeked, in.pok = true, false
			return nil
		}
		line, nl, err := in.lr()
		if err == nil {
			in.peeked, in.pok, in.pline, in.pnl = true, true, line, nl
			return nil
		}
		in.done()
		in.lr, in.done = nil, nil
		if !errors.Is(err, io.EOF) {
			return err
		}
		if sep {
			in.peeked, in.pok = true, false
			return nil
		}
	}
}

// next returns the next line.
func (in *sedInput) next(sep bool) ([]byte, bool, bool, error) {
	if err := in.fill(sep); err != nil {
		return nil, false, false, err
	}
	in.peeked = false
	if in.pok {
		in.curName = in.name
	}
	return in.pline, in.pnl, in.pok, nil
}

// last reports whether the line just read is the last one.
func (in *sedInput) last(sep bool) bool {
	if err := in.fill(sep); err != nil {
		return true
	}
	return !in.pok
}

// nextFile moves on to the next file (-s).
func (in *sedInput) nextFile() bool {
	in.peeked = false
	return in.open()
}

func (in *sedInput) close() {
	if in.done != nil {
		in.done()
		in.lr, in.done = nil, nil
	}
}

func cmdSed(c *call) int {
	// -i takes an optional suffix glued to it (-i.bak, -ni~), which getopt
	// would read as more flags: take it off first.
	inPlace, suffix := false, ""
	var args []string
	for k, a := range c.args {
		if a == "--" {
			args = append(args, c.args[k:]...)
			break
		}
		if v, ok := strings.CutPrefix(a, "--in-place"); ok && (v == "" || v[0] == '=') {
			inPlace, suffix = true, strings.TrimPrefix(v, "=")
			continue
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && !sedValueOf(c.args, k) {
			if n := strings.IndexByte(a, 'i'); n > 0 && !strings.ContainsAny(a[1:n], "efl") {
				inPlace, suffix = true, a[n+1:]
				if a = a[:n]; a == "-" {
					continue
				}
			}
		}
		args = append(args, a)
	}
	o, rest, ok := c.getopt(args, "nErsuz", "efl", sedLong)
	if !ok {
		fmt.Fprintf(c.stderr, "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n")
		return 1
	}
	scr := &sedScript{}
	var parts []string
	pos := 0
	add := func(text, file string, expr int) {
		if len(parts) > 0 {
			pos++ // the newline that joins them
		}
		scr.pieces = append(scr.pieces, sedPieceSrc{start: pos, file: file, expr: expr})
		parts = append(parts, text)
		pos += len(text)
	}
	// -e and -f in the order given.
	ei, fi := 0, 0
	for _, a := range sedScriptOrder(args) {
		if a == 'e' {
			add(o.vals['e'][ei], "", ei+1)
			ei++
			continue
		}
		f := o.vals['f'][fi]
		fi++
		r, done, err := c.openInput(f)
		if err != nil {
			c.errorf("couldn't open file %s: %s", f, errText(err))
			return 1
		}
		data, err := c.readAll(r)
		done()
		if err != nil {
			return c.fail(1, f, err)
		}
		add(strings.TrimSuffix(string(data), "\n"), f, 0)
	}
	if len(parts) == 0 {
		if len(rest) == 0 {
			fmt.Fprintf(c.stderr, "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n")
			return 1
		}
		add(rest[0], "", 1)
		rest = rest[1:]
	}
	scr.text = strings.Join(parts, "\n")
	quiet := o.has('n') || strings.HasPrefix(scr.text, "#n\n") || scr.text == "#n"
	cmds, err := parseSed(scr.text, o.has('E') || o.has('r'), c.reTimeout())
	if err != nil {
		c.errorf("%s", scr.message(err))
		var se *sedError
		if errors.As(err, &se) && se.pos == -2 {
			return 4 // GNU finds labels late, and panics
		}
		return 1
	}
	r := &sedRun{c: c, cmds: cmds, quiet: quiet, sep: o.has('s') || inPlace, eol: '\n', lineLen: 70, max: c.maxBytes()}
	if o.has('z') {
		r.eol = 0
	}
	if v := o.last('l', ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			c.errorf("invalid line length: %s", v)
			return 1
		}
		r.lineLen = n
	}
	r.stdout = c.out()
	if len(rest) == 0 {
		if inPlace {
			c.errorf("no input files")
			return 1 // GNU says 1 here too ("sed: no input files")
		}
		rest = []string{"-"}
	}
	if !inPlace {
		r.out = r.stdout
		r.in = &sedInput{r: r, files: rest}
		r.process()
		r.in.close()
	} else {
		for _, f := range rest {
			if r.quit || c.stopped() {
				break
			}
			r.inPlace(f, suffix)
		}
	}
	r.flushW()
	status := c.flush(r.stdout, r.status)
	if r.errFatal != nil && status == 0 {
		status = 4
	}
	if r.in != nil && r.in.failed && status == 0 {
		status = 2
	}
	return status
}

// sedValueOf reports whether args[k] is the value of the option before it
// (-e SCRIPT, -f FILE, -l N).
func sedValueOf(args []string, k int) bool {
	if k == 0 {
		return false
	}
	a := args[k-1]
	if a == "--expression" || a == "--file" || a == "--line-length" {
		return true
	}
	if len(a) < 2 || a[0] != '-' || a[1] == '-' {
		return false
	}
	for j := 1; j < len(a); j++ {
		if strings.IndexByte("efl", a[j]) >= 0 {
			return j == len(a)-1
		}
		if a[j] == 'i' {
			return false
		}
	}
	return false
}

// sedScriptOrder lists 'e' and 'f' in the order the options came.
func sedScriptOrder(args []string) []byte {
	var order []byte
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		switch {
		case a == "--expression" || a == "--file":
			order = append(order, a[2])
			i++
		case strings.HasPrefix(a, "--expression="), strings.HasPrefix(a, "--file="):
			order = append(order, a[2])
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			for j := 1; j < len(a); j++ {
				if a[j] == 'e' || a[j] == 'f' || a[j] == 'l' {
					if a[j] != 'l' {
						order = append(order, a[j])
					}
					if j == len(a)-1 {
						i++
					}
					break
				}
				if a[j] == 'i' { // -i's suffix may hold anything
					break
				}
			}
		}
	}
	return order
}

// inPlace edits one file: the output replaces it (through writeFile);
// with a suffix, the original is kept under the backup name.
func (r *sedRun) inPlace(f, suffix string) {
	c := r.c
	info, err := c.stat(f)
	if err != nil {
		c.errorf("can't read %s: %s", f, errText(err))
		r.status = 2
		return
	}
	if !info.Mode().IsRegular() {
		c.errorf("couldn't edit %s: not a regular file", f)
		r.status = 4
		return
	}
	rd, done, err := c.openInput(f)
	if err != nil {
		c.errorf("can't read %s: %s", f, errText(err))
		r.status = 2
		return
	}
	orig, err := c.readAll(rd)
	done()
	if err != nil {
		c.errorf("can't read %s: %s", f, errText(err))
		r.status = 4
		return
	}
	buf := &cappedBuffer{max: r.max}
	r.out = bufio.NewWriter(buf)
	r.missNL = false
	r.in = &sedInput{r: r, files: []string{f}}
	r.process()
	r.in.close()
	if err := r.out.Flush(); err != nil {
		c.errorf("couldn't write %s: %s", f, errText(err))
		r.status = 4
		return
	}
	if c.stopped() {
		return
	}
	if suffix != "" {
		backup := f + suffix
		if strings.Contains(suffix, "*") {
			dir, base := "", f
			if k := strings.LastIndexByte(f, '/'); k >= 0 {
				dir, base = f[:k+1], f[k+1:]
			}
			backup = strings.ReplaceAll(suffix, "*", base)
			if !strings.Contains(backup, "/") {
				backup = dir + backup
			}
		}
		if err := c.writeFile(backup, bytes.NewReader(orig)); err != nil {
			c.errorf("couldn't open file %s: %s", backup, errText(err))
			r.status = 4
			return
		}
	}
	if err := c.writeFile(f, bytes.NewReader(buf.b)); err != nil {
		c.errorf("couldn't open file %s: %s", f, errText(err))
		r.status = 4
	}
}

// cappedBuffer collects at most max bytes.
type cappedBuffer struct {
	b   []byte
	max int64
}

func (w *cappedBuffer) Write(p []byte) (int, error) {
	if w.max > 0 && int64(len(w.b)+len(p)) > w.max {
		return 0, fmt.Errorf("output over %d bytes: %w", w.max, errInputTooLarge)
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

var errSedSpace = errors.New("pattern space too large")

// process runs the script over r.in.
func (r *sedRun) process() {
	r.lineNo = 0
	for _, c := range r.cmds {
		c.active = false
	}
	for !r.quit && !r.c.stopped() && r.errFatal == nil {
		line, nl, ok, err := r.in.next(r.sep)
		if err != nil {
			r.readFailed(err)
			return
		}
		if !ok {
			if r.sep && r.in.nextFile() {
				r.lineNo = 0 // -s: each file counts its lines
				continue
			}
			return
		}
		r.lineNo++
		r.ps = append(r.ps[:0], line...)
		r.chomped = nl
		r.tflag = false
		r.cycle(0)
	}
}

func (r *sedRun) readFailed(err error) {
	if !r.c.stopped() {
		r.c.errorf("read error on %s: %s", r.in.name, errText(err))
	}
	r.status = 4
	r.quit = true
}

// cycle runs the script from command pc on the pattern space, then ends the
// cycle (autoprint, appended text).
func (r *sedRun) cycle(pc int) {
	for r.runScript(pc) && !r.quit && !r.c.stopped() {
		pc = 0 // D restarts the script on what is left
	}
}

// runScript runs the script from pc; it reports whether D asks for it to
// run again without reading a line.
func (r *sedRun) runScript(pc int) bool {
	autoprint := !r.quiet
	for pc < len(r.cmds) {
		if r.steps++; r.steps&1023 == 0 && r.c.stopped() {
			r.quit = true
			return false
		}
		cmd := r.cmds[pc]
		pc++
		sel, err := r.selected(cmd)
		if err != nil {
			r.fatal(err)
			return false
		}
		if !sel {
			if cmd.name == '{' {
				pc = cmd.jump
			}
			continue
		}
		switch cmd.name {
		case '{', '}', ':':
		case '=':
			r.emit(r.out, []byte(strconv.FormatInt(r.lineNo, 10)), true, '\n')
		case 'a':
			r.appendQ = append(r.appendQ, sedAppend{text: cmd.text})
		case 'i':
			r.emitRaw(r.out, cmd.text)
		case 'c':
			if cmd.a2 == nil || cmd.neg || !cmd.active {
				r.emitRaw(r.out, cmd.text)
			}
			r.endCycle(false)
			return false
		case 'd':
			r.endCycle(false)
			return false
		case 'D':
			k := bytes.IndexByte(r.ps, '\n')
			if k < 0 {
				r.endCycle(false)
				return false
			}
			r.ps = append(r.ps[:0], r.ps[k+1:]...)
			r.endCycle(false)
			return true
		case 'p':
			r.emitPS(r.out, r.ps)
		case 'P':
			k := bytes.IndexByte(r.ps, '\n')
			if k < 0 {
				k = len(r.ps)
			}
			r.emit(r.out, r.ps[:k], true, r.eol)
		case 'n':
			if r.in.last(r.sep) {
				r.endCycle(autoprint)
				r.quit = true
				return false
			}
			if autoprint {
				r.emitPS(r.out, r.ps)
			}
			r.flushAppends()
			if !r.readLine(false) {
				return false
			}
		case 'N':
			if r.in.last(r.sep) {
				r.endCycle(autoprint)
				r.quit = true
				return false
			}
			r.flushAppends()
			if !r.readLine(true) {
				return false
			}
		case 'g':
			r.ps = append(r.ps[:0], r.hs...)
		case 'G':
			if !r.grow(len(r.ps) + 1 + len(r.hs)) {
				return false
			}
			r.ps = append(append(r.ps, '\n'), r.hs...)
		case 'h':
			r.hs = append(r.hs[:0], r.ps...)
		case 'H':
			if !r.grow(len(r.ps) + 1 + len(r.hs)) {
				return false
			}
			r.hs = append(append(r.hs, '\n'), r.ps...)
		case 'x':
			r.ps, r.hs = r.hs, r.ps
		case 'z':
			r.ps = r.ps[:0]
		case 'F':
			name := r.in.curName
			if name == "" {
				name = "-"
			}
			r.emit(r.out, []byte(name), true, '\n')
		case 'l':
			n := r.lineLen
			if cmd.intArg >= 0 {
				n = cmd.intArg
			}
			r.list(n)
		case 'q':
			r.endCycle(autoprint)
			r.quit = true
			if cmd.intArg >= 0 {
				r.status = cmd.intArg & 0xff
			}
			return false
		case 'Q':
			r.quit = true
			if cmd.intArg >= 0 {
				r.status = cmd.intArg & 0xff
			}
			return false
		case 'b':
			pc = cmd.jump
		case 't':
			if r.tflag {
				r.tflag = false
				pc = cmd.jump
			}
		case 'T':
			if !r.tflag {
				pc = cmd.jump
			} else {
				r.tflag = false
			}
		case 'r':
			r.appendQ = append(r.appendQ, sedAppend{file: cmd.text})
		case 'R':
			r.appendQ = append(r.appendQ, sedAppend{file: cmd.text, line: true})
		case 'w':
			r.writeTo(cmd.text, r.ps, true)
		case 'W':
			k := bytes.IndexByte(r.ps, '\n')
			if k < 0 {
				k = len(r.ps)
			}
			r.writeTo(cmd.text, r.ps[:k], true)
		case 's':
			if err := r.subst(cmd); err != nil {
				r.fatal(err)
				return false
			}
		case 'y':
			r.translit(cmd)
		}
		if r.errFatal != nil {
			return false
		}
	}
	r.endCycle(autoprint)
	return false
}

// readLine reads the next line into the pattern space (appending for N).
func (r *sedRun) readLine(appendNL bool) bool {
	line, nl, ok, err := r.in.next(r.sep)
	if err != nil {
		r.readFailed(err)
		return false
	}
	if !ok {
		r.quit = true
		return false
	}
	r.lineNo++
	if appendNL {
		if !r.grow(len(r.ps) + 1 + len(line)) {
			return false
		}
		r.ps = append(append(r.ps, '\n'), line...)
	} else {
		r.ps = append(r.ps[:0], line...)
	}
	r.chomped = nl
	r.tflag = false
	return true
}

// grow checks that a space of n bytes is within the cap.
func (r *sedRun) grow(n int) bool {
	if r.max > 0 && int64(n) > r.max {
		r.fatal(fmt.Errorf("pattern space over %d bytes: %w", r.max, errSedSpace))
		return false
	}
	return true
}

func (r *sedRun) fatal(err error) {
	if r.errFatal == nil {
		r.errFatal = err
		if !r.c.stopped() {
			r.c.errorf("%s", err)
		}
	}
	r.quit = true
}

// endCycle autoprints (if print) and writes the queued appends.
func (r *sedRun) endCycle(print bool) {
	if print {
		r.emitPS(r.out, r.ps)
	}
	r.flushAppends()
}

// emit writes data and, if nl, the line end; a line that lacked its
// newline gets one first.
func (r *sedRun) emit(w *bufio.Writer, data []byte, nl bool, eol byte) {
	if r.missNL && w == r.out {
		w.WriteByte(r.eol)
		r.missNL = false
	}
	w.Write(data)
	if nl {
		w.WriteByte(eol)
	}
}

// emitPS writes the pattern space as a line: without its end if the input
// line had none.
func (r *sedRun) emitPS(w *bufio.Writer, ps []byte) {
	last := !r.chomped && r.in.last(r.sep)
	r.emit(w, ps, !last, r.eol)
	if last && w == r.out {
		r.missNL = true
	}
}

func (r *sedRun) emitRaw(w *bufio.Writer, text string) {
	r.emit(w, []byte(text), false, 0)
}

func (r *sedRun) flushAppends() {
	for _, a := range r.appendQ {
		if a.file == "" {
			r.emitRaw(r.out, a.text)
			continue
		}
		if a.line {
			r.readRLine(a.file)
			continue
		}
		if a.file == "/dev/stdin" || a.file == "-" {
			continue
		}
		rd, done, err := r.c.openInput(a.file)
		if err != nil {
			continue // GNU ignores an unreadable r file
		}
		data, err := r.c.readAll(rd)
		done()
		if err == nil && len(data) > 0 {
			r.emitRaw(r.out, "")
			r.out.Write(data)
			if data[len(data)-1] != '\n' {
				r.missNL = true
			}
		}
	}
	r.appendQ = r.appendQ[:0]
}

func (r *sedRun) readRLine(name string) {
	if r.rfiles == nil {
		r.rfiles = map[string]*sedRFile{}
	}
	f := r.rfiles[name]
	if f == nil {
		f = &sedRFile{}
		r.rfiles[name] = f
		rd, done, err := r.c.openInput(name)
		if err != nil {
			f.eof = true
		} else {
			f.lr, f.fin = r.c.lines(rd), done
		}
	}
	if f.eof {
		return
	}
	line, _, err := f.lr.next()
	if err != nil {
		f.eof = true
		f.fin()
		return
	}
	r.emit(r.out, line, true, '\n')
}

// writeTo handles w: /dev/stdout and /dev/stderr directly, files at the end
// (through writeFile), bounded by the cap.
func (r *sedRun) writeTo(name string, data []byte, nl bool) {
	switch name {
	case "/dev/stdout":
		r.emit(r.stdout, data, nl, r.eol)
		return
	case "/dev/stderr":
		r.c.stderr.Write(append(slicesClone(data), r.eol))
		return
	}
	if r.wfiles == nil {
		r.wfiles = map[string]*bytes.Buffer{}
	}
	b := r.wfiles[name]
	if b == nil {
		b = &bytes.Buffer{}
		r.wfiles[name] = b
		r.worder = append(r.worder, name)
	}
	if r.max > 0 && int64(b.Len()+len(data)+1) > r.max {
		r.fatal(fmt.Errorf("couldn't write %s: output over %d bytes", name, r.max))
		return
	}
	b.Write(data)
	b.WriteByte(r.eol)
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

func (r *sedRun) flushW() {
	for _, c := range r.cmds { // w files are created even when unused
		name := c.text
		if c.name == 's' {
			name = c.wfile
		} else if c.name != 'w' && c.name != 'W' {
			continue
		}
		if name == "" || name == "/dev/stdout" || name == "/dev/stderr" {
			continue
		}
		if r.wfiles == nil {
			r.wfiles = map[string]*bytes.Buffer{}
		}
		if r.wfiles[name] == nil {
			r.wfiles[name] = &bytes.Buffer{}
			r.worder = append(r.worder, name)
		}
	}
	for _, name := range r.worder {
		if err := r.c.writeFile(name, bytes.NewReader(r.wfiles[name].Bytes())); err != nil {
			r.c.errorf("couldn't open file %s: %s", name, errText(err))
			r.status = 4
		}
	}
	for _, f := range r.rfiles {
		if f.fin != nil && !f.eof {
			f.fin()
		}
	}
}

// selected reports whether cmd applies to the current line.
func (r *sedRun) selected(cmd *sedCmd) (bool, error) {
	sel, err := r.inRange(cmd)
	return sel != cmd.neg, err
}

func (r *sedRun) inRange(cmd *sedCmd) (bool, error) {
	if cmd.a1 == nil {
		return true, nil
	}
	if cmd.a2 == nil {
		return r.matchAddr(cmd.a1)
	}
	if !cmd.active {
		start := cmd.a1.kind == '0' && r.lineNo == 1
		if !start {
			m, err := r.matchAddr(cmd.a1)
			if err != nil || !m {
				return false, err
			}
			cmd.active = true
			a2 := cmd.a2
			switch a2.kind {
			case 'n':
				cmd.end = a2.n
				cmd.active = a2.n > r.lineNo
			case '+':
				cmd.end = r.lineNo + a2.n
				cmd.active = a2.n > 0
			case 't':
				cmd.end = r.lineNo // GNU: the next multiple after this line
				if a2.n > 0 {
					cmd.end = (r.lineNo/a2.n + 1) * a2.n
				}
				cmd.active = cmd.end > r.lineNo
			case '$':
				cmd.active = !r.in.last(r.sep)
			}
			return true, nil
		}
		cmd.active = true
	}
	a2 := cmd.a2
	switch a2.kind {
	case 'n', '+', 't':
		if r.lineNo >= cmd.end {
			cmd.active = false
		}
		if r.lineNo > cmd.end { // a line number passed (by n or N) ends the range before this line
			return false, nil
		}
	case '$':
		if r.in.last(r.sep) {
			cmd.active = false
		}
	case '/':
		m, err := r.matchAddr(a2)
		if err != nil {
			return false, err
		}
		if m {
			cmd.active = false
		}
	}
	return true, nil
}

func (r *sedRun) matchAddr(a *sedAddr) (bool, error) {
	switch a.kind {
	case 'n':
		return r.lineNo == a.n, nil
	case '$':
		return r.in.last(r.sep), nil
	case '~':
		if a.step <= 0 {
			return r.lineNo == a.n, nil
		}
		return r.lineNo >= a.n && (r.lineNo-a.n)%a.step == 0, nil
	case '/':
		re, err := r.regexFor(a.re, a.empty)
		if err != nil {
			return false, err
		}
		return re.match(r.ps)
	}
	return false, nil
}

// regexFor is the regex to use: for "//", the last one used (or, before
// any ran, the one compiled before it).
func (r *sedRun) regexFor(re *regex, empty bool) (*regex, error) {
	if empty {
		if r.lastRe != nil {
			return r.lastRe, nil
		}
		return re, nil
	}
	r.lastRe = re
	return re, nil
}

// subst runs s.
func (r *sedRun) subst(cmd *sedCmd) error {
	re, err := r.regexFor(cmd.re, cmd.reEmpty)
	if err != nil {
		return err
	}
	n := -1
	if !cmd.global {
		n = max(cmd.nth, 1)
	}
	ms, err := re.findAll(r.ps, n)
	if err != nil {
		return err
	}
	first := max(cmd.nth, 1) - 1
	if len(ms) <= first {
		return nil
	}
	ms = ms[first:]
	if !cmd.global {
		ms = ms[:1]
	}
	var out []byte
	prev := 0
	for _, m := range ms {
		out = append(out, r.ps[prev:m[0]]...)
		out = appendReplacement(out, cmd.repl, r.ps, m)
		prev = m[1]
		if r.max > 0 && int64(len(out)) > r.max {
			return fmt.Errorf("pattern space over %d bytes: %w", r.max, errSedSpace)
		}
	}
	out = append(out, r.ps[prev:]...)
	if !r.grow(len(out)) {
		return nil
	}
	r.ps = out
	r.tflag = true
	if cmd.print > 0 {
		r.emitPS(r.out, r.ps)
	}
	if cmd.wfile != "" {
		r.writeTo(cmd.wfile, r.ps, true)
	}
	return nil
}

// appendReplacement appends the replacement for match m of s, applying
// \U \L \u \l \E.
func appendReplacement(out []byte, repl []sedPiece, s []byte, m []int) []byte {
	var mode, once byte // mode: 'U', 'L' or 0; once: 'u', 'l' or 0
	add := func(text []byte) {
		if mode == 0 && once == 0 {
			out = append(out, text...)
			return
		}
		for len(text) > 0 {
			c, size := utf8.DecodeRune(text)
			if c == utf8.RuneError && size <= 1 {
				out = append(out, text[0])
				text = text[1:]
				continue
			}
			text = text[size:]
			switch {
			case once == 'u':
				c = unicode.ToUpper(c)
				once = 0
			case once == 'l':
				c = unicode.ToLower(c)
				once = 0
			case mode == 'U':
				c = unicode.ToUpper(c)
			case mode == 'L':
				c = unicode.ToLower(c)
			}
			out = utf8.AppendRune(out, c)
		}
	}
	for _, pc := range repl {
		switch {
		case pc.conv == 'U' || pc.conv == 'L':
			mode, once = pc.conv, 0
		case pc.conv == 'E':
			mode, once = 0, 0
		case pc.conv != 0:
			once = pc.conv
		case pc.group >= 0:
			if 2*pc.group+1 < len(m) && m[2*pc.group] >= 0 {
				add(s[m[2*pc.group]:m[2*pc.group+1]])
			}
		default:
			add([]byte(pc.lit))
		}
	}
	return out
}

func (r *sedRun) translit(cmd *sedCmd) {
	var out []byte
	for s := r.ps; len(s) > 0; {
		c, size := utf8.DecodeRune(s)
		if c == utf8.RuneError && size <= 1 {
			out = append(out, s[0])
			s = s[1:]
			continue
		}
		s = s[size:]
		for k, from := range cmd.ySrc {
			if from == c {
				c = cmd.yDst[k]
				break
			}
		}
		out = utf8.AppendRune(out, c)
	}
	r.ps = out
}

// list is l: the pattern space shown unambiguously, folded at width n.
func (r *sedRun) list(n int) {
	var b []byte
	col := 0
	width := n - 1
	for _, ch := range r.ps {
		var rep string
		switch ch {
		case '\\':
			rep = `\\`
		case '\a':
			rep = `\a`
		case '\b':
			rep = `\b`
		case '\f':
			rep = `\f`
		case '\n':
			rep = `\n`
		case '\r':
			rep = `\r`
		case '\t':
			rep = `\t`
		case '\v':
			rep = `\v`
		default:
			if ch < ' ' || ch >= 0x7f {
				rep = fmt.Sprintf("\\%03o", ch)
			} else {
				rep = string(ch)
			}
		}
		if n > 0 && col+len(rep) > width {
			b = append(b, "\\\n"...)
			col = 0
		}
		b = append(b, rep...)
		col += len(rep)
	}
	b = append(b, '$')
	r.emit(r.out, b, true, '\n')
}
