package shell

import (
	"fmt"
	"strings"
)

func cmdHostname(c *call) int {
	long := map[string]byte{"short": 's', "fqdn": 'f', "long": 'f', "ip-address": 'i', "all-ip-addresses": 'I'}
	o, rest, ok := c.getopt(c.args, "sfiI", "", long)
	if !ok {
		return 1
	}
	if len(rest) > 0 {
		c.errorf("you must be root to change the host name")
		return 1
	}
	if o.has('i') || o.has('I') {
		c.errorf("the sandbox has no network address")
		return 1
	}
	name := c.hostname()
	if o.has('s') {
		name, _, _ = strings.Cut(name, ".")
	}
	fmt.Fprintln(c.stdout, name)
	return 0
}
