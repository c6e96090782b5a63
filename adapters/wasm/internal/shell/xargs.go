package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// xargsOpts are the options of one xargs run.
type xargsOpts struct {
	delim     int // -1: blanks and quotes; else the delimiter byte
	eof       string
	hasEOF    bool
	replace   string
	hasRepl   bool
	maxArgs   int
	maxLines  int
	maxChars  int
	noEmpty   bool
	trace     bool
	exitSize  bool
	argFile   string
	hasFile   bool
	lineItems bool // -I: a whole line is one item
}

// xargsDefaultChars is GNU's default command-line size (-s).
const xargsDefaultChars = 128 << 10

func xargsUsage(c *call) int {
	fmt.Fprintf(c.stderr, "Try 'xargs --help' for more information.\n")
	return 1
}

// parseXargsOpts parses the options before the command; options stop at
// the first operand.
func parseXargsOpts(c *call, args []string) (xargsOpts, []string, bool) {
	o := xargsOpts{delim: -1, maxChars: xargsDefaultChars}
	number := func(opt, v string, min int) (int, bool) {
		n, err := strconv.Atoi(v)
		if err != nil {
			c.errorf("invalid number \"%s\" for -%s option", v, opt)
			return 0, false
		}
		if n < min {
			c.errorf("value %s for -%s option should be >= %d", v, opt, min)
			return 0, false
		}
		return n, true
	}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		// value returns the value of an option that takes one: the rest
		// of the word, or the next word.
		value := func(rest string, short byte) (string, bool) {
			if rest != "" {
				return rest, true
			}
			if i+1 >= len(args) {
				c.errorf("option requires an argument -- '%c'", short)
				return "", false
			}
			i++
			return args[i], true
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			need := func() (string, bool) {
				if hasVal {
					return val, true
				}
				if i+1 >= len(args) {
					c.errorf("option '--%s' requires an argument", name)
					return "", false
				}
				i++
				return args[i], true
			}
			var ok = true
			var v string
			switch name {
			case "null":
				o.delim = 0
			case "arg-file":
				if v, ok = need(); ok {
					o.argFile, o.hasFile = v, true
				}
			case "delimiter":
				if v, ok = need(); ok {
					o.delim, ok = xargsDelim(c, v)
				}
			case "eof":
				o.eof, o.hasEOF = val, hasVal && val != ""
			case "replace":
				o.replace, o.hasRepl, o.lineItems = "{}", true, true
				if hasVal {
					o.replace = val
				}
			case "max-lines":
				o.maxLines, o.maxArgs = 1, 0
				if hasVal {
					o.maxLines, ok = number("L", val, 1)
				}
			case "max-args":
				if v, ok = need(); ok {
					o.maxArgs, ok = number("n", v, 1)
					o.maxLines = 0
				}
			case "max-procs":
				if v, ok = need(); ok {
					_, ok = number("P", v, 0)
				}
			case "max-chars":
				if v, ok = need(); ok {
					o.maxChars, ok = number("s", v, 1)
				}
			case "no-run-if-empty":
				o.noEmpty = true
			case "verbose":
				o.trace = true
			case "exit":
				o.exitSize = true
			case "open-tty", "process-slot-var":
				if name == "process-slot-var" {
					_, ok = need()
				}
			case "interactive":
				c.errorf("-p (--interactive) needs a terminal, which the sandbox does not have")
				return o, nil, false
			default:
				c.errorf("unrecognized option '%s'", a)
				xargsUsage(c)
				return o, nil, false
			}
			if !ok {
				return o, nil, false
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			f, rest := a[j], a[j+1:]
			var ok = true
			var v string
			switch f {
			case '0':
				o.delim = 0
				continue
			case 'r':
				o.noEmpty = true
				continue
			case 't':
				o.trace = true
				continue
			case 'x':
				o.exitSize = true
				continue
			case 'o':
				continue
			case 'p':
				c.errorf("-p (--interactive) needs a terminal, which the sandbox does not have")
				return o, nil, false
			case 'e': // optional value, in the same word
				o.eof, o.hasEOF = rest, rest != ""
			case 'i':
				o.replace, o.hasRepl, o.lineItems = "{}", true, true
				if rest != "" {
					o.replace = rest
				}
			case 'l':
				o.maxLines, o.maxArgs = 1, 0
				if rest != "" {
					o.maxLines, ok = number("l", rest, 1)
				}
			case 'a', 'd', 'E', 'I', 'L', 'n', 'P', 's':
				if v, ok = value(rest, f); !ok {
					xargsUsage(c)
					return o, nil, false
				}
				switch f {
				case 'a':
					o.argFile, o.hasFile = v, true
				case 'd':
					o.delim, ok = xargsDelim(c, v)
				case 'E':
					o.eof, o.hasEOF = v, v != ""
				case 'I':
					o.replace, o.hasRepl, o.lineItems = v, true, true
				case 'L':
					o.maxLines, ok = number("L", v, 1)
					o.maxArgs = 0
				case 'n':
					o.maxArgs, ok = number("n", v, 1)
					o.maxLines = 0
				case 'P':
					_, ok = number("P", v, 0)
				case 's':
					o.maxChars, ok = number("s", v, 1)
				}
			default:
				c.errorf("invalid option -- '%c'", f)
				xargsUsage(c)
				return o, nil, false
			}
			if !ok {
				if f == 'n' || f == 'L' || f == 's' || f == 'P' || f == 'l' {
					xargsUsage(c)
				}
				return o, nil, false
			}
			break // the option took the rest of the word
		}
	}
	return o, args[i:], true
}

