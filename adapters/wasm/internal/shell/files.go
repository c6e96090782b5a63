package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/codeport/codeport/port"
)

// copyOut copies r to w, telling a read error (rerr) from a write error
// (werr).
func copyOut(w io.Writer, r io.Reader) (rerr, werr error) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil, werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return err, nil
		}
	}
}

func cmdCat(c *call) int {
	o, files, ok := c.getopt(c.args, "nbsEu", "", map[string]byte{"number": 'n', "number-nonblank": 'b', "squeeze-blank": 's', "show-ends": 'E'})
	if !ok {
		return 1
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	w := c.out()
	status := 0
	plain := !o.has('n') && !o.has('b') && !o.has('s') && !o.has('E')
	num := 0
	prevBlank := false
	for _, f := range files {
		if c.stopped() {
			break
		}
		r, done, err := c.openInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		if plain {
			rerr, werr := copyOut(w, r)
			done()
			if werr != nil {
				return c.writeFailed(werr)
			}
			if rerr != nil {
				status = c.fail(1, f, rerr)
			}
			continue
		}
		lr := c.lines(r)
		for {
			line, nl, err := lr.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					status = c.fail(1, f, err)
				}
				break
			}
			blank := len(line) == 0
			if o.has('s') && blank && prevBlank {
				continue
			}
			prevBlank = blank
			if o.has('b') && !blank || o.has('n') && !o.has('b') {
				num++
				fmt.Fprintf(w, "%6d\t", num)
			}
			w.Write(line)
			if o.has('E') && nl {
				w.WriteByte('$')
			}
			if nl {
				if err := w.WriteByte('\n'); err != nil {
					done()
					return c.writeFailed(err)
				}
			}
		}
		done()
	}
	return c.flush(w, status)
}

// lsEntry is a file ls shows.
type lsEntry struct {
	name string // as shown
	rel  string // workspace-relative, "" for a device
	info fs.FileInfo
}

func cmdLs(c *call) int {
	o, operands, ok := c.getopt(c.args, "alAh1dFrtSRCxpU", "", map[string]byte{
		"all": 'a', "almost-all": 'A', "human-readable": 'h', "directory": 'd',
		"classify": 'F', "reverse": 'r', "recursive": 'R', "color": 0, "group-directories-first": 0,
	})
	if !ok {
		return 2
	}
	if len(operands) == 0 {
		operands = []string{"."}
	}
	status := 0
	var files, dirs []lsEntry
	for _, op := range operands {
		if c.stopped() {
			break
		}
		t, err := c.target(op)
		var info fs.FileInfo
		switch {
		case err == nil && strings.HasSuffix(op, "/") && t.dev == "":
			info, err = c.sh.fs.stat(c.ctx, t.rel) // "link/" would follow the link
		case err == nil:
			info, err = c.lstat(t)
		}
		if err != nil {
			c.errorf("cannot access '%s': %s", op, errText(err))
			status = 2
			continue
		}
		e := lsEntry{name: op, rel: t.rel, info: info}
		if info.IsDir() && !o.has('d') {
			dirs = append(dirs, e)
		} else {
			files = append(files, e)
		}
	}
	w := c.out()
	l := &lister{c: c, o: o, w: w}
	l.sort(files)
	l.print(files)
	l.sort(dirs)
	header := len(operands) > 1 || o.has('R')
	for i, d := range dirs {
		if i > 0 || len(files) > 0 {
			w.WriteString("\n")
		}
		if st := l.listDir(d, header); st != 0 {
			status = st
		}
		if err := c.ctx.Err(); err != nil {
			break
		}
	}
	return c.flush(w, status)
}

type lister struct {
	c *call
	o opts
	w *bufio.Writer
}

