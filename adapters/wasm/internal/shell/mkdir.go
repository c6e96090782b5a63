package shell

import (
	"fmt"
	"io/fs"
)

func cmdMkdir(c *call) int {
	o, dirs, ok := c.getopt(c.args, "pv", "m", map[string]byte{"parents": 'p', "verbose": 'v', "mode": 'm'})
	if !ok {
		return 1
	}
	if len(dirs) == 0 {
		c.errorf("missing operand")
		return 1
	}
	status := 0
	for _, d := range dirs {
		if c.stopped() {
			break
		}
		t, err := c.target(d)
		if err == nil && t.dev != "" {
			err = fs.ErrExist
		}
		if err == nil && t.root {
			if o.has('p') {
				continue
			}
			err = fs.ErrExist
		}
		if err == nil {
			err = c.sh.fs.mkdir(c.ctx, t.rel, o.has('p'))
		}
		if err != nil {
			c.errorf("cannot create directory '%s': %s", d, errText(err))
			status = 1
			continue
		}
		if o.has('v') {
			fmt.Fprintf(c.stdout, "mkdir: created directory '%s'\n", d)
		}
	}
	return status
}
