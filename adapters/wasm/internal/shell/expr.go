package shell

import (
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// exprError is an error of expr: GNU's message and exit status (2 for a
// syntax error, a non-integer argument, a division by zero or a bad
// regular expression).
type exprError struct{ msg string }

func (e *exprError) Error() string { return e.msg }

// exprValue is a value of expr: an integer (n set) or a string.
type exprValue struct {
	n *big.Int
	s string
}

// exprMaxDepth bounds the nesting of parentheses and prefix operators: the
// parser recurses once per level.
const exprMaxDepth = 1000

// exprParser evaluates an expr expression, as GNU's does, in one pass:
// evaluate is false in the branch of | or & that is not taken, whose
// errors (division by zero) do not count.
type exprParser struct {
	c     *call
	args  []string
	i     int
	depth int
}

func (p *exprParser) peek(s string) bool { return p.i < len(p.args) && p.args[p.i] == s }

func (p *exprParser) accept(s string) bool {
	if p.peek(s) {
		p.i++
		return true
	}
	return false
}

// isExprInteger reports whether s is an integer as expr reads one:
// digits, after an optional minus sign.
func isExprInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return isDigits(s)
}

func (v exprValue) String() string {
	if v.n != nil {
		return v.n.String()
	}
	return v.s
}

// null reports whether v is false for expr: empty, or an integer 0
// (including "00" and "-0").
func (v exprValue) null() bool {
	if v.n != nil {
		return v.n.Sign() == 0
	}
	if v.s == "" {
		return true
	}
	s := strings.TrimPrefix(v.s, "-")
	return s != "" && strings.Trim(s, "0") == ""
}

func (v exprValue) toInt() (*big.Int, bool) {
	if v.n != nil {
		return v.n, true
	}
	if !isExprInteger(v.s) {
		return nil, false
	}
	n, ok := new(big.Int).SetString(v.s, 10)
	return n, ok
}

func exprInt(n int64) exprValue { return exprValue{n: big.NewInt(n)} }

func exprBool(b bool) exprValue {
	if b {
		return exprInt(1)
	}
	return exprInt(0)
}

func (p *exprParser) enter() error {
	p.depth++
	if p.depth > exprMaxDepth {
		return &exprError{"expression nested too deeply"}
	}
	if p.depth%64 == 0 && p.c != nil && p.c.stopped() {
		return &exprError{"stopped"}
	}
	return nil
}

// or is OR: AND { "|" AND }.
func (p *exprParser) or(evaluate bool) (exprValue, error) {
	if err := p.enter(); err != nil {
		return exprValue{}, err
	}
	defer func() { p.depth-- }()
	l, err := p.and(evaluate)
	if err != nil {
		return l, err
	}
	for p.accept("|") {
		r, err := p.and(evaluate && l.null())
		if err != nil {
			return r, err
		}
		if l.null() {
			l = r
			if l.null() {
				l = exprInt(0)
			}
		}
	}
	return l, nil
}

// and is AND: CMP { "&" CMP }.
func (p *exprParser) and(evaluate bool) (exprValue, error) {
	l, err := p.compare(evaluate)
	if err != nil {
		return l, err
	}
	for p.accept("&") {
		r, err := p.compare(evaluate && !l.null())
		if err != nil {
			return r, err
		}
		if l.null() || r.null() {
			l = exprInt(0)
		}
	}
	return l, nil
}

var exprComparisons = []string{"<", "<=", "=", "==", "!=", ">=", ">"}

