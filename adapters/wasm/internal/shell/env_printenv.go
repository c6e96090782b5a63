package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

func cmdEnv(c *call) int {
	args := c.args
	clear := false
	var unset, set []string
loop:
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-i" || a == "-" || a == "--ignore-environment":
			clear = true
		case a == "-u" && len(args) > 1:
			unset = append(unset, args[1])
			args = args[1:]
		case a == "--":
			args = args[1:]
			break loop
		case strings.HasPrefix(a, "-"):
			c.errorf("invalid option -- '%s'", strings.TrimLeft(a, "-"))
			return 125
		case strings.Contains(a, "="):
			set = append(set, a)
		default:
			break loop
		}
		args = args[1:]
	}
	for len(args) > 0 && strings.Contains(args[0], "=") {
		set = append(set, args[0])
		args = args[1:]
	}
	var list []string
	if !clear {
		list = exportedEnv(c.env)
	}
	list = slices.DeleteFunc(list, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(unset, name)
	})
	list = append(list, set...)
	env := expand.ListEnviron(list...) // later pairs win, the list comes out sorted
	if len(args) == 0 {
		w := c.out()
		for _, kv := range exportedEnv(env) {
			w.WriteString(kv + "\n")
		}
		return c.flush(w, 0)
	}
	sub := *c
	sub.bufs = nil // the caller's buffers stay the caller's (see releaseBufs)
	sub.name, sub.args, sub.env = args[0], args[1:], env
	if _, ok := commands[sub.name]; !ok && !strings.Contains(sub.name, "/") {
		c.errorf("'%s': No such file or directory", sub.name)
		return 127
	}
	// "env env env ... cmd" recurses once per word.
	if c.sh.guard.tooDeep() {
		c.sh.refuse(c.name)
		return 1
	}
	return sub.run()
}

// printenv prints the exported variables, or the values of those named
// (status 1 if one is not set).
func cmdPrintenv(c *call) int {
	o, names, ok := c.getopt(c.args, "0", "", map[string]byte{"null": '0'})
	if !ok {
		return 2
	}
	end := "\n"
	if o.has('0') {
		end = "\x00"
	}
	env := exportedEnv(c.env)
	w := c.out()
	if len(names) == 0 {
		for _, kv := range env {
			w.WriteString(kv + end)
		}
		return c.flush(w, 0)
	}
	status := 0
	for _, n := range names {
		found := false
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, n+"="); ok && !strings.Contains(n, "=") {
				w.WriteString(v + end)
				found = true
				break
			}
		}
		if !found {
			status = 1
		}
	}
	return c.flush(w, status)
}

// exportedEnv lists the exported variables of env as "NAME=value", sorted.
func exportedEnv(env expand.Environ) []string {
	vars := map[string]expand.Variable{}
	env.Each(func(name string, vr expand.Variable) bool {
		vars[name] = vr // a later occurrence takes priority
		return true
	})
	var list []string
	for name, vr := range vars {
		// The interpreter sets PWD unexported; bash's is exported.
		if vr.IsSet() && (vr.Exported || name == "PWD") && vr.Kind == expand.String {
			list = append(list, name+"="+vr.Str)
		}
	}
	slices.Sort(list)
	return list
}
