package shell

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

func init() {
	commands["date"] = cmdDate
	commands["uname"] = cmdUname
	commands["whoami"] = cmdWhoami
	commands["id"] = cmdId
	commands["hostname"] = cmdHostname
	commands["nproc"] = cmdNproc
}

// Time zones, from TZ as glibc reads it. The guest embeds no time zone
// database: a zone's name ("Europe/Paris", ":Asia/Tokyo") is looked up
// through Options.Zone, which the host answers with the TZif data Python's
// zoneinfo reads, so that date and Python agree. Otherwise TZ is a POSIX
// rule: a fixed offset ("UTC", "EST5", "<+03>-3") or one with daylight
// saving ("EST+05EDT,M3.2.0,M11.1.0", "CET-1CEST" with the US rules by
// default, as glibc). Anything else, a name without Options.Zone
// included, is UTC.

// dateLocation is the time zone of the call: TZ from the shell's
// environment, as above.
func (c *call) dateLocation() *time.Location {
	v := c.env.Get("TZ")
	if !v.IsSet() {
		return time.UTC
	}
	return c.sh.location(v.String())
}

// location is the time zone TZ names.
func (s *Shell) location(tz string) *time.Location {
	name := strings.TrimPrefix(tz, ":")
	if s.opts.Zone != nil && name != "" {
		if data, ok := s.opts.Zone(name); ok {
			if loc, err := time.LoadLocationFromTZData(name, data); err == nil {
				return loc
			}
		}
	}
	if loc, ok := fixedTZ(tz); ok {
		return loc
	}
	if loc, ok := ruleTZ(tz); ok {
		return loc
	}
	return time.UTC
}

// ruleTZ is the zone of a POSIX rule with daylight saving: Go's time
// package evaluates such a rule as the footer of a TZif file (RFC 8536),
// so ruleTZ makes one with no transitions and the rule as its footer. A
// rule Go cannot read is not a zone.
func ruleTZ(tz string) (*time.Location, bool) {
	tz = strings.TrimPrefix(tz, ":")
	if tz == "" || len(tz) > 255 || strings.ContainsAny(tz, "\n\x00") {
		return nil, false
	}
	std, _, ok := posixName(tz)
	if !ok {
		return nil, false
	}
	// One local time type, standard time at UTC until the rule applies
	// (from the start of time: the file has no transitions).
	var body []byte
	counts := func(chars int) {
		body = append(body, "TZif2"...)
		body = append(body, make([]byte, 15)...)
		for _, n := range []int{0, 0, 0, 0, 1, chars} { // isut, isstd, leap, time, type, char
			body = append(body, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		}
		body = append(body, 0, 0, 0, 0, 0, 0) // offset 0, not DST, name at 0
		body = append(body, std...)
		body = append(body, 0)
	}
	counts(len(std) + 1) // the version 1 block, which readers of version 2 skip
	counts(len(std) + 1)
	body = append(body, '\n')
	body = append(body, tz...)
	body = append(body, '\n')
	loc, err := time.LoadLocationFromTZData(tz, body)
	if err != nil {
		return nil, false
	}
	// Go falls back on the file's one type (UTC) for a rule it cannot
	// read: a rule it reads changes the offset or the name of some
	// instant within a year.
	for _, t := range []time.Time{time.Date(2001, 1, 15, 0, 0, 0, 0, time.UTC), time.Date(2001, 7, 15, 0, 0, 0, 0, time.UTC)} {
		if name, off := t.In(loc).Zone(); off != 0 || name != std {
			return loc, true
		}
	}
	return nil, false
}

// posixName reads the zone name at the start of a POSIX rule: letters, or
// <...> of letters, digits and signs; rest is what follows it.
func posixName(tz string) (name, rest string, ok bool) {
	if strings.HasPrefix(tz, "<") {
		i := strings.IndexByte(tz, '>')
		if i < 2 {
			return "", "", false
		}
		return tz[1:i], tz[i+1:], true
	}
	i := 0
	for i < len(tz) && (tz[i] >= 'A' && tz[i] <= 'Z' || tz[i] >= 'a' && tz[i] <= 'z') {
		i++
	}
	if i < 3 {
		return "", "", false
	}
	return tz[:i], tz[i:], true
}

// fixedTZ is the zone of TZ as a fixed offset ("UTC", "EST5",
// "<+03>-3"); ok is false for anything else (a rule with daylight saving,
// a zone's name).
func fixedTZ(tz string) (loc *time.Location, ok bool) {
	tz = strings.TrimPrefix(tz, ":")
	switch tz {
	case "", "UTC", "UTC0", "Etc/UTC", "Universal", "Zulu", "UCT", "Etc/UCT":
		return time.UTC, true
	case "GMT", "GMT0", "Etc/GMT", "Greenwich":
		return time.FixedZone("GMT", 0), true
	}
	name, rest, ok := posixName(tz)
	if !ok || rest == "" {
		return nil, false
	}
	sign := 1
	switch rest[0] {
	case '-':
		sign = -1
		rest = rest[1:]
	case '+':
		rest = rest[1:]
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return nil, false
	}
	secs := 0
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 2 || i > 0 && n > 59 || i == 0 && n > 24 {
			return nil, false // not a fixed offset (a DST rule, a zone name)
		}
		secs += n * []int{3600, 60, 1}[i]
	}
	// POSIX offsets count west of Greenwich: EST5 is UTC-5.
	return time.FixedZone(name, -sign*secs), true
}

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

