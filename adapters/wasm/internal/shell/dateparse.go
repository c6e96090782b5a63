package shell

import (
	"math"
	"strconv"
	"strings"
	"time"
)

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
