package shell

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// bc is the part of GNU bc that models pipe into it: expressions with
// arbitrary precision (+ - * / % ^, comparisons, ! && ||, ++ --, unary
// minus), variables and the assignment operators, scale, ibase and obase,
// length(), scale(), sqrt(), strings, print, quit and halt, several
// statements per line, and with -l the math library's scale of 20 and s,
// c, a, l and e. The arithmetic follows GNU's rules for the scale of each
// result (truncating, never rounding), and the output GNU's format: no
// leading 0 before the point, lines cut with a backslash at 70 characters.
//
// GNU bc compiles and runs its input line by line: a syntax error prints
// "(standard_in) N: syntax error" and drops that line, a runtime error (a
// division by zero) the rest of its line; bc then goes on and exits 0. This
// one does the same. Numbers are capped at bcMaxDigits digits so that
// 2^2^2^2^99 or scale=10^9 fail with an error instead of exhausting the
// memory. Not supported: define, if, while, for, arrays, read(), j(), and
// statements spanning lines (other than a line ending in a backslash).
func cmdBc(c *call) int {
	o, files, ok := c.getopt(c.args, "lqsw", "", map[string]byte{
		"mathlib": 'l', "quiet": 'q', "standard": 's', "warn": 'w',
	})
	if !ok {
		return 1
	}
	b := &bc{c: c, vars: map[string]bnum{}, ibase: 10, obase: 10, mathlib: o.has('l')}
	if b.mathlib {
		b.scale = 20
	}
	w := c.out()
	b.w = w
	if len(files) == 0 {
		files = []string{"-"}
	}
	lineNo := 0
	for _, f := range files {
		r, done, err := c.openInput(f)
		if err != nil {
			c.errorf("File %s is unavailable.", f)
			c.flush(w, 1)
			return 1
		}
		lr := c.lines(r)
		pending := ""
		for !c.stopped() && !b.quit {
			line, _, err := lr.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					c.errorf("%s: %s", f, errText(err))
				}
				break
			}
			lineNo++
			s := string(line)
			if strings.HasSuffix(s, `\`) {
				pending += strings.TrimSuffix(s, `\`)
				continue
			}
			b.runLine(pending+s, lineNo)
			pending = ""
			if w.Buffered() > 16<<10 {
				if err := w.Flush(); err != nil {
					done()
					return c.writeFailed(err)
				}
			}
		}
		if pending != "" && !b.quit {
			b.runLine(pending, lineNo)
		}
		done()
		if b.quit {
			break
		}
	}
	return c.flush(w, 0)
}

// bcMaxDigits caps the digits of any number bc holds.
const bcMaxDigits = 50000

// bnum is v / 10^s.
type bnum struct {
	v *big.Int
	s int
}

type bc struct {
	c       *call
	w       interface{ WriteString(string) (int, error) }
	vars    map[string]bnum
	scale   int
	ibase   int
	obase   int
	last    bnum
	mathlib bool
	quit    bool
	adr     int // a count of operations, for GNU's "adr=" in messages
}

// bcError is a runtime error: it ends the current line.
type bcError struct {
	msg string
}

func (e *bcError) Error() string { return e.msg }

// errBcSyntax is a syntax error.
var errBcSyntax = errors.New("syntax error")

func (b *bc) runtimeErr(format string, args ...any) error {
	return &bcError{msg: fmt.Sprintf(format, args...)}
}

// runLine parses and runs one line of input.
func (b *bc) runLine(line string, lineNo int) {
	toks, err := bcLex(line)
	if err != nil {
		fmt.Fprintf(b.c.stderr, "(standard_in) %d: %s\n", lineNo, err)
		return
	}
	p := &bcParser{toks: toks}
	stmts, err := p.parseLine()
	if err != nil {
		fmt.Fprintf(b.c.stderr, "(standard_in) %d: syntax error\n", lineNo)
		return
	}
	b.adr = 0
	for _, st := range stmts {
		if b.quit || b.c.stopped() {
			return
		}
		if err := b.exec(st); err != nil {
			var be *bcError
			if errors.As(err, &be) {
				b.flushOut()
				fmt.Fprintf(b.c.stderr, "Runtime error (func=(main), adr=%d): %s\n", b.adr, be.msg)
				return
			}
			return
		}
	}
}

func (b *bc) flushOut() {
	if f, ok := b.w.(interface{ Flush() error }); ok {
		f.Flush()
	}
}

// Tokens.
type bcTok struct {
	kind byte // 'n' number, 'i' name, 's' string, 'o' operator, ';' separator
	text string
}

func bcLex(s string) ([]bcTok, error) {
	var toks []bcTok
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			i++
		case ch == '#':
			i = len(s)
		case ch == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, errBcSyntax
			}
			i += end + 4
		case ch == ';':
			toks = append(toks, bcTok{';', ";"})
			i++
		case ch >= '0' && ch <= '9' || ch >= 'A' && ch <= 'F' || ch == '.':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] >= 'A' && s[j] <= 'F' || s[j] == '.') {
				j++
			}
			if strings.Count(s[i:j], ".") > 1 {
				return nil, errBcSyntax
			}
			if j-i > bcMaxDigits {
				return nil, errors.New("number too long")
			}
			toks = append(toks, bcTok{'n', s[i:j]})
			i = j
		case ch >= 'a' && ch <= 'z':
			j := i
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
				j++
			}
			toks = append(toks, bcTok{'i', s[i:j]})
			i = j
		case ch == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, errBcSyntax
			}
			toks = append(toks, bcTok{'s', s[i+1 : i+1+end]})
			i += end + 2
		default:
			op := ""
			for _, cand := range []string{"++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "==", "<=", ">=", "!=", "&&", "||",
				"+", "-", "*", "/", "%", "^", "=", "<", ">", "!", "(", ")", ",", "{", "}"} {
				if strings.HasPrefix(s[i:], cand) {
					op = cand
					break
				}
			}
			if op == "" {
				return nil, fmt.Errorf("illegal character: %c", ch)
			}
			toks = append(toks, bcTok{'o', op})
			i += len(op)
		}
	}
	return toks, nil
}

// AST.
type bcNode struct {
	op   string // "num", "var", "call", "str", "neg", "not", "pre", "post", "assign", or a binary operator
	text string // number text, variable or function name, string, or the ++/--/assignment operator
	args []*bcNode
}

type bcStmt struct {
	kind  string // "expr", "str", "print", "quit"
	expr  *bcNode
	items []*bcNode // print
}

type bcParser struct {
	toks  []bcTok
	pos   int
	depth int
}

func (p *bcParser) peek() bcTok {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return bcTok{}
}

func (p *bcParser) isOp(op string) bool {
	t := p.peek()
	return t.kind == 'o' && t.text == op
}

func (p *bcParser) parseLine() ([]bcStmt, error) {
	var stmts []bcStmt
	for p.pos < len(p.toks) {
		if p.peek().kind == ';' {
			p.pos++
			continue
		}
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, st)
		if p.pos < len(p.toks) && p.peek().kind != ';' {
			return nil, errBcSyntax
		}
	}
	return stmts, nil
}

func (p *bcParser) statement() (bcStmt, error) {
	t := p.peek()
	switch {
	case t.kind == 's':
		p.pos++
		return bcStmt{kind: "str", expr: &bcNode{op: "str", text: t.text}}, nil
	case t.kind == 'i' && (t.text == "quit" || t.text == "halt"):
		p.pos++
		return bcStmt{kind: "quit"}, nil
	case t.kind == 'i' && t.text == "print":
		p.pos++
		var items []*bcNode
		for {
			if p.peek().kind == 's' {
				items = append(items, &bcNode{op: "str", text: p.peek().text})
				p.pos++
			} else {
				e, err := p.expr()
				if err != nil {
					return bcStmt{}, err
				}
				items = append(items, e)
			}
			if !p.isOp(",") {
				break
			}
			p.pos++
		}
		return bcStmt{kind: "print", items: items}, nil
	case t.kind == 'i' && bcKeyword(t.text):
		return bcStmt{}, errBcSyntax
	}
	e, err := p.expr()
	if err != nil {
		return bcStmt{}, err
	}
	return bcStmt{kind: "expr", expr: e}, nil
}

func bcKeyword(s string) bool {
	switch s {
	case "define", "if", "else", "while", "for", "break", "continue", "return", "auto", "limits", "warranty":
		return true
	}
	return false
}

// expr parses an expression: assignment, then || && ! relational + * ^
// unary ++/--.
func (p *bcParser) expr() (*bcNode, error) {
	if p.depth++; p.depth > 200 {
		return nil, errBcSyntax
	}
	defer func() { p.depth-- }()
	t := p.peek()
	if t.kind == 'i' && p.pos+1 < len(p.toks) {
		n := p.toks[p.pos+1]
		if n.kind == 'o' && (n.text == "=" || len(n.text) == 2 && n.text[1] == '=' && strings.IndexByte("+-*/%^", n.text[0]) >= 0) {
			if bcKeyword(t.text) {
				return nil, errBcSyntax
			}
			p.pos += 2
			rhs, err := p.expr()
			if err != nil {
				return nil, err
			}
			return &bcNode{op: "assign", text: n.text, args: []*bcNode{{op: "var", text: t.text}, rhs}}, nil
		}
	}
	return p.binary(0)
}

var bcLevels = [][]string{{"||"}, {"&&"}, {"==", "!=", "<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}}

func (p *bcParser) binary(level int) (*bcNode, error) {
	if level == len(bcLevels) {
		return p.power()
	}
	if level == 2 && p.isOp("!") { // ! binds looser than the comparisons
		p.pos++
		x, err := p.binary(2)
		if err != nil {
			return nil, err
		}
		return &bcNode{op: "not", args: []*bcNode{x}}, nil
	}
	left, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		found := false
		for _, op := range bcLevels[level] {
			if t.kind == 'o' && t.text == op {
				found = true
			}
		}
		if !found {
			return left, nil
		}
		p.pos++
		right, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		left = &bcNode{op: t.text, args: []*bcNode{left, right}}
	}
}

func (p *bcParser) power() (*bcNode, error) {
	base, err := p.unary()
	if err != nil {
		return nil, err
	}
	if p.isOp("^") {
		p.pos++
		if p.depth++; p.depth > 200 {
			return nil, errBcSyntax
		}
		exp, err := p.power()
		p.depth--
		if err != nil {
			return nil, err
		}
		return &bcNode{op: "^", args: []*bcNode{base, exp}}, nil
	}
	return base, nil
}

func (p *bcParser) unary() (*bcNode, error) {
	if p.depth++; p.depth > 200 {
		return nil, errBcSyntax
	}
	defer func() { p.depth-- }()
	switch {
	case p.isOp("-"):
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &bcNode{op: "neg", args: []*bcNode{x}}, nil
	case p.isOp("!"):
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &bcNode{op: "not", args: []*bcNode{x}}, nil
	case p.isOp("++") || p.isOp("--"):
		op := p.peek().text
		p.pos++
		t := p.peek()
		if t.kind != 'i' || bcKeyword(t.text) {
			return nil, errBcSyntax
		}
		p.pos++
		return &bcNode{op: "pre", text: op, args: []*bcNode{{op: "var", text: t.text}}}, nil
	}
	return p.primary()
}

func (p *bcParser) primary() (*bcNode, error) {
	t := p.peek()
	switch t.kind {
	case 'n':
		p.pos++
		return &bcNode{op: "num", text: t.text}, nil
	case 'i':
		p.pos++
		if p.isOp("(") {
			p.pos++
			var args []*bcNode
			for !p.isOp(")") {
				a, err := p.expr()
				if err != nil {
					return nil, err
				}
				args = append(args, a)
				if p.isOp(",") {
					p.pos++
				} else if !p.isOp(")") {
					return nil, errBcSyntax
				}
			}
			p.pos++
			return &bcNode{op: "call", text: t.text, args: args}, nil
		}
		if bcKeyword(t.text) || t.text == "quit" || t.text == "halt" || t.text == "print" {
			return nil, errBcSyntax
		}
		v := &bcNode{op: "var", text: t.text}
		if p.isOp("++") || p.isOp("--") {
			op := p.peek().text
			p.pos++
			return &bcNode{op: "post", text: op, args: []*bcNode{v}}, nil
		}
		return v, nil
	case 'o':
		if t.text == "(" {
			p.pos++
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			if !p.isOp(")") {
				return nil, errBcSyntax
			}
			p.pos++
			return e, nil
		}
	}
	return nil, errBcSyntax
}

func (b *bc) exec(st bcStmt) error {
	switch st.kind {
	case "quit":
		b.quit = true
	case "str":
		b.w.WriteString(st.expr.text)
	case "print":
		for _, it := range st.items {
			if it.op == "str" {
				b.w.WriteString(bcUnescape(it.text))
				continue
			}
			v, err := b.eval(it)
			if err != nil {
				return err
			}
			b.last = v
			b.w.WriteString(b.format(v, false))
		}
	case "expr":
		v, err := b.eval(st.expr)
		if err != nil {
			return err
		}
		if st.expr.op != "assign" {
			b.last = v
			b.w.WriteString(b.format(v, true))
			b.w.WriteString("\n")
		}
	}
	return nil
}

func bcUnescape(s string) string {
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			out.WriteByte('\n')
		case 't':
			out.WriteByte('\t')
		case 'a':
			out.WriteByte('\a')
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'r':
			out.WriteByte('\r')
		case 'q':
			out.WriteByte('"')
		case 'e':
			out.WriteByte('\\')
		default:
			out.WriteByte('\\')
			out.WriteByte(s[i])
		}
	}
	return out.String()
}

func bcZero() bnum { return bnum{v: new(big.Int)} }

func bcInt(n int64) bnum { return bnum{v: big.NewInt(n)} }

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// rescale returns x with scale s, truncating toward zero.
func rescale(x bnum, s int) bnum {
	switch {
	case s == x.s:
		return x
	case s > x.s:
		return bnum{v: new(big.Int).Mul(x.v, pow10(s-x.s)), s: s}
	}
	return bnum{v: new(big.Int).Quo(x.v, pow10(x.s-s)), s: s}
}

func bcDigits(x bnum) int { return len(new(big.Int).Abs(x.v).String()) }

func (b *bc) check(x bnum) (bnum, error) {
	if x.v.BitLen() > bcMaxDigits*10/3+10 || x.s > bcMaxDigits {
		return x, b.runtimeErr("number too long (over %d digits)", bcMaxDigits)
	}
	return x, nil
}

func (b *bc) eval(n *bcNode) (bnum, error) {
	if b.c.stopped() {
		return bnum{}, errors.New("stopped")
	}
	b.adr++
	switch n.op {
	case "num":
		return b.parseNum(n.text)
	case "var":
		return b.get(n.text), nil
	case "str":
		return bcZero(), nil
	case "neg":
		x, err := b.eval(n.args[0])
		if err != nil {
			return x, err
		}
		return bnum{v: new(big.Int).Neg(x.v), s: x.s}, nil
	case "not":
		x, err := b.eval(n.args[0])
		if err != nil {
			return x, err
		}
		return bcBool(x.v.Sign() == 0), nil
	case "pre", "post":
		name := n.args[0].text
		old := b.get(name)
		one := bcInt(1)
		var nv bnum
		if n.text == "++" {
			nv = bcAdd(old, one)
		} else {
			nv = bcSub(old, one)
		}
		if err := b.set(name, nv); err != nil {
			return nv, err
		}
		if n.op == "pre" {
			return b.get(name), nil
		}
		return old, nil
	case "assign":
		name := n.args[0].text
		v, err := b.eval(n.args[1])
		if err != nil {
			return v, err
		}
		if n.text != "=" {
			if v, err = b.binop(n.text[:1], b.get(name), v); err != nil {
				return v, err
			}
		}
		if err := b.set(name, v); err != nil {
			return v, err
		}
		return b.get(name), nil
	case "call":
		return b.call(n)
	case "&&", "||":
		x, err := b.eval(n.args[0])
		if err != nil {
			return x, err
		}
		if n.op == "&&" && x.v.Sign() == 0 {
			return bcBool(false), nil
		}
		if n.op == "||" && x.v.Sign() != 0 {
			return bcBool(true), nil
		}
		y, err := b.eval(n.args[1])
		if err != nil {
			return y, err
		}
		return bcBool(y.v.Sign() != 0), nil
	}
	x, err := b.eval(n.args[0])
	if err != nil {
		return x, err
	}
	y, err := b.eval(n.args[1])
	if err != nil {
		return y, err
	}
	return b.binop(n.op, x, y)
}

func bcBool(t bool) bnum {
	if t {
		return bcInt(1)
	}
	return bcZero()
}

func bcCmp(x, y bnum) int {
	s := max(x.s, y.s)
	return rescale(x, s).v.Cmp(rescale(y, s).v)
}

func bcAdd(x, y bnum) bnum {
	s := max(x.s, y.s)
	return bnum{v: new(big.Int).Add(rescale(x, s).v, rescale(y, s).v), s: s}
}

func bcSub(x, y bnum) bnum {
	s := max(x.s, y.s)
	return bnum{v: new(big.Int).Sub(rescale(x, s).v, rescale(y, s).v), s: s}
}

// div divides at scale s.
func (b *bc) div(x, y bnum, s int) (bnum, error) {
	if y.v.Sign() == 0 {
		return bnum{}, b.runtimeErr("Divide by zero")
	}
	num := new(big.Int).Mul(x.v, pow10(y.s+s))
	den := new(big.Int).Mul(y.v, pow10(x.s))
	return bnum{v: num.Quo(num, den), s: s}, nil
}

func (b *bc) binop(op string, x, y bnum) (bnum, error) {
	var r bnum
	switch op {
	case "+":
		r = bcAdd(x, y)
	case "-":
		r = bcSub(x, y)
	case "*":
		full := bnum{v: new(big.Int).Mul(x.v, y.v), s: x.s + y.s}
		r = rescale(full, min(x.s+y.s, max(b.scale, x.s, y.s)))
	case "/":
		var err error
		if r, err = b.div(x, y, b.scale); err != nil {
			return r, err
		}
	case "%":
		q, err := b.div(x, y, b.scale)
		if err != nil {
			return q, err
		}
		prod := bnum{v: new(big.Int).Mul(q.v, y.v), s: q.s + y.s}
		r = rescale(bcSub(x, prod), max(b.scale+y.s, x.s))
	case "^":
		return b.pow(x, y)
	case "==":
		r = bcBool(bcCmp(x, y) == 0)
	case "!=":
		r = bcBool(bcCmp(x, y) != 0)
	case "<":
		r = bcBool(bcCmp(x, y) < 0)
	case "<=":
		r = bcBool(bcCmp(x, y) <= 0)
	case ">":
		r = bcBool(bcCmp(x, y) > 0)
	case ">=":
		r = bcBool(bcCmp(x, y) >= 0)
	default:
		return bnum{}, errBcSyntax
	}
	return b.check(r)
}

func (b *bc) pow(x, y bnum) (bnum, error) {
	e := rescale(y, 0)
	if bcCmp(e, y) != 0 {
		b.flushOut()
		fmt.Fprintf(b.c.stderr, "Runtime warning (func=(main), adr=%d): non-zero scale in exponent\n", b.adr)
	}
	if !e.v.IsInt64() {
		return bnum{}, b.runtimeErr("exponent too large in raise")
	}
	n := e.v.Int64()
	neg := n < 0
	if neg {
		n = -n
	}
	if x.v.Sign() == 0 {
		if neg {
			return bnum{}, b.runtimeErr("Divide by zero")
		}
		if n == 0 {
			return bcInt(1), nil
		}
		return bcZero(), nil
	}
	abs := new(big.Int).Abs(x.v)
	if abs.Cmp(pow10(x.s)) != 0 || x.s > 0 {
		// |x| != 1: the result has about n * digits(x) digits.
		if n > bcMaxDigits*4 || int64(bcDigits(x)+x.s)*n > bcMaxDigits*4 {
			return bnum{}, b.runtimeErr("exponent too large in raise")
		}
	}
	if n > 1<<20 {
		n = n % 2 // x is 1 or -1
		if n == 0 {
			n = 2
		}
	}
	full := bnum{v: new(big.Int).Exp(x.v, big.NewInt(n), nil), s: x.s * int(n)}
	if neg {
		return b.div(bcInt(1), full, b.scale)
	}
	return b.check(rescale(full, min(x.s*int(n), max(b.scale, x.s))))
}

func (b *bc) get(name string) bnum {
	switch name {
	case "scale":
		return bcInt(int64(b.scale))
	case "ibase":
		return bcInt(int64(b.ibase))
	case "obase":
		return bcInt(int64(b.obase))
	case "last":
		if b.last.v == nil {
			return bcZero()
		}
		return b.last
	}
	if v, ok := b.vars[name]; ok {
		return v
	}
	return bcZero()
}

func (b *bc) set(name string, v bnum) error {
	iv := rescale(v, 0)
	small := func(lo, hi int64, what string) (int, error) {
		if iv.v.Sign() < 0 && lo >= 0 {
			return 0, b.runtimeErr("negative %s", what)
		}
		if !iv.v.IsInt64() || iv.v.Int64() > hi {
			return 0, b.runtimeErr("%s too large", what)
		}
		if iv.v.Int64() < lo {
			return 0, b.runtimeErr("%s too small", what)
		}
		return int(iv.v.Int64()), nil
	}
	// A refused value leaves the setting as it was (an obase of 0 left
	// behind divided by zero at the next print: FuzzBc).
	keep := func(dst *int, lo, hi int64, what string) error {
		n, err := small(lo, hi, what)
		if err == nil {
			*dst = n
		}
		return err
	}
	var err error
	switch name {
	case "scale":
		err = keep(&b.scale, 0, bcMaxDigits, "scale")
	case "ibase":
		err = keep(&b.ibase, 2, 16, "ibase")
	case "obase":
		err = keep(&b.obase, 2, 999, "obase")
	case "last":
		b.last = v
	default:
		b.vars[name] = v
	}
	return err
}

// parseNum reads a number in ibase. A single digit is its own value
// whatever ibase is, as in GNU bc.
func (b *bc) parseNum(text string) (bnum, error) {
	intPart, frac, _ := strings.Cut(text, ".")
	base := int64(b.ibase)
	if len(text) == 1 {
		base = 16
	}
	digit := func(ch byte) int64 {
		if ch >= 'A' {
			return int64(ch-'A') + 10
		}
		return int64(ch - '0')
	}
	v := new(big.Int)
	bb := big.NewInt(base)
	for i := 0; i < len(intPart); i++ {
		v.Mul(v, bb)
		v.Add(v, big.NewInt(digit(intPart[i])))
	}
	if frac == "" {
		return bnum{v: v}, nil
	}
	// value = v + f / base^len(frac), at scale len(frac).
	fnum := new(big.Int)
	for i := 0; i < len(frac); i++ {
		fnum.Mul(fnum, bb)
		fnum.Add(fnum, big.NewInt(digit(frac[i])))
	}
	den := new(big.Int).Exp(bb, big.NewInt(int64(len(frac))), nil)
	fnum.Mul(fnum, pow10(len(frac)))
	fnum.Quo(fnum, den)
	v.Mul(v, pow10(len(frac)))
	v.Add(v, fnum)
	return bnum{v: v, s: len(frac)}, nil
}

// format prints x in obase, GNU's way: "-.5", "0" for zero, and lines cut
// at 70 characters (68 digits and a backslash) when split is set.
func (b *bc) format(x bnum, split bool) string {
	var s string
	if b.obase == 10 {
		if x.v.Sign() == 0 {
			s = "0"
		} else {
			digits := new(big.Int).Abs(x.v).String()
			if len(digits) <= x.s {
				digits = strings.Repeat("0", x.s-len(digits)+1) + digits
			}
			ip, fp := digits[:len(digits)-x.s], digits[len(digits)-x.s:]
			ip = strings.TrimLeft(ip, "0")
			s = ip
			if x.s > 0 {
				s += "." + fp
			}
			if x.v.Sign() < 0 {
				s = "-" + s
			}
		}
	} else {
		s = b.formatBase(x)
	}
	if !split {
		return s
	}
	var out strings.Builder
	for len(s) > 69 {
		out.WriteString(s[:68])
		out.WriteString("\\\n")
		s = s[68:]
	}
	out.WriteString(s)
	return out.String()
}

func (b *bc) formatBase(x bnum) string {
	base := big.NewInt(int64(b.obase))
	neg := x.v.Sign() < 0
	abs := bnum{v: new(big.Int).Abs(x.v), s: x.s}
	ip := rescale(abs, 0).v
	fracNum := new(big.Int).Sub(abs.v, new(big.Int).Mul(ip, pow10(x.s)))
	digit := func(d int64) string {
		if b.obase <= 16 {
			return string("0123456789ABCDEF"[d])
		}
		width := len(fmt.Sprint(b.obase - 1))
		return fmt.Sprintf(" %0*d", width, d)
	}
	var ds []string
	q := new(big.Int).Set(ip)
	m := new(big.Int)
	for q.Sign() > 0 {
		q.QuoRem(q, base, m)
		ds = append(ds, digit(m.Int64()))
	}
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	if len(ds) == 0 {
		ds = []string{digit(0)}
		if x.s > 0 && x.v.Sign() != 0 {
			ds = nil
		}
	}
	for i := len(ds) - 1; i >= 0; i-- {
		sb.WriteString(ds[i])
	}
	if x.s > 0 {
		sb.WriteByte('.')
		one := pow10(x.s)
		t := big.NewInt(1)
		limit := pow10(x.s) // t_num's length <= scale: t < 10^scale
		_ = one
		f := new(big.Int).Set(fracNum)
		for t.Cmp(limit) < 0 {
			f.Mul(f, base)
			d := new(big.Int)
			d.QuoRem(f, pow10(x.s), f)
			sb.WriteString(digit(d.Int64()))
			t.Mul(t, base)
		}
	}
	return sb.String()
}

func (b *bc) call(n *bcNode) (bnum, error) {
	if len(n.args) != 1 {
		return bnum{}, b.runtimeErr("Function %s not defined.", n.text)
	}
	x, err := b.eval(n.args[0])
	if err != nil {
		return x, err
	}
	switch n.text {
	case "length":
		if x.v.Sign() == 0 {
			return bcInt(int64(max(1, x.s))), nil
		}
		d := bcDigits(x)
		if d < x.s {
			d = x.s
		}
		return bcInt(int64(d)), nil
	case "scale":
		return bcInt(int64(x.s)), nil
	case "sqrt":
		if x.v.Sign() < 0 {
			return bnum{}, b.runtimeErr("Square root of a negative number")
		}
		rs := max(b.scale, x.s)
		v := new(big.Int).Mul(x.v, pow10(2*rs-x.s))
		return b.check(bnum{v: v.Sqrt(v), s: rs})
	}
	if !b.mathlib || !strings.Contains("scale", n.text) || len(n.text) != 1 {
		return bnum{}, b.runtimeErr("Function %s not defined.", n.text)
	}
	return b.mathFunc(n.text[0], x)
}

// mathFunc is one of the -l functions s, c, a, l, e, computed in fixed
// point with guard digits and truncated to scale, as the library's own
// results are.
func (b *bc) mathFunc(f byte, x bnum) (bnum, error) {
	intDigits := max(bcDigits(x)-x.s, 0)
	w := b.scale + 12 + intDigits
	one := pow10(w)
	fx := rescale(x, w).v
	stop := b.c.stopped
	var r *big.Int
	switch f {
	case 'e':
		if x.v.Sign() > 0 && intDigits > 6 || bcCmp(x, bcInt(bcMaxDigits*2)) > 0 {
			return bnum{}, b.runtimeErr("exponent too large in raise")
		}
		if bcCmp(x, bcInt(-bcMaxDigits*2)) < 0 {
			return bcZero(), nil
		}
		r = fixedExp(stop, fx, one)
	case 'l':
		if x.v.Sign() <= 0 {
			return bnum{v: new(big.Int).Sub(big.NewInt(1), pow10(b.scale))}, nil
		}
		r = fixedLn(stop, fx, one)
	case 'a':
		r = fixedAtan(stop, fx, one)
	case 's', 'c':
		if intDigits > 1000 {
			return bnum{}, b.runtimeErr("argument too large")
		}
		r = fixedSin(stop, fx, one, f == 'c')
	default:
		return bnum{}, b.runtimeErr("Function %c not defined.", f)
	}
	return b.check(rescale(bnum{v: r, s: w}, b.scale))
}

func fmul(a, b, one *big.Int) *big.Int {
	r := new(big.Int).Mul(a, b)
	return r.Quo(r, one)
}

func fdiv(a, b, one *big.Int) *big.Int {
	r := new(big.Int).Mul(a, one)
	return r.Quo(r, b)
}

func fixedExp(stop func() bool, x, one *big.Int) *big.Int {
	if x.Sign() < 0 {
		return fdiv(one, fixedExp(stop, new(big.Int).Neg(x), one), one)
	}
	half := new(big.Int).Rsh(one, 1)
	y := new(big.Int).Set(x)
	k := 0
	for y.Cmp(half) > 0 {
		y.Rsh(y, 1)
		k++
	}
	sum := new(big.Int).Set(one)
	term := new(big.Int).Set(one)
	for i := int64(1); term.Sign() != 0 && !stop(); i++ {
		term = fmul(term, y, one)
		term.Quo(term, big.NewInt(i))
		sum.Add(sum, term)
	}
	for ; k > 0 && !stop(); k-- {
		sum = fmul(sum, sum, one)
	}
	return sum
}

func fixedLn(stop func() bool, x, one *big.Int) *big.Int {
	two := new(big.Int).Lsh(one, 1)
	half := new(big.Int).Rsh(one, 1)
	y := new(big.Int).Set(x)
	k := 0
	for (y.Cmp(two) > 0 || y.Cmp(half) < 0) && k < 4000 && !stop() {
		y = new(big.Int).Sqrt(new(big.Int).Mul(y, one))
		k++
	}
	z := fdiv(new(big.Int).Sub(y, one), new(big.Int).Add(y, one), one)
	z2 := fmul(z, z, one)
	sum := new(big.Int).Set(z)
	term := new(big.Int).Set(z)
	for i := int64(3); !stop(); i += 2 {
		term = fmul(term, z2, one)
		t := new(big.Int).Quo(term, big.NewInt(i))
		if t.Sign() == 0 {
			break
		}
		sum.Add(sum, t)
	}
	return sum.Lsh(sum, uint(k+1))
}

// atanSeries is atan(x) for a small x.
func atanSeries(stop func() bool, x, one *big.Int) *big.Int {
	x2 := fmul(x, x, one)
	sum := new(big.Int).Set(x)
	term := new(big.Int).Set(x)
	for i := int64(3); !stop(); i += 2 {
		term = fmul(term, x2, one)
		term.Neg(term)
		t := new(big.Int).Quo(term, big.NewInt(i))
		if t.Sign() == 0 {
			break
		}
		sum.Add(sum, t)
	}
	return sum
}

func fixedPi(stop func() bool, one *big.Int) *big.Int {
	a := atanSeries(stop, new(big.Int).Quo(one, big.NewInt(5)), one)
	c := atanSeries(stop, new(big.Int).Quo(one, big.NewInt(239)), one)
	a.Mul(a, big.NewInt(16))
	c.Mul(c, big.NewInt(4))
	return a.Sub(a, c)
}

func fixedAtan(stop func() bool, x, one *big.Int) *big.Int {
	if x.Sign() < 0 {
		r := fixedAtan(stop, new(big.Int).Neg(x), one)
		return r.Neg(r)
	}
	if x.Cmp(one) > 0 {
		halfPi := new(big.Int).Rsh(fixedPi(stop, one), 1)
		return halfPi.Sub(halfPi, fixedAtan(stop, fdiv(one, x, one), one))
	}
	small := new(big.Int).Quo(one, big.NewInt(5))
	k := 0
	y := new(big.Int).Set(x)
	for y.Cmp(small) > 0 && !stop() {
		// atan(y) = 2 atan(y / (1 + sqrt(1 + y²)))
		s := new(big.Int).Add(one, fmul(y, y, one))
		s = new(big.Int).Sqrt(s.Mul(s, one))
		y = fdiv(y, s.Add(s, one), one)
		k++
	}
	r := atanSeries(stop, y, one)
	return r.Lsh(r, uint(k))
}

func fixedSin(stop func() bool, x, one *big.Int, cosine bool) *big.Int {
	pi := fixedPi(stop, one)
	y := new(big.Int).Set(x)
	if cosine {
		y.Add(y, new(big.Int).Rsh(pi, 1))
	}
	twoPi := new(big.Int).Lsh(pi, 1)
	// y -= 2π·round(y / 2π)
	q := new(big.Int).Quo(new(big.Int).Add(y, pi), twoPi)
	if y.Sign() < 0 {
		q = new(big.Int).Quo(new(big.Int).Sub(y, pi), twoPi)
	}
	y.Sub(y, q.Mul(q, twoPi))
	y2 := fmul(y, y, one)
	sum := new(big.Int).Set(y)
	term := new(big.Int).Set(y)
	for i := int64(1); term.Sign() != 0 && !stop(); i++ {
		term = fmul(term, y2, one)
		term.Quo(term, big.NewInt((2*i)*(2*i+1)))
		term.Neg(term)
		sum.Add(sum, term)
	}
	return sum
}
