package shell

import (
	"bufio"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

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
