package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

func cmdUniq(c *call) int {
	o, files, ok := c.getopt(c.args, "cdui", "fsw", map[string]byte{"count": 'c', "repeated": 'd', "unique": 'u', "ignore-case": 'i',
		"skip-fields": 'f', "skip-chars": 's', "check-chars": 'w'})
	if !ok {
		return 1
	}
	// -f N skips N fields (blanks then non-blanks), -s N then N bytes;
	// -w N compares at most N bytes of the rest.
	var skipFields, skipChars, checkChars int64 = 0, 0, -1
	for f, dst := range map[byte]*int64{'f': &skipFields, 's': &skipChars, 'w': &checkChars} {
		if v := o.vals[f]; len(v) > 0 {
			n, err := strconv.ParseInt(v[len(v)-1], 10, 64)
			if err != nil || n < 0 {
				what := map[byte]string{'f': "fields to skip", 's': "bytes to skip", 'w': "bytes to compare"}[f]
				c.errorf("%s: invalid number of %s", v[len(v)-1], what)
				return 1
			}
			*dst = n
		}
	}
	key := func(line []byte) []byte {
		i := 0
		for k := int64(0); k < skipFields && i < len(line); k++ {
			for i < len(line) && isBlank(line[i]) {
				i++
			}
			for i < len(line) && !isBlank(line[i]) {
				i++
			}
		}
		line = line[i+int(min(skipChars, int64(len(line)-i))):]
		if checkChars >= 0 && int64(len(line)) > checkChars {
			line = line[:checkChars]
		}
		return line
	}
	if len(files) > 2 {
		c.errorf("extra operand '%s'", files[2])
		return 1
	}
	in := "-"
	if len(files) > 0 {
		in = files[0]
	}
	r, done, err := c.openInput(in)
	if err != nil {
		return c.fail(1, in, err)
	}
	defer done()
	out := c.stdout
	var fw *fileWriter
	if len(files) == 2 {
		t, err := c.target(files[1])
		if err == nil {
			if t.dev != "" {
				err = errors.New("not a regular file")
			} else {
				fw, err = c.sh.createFile(c.ctx, t, false, nil)
			}
		}
		if err != nil {
			return c.fail(1, files[1], err)
		}
		out = fw
	}
	w := bufio.NewWriterSize(out, 32<<10)
	equal := bytes.Equal
	if o.has('i') {
		equal = bytes.EqualFold
	}
	var cur []byte
	var n int64
	status := 0
	put := func() {
		if n == 0 || o.has('d') && n < 2 || o.has('u') && n > 1 {
			return
		}
		if o.has('c') {
			fmt.Fprintf(w, "%7d ", n)
		}
		w.Write(cur)
		w.WriteByte('\n')
	}
	lr := c.lines(r)
	for {
		line, _, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			c.fail(1, in, err)
			status = 1
			break
		}
		if n > 0 && equal(key(line), key(cur)) {
			n++
			continue
		}
		put()
		cur, n = slices.Clone(line), 1
	}
	put()
	status = c.flush(w, status)
	if fw != nil {
		if err := fw.Close(); err != nil && status == 0 {
			return c.fail(1, files[1], err)
		}
	}
	return status
}
