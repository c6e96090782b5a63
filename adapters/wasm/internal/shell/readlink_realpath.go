package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"
)

// canonical resolves p (relative to the current directory) to a clean
// absolute path. There are no links to follow, so this is path cleaning,
// plus the existence checks of mode: 'e' every component must exist, 'f'
// all but the last, 'm' none. A component that exists but is not a
// directory, with more after it, is ENOTDIR.
func (c *call) canonical(p, mode string) (string, error) {
	if p == "" {
		return "", fs.ErrNotExist
	}
	abs := guestAbs(c.dir, p)
	if mode == "m" {
		return abs, nil
	}
	check := func(q string) (fs.FileInfo, error) {
		t, err := resolve(c.dir, q)
		if errors.Is(err, errOutside) {
			return nil, fs.ErrNotExist
		}
		if err != nil {
			return nil, err
		}
		return c.lstat(t)
	}
	if abs != "/" {
		parent := path.Dir(abs)
		for _, q := range ancestors(parent) {
			fi, err := check(q)
			if err != nil {
				return "", err
			}
			if !fi.IsDir() {
				return "", syscall.ENOTDIR
			}
		}
	}
	fi, err := check(abs)
	switch {
	case err == nil && strings.HasSuffix(p, "/") && !fi.IsDir():
		return "", syscall.ENOTDIR
	case err != nil && (mode == "e" || !errors.Is(err, fs.ErrNotExist)):
		return "", err
	}
	return abs, nil
}

// ancestors lists "/a", "/a/b", ... "/a/b/c" for "/a/b/c" (not "/"),
// skipping "/" itself which always exists.
func ancestors(p string) []string {
	var out []string
	for q := p; q != "/" && q != "."; q = path.Dir(q) {
		out = append(out, q)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func cmdReadlink(c *call) int {
	o, files, ok := c.getopt(c.args, "femnqsvz", "", map[string]byte{
		"canonicalize": 'f', "canonicalize-existing": 'e', "canonicalize-missing": 'm',
		"no-newline": 'n', "quiet": 'q', "silent": 's', "verbose": 'v', "zero": 'z',
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Try 'readlink --help' for more information.")
		return 1
	}
	if len(files) == 0 {
		c.errorf("missing operand")
		fmt.Fprintln(c.stderr, "Try 'readlink --help' for more information.")
		return 1
	}
	mode := ""
	for _, m := range []byte("fem") {
		if o.has(m) {
			mode = string(m)
		}
	}
	end := "\n"
	if o.has('z') {
		end = "\x00"
	} else if o.has('n') && len(files) == 1 {
		end = ""
	}
	w := c.out()
	status := 0
	for _, f := range files {
		if mode == "" {
			// Nothing in the workspace is a symbolic link.
			if o.has('v') {
				t, err := c.target(f)
				if err == nil {
					_, err = c.lstat(t)
				}
				if err == nil {
					err = syscall.EINVAL
				}
				c.errorf("%s: %s", f, errText(err))
			}
			status = 1
			continue
		}
		abs, err := c.canonical(f, mode)
		if err != nil {
			if o.has('v') {
				c.errorf("%s: %s", f, errText(err))
			}
			status = 1
			continue
		}
		w.WriteString(abs + end)
	}
	return c.flush(w, status)
}

func cmdRealpath(c *call) int {
	const (
		optRelTo   = 1
		optRelBase = 2
	)
	o, files, ok := c.getopt(c.args, "emqsLPz", "\x01\x02", map[string]byte{
		"canonicalize-existing": 'e', "canonicalize-missing": 'm', "quiet": 'q', "strip": 's', "no-symlinks": 's',
		"logical": 'L', "physical": 'P', "zero": 'z', "relative-to": optRelTo, "relative-base": optRelBase,
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Try 'realpath --help' for more information.")
		return 1
	}
	if len(files) == 0 {
		c.errorf("missing operand")
		fmt.Fprintln(c.stderr, "Try 'realpath --help' for more information.")
		return 1
	}
	mode := "f"
	if o.has('e') {
		mode = "e"
	}
	if o.has('m') {
		mode = "m"
	}
	relTo, relBase := "", ""
	if v := o.last(optRelTo, ""); v != "" {
		abs, err := c.canonical(v, mode)
		if err != nil {
			c.errorf("%s: %s", v, errText(err))
			return 1
		}
		relTo = abs
	}
	if v := o.last(optRelBase, ""); v != "" {
		abs, err := c.canonical(v, mode)
		if err != nil {
			c.errorf("%s: %s", v, errText(err))
			return 1
		}
		relBase = abs
		if relTo == "" {
			relTo = abs
		}
	}
	end := "\n"
	if o.has('z') {
		end = "\x00"
	}
	w := c.out()
	status := 0
	for _, f := range files {
		abs, err := c.canonical(f, mode)
		if err != nil {
			if !o.has('q') {
				c.errorf("%s: %s", f, errText(err))
			}
			status = 1
			continue
		}
		out := abs
		if relTo != "" && (relBase == "" || within(abs, relBase) && within(relTo, relBase)) {
			out = relPath(relTo, abs)
		}
		w.WriteString(out + end)
	}
	return c.flush(w, status)
}

func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// relPath is target relative to the directory base (both clean and
// absolute).
func relPath(base, target string) string {
	split := func(p string) []string {
		if p == "/" {
			return nil
		}
		return strings.Split(strings.TrimPrefix(p, "/"), "/")
	}
	b, t := split(base), split(target)
	i := 0
	for i < len(b) && i < len(t) && b[i] == t[i] {
		i++
	}
	var parts []string
	for range b[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, t[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}
