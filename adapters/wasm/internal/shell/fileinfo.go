package shell

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// The commands that describe files: stat, du, df, tree, file, readlink,
// realpath, and ln, which only explains that the workspace has no links.

func init() {
	commands["stat"] = cmdStat
	commands["du"] = cmdDu
	commands["df"] = cmdDf
	commands["ln"] = cmdLn
	commands["readlink"] = cmdReadlink
	commands["realpath"] = cmdRealpath
	commands["tree"] = cmdTree
	commands["file"] = cmdFile
}

// Block accounting. The sandbox's file systems report no block counts
// that mean anything to a script, so stat, du (and ls's total) count
// what a typical ext4 file system would: every file takes whole 4 KiB
// blocks, ceil(size/4096) of them, and a directory one block (its size is
// shown as 4096 too, whatever the host's file system says).
const (
	fsBlock  = 4096
	dirBytes = 4096
)

// diskBytes is what a file occupies on disk under that model.
func diskBytes(fi fs.FileInfo) int64 {
	if fi.IsDir() {
		return dirBytes
	}
	if !fi.Mode().IsRegular() {
		return 0
	}
	return (fi.Size() + fsBlock - 1) / fsBlock * fsBlock
}

// apparentBytes is a file's size as du --apparent-size counts it.
func apparentBytes(fi fs.FileInfo) int64 {
	if fi.IsDir() {
		return dirBytes
	}
	return fi.Size()
}

// sysInfo is what stat shows beyond fs.FileInfo, read from its Sys value
// (a *syscall.Stat_t whose fields differ between Linux and wasip1) by
// field name; zero where unknown.
type sysInfo struct {
	dev, ino, nlink uint64
	atime, ctime    time.Time
}

func sysOf(fi fs.FileInfo) sysInfo {
	s := sysInfo{nlink: 1, atime: fi.ModTime(), ctime: fi.ModTime()}
	v := reflect.ValueOf(fi.Sys())
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return s
	}
	num := func(name string) (uint64, bool) {
		f := v.FieldByName(name)
		switch {
		case !f.IsValid():
		case f.CanUint():
			return f.Uint(), true
		case f.CanInt():
			return uint64(f.Int()), true
		}
		return 0, false
	}
	ts := func(name, nsName string) (time.Time, bool) {
		if f := v.FieldByName(name); f.IsValid() && f.Kind() == reflect.Struct {
			sec, nsec := f.FieldByName("Sec"), f.FieldByName("Nsec")
			if sec.IsValid() && nsec.IsValid() && sec.CanInt() && nsec.CanInt() {
				return time.Unix(sec.Int(), nsec.Int()), true
			}
		}
		if n, ok := num(nsName); ok {
			return time.Unix(0, int64(n)), true
		}
		return time.Time{}, false
	}
	s.dev, _ = num("Dev")
	s.ino, _ = num("Ino")
	if n, ok := num("Nlink"); ok && n > 0 {
		s.nlink = n
	}
	if t, ok := ts("Atim", "Atime"); ok {
		s.atime = t
	}
	if t, ok := ts("Ctim", "Ctime"); ok {
		s.ctime = t
	}
	return s
}

// fileType is stat's %F.
func fileType(fi fs.FileInfo) string {
	if fi.Mode().IsRegular() && fi.Size() == 0 {
		return "regular empty file"
	}
	return kindOf(fi.Mode()).name
}

// rawMode is the st_mode value of fi (type and permission bits).
func rawMode(fi fs.FileInfo) uint32 {
	m := fi.Mode()
	r := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		r |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		r |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		r |= 0o1000
	}
	switch {
	case m.IsDir():
		r |= 0o040000
	case m&fs.ModeSymlink != 0:
		r |= 0o120000
	case m&fs.ModeCharDevice != 0:
		r |= 0o020000
	case m&fs.ModeDevice != 0:
		r |= 0o060000
	case m&fs.ModeNamedPipe != 0:
		r |= 0o010000
	case m&fs.ModeSocket != 0:
		r |= 0o140000
	default:
		r |= 0o100000
	}
	return r
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

// ---- du ----

type duRun struct {
	c        *call
	all      bool
	apparent bool
	human    bool
	unit     int64
	maxDepth int // -1: none
	w        *bufio.Writer
	status   int
	roots    []string // the operands walked: GNU du counts a directory once
}

