package shell

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

func cmdDate(c *call) int {
	loc := c.dateLocation()
	var dateStr, refFile, fileList, format string
	var hasDate, hasRef, hasFile, setTime bool
	args := c.args
	var operands []string
	usage := func() int {
		fmt.Fprintf(c.stderr, "date: Try 'date --help' for more information.\n")
		return 1
	}
	value := func(i *int, a, name string) (string, bool) {
		if *i+1 >= len(args) {
			if strings.HasPrefix(a, "--") {
				c.errorf("option '%s' requires an argument", a)
			} else {
				c.errorf("option requires an argument -- '%s'", a[1:])
			}
			return "", false
		}
		*i++
		return args[*i], true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			operands = append(operands, a)
			continue
		}
		var ok bool
		switch {
		case a == "-u" || a == "--utc" || a == "--universal":
			loc = time.UTC
		case a == "-d" || a == "--date":
			dateStr, ok = value(&i, a, "date")
			if !ok {
				return usage()
			}
			hasDate = true
		case strings.HasPrefix(a, "--date="):
			dateStr, hasDate = a[len("--date="):], true
		case strings.HasPrefix(a, "-d"):
			dateStr, hasDate = a[2:], true
		case a == "-r" || a == "--reference":
			refFile, ok = value(&i, a, "reference")
			if !ok {
				return usage()
			}
			hasRef = true
		case strings.HasPrefix(a, "--reference="):
			refFile, hasRef = a[len("--reference="):], true
		case strings.HasPrefix(a, "-r"):
			refFile, hasRef = a[2:], true
		case a == "-f" || a == "--file":
			fileList, ok = value(&i, a, "file")
			if !ok {
				return usage()
			}
			hasFile = true
		case strings.HasPrefix(a, "--file="):
			fileList, hasFile = a[len("--file="):], true
		case a == "-R" || a == "--rfc-email" || a == "--rfc-2822" || a == "--rfc-822":
			format = "%a, %d %b %Y %H:%M:%S %z"
		case a == "-I" || a == "--iso-8601" || strings.HasPrefix(a, "-I") || strings.HasPrefix(a, "--iso-8601="):
			spec := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(a, "-I"), "--iso-8601"), "=")
			f, ok := dateISOFormat(spec)
			if !ok {
				c.errorf("invalid argument '%s' for '--iso-8601'", spec)
				c.errorf("Valid arguments are:\n  - 'hours'\n  - 'minutes'\n  - 'date'\n  - 'seconds'\n  - 'ns'")
				return usage()
			}
			format = f
		case strings.HasPrefix(a, "--rfc-3339="):
			spec := a[len("--rfc-3339="):]
			switch {
			case spec == "date":
				format = "%Y-%m-%d"
			case spec == "seconds":
				format = "%Y-%m-%d %H:%M:%S%:z"
			case spec == "ns":
				format = "%Y-%m-%d %H:%M:%S.%N%:z"
			default:
				c.errorf("invalid argument '%s' for '--rfc-3339'", spec)
				return usage()
			}
		case a == "-s" || a == "--set" || strings.HasPrefix(a, "--set="):
			setTime = true
			if a == "-s" || a == "--set" {
				i++
			}
		case a == "--debug":
		case strings.HasPrefix(a, "--"):
			c.errorf("unrecognized option '%s'", a)
			return usage()
		default:
			c.errorf("invalid option -- '%c'", a[1])
			return usage()
		}
	}
	if setTime {
		c.errorf("cannot set date: Operation not permitted")
		return 1
	}
	if n := btoi(hasDate) + btoi(hasRef) + btoi(hasFile); n > 1 {
		c.errorf("the options to specify dates for printing are mutually exclusive")
		return usage()
	}
	for _, op := range operands {
		if strings.HasPrefix(op, "+") {
			if format != "" && !strings.HasPrefix(format, "+") {
				c.errorf("multiple output formats specified")
				return 1
			}
			if strings.HasPrefix(format, "+") {
				c.errorf("extra operand '%s'", op)
				return usage()
			}
			format = op
			continue
		}
		if len(operands) == 1 && !hasDate && !hasRef && !hasFile {
			if isDigits(op) {
				c.errorf("cannot set date: Operation not permitted")
			} else {
				c.errorf("invalid date '%s'", op)
			}
			return 1
		}
		c.errorf("extra operand '%s'", op)
		return usage()
	}
	format = strings.TrimPrefix(format, "+")
	if format == "" {
		format = "%a %b %e %H:%M:%S %Z %Y"
	}
	now := time.Now()
	w := c.out()
	switch {
	case hasRef:
		info, err := c.stat(refFile)
		if err != nil {
			return c.fail(1, refFile, err)
		}
		w.WriteString(strftime(format, info.ModTime().In(loc)) + "\n")
	case hasFile:
		r, done, err := c.openInput(fileList)
		if err != nil {
			return c.fail(1, fileList, err)
		}
		defer done()
		status := 0
		lr := c.lines(r)
		for !c.stopped() {
			line, _, err := lr.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					c.fail(1, fileList, err)
					status = 1
				}
				break
			}
			t, ok := parseDate(string(line), now, loc)
			if !ok {
				c.errorf("invalid date '%s'", line)
				status = 1
				continue
			}
			if _, err := w.WriteString(strftime(format, t) + "\n"); err != nil {
				return c.writeFailed(err)
			}
		}
		return c.flush(w, status)
	case hasDate:
		t, ok := parseDate(dateStr, now, loc)
		if !ok {
			c.errorf("invalid date '%s'", dateStr)
			return 1
		}
		w.WriteString(strftime(format, t) + "\n")
	default:
		w.WriteString(strftime(format, now.In(loc)) + "\n")
	}
	return c.flush(w, 0)
}