// Parsing -d STRING: the forms people write, after GNU's parse-datetime
// grammar: "@EPOCH[.frac]", ISO dates and times (2024-01-02,
// 2024-01-02T03:04:05.5Z, 2024-01-02 03:04 +0200), 20240102, 01/02/2024,
// "Jan 2 2024", "2 January 2024", "Tue Jan  2 03:04:05 UTC 2024" (date's own
// output), times with am/pm, zone names and offsets, weekday names (with
// next/last/this), now, today, yesterday, tomorrow, and relative items
// ("3 days", "+2 weeks", "1 hour ago", "next month", "last year").

type dateToken struct {
	kind byte // 'n' number, 'w' word, or the punctuation byte
	text string
	val  int
}

func dateTokens(s string) ([]dateToken, bool) {
	var toks []dateToken
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
		case ch >= '0' && ch <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			v, err := strconv.Atoi(s[i:j])
			if err != nil || j-i > 12 {
				return nil, false
			}
			toks = append(toks, dateToken{kind: 'n', text: s[i:j], val: v})
			i = j
		case ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			j := i
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			toks = append(toks, dateToken{kind: 'w', text: strings.ToLower(s[i:j])})
			i = j
			if i < len(s) && s[i] == '.' {
				i++ // "Jan." "Tue."
			}
		case strings.IndexByte(":-+/,.@()", ch) >= 0:
			toks = append(toks, dateToken{kind: ch, text: string(ch)})
			i++
		default:
			return nil, false
		}
		if len(toks) > 64 {
			return nil, false
		}
	}
	return toks, true
}

// dateUnits maps relative units to (months, seconds).
var dateUnits = map[string][2]int{
	"year": {12, 0}, "month": {1, 0}, "fortnight": {0, 14 * 86400}, "week": {0, 7 * 86400},
	"day": {0, 86400}, "hour": {0, 3600}, "minute": {0, 60}, "min": {0, 60},
	"second": {0, 1}, "sec": {0, 1},
}

func dateUnit(w string) ([2]int, bool) {
	if u, ok := dateUnits[w]; ok {
		return u, true
	}
	if strings.HasSuffix(w, "s") {
		u, ok := dateUnits[w[:len(w)-1]]
		return u, ok
	}
	return [2]int{}, false
}

var dateZones = map[string]int{
	"utc": 0, "ut": 0, "gmt": 0, "z": 0, "wet": 0, "west": 1, "bst": 1,
	"cet": 1, "cest": 2, "met": 1, "mest": 2, "eet": 2, "eest": 3, "msk": 3,
	"ist": 5*60 + 30, "sgt": 8, "jst": 9, "kst": 9, "aest": 10, "nzst": 12, "nzdt": 13,
	"ast": -4, "adt": -3, "est": -5, "edt": -4, "cst": -6, "cdt": -5,
	"mst": -7, "mdt": -6, "pst": -8, "pdt": -7, "akst": -9, "akdt": -8, "hst": -10,
}

