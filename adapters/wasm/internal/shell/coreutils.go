package shell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Smaller coreutils (and util-linux's rev and column), as GNU's behave
// for the flags models use: tac, rev, nl, fold, comm, join, expand,
// unexpand, printenv, expr, od, cksum, split and column.

func init() {
	commands["tac"] = cmdTac
	commands["rev"] = cmdRev
	commands["nl"] = cmdNl
	commands["fold"] = cmdFold
	commands["comm"] = cmdComm
	commands["join"] = cmdJoin
	commands["expand"] = cmdExpand
	commands["unexpand"] = cmdUnexpand
	commands["printenv"] = cmdPrintenv
	commands["expr"] = cmdExpr
	commands["od"] = cmdOd
	commands["cksum"] = cmdCksum
	commands["split"] = cmdSplit
	commands["column"] = cmdColumn
}

// eachLine calls fn for every line of the inputs (stdin when there are
// none), as the inputs are read; a missing input is reported and skipped.
// fn's error is a write error and ends the command. It returns the status.
func (c *call) eachLine(files []string, fn func(line []byte, nl bool) error) int {
	if len(files) == 0 {
		files = []string{"-"}
	}
	status := 0
	for _, f := range files {
		if c.stopped() {
			return 1
		}
		r, done, err := c.openInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		lr := c.lines(r)
		for n := 0; ; n++ {
			if n%1024 == 1023 && c.stopped() {
				done()
				return 1
			}
			line, nl, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				status = c.fail(1, f, err)
				break
			}
			if err := fn(line, nl); err != nil {
				done()
				return c.writeFailed(err)
			}
		}
		done()
	}
	return status
}

// readInput reads the operand f whole (capped at MaxFileBytes).
func (c *call) readInput(f string) ([]byte, error) {
	r, done, err := c.openInput(f)
	if err != nil {
		return nil, err
	}
	defer done()
	return c.readAll(r)
}

