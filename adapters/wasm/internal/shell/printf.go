package shell

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func cmdPrintf(c *call) int {
	c.name = "bash: printf"
	args := c.args
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "-v" {
		c.errorf("-v is not supported here; use var=$(printf ...)")
		return 2
	}
	if len(args) == 0 {
		c.errorf("usage: printf [-v var] format [arguments]")
		return 2
	}
	format, args := args[0], args[1:]
	w := c.out()
	status := 0
	for !c.stopped() {
		s, n, errs, stop := printfOnce(format, args)
		for _, e := range errs {
			c.errorf("%s", e)
			status = 1
		}
		if _, err := w.WriteString(s); err != nil {
			return c.writeFailed(err)
		}
		args = args[n:]
		if stop || n == 0 || len(args) == 0 {
			break
		}
	}
	return c.flush(w, status)
}

// printfOnce formats args with format once, as bash's printf does in each
// round: it returns the output, the number of arguments used, the messages
// of invalid arguments, and whether \c in a %b argument ended the output.
func printfOnce(format string, args []string) (out string, used int, errs []string, stop bool) {
	var b strings.Builder
	next := func() (string, bool) {
		if used < len(args) {
			used++
			return args[used-1], true
		}
		return "", false
	}
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch == '\\' {
			n := printfEscape(&b, format[i+1:], false)
			i += n
			continue
		}
		if ch != '%' {
			b.WriteByte(ch)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		// %[flags][width][.precision]verb
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
			j++
		}
		flags := format[i+1 : j]
		width, prec := "", ""
		if j < len(format) && format[j] == '*' {
			a, _ := next()
			width = strconv.Itoa(int(parseInt(a, &errs)))
			j++
		} else {
			k := j
			for j < len(format) && format[j] >= '0' && format[j] <= '9' {
				j++
			}
			width = format[k:j]
		}
		hasPrec := false
		if j < len(format) && format[j] == '.' {
			hasPrec = true
			j++
			if j < len(format) && format[j] == '*' {
				a, _ := next()
				prec = strconv.Itoa(int(parseInt(a, &errs)))
				j++
			} else {
				k := j
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				prec = format[k:j]
			}
		}
		// Length modifiers are accepted and ignored.
		for j < len(format) && strings.IndexByte("hlLjzt", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			errs = append(errs, "`"+format[i:]+"': missing format character")
			b.WriteString(format[i:])
			break
		}
		verb := format[j]
		i = j
		spec := "%" + flags + width
		if hasPrec {
			spec += "." + prec
		}
		arg, _ := next()
		switch verb {
		case 'd', 'i':
			fmt.Fprintf(&b, spec+"d", parseInt(arg, &errs))
		case 'u':
			fmt.Fprintf(&b, spec+"d", uint64(parseInt(arg, &errs)))
		case 'o', 'x', 'X':
			fmt.Fprintf(&b, spec+string(verb), uint64(parseInt(arg, &errs)))
		case 'f', 'F', 'e', 'E', 'g', 'G':
			v := verb
			if v == 'F' {
				v = 'f'
			}
			fmt.Fprintf(&b, spec+string(v), parseFloat(arg, &errs))
		case 'c':
			if arg != "" {
				_, n := utf8.DecodeRuneInString(arg)
				arg = arg[:n]
			}
			fmt.Fprintf(&b, "%"+flags+width+"s", arg)
		case 's':
			fmt.Fprintf(&b, spec+"s", arg)
		case 'b':
			var eb strings.Builder
			for k := 0; k < len(arg); k++ {
				if arg[k] != '\\' {
					eb.WriteByte(arg[k])
					continue
				}
				if k+1 < len(arg) && arg[k+1] == 'c' {
					stop = true
					break
				}
				k += printfEscape(&eb, arg[k+1:], true)
			}
			fmt.Fprintf(&b, spec+"s", eb.String())
			if stop {
				return b.String(), used, errs, true
			}
		case 'q':
			fmt.Fprintf(&b, "%"+flags+width+"s", bashQuote(arg))
		default:
			errs = append(errs, "`"+string(verb)+"': invalid format character")
			return b.String(), used, errs, true
		}
	}
	return b.String(), used, errs, false
}

