package shell

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// POSIX regular expressions, as GNU grep and sed read them, translated into
// the syntax Go's regexp and github.com/dlclark/regexp2 share.
//
// A pattern without back-references runs on Go's regexp in leftmost-longest
// mode: that is POSIX's rule for the overall match (GNU's "a\|ab" on "ab"
// matches "ab"), and Go's engine is linear in time, so no pattern can hang a
// command. Back-references are beyond any finite automaton: a pattern with one
// runs on regexp2, a backtracking engine, which picks the leftmost-first match
// (as Perl does) rather than the leftmost-longest, and which gives up after a
// timeout, so that a catastrophic pattern ends. (To time matches, regexp2
// keeps a clock goroutine of its own, which stops by itself about a second
// after the last deadline it was given.)
//
// grep -P goes to regexp2 as it is: its syntax is .NET's, close to Perl's
// (lookarounds, \d, lazy quantifiers), leftmost-first as Perl is.

// reSyntax says how to read a pattern.
type reSyntax struct {
	ere       bool // extended (grep -E, sed -E) rather than basic
	icase     bool // case-insensitive (grep -i, sed's I flag)
	multiline bool // ^ and $ also match at newlines (sed's M flag)
	sed       bool // sed's dialect: \n, \t... are escapes; a stray ) is an error
	fixed     bool // grep -F: the pattern is a literal string
	perl      bool // grep -P: the pattern is in regexp2's (Perl-like) syntax
	word      bool // grep -w: a match must not touch a word character
	line      bool // grep -x: a match must be the whole line
}

// reError is a pattern error, with GNU's wording (glibc's regerror).
type reError struct{ msg string }

func (e *reError) Error() string { return e.msg }

const (
	reMsgParen     = `Unmatched ( or \(`
	reMsgRParen    = `Unmatched ) or \)`
	reMsgBracket   = `Unmatched [, [^, [:, [., or [=`
	reMsgBrace     = `Unmatched \{`
	reMsgInterval  = `Invalid content of \{\}`
	reMsgPreceding = `Invalid preceding regular expression`
	reMsgRange     = `Invalid range end`
	reMsgClass     = `Invalid character class name`
	reMsgCollate   = `Invalid collation character`
	reMsgBackref   = `Invalid back reference`
	reMsgBackslash = `Trailing backslash`
	reMsgBig       = `Regular expression too big`
	reMsgInvalid   = `Invalid regular expression`
)

// reDupMax is RE_DUP_MAX, the largest count of an interval.
const reDupMax = 32767

// wordClass is what GNU counts as a word character (\w): letters, digits
// and the underscore.
const wordClass = `\p{L}\p{N}_`

// posixClasses maps a bracket class name to the items of a Go/regexp2
// class. The letter classes are Unicode, as in a UTF-8 locale.
var posixClasses = map[string]string{
	"alpha":  `\p{L}`,
	"upper":  `\p{Lu}`,
	"lower":  `\p{Ll}`,
	"digit":  `0-9`,
	"alnum":  `\p{L}\p{N}`,
	"xdigit": `0-9A-Fa-f`,
	"space":  "\t\n\v\f\r ",
	"blank":  " \t",
	"punct":  `!-/:-@\[-` + "`{-~",
	"cntrl":  "\x00-\x1f\x7f",
	"print":  ` -~\x{a0}-\x{10ffff}`,
	"graph":  `!-~\x{a0}-\x{10ffff}`,
}

// translated is one pattern in the engines' syntax.
type translated struct {
	expr    string
	groups  int  // capturing groups
	backref bool // has a back-reference
}

// reTrans is the state of one translation.
type reTrans struct {
	p      string
	i      int
	syn    reSyntax
	base   int // groups of the patterns before this one (grep -e a -e b)
	out    []byte
	groups int
	closed []bool // closed[n]: group n+1 is complete
	open   []reOpen
	atom   int  // where the last atom starts in out; -1 when there is none
	quant  bool // the last atom has a quantifier already
	start  bool // at the start of a (sub)expression: BRE's ^ is an anchor
	backrf bool
}

type reOpen struct {
	num   int // group number (local), 0 for none
	atPos int
}

// translateRegex turns the POSIX pattern p into the engines' syntax; its
// groups are numbered from base+1.
func translateRegex(p string, syn reSyntax, base int) (translated, error) {
	t := &reTrans{p: p, syn: syn, base: base, atom: -1, start: true}
	if syn.fixed {
		for _, r := range p {
			t.literal(r)
		}
		return translated{expr: string(t.out)}, nil
	}
	if err := t.run(); err != nil {
		return translated{}, err
	}
	return translated{expr: string(t.out), groups: t.groups, backref: t.backrf}, nil
}

