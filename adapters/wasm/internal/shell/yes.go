package shell

import "strings"

// cmdYes prints its arguments (or "y") as a line, forever: until the
// reader goes away (a closed pipe ends it quietly, as SIGPIPE would) or
// the call is stopped.
func cmdYes(c *call) int {
	line := "y"
	if len(c.args) > 0 {
		line = strings.Join(c.args, " ")
	}
	line += "\n"
	// Whole lines, about 8 KiB at a time, as GNU yes writes them.
	buf := []byte(strings.Repeat(line, max(1, 8192/len(line))))
	for !c.stopped() {
		if _, err := c.stdout.Write(buf); err != nil {
			return c.writeFailed(err)
		}
	}
	return 1
}
