package shell

import (
	"io/fs"
	"syscall"
)

func cmdRmdir(c *call) int {
	_, dirs, ok := c.getopt(c.args, "pv", "", map[string]byte{"ignore-fail-on-non-empty": 0})
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
		var info fs.FileInfo
		if err == nil && (t.root || t.dev != "") {
			err = fs.ErrPermission
		}
		if err == nil {
			info, err = c.sh.fs.lstat(c.ctx, t.rel)
		}
		if err == nil && !info.IsDir() {
			err = syscall.ENOTDIR
		}
		if err == nil {
			err = c.sh.fs.remove(c.ctx, t.rel)
		}
		if err != nil {
			c.errorf("failed to remove '%s': %s", d, errText(err))
			status = 1
		}
	}
	return status
}
