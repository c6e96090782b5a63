package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// diffOpts are the options of one diff run.
type diffOpts struct {
	format     byte // 'n' normal, 'u' unified, 'c' context, 'q' brief
	context    int
	identical  bool // -s
	ignoreCase bool
	allSpace   bool // -w
	spaceChg   bool // -b
	trailSpace bool // -Z
	blankLines bool // -B
	stripCR    bool
	recursive  bool
	newFile    bool // -N
	text       bool // -a
	labels     []string
	switches   string // the option words as given, for "diff -r a/x b/x"
}

// diffText is one side of a comparison: its lines (without their
// newline) and whether the last one lacked its newline.
type diffText struct {
	name  string // as shown in messages and headers
	label string // the header name (--label) or name
	mtime time.Time
	lines []string
	noEOL bool
	bin   bool
}

// The changes of a comparison, as ranges [a0,a1) of the old lines replaced
// by [b0,b1) of the new ones.
type diffChange struct{ a0, a1, b0, b1 int }

func cmdDiff(c *call) int {
	var o diffOpts
	var args []string
	// Long options with optional values do not fit getopt: rewrite them
	// into their short forms first, and remember the switches for the
	// headers of recursive comparisons.
	var switches []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a == "--" {
			args = append(args, c.args[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			switches = append(switches, a)
		}
		switch {
		case a == "--unified":
			a = "-u"
		case strings.HasPrefix(a, "--unified="):
			a = "-U" + a[len("--unified="):]
		case a == "--context":
			a = "-c"
		case strings.HasPrefix(a, "--context="):
			a = "-C" + a[len("--context="):]
		case a == "-y" || a == "--side-by-side":
			c.errorf("side-by-side output (-y) is not supported here; use -u")
			return 2
		case strings.HasPrefix(a, "-") && len(a) > 1 && a[1] != '-' && (a[1] == 'U' || a[1] == 'C' || a[1] == 'L') && len(a) == 2 && i+1 < len(c.args):
			// -U N: keep the value with its option.
			switches = append(switches, c.args[i+1])
			args = append(args, a, c.args[i+1])
			i++
			continue
		}
		args = append(args, a)
	}
	long := map[string]byte{
		"brief": 'q', "report-identical-files": 's', "ignore-case": 'i',
		"ignore-all-space": 'w', "ignore-space-change": 'b', "ignore-blank-lines": 'B',
		"ignore-trailing-space": 'Z', "recursive": 'r', "new-file": 'N', "text": 'a',
		"label": 'L', "strip-trailing-cr": 1, "normal": 2, "expand-tabs": 0,
		"minimal": 0, "speed-large-files": 0, "initial-tab": 0,
	}
	op, operands, ok := c.getopt(args, "qsiwbBZrNuacdtTpE\x01\x02", "UCL", long)
	if !ok {
		fmt.Fprintf(c.stderr, "diff: Try 'diff --help' for more information.\n")
		return 2
	}
	o.format = 'n'
	o.context = 3
	if op.has('u') {
		o.format = 'u'
	}
	if op.has('c') {
		o.format = 'c'
	}
	for _, f := range []byte{'U', 'C'} {
		if v, ok := op.vals[f]; ok {
			n, err := strconv.Atoi(v[len(v)-1])
			if err != nil || n < 0 {
				c.errorf("invalid context length '%s'", v[len(v)-1])
				fmt.Fprintf(c.stderr, "diff: Try 'diff --help' for more information.\n")
				return 2
			}
			o.context = n
			o.format = strings.ToLower(string(f))[0]
		}
	}
	if op.has('q') {
		o.format = 'q'
	}
	o.identical = op.has('s')
	o.ignoreCase = op.has('i')
	o.allSpace = op.has('w')
	o.spaceChg = op.has('b')
	o.trailSpace = op.has('Z')
	o.blankLines = op.has('B')
	o.stripCR = op.has(1)
	o.recursive = op.has('r')
	o.newFile = op.has('N')
	o.text = op.has('a')
	o.labels = op.vals['L']
	o.switches = strings.Join(switches, " ")
	switch {
	case len(operands) == 0:
		c.errorf("missing operand after 'diff'")
	case len(operands) == 1:
		c.errorf("missing operand after '%s'", operands[0])
	case len(operands) > 2:
		c.errorf("extra operand '%s'", operands[2])
	}
	if len(operands) != 2 {
		fmt.Fprintf(c.stderr, "diff: Try 'diff --help' for more information.\n")
		return 2
	}
	w := c.out()
	d := &differ{c: c, o: o, w: w}
	status := d.paths(operands[0], operands[1], true)
	return c.flush(w, status)
}

// differ runs one diff command.
type differ struct {
	c *call
	o diffOpts
	w *bufio.Writer
}

// kind describes p: 'd' a directory, 'f' anything readable as a file, 0
// missing; err is set for a missing path or one that cannot be described.
func (d *differ) kind(p string) (byte, fs.FileInfo, error) {
	if p == "-" {
		return 'f', nil, nil
	}
	info, err := d.c.stat(p)
	if err != nil {
		return 0, nil, err
	}
	if info.IsDir() {
		return 'd', info, nil
	}
	return 'f', info, nil
}

// paths compares two operands, files or directories.
func (d *differ) paths(a, b string, top bool) int {
	if d.c.stopped() {
		return 2
	}
	ka, _, erra := d.kind(a)
	kb, _, errb := d.kind(b)
	if top && erra == nil && errb == nil && ka != kb {
		// "diff file dir" compares file with dir/file.
		if ka == 'd' {
			if b == "-" {
				d.c.errorf("cannot compare '-' to a directory")
				return 2
			}
			a = path.Join(a, path.Base(b))
			ka, _, erra = d.kind(a)
		} else {
			if a == "-" {
				d.c.errorf("cannot compare '-' to a directory")
				return 2
			}
			b = path.Join(b, path.Base(a))
			kb, _, errb = d.kind(b)
		}
	}
	missingOK := func(err error) bool { return d.o.newFile && errors.Is(err, fs.ErrNotExist) }
	switch {
	case erra != nil && !(missingOK(erra) && errb == nil):
		return d.c.fail(2, a, erra)
	case errb != nil && !(missingOK(errb) && erra == nil):
		return d.c.fail(2, b, errb)
	}
	if erra != nil {
		ka = kb
	}
	if errb != nil {
		kb = ka
	}
	switch {
	case ka == 'd' && kb == 'd':
		return d.dirs(a, b, erra != nil, errb != nil)
	case ka == 'd' || kb == 'd':
		ta, tb := "directory", "regular file"
		if kb == 'd' {
			ta, tb = tb, ta
		}
		if ta == "regular file" && d.emptyFile(a) {
			ta = "regular empty file"
		}
		if tb == "regular file" && d.emptyFile(b) {
			tb = "regular empty file"
		}
		fmt.Fprintf(d.w, "File %s is a %s while file %s is a %s\n", a, ta, b, tb)
		return 1
	}
	return d.files(a, b, erra != nil, errb != nil, !top)
}

func (d *differ) emptyFile(p string) bool {
	info, err := d.c.stat(p)
	return err == nil && info.Size() == 0
}

// dirs compares two directories entry by entry; absent marks a side that
// does not exist (-N).
func (d *differ) dirs(a, b string, absentA, absentB bool) int {
	list := func(p string, absent bool) ([]fs.FileInfo, error) {
		if absent {
			return nil, nil
		}
		return d.c.readDir(p)
	}
	ea, err := list(a, absentA)
	if err != nil {
		return d.c.fail(2, a, err)
	}
	eb, err := list(b, absentB)
	if err != nil {
		return d.c.fail(2, b, err)
	}
	status := 0
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		if d.c.stopped() {
			return 2
		}
		var name string
		var inA, inB bool
		switch {
		case j >= len(eb) || i < len(ea) && ea[i].Name() < eb[j].Name():
			name, inA = ea[i].Name(), true
			i++
		case i >= len(ea) || eb[j].Name() < ea[i].Name():
			name, inB = eb[j].Name(), true
			j++
		default:
			name, inA, inB = ea[i].Name(), true, true
			i++
			j++
		}
		if strings.HasPrefix(name, workspaceTmpPrefix) {
			continue
		}
		pa, pb := path.Join(a, name), path.Join(b, name)
		var s int
		switch {
		case inA && inB:
			ka, _, _ := d.kind(pa)
			kb, _, _ := d.kind(pb)
			if ka == 'd' && kb == 'd' && !d.o.recursive {
				fmt.Fprintf(d.w, "Common subdirectories: %s and %s\n", pa, pb)
				continue
			}
			s = d.paths(pa, pb, false)
		case d.o.newFile:
			s = d.paths(pa, pb, false)
		case inA:
			fmt.Fprintf(d.w, "Only in %s: %s\n", a, name)
			s = 1
		default:
			fmt.Fprintf(d.w, "Only in %s: %s\n", b, name)
			s = 1
		}
		status = max(status, s)
	}
	return status
}

