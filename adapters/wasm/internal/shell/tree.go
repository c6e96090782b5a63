package shell

import (
	"bufio"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

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