func cmdDu(c *call) int {
	const optApparent = 1
	o, files, ok := c.getopt(c.args, "sahckmbxLDSl0", "dB", map[string]byte{
		"summarize": 's', "all": 'a', "human-readable": 'h', "total": 'c', "max-depth": 'd',
		"bytes": 'b', "apparent-size": optApparent, "block-size": 'B', "one-file-system": 'x',
		"dereference": 'L', "separate-dirs": 'S', "count-links": 'l', "null": '0',
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Try 'du --help' for more information.")
		return 1
	}
	d := &duRun{c: c, all: o.has('a'), human: o.has('h'), unit: 1024, maxDepth: -1}
	d.apparent = o.has(optApparent) || o.has('b')
	switch {
	case o.has('b'):
		d.unit = 1
	case o.has('m'):
		d.unit = 1 << 20
	}
	if v := o.last('B', ""); v != "" {
		n, err := parseSizeSuffix(v)
		if err != nil || n <= 0 {
			c.errorf("invalid -B argument '%s'", v)
			return 1
		}
		d.unit = n
	}
	if v := o.last('d', ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			c.errorf("invalid maximum depth '%s'", v)
			return 1
		}
		d.maxDepth = n
	}
	if o.has('s') {
		if d.maxDepth > 0 {
			c.errorf("warning: summarizing conflicts with --max-depth=%d", d.maxDepth)
			fmt.Fprintln(c.stderr, "Try 'du --help' for more information.")
			return 1
		}
		if d.all {
			c.errorf("cannot both summarize and show all entries")
			fmt.Fprintln(c.stderr, "Try 'du --help' for more information.")
			return 1
		}
		d.maxDepth = 0
	}
	if len(files) == 0 {
		files = []string{"."}
	}
	d.w = c.out()
	var total int64
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
			c.errorf("cannot access '%s': %s", f, errText(err))
			d.status = 1
			continue
		}
		if slices.ContainsFunc(d.roots, func(r string) bool { return inside(t.rel, r) }) {
			continue
		}
		total += d.walk(f, t.rel, fi, 0)
		d.roots = append(d.roots, t.rel)
	}
	if o.has('c') {
		d.print(total, "total")
	}
	return c.flush(d.w, d.status)
}

// parseSizeSuffix parses a size like 4K, 1M, 512, 1KB (powers of 1024,
// of 1000 with B).
func parseSizeSuffix(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n := int64(1)
	if i > 0 {
		v, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil {
			return 0, err
		}
		n = v
	}
	suffix := s[i:]
	base := int64(1024)
	if strings.HasSuffix(suffix, "B") && len(suffix) == 2 {
		base = 1000
		suffix = suffix[:1]
	} else if strings.HasSuffix(suffix, "iB") {
		suffix = suffix[:1]
	}
	if suffix == "" {
		return n, nil
	}
	p := strings.IndexByte("KMGTPE", strings.ToUpper(suffix)[0])
	if p < 0 || len(suffix) != 1 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	for range p + 1 {
		n *= base
	}
	return n, nil
}

// walk returns the bytes below (and of) rel, printing the lines du does.
func (d *duRun) walk(shown, rel string, fi fs.FileInfo, depth int) int64 {
	c := d.c
	size := diskBytes(fi)
	if d.apparent {
		size = apparentBytes(fi)
	}
	if fi.IsDir() && depth > 0 && slices.Contains(d.roots, rel) {
		return 0
	}
	if fi.IsDir() {
		infos, err := c.sh.fs.readDir(c.ctx, rel)
		if err != nil {
			c.errorf("cannot read directory '%s': %s", shown, errText(err))
			d.status = 1
		}
		for _, sub := range infos {
			if c.stopped() {
				break
			}
			size += d.walk(strings.TrimSuffix(shown, "/")+"/"+sub.Name(), joinRel(rel, sub.Name()), sub, depth+1)
		}
	}
	if (fi.IsDir() || d.all || depth == 0) && (d.maxDepth < 0 || depth <= d.maxDepth) {
		d.print(size, shown)
	}
	return size
}

func (d *duRun) print(size int64, name string) {
	var s string
	if d.human {
		s = humanSize(size)
	} else {
		s = strconv.FormatInt((size+d.unit-1)/d.unit, 10)
	}
	d.w.WriteString(s + "\t" + name + "\n")
}

