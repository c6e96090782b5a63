package shell

import (
	"fmt"
	"strings"
)

func cmdUname(c *call) int {
	long := map[string]byte{
		"all": 'a', "kernel-name": 's', "nodename": 'n', "kernel-release": 'r',
		"kernel-version": 'v', "machine": 'm', "processor": 'p', "hardware-platform": 'i',
		"operating-system": 'o',
	}
	o, rest, ok := c.getopt(c.args, "asnrvmpio", "", long)
	if !ok {
		fmt.Fprintf(c.stderr, "uname: Try 'uname --help' for more information.\n")
		return 1
	}
	if len(rest) > 0 {
		c.errorf("extra operand '%s'", rest[0])
		fmt.Fprintf(c.stderr, "uname: Try 'uname --help' for more information.\n")
		return 1
	}
	all := o.has('a')
	fields := []struct {
		flag byte
		val  string
	}{
		{'s', unameKernel}, {'n', c.hostname()}, {'r', unameRelease}, {'v', unameVersion},
		{'m', unameMachine}, {'p', "unknown"}, {'i', "unknown"}, {'o', unameOS},
	}
	any := false
	for _, f := range fields {
		any = any || o.has(f.flag)
	}
	var out []string
	for _, f := range fields {
		switch {
		case all && f.val != "unknown", o.has(f.flag), !all && !any && f.flag == 's':
			out = append(out, f.val)
		}
	}
	fmt.Fprintln(c.stdout, strings.Join(out, " "))
	return 0
}
