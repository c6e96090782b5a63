package shell

import (
	"bufio"
	"path"
	"strings"
)

// basename prints NAME without its directory (and SUFFIX); -a takes
// several names, -s SUFFIX (which implies -a) strips it from each, -z ends
// the lines with NUL.
func cmdBasename(c *call) int {
	o, args, ok := c.getopt(c.args, "az", "s", map[string]byte{"multiple": 'a', "suffix": 's', "zero": 'z'})
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errorf("missing operand")
		return 1
	}
	suffix := o.last('s', "")
	multiple := o.has('a') || len(o.vals['s']) > 0
	if !multiple {
		if len(args) > 2 {
			c.errorf("extra operand '%s'", args[2])
			return 1
		}
		if len(args) == 2 {
			suffix = args[1]
		}
		args = args[:1]
	}
	end := "\n"
	if o.has('z') {
		end = "\x00"
	}
	w := c.out()
	for _, a := range args {
		name := strings.TrimRight(a, "/")
		if name == "" && a != "" {
			name = "/"
		} else {
			name = path.Base(name)
			if name == "." && a == "" {
				name = ""
			}
		}
		if suffix != "" && name != suffix {
			name = strings.TrimSuffix(name, suffix)
		}
		w.WriteString(name + end)
	}
	return c.flush(w, 0)
}

func cmdDirname(c *call) int {
	args := c.args
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		c.errorf("missing operand")
		return 1
	}
	w := bufio.NewWriter(c.stdout)
	for _, a := range args {
		d := a
		if strings.Trim(d, "/") == "" && d != "" {
			d = "/"
		} else {
			d = path.Dir(strings.TrimRight(d, "/"))
		}
		w.WriteString(d + "\n")
	}
	return c.flush(w, 0)
}
