package shell

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// tabStops parses the list of -t: one number (every N columns) or
// ascending positions, by commas or blanks; "/N" and "+N" as the last
// item repeat.
type tabStops struct {
	every int   // tabs every this many columns after the list
	stops []int // explicit positions
}

func parseTabStops(specs []string) (tabStops, error) {
	ts := tabStops{every: 8}
	var list []string
	for _, s := range specs {
		list = append(list, strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })...)
	}
	var stops []int
	for i, s := range list {
		repeat := strings.HasPrefix(s, "/") || strings.HasPrefix(s, "+")
		n, err := strconv.Atoi(strings.TrimLeft(s, "/+"))
		if err != nil || n < 0 || n > 1<<20 {
			return ts, fmt.Errorf("tab size contains invalid character(s): '%s'", s)
		}
		if repeat && i != len(list)-1 {
			return ts, fmt.Errorf("'%c' specifier only allowed with the last value", s[0])
		}
		if repeat {
			if n == 0 {
				return ts, errors.New("tab size cannot be 0")
			}
			ts.every = n
			ts.stops = stops
			return ts, nil
		}
		if len(stops) > 0 && n <= stops[len(stops)-1] {
			return ts, errors.New("tab sizes must be ascending")
		}
		stops = append(stops, n)
	}
	switch len(stops) {
	case 0:
	case 1:
		if stops[0] == 0 {
			return ts, errors.New("tab size cannot be 0")
		}
		ts.every = stops[0]
	default:
		ts.stops, ts.every = stops, 0
	}
	return ts, nil
}

// next returns the tab stop after col, or -1 past the last explicit one
// (where GNU's expand puts one space).
func (ts tabStops) next(col int) int {
	for _, s := range ts.stops {
		if s > col {
			return s
		}
	}
	if ts.every == 0 {
		return -1
	}
	if len(ts.stops) > 0 {
		base := ts.stops[len(ts.stops)-1]
		return base + ((col-base)/ts.every+1)*ts.every
	}
	return col + ts.every - col%ts.every
}

// expand turns tabs into spaces; -i only the tabs before the first
// non-blank.
func cmdExpand(c *call) int {
	o, files, ok := c.getopt(digitOption(c.args, "-t"), "i", "t", map[string]byte{"initial": 'i', "tabs": 't'})
	if !ok {
		return 1
	}
	ts, err := parseTabStops(o.vals['t'])
	if err != nil {
		c.errorf("%s", err)
		return 1
	}
	w := c.out()
	var buf []byte
	status := c.eachLine(files, func(line []byte, nl bool) error {
		buf = buf[:0]
		col, initial := 0, true
		for _, b := range line {
			switch {
			case b == '\t' && (initial || !o.has('i')):
				next := ts.next(col)
				if next < 0 {
					next = col + 1
				}
				for ; col < next; col++ {
					buf = append(buf, ' ')
				}
				continue
			case b == '\b':
				col = max(col-1, 0)
			default:
				col++
			}
			if b != ' ' && b != '\t' {
				initial = false
			}
			buf = append(buf, b)
		}
		if nl {
			buf = append(buf, '\n')
		}
		_, err := w.Write(buf)
		return err
	})
	return c.flush(w, status)
}

// unexpand turns the blanks before the first non-blank (every run of
// blanks with -a or -t) into tabs where they reach a tab stop. A single
// space before a tab stop stays a space.
func cmdUnexpand(c *call) int {
	o, files, ok := c.getopt(digitOption(c.args, "-t"), "a", "t", map[string]byte{"all": 'a', "tabs": 't', "first-only": 'F'})
	if !ok {
		return 1
	}
	ts, err := parseTabStops(o.vals['t'])
	if err != nil {
		c.errorf("%s", err)
		return 1
	}
	all := (o.has('a') || len(o.vals['t']) > 0) && !o.has('F')
	w := c.out()
	var buf, pending []byte
	status := c.eachLine(files, func(line []byte, nl bool) error {
		buf, pending = buf[:0], pending[:0]
		col, convert := 0, true
		for _, b := range line {
			blank := b == ' ' || b == '\t'
			if blank && convert {
				next := ts.next(col)
				if b == '\t' {
					if next < 0 {
						next = col + 1
					}
					col = next
					pending = append(pending[:0], '\t')
					buf = append(buf, pending...)
					pending = pending[:0]
					continue
				}
				col++
				pending = append(pending, ' ')
				if col == next {
					if len(pending) > 1 {
						buf = append(buf, '\t')
					} else {
						buf = append(buf, ' ')
					}
					pending = pending[:0]
				}
				continue
			}
			buf = append(buf, pending...)
			pending = pending[:0]
			if b == '\b' {
				col = max(col-1, 0)
			} else {
				col++
			}
			if !all && !blank {
				convert = false
			}
			buf = append(buf, b)
		}
		buf = append(buf, pending...)
		if nl {
			buf = append(buf, '\n')
		}
		_, err := w.Write(buf)
		return err
	})
	return c.flush(w, status)
}
