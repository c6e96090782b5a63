package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/interp"
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

// cmdCat is GNU cat. -v shows control bytes as ^X and bytes over 127 as
// M-x; -E marks line ends with $ (a CR before the newline as ^M$, as GNU
// does); -T shows tabs as ^I; -A is -vET, -e is -vE, -t is -vT. Numbering
// and squeezing carry on from one file to the next.
func cmdCat(c *call) int {
	o, files, ok := c.getopt(c.args, "AbeEnstTuv", "", map[string]byte{
		"show-all": 'A', "number-nonblank": 'b', "show-ends": 'E', "number": 'n',
		"squeeze-blank": 's', "show-tabs": 'T', "show-nonprinting": 'v',
	})
	if !ok {
		fmt.Fprintf(c.stderr, "Try 'cat --help' for more information.\n")
		return 1
	}
	showAll, e, t := o.has('A'), o.has('e'), o.has('t')
	nonprint := o.has('v') || showAll || e || t
	ends := o.has('E') || showAll || e
	tabs := o.has('T') || showAll || t
	numberAll, numberNonblank, squeeze := o.has('n'), o.has('b'), o.has('s')
	if len(files) == 0 {
		files = []string{"-"}
	}
	w := c.out()
	status := 0
	plain := !nonprint && !ends && !tabs && !numberAll && !numberNonblank && !squeeze
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
		for !c.stopped() {
			line, nl, err := lr.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					status = c.fail(1, f, err)
				}
				break
			}
			blank := len(line) == 0 && nl
			if squeeze && blank && prevBlank {
				continue
			}
			prevBlank = blank
			if numberNonblank && !blank || numberAll && !numberNonblank {
				num++
				fmt.Fprintf(w, "%6d\t", num)
			}
			body, cr := line, false
			if ends && !nonprint && nl && len(body) > 0 && body[len(body)-1] == '\r' {
				body, cr = body[:len(body)-1], true
			}
			if nonprint || tabs {
				catVisible(w, body, nonprint, tabs)
			} else {
				w.Write(body)
			}
			if cr {
				w.WriteString("^M")
			}
			if ends && nl {
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

// catVisible writes line with cat -v's notation (nonprint) and/or tabs as
// ^I.
func catVisible(w *bufio.Writer, line []byte, nonprint, tabs bool) {
	for _, b := range line {
		switch {
		case b == '\t':
			if tabs {
				w.WriteString("^I")
			} else {
				w.WriteByte(b)
			}
		case !nonprint:
			w.WriteByte(b)
		default:
			if b >= 128 {
				w.WriteString("M-")
				b -= 128
			}
			switch {
			case b < 32:
				w.WriteByte('^')
				w.WriteByte(b + 64)
			case b == 127:
				w.WriteString("^?")
			default:
				w.WriteByte(b)
			}
		}
	}
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
	loc := l.c.dateLocation()
	for i, e := range entries {
		mt := e.info.ModTime().In(loc)
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
	b.WriteByte(kindOf(m).letter)
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

// fileKind is the kind of file a mode names: ls's letter for it (find's
// too, but for a regular file, which find calls f) and stat's name (%F).
type fileKind struct {
	letter byte
	name   string
}

func kindOf(m fs.FileMode) fileKind {
	switch {
	case m.IsDir():
		return fileKind{'d', "directory"}
	case m&fs.ModeSymlink != 0:
		return fileKind{'l', "symbolic link"}
	case m&fs.ModeCharDevice != 0:
		return fileKind{'c', "character special file"}
	case m&fs.ModeDevice != 0:
		return fileKind{'b', "block special file"}
	case m&fs.ModeNamedPipe != 0:
		return fileKind{'p', "fifo"}
	case m&fs.ModeSocket != 0:
		return fileKind{'s', "socket"}
	}
	return fileKind{'-', "regular file"}
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
			err = errIsDirectory
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

func cmdTouch(c *call) int {
	o, files, ok := c.getopt(c.args, "camh", "dtr", map[string]byte{"no-create": 'c', "date": 'd', "reference": 'r'})
	if !ok {
		return 1
	}
	if len(files) == 0 {
		c.errorf("missing file operand")
		return 1
	}
	// The time to set: now, or what -d (a date as date -d reads it), -t
	// ([[CC]YY]MMDDhhmm[.ss]) or -r (another file's) gives.
	stamp, explicit := time.Now(), false
	sources := 0
	for _, f := range []byte("dtr") {
		if len(o.vals[f]) > 0 {
			sources++
		}
	}
	if sources > 1 {
		c.errorf("cannot specify times from more than one source")
		return 1
	}
	dates := map[byte]func(string, time.Time, *time.Location) (time.Time, bool){'d': parseDate, 't': touchStamp}
	for f, parse := range dates {
		if v := o.last(f, ""); len(o.vals[f]) > 0 {
			t, ok := parse(v, stamp, c.dateLocation())
			if !ok {
				c.errorf("invalid date format '%s'", v)
				return 1
			}
			stamp, explicit = t, true
		}
	}
	if len(o.vals['r']) > 0 {
		v := o.last('r', "")
		rt, err := c.target(v)
		var info fs.FileInfo
		if err == nil {
			info, err = c.sh.fs.stat(c.ctx, rt.rel)
		}
		if err != nil {
			c.errorf("failed to get attributes of '%s': %s", v, errText(err))
			return 1
		}
		stamp, explicit = info.ModTime(), true
	}
	status := 0
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
				err = c.sh.fs.touch(c.ctx, t.rel, stamp)
			case errors.Is(err, fs.ErrNotExist) && o.has('c'):
				err = nil
			case errors.Is(err, fs.ErrNotExist):
				err = c.createEmpty(t)
				if err == nil && explicit {
					err = c.sh.fs.touch(c.ctx, t.rel, stamp)
				}
			}
		}
		if err != nil {
			c.errorf("cannot touch '%s': %s", f, errText(err))
			status = 1
		}
	}
	return status
}

// touchStamp reads touch -t's [[CC]YY]MMDDhhmm[.ss] in loc; a two-digit
// year is 1969-2068, and without a year it is now's.
func touchStamp(v string, now time.Time, loc *time.Location) (time.Time, bool) {
	main, secs, hasSecs := strings.Cut(v, ".")
	num := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && len(s) > 0 && s[0] != '+' && s[0] != '-'
	}
	sec := 0
	if hasSecs {
		n, ok := num(secs)
		if !ok || len(secs) != 2 || n > 60 {
			return time.Time{}, false
		}
		sec = n
	}
	if _, ok := num(main); !ok {
		return time.Time{}, false
	}
	year := now.In(loc).Year()
	switch len(main) {
	case 8:
	case 10:
		yy, _ := num(main[:2])
		year = 1900 + yy
		if yy < 69 {
			year = 2000 + yy
		}
		main = main[2:]
	case 12:
		year, _ = num(main[:4])
		main = main[4:]
	default:
		return time.Time{}, false
	}
	month, _ := num(main[0:2])
	day, _ := num(main[2:4])
	hour, _ := num(main[4:6])
	minute, _ := num(main[6:8])
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, loc)
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
		t.Month() != time.Month(month) || t.Day() != day {
		return time.Time{}, false
	}
	return t, true
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
	_, err = c.sh.fs.replace(t.rel, strings.NewReader(""))
	return err
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

