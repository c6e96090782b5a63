package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/interp"
)

func cmdBash(c *call) int {
	var params []string // shell options for interp.Params
	command := false
	args := c.args
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			args = args[1:]
			break
		}
		if a == "-" || len(a) < 2 || a[0] != '-' && a[0] != '+' {
			break
		}
		if strings.HasPrefix(a, "--") {
			args = args[1:] // --norc, --noprofile, --login, ...
			continue
		}
		if a[1] == 'o' && len(a) == 2 {
			if len(args) < 2 {
				fmt.Fprintf(c.stderr, "%s: %s: option requires an argument\n", c.name, a)
				return 2
			}
			params = append(params, a, args[1])
			args = args[2:]
			continue
		}
		for _, f := range a[1:] {
			switch f {
			case 'c':
				command = true
			case 'e', 'u', 'x', 'f', 'a', 'n':
				params = append(params, string(a[0])+string(f))
			case 'l', 'i', 's', 'v':
			default:
				fmt.Fprintf(c.stderr, "%s: -%c: invalid option\n", c.name, f)
				return 2
			}
		}
		args = args[1:]
	}
	switch {
	case command:
		if len(args) == 0 {
			fmt.Fprintf(c.stderr, "%s: -c: option requires an argument\n", c.name)
			return 2
		}
		src, name, rest := args[0], c.name, []string(nil)
		if len(args) > 1 {
			name, rest = args[1], args[2:]
		}
		return c.runShell(src, name, params, rest)
	case len(args) > 0 && args[0] != "-":
		r, done, err := c.openInput(args[0])
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: %s: %s\n", c.name, args[0], errText(err))
			return 127
		}
		src, err := c.readAll(r)
		done()
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: %s: %s\n", c.name, args[0], errText(err))
			return 126
		}
		return c.runShell(string(src), args[0], params, args[1:])
	}
	src, err := c.readAll(c.stdin)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: reading the script: %s\n", c.name, errText(err))
		return 2
	}
	return c.runShell(string(src), c.name, params, nil)
}

// runShell runs src in a new interpreter: a child shell, which starts with
// the current directory and the exported variables.
func (c *call) runShell(src, name string, opts, params []string) int {
	file, code, nested := c.sh.parse(nil, src, name, c.stderr)
	if nested {
		// As deep as a function call could go: the whole run ends.
		c.sh.refuse(c.name)
		return 1
	}
	if file == nil {
		return code
	}
	r, err := c.sh.newRunner(c.name, c.dir, exportedEnv(c.env), c.rawIn, c.stdout, c.stderr)
	if err != nil {
		fmt.Fprintf(c.stderr, "bash: %v\n", err)
		return 1
	}
	if err := interp.Params(append(slices.Clone(opts), append([]string{"--"}, params...)...)...)(r); err != nil {
		fmt.Fprintf(c.stderr, "bash: %v\n", err)
		return 2
	}
	code, _ = c.sh.runFile(c.ctx, r, file, c.stderr)
	return code
}

// runFile runs a command named by a path (./script.sh): a shell script, or
// a Python one by its #! line. It must be executable, as in bash.
func (c *call) runFile() int {
	t, err := c.target(c.name)
	if err == nil && t.dev != "" {
		err = fs.ErrPermission
	}
	var info fs.FileInfo
	if err == nil {
		info, err = c.sh.fs.stat(c.ctx, t.rel)
	}
	switch {
	case err != nil:
		fmt.Fprintf(c.stderr, "bash: %s: %s\n", c.name, errText(err))
		if errors.Is(err, fs.ErrNotExist) {
			return 127
		}
		return 126
	case info.IsDir():
		fmt.Fprintf(c.stderr, "bash: %s: Is a directory\n", c.name)
		return 126
	case info.Mode()&0o100 == 0:
		fmt.Fprintf(c.stderr, "bash: %s: Permission denied\n", c.name)
		return 126
	}
	f, err := c.sh.fs.open(c.ctx, t.rel)
	if err != nil {
		fmt.Fprintf(c.stderr, "bash: %s: %s\n", c.name, errText(err))
		return 126
	}
	src, err := c.readAll(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(c.stderr, "bash: %s: %s\n", c.name, errText(err))
		return 126
	}
	first, _, _ := strings.Cut(string(src[:min(len(src), 512)]), "\n")
	prog := ""
	if line, ok := strings.CutPrefix(first, "#!"); ok {
		words := strings.Fields(line)
		if len(words) > 0 {
			prog = path.Base(words[0])
			if prog == "env" && len(words) > 1 {
				prog = path.Base(words[1])
			}
		}
	}
	switch {
	case prog == "" || prog == "sh" || prog == "bash" || prog == "dash":
		if !utf8.Valid(src[:min(len(src), 512)]) || strings.IndexByte(first, 0) >= 0 {
			fmt.Fprintf(c.stderr, "bash: %s: cannot execute binary file\n", c.name)
			return 126
		}
		return c.runShell(string(src), c.name, nil, c.args)
	case prog == "python" || strings.HasPrefix(prog, "python3"):
		sub := *c
		sub.name, sub.args = "python3", append([]string{c.name}, c.args...)
		return cmdPython(&sub)
	}
	fmt.Fprintf(c.stderr, "bash: %s: %s: bad interpreter: No such file or directory\n", c.name, strings.TrimSpace(strings.TrimPrefix(first, "#!")))
	return 126
}
