package shell

import (
	"bytes"
	"strconv"
	"strings"
)

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