// ---- df ----

// df reports the workspace as one file system whose size is the session's
// quota. The host tells the shell the quota and what is used in
// CODEPORT_WORKSPACE_BYTES and CODEPORT_WORKSPACE_USED; without them the
// size is unknown ("-") and the use is what the files of the workspace
// add up to.
func cmdDf(c *call) int {
	o, files, ok := c.getopt(c.args, "hHkmPTalx", "Bt", map[string]byte{
		"human-readable": 'h', "si": 'H', "portability": 'P', "print-type": 'T', "all": 'a', "local": 'l',
		"block-size": 'B', "type": 't', "total": 0,
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Try 'df --help' for more information.")
		return 1
	}
	status := 0
	for _, f := range files {
		if _, err := c.stat(f); err != nil {
			c.errorf("%s: %s", f, errText(err))
			status = 1
		}
	}
	if len(files) > 0 && status != 0 && len(files) == 1 {
		return status
	}
	size, haveSize := envInt(c, "CODEPORT_WORKSPACE_BYTES")
	used, haveUsed := envInt(c, "CODEPORT_WORKSPACE_USED")
	if q := c.sh.opts.Quota; q != nil && !haveSize && !haveUsed {
		// The session's quota, which /workspace and /tmp share (a host
		// that did not say reports 0).
		if limit, inUse := q(); limit > 0 {
			size, used, haveSize, haveUsed = limit, inUse, true, true
		}
	}
	if !haveUsed {
		used = c.treeBytes(".")
	}
	unit := int64(1024)
	switch {
	case o.has('m'):
		unit = 1 << 20
	case o.has('k'):
		unit = 1024
	}
	if v := o.last('B', ""); v != "" {
		n, err := parseSizeSuffix(v)
		if err != nil || n <= 0 {
			c.errorf("invalid -B argument '%s'", v)
			return 1
		}
		unit = n
	}
	human := o.has('h') || o.has('H')
	num := func(n int64) string {
		if human {
			if n == 0 {
				return "0"
			}
			return humanSize(n)
		}
		return strconv.FormatInt((n+unit-1)/unit, 10)
	}
	sizeHeader := "1K-blocks"
	switch {
	case human:
		sizeHeader = "Size"
	case unit == 1<<20:
		sizeHeader = "1M-blocks"
	case unit != 1024:
		sizeHeader = fmt.Sprintf("%s-blocks", strconv.FormatInt(unit, 10)+"B")
	}
	if o.has('P') && !human {
		sizeHeader = fmt.Sprintf("%d-blocks", unit)
	}
	availHeader, pctHeader := "Available", "Use%"
	if human {
		availHeader = "Avail"
	}
	if o.has('P') {
		pctHeader = "Capacity"
	}
	sizeS, availS, pctS := "-", "-", "-"
	if haveSize && size > 0 {
		avail := max(size-used, 0)
		sizeS, availS = num(size), num(avail)
		if used+avail > 0 {
			pctS = strconv.FormatInt((used*100+used+avail-1)/(used+avail), 10) + "%"
		}
	}
	rows := [][]string{{"Filesystem"}, {"workspace"}}
	if o.has('T') {
		rows[0] = append(rows[0], "Type")
		rows[1] = append(rows[1], "quota")
	}
	rows[0] = append(rows[0], sizeHeader, "Used", availHeader, pctHeader, "Mounted on")
	rows[1] = append(rows[1], sizeS, num(used), availS, pctS, guestRoot)
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], len(cell))
		}
	}
	// GNU df gives the name column 14 characters at least.
	widths[0] = max(widths[0], 14)
	w := c.out()
	for _, r := range rows {
		for i, cell := range r {
			last := i == len(r)-1
			switch {
			case i == 0 || (o.has('T') && i == 1):
				w.WriteString(cell + strings.Repeat(" ", widths[i]-len(cell)))
			case last:
				w.WriteString(cell)
			default:
				w.WriteString(strings.Repeat(" ", widths[i]-len(cell)) + cell)
			}
			if !last {
				w.WriteByte(' ')
			}
		}
		w.WriteByte('\n')
	}
	return c.flush(w, status)
}

func envInt(c *call, name string) (int64, bool) {
	v := c.env.Get(name)
	if !v.IsSet() {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v.String()), 10, 64)
	return n, err == nil && n >= 0
}

