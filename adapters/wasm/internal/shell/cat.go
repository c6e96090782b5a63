package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

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
			rerr, werr := c.copyOut(w, r)
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
