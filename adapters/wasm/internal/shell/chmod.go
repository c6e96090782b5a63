package shell

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
)

// chmod changes modes on the host's file system, where the workspace is a
// directory of the gateway's: what a script may set is limited to what
// cannot affect the host or the gateway.
//
//   - The workspace root keeps its mode: a chmod of it is refused
//     ("Operation not permitted", status 1), as for a file one does not
//     own; with -R, what is below it is still changed.
//   - Nothing becomes group- or world-writable, setuid, setgid or sticky:
//     those bits are left off (group and other get r and x as asked).
//   - A directory keeps rwx for its owner, the gateway, which must be able
//     to list it and remove it with the session.
//
// When bits asked for are left off, chmod says so once and succeeds, as on
// a file system that does not store them.
const (
	hostForbidden = 0o022 // group and other write
	dirOwnerBits  = 0o700
)

func cmdChmod(c *call) int {
	var recursive, quiet bool
	args := c.args
	// Options are -R, -f, -v, -c, grouped or not; "-w" or "-x" is a mode.
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "Rfvc") == "" {
		recursive = recursive || strings.Contains(args[0], "R")
		quiet = quiet || strings.Contains(args[0], "f")
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) < 2 {
		c.errorf("missing operand")
		return 1
	}
	spec, files := args[0], args[1:]
	if _, err := applyMode(spec, 0o644, false); err != nil {
		c.errorf("invalid mode: '%s'", spec)
		return 1
	}
	status := 0
	limited := false
	var apply func(rel, name string, root bool)
	apply = func(rel, name string, root bool) {
		if c.stopped() {
			return
		}
		info, err := c.sh.fs.stat(c.ctx, rel)
		switch {
		case err != nil:
		case root:
			if !quiet {
				c.errorf("changing permissions of '%s': Operation not permitted (the workspace root's permissions are fixed)", name)
			}
			status = 1
		default:
			asked, _ := applyMode(spec, info.Mode().Perm(), info.IsDir())
			mode := asked.Perm() &^ hostForbidden
			if info.IsDir() {
				mode |= dirOwnerBits
			}
			if mode != asked {
				limited = true
			}
			err = c.sh.fs.chmod(c.ctx, rel, mode)
		}
		if err != nil {
			if !quiet {
				c.errorf("cannot access '%s': %s", name, errText(err))
			}
			status = 1
			return
		}
		if recursive && info.IsDir() {
			infos, err := c.sh.fs.readDir(c.ctx, rel)
			if err != nil {
				c.errorf("cannot read directory '%s': %s", name, errText(err))
				status = 1
				return
			}
			for _, sub := range infos {
				if sub.Mode()&fs.ModeSymlink == 0 {
					apply(joinRel(rel, sub.Name()), strings.TrimSuffix(name, "/")+"/"+sub.Name(), false)
				}
			}
		}
	}
	for _, f := range files {
		if c.stopped() {
			break
		}
		t, err := c.target(f)
		if err == nil && t.dev != "" {
			err = fs.ErrPermission
		}
		if err != nil {
			if !quiet {
				c.errorf("cannot access '%s': %s", f, errText(err))
			}
			status = 1
			continue
		}
		apply(t.rel, f, t.root)
	}
	if limited && !quiet {
		c.errorf("note: in the workspace nothing is group- or world-writable, setuid, setgid or sticky, and directories stay rwx for their owner; those bits were left as they are")
	}
	return status
}

// applyMode applies a chmod mode (octal, or symbolic like "u+x,go-w") to
// the permission bits perm. The result has fs.ModeSetuid, fs.ModeSetgid
// and fs.ModeSticky set when the mode asks for them.
func applyMode(spec string, perm fs.FileMode, isDir bool) (fs.FileMode, error) {
	if n, err := strconv.ParseUint(spec, 8, 32); err == nil {
		if n > 0o7777 {
			return 0, errors.New("bad mode")
		}
		mode := fs.FileMode(n) & fs.ModePerm
		for bit, m := range map[uint64]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
			if n&bit != 0 {
				mode |= m
			}
		}
		return mode, nil
	}
	var special fs.FileMode
	for clause := range strings.SplitSeq(spec, ",") {
		i := strings.IndexAny(clause, "+-=")
		if i < 0 {
			return 0, errors.New("bad mode")
		}
		var who fs.FileMode
		for _, ch := range clause[:i] {
			switch ch {
			case 'u':
				who |= 0o700
			case 'g':
				who |= 0o070
			case 'o':
				who |= 0o007
			case 'a':
				who |= 0o777
			default:
				return 0, errors.New("bad mode")
			}
		}
		if who == 0 {
			who = 0o777
		}
		op := clause[i]
		var bits fs.FileMode
		for _, ch := range clause[i+1:] {
			switch ch {
			case 'r':
				bits |= 0o444
			case 'w':
				bits |= 0o222
			case 'x':
				bits |= 0o111
			case 'X':
				if isDir || perm&0o111 != 0 {
					bits |= 0o111
				}
			case 's':
				if op != '-' && who&0o700 != 0 {
					special |= fs.ModeSetuid
				}
				if op != '-' && who&0o070 != 0 {
					special |= fs.ModeSetgid
				}
			case 't':
				if op != '-' {
					special |= fs.ModeSticky
				}
			default:
				return 0, errors.New("bad mode")
			}
		}
		bits &= who
		switch op {
		case '+':
			perm |= bits
		case '-':
			perm &^= bits
		case '=':
			perm = perm&^who | bits
		}
	}
	return perm | special, nil
}
