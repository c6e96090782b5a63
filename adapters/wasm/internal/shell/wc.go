package shell

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// wcCounts are the counts of one input of wc.
type wcCounts struct{ lines, words, chars, bytes, longest int64 }

func isSpaceByte(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

func cmdWc(c *call) int {
	o, files, ok := c.getopt(c.args, "lwcmL", "", map[string]byte{"lines": 'l', "words": 'w', "bytes": 'c', "chars": 'm', "max-line-length": 'L'})
	if !ok {
		return 1
	}
	show := []byte{}
	for _, f := range []byte("lwmcL") {
		if o.has(f) {
			show = append(show, f)
		}
	}
	if len(show) == 0 {
		show = []byte("lwc")
	}
	named := len(files) > 0
	if !named {
		files = []string{"-"}
	}
	type result struct {
		name string
		n    wcCounts
	}
	var results []result
	var total wcCounts
	status := 0
	anyStream := false
	for _, f := range files {
		if c.stopped() {
			break
		}
		r, done, err := c.openInput(f)
		if err != nil {
			c.fail(1, f, err)
			status = 1
			continue
		}
		if t, terr := c.target(f); f == "-" || terr != nil || t.dev != "" {
			anyStream = true
		}
		var n wcCounts
		var lw lineWidth
		inWord := false
		buf, release := c.readBuf()
		for {
			k, err := r.Read(buf)
			if o.has('L') {
				lw.add(buf[:k])
			}
			for _, b := range buf[:k] {
				n.bytes++
				if b&0xC0 != 0x80 {
					n.chars++
				}
				if b == '\n' {
					n.lines++
				}
				if isSpaceByte(b) {
					inWord = false
				} else if !inWord {
					inWord = true
					n.words++
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					c.fail(1, f, err)
					status = 1
				}
				break
			}
		}
		release()
		done()
		n.longest = int64(lw.longest())
		total.longest = max(total.longest, n.longest)
		total.lines += n.lines
		total.words += n.words
		total.chars += n.chars
		total.bytes += n.bytes
		name := f
		if !named {
			name = ""
		}
		results = append(results, result{name, n})
	}
	if len(files) > 1 {
		// GNU prints the total of several operands even when some
		// failed.
		results = append(results, result{"total", total})
	}
	width := 1
	if len(show) > 1 || len(results) > 1 {
		width = len(strconv.FormatInt(total.bytes, 10))
		if anyStream {
			width = max(width, 7)
		}
	}
	w := c.out()
	for _, res := range results {
		var fields []string
		for _, f := range show {
			var v int64
			switch f {
			case 'l':
				v = res.n.lines
			case 'w':
				v = res.n.words
			case 'm':
				v = res.n.chars
			case 'c':
				v = res.n.bytes
			case 'L':
				v = res.n.longest
			}
			fields = append(fields, fmt.Sprintf("%*d", width, v))
		}
		line := strings.Join(fields, " ")
		if res.name != "" {
			line += " " + res.name
		}
		w.WriteString(line + "\n")
	}
	return c.flush(w, status)
}