func (t *reTrans) run() error {
	p := t.p
	for t.i < len(p) {
		c := p[t.i]
		wasStart := t.start
		t.start = false
		switch {
		case c == '\\':
			if t.i+1 >= len(p) {
				return &reError{reMsgBackslash}
			}
			t.i++
			if err := t.escape(p[t.i], wasStart); err != nil {
				return err
			}
			continue
		case c == '[':
			if err := t.bracket(); err != nil {
				return err
			}
			continue
		case c == '.':
			t.setAtom()
			t.out = append(t.out, '.')
		case c == '*':
			t.quantify("*")
		case c == '^':
			if t.syn.ere || wasStart {
				t.out = append(t.out, '^')
				t.atom = -1
				t.start = !t.syn.ere // "^*" has a literal star
			} else {
				t.literal('^')
			}
		case c == '$':
			rest := p[t.i+1:]
			if t.syn.ere || rest == "" || strings.HasPrefix(rest, `\)`) || strings.HasPrefix(rest, `\|`) {
				t.dollar()
			} else {
				t.literal('$')
			}
		case t.syn.ere && c == '(':
			t.openGroup()
		case t.syn.ere && c == ')':
			if len(t.open) == 0 {
				if t.syn.sed {
					return &reError{reMsgRParen}
				}
				t.literal(')') // GNU grep reads a stray ) as itself
				break
			}
			t.closeGroup()
		case t.syn.ere && c == '|':
			t.alt()
		case t.syn.ere && (c == '+' || c == '?'):
			t.quantify(string(c))
		case t.syn.ere && c == '{':
			if err := t.interval(wasStart); err != nil {
				return err
			}
			continue
		default:
			r, n := utf8.DecodeRuneInString(p[t.i:])
			t.literal(r)
			t.i += n
			continue
		}
		t.i++
	}
	if len(t.open) > 0 {
		return &reError{reMsgParen}
	}
	return nil
}

// escape handles \n, with t.i at n.
func (t *reTrans) escape(n byte, wasStart bool) error {
	bre := !t.syn.ere
	t.i++
	switch {
	case bre && n == '(':
		t.openGroup()
	case bre && n == ')':
		if len(t.open) == 0 {
			return &reError{reMsgRParen}
		}
		t.closeGroup()
	case bre && n == '|':
		t.alt()
	case bre && (n == '+' || n == '?'):
		t.quantify(string(n))
	case bre && n == '{':
		if wasStart || t.atom < 0 {
			return &reError{reMsgPreceding}
		}
		t.i -= 2 // back to the backslash
		return t.interval(false)
	case n >= '1' && n <= '9':
		k := int(n - '0')
		if k > len(t.closed) || !t.closed[k-1] {
			return &reError{reMsgBackref}
		}
		t.setAtom()
		t.out = append(t.out, `(?:\`+strconv.Itoa(t.base+k)+`)`...)
		t.backrf = true
	case n == '<' || n == '>' || n == 'b':
		t.out = append(t.out, `\b`...)
		t.atom = -1
	case n == 'B':
		t.out = append(t.out, `\B`...)
		t.atom = -1
	case n == '`':
		t.out = append(t.out, `\A`...)
		t.atom = -1
	case n == '\'':
		t.out = append(t.out, `\z`...)
		t.atom = -1
	case n == 'w':
		t.setAtom()
		t.out = append(t.out, `[`+wordClass+`]`...)
	case n == 'W':
		t.setAtom()
		t.out = append(t.out, `[^`+wordClass+`]`...)
	case n == 's':
		t.setAtom()
		t.out = append(t.out, `[`+posixClasses["space"]+`]`...)
	case n == 'S':
		t.setAtom()
		t.out = append(t.out, `[^`+posixClasses["space"]+`]`...)
	default:
		if t.syn.sed {
			if r, ok := sedEscape(n); ok {
				t.literal(r)
				return nil
			}
		}
		t.i--
		r, size := utf8.DecodeRuneInString(t.p[t.i:])
		t.i += size
		t.literal(r)
	}
	return nil
}

// sedEscape is the character of sed's escape \n (newline), \t (tab)...
func sedEscape(n byte) (rune, bool) {
	switch n {
	case 'n':
		return '\n', true
	case 't':
		return '\t', true
	case 'a':
		return '\a', true
	case 'f':
		return '\f', true
	case 'v':
		return '\v', true
	case 'r':
		return '\r', true
	}
	return 0, false
}

