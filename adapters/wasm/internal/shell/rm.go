package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
)

func cmdRm(c *call) int {
	o, paths, ok := c.getopt(c.args, "rRfidIv", "", map[string]byte{"recursive": 'r', "force": 'f', "dir": 'd', "verbose": 'v'})
	if !ok {
		return 1
	}
	recursive, force := o.has('r') || o.has('R'), o.has('f')
	if len(paths) == 0 {
		if force {
			return 0
		}
		c.errorf("missing operand")
		return 1
	}
	status := 0
	for _, p := range paths {
		if c.stopped() {
			break
		}
		if base := path.Base(p); base == "." || base == ".." {
			c.errorf("refusing to remove '.' or '..' directory: skipping '%s'", p)
			status = 1
			continue
		}
		t, err := c.target(p)
		if err == nil && t.root {
			c.errorf("refusing to remove the workspace root '%s'", p)
			status = 1
			continue
		}
		if err == nil && t.dev != "" {
			err = fs.ErrPermission
		}
		var info fs.FileInfo
		if err == nil {
			info, err = c.sh.fs.lstat(c.ctx, t.rel)
		}
		if err == nil && info.IsDir() && !recursive && !o.has('d') {
			err = errIsDirectory
		}
		if err == nil {
			if info.IsDir() && recursive {
				err = c.sh.fs.removeAll(c.ctx, t.rel)
			} else {
				err = c.sh.fs.remove(c.ctx, t.rel)
			}
		}
		if err != nil {
			if force && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			c.errorf("cannot remove '%s': %s", p, errText(err))
			status = 1
			continue
		}
		if o.has('v') {
			fmt.Fprintf(c.stdout, "removed '%s'\n", p)
		}
	}
	return status
}