func dateZoneMinutes(w string) (int, bool) {
	v, ok := dateZones[w]
	if !ok {
		return 0, false
	}
	if w == "ist" {
		return v, true
	}
	return v * 60, true
}

func dateMonth(w string) int {
	if len(w) < 3 {
		return 0
	}
	for i, m := range dateMonths {
		name := strings.ToLower(m)
		if w == name || w == name[:3] || w == "sept" && i == 8 {
			return i + 1
		}
	}
	return 0
}

func dateWeekday(w string) int {
	if len(w) < 3 {
		return -1
	}
	for i, d := range dateDays {
		name := strings.ToLower(d)
		if w == name || w == name[:3] || len(w) == 4 && strings.HasPrefix(name, w) {
			return i
		}
	}
	return -1
}

var dateOrdinals = map[string]int{
	"last": -1, "this": 0, "next": 1, "first": 1, "third": 3, "fourth": 4, "fifth": 5,
	"sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12,
}

// parseDate interprets s relative to now in loc.
func parseDate(s string, now time.Time, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "@"); ok {
		return dateEpoch(strings.TrimSpace(rest), loc)
	}
	toks, ok := dateTokens(s)
	if !ok {
		return time.Time{}, false
	}
	if len(toks) == 0 {
		// An empty string is the start of today, as in GNU.
		y, m, d := now.In(loc).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, loc), true
	}
	p := dateParser{toks: toks}
	if !p.parse() {
		return time.Time{}, false
	}
	return p.apply(now, loc)
}

func dateEpoch(s string, loc *time.Location) (time.Time, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" || !isDigits(ip) && ip != "" || !isDigits(fp) && fp != "" {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt("0"+ip, 10, 64)
	if err != nil || sec > 1<<40 {
		return time.Time{}, false
	}
	fp = (fp + "000000000")[:9]
	ns, _ := strconv.ParseInt(fp, 10, 64)
	if neg {
		sec, ns = -sec, -ns
	}
	return time.Unix(sec, ns).In(loc), true
}

type dateParser struct {
	toks []dateToken
	i    int

	hasDate, hasYear bool
	year, month, day int
	hasTime          bool
	hour, min, sec   int
	nsec             int
	hasZone          bool
	zoneMin          int
	relMonths        int
	relSecs          int64
	hasWeekday       bool
	weekday, ordinal int
	hasRel           bool
}

func (p *dateParser) peek(k int) dateToken {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return dateToken{}
}