// tac prints the lines of each file, last first. A last line without a
// newline is printed as it is, so it joins the line printed after it (as
// GNU's does).
func cmdTac(c *call) int {
	_, files, ok := c.getopt(c.args, "", "", nil)
	if !ok {
		return 1
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	w := c.out()
	status := 0
	for _, f := range files {
		if c.stopped() {
			return 1
		}
		data, err := c.readInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		end := len(data)
		for end > 0 {
			start := bytes.LastIndexByte(data[:end-1], '\n') + 1
			if _, err := w.Write(data[start:end]); err != nil {
				return c.writeFailed(err)
			}
			end = start
		}
	}
	return c.flush(w, status)
}

// rev reverses the characters of every line.
func cmdRev(c *call) int {
	_, files, ok := c.getopt(c.args, "", "", nil)
	if !ok {
		return 1
	}
	w := c.out()
	var buf []byte
	status := c.eachLine(files, func(line []byte, nl bool) error {
		buf = buf[:0]
		for i := len(line); i > 0; {
			_, n := utf8.DecodeLastRune(line[:i])
			buf = append(buf, line[i-n:i]...)
			i -= n
		}
		if nl {
			buf = append(buf, '\n')
		}
		_, err := w.Write(buf)
		return err
	})
	return c.flush(w, status)
}

// nl numbers lines: -b a (all), t (non-empty, the default), n (none) or
// pBRE; -n ln, rn or rz; -w width; -s separator; -v first; -i increment.
// Section delimiters (\:\:\:) are not read.
func cmdNl(c *call) int {
	o, files, ok := c.getopt(c.args, "", "bnwsvi", map[string]byte{
		"body-numbering": 'b', "number-format": 'n', "number-width": 'w',
		"number-separator": 's', "starting-line-number": 'v', "line-increment": 'i'})
	if !ok {
		return 1
	}
	style := o.last('b', "t")
	var re *regex
	switch {
	case style == "a" || style == "t" || style == "n":
	case strings.HasPrefix(style, "p"):
		var err error
		if re, err = compileRegex([]string{style[1:]}, reSyntax{}, c.reTimeout()); err != nil {
			c.errorf("%s", err)
			return 1
		}
	default:
		c.errorf("invalid body numbering style: '%s'", style)
		return 1
	}
	format := o.last('n', "rn")
	if format != "ln" && format != "rn" && format != "rz" {
		c.errorf("invalid line numbering format: '%s'", format)
		return 1
	}
	width, err := strconv.Atoi(o.last('w', "6"))
	if err != nil || width < 1 || width > 1<<16 {
		c.errorf("invalid line number field width: '%s'", o.last('w', "6"))
		return 1
	}
	num, err1 := strconv.ParseInt(o.last('v', "1"), 10, 64)
	incr, err2 := strconv.ParseInt(o.last('i', "1"), 10, 64)
	if err1 != nil || err2 != nil {
		c.errorf("invalid line number: '%s'", o.last('v', o.last('i', "")))
		return 1
	}
	sep := o.last('s', "\t")
	blank := strings.Repeat(" ", width+len(sep))
	w := c.out()
	var rerr error
	status := c.eachLine(files, func(line []byte, nl bool) error {
		number := false
		switch {
		case style == "a":
			number = true
		case style == "t":
			number = len(line) > 0
		case re != nil:
			number, rerr = re.match(line)
		}
		if number {
			s := strconv.FormatInt(num, 10)
			switch format {
			case "ln":
				fmt.Fprintf(w, "%-*s", width, s)
			case "rn":
				fmt.Fprintf(w, "%*s", width, s)
			default:
				if strings.HasPrefix(s, "-") {
					fmt.Fprintf(w, "-%0*s", width-1, s[1:])
				} else {
					fmt.Fprintf(w, "%0*s", width, s)
				}
			}
			w.WriteString(sep)
			num += incr
		} else {
			// GNU pads an unnumbered line as if it had a number.
			w.WriteString(blank)
		}
		w.Write(line)
		if nl {
			return w.WriteByte('\n')
		}
		return nil
	})
	if rerr != nil {
		c.errorf("%s", rerr)
		status = 1
	}
	return c.flush(w, status)
}

// foldColumn is the column after byte b at column col: fold (as GNU's, not
// multibyte-aware) moves back on a backspace, to 0 on a carriage return
// and to the next multiple of 8 on a tab, unless -b counts bytes.
func foldColumn(col int, b byte, bytes bool) int {
	if bytes {
		return col + 1
	}
	switch b {
	case '\b':
		return max(col-1, 0)
	case '\r':
		return 0
	case '\t':
		return col + 8 - col%8
	}
	return col + 1
}

// fold breaks lines longer than -w columns (80); -s breaks after the last
// blank that fits, -b counts bytes rather than columns.
func cmdFold(c *call) int {
	o, files, ok := c.getopt(digitOption(c.args, "-w"), "sb", "w", map[string]byte{"spaces": 's', "bytes": 'b', "width": 'w'})
	if !ok {
		return 1
	}
	width, err := strconv.Atoi(o.last('w', "80"))
	if err != nil || width < 1 {
		c.errorf("invalid number of columns: '%s'", o.last('w', "80"))
		return 1
	}
	spaces, byBytes := o.has('s'), o.has('b')
	w := c.out()
	var out []byte // the line being built: at most one output line
	status := c.eachLine(files, func(line []byte, nl bool) error {
		out = out[:0]
		col := 0
		for i := 0; i < len(line); {
			b := line[i]
			col = foldColumn(col, b, byBytes)
			if col <= width {
				out = append(out, b)
				i++
				continue
			}
			if spaces {
				if k := bytes.LastIndexAny(out, " \t"); k >= 0 {
					w.Write(out[:k+1])
					w.WriteByte('\n')
					out = append(out[:0], out[k+1:]...)
					col = 0
					for _, x := range out {
						col = foldColumn(col, x, byBytes)
					}
					continue // rescan b
				}
			}
			if len(out) == 0 {
				out = append(out, b)
				i++
				continue
			}
			w.Write(out)
			w.WriteByte('\n')
			out, col = out[:0], 0
		}
		w.Write(out)
		if nl {
			return w.WriteByte('\n')
		}
		_, err := w.Write(nil)
		return err
	})
	return c.flush(w, status)
}

// comm compares two sorted files: lines only in the first, only in the
// second, and in both, in three columns (-1, -2, -3 hide them). The order
// is not checked.
func cmdComm(c *call) int {
	o, files, ok := c.getopt(c.args, "123z", "D", map[string]byte{
		"check-order": 0, "nocheck-order": 0, "output-delimiter": 'D', "zero-terminated": 'z', "total": 'T'})
	if !ok {
		return 1
	}
	if len(files) != 2 {
		if len(files) < 2 {
			c.errorf("missing operand")
		} else {
			c.errorf("extra operand '%s'", files[2])
		}
		return 1
	}
	if o.has('z') {
		c.errorf("-z is not supported")
		return 1
	}
	delim := "\t"
	if v := o.vals['D']; len(v) > 0 {
		delim = v[len(v)-1]
	}
	a, err := c.readInput(files[0])
	if err != nil {
		return c.fail(1, files[0], err)
	}
	b, err := c.readInput(files[1])
	if err != nil {
		return c.fail(1, files[1], err)
	}
	la, lb := dataLines(a), dataLines(b)
	prefix := [3]string{}
	pre := ""
	for i := range 3 {
		prefix[i] = pre
		if !o.has(byte('1' + i)) {
			pre += delim
		}
	}
	w := c.out()
	var totals [3]int
	put := func(col int, line []byte) {
		totals[col]++
		if o.has(byte('1' + col)) {
			return
		}
		w.WriteString(prefix[col])
		w.Write(line)
		w.WriteByte('\n')
	}
	i, j := 0, 0
	for i < len(la) || j < len(lb) {
		if (i+j)%1024 == 1023 && c.stopped() {
			return 1
		}
		switch {
		case j >= len(lb) || i < len(la) && bytes.Compare(la[i], lb[j]) < 0:
			put(0, la[i])
			i++
		case i >= len(la) || bytes.Compare(la[i], lb[j]) > 0:
			put(1, lb[j])
			j++
		default:
			put(2, la[i])
			i, j = i+1, j+1
		}
	}
	if o.has('T') {
		fmt.Fprintf(w, "%d%s%d%s%d%stotal\n", totals[0], delim, totals[1], delim, totals[2], delim)
	}
	return c.flush(w, 0)
}

// dataLines splits data into lines without their newlines; a last line
// without one counts.
func dataLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// joinField is a field of join's -o list: file 1 or 2 and a field number
// (from 1), or file 0 for the join field.
type joinField struct{ file, field int }

// join joins the lines of two files sorted on their join fields.
func cmdJoin(c *call) int {
	args := slices.Clone(c.args)
	// The obsolete "-j1 N" and "-j2 N" are -1 N and -2 N.
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-j1" || args[i] == "-j2" {
			args[i] = "-" + args[i][2:]
		}
	}
	o, files, ok := c.getopt(args, "i", "12jtaveo", map[string]byte{
		"ignore-case": 'i', "check-order": 0, "nocheck-order": 0, "header": 'H'})
	if !ok {
		return 1
	}
	if len(files) != 2 {
		if len(files) < 2 {
			c.errorf("missing operand")
		} else {
			c.errorf("extra operand '%s'", files[2])
		}
		return 1
	}
	fieldNum := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			c.errorf("invalid field number: '%s'", s)
			return 0, false
		}
		return n - 1, true
	}
	keys := [2]int{0, 0}
	for _, f := range []byte("j12") {
		for _, v := range o.vals[f] {
			n, ok := fieldNum(v)
			if !ok {
				return 1
			}
			switch f {
			case 'j':
				keys = [2]int{n, n}
			case '1':
				keys[0] = n
			case '2':
				keys[1] = n
			}
		}
	}
	var sep byte
	ws := true
	if v := o.vals['t']; len(v) > 0 {
		t := v[len(v)-1]
		switch {
		case t == "":
			ws = false
			sep = '\n' // the whole line is the field
		case len(t) > 1 && t != `\0`:
			c.errorf("multi-character tab '%s'", t)
			return 1
		case t == `\0`:
			ws, sep = false, 0
		default:
			ws, sep = false, t[0]
		}
	}
	var unpaired [2]bool
	onlyUnpaired := false
	for _, f := range []byte("av") {
		for _, v := range o.vals[f] {
			if v != "1" && v != "2" {
				c.errorf("invalid field number: '%s'", v)
				return 1
			}
			unpaired[v[0]-'1'] = true
			if f == 'v' {
				onlyUnpaired = true
			}
		}
	}
	var outFields []joinField
	autoFormat := false
	for _, v := range o.vals['o'] {
		if v == "auto" {
			autoFormat = true
			continue
		}
		for _, s := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			if s == "0" {
				outFields = append(outFields, joinField{0, 0})
				continue
			}
			fl, fd, ok := strings.Cut(s, ".")
			n, err := strconv.Atoi(fd)
			if !ok || (fl != "1" && fl != "2") || err != nil || n < 1 {
				c.errorf("invalid field specifier: '%s'", s)
				return 1
			}
			outFields = append(outFields, joinField{int(fl[0] - '0'), n - 1})
		}
	}
	empty, hasEmpty := "", false
	if v := o.vals['e']; len(v) > 0 {
		empty, hasEmpty = v[len(v)-1], true
	}
	var data [2][][][]byte // lines split into fields
	for k, f := range files {
		if f == "-" && k == 1 && files[0] == "-" {
			c.errorf("both files cannot be standard input")
			return 1
		}
		b, err := c.readInput(f)
		if err != nil {
			return c.fail(1, f, err)
		}
		for _, line := range dataLines(b) {
			data[k] = append(data[k], joinSplit(line, ws, sep))
		}
	}
	if autoFormat && len(outFields) == 0 {
		for k := range 2 {
			if len(data[k]) > 0 {
				n := len(data[k][0])
				if k == 0 {
					outFields = append(outFields, joinField{0, 0})
				}
				for i := range n {
					if i != keys[k] {
						outFields = append(outFields, joinField{k + 1, i})
					}
				}
			}
		}
	}
	outSep := " "
	if !ws {
		outSep = string(sep)
	}
	key := func(k int, fields [][]byte) []byte {
		if keys[k] < len(fields) {
			return fields[keys[k]]
		}
		return nil
	}
	compare := func(a, b []byte) int {
		if o.has('i') {
			return bytes.Compare(bytes.ToLower(a), bytes.ToLower(b))
		}
		return bytes.Compare(a, b)
	}
	w := c.out()
	// print writes a line joining l1 and l2 (either may be nil: unpaired).
	print := func(l1, l2 [][]byte) {
		lines := [2][][]byte{l1, l2}
		var parts [][]byte
		if len(outFields) > 0 {
			for _, f := range outFields {
				var v []byte
				found := false
				switch {
				case f.file == 0:
					if l1 != nil {
						v, found = key(0, l1), keys[0] < len(l1)
					} else {
						v, found = key(1, l2), keys[1] < len(l2)
					}
				case lines[f.file-1] != nil && f.field < len(lines[f.file-1]):
					v, found = lines[f.file-1][f.field], true
				}
				if !found || len(v) == 0 && hasEmpty {
					v = []byte(empty)
				}
				parts = append(parts, v)
			}
		} else {
			var k int
			var kv []byte
			if l1 != nil {
				k, kv = 0, key(0, l1)
			} else {
				k, kv = 1, key(1, l2)
			}
			if len(kv) == 0 && hasEmpty {
				kv = []byte(empty)
			}
			parts = append(parts, kv)
			_ = k
			for i, l := range lines {
				for j, f := range l {
					if j != keys[i] {
						parts = append(parts, f)
					}
				}
			}
		}
		w.Write(bytes.Join(parts, []byte(outSep)))
		w.WriteByte('\n')
	}
	a, b := data[0], data[1]
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if (i+j)%1024 == 1023 && c.stopped() {
			return 1
		}
		var cmp int
		switch {
		case i >= len(a):
			cmp = 1
		case j >= len(b):
			cmp = -1
		default:
			cmp = compare(key(0, a[i]), key(1, b[j]))
		}
		switch {
		case cmp < 0:
			if unpaired[0] {
				print(a[i], nil)
			}
			i++
		case cmp > 0:
			if unpaired[1] {
				print(nil, b[j])
			}
			j++
		default:
			// Every pair of the runs of lines with this key.
			ei, ej := i+1, j+1
			for ei < len(a) && compare(key(0, a[ei]), key(0, a[i])) == 0 {
				ei++
			}
			for ej < len(b) && compare(key(1, b[ej]), key(1, b[j])) == 0 {
				ej++
			}
			if !onlyUnpaired {
				for x := i; x < ei; x++ {
					for y := j; y < ej; y++ {
						print(a[x], b[y])
					}
					if w.Buffered() > 0 && c.stopped() {
						return 1
					}
				}
			}
			i, j = ei, ej
		}
	}
	return c.flush(w, 0)
}

