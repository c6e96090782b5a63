package shell

import "strings"

// opts are the parsed options of a command line.
type opts struct {
	flags map[byte]int
	vals  map[byte][]string
}

func (o opts) has(f byte) bool { return o.flags[f] > 0 }

// last returns the last value given to option f, or def.
func (o opts) last(f byte, def string) string {
	if v := o.vals[f]; len(v) > 0 {
		return v[len(v)-1]
	}
	return def
}

// getopt parses options in the GNU way: short flags may be grouped and may
// come after operands; "--" ends the options. bools are the flags without a
// value, withValue those taking one (-n 5 or -n5). long maps long options
// (without "--") to a short flag, or to 0 to accept and ignore them;
// "--name=value" gives a value.
func (c *call) getopt(args []string, bools, withValue string, long map[string]byte) (opts, []string, bool) {
	o := opts{flags: map[byte]int{}, vals: map[byte][]string{}}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			f, ok := long[name]
			if !ok {
				c.errorf("unrecognized option '%s'", a)
				return o, nil, false
			}
			switch {
			case f == 0:
			case strings.IndexByte(withValue, f) >= 0:
				if !hasVal {
					if i+1 >= len(args) {
						c.errorf("option '--%s' requires an argument", name)
						return o, nil, false
					}
					i++
					val = args[i]
				}
				o.vals[f] = append(o.vals[f], val)
			default:
				o.flags[f]++
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			f := a[j]
			switch {
			case strings.IndexByte(bools, f) >= 0:
				o.flags[f]++
			case strings.IndexByte(withValue, f) >= 0:
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						c.errorf("option requires an argument -- '%c'", f)
						return o, nil, false
					}
					i++
					v = args[i]
				}
				o.vals[f] = append(o.vals[f], v)
				j = len(a)
			default:
				c.errorf("invalid option -- '%c'", f)
				return o, nil, false
			}
		}
	}
	return o, rest, true
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

// digitOption accepts the obsolete "-4" for "flag 4" (expand -t 4, fold
// -w 4).
func digitOption(args []string, flag string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && isDigits(a[1:]) {
			out = append(out, flag, a[1:])
			continue
		}
		out = append(out, a)
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