func (p *dateParser) parse() bool {
	for p.i < len(p.toks) {
		t := p.peek(0)
		switch {
		case t.kind == ',':
			p.i++
		case t.kind == 'n' && p.peek(1).kind == ':':
			if p.hasTime || !p.parseTime() {
				return false
			}
		case t.kind == 'n' && p.peek(1).kind == '-' && p.peek(2).kind == 'n' && p.peek(3).kind == '-' && p.peek(4).kind == 'n' && !p.hasDate:
			p.year, p.month, p.day = t.val, p.peek(2).val, p.peek(4).val
			if len(t.text) == 2 {
				p.year = dateTwoDigitYear(t.val)
			}
			p.hasDate, p.hasYear = true, true
			p.i += 5
			if w := p.peek(0); w.kind == 'w' && w.text == "t" && p.peek(1).kind == 'n' {
				p.i++
			}
		case t.kind == 'n' && p.peek(1).kind == '/' && p.peek(2).kind == 'n' && !p.hasDate:
			p.month, p.day = t.val, p.peek(2).val
			p.hasDate = true
			p.i += 3
			if p.peek(0).kind == '/' && p.peek(1).kind == 'n' {
				p.year, p.hasYear = p.peek(1).val, true
				if len(p.peek(1).text) <= 2 {
					p.year = dateTwoDigitYear(p.year)
				}
				p.i += 2
			}
		case t.kind == 'n' && p.peek(1).kind == 'w' && dateMonth(p.peek(1).text) > 0 && !p.hasDate:
			// 2 Jan [2024], 2-Jan-2024
			p.day, p.month = t.val, dateMonth(p.peek(1).text)
			p.hasDate = true
			p.i += 2
			p.optionalYear()
		case t.kind == 'n' && p.peek(1).kind == '-' && p.peek(2).kind == 'w' && dateMonth(p.peek(2).text) > 0 && !p.hasDate:
			p.day, p.month = t.val, dateMonth(p.peek(2).text)
			p.hasDate = true
			p.i += 3
			if p.peek(0).kind == '-' && p.peek(1).kind == 'n' {
				p.i++
				p.optionalYear()
			}
		case t.kind == 'w' && dateMonth(t.text) > 0 && !p.hasDate:
			p.month = dateMonth(t.text)
			p.hasDate = true
			p.i++
			// GNU wants the day: "Jan 2 [2024]", not "Jan 2024".
			if p.peek(0).kind != 'n' || p.peek(1).kind == ':' || len(p.peek(0).text) > 2 {
				return false
			}
			p.day = p.peek(0).val
			p.i++
			if p.peek(0).kind == ',' {
				p.i++
			}
			p.optionalYear()
		case t.kind == '+' || t.kind == '-' || t.kind == 'n':
			if !p.parseNumberItem() {
				return false
			}
		case t.kind == 'w':
			if !p.parseWord() {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func dateTwoDigitYear(y int) int {
	if y < 69 {
		return 2000 + y
	}
	return 1900 + y
}

// optionalYear takes a year after a date without one.
func (p *dateParser) optionalYear() {
	if t := p.peek(0); t.kind == 'n' && p.peek(1).kind != ':' && (len(t.text) == 4 || len(t.text) == 2 && !p.hasTime) {
		p.year, p.hasYear = t.val, true
		if len(t.text) == 2 {
			p.year = dateTwoDigitYear(t.val)
		}
		p.i++
	}
}

// parseTime parses HH:MM[:SS[.frac]] [am|pm] [zone offset].
func (p *dateParser) parseTime() bool {
	p.hour = p.peek(0).val
	if p.peek(2).kind != 'n' {
		return false
	}
	p.min = p.peek(2).val
	p.i += 3
	if p.peek(0).kind == ':' && p.peek(1).kind == 'n' {
		p.sec = p.peek(1).val
		p.i += 2
		if (p.peek(0).kind == '.' || p.peek(0).kind == ',') && p.peek(1).kind == 'n' {
			frac := (p.peek(1).text + "000000000")[:9]
			p.nsec, _ = strconv.Atoi(frac)
			p.i += 2
		}
	}
	p.hasTime = true
	p.meridian()
	if p.hour > 23 || p.min > 59 || p.sec > 60 {
		return false
	}
	// A signed number right after a time is its zone offset (GNU reads
	// "10:00 +3 days" as 10:00 at UTC+3, one day later).
	if s := p.peek(0); (s.kind == '+' || s.kind == '-') && p.peek(1).kind == 'n' {
		return p.offset()
	}
	return true
}

func (p *dateParser) meridian() {
	if w := p.peek(0); w.kind == 'w' && (w.text == "am" || w.text == "pm" || w.text == "a" && p.peek(1).text == "m" || w.text == "p" && p.peek(1).text == "m") {
		if p.hour == 12 {
			p.hour = 0
		}
		if w.text[0] == 'p' {
			p.hour += 12
		}
		p.i++
		if len(w.text) == 1 {
			p.i++
		}
	}
}

// offset parses +hh, +hhmm or +hh:mm.
func (p *dateParser) offset() bool {
	sign := 1
	if p.peek(0).kind == '-' {
		sign = -1
	}
	n := p.peek(1)
	p.i += 2
	var mins int
	switch {
	case p.peek(0).kind == ':' && p.peek(1).kind == 'n':
		mins = n.val*60 + p.peek(1).val
		p.i += 2
	case len(n.text) <= 2:
		mins = n.val * 60
	case len(n.text) == 4:
		mins = n.val/100*60 + n.val%100
	default:
		return false
	}
	if mins > 24*60 || p.hasZone {
		return false
	}
	p.hasZone, p.zoneMin = true, sign*mins
	return true
}

// parseNumberItem handles a number not part of a date or time: a relative
// item ("3 days", "-2 hours"), a year, a date as YYYYMMDD or a time as
// HHMM.
func (p *dateParser) parseNumberItem() bool {
	sign := 0
	if t := p.peek(0); t.kind == '+' || t.kind == '-' {
		sign = 1
		if t.kind == '-' {
			sign = -1
		}
		p.i++
	}
	n := p.peek(0)
	if n.kind != 'n' {
		return false
	}
	if u, ok := dateUnit(p.peek(1).text); ok && p.peek(1).kind == 'w' {
		p.i += 2
		v := n.val
		if sign < 0 {
			v = -v
		}
		return p.relative(u, v)
	}
	if sign != 0 {
		// A signed number alone: a zone offset after a date.
		if p.hasZone || !(p.hasDate || p.hasTime) {
			return false
		}
		p.i--
		return p.offset()
	}
	p.i++
	switch {
	case len(n.text) == 8 && !p.hasDate:
		p.year, p.month, p.day = n.val/10000, n.val/100%100, n.val%100
		p.hasDate, p.hasYear = true, true
	case p.hasDate && !p.hasYear && len(n.text) == 4:
		p.year, p.hasYear = n.val, true
	case p.hasDate && p.hasTime && !p.hasRel && len(n.text) == 4:
		p.year, p.hasYear = n.val, true
	case !p.hasTime && len(n.text) <= 4 && (p.hasDate || len(n.text) > 2):
		p.hour, p.min = n.val, 0
		if len(n.text) > 2 {
			p.hour, p.min = n.val/100, n.val%100
		}
		p.hasTime = true
		p.meridian()
		return p.hour <= 23 && p.min <= 59
	case !p.hasTime && len(n.text) <= 2:
		if w := p.peek(0); w.kind == 'w' && (w.text == "am" || w.text == "pm") {
			p.hour, p.hasTime = n.val, true
			if p.hour > 12 {
				return false
			}
			p.meridian()
			return true
		}
		return false
	default:
		return false
	}
	return true
}

func (p *dateParser) relative(u [2]int, v int) bool {
	if w := p.peek(0); w.kind == 'w' && w.text == "ago" {
		v = -v
		p.i++
	}
	if v > 1e7 || v < -1e7 {
		return false
	}
	p.relMonths += u[0] * v
	p.relSecs += int64(u[1]) * int64(v)
	p.hasRel = true
	return true
}

func (p *dateParser) parseWord() bool {
	w := p.peek(0).text
	p.i++
	switch w {
	case "now", "today":
		p.hasRel = true
		return true
	case "yesterday":
		return p.relative([2]int{0, 86400}, -1)
	case "tomorrow":
		return p.relative([2]int{0, 86400}, 1)
	case "t":
		return p.hasDate && p.peek(0).kind == 'n'
	case "ago":
		return false
	}
	if u, ok := dateUnit(w); ok {
		return p.relative(u, 1)
	}
	if n, ok := dateOrdinals[w]; ok {
		next := p.peek(0)
		if next.kind != 'w' {
			return false
		}
		p.i++
		if u, ok := dateUnit(next.text); ok {
			return p.relative(u, n)
		}
		if d := dateWeekday(next.text); d >= 0 && !p.hasWeekday {
			p.hasWeekday, p.weekday, p.ordinal = true, d, n
			return true
		}
		return false
	}
	if d := dateWeekday(w); d >= 0 {
		if p.hasWeekday {
			return p.weekday == d // "Tue Jan 2 ..." names the day once
		}
		p.hasWeekday, p.weekday, p.ordinal = true, d, 0
		return true
	}
	if m, ok := dateZoneMinutes(w); ok && !p.hasZone {
		p.hasZone, p.zoneMin = true, m
		// "UTC+2", "GMT-05:00"
		if s := p.peek(0); (s.kind == '+' || s.kind == '-') && p.peek(1).kind == 'n' && !(p.peek(2).kind == 'w' && isDateUnitWord(p.peek(2).text)) {
			base := m
			p.hasZone = false
			if !p.offset() {
				return false
			}
			p.zoneMin += base
		}
		return true
	}
	return false
}

func isDateUnitWord(w string) bool {
	_, ok := dateUnit(w)
	return ok
}

// apply computes the time the items describe.
func (p *dateParser) apply(now time.Time, loc *time.Location) (time.Time, bool) {
	zone := loc
	if p.hasZone {
		zone = time.FixedZone("", p.zoneMin*60)
	}
	base := now.In(zone)
	y, mo, d := base.Date()
	h, mi, s, ns := base.Hour(), base.Minute(), base.Second(), base.Nanosecond()
	if p.hasDate {
		if p.hasYear {
			y = p.year
		}
		mo, d = time.Month(p.month), p.day
		if p.month < 1 || p.month > 12 || d < 1 || d > 31 || y < 0 || y > 99999 {
			return time.Time{}, false
		}
		if time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Day() != d {
			return time.Time{}, false
		}
		h, mi, s, ns = 0, 0, 0, 0
	}
	if p.hasWeekday && !p.hasTime {
		h, mi, s, ns = 0, 0, 0, 0
	}
	if p.hasTime {
		h, mi, s, ns = p.hour, p.min, p.sec, p.nsec
	}
	t := time.Date(y, mo, d, h, mi, s, ns, zone)
	// As in GNU, a day name moves the date only when no date was given.
	if p.hasWeekday && !p.hasDate {
		cur := int(t.Weekday())
		extra := 0
		if p.ordinal > 0 && cur != p.weekday {
			extra = 1
		}
		t = t.AddDate(0, 0, (p.weekday-cur+7)%7+7*(p.ordinal-extra))
	}
	if p.relMonths != 0 {
		t = t.AddDate(0, p.relMonths, 0)
	}
	if p.relSecs != 0 {
		days := p.relSecs / 86400
		t = t.AddDate(0, 0, int(days))
		t = t.Add(time.Duration(p.relSecs%86400) * time.Second)
	}
	if t.Year() > 99999 || t.Year() < -99999 || math.Abs(float64(t.Unix())) > 1<<45 {
		return time.Time{}, false
	}
	return t.In(loc), true
}

// System information. The sandbox is not Linux: the shell's commands run
// as a WebAssembly (wasm32) guest under WASI, inside codeport. uname says
// so rather than copying the host's values, which the guest cannot see and
// scripts would misread (a kernel version to work around, an x86_64 to
// download binaries for).
const (
	unameKernel   = "codeport" // -s: the "kernel" the commands run on
	unameRelease  = "wasip1"   // -r: the WASI version of the guest
	unameVersion  = "#1"       // -v
	unameMachine  = "wasm32"   // -m
	unameOS       = "WASI"     // -o
	defaultHost   = "sandbox"
	defaultUser   = "user"
	sandboxUserID = 1000
)

func (c *call) hostname() string {
	if v := c.env.Get("HOSTNAME"); v.IsSet() && v.String() != "" {
		return v.String()
	}
	return defaultHost
}

// userName is the one identity of the sandbox: $USER if set, else "user".
func (c *call) userName() string {
	if v := c.env.Get("USER"); v.IsSet() && v.String() != "" {
		return v.String()
	}
	return defaultUser
}

func cmdUname(c *call) int {
	long := map[string]byte{
		"all": 'a', "kernel-name": 's', "nodename": 'n', "kernel-release": 'r',
		"kernel-version": 'v', "machine": 'm', "processor": 'p', "hardware-platform": 'i',
		"operating-system": 'o',
	}
	o, rest, ok := c.getopt(c.args, "asnrvmpio", "", long)
	if !ok {
		fmt.Fprintf(c.stderr, "uname: Try 'uname --help' for more information.\n")
		return 1
	}
	if len(rest) > 0 {
		c.errorf("extra operand '%s'", rest[0])
		fmt.Fprintf(c.stderr, "uname: Try 'uname --help' for more information.\n")
		return 1
	}
	all := o.has('a')
	fields := []struct {
		flag byte
		val  string
	}{
		{'s', unameKernel}, {'n', c.hostname()}, {'r', unameRelease}, {'v', unameVersion},
		{'m', unameMachine}, {'p', "unknown"}, {'i', "unknown"}, {'o', unameOS},
	}
	any := false
	for _, f := range fields {
		any = any || o.has(f.flag)
	}
	var out []string
	for _, f := range fields {
		switch {
		case all && f.val != "unknown", o.has(f.flag), !all && !any && f.flag == 's':
			out = append(out, f.val)
		}
	}
	fmt.Fprintln(c.stdout, strings.Join(out, " "))
	return 0
}

func cmdWhoami(c *call) int {
	if len(c.args) > 0 {
		c.errorf("extra operand '%s'", c.args[0])
		fmt.Fprintf(c.stderr, "whoami: Try 'whoami --help' for more information.\n")
		return 1
	}
	fmt.Fprintln(c.stdout, c.userName())
	return 0
}

func cmdId(c *call) int {
	long := map[string]byte{"user": 'u', "group": 'g', "groups": 'G', "name": 'n', "real": 'r', "zero": 'z'}
	o, rest, ok := c.getopt(c.args, "ugGnrz", "", long)
	if !ok {
		fmt.Fprintf(c.stderr, "id: Try 'id --help' for more information.\n")
		return 1
	}
	name := c.userName()
	if len(rest) > 1 {
		c.errorf("extra operand '%s'", rest[1])
		return 1
	}
	if len(rest) == 1 && rest[0] != name {
		c.errorf("'%s': no such user", rest[0])
		return 1
	}
	n := btoi(o.has('u')) + btoi(o.has('g')) + btoi(o.has('G'))
	if n > 1 {
		c.errorf("cannot print \"only\" of more than one choice")
		return 1
	}
	if n == 0 && (o.has('n') || o.has('r')) {
		c.errorf("cannot print only names or real IDs in default format")
		return 1
	}
	var s string
	switch {
	case n == 0:
		s = fmt.Sprintf("uid=%d(%s) gid=%d(%s) groups=%d(%s)", sandboxUserID, name, sandboxUserID, name, sandboxUserID, name)
	case o.has('n'):
		s = name
	default:
		s = strconv.Itoa(sandboxUserID)
	}
	fmt.Fprintln(c.stdout, s)
	return 0
}

func cmdHostname(c *call) int {
	long := map[string]byte{"short": 's', "fqdn": 'f', "long": 'f', "ip-address": 'i', "all-ip-addresses": 'I'}
	o, rest, ok := c.getopt(c.args, "sfiI", "", long)
	if !ok {
		return 1
	}
	if len(rest) > 0 {
		c.errorf("you must be root to change the host name")
		return 1
	}
	if o.has('i') || o.has('I') {
		c.errorf("the sandbox has no network address")
		return 1
	}
	name := c.hostname()
	if o.has('s') {
		name, _, _ = strings.Cut(name, ".")
	}
	fmt.Fprintln(c.stdout, name)
	return 0
}

// cmdNproc reports one processor: the guest runs its commands one at a
// time.
func cmdNproc(c *call) int {
	long := map[string]byte{"all": 'a', "ignore": 'i'}
	o, rest, ok := c.getopt(c.args, "a", "i", long)
	if !ok {
		fmt.Fprintf(c.stderr, "nproc: Try 'nproc --help' for more information.\n")
		return 1
	}
	if len(rest) > 0 {
		c.errorf("extra operand '%s'", rest[0])
		fmt.Fprintf(c.stderr, "nproc: Try 'nproc --help' for more information.\n")
		return 1
	}
	if v := o.last('i', ""); v != "" {
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			c.errorf("invalid number: '%s'", v)
			return 1
		}
	}
	fmt.Fprintln(c.stdout, 1)
	return 0
}
