package shell

import (
	"fmt"
	"io"
)

func cmdPwd(c *call) int {
	c.name = "bash: pwd"
	for _, a := range c.args {
		if a != "-L" && a != "-P" {
			c.errorf("%s: invalid option", a)
			return 2
		}
	}
	if _, err := io.WriteString(c.stdout, c.dir+"\n"); err != nil {
		return c.writeFailed(err)
	}
	return 0
}

// cmdCd runs only for a cd the call handler found to be refused: it
// explains why. (cd itself is the interpreter's builtin.)
func cmdCd(c *call) int {
	_, msg := c.sh.cdTarget(c.ctx, c.dir, c.env, c.args)
	if msg == "" {
		msg = "cannot change directory here"
	}
	fmt.Fprintf(c.stderr, "bash: cd: %s\n", msg)
	return 1
}