// joinSplit splits a line of join's input into fields: on sep, or with ws
// on runs of blanks, leading blanks ignored.
func joinSplit(line []byte, ws bool, sep byte) [][]byte {
	if ws {
		return bytes.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
	}
	if sep == '\n' {
		return [][]byte{line}
	}
	return bytes.Split(line, []byte{sep})
}

// tabStops parses the list of -t: one number (every N columns) or
// ascending positions, by commas or blanks; "/N" and "+N" as the last
// item repeat.
type tabStops struct {
	every int   // tabs every this many columns after the list
	stops []int // explicit positions
}

func parseTabStops(specs []string) (tabStops, error) {
	ts := tabStops{every: 8}
	var list []string
	for _, s := range specs {
		list = append(list, strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })...)
	}
	var stops []int
	for i, s := range list {
		repeat := strings.HasPrefix(s, "/") || strings.HasPrefix(s, "+")
		n, err := strconv.Atoi(strings.TrimLeft(s, "/+"))
		if err != nil || n < 0 || n > 1<<20 {
			return ts, fmt.Errorf("tab size contains invalid character(s): '%s'", s)
		}
		if repeat && i != len(list)-1 {
			return ts, fmt.Errorf("'%c' specifier only allowed with the last value", s[0])
		}
		if repeat {
			if n == 0 {
				return ts, errors.New("tab size cannot be 0")
			}
			ts.every = n
			ts.stops = stops
			return ts, nil
		}
		if len(stops) > 0 && n <= stops[len(stops)-1] {
			return ts, errors.New("tab sizes must be ascending")
		}
		stops = append(stops, n)
	}
	switch len(stops) {
	case 0:
	case 1:
		if stops[0] == 0 {
			return ts, errors.New("tab size cannot be 0")
		}
		ts.every = stops[0]
	default:
		ts.stops, ts.every = stops, 0
	}
	return ts, nil
}

// next returns the tab stop after col, or -1 past the last explicit one
// (where GNU's expand puts one space).
func (ts tabStops) next(col int) int {
	for _, s := range ts.stops {
		if s > col {
			return s
		}
	}
	if ts.every == 0 {
		return -1
	}
	if len(ts.stops) > 0 {
		base := ts.stops[len(ts.stops)-1]
		return base + ((col-base)/ts.every+1)*ts.every
	}
	return col + ts.every - col%ts.every
}

// digitOption accepts the obsolete "-4" for "flag 4" (expand -t 4, fold
// -w 4).
func digitOption(args []string, flag string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && isDigits(a[1:]) {
			out = append(out, flag, a[1:])
			continue
		}
		out = append(out, a)
	}
	return out
}

// expand turns tabs into spaces; -i only the tabs before the first
// non-blank.
func cmdExpand(c *call) int {
	o, files, ok := c.getopt(digitOption(c.args, "-t"), "i", "t", map[string]byte{"initial": 'i', "tabs": 't'})
	if !ok {
		return 1
	}
	ts, err := parseTabStops(o.vals['t'])
	if err != nil {
		c.errorf("%s", err)
		return 1
	}
	w := c.out()
	var buf []byte
	status := c.eachLine(files, func(line []byte, nl bool) error {
		buf = buf[:0]
		col, initial := 0, true
		for _, b := range line {
			switch {
			case b == '\t' && (initial || !o.has('i')):
				next := ts.next(col)
				if next < 0 {
					next = col + 1
				}
				for ; col < next; col++ {
					buf = append(buf, ' ')
				}
				continue
			case b == '\b':
				col = max(col-1, 0)
			default:
				col++
			}
			if b != ' ' && b != '\t' {
				initial = false
			}
			buf = append(buf, b)
		}
		if nl {
			buf = append(buf, '\n')
		}
		_, err := w.Write(buf)
		return err
	})
	return c.flush(w, status)
}

// unexpand turns the blanks before the first non-blank (every run of
// blanks with -a or -t) into tabs where they reach a tab stop. A single
// space before a tab stop stays a space.
func cmdUnexpand(c *call) int {
	o, files, ok := c.getopt(digitOption(c.args, "-t"), "a", "t", map[string]byte{"all": 'a', "tabs": 't', "first-only": 'F'})
	if !ok {
		return 1
	}
	ts, err := parseTabStops(o.vals['t'])
	if err != nil {
		c.errorf("%s", err)
		return 1
	}
	all := (o.has('a') || len(o.vals['t']) > 0) && !o.has('F')
	w := c.out()
	var buf, pending []byte
	status := c.eachLine(files, func(line []byte, nl bool) error {
		buf, pending = buf[:0], pending[:0]
		col, convert := 0, true
		for _, b := range line {
			blank := b == ' ' || b == '\t'
			if blank && convert {
				next := ts.next(col)
				if b == '\t' {
					if next < 0 {
						next = col + 1
					}
					col = next
					pending = append(pending[:0], '\t')
					buf = append(buf, pending...)
					pending = pending[:0]
					continue
				}
				col++
				pending = append(pending, ' ')
				if col == next {
					if len(pending) > 1 {
						buf = append(buf, '\t')
					} else {
						buf = append(buf, ' ')
					}
					pending = pending[:0]
				}
				continue
			}
			buf = append(buf, pending...)
			pending = pending[:0]
			if b == '\b' {
				col = max(col-1, 0)
			} else {
				col++
			}
			if !all && !blank {
				convert = false
			}
			buf = append(buf, b)
		}
		buf = append(buf, pending...)
		if nl {
			buf = append(buf, '\n')
		}
		_, err := w.Write(buf)
		return err
	})
	return c.flush(w, status)
}

