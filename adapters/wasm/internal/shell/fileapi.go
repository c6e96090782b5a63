package shell

import (
	"io"
	"io/fs"
	"syscall"
)

// The file operations a command needs beyond reading its operands
// (openInput, in input.go): target resolves a path argument and lstat
// describes what it names; the others take paths as the user wrote them,
// relative to the command's directory. Errors print with errText.

// target resolves a path argument.
func (c *call) target(p string) (target, error) { return resolve(c.dir, p) }

// lstat describes the workspace file t (never following a symbolic link).
func (c *call) lstat(t target) (fs.FileInfo, error) {
	if t.dev != "" {
		return devInfo{name: t.dev}, nil
	}
	return c.sh.fs.lstat(c.ctx, t.rel)
}

// writeFile replaces (or creates) the regular file p with what r yields, at
// most MaxFileBytes and within the workspace quota. A refused write leaves
// what was there.
func (c *call) writeFile(p string, r io.Reader) error {
	t, err := c.target(p)
	if err != nil {
		return err
	}
	if t.dev != "" || t.root {
		return fs.ErrPermission
	}
	// replace opens the guest path directly, outside the walk that
	// refuses symbolic links: check the path through it first, as a
	// redirection does (see the top of fs.go).
	if err := c.sh.fs.check(c.ctx, t.rel); err != nil {
		return err
	}
	_, err = c.sh.fs.replace(t.rel, &ctxReader{ctx: c.ctx, r: r})
	return err
}

// mkdirAll makes the directory p and its parents; an existing directory is
// not an error.
func (c *call) mkdirAll(p string) error {
	t, err := c.target(p)
	if err != nil {
		return err
	}
	if t.root {
		return nil
	}
	if t.dev != "" {
		return fs.ErrExist
	}
	return c.sh.fs.mkdir(c.ctx, t.rel, true)
}

// readDir lists the directory p, sorted by name, entries described as
// lstat does.
func (c *call) readDir(p string) ([]fs.FileInfo, error) {
	t, err := c.target(p)
	if err != nil {
		return nil, err
	}
	if t.dev != "" {
		return nil, syscall.ENOTDIR
	}
	return c.sh.fs.readDir(c.ctx, t.rel)
}

// stat describes p, following nothing (symbolic links are refused).
func (c *call) stat(p string) (fs.FileInfo, error) {
	t, err := c.target(p)
	if err != nil {
		return nil, err
	}
	return c.lstat(t)
}

// maxBytes is MaxFileBytes: the cap on a file written and on the input a
// command holds in memory; <= 0 means none.
func (c *call) maxBytes() int64 { return c.sh.fs.max }
