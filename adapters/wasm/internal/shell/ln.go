package shell

import (
	"fmt"
	"path"
	"strings"
)

// ln fails: the workspace's file system has neither symbolic nor hard
// links (it refuses to create them), and saying so plainly beats a bare
// "Operation not permitted".
func cmdLn(c *call) int {
	o, operands, ok := c.getopt(c.args, "sfnvrTiPLb", "tS", map[string]byte{
		"symbolic": 's', "force": 'f', "no-dereference": 'n', "verbose": 'v', "relative": 'r',
		"target-directory": 't', "no-target-directory": 'T', "interactive": 'i', "logical": 'L', "physical": 'P', "suffix": 'S', "backup": 0,
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Try 'ln --help' for more information.")
		return 1
	}
	dir := o.last('t', "")
	switch {
	case len(operands) == 0:
		c.errorf("missing file operand")
		fmt.Fprintln(c.stderr, "Try 'ln --help' for more information.")
		return 1
	case dir == "" && len(operands) > 2:
		dir = operands[len(operands)-1]
		operands = operands[:len(operands)-1]
		if fi, err := c.stat(dir); err != nil || !fi.IsDir() {
			c.errorf("target '%s' is not a directory", dir)
			return 1
		}
	}
	var pairs [][2]string // target, link name
	switch {
	case dir != "":
		for _, t := range operands {
			pairs = append(pairs, [2]string{t, strings.TrimSuffix(dir, "/") + "/" + path.Base(t)})
		}
	case len(operands) == 1:
		pairs = append(pairs, [2]string{operands[0], path.Base(operands[0])})
	default:
		name := operands[1]
		if fi, err := c.stat(name); err == nil && fi.IsDir() && !o.has('T') {
			name = strings.TrimSuffix(name, "/") + "/" + path.Base(operands[0])
		}
		pairs = append(pairs, [2]string{operands[0], name})
	}
	for _, p := range pairs {
		if o.has('s') {
			c.errorf("failed to create symbolic link '%s': %s", p[1], errNoLinks)
			continue
		}
		if _, err := c.stat(p[0]); err != nil {
			c.errorf("failed to access '%s': %s", p[0], errText(err))
			continue
		}
		c.errorf("failed to create hard link '%s' => '%s': %s", p[1], p[0], errNoLinks)
	}
	return 1
}
