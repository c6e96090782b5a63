package shell

import (
	"context"
	"fmt"
)

func cmdPython(c *call) int {
	py := c.sh.opts.Python
	if py == nil {
		fmt.Fprintf(c.stderr, "%s: not available\n", c.name)
		return 127
	}
	argv := append([]string{c.name}, c.args...)
	// The program runs while the shell waits for it, so its input is
	// read first, whole (a pipeline of two python commands cannot
	// deadlock on it).
	stdin, err := c.readAll(c.stdin)
	if err != nil {
		if c.stopped() {
			return 1
		}
		fmt.Fprintf(c.stderr, "%s: standard input: %s\n", c.name, errText(err))
		return 1
	}
	ctx := context.WithValue(c.ctx, invocationKey{}, Invocation{Dir: c.dir, Env: exportedEnv(c.env)})
	code, err := py(ctx, argv, stdin, c.stdout, c.stderr)
	if err != nil {
		if c.ctx.Err() != nil {
			return 1
		}
		fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err)
		if code == 0 {
			code = 1
		}
	}
	return min(max(code, 0), 255)
}
