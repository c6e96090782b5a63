package shell

import (
	"fmt"
	"strconv"
)

// cmdNproc reports one processor: the guest runs its commands one at a
// time.
func cmdNproc(c *call) int {
	long := map[string]byte{"all": 'a', "ignore": 'i'}
	o, rest, ok := c.getopt(c.args, "a", "i", long)
	if !ok {
		fmt.Fprintf(c.stderr, "nproc: Try 'nproc --help' for more information.\n")
		return 1
	}
	if len(rest) > 0 {
		c.errorf("extra operand '%s'", rest[0])
		fmt.Fprintf(c.stderr, "nproc: Try 'nproc --help' for more information.\n")
		return 1
	}
	if v := o.last('i', ""); v != "" {
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			c.errorf("invalid number: '%s'", v)
			return 1
		}
	}
	fmt.Fprintln(c.stdout, 1)
	return 0
}
