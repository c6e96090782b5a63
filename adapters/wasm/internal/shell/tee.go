package shell

import (
	"io"
	"io/fs"
)

func cmdTee(c *call) int {
	o, files, ok := c.getopt(c.args, "ai", "", map[string]byte{"append": 'a'})
	if !ok {
		return 1
	}
	status := 0
	writers := []io.Writer{c.stdout}
	var opened []*fileWriter
	for _, f := range files {
		if c.stopped() {
			break
		}
		t, err := c.target(f)
		if err == nil {
			switch t.dev {
			case devNull:
				continue
			case devStdout:
				writers = append(writers, c.stdout)
				continue
			case devStderr:
				writers = append(writers, c.stderr)
				continue
			case devStdin:
				err = fs.ErrPermission
			}
		}
		var fw *fileWriter
		if err == nil {
			fw, err = c.sh.createFile(c.ctx, t, o.has('a'), nil)
		}
		if err != nil {
			c.errorf("%s: %s", f, errText(err))
			status = 1
			continue
		}
		opened = append(opened, fw)
		writers = append(writers, fw)
	}
	_, werr := c.copyOut(io.MultiWriter(writers...), c.stdin)
	for i, fw := range opened {
		if err := fw.Close(); err != nil && werr == nil {
			c.errorf("%s: %s", files[i], errText(err))
			status = 1
		}
	}
	if werr != nil {
		return c.writeFailed(werr)
	}
	return status
}
