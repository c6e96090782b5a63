package shell

import "unicode/utf8"

// rev reverses the characters of every line.
func cmdRev(c *call) int {
	_, files, ok := c.getopt(c.args, "", "", nil)
	if !ok {
		return 1
	}
	w := c.out()
	var buf []byte
	status := c.eachLine(files, func(line []byte, nl bool) error {
		buf = buf[:0]
		for i := len(line); i > 0; {
			_, n := utf8.DecodeLastRune(line[:i])
			buf = append(buf, line[i-n:i]...)
			i -= n
		}
		if nl {
			buf = append(buf, '\n')
		}
		_, err := w.Write(buf)
		return err
	})
	return c.flush(w, status)
}