// read loads one side of a comparison; absent gives an empty file (-N).
func (d *differ) read(p string, absent bool) (*diffText, error) {
	t := &diffText{name: p, label: p}
	if absent {
		t.mtime = time.Unix(0, 0)
		return t, nil
	}
	if p == "-" {
		t.mtime = time.Now()
	} else if info, err := d.c.stat(p); err == nil {
		t.mtime = info.ModTime()
	}
	if t.mtime.IsZero() {
		t.mtime = time.Unix(0, 0)
	}
	r, done, err := d.c.openInput(p)
	if err != nil {
		return nil, err
	}
	data, err := d.c.readAll(r)
	done()
	if err != nil {
		return nil, err
	}
	t.bin = !d.o.text && bytes.IndexByte(data[:min(len(data), 32<<10)], 0) >= 0
	if len(data) > 0 {
		if data[len(data)-1] != '\n' {
			t.noEOL = true
		} else {
			data = data[:len(data)-1]
		}
		t.lines = strings.Split(string(data), "\n")
	}
	return t, nil
}

// files compares two files; sub marks a comparison within directories,
// which gets a "diff ..." line before its output.
func (d *differ) files(a, b string, absentA, absentB, sub bool) int {
	ta, err := d.read(a, absentA)
	if err != nil {
		return d.c.fail(2, a, err)
	}
	tb, err := d.read(b, absentB)
	if err != nil {
		return d.c.fail(2, b, err)
	}
	if len(d.o.labels) > 0 {
		ta.label = d.o.labels[0]
	}
	if len(d.o.labels) > 1 {
		tb.label = d.o.labels[1]
	}
	if ta.bin || tb.bin {
		if slicesEqualStrings(ta.lines, tb.lines) && ta.noEOL == tb.noEOL {
			return d.same(a, b)
		}
		if d.o.format == 'q' {
			fmt.Fprintf(d.w, "Files %s and %s differ\n", a, b)
		} else {
			fmt.Fprintf(d.w, "Binary files %s and %s differ\n", a, b)
		}
		return 1
	}
	changes := diffLines(ta, tb, d.o, d.c.stopped)
	if d.c.stopped() {
		return 2
	}
	if len(changes) == 0 {
		return d.same(a, b)
	}
	if d.o.format == 'q' {
		fmt.Fprintf(d.w, "Files %s and %s differ\n", a, b)
		return 1
	}
	if sub {
		sw := ""
		if d.o.switches != "" {
			sw = " " + d.o.switches
		}
		fmt.Fprintf(d.w, "diff%s %s %s\n", sw, a, b)
	}
	switch d.o.format {
	case 'u':
		diffUnified(d.w, ta, tb, changes, d.o.context)
	case 'c':
		diffContext(d.w, ta, tb, changes, d.o.context)
	default:
		diffNormal(d.w, ta, tb, changes)
	}
	return 1
}