func (t *reTrans) setAtom() {
	t.atom = len(t.out)
	t.quant = false
}

// literal adds the character r as an atom.
func (t *reTrans) literal(r rune) {
	t.setAtom()
	if r < utf8.RuneSelf && strings.IndexByte(`\.+*?()|[]{}^$#`, byte(r)) >= 0 {
		t.out = append(t.out, '\\')
	}
	t.out = utf8.AppendRune(t.out, r)
}

func (t *reTrans) dollar() {
	if t.syn.multiline {
		t.out = append(t.out, '$')
	} else {
		t.out = append(t.out, `\z`...)
	}
	t.atom = -1
}

func (t *reTrans) openGroup() {
	t.groups++
	t.closed = append(t.closed, false)
	t.open = append(t.open, reOpen{num: t.groups, atPos: len(t.out)})
	t.out = append(t.out, '(')
	t.atom = -1
	t.start = true
}

func (t *reTrans) closeGroup() {
	g := t.open[len(t.open)-1]
	t.open = t.open[:len(t.open)-1]
	t.closed[g.num-1] = true
	t.out = append(t.out, ')')
	t.atom = g.atPos
	t.quant = false
}

func (t *reTrans) alt() {
	t.out = append(t.out, '|')
	t.atom = -1
	t.start = true
}

// quantify applies q (*, +, ? or an interval) to the last atom. With none,
// the operator is a literal character, as in GNU.
func (t *reTrans) quantify(q string) {
	if t.atom < 0 {
		if len(q) == 1 {
			t.literal(rune(q[0]))
		}
		return
	}
	if t.quant { // "a**": Go refuses a repeated repetition
		t.out = append(t.out[:t.atom], append([]byte("(?:"), t.out[t.atom:]...)...)
		t.out = append(t.out, ')')
	}
	t.out = append(t.out, q...)
	t.quant = true
}

// interval reads {m,n} (ERE) or \{m,n\} (BRE) at t.i.
func (t *reTrans) interval(wasStart bool) error {
	p := t.p
	bre := !t.syn.ere
	j := t.i + 1
	if bre {
		j++
	}
	num := func() (int, bool) {
		k := j
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if k == j {
			return -1, true
		}
		v, err := strconv.Atoi(p[k:j])
		if err != nil || v > reDupMax {
			return reDupMax + 1, true
		}
		return v, true
	}
	lo, _ := num()
	hi := lo
	comma := j < len(p) && p[j] == ','
	if comma {
		j++
		hi, _ = num()
	}
	closer := "}"
	if bre {
		closer = `\}`
	}
	ok := strings.HasPrefix(p[j:], closer) && (lo >= 0 || comma)
	if !ok {
		if bre {
			if j >= len(p) {
				return &reError{reMsgBrace}
			}
			return &reError{reMsgInterval}
		}
		t.literal('{') // ERE: "a{1" is literal
		t.i++
		return nil
	}
	t.i = j + len(closer)
	if lo < 0 {
		lo = 0
	}
	if (hi >= 0 && hi < lo) || lo > reDupMax || hi > reDupMax {
		if hi > reDupMax || lo > reDupMax {
			return &reError{reMsgBig}
		}
		return &reError{reMsgInterval}
	}
	if t.atom < 0 {
		if bre {
			return &reError{reMsgPreceding}
		}
		return nil // GNU: an interval at the start repeats nothing
	}
	q := "{" + strconv.Itoa(lo)
	switch {
	case !comma:
	case hi < 0:
		q += ","
	default:
		q += "," + strconv.Itoa(hi)
	}
	t.quantify(q + "}")
	return nil
}