func (l *lister) listDir(d lsEntry, header bool) int {
	if header {
		fmt.Fprintf(l.w, "%s:\n", d.name)
	}
	infos, err := l.c.sh.fs.readDir(l.c.ctx, d.rel)
	if err != nil {
		l.c.errorf("cannot open directory '%s': %s", d.name, errText(err))
		return 2
	}
	var entries []lsEntry
	if l.o.has('a') {
		entries = append(entries, lsEntry{name: ".", rel: d.rel, info: d.info})
		parent := d.info
		if d.rel != "." {
			if fi, err := l.c.sh.fs.lstat(l.c.ctx, path.Dir(d.rel)); err == nil {
				parent = fi
			}
		}
		entries = append(entries, lsEntry{name: "..", info: parent})
	}
	for _, info := range infos {
		if strings.HasPrefix(info.Name(), ".") && !l.o.has('a') && !l.o.has('A') {
			continue
		}
		entries = append(entries, lsEntry{name: info.Name(), rel: joinRel(d.rel, info.Name()), info: info})
	}
	l.sort(entries)
	if l.o.has('l') {
		var blocks int64
		for _, e := range entries {
			blocks += (e.info.Size() + 4095) / 4096 * 4
		}
		fmt.Fprintf(l.w, "total %d\n", blocks)
	}
	l.print(entries)
	status := 0
	if l.o.has('R') {
		for _, e := range entries {
			if l.c.stopped() {
				break
			}
			if e.name == "." || e.name == ".." || !e.info.IsDir() {
				continue
			}
			sub := lsEntry{name: strings.TrimSuffix(d.name, "/") + "/" + e.name, rel: e.rel, info: e.info}
			l.w.WriteString("\n")
			if st := l.listDir(sub, true); st != 0 {
				status = st
			}
		}
	}
	return status
}