// xargsDelim parses the argument of -d: one character or an escape.
func xargsDelim(c *call, s string) (int, bool) {
	bad := func() (int, bool) {
		c.errorf("Invalid input delimiter specification %s: the delimiter must be either a single character or an escape sequence starting with \\.", s)
		return 0, false
	}
	switch {
	case len(s) == 1:
		return int(s[0]), true
	case len(s) == 0 || s[0] != '\\':
		return bad()
	}
	switch s[1:] {
	case "a":
		return 7, true
	case "b":
		return 8, true
	case "f":
		return 12, true
	case "n":
		return '\n', true
	case "r":
		return '\r', true
	case "t":
		return '\t', true
	case "v":
		return 11, true
	case "\\":
		return '\\', true
	}
	if s[1] == 'x' {
		n, err := strconv.ParseUint(s[2:], 16, 8)
		if err != nil {
			return bad()
		}
		return int(n), true
	}
	n, err := strconv.ParseUint(s[1:], 8, 8)
	if err != nil {
		return bad()
	}
	return int(n), true
}

// xargsReader splits xargs' input into items, as GNU xargs does: by
// default at blanks and newlines, with '...' and "..." quoting (not across
// a newline) and a backslash taking the next character literally; with -I
// a whole line (less its leading blanks) is one item; with -0 or -d at the
// delimiter only, without quoting.
type xargsReader struct {
	r         *bufio.Reader
	delim     int
	lineItems bool
	eof       string
	hasEOF    bool
	max       int // the longest item
	done      bool
}

var (
	errXargsQuote   = errors.New("unmatched quote")
	errXargsTooLong = errors.New("argument line too long")
)

// next returns the next item, and whether it ends a line (for -L). A
// line whose last item is followed by a blank continues on the next line.
// At the end it returns io.EOF; quote names the unmatched quote.
func (x *xargsReader) next() (item string, eol bool, quote byte, err error) {
	if x.done {
		return "", false, 0, io.EOF
	}
	var b []byte
	add := func(ch byte) error {
		if len(b) >= x.max {
			return errXargsTooLong
		}
		b = append(b, ch)
		return nil
	}
	if x.delim >= 0 {
		for {
			ch, err := x.r.ReadByte()
			if err != nil {
				if errors.Is(err, io.EOF) {
					x.done = true
					if len(b) > 0 {
						return string(b), true, 0, nil
					}
				}
				return "", false, 0, err
			}
			if int(ch) == x.delim {
				return string(b), true, 0, nil
			}
			if err := add(ch); err != nil {
				return "", false, 0, err
			}
		}
	}
	started := false
	var inQuote byte
	for {
		ch, err := x.r.ReadByte()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return "", false, 0, err
			}
			x.done = true
			if inQuote != 0 {
				return "", false, inQuote, errXargsQuote
			}
			if !started {
				return "", false, 0, io.EOF
			}
			return x.finish(b, true)
		}
		switch {
		case inQuote != 0:
			if ch == inQuote {
				inQuote = 0
				continue
			}
			if ch == '\n' {
				x.done = true
				return "", false, inQuote, errXargsQuote
			}
		case ch == '\n':
			if started {
				return x.finish(b, true)
			}
			continue
		case ch == ' ' || ch == '\t':
			if !started {
				continue
			}
			if !x.lineItems {
				return x.finish(b, false)
			}
		case ch == '\'' || ch == '"':
			inQuote, started = ch, true
			continue
		case ch == '\\':
			next, err := x.r.ReadByte()
			if err != nil {
				next = '\\'
			}
			ch, started = next, true
		}
		started = true
		if err := add(ch); err != nil {
			return "", false, 0, err
		}
	}
}

