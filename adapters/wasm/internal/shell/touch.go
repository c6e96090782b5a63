package shell

import (
	"errors"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func cmdTouch(c *call) int {
	o, files, ok := c.getopt(c.args, "camh", "dtr", map[string]byte{"no-create": 'c', "date": 'd', "reference": 'r'})
	if !ok {
		return 1
	}
	if len(files) == 0 {
		c.errorf("missing file operand")
		return 1
	}
	// The time to set: now, or what -d (a date as date -d reads it), -t
	// ([[CC]YY]MMDDhhmm[.ss]) or -r (another file's) gives.
	stamp, explicit := time.Now(), false
	sources := 0
	for _, f := range []byte("dtr") {
		if len(o.vals[f]) > 0 {
			sources++
		}
	}
	if sources > 1 {
		c.errorf("cannot specify times from more than one source")
		return 1
	}
	dates := map[byte]func(string, time.Time, *time.Location) (time.Time, bool){'d': parseDate, 't': touchStamp}
	for f, parse := range dates {
		if v := o.last(f, ""); len(o.vals[f]) > 0 {
			t, ok := parse(v, stamp, c.dateLocation())
			if !ok {
				c.errorf("invalid date format '%s'", v)
				return 1
			}
			stamp, explicit = t, true
		}
	}
	if len(o.vals['r']) > 0 {
		v := o.last('r', "")
		rt, err := c.target(v)
		var info fs.FileInfo
		if err == nil {
			info, err = c.sh.fs.stat(c.ctx, rt.rel)
		}
		if err != nil {
			c.errorf("failed to get attributes of '%s': %s", v, errText(err))
			return 1
		}
		stamp, explicit = info.ModTime(), true
	}
	status := 0
	for _, f := range files {
		if c.stopped() {
			break
		}
		t, err := c.target(f)
		if err == nil && t.dev != "" {
			continue
		}
		if err == nil {
			_, err = c.sh.fs.stat(c.ctx, t.rel)
			switch {
			case err == nil:
				err = c.sh.fs.touch(c.ctx, t.rel, stamp)
			case errors.Is(err, fs.ErrNotExist) && o.has('c'):
				err = nil
			case errors.Is(err, fs.ErrNotExist):
				err = c.createEmpty(t)
				if err == nil && explicit {
					err = c.sh.fs.touch(c.ctx, t.rel, stamp)
				}
			}
		}
		if err != nil {
			c.errorf("cannot touch '%s': %s", f, errText(err))
			status = 1
		}
	}
	return status
}

// touchStamp reads touch -t's [[CC]YY]MMDDhhmm[.ss] in loc; a two-digit
// year is 1969-2068, and without a year it is now's.
func touchStamp(v string, now time.Time, loc *time.Location) (time.Time, bool) {
	main, secs, hasSecs := strings.Cut(v, ".")
	num := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && len(s) > 0 && s[0] != '+' && s[0] != '-'
	}
	sec := 0
	if hasSecs {
		n, ok := num(secs)
		if !ok || len(secs) != 2 || n > 60 {
			return time.Time{}, false
		}
		sec = n
	}
	if _, ok := num(main); !ok {
		return time.Time{}, false
	}
	year := now.In(loc).Year()
	switch len(main) {
	case 8:
	case 10:
		yy, _ := num(main[:2])
		year = 1900 + yy
		if yy < 69 {
			year = 2000 + yy
		}
		main = main[2:]
	case 12:
		year, _ = num(main[:4])
		main = main[4:]
	default:
		return time.Time{}, false
	}
	month, _ := num(main[0:2])
	day, _ := num(main[2:4])
	hour, _ := num(main[4:6])
	minute, _ := num(main[6:8])
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, loc)
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
		t.Month() != time.Month(month) || t.Day() != day {
		return time.Time{}, false
	}
	return t, true
}

// createEmpty creates the empty file t; its directory must exist.
func (c *call) createEmpty(t target) error {
	info, err := c.sh.fs.stat(c.ctx, path.Dir(t.rel))
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return syscall.ENOTDIR
	}
	_, err = c.sh.fs.replace(t.rel, strings.NewReader(""))
	return err
}
