package shell

import "bytes"

// tac prints the lines of each file, last first. A last line without a
// newline is printed as it is, so it joins the line printed after it (as
// GNU's does).
func cmdTac(c *call) int {
	_, files, ok := c.getopt(c.args, "", "", nil)
	if !ok {
		return 1
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	w := c.out()
	status := 0
	for _, f := range files {
		if c.stopped() {
			return 1
		}
		data, err := c.readInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		end := len(data)
		for end > 0 {
			start := bytes.LastIndexByte(data[:end-1], '\n') + 1
			if _, err := w.Write(data[start:end]); err != nil {
				return c.writeFailed(err)
			}
			end = start
		}
	}
	return c.flush(w, status)
}
