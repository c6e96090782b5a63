package shell

import (
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// fileType is stat's %F.
func fileType(fi fs.FileInfo) string {
	if fi.Mode().IsRegular() && fi.Size() == 0 {
		return "regular empty file"
	}
	return kindOf(fi.Mode()).name
}

// statTime formats a time as stat does: "2024-01-02 03:04:05.000000000 +0000".
func statTime(t time.Time) string {
	return t.Format("2006-01-02 15:04:05.000000000 -0700")
}

// shellQuote quotes a name as stat's %N does.
func shellQuote(s string) string {
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return "\"" + strings.NewReplacer("\\", "\\\\", "\"", "\\\"", "$", "\\$", "`", "\\`").Replace(s) + "\""
}

func cmdStat(c *call) int {
	const optPrintf = 1
	o, files, ok := c.getopt(c.args, "LtfZ", "c\x01", map[string]byte{
		"dereference": 'L', "terse": 't', "format": 'c', "printf": optPrintf, "file-system": 'f',
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Try 'stat --help' for more information.")
		return 1
	}
	if len(files) == 0 {
		c.errorf("missing operand")
		fmt.Fprintln(c.stderr, "Try 'stat --help' for more information.")
		return 1
	}
	if o.has('f') {
		c.errorf("--file-system is not supported here; df reports the workspace")
		return 1
	}
	format, escapes := "", false
	switch {
	case len(o.vals[optPrintf]) > 0:
		format, escapes = o.last(optPrintf, ""), true
	case len(o.vals['c']) > 0:
		format = o.last('c', "") + "\n"
	case o.has('t'):
		format = "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o\n"
	}
	w := c.out()
	status := 0
	for _, f := range files {
		if c.stopped() {
			break
		}
		t, err := c.target(f)
		var fi fs.FileInfo
		if err == nil {
			fi, err = c.lstat(t)
		}
		if err != nil {
			c.errorf("cannot statx '%s': %s", f, errText(err))
			status = 1
			continue
		}
		if format != "" {
			w.WriteString(statFormat(format, f, fi, escapes, c.dateLocation()))
			continue
		}
		w.WriteString(statFormat(statDefault, f, fi, false, c.dateLocation()))
	}
	return c.flush(w, status)
}

// statDefault is GNU stat's multi-line output.
const statDefault = "  File: %Q\n  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\n" +
	"Device: %Hd,%Ld\tInode: %-11i Links: %h\n" +
	"Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\n" +
	"Access: %x\nModify: %y\nChange: %z\n Birth: %w\n"

// statFormat expands stat's directives for the file name (as given) fi,
// with times in loc.
func statFormat(format, name string, fi fs.FileInfo, escapes bool, loc *time.Location) string {
	si := sysOf(fi)
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch == '\\' && escapes {
			i += printfEscape(&b, format[i+1:], false)
			continue
		}
		if ch != '%' {
			b.WriteByte(ch)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0'", format[j]) >= 0 {
			j++
		}
		for j < len(format) && (format[j] >= '0' && format[j] <= '9' || format[j] == '.') {
			j++
		}
		spec := format[i+1 : j]
		if j >= len(format) {
			b.WriteString(format[i:])
			break
		}
		d := format[j]
		if (d == 'H' || d == 'L') && j+1 < len(format) && (format[j+1] == 'd' || format[j+1] == 'r') {
			j++
			dev := si.dev
			major := (dev>>8)&0xfff | (dev>>32)&^0xfff
			minor := dev&0xff | (dev>>12)&^0xff
			if d == 'H' {
				fmt.Fprintf(&b, "%"+spec+"d", major)
			} else {
				fmt.Fprintf(&b, "%"+spec+"d", minor)
			}
			i = j
			continue
		}
		i = j
		str := func(s string) { fmt.Fprintf(&b, "%"+spec+"s", s) }
		num := func(n any) { fmt.Fprintf(&b, "%"+spec+"d", n) }
		switch d {
		case '%':
			b.WriteByte('%')
		case 'n':
			str(name)
		case 'N':
			str(shellQuote(name))
		case 'Q': // the default format's name: quoted only when needed
			if strings.ContainsAny(name, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
				str(shellQuote(name))
			} else {
				str(name)
			}
		case 's':
			if fi.IsDir() {
				num(int64(dirBytes))
			} else {
				num(fi.Size())
			}
		case 'b':
			num(diskBytes(fi) / 512)
		case 'B':
			num(512)
		case 'o':
			num(fsBlock)
		case 'F':
			str(fileType(fi))
		case 'a':
			fmt.Fprintf(&b, "%"+spec+"o", rawMode(fi)&0o7777)
		case 'A':
			str(modeString(fi.Mode()))
		case 'f':
			fmt.Fprintf(&b, "%"+spec+"x", rawMode(fi))
		case 'U', 'G':
			str(sandboxUser)
		case 'u', 'g':
			num(sandboxUID)
		case 'h':
			num(si.nlink)
		case 'i':
			num(si.ino)
		case 'd':
			num(si.dev)
		case 'D':
			fmt.Fprintf(&b, "%"+spec+"x", si.dev)
		case 't', 'T':
			num(0)
		case 'm':
			str(guestRoot)
		case 'y':
			str(statTime(fi.ModTime().In(loc)))
		case 'Y':
			num(fi.ModTime().Unix())
		case 'x':
			str(statTime(si.atime.In(loc)))
		case 'X':
			num(si.atime.Unix())
		case 'z':
			str(statTime(si.ctime.In(loc)))
		case 'Z':
			num(si.ctime.Unix())
		case 'w':
			str("-")
		case 'W':
			num(0)
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}