func (d *differ) same(a, b string) int {
	if d.o.identical {
		fmt.Fprintf(d.w, "Files %s and %s are identical\n", a, b)
	}
	return 0
}

func slicesEqualStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// diffKey is the form of a line that comparisons look at, after the
// options that ignore case and white space.
func diffKey(line string, o diffOpts) string {
	if o.stripCR {
		line = strings.TrimSuffix(line, "\r")
	}
	if o.ignoreCase {
		line = strings.ToLower(line)
	}
	switch {
	case o.allSpace:
		line = strings.Map(func(r rune) rune {
			if isDiffSpace(r) {
				return -1
			}
			return r
		}, line)
	case o.spaceChg:
		// A run of blanks counts as one; blanks at the end as none.
		lead := len(line) > 0 && isDiffSpace(rune(line[0]))
		line = strings.Join(strings.FieldsFunc(line, isDiffSpace), " ")
		if lead && line != "" {
			line = " " + line
		}
	case o.trailSpace:
		line = strings.TrimRight(line, " \t\v\f\r")
	}
	return line
}

func isDiffSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\v' || r == '\f' || r == '\r'
}

// diffLines returns the changes that turn a into b.
func diffLines(a, b *diffText, o diffOpts, stop func() bool) []diffChange {
	ids := map[string]int{}
	id := func(t *diffText) []int {
		out := make([]int, len(t.lines))
		for i, l := range t.lines {
			// A last line without its newline differs from the same
			// line with one.
			k := "\n" + diffKey(l, o)
			if i == len(t.lines)-1 && t.noEOL {
				k = "." + k[1:]
			}
			n, ok := ids[k]
			if !ok {
				n = len(ids)
				ids[k] = n
			}
			out[i] = n
		}
		return out
	}
	ka, kb := id(a), id(b)
	chA, chB := myersDiff(ka, kb, stop)
	var changes []diffChange
	i, j := 0, 0
	for i < len(ka) || j < len(kb) {
		if i < len(ka) && j < len(kb) && !chA[i] && !chB[j] {
			i++
			j++
			continue
		}
		ch := diffChange{a0: i, b0: j}
		for i < len(ka) && chA[i] {
			i++
		}
		for j < len(kb) && chB[j] {
			j++
		}
		if i == ch.a0 && j == ch.b0 {
			// Unmatched tails (cannot happen with a consistent
			// marking): the rest is one change.
			i, j = len(ka), len(kb)
		}
		ch.a1, ch.b1 = i, j
		if o.blankLines && diffAllBlank(a.lines[ch.a0:ch.a1], o) && diffAllBlank(b.lines[ch.b0:ch.b1], o) {
			continue
		}
		changes = append(changes, ch)
	}
	return changes
}