// printfEscape writes the escape sequence that s (what follows a
// backslash) starts with, and returns how many bytes of s it used. In a %b
// argument (echoStyle) octal escapes are \0NNN.
func printfEscape(b *strings.Builder, s string, echoStyle bool) int {
	if s == "" {
		b.WriteByte('\\')
		return 0
	}
	switch ch := s[0]; ch {
	case 'a':
		b.WriteByte('\a')
	case 'b':
		b.WriteByte('\b')
	case 'e', 'E':
		b.WriteByte(0x1b)
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'v':
		b.WriteByte('\v')
	case '\\':
		b.WriteByte('\\')
	case '"', '\'', '?':
		if echoStyle {
			b.WriteByte('\\')
		}
		b.WriteByte(ch)
	case '0', '1', '2', '3', '4', '5', '6', '7':
		start, limit := 0, 3
		if echoStyle {
			if ch != '0' {
				b.WriteByte('\\')
				b.WriteByte(ch)
				return 1
			}
			start, limit = 1, 4
		}
		n, k := 0, start
		for ; k < len(s) && k < limit && s[k] >= '0' && s[k] <= '7'; k++ {
			n = n*8 + int(s[k]-'0')
		}
		b.WriteByte(byte(n))
		return k
	case 'x', 'u', 'U':
		digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[ch]
		n, k := 0, 1
		for ; k < len(s) && k <= digits; k++ {
			d, err := strconv.ParseUint(s[k:k+1], 16, 8)
			if err != nil {
				break
			}
			n = n*16 + int(d)
		}
		switch {
		case k == 1:
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch == 'x':
			b.WriteByte(byte(n))
		default:
			b.WriteRune(rune(n))
		}
		return k
	default:
		b.WriteByte('\\')
		b.WriteByte(ch)
	}
	return 1
}

// parseInt reads a printf integer argument: decimal, 0x hex, 0 octal, or
// 'c for a character's code. An invalid one counts as its valid prefix and
// adds a message.
func parseInt(s string, errs *[]string) int64 {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0
	}
	if t[0] == '\'' || t[0] == '"' {
		r, _ := utf8.DecodeRuneInString(t[1:])
		if len(t) == 1 {
			return 0
		}
		return int64(r)
	}
	if n, err := strconv.ParseInt(t, 0, 64); err == nil {
		return n
	}
	if n, err := strconv.ParseUint(t, 0, 64); err == nil {
		return int64(n)
	}
	*errs = append(*errs, s+": invalid number")
	end := 0
	if end < len(t) && (t[end] == '-' || t[end] == '+') {
		end++
	}
	for end < len(t) && t[end] >= '0' && t[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(t[:end], 10, 64)
	return n
}

func parseFloat(s string, errs *[]string) float64 {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0
	}
	if t[0] == '\'' || t[0] == '"' {
		return float64(parseInt(t, errs))
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		*errs = append(*errs, s+": invalid number")
		return 0
	}
	return f
}

// bashQuote quotes s as bash's printf %q does: a pair of single quotes
// when empty, $'...' with C escapes when s holds a character that does not
// print, and otherwise a backslash before each character the shell would
// read specially.
func bashQuote(s string) string {
	if s == "" {
		return "''"
	}
	ansic := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !unicode.IsGraphic(r) {
			ansic = true
			break
		}
		i += n
	}
	var b strings.Builder
	if ansic {
		b.WriteString("$'")
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1 || !unicode.IsGraphic(r) && r >= utf8.RuneSelf:
				for _, c := range []byte(s[i : i+n]) {
					fmt.Fprintf(&b, "\\%03o", c)
				}
			case r >= utf8.RuneSelf:
				b.WriteString(s[i : i+n])
			default:
				if e := strings.IndexByte("\a\b\x1b\f\n\r\t\v\\'", byte(r)); e >= 0 {
					b.WriteByte('\\')
					b.WriteByte("abEfnrtv\\'"[e])
				} else if r < 0x20 || r == 0x7f {
					fmt.Fprintf(&b, "\\%03o", r)
				} else {
					b.WriteRune(r)
				}
			}
			i += n
		}
		b.WriteByte('\'')
		return b.String()
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte(" \t\n'\"\\|&;()<>!{}*[?]^$`,", c) >= 0,
			c == '~' && (i == 0 || s[i-1] == '=' || s[i-1] == ':'),
			c == '#' && i == 0:
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