// cmdFind is GNU find's expression language over the workspace: tests
// (-name, -iname, -path, -ipath, -regex, -type, -size, -mtime, -newer,
// -empty, -perm, ...), actions (-print, -print0, -printf, -exec,
// -execdir, -delete, -prune, -quit), operators (! -not -a -o , and
// parentheses) and the options -maxdepth, -mindepth and -depth. An
// expression without an action prints what it matches.
func cmdFind(c *call) int {
	var roots []string
	args := c.args
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "!" && args[0] != "(" && args[0] != ")" && args[0] != "," {
		roots = append(roots, args[0])
		args = args[1:]
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	f := &finder{c: c, maxDepth: -1, now: time.Now()}
	p := &findParser{f: f, args: args}
	expr, ok := p.parse()
	if !ok {
		return 1
	}
	if !p.action {
		print := func(n *findNode) bool { f.w.WriteString(n.shown + "\n"); return true }
		if expr == nil {
			expr = print
		} else {
			e := expr
			expr = func(n *findNode) bool { return e(n) && print(n) }
		}
	}
	f.expr = expr
	w := c.out()
	f.w = w
	for _, r := range roots {
		if c.stopped() || f.quit {
			break
		}
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
		f.walk(&findNode{shown: r, root: r, rel: t.rel, info: info})
	}
	f.flushBatches()
	return c.flush(w, f.status)
}

// findNode is the file an expression is evaluated on.
type findNode struct {
	shown string // the path as find prints it
	root  string // the starting point it was found under
	rel   string // workspace-relative
	info  fs.FileInfo
	depth int
	prune bool // set by -prune
}

type finder struct {
	c                  *call
	w                  *bufio.Writer
	expr               func(*findNode) bool
	maxDepth, minDepth int
	depthFirst         bool
	quit               bool
	status             int
	now                time.Time
	batches            []*execBatch
}

// findParser parses the expression (GNU find's grammar: "," binds
// loosest, then -o, then -a, which juxtaposition implies).
type findParser struct {
	f      *finder
	args   []string
	i      int
	action bool // the expression has an action: no implicit -print
	// regexType is the -regextype in force: "" (emacs, GNU's default)
	// or a basic type, whose \( \) \| \{ \} are the operators, or an
	// extended one, which Go's syntax is close to.
	regexType string
}

func (p *findParser) peek() string {
	if p.i < len(p.args) {
		return p.args[p.i]
	}
	return ""
}

func (p *findParser) parse() (func(*findNode) bool, bool) {
	if len(p.args) == 0 {
		return nil, true
	}
	e, ok := p.list()
	if !ok {
		return nil, false
	}
	if p.i < len(p.args) {
		if p.args[p.i] == ")" {
			p.f.c.errorf("invalid expression; you have too many ')'")
		} else {
			p.f.c.errorf("paths must precede expression: `%s'", p.args[p.i])
		}
		return nil, false
	}
	return e, true
}

func (p *findParser) list() (func(*findNode) bool, bool) {
	l, ok := p.or()
	for ok && p.peek() == "," {
		p.i++
		var r func(*findNode) bool
		if r, ok = p.or(); ok {
			a := l
			l = func(n *findNode) bool { a(n); return !p.f.quit && r(n) }
		}
	}
	return l, ok
}

func (p *findParser) or() (func(*findNode) bool, bool) {
	l, ok := p.and()
	for ok && (p.peek() == "-o" || p.peek() == "-or") {
		p.i++
		var r func(*findNode) bool
		if r, ok = p.and(); ok {
			a := l
			l = func(n *findNode) bool { return a(n) || !p.f.quit && r(n) }
		}
	}
	return l, ok
}

func (p *findParser) and() (func(*findNode) bool, bool) {
	l, ok := p.unary()
	for ok {
		switch p.peek() {
		case "-a", "-and":
			p.i++
		case "", "-o", "-or", ")", ",":
			return l, true
		}
		var r func(*findNode) bool
		if r, ok = p.unary(); ok {
			a := l
			l = func(n *findNode) bool { return a(n) && !p.f.quit && r(n) }
		}
	}
	return l, ok
}

func (p *findParser) unary() (func(*findNode) bool, bool) {
	switch tok := p.peek(); tok {
	case "":
		p.f.c.errorf("expected an expression at the end")
		return nil, false
	case "!", "-not":
		p.i++
		e, ok := p.unary()
		if !ok {
			return nil, false
		}
		return func(n *findNode) bool { return !e(n) }, true
	case "(":
		p.i++
		if p.peek() == ")" {
			p.f.c.errorf("invalid expression; empty parentheses are not allowed.")
			return nil, false
		}
		e, ok := p.list()
		if !ok {
			return nil, false
		}
		if p.peek() != ")" {
			p.f.c.errorf("invalid expression; I was expecting to find a ')' somewhere but did not see one.")
			return nil, false
		}
		p.i++
		return e, true
	case ")", "-o", "-or", "-a", "-and", ",":
		p.f.c.errorf("invalid expression; you have used a binary operator '%s' with nothing before it.", tok)
		return nil, false
	}
	return p.primary()
}

func (p *findParser) arg(pred string) (string, bool) {
	if p.i >= len(p.args) {
		p.f.c.errorf("missing argument to `%s'", pred)
		return "", false
	}
	p.i++
	return p.args[p.i-1], true
}

// numArg parses find's [+-]N: cmp is '+' (more than), '-' (less than) or
// '=' (exactly).
func numArg(s string) (cmp byte, n int64, ok bool) {
	cmp = '='
	if s != "" && (s[0] == '+' || s[0] == '-') {
		cmp, s = s[0], s[1:]
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return cmp, n, err == nil
}

func compareNum(cmp byte, have, want int64) bool {
	switch cmp {
	case '+':
		return have > want
	case '-':
		return have < want
	}
	return have == want
}

func (p *findParser) primary() (func(*findNode) bool, bool) {
	f := p.f
	c := f.c
	tok := p.args[p.i]
	p.i++
	always := func(*findNode) bool { return true }
	switch tok {
	case "-print":
		p.action = true
		return func(n *findNode) bool { f.w.WriteString(n.shown + "\n"); return true }, true
	case "-print0":
		p.action = true
		return func(n *findNode) bool { f.w.WriteString(n.shown + "\x00"); return true }, true
	case "-printf":
		format, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		p.action = true
		return func(n *findNode) bool { f.w.WriteString(f.printf(format, n)); return true }, true
	case "-fprint", "-fprint0", "-fprintf", "-fls":
		c.errorf("%s is not supported here; redirect the output of -print instead", tok)
		return nil, false
	case "-ls":
		p.action = true
		return func(n *findNode) bool {
			si := sysOf(n.info)
			fmt.Fprintf(f.w, "%9d %6d %s %3d %-8s %-8s %8d %s %s\n", si.ino, diskBytes(n.info)/1024, modeString(n.info.Mode()),
				si.nlink, sandboxUser, sandboxUser, n.info.Size(), n.info.ModTime().In(f.c.dateLocation()).Format("Jan _2 15:04"), n.shown)
			return true
		}, true
	case "-true":
		return always, true
	case "-false":
		return func(*findNode) bool { return false }, true
	case "-quit":
		p.action = true
		return func(*findNode) bool { f.quit = true; return true }, true
	case "-prune":
		return func(n *findNode) bool { n.prune = true; return true }, true
	case "-delete":
		p.action = true
		f.depthFirst = true
		return f.delete, true
	case "-ok", "-okdir":
		c.errorf("%s is not supported here (there is no terminal to ask); use -exec", tok)
		return nil, false
	case "-exec", "-execdir":
		return p.exec(tok)
	case "-depth", "-d":
		f.depthFirst = true
		return always, true
	case "-xdev", "-mount", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race", "-follow", "-nowarn", "-warn":
		return always, true
	case "-regextype":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		switch v {
		case "findutils-default", "emacs", "posix-basic", "posix-minimal-basic", "ed", "sed", "grep":
			p.regexType = ""
		case "posix-extended", "posix-egrep", "egrep", "awk", "posix-awk", "gnu-awk":
			p.regexType = "extended"
		default:
			c.errorf("Unknown regular expression type '%s'; valid types are 'findutils-default', 'emacs', 'posix-basic', 'posix-extended', 'posix-egrep', 'egrep', 'awk', 'sed', 'grep', 'ed'.", v)
			return nil, false
		}
		return always, true
	case "-maxdepth", "-mindepth":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			c.errorf("Expected a positive decimal integer argument to %s, but got `%s'", tok, v)
			return nil, false
		}
		if tok == "-maxdepth" {
			f.maxDepth = n
		} else {
			f.minDepth = n
		}
		return always, true
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname":
		pat, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		fold := tok[1] == 'i'
		whole := strings.Contains(tok, "path") || strings.Contains(tok, "wholename")
		if strings.HasSuffix(tok, "lname") {
			return func(*findNode) bool { return false }, true // no links
		}
		return func(n *findNode) bool {
			s := n.shown
			if !whole {
				s = findBase(n.shown)
			}
			return globMatch(pat, s, fold)
		}, true
	case "-regex", "-iregex":
		pat, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		flags := ""
		if tok == "-iregex" {
			flags = "(?i)"
		}
		src := pat
		if p.regexType == "" {
			src = basicToGo(pat)
		}
		re, err := regexp.Compile(flags + `^(?:` + src + `)$`)
		if err != nil {
			c.errorf("invalid regular expression '%s': %v", pat, err)
			return nil, false
		}
		return func(n *findNode) bool { return re.MatchString(n.shown) }, true
	case "-type", "-xtype":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		var types []byte
		for _, t := range strings.Split(v, ",") {
			if len(t) != 1 || !strings.Contains("fdlbcpsD", t) {
				c.errorf("Unknown argument to %s: %s", tok, t)
				return nil, false
			}
			types = append(types, t[0])
		}
		return func(n *findNode) bool { return bytes.IndexByte(types, findType(n.info)) >= 0 }, true
	case "-empty":
		return func(n *findNode) bool {
			switch {
			case n.info.Mode().IsRegular():
				return n.info.Size() == 0
			case n.info.IsDir():
				infos, err := c.sh.fs.readDir(c.ctx, n.rel)
				return err == nil && len(infos) == 0
			}
			return false
		}, true
	case "-size":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		unit := int64(512)
		num := v
		if num != "" {
			switch num[len(num)-1] {
			case 'c':
				unit = 1
			case 'w':
				unit = 2
			case 'b':
				unit = 512
			case 'k':
				unit = 1024
			case 'M':
				unit = 1 << 20
			case 'G':
				unit = 1 << 30
			}
			if num[len(num)-1] > '9' {
				num = num[:len(num)-1]
			}
		}
		cmp, n, ok := numArg(num)
		if !ok {
			c.errorf("invalid -size type `%s'", v)
			return nil, false
		}
		// GNU rounds the size up to whole units: -size -1M is only
		// empty files.
		return func(nd *findNode) bool {
			size := nd.info.Size()
			if nd.info.IsDir() {
				size = dirBytes
			}
			return compareNum(cmp, (size+unit-1)/unit, n)
		}, true
	case "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		cmp, n, ok := numArg(v)
		if !ok {
			c.errorf("invalid argument `%s' to `%s'", v, tok)
			return nil, false
		}
		unit := 24 * time.Hour
		if strings.HasSuffix(tok, "min") {
			unit = time.Minute
		}
		which := tok[1]
		// The age in whole units, rounded down: -mtime 0 is the last
		// 24 hours, +1 more than two days ago.
		return func(nd *findNode) bool {
			t := nd.info.ModTime()
			switch which {
			case 'a':
				t = sysOf(nd.info).atime
			case 'c':
				t = sysOf(nd.info).ctime
			}
			age := f.now.Sub(t)
			units := int64(age / unit)
			if age < 0 && age%unit != 0 {
				units--
			}
			return compareNum(cmp, units, n)
		}, true
	case "-newer", "-anewer", "-cnewer", "-newermm":
		ref, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		fi, err := c.stat(ref)
		if err != nil {
			c.errorf("'%s': %s", ref, errText(err))
			return nil, false
		}
		t := fi.ModTime()
		return func(n *findNode) bool {
			mine := n.info.ModTime()
			switch tok {
			case "-anewer":
				mine = sysOf(n.info).atime
			case "-cnewer":
				mine = sysOf(n.info).ctime
			}
			return mine.After(t)
		}, true
	case "-perm":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		kind := byte('=')
		spec := v
		if spec != "" && (spec[0] == '-' || spec[0] == '/' || spec[0] == '+') {
			kind, spec = spec[0], spec[1:]
		}
		want, err := applyMode(spec, 0, false)
		if err != nil || spec == "" {
			c.errorf("invalid mode `%s'", v)
			return nil, false
		}
		bits := rawModeBits(want)
		return func(n *findNode) bool {
			have := rawMode(n.info) & 0o7777
			switch kind {
			case '-':
				return have&bits == bits
			case '/', '+':
				return bits == 0 || have&bits != 0
			}
			return have == bits
		}, true
	case "-readable", "-writable":
		return func(n *findNode) bool { return n.info.Mode().Perm()&0o600 != 0 }, true
	case "-executable":
		return func(n *findNode) bool { return n.info.Mode().Perm()&0o100 != 0 }, true
	case "-user", "-group":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		return func(*findNode) bool { return v == sandboxUser || v == strconv.Itoa(sandboxUID) }, true
	case "-uid", "-gid":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		cmp, n, ok := numArg(v)
		if !ok {
			c.errorf("invalid argument `%s' to `%s'", v, tok)
			return nil, false
		}
		return func(*findNode) bool { return compareNum(cmp, sandboxUID, n) }, true
	case "-nouser", "-nogroup":
		return func(*findNode) bool { return false }, true
	case "-links":
		v, ok := p.arg(tok)
		if !ok {
			return nil, false
		}
		cmp, n, ok := numArg(v)
		if !ok {
			c.errorf("invalid argument `%s' to `%s'", v, tok)
			return nil, false
		}
		return func(nd *findNode) bool { return compareNum(cmp, int64(sysOf(nd.info).nlink), n) }, true
	}
	c.errorf("unknown predicate `%s'", tok)
	return nil, false
}

// basicToGo rewrites a GNU basic (emacs) regular expression for Go's
// regexp: there \( \) \| \{ \} are the operators and the bare characters
// literals; bracket expressions are kept as they are.
func basicToGo(pat string) string {
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		ch := pat[i]
		switch {
		case ch == '[':
			j := i + 1
			if j < len(pat) && pat[j] == '^' {
				j++
			}
			if j < len(pat) && pat[j] == ']' {
				j++
			}
			for j < len(pat) && pat[j] != ']' {
				if strings.HasPrefix(pat[j:], "[:") {
					if end := strings.Index(pat[j+2:], ":]"); end >= 0 {
						j += end + 4
						continue
					}
				}
				j++
			}
			if j >= len(pat) {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(pat[i : j+1])
			i = j
		case ch == '\\' && i+1 < len(pat) && strings.IndexByte("()|{}", pat[i+1]) >= 0:
			b.WriteByte(pat[i+1])
			i++
		case ch == '\\' && i+1 < len(pat):
			b.WriteString(pat[i : i+2])
			i++
		case strings.IndexByte("()|{}", ch) >= 0:
			b.WriteByte('\\')
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// rawModeBits is the st_mode permission bits (with setuid, setgid,
// sticky) of a mode from applyMode.
func rawModeBits(m fs.FileMode) uint32 {
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
	return r
}

// findType is find's letter for the kind of fi (-type, %y).
func findType(fi fs.FileInfo) byte {
	if k := kindOf(fi.Mode()); k.letter != '-' {
		return k.letter
	}
	return 'f'
}

// findBase is the last component of a path as find's -name sees it.
func findBase(p string) string {
	t := strings.TrimRight(p, "/")
	if t == "" {
		return p[:min(len(p), 1)]
	}
	return t[strings.LastIndexByte(t, '/')+1:]
}

// globMatch matches s against the shell pattern pat as fnmatch(3) without
// FNM_PATHNAME does for find: '*' and '?' match '/' too.
func globMatch(pat, s string, fold bool) bool {
	if fold {
		pat, s = strings.ToLower(pat), strings.ToLower(s)
	}
	// Backtracking over the last '*' only is enough: a later '*' can
	// always absorb what an earlier one would.
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		if px < len(pat) {
			switch pat[px] {
			case '*':
				starP, starS = px, sx
				px++
				continue
			case '?':
				_, w := utf8.DecodeRuneInString(s[sx:])
				px, sx = px+1, sx+w
				continue
			case '[':
				r, w := utf8.DecodeRuneInString(s[sx:])
				if ok, n := matchClass(pat[px:], r); n > 0 {
					if ok {
						px, sx = px+n, sx+w
						continue
					}
				} else if s[sx] == '[' {
					px, sx = px+1, sx+1
					continue
				}
			case '\\':
				if px+1 < len(pat) && pat[px+1] == s[sx] {
					px, sx = px+2, sx+1
					continue
				}
			default:
				if pat[px] == s[sx] {
					px, sx = px+1, sx+1
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		_, w := utf8.DecodeRuneInString(s[starS-1:])
		starS += w - 1
		px, sx = starP+1, starS
	}
	for px < len(pat) && pat[px] == '*' {
		px++
	}
	return px == len(pat)
}

// matchClass matches r against the bracket expression at the start of
// pat; n is its length, 0 if it is not one (an unclosed '[').
func matchClass(pat string, r rune) (ok bool, n int) {
	i := 1
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	first := true
	for i < len(pat) {
		if pat[i] == ']' && !first {
			return ok != negate, i + 1
		}
		first = false
		if strings.HasPrefix(pat[i:], "[:") {
			if end := strings.Index(pat[i+2:], ":]"); end >= 0 {
				if classMatch(pat[i+2:i+2+end], r) {
					ok = true
				}
				i += end + 4
				continue
			}
		}
		lo, w := utf8.DecodeRuneInString(pat[i:])
		if lo == '\\' && i+w < len(pat) {
			i += w
			lo, w = utf8.DecodeRuneInString(pat[i:])
		}
		i += w
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			hi, w = utf8.DecodeRuneInString(pat[i+1:])
			i += 1 + w
		}
		if lo <= r && r <= hi {
			ok = true
		}
	}
	return false, 0
}

func classMatch(class string, r rune) bool {
	switch class {
	case "alpha":
		return unicode.IsLetter(r)
	case "digit":
		return r >= '0' && r <= '9'
	case "alnum":
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	case "upper":
		return unicode.IsUpper(r)
	case "lower":
		return unicode.IsLower(r)
	case "space":
		return unicode.IsSpace(r)
	case "punct":
		return unicode.IsPunct(r) || unicode.IsSymbol(r)
	case "xdigit":
		return strings.ContainsRune("0123456789abcdefABCDEF", r)
	}
	return false
}

func (f *finder) delete(n *findNode) bool {
	c := f.c
	if n.rel == "." || n.shown == "." {
		return true // GNU find does not delete the starting point "."
	}
	if err := c.sh.fs.remove(c.ctx, n.rel); err != nil {
		c.errorf("cannot delete '%s': %s", n.shown, errText(err))
		f.status = 1
		return false
	}
	return true
}

// execBatch collects the files of one "-exec ... {} +".
type execBatch struct {
	argv  []string // the command, without the trailing {}
	dir   string   // for -execdir: the directory the batch runs in
	files []string
	size  int
}

// execMax bounds the arguments of one "-exec ... +" run, as ARG_MAX does.
const execMax = 128 << 10

func (p *findParser) exec(tok string) (func(*findNode) bool, bool) {
	f := p.f
	var argv []string
	plus := false
	for {
		if p.i >= len(p.args) {
			f.c.errorf("missing argument to `%s'", tok)
			return nil, false
		}
		a := p.args[p.i]
		p.i++
		if a == ";" {
			break
		}
		if a == "+" && len(argv) > 0 && argv[len(argv)-1] == "{}" {
			argv = argv[:len(argv)-1]
			plus = true
			break
		}
		argv = append(argv, a)
	}
	if len(argv) == 0 {
		f.c.errorf("missing argument to `%s'", tok)
		return nil, false
	}
	p.action = true
	dirMode := tok == "-execdir"
	if plus {
		batches := map[string]*execBatch{}
		return func(n *findNode) bool {
			name, dir := n.shown, ""
			if dirMode {
				name, dir = "./"+findBase(n.shown), f.parentDir(n)
			}
			b := batches[dir]
			if b == nil || b.size+len(name)+1 > execMax {
				if b != nil {
					f.runBatch(b)
				}
				b = &execBatch{argv: argv, dir: dir}
				batches[dir] = b
				f.batches = append(f.batches, b)
			}
			b.files = append(b.files, name)
			b.size += len(name) + 1
			return true
		}, true
	}
	return func(n *findNode) bool {
		name, dir := n.shown, ""
		if dirMode {
			name, dir = "./"+findBase(n.shown), f.parentDir(n)
		}
		cmd := make([]string, len(argv))
		for i, a := range argv {
			cmd[i] = strings.ReplaceAll(a, "{}", name)
		}
		return f.run(dir, cmd) == 0
	}, true
}

// parentDir is the guest directory holding n, for -execdir.
func (f *finder) parentDir(n *findNode) string {
	if n.rel == "." {
		return guestRoot
	}
	return path.Join(guestRoot, path.Dir(n.rel))
}

func (f *finder) runBatch(b *execBatch) {
	if len(b.files) == 0 || f.c.stopped() {
		return
	}
	cmd := append(append([]string(nil), b.argv...), b.files...)
	b.files, b.size = nil, 0
	if f.run(b.dir, cmd) != 0 {
		f.status = 1
	}
}

func (f *finder) flushBatches() {
	for _, b := range f.batches {
		f.runBatch(b)
	}
}

// run runs a command of -exec as the shell would run it, through the
// same table (as env does), with find's output: a builtin of the
// interpreter (test, [, ...) runs in a child shell.
func (f *finder) run(dir string, argv []string) int {
	c := f.c
	if c.stopped() {
		return 1
	}
	// find -exec find -exec ... recurses once per level.
	if c.sh.guard.tooDeep() {
		c.sh.refuse(c.name)
		return 1
	}
	sub := *c
	sub.name, sub.args, sub.stdout = argv[0], argv[1:], f.w
	if dir != "" {
		sub.dir = dir
	}
	if _, ok := commands[sub.name]; ok || strings.Contains(sub.name, "/") {
		return sub.run()
	}
	if interp.IsBuiltin(sub.name) {
		return sub.runShell(`"$@"`, sub.name, nil, argv)
	}
	// GNU find reports it; only a failed "-exec ... +" fails find.
	c.errorf("'%s': No such file or directory", sub.name)
	return 127
}

// printf expands the directives of -printf for n.
func (f *finder) printf(format string, n *findNode) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		ch := format[i]
		switch {
		case ch == '\\' && i+1 < len(format):
			if format[i+1] == 'c' {
				return b.String()
			}
			i += printfEscape(&b, format[i+1:], false)
			continue
		case ch != '%':
			b.WriteByte(ch)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
			j++
		}
		for j < len(format) && (format[j] >= '0' && format[j] <= '9' || format[j] == '.') {
			j++
		}
		if j >= len(format) {
			b.WriteString(format[i:])
			break
		}
		spec := format[i+1 : j]
		d := format[j]
		i = j
		str := func(s string) { fmt.Fprintf(&b, "%"+spec+"s", s) }
		num := func(v int64) { fmt.Fprintf(&b, "%"+spec+"d", v) }
		si := sysOf(n.info)
		switch d {
		case '%':
			b.WriteByte('%')
		case 'p':
			str(n.shown)
		case 'f':
			str(findBase(n.shown))
		case 'P':
			str(strings.TrimPrefix(strings.TrimPrefix(n.shown, n.root), "/"))
		case 'H':
			str(n.root)
		case 'h':
			k := strings.LastIndexByte(strings.TrimRight(n.shown, "/"), '/')
			if k < 0 {
				str(".")
			} else {
				str(n.shown[:k])
			}
		case 'd':
			num(int64(n.depth))
		case 's':
			if n.info.IsDir() {
				num(dirBytes)
			} else {
				num(n.info.Size())
			}
		case 'k':
			num(diskBytes(n.info) / 1024)
		case 'b':
			num(diskBytes(n.info) / 512)
		case 'm':
			fmt.Fprintf(&b, "%"+spec+"o", rawMode(n.info)&0o7777)
		case 'M':
			str(modeString(n.info.Mode()))
		case 'y', 'Y':
			str(string(findType(n.info)))
		case 'u', 'g':
			str(sandboxUser)
		case 'U', 'G':
			num(sandboxUID)
		case 'n':
			num(int64(si.nlink))
		case 'i':
			num(int64(si.ino))
		case 'l':
			str("")
		case 'a', 'c', 't':
			t := n.info.ModTime()
			switch d {
			case 'a':
				t = si.atime
			case 'c':
				t = si.ctime
			}
			t = t.In(f.c.dateLocation())
			str(fmt.Sprintf("%s.%09d0 %d", t.Format("Mon Jan _2 15:04:05"), t.Nanosecond(), t.Year()))
		case 'A', 'C', 'T':
			t := n.info.ModTime()
			switch d {
			case 'A':
				t = si.atime
			case 'C':
				t = si.ctime
			}
			t = t.In(f.c.dateLocation())
			if i+1 >= len(format) {
				b.WriteString(format[i-len(spec)-1:])
				continue
			}
			i++
			str(findTime(t, format[i]))
		default:
			// GNU find prints an unknown directive as it is.
			b.WriteString(format[j-len(spec)-1 : j+1])
		}
	}
	return b.String()
}

// findTime formats one %T (%A, %C) field of -printf, as strftime would.
func findTime(t time.Time, k byte) string {
	switch k {
	case '@':
		return fmt.Sprintf("%d.%010d", t.Unix(), t.Nanosecond()*10)
	case 'Y':
		return t.Format("2006")
	case 'm':
		return t.Format("01")
	case 'd':
		return t.Format("02")
	case 'H':
		return t.Format("15")
	case 'M':
		return t.Format("04")
	case 'S':
		return fmt.Sprintf("%02d.%010d", t.Second(), t.Nanosecond()*10)
	case 'T':
		return fmt.Sprintf("%s.%010d", t.Format("15:04:05"), t.Nanosecond()*10)
	case '+':
		return fmt.Sprintf("%s+%s.%010d", t.Format("2006-01-02"), t.Format("15:04:05"), t.Nanosecond()*10)
	case 'F':
		return t.Format("2006-01-02")
	case 'D':
		return t.Format("01/02/06")
	case 'y':
		return t.Format("06")
	case 'b', 'h':
		return t.Format("Jan")
	case 'B':
		return t.Format("January")
	case 'a':
		return t.Format("Mon")
	case 'A':
		return t.Format("Monday")
	case 'e':
		return t.Format("_2")
	case 'j':
		return fmt.Sprintf("%03d", t.YearDay())
	case 'k':
		return fmt.Sprintf("%2d", t.Hour())
	case 'I':
		return t.Format("03")
	case 'p':
		return t.Format("PM")
	case 'Z':
		return t.Format("MST")
	case 'z':
		return t.Format("-0700")
	case 's':
		return strconv.FormatInt(t.Unix(), 10)
	case 'r':
		return t.Format("03:04:05 PM")
	case 'c':
		return t.Format("Mon Jan _2 15:04:05 2006")
	case 'x':
		return t.Format("01/02/06")
	case 'X':
		return t.Format("15:04:05")
	}
	return "%T" + string(k)
}

// walk evaluates the expression on n and what is below it, children in
// name order; with -depth (or -delete) a directory after its contents.
func (f *finder) walk(n *findNode) {
	c := f.c
	if c.ctx.Err() != nil || f.quit {
		return
	}
	visit := n.depth >= f.minDepth
	if visit && !f.depthFirst {
		f.expr(n)
	}
	if n.info.IsDir() && !n.prune && (f.maxDepth < 0 || n.depth < f.maxDepth) && !f.quit {
		infos, err := c.sh.fs.readDir(c.ctx, n.rel)
		if err != nil {
			c.errorf("'%s': %s", n.shown, errText(err))
			f.status = 1
		}
		for _, sub := range infos {
			if c.stopped() || f.quit {
				break
			}
			f.walk(&findNode{
				shown: strings.TrimSuffix(n.shown, "/") + "/" + sub.Name(),
				root:  n.root,
				rel:   joinRel(n.rel, sub.Name()),
				info:  sub,
				depth: n.depth + 1,
			})
		}
	}
	if visit && f.depthFirst && !f.quit && c.ctx.Err() == nil {
		f.expr(n)
	}
}

// shownDest is the destination of src as cp and mv print it: as the user
// typed it, with the source's name after it when it is a directory.
func shownDest(dst target, intoDir bool, src target) string {
	if !intoDir {
		return dst.arg
	}
	return strings.TrimSuffix(dst.arg, "/") + "/" + path.Base(src.abs)
}