func diffAllBlank(lines []string, o diffOpts) bool {
	for _, l := range lines {
		if strings.TrimRight(l, " \t\r\v\f") != "" || l != "" && !o.allSpace && !o.spaceChg && !o.trailSpace {
			return false
		}
	}
	return true
}

// The line comparison is Myers' O(ND) algorithm in linear space ("An O(ND)
// Difference Algorithm and Its Variations", 1986, section 4b): find the
// middle of an optimal edit path, split there and go on with both halves.
// A split that would search more than diffMaxCost diagonals settles for
// the furthest point reached (as GNU diff's heuristic does), and once
// diffMaxWork steps are spent the rest is marked changed whole: the output
// is then still a correct diff, only not a minimal one, and the time a
// command may take stays bounded whatever the inputs.
const (
	diffMaxCost = 2048
	diffMaxWork = 200_000_000
)

type myers struct {
	a, b   []int
	chA    []bool
	chB    []bool
	vf, vb []int
	work   int
	stop   func() bool
}

// myersDiff returns, for each element of a and of b, whether it is
// deleted or inserted.
func myersDiff(a, b []int, stop func() bool) (chA, chB []bool) {
	size := 2*diffMaxCost + 3
	m := &myers{a: a, b: b, chA: make([]bool, len(a)), chB: make([]bool, len(b)),
		vf: make([]int, size), vb: make([]int, size), stop: stop}
	type box struct{ aLo, aHi, bLo, bHi int }
	todo := []box{{0, len(a), 0, len(b)}}
	for len(todo) > 0 {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		aLo, aHi, bLo, bHi := x.aLo, x.aHi, x.bLo, x.bHi
		for aLo < aHi && bLo < bHi && a[aLo] == b[bLo] {
			aLo++
			bLo++
		}
		for aLo < aHi && bLo < bHi && a[aHi-1] == b[bHi-1] {
			aHi--
			bHi--
		}
		if aLo == aHi || bLo == bHi || m.work > diffMaxWork || m.stop() {
			m.markAll(aLo, aHi, bLo, bHi)
			continue
		}
		sx, sy := m.split(aLo, aHi, bLo, bHi)
		if sx == aLo && sy == bLo || sx == aHi && sy == bHi {
			m.markAll(aLo, aHi, bLo, bHi)
			continue
		}
		todo = append(todo, box{sx, aHi, sy, bHi}, box{aLo, sx, bLo, sy})
	}
	return m.chA, m.chB
}

