package shell

import (
	"bytes"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// kind describes what a command name is: "keyword", "function",
// "builtin", "file" or "" (not found), in the order bash looks.
func (c *call) kind(name string) string {
	switch {
	case syntax.IsKeyword(name):
		return "keyword"
	case c.function(name) != nil:
		return "function"
	case interp.IsBuiltin(name):
		return "builtin"
	case c.available(name):
		return "file"
	}
	return ""
}

// function is the definition of the function name where the command
// runs, nil if there is none.
func (c *call) function(name string) *syntax.Stmt {
	return functions(interp.HandlerCtx(c.ctx))[name]
}

// definition is function name's definition as bash's type prints it: the
// name, " () ", and the body in braces, its commands a line each, indented
// by four spaces (the interpreter's printer lays the commands out).
func definition(name string, body *syntax.Stmt) []byte {
	body = originalTime(body)
	stmts := []*syntax.Stmt{body}
	if b, ok := body.Cmd.(*syntax.Block); ok && len(body.Redirs) == 0 {
		stmts = b.Stmts
	}
	var text bytes.Buffer
	_ = syntax.NewPrinter(syntax.Indent(4)).Print(&text, &syntax.File{Stmts: stmts})
	var out bytes.Buffer
	fmt.Fprintf(&out, "%s () \n{ \n", name)
	for line := range strings.Lines(text.String()) {
		if strings.TrimSpace(line) != "" {
			out.WriteString("    ")
		}
		out.WriteString(line)
	}
	out.WriteString("}\n")
	return out.Bytes()
}

func cmdType(c *call) int {
	c.name = "bash: type"
	mode := ""
	args := c.args
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		for _, f := range args[0][1:] {
			switch f {
			case 't', 'p', 'P':
				mode = string(f)
			case 'a', 'f':
			default:
				c.errorf("-%c: invalid option", f)
				return 2
			}
		}
		args = args[1:]
	}
	status := 0
	for _, name := range args {
		k := c.kind(name)
		switch {
		case k == "":
			if mode == "" {
				c.errorf("%s: not found", name)
			}
			status = 1
		case mode == "t":
			fmt.Fprintln(c.stdout, k)
		case mode == "p" || mode == "P":
			if k == "file" {
				fmt.Fprintf(c.stdout, "/usr/bin/%s\n", name)
			} else if mode == "P" {
				status = 1
			}
		case k == "keyword":
			fmt.Fprintf(c.stdout, "%s is a shell keyword\n", name)
		case k == "function":
			fmt.Fprintf(c.stdout, "%s is a function\n", name)
			c.stdout.Write(definition(name, c.function(name)))
		case k == "builtin":
			fmt.Fprintf(c.stdout, "%s is a shell builtin\n", name)
		default:
			fmt.Fprintf(c.stdout, "%s is /usr/bin/%s\n", name, name)
		}
	}
	return status
}

// cmdCommandV is "command -v" and "command -V" (the call handler diverts
// only those; command itself is the interpreter's builtin).
func cmdCommandV(c *call) int {
	if len(c.args) == 0 {
		return 0
	}
	verbose := c.args[0] == "-V"
	status := 0
	for _, name := range c.args[1:] {
		k := c.kind(name)
		switch {
		case k == "":
			if verbose {
				fmt.Fprintf(c.stderr, "bash: command: %s: not found\n", name)
			}
			status = 1
		case verbose:
			c.args = []string{name}
			cmdType(c)
		case k == "file":
			fmt.Fprintf(c.stdout, "/usr/bin/%s\n", name)
		default:
			fmt.Fprintln(c.stdout, name)
		}
	}
	return status
}

func cmdWhich(c *call) int {
	status := 0
	for _, name := range c.args {
		if strings.HasPrefix(name, "-") {
			continue
		}
		if strings.Contains(name, "/") {
			if t, err := c.target(name); err == nil && t.dev == "" {
				if info, err := c.sh.fs.stat(c.ctx, t.rel); err == nil && info.Mode().IsRegular() && info.Mode()&0o100 != 0 {
					fmt.Fprintln(c.stdout, name)
					continue
				}
			}
			status = 1
			continue
		}
		if !c.available(name) || builtinOnly[name] {
			status = 1
			continue
		}
		fmt.Fprintf(c.stdout, "/usr/bin/%s\n", name)
	}
	return status
}