// compare is CMP: ADD { op ADD }, numerically when both sides are integers.
func (p *exprParser) compare(evaluate bool) (exprValue, error) {
	l, err := p.sum(evaluate)
	if err != nil {
		return l, err
	}
	for p.i < len(p.args) && slices.Contains(exprComparisons, p.args[p.i]) {
		op := p.args[p.i]
		p.i++
		r, err := p.sum(evaluate)
		if err != nil {
			return r, err
		}
		if !evaluate {
			continue
		}
		var cmp int
		ln, lok := l.toInt()
		rn, rok := r.toInt()
		if lok && rok {
			cmp = ln.Cmp(rn)
		} else {
			cmp = strings.Compare(l.String(), r.String())
		}
		switch op {
		case "<":
			l = exprBool(cmp < 0)
		case "<=":
			l = exprBool(cmp <= 0)
		case "=", "==":
			l = exprBool(cmp == 0)
		case "!=":
			l = exprBool(cmp != 0)
		case ">=":
			l = exprBool(cmp >= 0)
		default:
			l = exprBool(cmp > 0)
		}
	}
	return l, nil
}

// exprArith applies op to two integers.
func exprArith(op string, l, r exprValue) (exprValue, error) {
	a, aok := l.toInt()
	b, bok := r.toInt()
	if !aok || !bok {
		return exprValue{}, &exprError{"non-integer argument"}
	}
	z := new(big.Int)
	switch op {
	case "+":
		z.Add(a, b)
	case "-":
		z.Sub(a, b)
	case "*":
		z.Mul(a, b)
	case "/", "%":
		if b.Sign() == 0 {
			return exprValue{}, &exprError{"division by zero"}
		}
		if op == "/" {
			z.Quo(a, b)
		} else {
			z.Rem(a, b)
		}
	}
	return exprValue{n: z}, nil
}

// sum is ADD: MUL { ("+" | "-") MUL }.
func (p *exprParser) sum(evaluate bool) (exprValue, error) {
	return p.arith(evaluate, p.product, "+", "-")
}

// product is MUL: MATCH { ("*" | "/" | "%") MATCH }.
func (p *exprParser) product(evaluate bool) (exprValue, error) {
	return p.arith(evaluate, p.match, "*", "/", "%")
}

// arith parses operand { op operand } for the arithmetic operators ops,
// left to right.
func (p *exprParser) arith(evaluate bool, operand func(bool) (exprValue, error), ops ...string) (exprValue, error) {
	l, err := operand(evaluate)
	if err != nil {
		return l, err
	}
	for p.i < len(p.args) && slices.Contains(ops, p.args[p.i]) {
		op := p.args[p.i]
		p.i++
		r, err := operand(evaluate)
		if err != nil {
			return r, err
		}
		if evaluate {
			if l, err = exprArith(op, l, r); err != nil {
				return l, err
			}
		}
	}
	return l, nil
}

// match is MATCH: PRIMARY { ":" PRIMARY }.
func (p *exprParser) match(evaluate bool) (exprValue, error) {
	l, err := p.primary(evaluate)
	if err != nil {
		return l, err
	}
	for p.accept(":") {
		r, err := p.primary(evaluate)
		if err != nil {
			return r, err
		}
		if evaluate {
			if l, err = p.colon(l, r); err != nil {
				return l, err
			}
		}
	}
	return l, nil
}

// colon matches the basic regular expression r against the start of s:
// the text of the first group, or the number of characters matched.
func (p *exprParser) colon(s, r exprValue) (exprValue, error) {
	timeout := time.Minute
	if p.c != nil {
		timeout = p.c.reTimeout()
	}
	re, err := compileRegex([]string{r.String()}, reSyntax{}, timeout)
	if err != nil {
		return exprValue{}, &exprError{err.Error()}
	}
	text := []byte(s.String())
	m, err := re.findAll(text, 1)
	if err != nil {
		return exprValue{}, &exprError{err.Error()}
	}
	matched := len(m) > 0 && m[0][0] == 0
	if re.groups > 0 {
		if matched && m[0][2] >= 0 {
			return exprValue{s: string(text[m[0][2]:m[0][3]])}, nil
		}
		return exprValue{s: ""}, nil
	}
	if !matched {
		return exprInt(0), nil
	}
	return exprInt(int64(utf8.RuneCount(text[:m[0][1]]))), nil
}