func (m *myers) markAll(aLo, aHi, bLo, bHi int) {
	for i := aLo; i < aHi; i++ {
		m.chA[i] = true
	}
	for j := bLo; j < bHi; j++ {
		m.chB[j] = true
	}
}

// split returns a point on an optimal (or, past diffMaxCost, a good) path
// through the box, in absolute coordinates.
func (m *myers) split(aLo, aHi, bLo, bHi int) (int, int) {
	a, b := m.a[aLo:aHi], m.b[bLo:bHi]
	n, mm := len(a), len(b)
	delta := n - mm
	odd := delta&1 != 0
	off := diffMaxCost + 1
	// vf[off+k] is the furthest x on forward diagonal k (k = x-y); vb[off+k-delta]
	// the smallest x on diagonal k reached from the end.
	vf, vb := m.vf, m.vb
	vf[off+1] = 0
	vb[off+1] = n + 1
	maxD := min((n+mm+1)/2, diffMaxCost)
	done := -1 // the last round completed
	for d := 0; d <= maxD; d++ {
		if d&63 == 63 && m.stop() {
			break
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && vf[off+k-1] < vf[off+k+1] {
				x = vf[off+k+1]
			} else {
				x = vf[off+k-1] + 1
			}
			y := x - k
			x0 := x
			for x < n && y < mm && a[x] == b[y] {
				x++
				y++
			}
			m.work += 1 + x - x0
			vf[off+k] = x
			if odd && k >= delta-(d-1) && k <= delta+(d-1) && vb[off+k-delta] <= x {
				return aLo + x, bLo + y
			}
		}
		for k := delta - d; k <= delta+d; k += 2 {
			kk := off + k - delta
			// Diagonal k is reached from k+1 by a move left (x-1), from
			// k-1 by a move up (x unchanged); take the smaller x.
			var x int
			if k == delta-d || k != delta+d && vb[kk+1]-1 < vb[kk-1] {
				x = vb[kk+1] - 1
			} else {
				x = vb[kk-1]
			}
			y := x - k
			x0 := x
			for x > 0 && y > 0 && a[x-1] == b[y-1] {
				x--
				y--
			}
			m.work += 1 + x0 - x
			vb[kk] = x
			if !odd && k >= -d && k <= d && vf[off+k] >= x {
				return aLo + x, bLo + y
			}
		}
		done = d
	}
	// Too costly: take the forward point that got furthest.
	best, bx, by := -1, 0, 0
	for k := -done; k <= done && done >= 0; k += 2 {
		x := min(vf[off+k], n)
		y := x - k
		if x < 0 || y < 0 || y > mm {
			continue
		}
		if x+y > best {
			best, bx, by = x+y, x, y
		}
	}
	if best <= 0 || bx == n && by == mm {
		bx, by = n/2, mm/2
	}
	return aLo + bx, bLo + by
}

// The output formats.

func diffRange(lo, hi int, sep string) string {
	switch hi - lo {
	case 0:
		return strconv.Itoa(lo)
	case 1:
		return strconv.Itoa(lo + 1)
	}
	return strconv.Itoa(lo+1) + sep + strconv.Itoa(hi)
}

func diffLine(w *bufio.Writer, prefix string, t *diffText, i int) {
	w.WriteString(prefix)
	w.WriteString(t.lines[i])
	w.WriteByte('\n')
	if t.noEOL && i == len(t.lines)-1 {
		w.WriteString("\\ No newline at end of file\n")
	}
}

func diffNormal(w *bufio.Writer, a, b *diffText, changes []diffChange) {
	for _, ch := range changes {
		switch {
		case ch.b0 == ch.b1:
			fmt.Fprintf(w, "%sd%d\n", diffRange(ch.a0, ch.a1, ","), ch.b0)
		case ch.a0 == ch.a1:
			fmt.Fprintf(w, "%da%s\n", ch.a0, diffRange(ch.b0, ch.b1, ","))
		default:
			fmt.Fprintf(w, "%sc%s\n", diffRange(ch.a0, ch.a1, ","), diffRange(ch.b0, ch.b1, ","))
		}
		for i := ch.a0; i < ch.a1; i++ {
			diffLine(w, "< ", a, i)
		}
		if ch.a0 < ch.a1 && ch.b0 < ch.b1 {
			w.WriteString("---\n")
		}
		for j := ch.b0; j < ch.b1; j++ {
			diffLine(w, "> ", b, j)
		}
	}
}

