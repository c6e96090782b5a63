package shell

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

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