// printenv prints the exported variables, or the values of those named
// (status 1 if one is not set).
func cmdPrintenv(c *call) int {
	o, names, ok := c.getopt(c.args, "0", "", map[string]byte{"null": '0'})
	if !ok {
		return 2
	}
	end := "\n"
	if o.has('0') {
		end = "\x00"
	}
	env := exportedEnv(c.env)
	w := c.out()
	if len(names) == 0 {
		for _, kv := range env {
			w.WriteString(kv + end)
		}
		return c.flush(w, 0)
	}
	status := 0
	for _, n := range names {
		found := false
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, n+"="); ok && !strings.Contains(n, "=") {
				w.WriteString(v + end)
				found = true
				break
			}
		}
		if !found {
			status = 1
		}
	}
	return c.flush(w, status)
}

// cksum prints the POSIX CRC-32 of each file (its bytes, then its length),
// its size and its name.
func cmdCksum(c *call) int {
	o, files, ok := c.getopt(c.args, "", "a", map[string]byte{"algorithm": 'a', "untagged": 0, "tag": 0})
	if !ok {
		return 1
	}
	if a := o.last('a', "crc"); a != "crc" {
		c.errorf("--algorithm=%s is not supported here; use %ssum", a, a)
		return 1
	}
	var table [256]uint32
	for i := range table {
		crc := uint32(i) << 24
		for range 8 {
			if crc&0x80000000 != 0 {
				crc = crc<<1 ^ 0x04C11DB7
			} else {
				crc <<= 1
			}
		}
		table[i] = crc
	}
	named := len(files) > 0
	if !named {
		files = []string{"-"}
	}
	w := c.out()
	status := 0
	buf := make([]byte, 32<<10)
	for _, f := range files {
		if c.stopped() {
			return 1
		}
		r, done, err := c.openInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		var crc uint32
		var size uint64
		for {
			n, err := r.Read(buf)
			for _, b := range buf[:n] {
				crc = crc<<8 ^ table[byte(crc>>24)^b]
			}
			size += uint64(n)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					status = c.fail(1, f, err)
				}
				break
			}
		}
		done()
		for l := size; l > 0; l >>= 8 {
			crc = crc<<8 ^ table[byte(crc>>24)^byte(l)]
		}
		crc = ^crc
		if named {
			fmt.Fprintf(w, "%d %d %s\n", crc, size, f)
		} else {
			fmt.Fprintf(w, "%d %d\n", crc, size)
		}
	}
	return c.flush(w, status)
}

// exprError is an error of expr: GNU's message and exit status (2 for a
// syntax error, a non-integer argument, a division by zero or a bad
// regular expression).
type exprError struct{ msg string }

func (e *exprError) Error() string { return e.msg }

// exprValue is a value of expr: an integer (n set) or a string.
type exprValue struct {
	n *big.Int
	s string
}

// exprMaxDepth bounds the nesting of parentheses and prefix operators: the
// parser recurses once per level.
const exprMaxDepth = 1000

// exprParser evaluates an expr expression, as GNU's does, in one pass:
// evaluate is false in the branch of | or & that is not taken, whose
// errors (division by zero) do not count.
type exprParser struct {
	c     *call
	args  []string
	i     int
	depth int
}

func (p *exprParser) peek(s string) bool { return p.i < len(p.args) && p.args[p.i] == s }

func (p *exprParser) accept(s string) bool {
	if p.peek(s) {
		p.i++
		return true
	}
	return false
}

// isExprInteger reports whether s is an integer as expr reads one:
// digits, after an optional minus sign.
func isExprInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return isDigits(s)
}

func (v exprValue) String() string {
	if v.n != nil {
		return v.n.String()
	}
	return v.s
}

// null reports whether v is false for expr: empty, or an integer 0
// (including "00" and "-0").
func (v exprValue) null() bool {
	if v.n != nil {
		return v.n.Sign() == 0
	}
	if v.s == "" {
		return true
	}
	s := strings.TrimPrefix(v.s, "-")
	return s != "" && strings.Trim(s, "0") == ""
}

func (v exprValue) toInt() (*big.Int, bool) {
	if v.n != nil {
		return v.n, true
	}
	if !isExprInteger(v.s) {
		return nil, false
	}
	n, ok := new(big.Int).SetString(v.s, 10)
	return n, ok
}

func exprInt(n int64) exprValue { return exprValue{n: big.NewInt(n)} }

func exprBool(b bool) exprValue {
	if b {
		return exprInt(1)
	}
	return exprInt(0)
}

func (p *exprParser) enter() error {
	p.depth++
	if p.depth > exprMaxDepth {
		return &exprError{"expression nested too deeply"}
	}
	if p.depth%64 == 0 && p.c != nil && p.c.stopped() {
		return &exprError{"stopped"}
	}
	return nil
}

// or is OR: AND { "|" AND }.
func (p *exprParser) or(evaluate bool) (exprValue, error) {
	if err := p.enter(); err != nil {
		return exprValue{}, err
	}
	defer func() { p.depth-- }()
	l, err := p.and(evaluate)
	if err != nil {
		return l, err
	}
	for p.accept("|") {
		r, err := p.and(evaluate && l.null())
		if err != nil {
			return r, err
		}
		if l.null() {
			l = r
			if l.null() {
				l = exprInt(0)
			}
		}
	}
	return l, nil
}

// and is AND: CMP { "&" CMP }.
func (p *exprParser) and(evaluate bool) (exprValue, error) {
	l, err := p.compare(evaluate)
	if err != nil {
		return l, err
	}
	for p.accept("&") {
		r, err := p.compare(evaluate && !l.null())
		if err != nil {
			return r, err
		}
		if l.null() || r.null() {
			l = exprInt(0)
		}
	}
	return l, nil
}

var exprComparisons = []string{"<", "<=", "=", "==", "!=", ">=", ">"}

// compare is CMP: ADD { op ADD }, numerically when both sides are integers.
func (p *exprParser) compare(evaluate bool) (exprValue, error) {
	l, err := p.sum(evaluate)
	if err != nil {
		return l, err
	}
	for p.i < len(p.args) && slices.Contains(exprComparisons, p.args[p.i]) {
		op := p.args[p.i]
		p.i++
		r, err := p.sum(evaluate)
		if err != nil {
			return r, err
		}
		if !evaluate {
			continue
		}
		var cmp int
		ln, lok := l.toInt()
		rn, rok := r.toInt()
		if lok && rok {
			cmp = ln.Cmp(rn)
		} else {
			cmp = strings.Compare(l.String(), r.String())
		}
		switch op {
		case "<":
			l = exprBool(cmp < 0)
		case "<=":
			l = exprBool(cmp <= 0)
		case "=", "==":
			l = exprBool(cmp == 0)
		case "!=":
			l = exprBool(cmp != 0)
		case ">=":
			l = exprBool(cmp >= 0)
		default:
			l = exprBool(cmp > 0)
		}
	}
	return l, nil
}

// arith applies op to two integers.
func exprArith(op string, l, r exprValue) (exprValue, error) {
	a, aok := l.toInt()
	b, bok := r.toInt()
	if !aok || !bok {
		return exprValue{}, &exprError{"non-integer argument"}
	}
	z := new(big.Int)
	switch op {
	case "+":
		z.Add(a, b)
	case "-":
		z.Sub(a, b)
	case "*":
		z.Mul(a, b)
	case "/", "%":
		if b.Sign() == 0 {
			return exprValue{}, &exprError{"division by zero"}
		}
		if op == "/" {
			z.Quo(a, b)
		} else {
			z.Rem(a, b)
		}
	}
	return exprValue{n: z}, nil
}