func (l *lister) sort(entries []lsEntry) {
	if l.o.has('U') {
		return
	}
	slices.SortStableFunc(entries, func(a, b lsEntry) int {
		switch {
		case l.o.has('S'):
			if a.info.Size() != b.info.Size() {
				return cmpInt64(b.info.Size(), a.info.Size())
			}
		case l.o.has('t'):
			if !a.info.ModTime().Equal(b.info.ModTime()) {
				return b.info.ModTime().Compare(a.info.ModTime())
			}
		}
		return strings.Compare(a.name, b.name)
	})
	if l.o.has('r') {
		slices.Reverse(entries)
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (l *lister) print(entries []lsEntry) {
	if !l.o.has('l') {
		for _, e := range entries {
			l.w.WriteString(e.name + l.suffix(e) + "\n")
		}
		return
	}
	sizes := make([]string, len(entries))
	links := make([]string, len(entries))
	var sw, lw int
	for i, e := range entries {
		if l.o.has('h') {
			sizes[i] = humanSize(e.info.Size())
		} else {
			sizes[i] = strconv.FormatInt(e.info.Size(), 10)
		}
		links[i] = strconv.FormatUint(nlink(e.info), 10)
		sw, lw = max(sw, len(sizes[i])), max(lw, len(links[i]))
	}
	now := time.Now()
	for i, e := range entries {
		mt := e.info.ModTime()
		stamp := mt.Format("Jan _2 15:04")
		if mt.Before(now.AddDate(0, -6, 0)) || mt.After(now.Add(time.Hour)) {
			stamp = mt.Format("Jan _2  2006")
		}
		name := e.name + l.suffix(e)
		if e.info.Mode()&fs.ModeSymlink != 0 && e.rel != "" {
			if dest, err := l.c.sh.fs.readlink(l.c.ctx, e.rel); err == nil {
				name += " -> " + dest
			}
		}
		fmt.Fprintf(l.w, "%s %*s user user %*s %s %s\n", modeString(e.info.Mode()), lw, links[i], sw, sizes[i], stamp, name)
	}
}

func (l *lister) suffix(e lsEntry) string {
	m := e.info.Mode()
	switch {
	case !l.o.has('F') && !l.o.has('p'):
		return ""
	case m.IsDir():
		return "/"
	case !l.o.has('F'):
		return ""
	case m&fs.ModeSymlink != 0:
		return "@"
	case m&fs.ModeNamedPipe != 0:
		return "|"
	case m.IsRegular() && m&0o111 != 0:
		return "*"
	}
	return ""
}

// modeString formats a mode as ls -l does ("drwxr-xr-x").
func modeString(m fs.FileMode) string {
	var b strings.Builder
	switch {
	case m.IsDir():
		b.WriteByte('d')
	case m&fs.ModeSymlink != 0:
		b.WriteByte('l')
	case m&fs.ModeCharDevice != 0:
		b.WriteByte('c')
	case m&fs.ModeDevice != 0:
		b.WriteByte('b')
	case m&fs.ModeNamedPipe != 0:
		b.WriteByte('p')
	case m&fs.ModeSocket != 0:
		b.WriteByte('s')
	default:
		b.WriteByte('-')
	}
	const rwx = "rwxrwxrwx"
	for i := range 9 {
		if m&(1<<uint(8-i)) != 0 {
			b.WriteByte(rwx[i])
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// humanSize formats a size as ls -h does (1.5K, 23M).
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10)
	}
	f := float64(n)
	for _, unit := range "KMGTPE" {
		f /= 1024
		if f < 1024 || unit == 'E' {
			if f < 10 {
				return fmt.Sprintf("%.1f%c", ceilTenth(f), unit)
			}
			return fmt.Sprintf("%.0f%c", ceil(f), unit)
		}
	}
	return strconv.FormatInt(n, 10)
}

func ceil(f float64) float64 {
	i := float64(int64(f))
	if f > i {
		return i + 1
	}
	return i
}

func ceilTenth(f float64) float64 { return ceil(f*10) / 10 }

func cmdMkdir(c *call) int {
	o, dirs, ok := c.getopt(c.args, "pv", "m", map[string]byte{"parents": 'p', "verbose": 'v', "mode": 'm'})
	if !ok {
		return 1
	}
	if len(dirs) == 0 {
		c.errorf("missing operand")
		return 1
	}
	status := 0
	for _, d := range dirs {
		if c.stopped() {
			break
		}
		t, err := c.target(d)
		if err == nil && t.dev != "" {
			err = fs.ErrExist
		}
		if err == nil && t.root {
			if o.has('p') {
				continue
			}
			err = fs.ErrExist
		}
		if err == nil {
			err = c.sh.fs.mkdir(c.ctx, t.rel, o.has('p'))
		}
		if err != nil {
			c.errorf("cannot create directory '%s': %s", d, errText(err))
			status = 1
			continue
		}
		if o.has('v') {
			fmt.Fprintf(c.stdout, "mkdir: created directory '%s'\n", d)
		}
	}
	return status
}

func cmdRm(c *call) int {
	o, paths, ok := c.getopt(c.args, "rRfidIv", "", map[string]byte{"recursive": 'r', "force": 'f', "dir": 'd', "verbose": 'v'})
	if !ok {
		return 1
	}
	recursive, force := o.has('r') || o.has('R'), o.has('f')
	if len(paths) == 0 {
		if force {
			return 0
		}
		c.errorf("missing operand")
		return 1
	}
	status := 0
	for _, p := range paths {
		if c.stopped() {
			break
		}
		if base := path.Base(p); base == "." || base == ".." {
			c.errorf("refusing to remove '.' or '..' directory: skipping '%s'", p)
			status = 1
			continue
		}
		t, err := c.target(p)
		if err == nil && t.root {
			c.errorf("refusing to remove the workspace root '%s'", p)
			status = 1
			continue
		}
		if err == nil && t.dev != "" {
			err = fs.ErrPermission
		}
		var info fs.FileInfo
		if err == nil {
			info, err = c.sh.fs.lstat(c.ctx, t.rel)
		}
		if err == nil && info.IsDir() && !recursive && !o.has('d') {
			err = port.ErrIsDirectory
		}
		if err == nil {
			if info.IsDir() && recursive {
				err = c.sh.fs.removeAll(c.ctx, t.rel)
			} else {
				err = c.sh.fs.remove(c.ctx, t.rel)
			}
		}
		if err != nil {
			if force && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			c.errorf("cannot remove '%s': %s", p, errText(err))
			status = 1
			continue
		}
		if o.has('v') {
			fmt.Fprintf(c.stdout, "removed '%s'\n", p)
		}
	}
	return status
}

func cmdRmdir(c *call) int {
	_, dirs, ok := c.getopt(c.args, "pv", "", map[string]byte{"ignore-fail-on-non-empty": 0})
	if !ok {
		return 1
	}
	if len(dirs) == 0 {
		c.errorf("missing operand")
		return 1
	}
	status := 0
	for _, d := range dirs {
		if c.stopped() {
			break
		}
		t, err := c.target(d)
		var info fs.FileInfo
		if err == nil && (t.root || t.dev != "") {
			err = fs.ErrPermission
		}
		if err == nil {
			info, err = c.sh.fs.lstat(c.ctx, t.rel)
		}
		if err == nil && !info.IsDir() {
			err = syscall.ENOTDIR
		}
		if err == nil {
			err = c.sh.fs.remove(c.ctx, t.rel)
		}
		if err != nil {
			c.errorf("failed to remove '%s': %s", d, errText(err))
			status = 1
		}
	}
	return status
}

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
			fmt.Fprintf(c.stdout, "'%s' -> '%s'\n", s, path.Join(guestRoot, to))
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
			c.errorf("cannot move '%s' to '%s': %s", s, path.Join(guestRoot, to), errText(err))
			status = 1
			continue
		}
		if o.has('v') {
			fmt.Fprintf(c.stdout, "renamed '%s' -> '%s'\n", s, path.Join(guestRoot, to))
		}
	}
	return status
}