// treeBytes adds up the sizes of the regular files below rel (directories
// cost nothing against the byte quota unless the host says otherwise).
func (c *call) treeBytes(rel string) int64 {
	fi, err := c.sh.fs.lstat(c.ctx, rel)
	if err != nil || c.stopped() {
		return 0
	}
	if !fi.IsDir() {
		if fi.Mode().IsRegular() {
			return fi.Size()
		}
		return 0
	}
	infos, _ := c.sh.fs.readDir(c.ctx, rel)
	var n int64
	for _, sub := range infos {
		if c.stopped() {
			break
		}
		n += c.treeBytes(joinRel(rel, sub.Name()))
	}
	return n
}

// ---- ln ----

// ln fails: the workspace's file system has neither symbolic nor hard
// links (it refuses to create them), and saying so plainly beats a bare
// "Operation not permitted".
func cmdLn(c *call) int {
	o, operands, ok := c.getopt(c.args, "sfnvrTiPLb", "tS", map[string]byte{
		"symbolic": 's', "force": 'f', "no-dereference": 'n', "verbose": 'v', "relative": 'r',
		"target-directory": 't', "no-target-directory": 'T', "interactive": 'i', "logical": 'L', "physical": 'P', "suffix": 'S', "backup": 0,
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Try 'ln --help' for more information.")
		return 1
	}
	dir := o.last('t', "")
	switch {
	case len(operands) == 0:
		c.errorf("missing file operand")
		fmt.Fprintln(c.stderr, "Try 'ln --help' for more information.")
		return 1
	case dir == "" && len(operands) > 2:
		dir = operands[len(operands)-1]
		operands = operands[:len(operands)-1]
		if fi, err := c.stat(dir); err != nil || !fi.IsDir() {
			c.errorf("target '%s' is not a directory", dir)
			return 1
		}
	}
	var pairs [][2]string // target, link name
	switch {
	case dir != "":
		for _, t := range operands {
			pairs = append(pairs, [2]string{t, strings.TrimSuffix(dir, "/") + "/" + path.Base(t)})
		}
	case len(operands) == 1:
		pairs = append(pairs, [2]string{operands[0], path.Base(operands[0])})
	default:
		name := operands[1]
		if fi, err := c.stat(name); err == nil && fi.IsDir() && !o.has('T') {
			name = strings.TrimSuffix(name, "/") + "/" + path.Base(operands[0])
		}
		pairs = append(pairs, [2]string{operands[0], name})
	}
	for _, p := range pairs {
		if o.has('s') {
			c.errorf("failed to create symbolic link '%s': %s", p[1], errNoLinks)
			continue
		}
		if _, err := c.stat(p[0]); err != nil {
			c.errorf("failed to access '%s': %s", p[0], errText(err))
			continue
		}
		c.errorf("failed to create hard link '%s' => '%s': %s", p[1], p[0], errNoLinks)
	}
	return 1
}

// ---- readlink, realpath ----

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

// ---- tree ----

type treeRun struct {
	c         *call
	all       bool
	dirsOnly  bool
	fullPath  bool
	human     bool
	classify  bool
	dirsFirst bool
	level     int // -1: no limit
	ignore    []string
	pattern   []string
	w         *bufio.Writer
	dirs      int
	files     int
}

func cmdTree(c *call) int {
	const (
		optNoReport  = 1
		optDirsFirst = 2
	)
	o, roots, ok := c.getopt(c.args, "adfhFCnsDpugAxlJ", "LIP", map[string]byte{
		"noreport": optNoReport, "dirsfirst": optDirsFirst, "charset": 0,
	})
	if !ok {
		return 2
	}
	t := &treeRun{c: c, all: o.has('a'), dirsOnly: o.has('d'), fullPath: o.has('f'), human: o.has('h'),
		classify: o.has('F'), dirsFirst: o.has(optDirsFirst), level: -1}
	if v := o.last('L', ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fmt.Fprintln(c.stderr, "tree: Invalid level, must be greater than 0.")
			return 2
		}
		t.level = n
	}
	for _, p := range o.vals['I'] {
		t.ignore = append(t.ignore, strings.Split(p, "|")...)
	}
	for _, p := range o.vals['P'] {
		t.pattern = append(t.pattern, strings.Split(p, "|")...)
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	t.w = c.out()
	status := 0
	for _, r := range roots {
		if c.stopped() {
			break
		}
		fi, err := c.stat(r)
		if err != nil || !fi.IsDir() {
			t.w.WriteString(r + "  [error opening dir]\n")
			if err == nil {
				t.files++ // tree counts a file operand, and does not fail
			} else {
				status = 2
			}
			continue
		}
		t.dirs++ // the root counts
		t.w.WriteString(t.label(r, r, fi) + "\n")
		rt, _ := c.target(r)
		t.walk(r, rt.rel, "", 1)
	}
	if !o.has(optNoReport) {
		t.w.WriteString("\n")
		if t.dirsOnly {
			fmt.Fprintf(t.w, "%s\n", plural(t.dirs, "directory", "directories"))
		} else {
			fmt.Fprintf(t.w, "%s, %s\n", plural(t.dirs, "directory", "directories"), plural(t.files, "file", "files"))
		}
	}
	return c.flush(t.w, status)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func matchAny(pats []string, name string) bool {
	for _, p := range pats {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func (t *treeRun) label(shown, name string, fi fs.FileInfo) string {
	s := name
	if t.fullPath {
		s = shown
	}
	if t.classify {
		switch {
		case fi.IsDir():
			s += "/"
		case fi.Mode().IsRegular() && fi.Mode()&0o111 != 0:
			s += "*"
		}
	}
	if t.human {
		n := apparentBytes(fi)
		hs := strconv.FormatInt(n, 10)
		if n >= 1024 {
			hs = humanSize(n)
		}
		s = fmt.Sprintf("[%4s]  %s", hs, s)
	}
	return s
}

func (t *treeRun) walk(shown, rel, prefix string, depth int) {
	c := t.c
	if t.level >= 0 && depth > t.level {
		return
	}
	infos, err := c.sh.fs.readDir(c.ctx, rel)
	if err != nil {
		return
	}
	var keep []fs.FileInfo
	for _, fi := range infos {
		name := fi.Name()
		switch {
		case !t.all && strings.HasPrefix(name, "."):
		case t.dirsOnly && !fi.IsDir():
		case matchAny(t.ignore, name):
		case len(t.pattern) > 0 && !fi.IsDir() && !matchAny(t.pattern, name):
		default:
			keep = append(keep, fi)
		}
	}
	if t.dirsFirst {
		var dirs, files []fs.FileInfo
		for _, fi := range keep {
			if fi.IsDir() {
				dirs = append(dirs, fi)
			} else {
				files = append(files, fi)
			}
		}
		keep = append(dirs, files...)
	}
	for i, fi := range keep {
		if c.stopped() {
			return
		}
		last := i == len(keep)-1
		// GNU tree pads the bar with two no-break spaces.
		conn, more := "├── ", "│\u00a0\u00a0 "
		if last {
			conn, more = "└── ", "    "
		}
		sub := strings.TrimSuffix(shown, "/") + "/" + fi.Name()
		t.w.WriteString(prefix + conn + t.label(sub, fi.Name(), fi) + "\n")
		if fi.IsDir() {
			t.dirs++
			t.walk(sub, joinRel(rel, fi.Name()), prefix+more, depth+1)
		} else {
			t.files++
		}
	}
}

// ---- file ----

// fileHead is how much of a file file reads to classify it.
const fileHead = 64 << 10

func cmdFile(c *call) int {
	o, files, ok := c.getopt(c.args, "bihLzE", "", map[string]byte{
		"brief": 'b', "mime": 'i', "dereference": 'L', "no-dereference": 'h',
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Usage: file [-bchikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]\n            [--mime-type] [-e testname] [-F separator]  [-f namefile]\n            [-m magicfiles] [-P name=value] file ...")
		return 1
	}
	if len(files) == 0 {
		fmt.Fprintln(c.stderr, "Usage: file [-bchikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]\n            [--mime-type] [-e testname] [-F separator]  [-f namefile]\n            [-m magicfiles] [-P name=value] file ...")
		return 1
	}
	width := 0
	for _, f := range files {
		if f == "-" {
			f = "/dev/stdin"
		}
		width = max(width, utf8.RuneCountInString(f)+1)
	}
	w := c.out()
	status := 0
	for _, f := range files {
		if c.stopped() {
			break
		}
		desc, mime, err := c.describe(f)
		if f == "-" {
			f = "/dev/stdin"
		}
		if err != nil {
			desc = fmt.Sprintf("cannot open `%s' (%s)", f, errText(err))
			mime = desc
			if o.has('E') {
				status = 1
			}
		}
		if o.has('i') {
			desc = mime
		}
		if !o.has('b') {
			label := f + ":"
			w.WriteString(label + strings.Repeat(" ", width-utf8.RuneCountInString(label)+1))
		}
		w.WriteString(desc + "\n")
	}
	return c.flush(w, status)
}

// describe classifies the file p as file(1) does, for the few kinds a
// sandbox meets: text (and its line terminators), scripts, JSON, HTML,
// images, PDF, archives, ELF and WebAssembly; "data" for the rest.
func (c *call) describe(p string) (desc, mime string, err error) {
	if p == "-" {
		head, err := io.ReadAll(io.LimitReader(c.stdin, fileHead))
		if err != nil {
			return "", "", err
		}
		if len(head) == 0 {
			return "empty", "inode/x-empty; charset=binary", nil
		}
		desc, mime = classify(head, nil, len(head) == fileHead)
		return desc, mime, nil
	}
	t, err := c.target(p)
	var fi fs.FileInfo
	if err == nil {
		fi, err = c.lstat(t)
	}
	if err != nil {
		return "", "", err
	}
	switch {
	case fi.IsDir():
		return "directory", "inode/directory; charset=binary", nil
	case t.dev != "":
		return "character special", "inode/chardevice; charset=binary", nil
	case !fi.Mode().IsRegular():
		return "special", "inode/x-special; charset=binary", nil
	case fi.Size() == 0:
		return "empty", "inode/x-empty; charset=binary", nil
	}
	f, err := c.sh.fs.open(c.ctx, t.rel)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	head := make([]byte, min(fi.Size(), fileHead))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", "", err
	}
	head = head[:n]
	var tail []byte
	if fi.Size() >= 4 {
		tail = make([]byte, 4)
		if _, err := f.ReadAt(tail, fi.Size()-4); err != nil {
			tail = nil
		}
	}
	desc, mime = classify(head, tail, fi.Size() > int64(len(head)))
	return desc, mime, nil
}

func classify(b, tail []byte, truncated bool) (string, string) {
	has := func(off int, magic string) bool {
		return len(b) >= off+len(magic) && string(b[off:off+len(magic)]) == magic
	}
	switch {
	case has(0, "\x89PNG\r\n\x1a\n"):
		return pngDesc(b), "image/png; charset=binary"
	case has(0, "\xff\xd8\xff"):
		return "JPEG image data", "image/jpeg; charset=binary"
	case has(0, "GIF87a") || has(0, "GIF89a"):
		s := "GIF image data, version " + string(b[3:6])
		if len(b) >= 10 {
			s += fmt.Sprintf(", %d x %d", binary.LittleEndian.Uint16(b[6:]), binary.LittleEndian.Uint16(b[8:]))
		}
		return s, "image/gif; charset=binary"
	case has(0, "%PDF-"):
		v := string(b[5:min(len(b), 8)])
		return "PDF document, version " + v, "application/pdf; charset=binary"
	case has(0, "\x1f\x8b"):
		return gzipDesc(b, tail), "application/gzip; charset=binary"
	case has(0, "BZh"):
		s := "bzip2 compressed data"
		if len(b) > 3 && b[3] >= '1' && b[3] <= '9' {
			s += fmt.Sprintf(", block size = %c00k", b[3])
		}
		return s, "application/x-bzip2; charset=binary"
	case has(0, "\xfd7zXZ\x00"):
		return "XZ compressed data", "application/x-xz; charset=binary"
	case has(0, "PK\x05\x06"):
		return "Zip archive data (empty)", "application/zip; charset=binary"
	case has(0, "PK\x03\x04"):
		s := "Zip archive data"
		if len(b) >= 10 {
			v := binary.LittleEndian.Uint16(b[4:])
			s += fmt.Sprintf(", at least v%d.%d to extract", v/10, v%10)
			switch binary.LittleEndian.Uint16(b[8:]) {
			case 0:
				s += ", compression method=store"
			case 8:
				s += ", compression method=deflate"
			}
		}
		return s, "application/zip; charset=binary"
	case has(257, "ustar  \x00"):
		return "POSIX tar archive (GNU)", "application/x-tar; charset=binary"
	case has(257, "ustar\x00"):
		return "POSIX tar archive", "application/x-tar; charset=binary"
	case has(0, "\x7fELF"):
		return elfDesc(b)
	case has(0, "\x00asm"):
		s := "WebAssembly (wasm) binary module"
		if len(b) >= 8 {
			s += fmt.Sprintf(" version 0x%x", binary.LittleEndian.Uint32(b[4:]))
			if binary.LittleEndian.Uint32(b[4:]) == 1 {
				s += " (MVP)"
			}
		}
		return s, "application/wasm; charset=binary"
	}
	return textDesc(b, truncated)
}

func pngDesc(b []byte) string {
	s := "PNG image data"
	if len(b) < 29 || string(b[12:16]) != "IHDR" {
		return s
	}
	wd, ht := binary.BigEndian.Uint32(b[16:]), binary.BigEndian.Uint32(b[20:])
	depth, color, interlace := b[24], b[25], b[28]
	colors := map[byte]string{0: "grayscale", 2: "RGB", 3: "colormap", 4: "gray+alpha", 6: "RGBA"}
	s += fmt.Sprintf(", %d x %d, %d-bit", wd, ht, depth)
	if name, ok := colors[color]; ok {
		if color == 0 {
			s += " " + name
		} else {
			s += "/color " + name
		}
	}
	if interlace == 1 {
		s += ", interlaced"
	} else {
		s += ", non-interlaced"
	}
	return s
}

func gzipDesc(b, tail []byte) string {
	s := "gzip compressed data"
	if len(b) < 10 {
		return s
	}
	flags := b[3]
	mtime := binary.LittleEndian.Uint32(b[4:])
	off := 10
	if flags&4 != 0 && len(b) >= off+2 { // FEXTRA
		off += 2 + int(binary.LittleEndian.Uint16(b[off:]))
	}
	if flags&8 != 0 && off < len(b) { // FNAME
		if end := bytes.IndexByte(b[off:], 0); end >= 0 {
			s += fmt.Sprintf(", was \"%s\"", b[off:off+end])
		}
	}
	if mtime != 0 {
		s += ", last modified: " + time.Unix(int64(mtime), 0).UTC().Format("Mon Jan _2 15:04:05 2006")
	}
	switch b[8] {
	case 2:
		s += ", max compression"
	case 4:
		s += ", max speed"
	}
	oses := map[byte]string{0: "FAT filesystem (MS-DOS, OS/2, NT)", 3: "Unix", 7: "Macintosh", 11: "NTFS filesystem (NT)"}
	if name, ok := oses[b[9]]; ok {
		s += ", from " + name
	}
	if len(tail) == 4 {
		s += fmt.Sprintf(", original size modulo 2^32 %d", binary.LittleEndian.Uint32(tail))
	}
	return s
}

func elfDesc(b []byte) (string, string) {
	if len(b) < 20 {
		return "ELF", "application/octet-stream; charset=binary"
	}
	class := map[byte]string{1: "32-bit", 2: "64-bit"}[b[4]]
	var order binary.ByteOrder = binary.LittleEndian
	endian := "LSB"
	if b[5] == 2 {
		order, endian = binary.BigEndian, "MSB"
	}
	typ, mime := "", "application/octet-stream"
	switch order.Uint16(b[16:]) {
	case 1:
		typ, mime = "relocatable", "application/x-object"
	case 2:
		typ, mime = "executable", "application/x-executable"
	case 3:
		typ, mime = "shared object", "application/x-sharedlib"
	case 4:
		typ, mime = "core file", "application/x-coredump"
	}
	machines := map[uint16]string{3: "Intel 80386", 40: "ARM", 62: "x86-64", 183: "ARM aarch64", 243: "UCB RISC-V", 8: "MIPS"}
	s := fmt.Sprintf("ELF %s %s %s", class, endian, typ)
	if m, ok := machines[order.Uint16(b[18:])]; ok {
		s += ", " + m
	}
	s += fmt.Sprintf(", version %d (SYSV)", b[6])
	return s, mime + "; charset=binary"
}

// scriptKinds names the interpreters of #! lines as file does.
var scriptKinds = map[string][2]string{
	"sh":      {"POSIX shell script", "text/x-shellscript"},
	"dash":    {"POSIX shell script", "text/x-shellscript"},
	"bash":    {"Bourne-Again shell script", "text/x-shellscript"},
	"zsh":     {"Paul Falstad's zsh script", "text/x-shellscript"},
	"python":  {"Python script", "text/x-script.python"},
	"python2": {"Python script", "text/x-script.python"},
	"python3": {"Python script", "text/x-script.python"},
	"perl":    {"Perl script text", "text/x-perl"},
	"ruby":    {"Ruby script", "text/x-ruby"},
	"node":    {"Node.js script", "application/javascript"},
	"awk":     {"awk or perl script", "text/x-awk"},
}

// textDesc describes text, or "data".
func textDesc(b []byte, truncated bool) (string, string) {
	if truncated {
		// Do not judge a multi-byte character the read cut in two.
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1]
		}
	}
	bom := bytes.HasPrefix(b, []byte("\xef\xbb\xbf"))
	ascii, utf, latin := true, utf8.Valid(b), true
	for _, ch := range b {
		switch {
		case ch == 0 || ch < 7 || ch > 13 && ch < 32 && ch != 27 || ch == 127:
			return "data", "application/octet-stream; charset=binary"
		case ch >= 0x80:
			ascii = false
			if ch < 0xa0 {
				latin = false
			}
		}
	}
	var kind, charset string
	switch {
	case ascii:
		kind, charset = "ASCII text", "us-ascii"
	case utf && bom:
		kind, charset = "Unicode text, UTF-8 (with BOM) text", "utf-8"
	case utf:
		kind, charset = "Unicode text, UTF-8 text", "utf-8"
	case latin:
		kind, charset = "ISO-8859 text", "iso-8859-1"
	default:
		kind, charset = "Non-ISO extended-ASCII text", "unknown-8bit"
	}
	mime := "text/plain"
	body := bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	lower := strings.ToLower(string(trimmed[:min(len(trimmed), 64)]))
	switch {
	case bytes.HasPrefix(body, []byte("#!")):
		line, _, _ := bytes.Cut(body[2:], []byte("\n"))
		words := strings.Fields(string(line))
		prog := ""
		if len(words) > 0 {
			prog = path.Base(words[0])
			if prog == "env" && len(words) > 1 {
				prog = words[1]
			}
		}
		if k, ok := scriptKinds[strings.TrimRight(prog, "0123456789.")]; ok || scriptKinds[prog] != [2]string{} {
			if !ok {
				k = scriptKinds[prog]
			}
			kind, mime = k[0]+", "+kind+" executable", k[1]
		} else if len(words) > 0 {
			kind = "a " + strings.TrimSpace(string(line)) + " script, " + kind + " executable"
			mime = "text/plain"
		}
	case !truncated && (len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')) && json.Valid(body):
		return "JSON text data", "application/json; charset=" + charset
	case strings.HasPrefix(lower, "<!doctype html") || strings.HasPrefix(lower, "<html") || strings.HasPrefix(lower, "<head") || strings.HasPrefix(lower, "<body"):
		kind, mime = "HTML document, "+kind, "text/html"
	case strings.HasPrefix(lower, "<?xml"):
		kind, mime = "XML 1.0 document, "+kind, "text/xml"
	}
	return kind + lineNotes(b), mime + "; charset=" + charset
}

// lineNotes is file's remark on long lines and line terminators.
func lineNotes(b []byte) string {
	var crlf, cr, lf bool
	longest, cur := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				crlf = true
				i++
			} else {
				cr = true
			}
			cur = 0
		case '\n':
			lf = true
			cur = 0
		default:
			cur++
			longest = max(longest, cur)
		}
	}
	var notes []string
	if longest > 300 {
		notes = append(notes, fmt.Sprintf("with very long lines (%d)", longest))
	}
	var term []string
	if crlf {
		term = append(term, "CRLF")
	}
	if cr {
		term = append(term, "CR")
	}
	if lf && (crlf || cr) {
		term = append(term, "LF")
	}
	switch {
	case len(term) > 0:
		notes = append(notes, "with "+strings.Join(term, ", ")+" line terminators")
	case !lf:
		notes = append(notes, "with no line terminators")
	}
	if len(notes) == 0 {
		return ""
	}
	return ", " + strings.Join(notes, ", ")
}