// sum is ADD: MUL { ("+" | "-") MUL }.
func (p *exprParser) sum(evaluate bool) (exprValue, error) {
	return p.arith(evaluate, p.product, "+", "-")
}

// product is MUL: MATCH { ("*" | "/" | "%") MATCH }.
func (p *exprParser) product(evaluate bool) (exprValue, error) {
	return p.arith(evaluate, p.match, "*", "/", "%")
}

// arith parses operand { op operand } for the arithmetic operators ops,
// left to right.
func (p *exprParser) arith(evaluate bool, operand func(bool) (exprValue, error), ops ...string) (exprValue, error) {
	l, err := operand(evaluate)
	if err != nil {
		return l, err
	}
	for p.i < len(p.args) && slices.Contains(ops, p.args[p.i]) {
		op := p.args[p.i]
		p.i++
		r, err := operand(evaluate)
		if err != nil {
			return r, err
		}
		if evaluate {
			if l, err = exprArith(op, l, r); err != nil {
				return l, err
			}
		}
	}
	return l, nil
}

// match is MATCH: PRIMARY { ":" PRIMARY }.
func (p *exprParser) match(evaluate bool) (exprValue, error) {
	l, err := p.primary(evaluate)
	if err != nil {
		return l, err
	}
	for p.accept(":") {
		r, err := p.primary(evaluate)
		if err != nil {
			return r, err
		}
		if evaluate {
			if l, err = p.colon(l, r); err != nil {
				return l, err
			}
		}
	}
	return l, nil
}

// colon matches the basic regular expression r against the start of s:
// the text of the first group, or the number of characters matched.
func (p *exprParser) colon(s, r exprValue) (exprValue, error) {
	timeout := time.Minute
	if p.c != nil {
		timeout = p.c.reTimeout()
	}
	re, err := compileRegex([]string{r.String()}, reSyntax{}, timeout)
	if err != nil {
		return exprValue{}, &exprError{err.Error()}
	}
	text := []byte(s.String())
	m, err := re.findAll(text, 1)
	if err != nil {
		return exprValue{}, &exprError{err.Error()}
	}
	matched := len(m) > 0 && m[0][0] == 0
	if re.groups > 0 {
		if matched && m[0][2] >= 0 {
			return exprValue{s: string(text[m[0][2]:m[0][3]])}, nil
		}
		return exprValue{s: ""}, nil
	}
	if !matched {
		return exprInt(0), nil
	}
	return exprInt(int64(utf8.RuneCount(text[:m[0][1]]))), nil
}

// primary is "+" TOKEN, length, match, index, substr, or a parenthesized
// expression, or a token.
func (p *exprParser) primary(evaluate bool) (exprValue, error) {
	if err := p.enter(); err != nil {
		return exprValue{}, err
	}
	defer func() { p.depth-- }()
	if p.i >= len(p.args) {
		return exprValue{}, p.missing()
	}
	switch p.args[p.i] {
	case "+":
		p.i++
		if p.i >= len(p.args) {
			return exprValue{}, p.missing()
		}
		p.i++
		return exprValue{s: p.args[p.i-1]}, nil
	case "length":
		p.i++
		v, err := p.primary(evaluate)
		if err != nil {
			return v, err
		}
		return exprInt(int64(utf8.RuneCountInString(v.String()))), nil
	case "match":
		p.i++
		vs, err := p.operands(evaluate, 2)
		if err != nil {
			return exprValue{}, err
		}
		if !evaluate {
			return exprInt(0), nil
		}
		return p.colon(vs[0], vs[1])
	case "index":
		p.i++
		vs, err := p.operands(evaluate, 2)
		if err != nil {
			return exprValue{}, err
		}
		chars := vs[1].String()
		for i, r := range []rune(vs[0].String()) {
			if strings.ContainsRune(chars, r) {
				return exprInt(int64(i + 1)), nil
			}
		}
		return exprInt(0), nil
	case "substr":
		p.i++
		vs, err := p.operands(evaluate, 3)
		if err != nil {
			return exprValue{}, err
		}
		runes := []rune(vs[0].String())
		pos, pok := vs[1].toInt()
		n, nok := vs[2].toInt()
		if !pok || !nok || pos.Sign() <= 0 || n.Sign() <= 0 || !pos.IsInt64() || pos.Int64() > int64(len(runes)) {
			return exprValue{s: ""}, nil
		}
		start := int(pos.Int64()) - 1
		end := len(runes)
		if n.IsInt64() && n.Int64() < int64(end-start) {
			end = start + int(n.Int64())
		}
		return exprValue{s: string(runes[start:end])}, nil
	case "(":
		p.i++
		v, err := p.or(evaluate)
		if err != nil {
			return v, err
		}
		if p.i >= len(p.args) {
			return v, &exprError{fmt.Sprintf("syntax error: expecting ')' after '%s'", p.args[p.i-1])}
		}
		if !p.accept(")") {
			return v, &exprError{fmt.Sprintf("syntax error: expecting ')' instead of '%s'", p.args[p.i])}
		}
		return v, nil
	case ")":
		return exprValue{}, &exprError{"syntax error: unexpected ')'"}
	}
	p.i++
	return exprValue{s: p.args[p.i-1]}, nil
}

// operands reads the n operands of a keyword.
func (p *exprParser) operands(evaluate bool, n int) ([]exprValue, error) {
	vs := make([]exprValue, n)
	for k := range vs {
		v, err := p.primary(evaluate)
		if err != nil {
			return nil, err
		}
		vs[k] = v
	}
	return vs, nil
}

func (p *exprParser) missing() error {
	if p.i == 0 {
		return &exprError{"syntax error: missing argument"}
	}
	return &exprError{fmt.Sprintf("syntax error: missing argument after '%s'", p.args[p.i-1])}
}

// evalExpr evaluates expr's arguments: the value, or an error.
func evalExpr(c *call, args []string) (exprValue, error) {
	p := &exprParser{c: c, args: args}
	v, err := p.or(true)
	if err != nil {
		return v, err
	}
	if p.i < len(args) {
		return v, &exprError{fmt.Sprintf("syntax error: unexpected argument '%s'", args[p.i])}
	}
	return v, nil
}

// expr prints the value of the expression its arguments make; status 1
// when it is empty or 0, 2 on an error.
func cmdExpr(c *call) int {
	args := c.args
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		c.errorf("missing operand")
		return 2
	}
	v, err := evalExpr(c, args)
	if err != nil {
		c.errorf("%s", err)
		return 2
	}
	status := 0
	if v.null() {
		status = 1
	}
	if _, err := io.WriteString(c.stdout, v.String()+"\n"); err != nil {
		return c.writeFailed(err)
	}
	return status
}

// odSpec is one output format of od: its kind (o, x, d, u, c or a), the
// size of a datum in bytes, the digits of a datum and whether the
// printable characters follow (z).
type odSpec struct {
	kind   byte
	size   int
	digits int
	z      bool
}

// odDigits are the widths of a datum by kind and size (1, 2, 4, 8).
var odDigits = map[byte][4]int{
	'o': {3, 6, 11, 22},
	'x': {2, 4, 8, 16},
	'd': {4, 6, 11, 20},
	'u': {3, 5, 10, 20},
}