func cmdTouch(c *call) int {
	o, files, ok := c.getopt(c.args, "camh", "dtr", map[string]byte{"no-create": 'c', "date": 'd'})
	if !ok {
		return 1
	}
	if len(files) == 0 {
		c.errorf("missing file operand")
		return 1
	}
	status := 0
	now := time.Now()
	for _, f := range files {
		if c.stopped() {
			break
		}
		t, err := c.target(f)
		if err == nil && t.dev != "" {
			continue
		}
		if err == nil {
			_, err = c.sh.fs.stat(c.ctx, t.rel)
			switch {
			case err == nil:
				err = c.sh.fs.touch(c.ctx, t.rel, now)
			case errors.Is(err, fs.ErrNotExist) && o.has('c'):
				err = nil
			case errors.Is(err, fs.ErrNotExist):
				err = c.createEmpty(t)
			}
		}
		if err != nil {
			c.errorf("cannot touch '%s': %s", f, errText(err))
			status = 1
		}
	}
	return status
}

// createEmpty creates the empty file t; its directory must exist.
func (c *call) createEmpty(t target) error {
	info, err := c.sh.fs.stat(c.ctx, path.Dir(t.rel))
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return syscall.ENOTDIR
	}
	return c.sh.fs.ws.WriteFile(t.rel, nil, c.sh.fs.max)
}

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

func cmdTee(c *call) int {
	o, files, ok := c.getopt(c.args, "ai", "", map[string]byte{"append": 'a'})
	if !ok {
		return 1
	}
	status := 0
	writers := []io.Writer{c.stdout}
	var opened []*fileWriter
	for _, f := range files {
		if c.stopped() {
			break
		}
		t, err := c.target(f)
		if err == nil {
			switch t.dev {
			case devNull:
				continue
			case devStdout:
				writers = append(writers, c.stdout)
				continue
			case devStderr:
				writers = append(writers, c.stderr)
				continue
			case devStdin:
				err = fs.ErrPermission
			}
		}
		var fw *fileWriter
		if err == nil {
			fw, err = c.sh.createFile(c.ctx, t, o.has('a'), nil)
		}
		if err != nil {
			c.errorf("%s: %s", f, errText(err))
			status = 1
			continue
		}
		opened = append(opened, fw)
		writers = append(writers, fw)
	}
	_, werr := copyOut(io.MultiWriter(writers...), c.stdin)
	for i, fw := range opened {
		if err := fw.Close(); err != nil && werr == nil {
			c.errorf("%s: %s", files[i], errText(err))
			status = 1
		}
	}
	if werr != nil {
		return c.writeFailed(werr)
	}
	return status
}