// finish returns a completed item, unless it is the end-of-file string.
func (x *xargsReader) finish(b []byte, eol bool) (string, bool, byte, error) {
	if x.hasEOF && string(b) == x.eof {
		x.done = true
		return "", false, 0, io.EOF
	}
	return string(b), eol, 0, nil
}

func cmdXargs(c *call) int {
	o, command, ok := parseXargsOpts(c, c.args)
	if !ok {
		return 1
	}
	if len(command) == 0 {
		command = []string{"echo"}
	}
	in := c.stdin
	cmdIn := io.Reader(strings.NewReader("")) // GNU gives commands /dev/null
	if o.hasFile {
		r, done, err := c.openInput(o.argFile)
		if err != nil {
			c.errorf("Cannot open input file '%s': %s", o.argFile, errText(err))
			return 1
		}
		defer done()
		in = r
		cmdIn = c.stdin
		if c.rawIn != nil {
			cmdIn = c.rawIn
		}
	}
	baseSize := 0
	for _, a := range command {
		baseSize += len(a) + 1
	}
	limit := o.maxChars
	if max := c.maxBytes(); max > 0 && int64(limit) > max {
		limit = int(max)
	}
	x := &xargsReader{r: bufio.NewReaderSize(in, 64<<10), delim: o.delim, lineItems: o.lineItems,
		eof: o.eof, hasEOF: o.hasEOF && o.delim < 0, max: limit}
	if o.hasRepl {
		o.maxLines, o.maxArgs = 1, 0
	}
	status := 0
	ran := false
	// run runs one command line; stop reports a status that ends xargs.
	run := func(argv []string) (stop bool, st int) {
		ran = true
		if o.trace {
			fmt.Fprintln(c.stderr, strings.Join(argv, " "))
		}
		code, found := c.runCommand(c.ctx, argv, cmdIn)
		switch {
		case c.stopped():
			return true, 1
		case !found:
			c.errorf("%s: No such file or directory", argv[0])
			return true, 127
		case code == 0:
		case code == 255:
			c.errorf("%s: exited with status 255; aborting", argv[0])
			return true, 124
		case code == 126 || code == 127:
			return true, code
		case code > 128 && code < 255:
			c.errorf("%s: terminated by signal %d", argv[0], code-128)
			return true, 125
		default:
			status = 123
		}
		return false, 0
	}
	var batch []string
	size, lines := baseSize, 0
	flush := func() (bool, int) {
		argv := append(append([]string(nil), command...), batch...)
		batch, size, lines = nil, baseSize, 0
		return run(argv)
	}
	for !c.stopped() {
		item, eol, quote, err := x.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// GNU runs what it has read before the error.
			if len(batch) > 0 {
				if stop, st := flush(); stop {
					return st
				}
			}
			switch {
			case errors.Is(err, errXargsQuote):
				kind := "double"
				if quote == '\'' {
					kind = "single"
				}
				c.errorf("unmatched %s quote; by default quotes are special to xargs unless you use the -0 option", kind)
			case errors.Is(err, errXargsTooLong):
				c.errorf("argument line too long")
			default:
				c.errorf("%s", errText(err))
			}
			return 1
		}
		if o.hasRepl {
			argv := make([]string, len(command))
			total := 0
			for i, a := range command {
				argv[i] = strings.ReplaceAll(a, o.replace, item)
				total += len(argv[i]) + 1
				if total > limit {
					c.errorf("argument line too long")
					return 1
				}
			}
			if stop, st := run(argv); stop {
				return st
			}
			continue
		}
		if size+len(item)+1 > limit {
			if len(batch) == 0 || o.exitSize {
				c.errorf("argument line too long")
				return 1
			}
			if stop, st := flush(); stop {
				return st
			}
			if size+len(item)+1 > limit {
				c.errorf("argument line too long")
				return 1
			}
		}
		batch = append(batch, item)
		size += len(item) + 1
		if eol {
			lines++
		}
		if o.maxArgs > 0 && len(batch) >= o.maxArgs || o.maxLines > 0 && lines >= o.maxLines {
			if stop, st := flush(); stop {
				return st
			}
		}
	}
	if c.stopped() {
		return 1
	}
	if len(batch) > 0 || !ran && !o.noEmpty && !o.hasRepl {
		if stop, st := flush(); stop {
			return st
		}
	}
	return status
}