// bracket reads a bracket expression at t.i.
func (t *reTrans) bracket() error {
	p := t.p
	j := t.i + 1
	if j >= len(p) {
		return &reError{reMsgInvalid}
	}
	var b []byte
	b = append(b, '[')
	if p[j] == '^' {
		b = append(b, '^')
		j++
	}
	first := true
	// item reads one character (or [.c.] / [=c=]) at j.
	item := func() (rune, error) {
		if strings.HasPrefix(p[j:], "[.") || strings.HasPrefix(p[j:], "[=") {
			end := strings.Index(p[j+2:], string(p[j+1])+"]")
			if end < 0 {
				return 0, &reError{reMsgBracket}
			}
			name := p[j+2 : j+2+end]
			r, n := utf8.DecodeRuneInString(name)
			if name == "" || n != len(name) {
				return 0, &reError{reMsgCollate}
			}
			j += end + 4
			return r, nil
		}
		if t.syn.sed && p[j] == '\\' && j+1 < len(p) {
			if r, ok := sedEscape(p[j+1]); ok {
				j += 2
				return r, nil
			}
		}
		r, n := utf8.DecodeRuneInString(p[j:])
		j += n
		return r, nil
	}
	for {
		if j >= len(p) {
			return &reError{reMsgBracket}
		}
		if p[j] == ']' && !first {
			j++
			break
		}
		first = false
		if strings.HasPrefix(p[j:], "[:") {
			end := strings.Index(p[j+2:], ":]")
			if end < 0 {
				return &reError{reMsgBracket}
			}
			cls, ok := posixClasses[p[j+2:j+2+end]]
			if !ok {
				return &reError{reMsgClass}
			}
			b = append(b, cls...)
			j += end + 4
			if strings.HasPrefix(p[j:], "-") && !strings.HasPrefix(p[j:], "-]") {
				return &reError{reMsgRange}
			}
			continue
		}
		lo, err := item()
		if err != nil {
			return err
		}
		hi := lo
		if j+1 < len(p) && p[j] == '-' && p[j+1] != ']' {
			j++
			if strings.HasPrefix(p[j:], "[:") {
				return &reError{reMsgRange}
			}
			if hi, err = item(); err != nil {
				return err
			}
			if hi < lo {
				return &reError{reMsgRange}
			}
		}
		b = classRune(b, lo)
		if hi != lo {
			b = append(b, '-')
			b = classRune(b, hi)
		}
	}
	b = append(b, ']')
	t.setAtom()
	t.out = append(t.out, b...)
	t.i = j
	return nil
}

func classRune(b []byte, r rune) []byte {
	if r < utf8.RuneSelf && strings.IndexByte(`\]-^[`, byte(r)) >= 0 {
		b = append(b, '\\')
	}
	return utf8.AppendRune(b, r)
}

// regex is a compiled set of patterns (alternatives, as grep's -e).
type regex struct {
	re     *regexp.Regexp  // Go's engine, leftmost-longest; nil when bt is used
	bt     *regexp2.Regexp // the backtracking engine, for back-references
	groups int
	word   bool // grep -w on Go's engine: matches are checked after the fact
	anch   *regexp.Regexp
}

// compileRegex compiles the patterns, which match as alternatives. timeout
// bounds one match on the backtracking engine.
func compileRegex(patterns []string, syn reSyntax, timeout time.Duration) (*regex, error) {
	if syn.perl {
		return compilePerl(patterns, syn, timeout)
	}
	var alts []string
	groups, backref := 0, false
	for _, p := range patterns {
		tr, err := translateRegex(p, syn, groups)
		if err != nil {
			return nil, err
		}
		groups += tr.groups
		backref = backref || tr.backref
		alts = append(alts, tr.expr)
	}
	flags := "(?s"
	if syn.icase {
		flags += "i"
	}
	if syn.multiline {
		flags += "m"
	}
	flags += ")"
	body := "(?:" + strings.Join(alts, ")|(?:") + ")"
	if len(alts) == 0 {
		body = `[^\x00-\x{10ffff}]` // no pattern matches nothing
	}
	if syn.line {
		body = `^(?:` + body + `)\z`
	}
	r := &regex{groups: groups}
	if backref {
		if syn.word && !syn.line {
			body = `(?<![` + wordClass + `])(?:` + body + `)(?![` + wordClass + `])`
		}
		bt, err := regexp2.Compile(flags+body, regexp2.None)
		if err != nil {
			return nil, &reError{reMsgInvalid}
		}
		bt.MatchTimeout = timeout
		r.bt = bt
		return r, nil
	}
	re, err := regexp.Compile(flags + body)
	if err != nil {
		return nil, goRegexError(err)
	}
	re.Longest()
	r.re = re
	if syn.word && !syn.line {
		r.word = true
		if r.anch, err = regexp.Compile(flags + `^(?:` + body + `)\z`); err != nil {
			return nil, goRegexError(err)
		}
	}
	return r, nil
}

// compilePerl compiles grep -P patterns with regexp2, whose syntax is
// .NET's, close to Perl's.
func compilePerl(patterns []string, syn reSyntax, timeout time.Duration) (*regex, error) {
	if len(patterns) > 1 {
		return nil, &reError{"the -P option only supports a single pattern"}
	}
	body := "(?:" + strings.Join(patterns, "") + ")"
	if syn.word {
		body = `(?<!\w)` + body + `(?!\w)`
	}
	if syn.line {
		body = `^` + body + `\z`
	}
	opt := regexp2.RegexOptions(regexp2.None)
	if syn.icase {
		opt |= regexp2.IgnoreCase
	}
	bt, err := regexp2.Compile(body, opt)
	if err != nil {
		msg := err.Error()
		if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "error parsing regexp") {
			msg = after
		}
		return nil, &reError{msg}
	}
	bt.MatchTimeout = timeout
	return &regex{bt: bt, groups: bt.GetGroupNumbers()[len(bt.GetGroupNumbers())-1]}, nil
}

