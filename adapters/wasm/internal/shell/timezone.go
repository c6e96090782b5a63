package shell

import (
	"strconv"
	"strings"
	"time"
)

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
