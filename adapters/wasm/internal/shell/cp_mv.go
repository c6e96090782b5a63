package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// destination works out where a cp or mv of srcs to the last operand puts
// each source: into the directory dst, or (for one source) at dst.
func (c *call) destination(operands []string) (srcs []string, dst target, intoDir bool, status int) {
	if len(operands) < 2 {
		if len(operands) == 0 {
			c.errorf("missing file operand")
		} else {
			c.errorf("missing destination file operand after '%s'", operands[0])
		}
		return nil, dst, false, 1
	}
	srcs, last := operands[:len(operands)-1], operands[len(operands)-1]
	dst, err := c.target(last)
	if err == nil && dst.dev != "" {
		err = fs.ErrPermission
	}
	if err != nil {
		c.errorf("cannot write to '%s': %s", last, errText(err))
		return nil, dst, false, 1
	}
	info, err := c.sh.fs.stat(c.ctx, dst.rel)
	switch {
	case err == nil && info.IsDir():
		intoDir = true
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		c.errorf("cannot write to '%s': %s", last, errText(err))
		return nil, dst, false, 1
	case strings.HasSuffix(last, "/"):
		c.errorf("target '%s': Not a directory", last)
		return nil, dst, false, 1
	}
	if len(srcs) > 1 && !intoDir {
		c.errorf("target '%s' is not a directory", last)
		return nil, dst, false, 1
	}
	return srcs, dst, intoDir, 0
}

// inside reports whether rel is dir or below it.
func inside(rel, dir string) bool {
	return rel == dir || dir == "." || strings.HasPrefix(rel, dir+"/")
}

// place resolves a source operand of cp or mv: the source, what it is, and
// where it lands under dst. A move acts on a symbolic link itself and may
// not move the workspace root; a copy reads through to a regular file or
// directory. It reports a failure itself.
func (c *call) place(s string, dst target, intoDir, move bool) (target, fs.FileInfo, string, bool) {
	st, err := c.target(s)
	switch {
	case err != nil:
	case move && (st.dev != "" || st.root):
		err = fs.ErrPermission
	case st.dev != "":
		err = errors.New("not a regular file")
	}
	var info fs.FileInfo
	if err == nil && move {
		info, err = c.sh.fs.lstat(c.ctx, st.rel)
	} else if err == nil {
		info, err = c.sh.fs.stat(c.ctx, st.rel)
	}
	if err != nil {
		c.errorf("cannot stat '%s': %s", s, errText(err))
		return st, nil, "", false
	}
	to := dst.rel
	if intoDir {
		to = joinRel(dst.rel, path.Base(st.abs))
	}
	return st, info, to, true
}

func cmdCp(c *call) int {
	o, operands, ok := c.getopt(c.args, "rRafnpvTuL", "", map[string]byte{"recursive": 'r', "archive": 'a', "force": 'f', "no-clobber": 'n', "verbose": 'v'})
	if !ok {
		return 1
	}
	recursive := o.has('r') || o.has('R') || o.has('a')
	srcs, dst, intoDir, status := c.destination(operands)
	if status != 0 {
		return status
	}
	for _, s := range srcs {
		if c.stopped() {
			break
		}
		st, info, to, ok := c.place(s, dst, intoDir, false)
		if !ok {
			status = 1
			continue
		}
		switch {
		case info.IsDir() && !recursive:
			c.errorf("-r not specified; omitting directory '%s'", s)
			status = 1
			continue
		case to == st.rel:
			c.errorf("'%s' and '%s' are the same file", s, operands[len(operands)-1])
			status = 1
			continue
		case info.IsDir() && inside(to, st.rel):
			c.errorf("cannot copy a directory, '%s', into itself, '%s'", s, operands[len(operands)-1])
			status = 1
			continue
		}
		if o.has('n') {
			if _, err := c.sh.fs.lstat(c.ctx, to); err == nil {
				continue
			}
		}
		if info.IsDir() {
			if st := c.copyTree(st.rel, to); st != 0 {
				status = st
			}
		} else if err := c.sh.fs.copyFile(c.ctx, st.rel, to); err != nil {
			c.errorf("cannot copy '%s': %s", s, errText(err))
			status = 1
		}
		if o.has('v') {
			fmt.Fprintf(c.stdout, "'%s' -> '%s'\n", s, shownDest(dst, intoDir, st))
		}
	}
	return status
}

// copyTree copies the directory src to dst, which it creates if needed.
// Symbolic links are not followed: they are reported and skipped.
func (c *call) copyTree(src, dst string) int {
	if info, err := c.sh.fs.lstat(c.ctx, dst); err == nil && !info.IsDir() {
		c.errorf("cannot overwrite non-directory '%s' with directory", path.Join(guestRoot, dst))
		return 1
	} else if err != nil {
		if err := c.sh.fs.mkdir(c.ctx, dst, false); err != nil {
			c.errorf("cannot create directory '%s': %s", path.Join(guestRoot, dst), errText(err))
			return 1
		}
	}
	infos, err := c.sh.fs.readDir(c.ctx, src)
	if err != nil {
		c.errorf("cannot access '%s': %s", path.Join(guestRoot, src), errText(err))
		return 1
	}
	status := 0
	for _, info := range infos {
		if c.ctx.Err() != nil {
			return 1
		}
		from, to := joinRel(src, info.Name()), joinRel(dst, info.Name())
		switch {
		case info.IsDir():
			if st := c.copyTree(from, to); st != 0 {
				status = st
			}
		case info.Mode().IsRegular():
			if err := c.sh.fs.copyFile(c.ctx, from, to); err != nil {
				c.errorf("cannot copy '%s': %s", path.Join(guestRoot, from), errText(err))
				status = 1
			}
		default:
			c.errorf("'%s': %s", path.Join(guestRoot, from), "not copied: not a regular file or directory (symbolic links are not followed)")
			status = 1
		}
	}
	return status
}

func cmdMv(c *call) int {
	o, operands, ok := c.getopt(c.args, "fnivT", "", map[string]byte{"force": 'f', "no-clobber": 'n', "verbose": 'v'})
	if !ok {
		return 1
	}
	srcs, dst, intoDir, status := c.destination(operands)
	if status != 0 {
		return status
	}
	for _, s := range srcs {
		if c.stopped() {
			break
		}
		st, info, to, ok := c.place(s, dst, intoDir, true)
		if !ok {
			status = 1
			continue
		}
		switch {
		case to == st.rel:
			c.errorf("'%s' and '%s' are the same file", s, operands[len(operands)-1])
			status = 1
			continue
		case info.IsDir() && inside(to, st.rel):
			c.errorf("cannot move '%s' to a subdirectory of itself, '%s'", s, operands[len(operands)-1])
			status = 1
			continue
		}
		if o.has('n') {
			if _, err := c.sh.fs.lstat(c.ctx, to); err == nil {
				continue
			}
		}
		if err := c.sh.fs.rename(c.ctx, st.rel, to); err != nil {
			c.errorf("cannot move '%s' to '%s': %s", s, shownDest(dst, intoDir, st), errText(err))
			status = 1
			continue
		}
		if o.has('v') {
			fmt.Fprintf(c.stdout, "renamed '%s' -> '%s'\n", s, shownDest(dst, intoDir, st))
		}
	}
	return status
}

// shownDest is the destination of src as cp and mv print it: as the user
// typed it, with the source's name after it when it is a directory.
func shownDest(dst target, intoDir bool, src target) string {
	if !intoDir {
		return dst.arg
	}
	return strings.TrimSuffix(dst.arg, "/") + "/" + path.Base(src.abs)
}