func goRegexError(err error) error {
	var se *syntax.Error
	if errors.As(err, &se) {
		switch se.Code {
		case syntax.ErrInvalidRepeatSize, syntax.ErrLarge, syntax.ErrNestingDepth:
			return &reError{reMsgBig}
		}
	}
	return &reError{reMsgInvalid}
}

// errRegexTimeout is a match that the backtracking engine gave up.
var errRegexTimeout = errors.New("regular expression match timed out")

// match reports whether s has a match.
func (r *regex) match(s []byte) (bool, error) {
	if r.re != nil && !r.word {
		return r.re.Match(s), nil
	}
	m, err := r.findAll(s, 1)
	return len(m) > 0, err
}

// findAll returns the first n (all if n < 0) successive non-overlapping
// matches of s: for each, the byte offsets of the match and of its groups
// (-1 for a group that took no part). An empty match right after a match
// does not count, as in GNU sed's s///g.
func (r *regex) findAll(s []byte, n int) ([][]int, error) {
	if n == 0 {
		return nil, nil
	}
	if r.re != nil {
		if !r.word {
			return r.re.FindAllSubmatchIndex(s, n), nil
		}
		var out [][]int
		for _, m := range r.re.FindAllSubmatchIndex(s, -1) {
			if m = r.wordMatch(s, m); m != nil {
				out = append(out, m)
				if len(out) == n {
					break
				}
			}
		}
		return out, nil
	}
	return r.findBT(s, n)
}

// wordMatch checks a match for grep -w: not preceded nor followed by a word
// character. Failing that, the longest shorter match from the same start
// that passes, if any (as GNU tries).
func (r *regex) wordMatch(s []byte, m []int) []int {
	a, b := m[0], m[1]
	if !isWordBefore(s, a) {
		for e := b; e > a; e-- {
			if isWordAt(s, e) {
				continue
			}
			if e == b {
				return m
			}
			if sub := r.anch.FindSubmatchIndex(s[a:e]); sub != nil {
				for i := range sub {
					if sub[i] >= 0 {
						sub[i] += a
					}
				}
				return sub
			}
		}
	}
	return nil
}

func isWordRune(c rune) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
		c >= utf8.RuneSelf && c != utf8.RuneError && (unicode.IsLetter(c) || unicode.IsDigit(c))
}

func isWordBefore(s []byte, i int) bool {
	if i <= 0 {
		return false
	}
	c, _ := utf8.DecodeLastRune(s[:i])
	return isWordRune(c)
}

func isWordAt(s []byte, i int) bool {
	if i >= len(s) {
		return false
	}
	c, _ := utf8.DecodeRune(s[i:])
	return isWordRune(c)
}

// findBT is findAll on the backtracking engine, which works on runes.
func (r *regex) findBT(s []byte, n int) ([][]int, error) {
	runes := make([]rune, 0, len(s))
	offs := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRune(s[i:])
		runes = append(runes, c)
		offs = append(offs, i)
		i += size
	}
	offs = append(offs, len(s))
	var out [][]int
	m, err := r.bt.FindRunesMatch(runes)
	prevEnd := -1
	for err == nil && m != nil {
		if !(m.Length == 0 && m.Index == prevEnd) {
			loc := make([]int, 2*(r.groups+1))
			for g := 0; g <= r.groups; g++ {
				loc[2*g], loc[2*g+1] = -1, -1
				if grp := m.GroupByNumber(g); grp != nil && len(grp.Captures) > 0 {
					loc[2*g], loc[2*g+1] = offs[grp.Index], offs[grp.Index+grp.Length]
				}
			}
			out = append(out, loc)
			if len(out) == n {
				return out, nil
			}
		}
		prevEnd = m.Index + m.Length
		m, err = r.bt.FindNextMatch(m)
	}
	if err != nil {
		return out, errRegexTimeout
	}
	return out, nil
}

// reTimeout is the time a backtracking match may take: what is left before
// the call's deadline, at most a minute.
func (c *call) reTimeout() time.Duration {
	d := time.Minute
	if dl, ok := c.ctx.Deadline(); ok {
		if left := time.Until(dl); left < d {
			d = max(left, time.Millisecond)
		}
	}
	return d
}
