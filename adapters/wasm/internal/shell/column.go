package shell

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// column formats its input lines into a table (-t: fields split on
// whitespace or the characters of -s, joined by -o, two spaces) or, by
// default, fills columns of entries as wide as -c (80).
func cmdColumn(c *call) int {
	o, files, ok := c.getopt(c.args, "txne", "soc", map[string]byte{
		"table": 't', "fillrows": 'x', "separator": 's', "output-separator": 'o',
		"output-width": 'c', "columns": 'c'})
	if !ok {
		return 1
	}
	width := 80
	if v, err := strconv.Atoi(c.env.Get("COLUMNS").String()); err == nil && v > 0 {
		width = v
	}
	if v := o.vals['c']; len(v) > 0 {
		n, err := strconv.Atoi(v[len(v)-1])
		if err != nil || n < 0 {
			c.errorf("invalid columns argument: '%s'", v[len(v)-1])
			return 1
		}
		width = n
	}
	var entries []string
	total := 0
	status := c.eachLine(files, func(line []byte, nl bool) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		total += len(line)
		if max := c.maxBytes(); max > 0 && int64(total) > max {
			return fmt.Errorf("input over %d bytes: %w", max, errInputTooLarge)
		}
		entries = append(entries, string(line))
		return nil
	})
	if status != 0 && status != 1 {
		return status
	}
	w := c.out()
	if o.has('t') {
		var rows [][]string
		ncols := 0
		seps, hasSep := "", false
		if v := o.vals['s']; len(v) > 0 {
			seps, hasSep = v[len(v)-1], true
		}
		for _, e := range entries {
			var cells []string
			switch {
			case !hasSep:
				cells = strings.Fields(e)
			case seps == "":
				cells = []string{e}
			default:
				start := 0
				for i, r := range e {
					if strings.ContainsRune(seps, r) {
						cells = append(cells, e[start:i])
						start = i + utf8.RuneLen(r)
					}
				}
				cells = append(cells, e[start:])
			}
			rows = append(rows, cells)
			ncols = max(ncols, len(cells))
		}
		widths := make([]int, ncols)
		for _, r := range rows {
			for i, cell := range r {
				widths[i] = max(widths[i], displayWidth(cell))
			}
		}
		sep := o.last('o', "  ")
		for n, r := range rows {
			if n%1024 == 1023 && c.stopped() {
				return 1
			}
			for i := range ncols {
				cell := ""
				if i < len(r) {
					cell = r[i]
				}
				w.WriteString(cell)
				if i < ncols-1 {
					w.WriteString(strings.Repeat(" ", widths[i]-displayWidth(cell)))
					w.WriteString(sep)
				}
			}
			if err := w.WriteByte('\n'); err != nil {
				return c.writeFailed(err)
			}
		}
		return c.flush(w, status)
	}
	// Fill mode, as util-linux's: entries padded with tabs to a multiple
	// of 8 past the longest.
	longest := 0
	for _, e := range entries {
		longest = max(longest, displayWidth(e))
	}
	longest = (longest + 8) &^ 7
	cols := max(width/longest, 1)
	tabTo := func(chars, end int) {
		for next := (chars + 8) &^ 7; next <= end; next = (chars + 8) &^ 7 {
			w.WriteByte('\t')
			chars = next
		}
	}
	if o.has('x') {
		chars, col, end := 0, 0, longest
		for _, e := range entries {
			w.WriteString(e)
			chars += displayWidth(e)
			if col++; col == cols {
				chars, col, end = 0, 0, longest
				w.WriteByte('\n')
				continue
			}
			tabTo(chars, end)
			chars = end
			end += longest
		}
		if col > 0 {
			w.WriteByte('\n')
		}
		return c.flush(w, status)
	}
	rows := (len(entries) + cols - 1) / cols
	for r := range rows {
		if r%1024 == 1023 && c.stopped() {
			return 1
		}
		end, chars := longest, 0
		for i := r; ; {
			w.WriteString(entries[i])
			chars += displayWidth(entries[i])
			if i += rows; i >= len(entries) {
				break
			}
			tabTo(chars, end)
			chars = end
			end += longest
		}
		if err := w.WriteByte('\n'); err != nil {
			return c.writeFailed(err)
		}
	}
	return c.flush(w, status)
}