func cmdFind(c *call) int {
	var roots []string
	args := c.args
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "!" && args[0] != "(" {
		roots = append(roots, args[0])
		args = args[1:]
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	f := &finder{c: c, maxDepth: -1}
	if !f.parse(args) {
		return 1
	}
	w := c.out()
	f.w = w
	for _, r := range roots {
		t, err := c.target(r)
		var info fs.FileInfo
		if err == nil && t.dev != "" {
			err = fs.ErrPermission
		}
		if err == nil {
			info, err = c.sh.fs.lstat(c.ctx, t.rel)
		}
		if err != nil {
			c.errorf("'%s': %s", r, errText(err))
			f.status = 1
			continue
		}
		f.walk(r, t.rel, info, 0)
	}
	return c.flush(w, f.status)
}

type findTest struct {
	negate bool
	match  func(name string, info fs.FileInfo, p string) bool
}

type finder struct {
	c                  *call
	w                  *bufio.Writer
	tests              []findTest
	maxDepth, minDepth int
	status             int
}

func (f *finder) parse(args []string) bool {
	negate := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		arg := func() (string, bool) {
			if i+1 >= len(args) {
				f.c.errorf("missing argument to '%s'", a)
				return "", false
			}
			i++
			return args[i], true
		}
		switch a {
		case "!", "-not":
			negate = !negate
			continue
		case "-print", "-a", "-and":
			continue
		case "-name", "-iname", "-path", "-wholename":
			pat, ok := arg()
			if !ok {
				return false
			}
			fold := a == "-iname"
			if fold {
				pat = strings.ToLower(pat)
			}
			if _, err := path.Match(pat, ""); err != nil {
				f.c.errorf("bad pattern '%s'", pat)
				return false
			}
			whole := a == "-path" || a == "-wholename"
			f.tests = append(f.tests, findTest{negate: negate, match: func(name string, _ fs.FileInfo, p string) bool {
				s := name
				if whole {
					s = p
				}
				if fold {
					s = strings.ToLower(s)
				}
				ok, _ := path.Match(pat, s)
				return ok
			}})
		case "-type":
			typ, ok := arg()
			if !ok {
				return false
			}
			if typ != "f" && typ != "d" && typ != "l" {
				f.c.errorf("unknown argument to -type: %s", typ)
				return false
			}
			f.tests = append(f.tests, findTest{negate: negate, match: func(_ string, info fs.FileInfo, _ string) bool {
				switch typ {
				case "f":
					return info.Mode().IsRegular()
				case "d":
					return info.IsDir()
				}
				return info.Mode()&fs.ModeSymlink != 0
			}})
		case "-empty":
			f.tests = append(f.tests, findTest{negate: negate, match: func(_ string, info fs.FileInfo, _ string) bool {
				return info.Mode().IsRegular() && info.Size() == 0
			}})
		case "-maxdepth", "-mindepth":
			v, ok := arg()
			if !ok {
				return false
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				f.c.errorf("invalid argument '%s' to '%s'", v, a)
				return false
			}
			if a == "-maxdepth" {
				f.maxDepth = n
			} else {
				f.minDepth = n
			}
		default:
			f.c.errorf("unknown predicate '%s' (this find supports -name, -iname, -path, -type f|d|l, -empty, -maxdepth, -mindepth, -not)", a)
			return false
		}
		negate = false
	}
	return true
}

func (f *finder) walk(shown, rel string, info fs.FileInfo, depth int) {
	if f.c.ctx.Err() != nil {
		return
	}
	if depth >= f.minDepth {
		matched := true
		for _, t := range f.tests {
			if t.match(path.Base(shown), info, shown) == t.negate {
				matched = false
				break
			}
		}
		if matched {
			f.w.WriteString(shown + "\n")
		}
	}
	if !info.IsDir() || (f.maxDepth >= 0 && depth >= f.maxDepth) {
		return
	}
	infos, err := f.c.sh.fs.readDir(f.c.ctx, rel)
	if err != nil {
		f.c.errorf("'%s': %s", shown, errText(err))
		f.status = 1
		return
	}
	for _, sub := range infos {
		if f.c.stopped() {
			break
		}
		f.walk(strings.TrimSuffix(shown, "/")+"/"+sub.Name(), joinRel(rel, sub.Name()), sub, depth+1)
	}
}
