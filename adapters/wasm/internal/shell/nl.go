package shell

import (
	"fmt"
	"strconv"
	"strings"
)

// nl numbers lines: -b a (all), t (non-empty, the default), n (none) or
// pBRE; -n ln, rn or rz; -w width; -s separator; -v first; -i increment.
// Section delimiters (\:\:\:) are not read.
func cmdNl(c *call) int {
	o, files, ok := c.getopt(c.args, "", "bnwsvi", map[string]byte{
		"body-numbering": 'b', "number-format": 'n', "number-width": 'w',
		"number-separator": 's', "starting-line-number": 'v', "line-increment": 'i'})
	if !ok {
		return 1
	}
	style := o.last('b', "t")
	var re *regex
	switch {
	case style == "a" || style == "t" || style == "n":
	case strings.HasPrefix(style, "p"):
		var err error
		if re, err = compileRegex([]string{style[1:]}, reSyntax{}, c.reTimeout()); err != nil {
			c.errorf("%s", err)
			return 1
		}
	default:
		c.errorf("invalid body numbering style: '%s'", style)
		return 1
	}
	format := o.last('n', "rn")
	if format != "ln" && format != "rn" && format != "rz" {
		c.errorf("invalid line numbering format: '%s'", format)
		return 1
	}
	width, err := strconv.Atoi(o.last('w', "6"))
	if err != nil || width < 1 || width > 1<<16 {
		c.errorf("invalid line number field width: '%s'", o.last('w', "6"))
		return 1
	}
	num, err1 := strconv.ParseInt(o.last('v', "1"), 10, 64)
	incr, err2 := strconv.ParseInt(o.last('i', "1"), 10, 64)
	if err1 != nil || err2 != nil {
		c.errorf("invalid line number: '%s'", o.last('v', o.last('i', "")))
		return 1
	}
	sep := o.last('s', "\t")
	blank := strings.Repeat(" ", width+len(sep))
	w := c.out()
	var rerr error
	status := c.eachLine(files, func(line []byte, nl bool) error {
		number := false
		switch {
		case style == "a":
			number = true
		case style == "t":
			number = len(line) > 0
		case re != nil:
			number, rerr = re.match(line)
		}
		if number {
			s := strconv.FormatInt(num, 10)
			switch format {
			case "ln":
				fmt.Fprintf(w, "%-*s", width, s)
			case "rn":
				fmt.Fprintf(w, "%*s", width, s)
			default:
				if strings.HasPrefix(s, "-") {
					fmt.Fprintf(w, "-%0*s", width-1, s[1:])
				} else {
					fmt.Fprintf(w, "%0*s", width, s)
				}
			}
			w.WriteString(sep)
			num += incr
		} else {
			// GNU pads an unnumbered line as if it had a number.
			w.WriteString(blank)
		}
		w.Write(line)
		if nl {
			return w.WriteByte('\n')
		}
		return nil
	})
	if rerr != nil {
		c.errorf("%s", rerr)
		status = 1
	}
	return c.flush(w, status)
}
