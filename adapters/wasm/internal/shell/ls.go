package shell

import (
	"bufio"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// lsEntry is a file ls shows.
type lsEntry struct {
	name string      // as shown
	rel  string      // workspace-relative, "" for a device
	info fs.FileInfo // nil for a directory's entry when the listing needs only names (namesOnly)
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
	listed, err := l.entries(d)
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
	entries = append(entries, listed...)
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

// entries reads the directory d's entries that the listing shows (hidden
// ones with -a or -A), described only if it needs more than their names
// (namesOnly).
func (l *lister) entries(d lsEntry) ([]lsEntry, error) {
	var out []lsEntry
	add := func(name string, info fs.FileInfo) {
		if !strings.HasPrefix(name, ".") || l.o.has('a') || l.o.has('A') {
			out = append(out, lsEntry{name: name, rel: joinRel(d.rel, name), info: info})
		}
	}
	if l.namesOnly() {
		names, err := l.c.sh.fs.readDirNames(l.c.ctx, d.rel)
		for _, name := range names {
			add(name, nil)
		}
		return out, err
	}
	infos, err := l.c.sh.fs.readDir(l.c.ctx, d.rel)
	for _, info := range infos {
		add(info.Name(), info)
	}
	return out, err
}

// namesOnly reports whether the listing needs no more of a directory's
// entries than their names: no long format, no sorting by size or time,
// no type suffixes, no recursion. Its entries then have no info.
func (l *lister) namesOnly() bool {
	return !l.o.has('l') && !l.o.has('S') && !l.o.has('t') && !l.o.has('F') && !l.o.has('p') && !l.o.has('R')
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
	if !l.o.has('F') && !l.o.has('p') {
		return "" // and e may have no info (namesOnly)
	}
	m := e.info.Mode()
	switch {
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