// parseOdType parses the argument of -t: one or more of a, c, or d, o, u,
// x with an optional size (1, 2, 4, 8, C, S, I, L), each with an optional
// z.
func parseOdType(t string) ([]odSpec, error) {
	var specs []odSpec
	orig := t
	for t != "" {
		k := t[0]
		t = t[1:]
		var s odSpec
		switch k {
		case 'a', 'c':
			s = odSpec{kind: k, size: 1, digits: 3}
		case 'd', 'o', 'u', 'x':
			size := 4
			switch {
			case t != "" && t[0] >= '0' && t[0] <= '9':
				j := 0
				for j < len(t) && t[j] >= '0' && t[j] <= '9' {
					j++
				}
				n, _ := strconv.Atoi(t[:j])
				if n != 1 && n != 2 && n != 4 && n != 8 {
					return nil, fmt.Errorf("invalid type string '%s';\nthis system doesn't provide a %s-byte integral type", orig, t[:j])
				}
				size, t = n, t[j:]
			case t != "" && strings.IndexByte("CSIL", t[0]) >= 0:
				size = map[byte]int{'C': 1, 'S': 2, 'I': 4, 'L': 8}[t[0]]
				t = t[1:]
			}
			idx := map[int]int{1: 0, 2: 1, 4: 2, 8: 3}[size]
			s = odSpec{kind: k, size: size, digits: odDigits[k][idx]}
		default:
			return nil, fmt.Errorf("invalid character '%c' in type string '%s'", k, orig)
		}
		if t != "" && t[0] == 'z' {
			s.z, t = true, t[1:]
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// odNames are the names od -t a gives the control characters.
var odNames = [...]string{"nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel",
	"bs", "ht", "nl", "vt", "ff", "cr", "so", "si", "dle", "dc1", "dc2", "dc3",
	"dc4", "nak", "syn", "etb", "can", "em", "sub", "esc", "fs", "gs", "rs", "us", "sp"}

// odDatum formats one datum of spec s from b (len s.size, little-endian).
func odDatum(s odSpec, b []byte) string {
	if s.kind == 'c' {
		switch c := b[0]; c {
		case 0:
			return `\0`
		case '\a':
			return `\a`
		case '\b':
			return `\b`
		case '\f':
			return `\f`
		case '\n':
			return `\n`
		case '\r':
			return `\r`
		case '\t':
			return `\t`
		case '\v':
			return `\v`
		default:
			if c >= 0x20 && c < 0x7f {
				return string(rune(c))
			}
			return fmt.Sprintf("%03o", c)
		}
	}
	if s.kind == 'a' {
		c := b[0] & 0x7f
		switch {
		case int(c) < len(odNames):
			return odNames[c]
		case c == 0x7f:
			return "del"
		}
		return string(rune(c))
	}
	var u uint64
	for i := s.size - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	switch s.kind {
	case 'o':
		return fmt.Sprintf("%0*o", s.digits, u)
	case 'x':
		return fmt.Sprintf("%0*x", s.digits, u)
	case 'u':
		return strconv.FormatUint(u, 10)
	}
	shift := 64 - 8*s.size
	return strconv.FormatInt(int64(u<<shift)>>shift, 10)
}

// parseOdSize parses a byte count of od or split: decimal, 0x hex or 0
// octal, with an optional multiplier suffix (b 512, K/KiB 1024, KB 1000,
// M, MB, G, GB...).
func parseOdSize(s string) (int64, bool) {
	digits := "0123456789"
	start := 0
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		digits, start = "0123456789abcdefABCDEF", 2
	}
	end := start
	for end < len(s) && strings.IndexByte(digits, s[end]) >= 0 {
		end++
	}
	num, suffix := s[:end], s[end:]
	n, err := strconv.ParseInt(num, 0, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	mult := int64(1)
	if suffix != "" {
		units := map[string]int64{"b": 512, "c": 1, "w": 2}
		pow := func(base int64, e int) int64 {
			m := int64(1)
			for range e {
				m *= base
			}
			return m
		}
		for e, l := range []string{"K", "M", "G", "T", "P", "E"} {
			units[l] = pow(1024, e+1)
			units[strings.ToLower(l)] = pow(1024, e+1)
			units[l+"iB"] = pow(1024, e+1)
			units[l+"B"] = pow(1000, e+1)
		}
		m, ok := units[suffix]
		if !ok {
			return 0, false
		}
		mult = m
	}
	if n > 0 && mult > (1<<62)/n {
		return 0, false
	}
	return n * mult, true
}

// od dumps its input (the files, one after the other) in the formats of
// -t (octal 2-byte words by default), 16 bytes a line, each line preceded
// by its offset (-A); repeated lines become "*" unless -v.
func cmdOd(c *call) int {
	args := make([]string, 0, len(c.args))
	for _, a := range c.args {
		if a == "-w" || a == "--width" {
			a = "--width=32"
		}
		args = append(args, a)
	}
	o, files, ok := c.getopt(args, "bcdosxilvh", "AtjNw", map[string]byte{
		"address-radix": 'A', "format": 't', "skip-bytes": 'j', "read-bytes": 'N',
		"width": 'w', "output-duplicates": 'v'})
	if !ok {
		return 1
	}
	// The traditional letters and -t, in the order given (getopt has
	// checked the syntax).
	var specs []odSpec
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if t, ok := strings.CutPrefix(a, "--format="); ok {
			s, err := parseOdType(t)
			if err != nil {
				c.errorf("%s", err)
				return 1
			}
			specs = append(specs, s...)
			continue
		}
		if a == "--format" && i+1 < len(args) {
			i++
			s, err := parseOdType(args[i])
			if err != nil {
				c.errorf("%s", err)
				return 1
			}
			specs = append(specs, s...)
			continue
		}
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			continue
		}
		for j := 1; j < len(a); j++ {
			if strings.IndexByte("AtjNw", a[j]) >= 0 {
				v := a[j+1:]
				if v == "" && i+1 < len(args) {
					i++
					v = args[i]
				}
				if a[j] == 't' {
					s, err := parseOdType(v)
					if err != nil {
						c.errorf("%s", err)
						return 1
					}
					specs = append(specs, s...)
				}
				break
			}
			t := map[byte]string{'b': "o1", 'c': "c", 'd': "u2", 'o': "o2", 's': "d2", 'x': "x2", 'h': "x2", 'i': "d4", 'l': "d8"}[a[j]]
			if t != "" {
				s, _ := parseOdType(t)
				specs = append(specs, s...)
			}
		}
	}
	if len(specs) == 0 {
		specs = []odSpec{{kind: 'o', size: 2, digits: 6}}
	}
	radix := o.last('A', "o")
	addrWidth := map[string]int{"o": 7, "d": 7, "x": 6, "n": 0}
	if _, ok := addrWidth[radix]; !ok || len(radix) != 1 {
		c.errorf("invalid output address radix '%s'; it must be one character from [doxn]", radix)
		return 1
	}
	skip, limit := int64(0), int64(-1)
	if v := o.vals['j']; len(v) > 0 {
		n, ok := parseOdSize(v[len(v)-1])
		if !ok {
			c.errorf("invalid -j argument '%s'", v[len(v)-1])
			return 1
		}
		skip = n
	}
	if v := o.vals['N']; len(v) > 0 {
		n, ok := parseOdSize(v[len(v)-1])
		if !ok {
			c.errorf("invalid -N argument '%s'", v[len(v)-1])
			return 1
		}
		limit = n
	}
	perLine := 16
	if v := o.vals['w']; len(v) > 0 {
		n, err := strconv.Atoi(v[len(v)-1])
		if err != nil || n < 1 || n > 1<<16 {
			c.errorf("invalid -w argument '%s'", v[len(v)-1])
			return 1
		}
		perLine = n
	}
	for _, s := range specs {
		if perLine%s.size != 0 {
			c.errorf("invalid width %d: not a multiple of the datum sizes", perLine)
			return 1
		}
	}
	// Align the formats: every line of a block is as wide as the widest.
	lineWidth := 0
	for _, s := range specs {
		lineWidth = max(lineWidth, (s.digits+1)*(perLine/s.size))
	}

	if len(files) == 0 {
		files = []string{"-"}
	}
	status := 0
	var readers []io.Reader
	for _, f := range files {
		r, done, err := c.openInput(f)
		if err != nil {
			status = c.fail(1, f, err)
			continue
		}
		defer done()
		readers = append(readers, r)
	}
	in := io.MultiReader(readers...)
	if skip > 0 {
		n, err := io.CopyN(io.Discard, in, skip)
		if err != nil && !errors.Is(err, io.EOF) {
			c.errorf("%s", errText(err))
			return 1
		}
		if n < skip {
			c.errorf("cannot skip past end of combined input")
			return 1
		}
	}
	if limit >= 0 {
		in = io.LimitReader(in, limit)
	}
	addr := func(off int64) string {
		switch radix {
		case "o":
			return fmt.Sprintf("%07o", off)
		case "d":
			return fmt.Sprintf("%07d", off)
		case "x":
			return fmt.Sprintf("%06x", off)
		}
		return ""
	}
	w := c.out()
	block := make([]byte, perLine)
	prev := make([]byte, perLine)
	off := skip
	first, starred := true, false
	for n := 0; ; n++ {
		if n%256 == 255 && c.stopped() {
			return 1
		}
		k, err := io.ReadFull(in, block)
		if k == 0 {
			if err != nil && !errors.Is(err, io.EOF) {
				c.errorf("%s", errText(err))
				status = 1
			}
			break
		}
		if !o.has('v') && !first && k == perLine && bytes.Equal(block, prev) {
			if !starred {
				w.WriteString("*\n")
				starred = true
			}
		} else {
			starred = false
			clear(block[k:])
			for i, s := range specs {
				if i == 0 {
					w.WriteString(addr(off))
				} else {
					w.WriteString(strings.Repeat(" ", addrWidth[radix]))
				}
				fields := perLine / s.size
				blank := (perLine - k) / s.size
				pad := lineWidth - (s.digits+1)*fields
				remaining := pad
				for f := fields; f > blank; f-- {
					next := pad * (f - 1) / fields
					at := (fields - f) * s.size
					fmt.Fprintf(w, " %*s", remaining-next+s.digits, odDatum(s, block[at:at+s.size]))
					remaining = next
				}
				if s.z {
					w.WriteString(strings.Repeat(" ", blank*(s.digits+1)))
					w.WriteString("  >")
					for _, b := range block[:k] {
						if b >= 0x20 && b < 0x7f {
							w.WriteByte(b)
						} else {
							w.WriteByte('.')
						}
					}
					w.WriteString("<")
				}
				if _, err := w.WriteString("\n"); err != nil {
					return c.writeFailed(err)
				}
			}
		}
		copy(prev, block)
		first = false
		off += int64(k)
		if k < perLine {
			break
		}
	}
	if radix != "n" {
		w.WriteString(addr(off) + "\n")
	}
	return c.flush(w, status)
}

// split writes its input into files PREFIXaa, PREFIXab... (prefix x) of
// -l lines (1000), -b bytes or -n equal chunks; -d and -x number them in
// decimal or hex, -a sets the suffix length (otherwise it grows as GNU's
// does: ...yz, zaaa...). The input is read whole (within MaxFileBytes).
func cmdSplit(c *call) int {
	args := make([]string, 0, len(c.args))
	for _, a := range c.args {
		switch {
		case len(a) > 1 && a[0] == '-' && isDigits(a[1:]):
			args = append(args, "-l", a[1:])
		case a == "--numeric-suffixes" || a == "--hex-suffixes":
			args = append(args, map[string]string{"--numeric-suffixes": "-d", "--hex-suffixes": "-x"}[a])
		default:
			args = append(args, a)
		}
	}
	o, files, ok := c.getopt(args, "dxe", "lbnaCS", map[string]byte{
		"lines": 'l', "bytes": 'b', "number": 'n', "suffix-length": 'a',
		"elide-empty-files": 'e', "additional-suffix": 'S', "line-bytes": 'C', "verbose": 'V'})
	if !ok {
		return 1
	}
	if o.has('V') {
		c.errorf("--verbose is not supported")
		return 1
	}
	if len(files) > 2 {
		c.errorf("extra operand '%s'", files[2])
		return 1
	}
	in, prefix := "-", "x"
	if len(files) > 0 {
		in = files[0]
	}
	if len(files) > 1 {
		prefix = files[1]
	}
	suffix := ""
	if v := o.vals['S']; len(v) > 0 {
		suffix = v[len(v)-1]
		if strings.Contains(suffix, "/") {
			c.errorf("invalid suffix '%s', contains directory separator", suffix)
			return 1
		}
	}
	alphabet := "abcdefghijklmnopqrstuvwxyz"
	switch {
	case o.has('d'):
		alphabet = "0123456789"
	case o.has('x'):
		alphabet = "0123456789abcdef"
	}
	mode, sizeArg := byte('l'), "1000"
	modes := 0
	for _, f := range []byte("lbnC") {
		if v := o.vals[f]; len(v) > 0 {
			mode, sizeArg = f, v[len(v)-1]
			modes++
		}
	}
	if modes > 1 {
		c.errorf("cannot split in more than one way")
		return 1
	}
	var size int64
	switch mode {
	case 'l':
		n, err := strconv.ParseInt(sizeArg, 10, 64)
		if err != nil || n <= 0 {
			c.errorf("invalid number of lines: '%s'", sizeArg)
			return 1
		}
		size = n
	case 'n':
		n, err := strconv.ParseInt(sizeArg, 10, 64)
		if err != nil || n <= 0 || n > 1<<20 {
			c.errorf("invalid number of chunks: '%s'", sizeArg)
			return 1
		}
		size = n
	default:
		n, ok := parseOdSize(sizeArg)
		if !ok || n <= 0 {
			c.errorf("invalid number of bytes: '%s'", sizeArg)
			return 1
		}
		size = n
	}
	length, auto := 2, true
	if v := o.vals['a']; len(v) > 0 {
		n, err := strconv.Atoi(v[len(v)-1])
		if err != nil || n < 0 || n > 64 {
			c.errorf("invalid suffix length: '%s'", v[len(v)-1])
			return 1
		}
		length, auto = n, false
	}
	if mode == 'n' {
		// The suffixes must hold every chunk.
		need, k := 1, int64(len(alphabet))
		for k < size {
			need++
			k *= int64(len(alphabet))
		}
		if length < need {
			if !auto {
				c.errorf("the suffix length needs to be at least %d", need)
				return 1
			}
			length = need
		}
		auto = false
	}
	if length == 0 {
		c.errorf("invalid suffix length: '0'")
		return 1
	}
	data, err := c.readInput(in)
	if err != nil {
		return c.fail(1, in, err)
	}

	// The chunks, as offsets into data.
	var bounds [][2]int
	switch mode {
	case 'l':
		start, lines := 0, int64(0)
		for i, b := range data {
			if b == '\n' {
				lines++
				if lines == size {
					bounds = append(bounds, [2]int{start, i + 1})
					start, lines = i+1, 0
				}
			}
		}
		if start < len(data) {
			bounds = append(bounds, [2]int{start, len(data)})
		}
	case 'b':
		for start := 0; start < len(data); start += int(min(size, int64(len(data)-start))) {
			bounds = append(bounds, [2]int{start, start + int(min(size, int64(len(data)-start)))})
		}
	case 'C':
		// Lines, as many whole as fit in size bytes; a longer line is cut.
		for start := 0; start < len(data); {
			end := start + int(min(size, int64(len(data)-start)))
			if end < len(data) {
				if k := bytes.LastIndexByte(data[start:end], '\n'); k >= 0 {
					end = start + k + 1
				}
			}
			bounds = append(bounds, [2]int{start, end})
			start = end
		}
	case 'n':
		each := int64(len(data)) / size
		for k := int64(0); k < size; k++ {
			end := (k + 1) * each
			if k == size-1 {
				end = int64(len(data))
			}
			if o.has('e') && end == k*each {
				continue
			}
			bounds = append(bounds, [2]int{int(k * each), int(end)})
		}
	}

	digits := make([]int, length)
	base := prefix
	for n, b := range bounds {
		if c.stopped() {
			return 1
		}
		if n > 0 {
			// The next suffix; with auto, ...yz is followed by zaaa.
			i := len(digits) - 1
			for ; i >= 0; i-- {
				digits[i]++
				if auto && i == 0 && digits[0] == len(alphabet)-1 {
					base += alphabet[len(alphabet)-1:]
					digits = make([]int, len(digits)+1)
					break
				}
				if digits[i] < len(alphabet) {
					break
				}
				digits[i] = 0
			}
			if i < 0 {
				c.errorf("output file suffixes exhausted")
				return 1
			}
		}
		name := []byte(base)
		for _, d := range digits {
			name = append(name, alphabet[d])
		}
		name = append(name, suffix...)
		if err := c.writeFile(string(name), bytes.NewReader(data[b[0]:b[1]])); err != nil {
			return c.fail(1, string(name), err)
		}
	}
	return 0
}

// displayWidth is the number of columns s takes on a terminal.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth approximates wcwidth: 0 for control characters and combining
// marks, 2 for East Asian wide and fullwidth characters (and emoji), 1
// otherwise.
func runeWidth(r rune) int {
	switch {
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		return 0
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0x303e, r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff, r >= 0xa000 && r <= 0xa4cf,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// lineWidth tracks wc -L: the widest line seen, in columns (a tab moves to
// the next multiple of 8; a carriage return or form feed starts over).
type lineWidth struct {
	pos, max int
	pend     []byte // an incomplete UTF-8 sequence
}

func (l *lineWidth) add(p []byte) {
	for _, b := range p {
		if len(l.pend) == 0 && b < utf8.RuneSelf {
			switch b {
			case '\n', '\r', '\f':
				l.max = max(l.max, l.pos)
				l.pos = 0
			case '\t':
				l.pos += 8 - l.pos%8
			default:
				if b >= 0x20 && b < 0x7f {
					l.pos++
				}
			}
			continue
		}
		l.pend = append(l.pend, b)
		if utf8.FullRune(l.pend) || len(l.pend) >= utf8.UTFMax {
			r, n := utf8.DecodeRune(l.pend)
			if r != utf8.RuneError || n > 1 {
				l.pos += runeWidth(r)
			}
			rest := append([]byte(nil), l.pend[n:]...)
			l.pend = l.pend[:0]
			l.add(rest)
		}
	}
}

// longest returns the widest line, the last one included.
func (l *lineWidth) longest() int { return max(l.max, l.pos) }

// column formats its input lines into a table (-t: fields split on
// whitespace or the characters of -s, joined by -o, two spaces) or, by
// default, fills columns of entries as wide as -c (80).
func cmdColumn(c *call) int {
	o, files, ok := c.getopt(c.args, "txne", "soc", map[string]byte{
		"table": 't', "fillrows": 'x', "separator": 's', "output-separator": 'o',
		"output-width": 'c', "columns": 'c'})
	if !ok {
		return 1
	}
	width := 80
	if v, err := strconv.Atoi(c.env.Get("COLUMNS").String()); err == nil && v > 0 {
		width = v
	}
	if v := o.vals['c']; len(v) > 0 {
		n, err := strconv.Atoi(v[len(v)-1])
		if err != nil || n < 0 {
			c.errorf("invalid columns argument: '%s'", v[len(v)-1])
			return 1
		}
		width = n
	}
	var entries []string
	total := 0
	status := c.eachLine(files, func(line []byte, nl bool) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		total += len(line)
		if max := c.maxBytes(); max > 0 && int64(total) > max {
			return fmt.Errorf("input over %d bytes: %w", max, errInputTooLarge)
		}
		entries = append(entries, string(line))
		return nil
	})
	if status != 0 && status != 1 {
		return status
	}
	w := c.out()
	if o.has('t') {
		var rows [][]string
		ncols := 0
		seps, hasSep := "", false
		if v := o.vals['s']; len(v) > 0 {
			seps, hasSep = v[len(v)-1], true
		}
		for _, e := range entries {
			var cells []string
			switch {
			case !hasSep:
				cells = strings.Fields(e)
			case seps == "":
				cells = []string{e}
			default:
				start := 0
				for i, r := range e {
					if strings.ContainsRune(seps, r) {
						cells = append(cells, e[start:i])
						start = i + utf8.RuneLen(r)
					}
				}
				cells = append(cells, e[start:])
			}
			rows = append(rows, cells)
			ncols = max(ncols, len(cells))
		}
		widths := make([]int, ncols)
		for _, r := range rows {
			for i, cell := range r {
				widths[i] = max(widths[i], displayWidth(cell))
			}
		}
		sep := o.last('o', "  ")
		for n, r := range rows {
			if n%1024 == 1023 && c.stopped() {
				return 1
			}
			for i := range ncols {
				cell := ""
				if i < len(r) {
					cell = r[i]
				}
				w.WriteString(cell)
				if i < ncols-1 {
					w.WriteString(strings.Repeat(" ", widths[i]-displayWidth(cell)))
					w.WriteString(sep)
				}
			}
			if err := w.WriteByte('\n'); err != nil {
				return c.writeFailed(err)
			}
		}
		return c.flush(w, status)
	}
	// Fill mode, as util-linux's: entries padded with tabs to a multiple
	// of 8 past the longest.
	longest := 0
	for _, e := range entries {
		longest = max(longest, displayWidth(e))
	}
	longest = (longest + 8) &^ 7
	cols := max(width/longest, 1)
	tabTo := func(chars, end int) {
		for next := (chars + 8) &^ 7; next <= end; next = (chars + 8) &^ 7 {
			w.WriteByte('\t')
			chars = next
		}
	}
	if o.has('x') {
		chars, col, end := 0, 0, longest
		for _, e := range entries {
			w.WriteString(e)
			chars += displayWidth(e)
			if col++; col == cols {
				chars, col, end = 0, 0, longest
				w.WriteByte('\n')
				continue
			}
			tabTo(chars, end)
			chars = end
			end += longest
		}
		if col > 0 {
			w.WriteByte('\n')
		}
		return c.flush(w, status)
	}
	rows := (len(entries) + cols - 1) / cols
	for r := range rows {
		if r%1024 == 1023 && c.stopped() {
			return 1
		}
		end, chars := longest, 0
		for i := r; ; {
			w.WriteString(entries[i])
			chars += displayWidth(entries[i])
			if i += rows; i >= len(entries) {
				break
			}
			tabTo(chars, end)
			chars = end
			end += longest
		}
		if err := w.WriteByte('\n'); err != nil {
			return c.writeFailed(err)
		}
	}
	return c.flush(w, status)
}
