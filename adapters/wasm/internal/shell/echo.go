package shell

import "strings"

func cmdEcho(c *call) int {
	c.name = "bash: echo"
	args := c.args
	newline, escapes := true, false
	for len(args) > 0 && isEchoOption(args[0]) {
		for _, f := range args[0][1:] {
			switch f {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	w := c.out()
	for i, a := range args {
		if i > 0 {
			w.WriteByte(' ')
		}
		if !escapes {
			w.WriteString(a)
			continue
		}
		s, stop := echoEscapes(a)
		w.WriteString(s)
		if stop {
			return c.flush(w, 0)
		}
	}
	if newline {
		w.WriteByte('\n')
	}
	return c.flush(w, 0)
}

func isEchoOption(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	return strings.Trim(a[1:], "neE") == ""
}

// echoEscapes expands the backslash escapes of echo -e. stop is set by \c,
// which ends the output.
func echoEscapes(s string) (out string, stop bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '\\':
			b.WriteByte(s[i])
		case i+1 < len(s) && s[i+1] == 'c':
			return b.String(), true
		default:
			i += printfEscape(&b, s[i+1:], true)
		}
	}
	return b.String(), false
}
