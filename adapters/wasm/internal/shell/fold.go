package shell

import (
	"bytes"
	"strconv"
)

// foldColumn is the column after byte b at column col: fold (as GNU's, not
// multibyte-aware) moves back on a backspace, to 0 on a carriage return
// and to the next multiple of 8 on a tab, unless -b counts bytes.
func foldColumn(col int, b byte, bytes bool) int {
	if bytes {
		return col + 1
	}
	switch b {
	case '\b':
		return max(col-1, 0)
	case '\r':
		return 0
	case '\t':
		return col + 8 - col%8
	}
	return col + 1
}

// fold breaks lines longer than -w columns (80); -s breaks after the last
// blank that fits, -b counts bytes rather than columns.
func cmdFold(c *call) int {
	o, files, ok := c.getopt(digitOption(c.args, "-w"), "sb", "w", map[string]byte{"spaces": 's', "bytes": 'b', "width": 'w'})
	if !ok {
		return 1
	}
	width, err := strconv.Atoi(o.last('w', "80"))
	if err != nil || width < 1 {
		c.errorf("invalid number of columns: '%s'", o.last('w', "80"))
		return 1
	}
	spaces, byBytes := o.has('s'), o.has('b')
	w := c.out()
	var out []byte // the line being built: at most one output line
	status := c.eachLine(files, func(line []byte, nl bool) error {
		out = out[:0]
		col := 0
		for i := 0; i < len(line); {
			b := line[i]
			col = foldColumn(col, b, byBytes)
			if col <= width {
				out = append(out, b)
				i++
				continue
			}
			if spaces {
				if k := bytes.LastIndexAny(out, " \t"); k >= 0 {
					w.Write(out[:k+1])
					w.WriteByte('\n')
					out = append(out[:0], out[k+1:]...)
					col = 0
					for _, x := range out {
						col = foldColumn(col, x, byBytes)
					}
					continue // rescan b
				}
			}
			if len(out) == 0 {
				out = append(out, b)
				i++
				continue
			}
			w.Write(out)
			w.WriteByte('\n')
			out, col = out[:0], 0
		}
		w.Write(out)
		if nl {
			return w.WriteByte('\n')
		}
		_, err := w.Write(nil)
		return err
	})
	return c.flush(w, status)
}