// diffTime formats a modification time as GNU diff does.
func diffTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.000000000 -0700")
}

// diffHunks groups changes less than 2*ctx+1 unchanged lines apart.
func diffHunks(changes []diffChange, ctx int) [][]diffChange {
	var hunks [][]diffChange
	for i, ch := range changes {
		if i > 0 && ch.a0-changes[i-1].a1 <= 2*ctx {
			hunks[len(hunks)-1] = append(hunks[len(hunks)-1], ch)
			continue
		}
		hunks = append(hunks, []diffChange{ch})
	}
	return hunks
}

// hunkBounds returns the lines a hunk shows of each side.
func hunkBounds(h []diffChange, ctx int, na, nb int) (a0, a1, b0, b1 int) {
	first, last := h[0], h[len(h)-1]
	a0 = max(0, first.a0-ctx)
	b0 = first.b0 - (first.a0 - a0)
	a1 = min(na, last.a1+ctx)
	b1 = last.b1 + (a1 - last.a1)
	return
}

func unifiedRange(lo, hi int) string {
	switch hi - lo {
	case 0:
		return strconv.Itoa(lo) + ",0"
	case 1:
		return strconv.Itoa(lo + 1)
	}
	return strconv.Itoa(lo+1) + "," + strconv.Itoa(hi-lo)
}

func diffUnified(w *bufio.Writer, a, b *diffText, changes []diffChange, ctx int) {
	fmt.Fprintf(w, "--- %s\t%s\n+++ %s\t%s\n", a.label, diffTime(a.mtime), b.label, diffTime(b.mtime))
	for _, h := range diffHunks(changes, ctx) {
		a0, a1, b0, b1 := hunkBounds(h, ctx, len(a.lines), len(b.lines))
		fmt.Fprintf(w, "@@ -%s +%s @@\n", unifiedRange(a0, a1), unifiedRange(b0, b1))
		i := a0
		for _, ch := range h {
			for ; i < ch.a0; i++ {
				diffLine(w, " ", a, i)
			}
			for ; i < ch.a1; i++ {
				diffLine(w, "-", a, i)
			}
			for j := ch.b0; j < ch.b1; j++ {
				diffLine(w, "+", b, j)
			}
		}
		for ; i < a1; i++ {
			diffLine(w, " ", a, i)
		}
	}
}

func diffContext(w *bufio.Writer, a, b *diffText, changes []diffChange, ctx int) {
	fmt.Fprintf(w, "*** %s\t%s\n--- %s\t%s\n", a.label, diffTime(a.mtime), b.label, diffTime(b.mtime))
	for _, h := range diffHunks(changes, ctx) {
		a0, a1, b0, b1 := hunkBounds(h, ctx, len(a.lines), len(b.lines))
		w.WriteString("***************\n")
		fmt.Fprintf(w, "*** %s ****\n", diffRange(a0, a1, ","))
		deletes, inserts := false, false
		for _, ch := range h {
			deletes = deletes || ch.a1 > ch.a0
			inserts = inserts || ch.b1 > ch.b0
		}
		mark := func(ch diffChange, old bool) string {
			switch {
			case ch.a1 > ch.a0 && ch.b1 > ch.b0:
				return "! "
			case old:
				return "- "
			}
			return "+ "
		}
		if deletes {
			i := a0
			for _, ch := range h {
				for ; i < ch.a0; i++ {
					diffLine(w, "  ", a, i)
				}
				for ; i < ch.a1; i++ {
					diffLine(w, mark(ch, true), a, i)
				}
			}
			for ; i < a1; i++ {
				diffLine(w, "  ", a, i)
			}
		}
		fmt.Fprintf(w, "--- %s ----\n", diffRange(b0, b1, ","))
		if inserts {
			j := b0
			for _, ch := range h {
				for ; j < ch.b0; j++ {
					diffLine(w, "  ", b, j)
				}
				for ; j < ch.b1; j++ {
					diffLine(w, mark(ch, false), b, j)
				}
			}
			for ; j < b1; j++ {
				diffLine(w, "  ", b, j)
			}
		}
	}
}