func dateISOFormat(spec string) (string, bool) {
	switch spec {
	case "", "date", "d", "da", "dat":
		return "%Y-%m-%d", true
	case "hours", "h", "ho", "hou", "hour":
		return "%Y-%m-%dT%H%:z", true
	case "minutes", "m", "mi", "min", "minu", "minut", "minute":
		return "%Y-%m-%dT%H:%M%:z", true
	case "seconds", "s", "se", "sec", "seco", "secon", "second":
		return "%Y-%m-%dT%H:%M:%S%:z", true
	case "ns", "n":
		return "%Y-%m-%dT%H:%M:%S,%N%:z", true
	}
	return "", false
}

var (
	dateDays   = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	dateMonths = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// strftime formats t as GNU date does in the C locale: the conversions of
// strftime, with the flags - _ 0 ^ # and a field width (%-d, %_H, %10Y),
// %N (nanoseconds; %3N for milliseconds), %:z, %::z, %:::z and %q. An
// unknown conversion is printed as it was written.
func strftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' {
			b.WriteByte(ch)
			continue
		}
		start := i
		i++
		var pad byte // 0: the conversion's own
		upper, swap := false, false
	flags:
		for ; i < len(format); i++ {
			switch format[i] {
			case '-', '_', '0', '+':
				pad = format[i]
			case '^':
				upper = true
			case '#':
				swap = true
			default:
				break flags
			}
		}
		width := -1
		for i < len(format) && format[i] >= '0' && format[i] <= '9' {
			if width < 0 {
				width = 0
			}
			if width < 1<<16 {
				width = width*10 + int(format[i]-'0')
			}
			i++
		}
		width = min(width, 4096)
		for i < len(format) && (format[i] == 'E' || format[i] == 'O') {
			i++
		}
		colons := 0
		for i < len(format) && format[i] == ':' && colons < 3 {
			colons++
			i++
		}
		if i >= len(format) {
			b.WriteString(format[start:])
			break
		}
		conv := format[i]
		if colons > 0 && conv != 'z' {
			b.WriteString(format[start : i+1])
			continue
		}
		num := func(v, natural int, defPad byte) string {
			p := defPad
			if pad != 0 {
				p = pad
			}
			w := natural
			if width >= 0 {
				w = width
			}
			neg := v < 0
			if neg {
				v = -v
			}
			s := strconv.Itoa(v)
			if p == '-' {
				if neg {
					return "-" + s
				}
				return s
			}
			if neg {
				w--
			}
			fill := "0"
			if p == '_' {
				fill = " "
			}
			if len(s) < w {
				if fill == " " {
					s = strings.Repeat(" ", w-len(s)) + s
					if neg {
						return strings.Replace(s, strings.TrimLeft(s, " "), "-"+strings.TrimLeft(s, " "), 1)
					}
					return s
				}
				s = strings.Repeat(fill, w-len(s)) + s
			}
			if neg {
				s = "-" + s
			}
			return s
		}
		str := func(s string, lowerOnSwap bool) string {
			if upper {
				s = strings.ToUpper(s)
			}
			if swap {
				if lowerOnSwap {
					s = strings.ToLower(s)
				} else {
					s = strings.ToUpper(s)
				}
			}
			if width > len(s) && pad != '-' {
				fill := " "
				if pad == '0' {
					fill = "0"
				}
				s = strings.Repeat(fill, width-len(s)) + s
			}
			return s
		}
		// sub formats a composite conversion; a width pads the whole.
		sub := func(f string) string {
			s := strftime(f, t)
			return str(s, false)
		}
		hour12 := t.Hour() % 12
		if hour12 == 0 {
			hour12 = 12
		}
		yday := t.YearDay() - 1
		wday := int(t.Weekday())
		switch conv {
		case '%':
			b.WriteString(str("%", false))
		case 'a':
			b.WriteString(str(dateDays[wday][:3], false))
		case 'A':
			b.WriteString(str(dateDays[wday], false))
		case 'b', 'h':
			b.WriteString(str(dateMonths[t.Month()-1][:3], false))
		case 'B':
			b.WriteString(str(dateMonths[t.Month()-1], false))
		case 'c':
			b.WriteString(sub("%a %b %e %H:%M:%S %Y"))
		case 'C':
			b.WriteString(num(floorDiv(t.Year(), 100), 2, '0'))
		case 'd':
			b.WriteString(num(t.Day(), 2, '0'))
		case 'D', 'x':
			b.WriteString(sub("%m/%d/%y"))
		case 'e':
			b.WriteString(num(t.Day(), 2, '_'))
		case 'F':
			b.WriteString(sub("%Y-%m-%d"))
		case 'g':
			y, _ := t.ISOWeek()
			b.WriteString(num(((y%100)+100)%100, 2, '0'))
		case 'G':
			y, _ := t.ISOWeek()
			b.WriteString(num(y, 1, '0'))
		case 'H':
			b.WriteString(num(t.Hour(), 2, '0'))
		case 'I':
			b.WriteString(num(hour12, 2, '0'))
		case 'j':
			b.WriteString(num(yday+1, 3, '0'))
		case 'k':
			b.WriteString(num(t.Hour(), 2, '_'))
		case 'l':
			b.WriteString(num(hour12, 2, '_'))
		case 'm':
			b.WriteString(num(int(t.Month()), 2, '0'))
		case 'M':
			b.WriteString(num(t.Minute(), 2, '0'))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'N':
			digits := 9
			if width > 0 {
				digits = width
			}
			s := fmt.Sprintf("%09d", t.Nanosecond())
			if digits <= 9 {
				s = s[:digits]
			} else {
				s += strings.Repeat("0", digits-9)
			}
			b.WriteString(s)
		case 'p':
			s := "AM"
			if t.Hour() >= 12 {
				s = "PM"
			}
			b.WriteString(str(s, true))
		case 'P':
			s := "am"
			if t.Hour() >= 12 {
				s = "pm"
			}
			b.WriteString(str(s, false))
		case 'q':
			b.WriteString(num((int(t.Month())-1)/3+1, 1, '0'))
		case 'r':
			b.WriteString(sub("%I:%M:%S %p"))
		case 'R':
			b.WriteString(sub("%H:%M"))
		case 's':
			b.WriteString(num(int(t.Unix()), 1, '0'))
		case 'S':
			b.WriteString(num(t.Second(), 2, '0'))
		case 'T', 'X':
			b.WriteString(sub("%H:%M:%S"))
		case 'u':
			b.WriteString(num((wday+6)%7+1, 1, '0'))
		case 'U':
			b.WriteString(num((yday+7-wday)/7, 2, '0'))
		case 'V':
			_, wk := t.ISOWeek()
			b.WriteString(num(wk, 2, '0'))
		case 'w':
			b.WriteString(num(wday, 1, '0'))
		case 'W':
			b.WriteString(num((yday+7-(wday+6)%7)/7, 2, '0'))
		case 'y':
			b.WriteString(num(((t.Year()%100)+100)%100, 2, '0'))
		case 'Y':
			b.WriteString(num(t.Year(), 1, '0'))
		case 'z':
			b.WriteString(dateOffset(t, colons))
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(str(name, true))
		default:
			b.WriteString(format[start : i+1])
		}
	}
	return b.String()
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// dateOffset is %z (+hhmm), %:z (+hh:mm), %::z (+hh:mm:ss) or %:::z (as
// short as exact).
func dateOffset(t time.Time, colons int) string {
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	h, m, s := off/3600, off/60%60, off%60
	switch colons {
	case 0:
		return fmt.Sprintf("%c%02d%02d", sign, h, m)
	case 1:
		return fmt.Sprintf("%c%02d:%02d", sign, h, m)
	case 2:
		return fmt.Sprintf("%c%02d:%02d:%02d", sign, h, m, s)
	}
	switch {
	case s != 0:
		return fmt.Sprintf("%c%02d:%02d:%02d", sign, h, m, s)
	case m != 0:
		return fmt.Sprintf("%c%02d:%02d", sign, h, m)
	}
	return fmt.Sprintf("%c%02d", sign, h)
}
