package shell

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// sandboxUmask is the mask every file the shell creates is made under:
// files 0644, directories 0755 (chmod changes them afterwards).
const sandboxUmask = 0o022

// cmdUmask is the umask builtin, which the interpreter does not have: it
// prints the mask (as octal, with -S symbolically, with -p as a command
// that sets it) and accepts setting the mask it already is, in octal or
// symbolically. Any other mask is refused rather than recorded and
// ignored: files here are always created under 022, and a script that
// asked for 077 must not believe its files private.
func cmdUmask(c *call) int {
	c.name = "bash: umask"
	symbolic, asCommand := false, false
	args := c.args
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		for _, f := range args[0][1:] {
			switch f {
			case 'S':
				symbolic = true
			case 'p':
				asCommand = true
			default:
				c.errorf("-%c: invalid option\numask: usage: umask [-p] [-S] [mode]", f)
				return 2
			}
		}
		args = args[1:]
	}
	if len(args) == 0 {
		text := fmt.Sprintf("%04o", sandboxUmask)
		if symbolic {
			text = umaskSymbolic(sandboxUmask)
		}
		if asCommand {
			if symbolic {
				text = "-S " + text
			}
			text = "umask " + text
		}
		fmt.Fprintln(c.stdout, text)
		return 0
	}
	mask, ok := parseUmask(args[0])
	switch {
	case !ok && args[0] != "" && args[0][0] >= '0' && args[0][0] <= '9':
		c.errorf("%s: octal number out of range", args[0])
		return 1
	case !ok:
		c.errorf("%s: invalid symbolic mode", args[0])
		return 1
	}
	if mask != sandboxUmask {
		c.errorf("%s: only the mask %04o is supported here: files are created %04o and directories %04o; use chmod to change a file's mode",
			args[0], sandboxUmask, 0o666&^sandboxUmask, 0o777&^sandboxUmask)
		return 1
	}
	return 0
}

// umaskSymbolic is mask as umask -S prints it: the permissions it lets
// through.
func umaskSymbolic(mask int) string {
	var parts []string
	for i, who := range []string{"u", "g", "o"} {
		allowed := ^mask >> (6 - 3*i) & 7
		p := who + "="
		for j, r := range "rwx" {
			if allowed&(4>>j) != 0 {
				p += string(r)
			}
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ",")
}

// parseUmask reads a umask operand: octal digits, or a symbolic mode of
// comma-separated who=perms clauses (u, g, o, a; r, w, x), applied as
// chmod applies one (applyMode) to the permissions the current mask lets
// through, as bash does.
func parseUmask(s string) (int, bool) {
	if s != "" && strings.Trim(s, "01234567") == "" {
		v, err := strconv.ParseUint(s, 8, 32)
		if err != nil || v > 0o777 {
			return 0, false
		}
		return int(v), true
	}
	if strings.ContainsAny(s, "Xst") { // chmod's, not umask's
		return 0, false
	}
	allowed, err := applyMode(s, ^fs.FileMode(sandboxUmask)&0o777, false)
	if err != nil {
		return 0, false
	}
	return int(^allowed & 0o777), true
}
