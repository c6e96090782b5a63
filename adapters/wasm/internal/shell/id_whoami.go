package shell

import (
	"fmt"
	"strconv"
)

func cmdWhoami(c *call) int {
	if len(c.args) > 0 {
		c.errorf("extra operand '%s'", c.args[0])
		fmt.Fprintf(c.stderr, "whoami: Try 'whoami --help' for more information.\n")
		return 1
	}
	fmt.Fprintln(c.stdout, c.userName())
	return 0
}

func cmdId(c *call) int {
	long := map[string]byte{"user": 'u', "group": 'g', "groups": 'G', "name": 'n', "real": 'r', "zero": 'z'}
	o, rest, ok := c.getopt(c.args, "ugGnrz", "", long)
	if !ok {
		fmt.Fprintf(c.stderr, "id: Try 'id --help' for more information.\n")
		return 1
	}
	name := c.userName()
	if len(rest) > 1 {
		c.errorf("extra operand '%s'", rest[1])
		return 1
	}
	if len(rest) == 1 && rest[0] != name {
		c.errorf("'%s': no such user", rest[0])
		return 1
	}
	n := btoi(o.has('u')) + btoi(o.has('g')) + btoi(o.has('G'))
	if n > 1 {
		c.errorf("cannot print \"only\" of more than one choice")
		return 1
	}
	if n == 0 && (o.has('n') || o.has('r')) {
		c.errorf("cannot print only names or real IDs in default format")
		return 1
	}
	var s string
	switch {
	case n == 0:
		s = fmt.Sprintf("uid=%d(%s) gid=%d(%s) groups=%d(%s)", sandboxUserID, name, sandboxUserID, name, sandboxUserID, name)
	case o.has('n'):
		s = name
	default:
		s = strconv.Itoa(sandboxUserID)
	}
	fmt.Fprintln(c.stdout, s)
	return 0
}
