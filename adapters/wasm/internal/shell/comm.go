package shell

import (
	"bytes"
	"fmt"
)

// comm compares two sorted files: lines only in the first, only in the
// second, and in both, in three columns (-1, -2, -3 hide them). The order
// is not checked.
func cmdComm(c *call) int {
	o, files, ok := c.getopt(c.args, "123z", "D", map[string]byte{
		"check-order": 0, "nocheck-order": 0, "output-delimiter": 'D', "zero-terminated": 'z', "total": 'T'})
	if !ok {
		return 1
	}
	if len(files) != 2 {
		if len(files) < 2 {
			c.errorf("missing operand")
		} else {
			c.errorf("extra operand '%s'", files[2])
		}
		return 1
	}
	if o.has('z') {
		c.errorf("-z is not supported")
		return 1
	}
	delim := "\t"
	if v := o.vals['D']; len(v) > 0 {
		delim = v[len(v)-1]
	}
	a, err := c.readInput(files[0])
	if err != nil {
		return c.fail(1, files[0], err)
	}
	b, err := c.readInput(files[1])
	if err != nil {
		return c.fail(1, files[1], err)
	}
	la, lb := dataLines(a), dataLines(b)
	prefix := [3]string{}
	pre := ""
	for i := range 3 {
		prefix[i] = pre
		if !o.has(byte('1' + i)) {
			pre += delim
		}
	}
	w := c.out()
	var totals [3]int
	put := func(col int, line []byte) {
		totals[col]++
		if o.has(byte('1' + col)) {
			return
		}
		w.WriteString(prefix[col])
		w.Write(line)
		w.WriteByte('\n')
	}
	i, j := 0, 0
	for i < len(la) || j < len(lb) {
		if (i+j)%1024 == 1023 && c.stopped() {
			return 1
		}
		switch {
		case j >= len(lb) || i < len(la) && bytes.Compare(la[i], lb[j]) < 0:
			put(0, la[i])
			i++
		case i >= len(la) || bytes.Compare(la[i], lb[j]) > 0:
			put(1, lb[j])
			j++
		default:
			put(2, la[i])
			i, j = i+1, j+1
		}
	}
	if o.has('T') {
		fmt.Fprintf(w, "%d%s%d%s%d%stotal\n", totals[0], delim, totals[1], delim, totals[2], delim)
	}
	return c.flush(w, 0)
}