// primary is "+" TOKEN, length, match, index, substr, or a parenthesized
// expression, or a token.
func (p *exprParser) primary(evaluate bool) (exprValue, error) {
	if err := p.enter(); err != nil {
		return exprValue{}, err
	}
	defer func() { p.depth-- }()
	if p.i >= len(p.args) {
		return exprValue{}, p.missing()
	}
	switch p.args[p.i] {
	case "+":
		p.i++
		if p.i >= len(p.args) {
			return exprValue{}, p.missing()
		}
		p.i++
		return exprValue{s: p.args[p.i-1]}, nil
	case "length":
		p.i++
		v, err := p.primary(evaluate)
		if err != nil {
			return v, err
		}
		return exprInt(int64(utf8.RuneCountInString(v.String()))), nil
	case "match":
		p.i++
		vs, err := p.operands(evaluate, 2)
		if err != nil {
			return exprValue{}, err
		}
		if !evaluate {
			return exprInt(0), nil
		}
		return p.colon(vs[0], vs[1])
	case "index":
		p.i++
		vs, err := p.operands(evaluate, 2)
		if err != nil {
			return exprValue{}, err
		}
		chars := vs[1].String()
		for i, r := range []rune(vs[0].String()) {
			if strings.ContainsRune(chars, r) {
				return exprInt(int64(i + 1)), nil
			}
		}
		return exprInt(0), nil
	case "substr":
		p.i++
		vs, err := p.operands(evaluate, 3)
		if err != nil {
			return exprValue{}, err
		}
		runes := []rune(vs[0].String())
		pos, pok := vs[1].toInt()
		n, nok := vs[2].toInt()
		if !pok || !nok || pos.Sign() <= 0 || n.Sign() <= 0 || !pos.IsInt64() || pos.Int64() > int64(len(runes)) {
			return exprValue{s: ""}, nil
		}
		start := int(pos.Int64()) - 1
		end := len(runes)
		if n.IsInt64() && n.Int64() < int64(end-start) {
			end = start + int(n.Int64())
		}
		return exprValue{s: string(runes[start:end])}, nil
	case "(":
		p.i++
		v, err := p.or(evaluate)
		if err != nil {
			return v, err
		}
		if p.i >= len(p.args) {
			return v, &exprError{fmt.Sprintf("syntax error: expecting ')' after '%s'", p.args[p.i-1])}
		}
		if !p.accept(")") {
			return v, &exprError{fmt.Sprintf("syntax error: expecting ')' instead of '%s'", p.args[p.i])}
		}
		return v, nil
	case ")":
		return exprValue{}, &exprError{"syntax error: unexpected ')'"}
	}
	p.i++
	return exprValue{s: p.args[p.i-1]}, nil
}

// operands reads the n operands of a keyword.
func (p *exprParser) operands(evaluate bool, n int) ([]exprValue, error) {
	vs := make([]exprValue, n)
	for k := range vs {
		v, err := p.primary(evaluate)
		if err != nil {
			return nil, err
		}
		vs[k] = v
	}
	return vs, nil
}

func (p *exprParser) missing() error {
	if p.i == 0 {
		return &exprError{"syntax error: missing argument"}
	}
	return &exprError{fmt.Sprintf("syntax error: missing argument after '%s'", p.args[p.i-1])}
}

// evalExpr evaluates expr's arguments: the value, or an error.
func evalExpr(c *call, args []string) (exprValue, error) {
	p := &exprParser{c: c, args: args}
	v, err := p.or(true)
	if err != nil {
		return v, err
	}
	if p.i < len(args) {
		return v, &exprError{fmt.Sprintf("syntax error: unexpected argument '%s'", args[p.i])}
	}
	return v, nil
}

// expr prints the value of the expression its arguments make; status 1
// when it is empty or 0, 2 on an error.
func cmdExpr(c *call) int {
	args := c.args
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		c.errorf("missing operand")
		return 2
	}
	v, err := evalExpr(c, args)
	if err != nil {
		c.errorf("%s", err)
		return 2
	}
	status := 0
	if v.null() {
		status = 1
	}
	if _, err := io.WriteString(c.stdout, v.String()+"\n"); err != nil {
		return c.writeFailed(err)
	}
	return status
}
