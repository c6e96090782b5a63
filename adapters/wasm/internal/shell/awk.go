package shell

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/benhoyt/goawk/interp"
	"github.com/benhoyt/goawk/lexer"
	"github.com/benhoyt/goawk/parser"
)

// awk is GoAWK (github.com/benhoyt/goawk), a POSIX awk with the usual gawk
// extensions models rely on (nextfile, fflush, length of arrays, printf %c
// and so on). GoAWK opens files with the os package, which goes around
// the shell's own file handling (a relative name would be taken from the
// guest process's directory, not the shell's current one, with none of
// "outside the workspace", the refusal of links, MaxFileBytes or the stop
// of c.ctx), so it runs with NoExec, NoFileReads and NoFileWrites, and the
// shell feeds it its input instead:
//
//   - Every file operand becomes "-" and awkInput, the program's stdin,
//     yields the files one after the other, through c.openInput (so confined
//     to the workspace and stopping with c.ctx), reporting io.EOF at the end
//     of each: GoAWK then moves on to the next "-", resetting FNR, so NR==FNR
//     joins work as usual.
//   - FILENAME, ARGV and ARGC would then show those "-"; the program is
//     rewritten at the token level to use variables of its own instead,
//     which operands ("name=value", interpreted by GoAWK between files) and
//     a BEGIN action put in front of the program set to what awk would show.
//   - nextfile skips the rest of the current file in awkInput too, through
//     a Go function the rewrite calls just before it.
//
// Reading another file with getline < "file", writing one with print >
// "file", pipes and system() are refused with a message saying so: file
// access would go around the shell's file handling, as above (not around
// the quota: workspace.NewSysFS charges every byte written through a
// mount, whoever writes it), and the guest cannot start a process; the
// shell's redirections and pipes do the same jobs.
func cmdAwk(c *call) int {
	var (
		fs       string
		hasFS    bool
		vars     []string
		progFile []string
		args     = c.args
		i        int
	)
	for i = 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		val := func(opt string) (string, bool) {
			if len(a) > len(opt) {
				return a[len(opt):], true
			}
			if i+1 >= len(args) {
				c.errorf("option requires an argument -- '%s'", opt[1:])
				return "", false
			}
			i++
			return args[i], true
		}
		var ok bool
		switch {
		case strings.HasPrefix(a, "--field-separator="):
			fs, hasFS = a[len("--field-separator="):], true
		case strings.HasPrefix(a, "--assign="):
			vars = append(vars, a[len("--assign="):])
		case strings.HasPrefix(a, "--file="):
			progFile = append(progFile, a[len("--file="):])
		case a == "--version":
			fmt.Fprintln(c.stdout, "awk (GoAWK v1.29.1 in codeport)")
			return 0
		case strings.HasPrefix(a, "-F"):
			if fs, ok = val("-F"); !ok {
				return 2
			}
			hasFS = true
		case strings.HasPrefix(a, "-v"):
			v, ok := val("-v")
			if !ok {
				return 2
			}
			vars = append(vars, v)
		case strings.HasPrefix(a, "-f"):
			v, ok := val("-f")
			if !ok {
				return 2
			}
			progFile = append(progFile, v)
		default:
			c.errorf("invalid option -- '%s'", strings.TrimLeft(a, "-"))
			fmt.Fprintln(c.stderr, "usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]")
			return 2
		}
	}
	args = args[i:]
	var src []byte
	if len(progFile) > 0 {
		for _, pf := range progFile {
			r, done, err := c.openInput(pf)
			if err != nil {
				c.errorf("fatal: can't open source file '%s' for reading: %s", pf, errText(err))
				return 2
			}
			data, err := c.readAll(r)
			done()
			if err != nil {
				c.errorf("fatal: can't read source file '%s': %s", pf, errText(err))
				return 2
			}
			src = append(src, data...)
			src = append(src, '\n')
		}
	} else {
		if len(args) == 0 {
			fmt.Fprintln(c.stderr, "usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]")
			return 2
		}
		src = []byte(args[0])
		args = args[1:]
	}

	config := &interp.Config{
		Argv0:        "awk",
		Environ:      awkEnviron(c),
		NoExec:       true,
		NoFileReads:  true,
		NoFileWrites: true,
		ShellCommand: []string{"/bin/false"},
	}
	if hasFS {
		if fs == "t" {
			fs = "\t"
		} else if u, err := lexer.Unescape(fs); err == nil {
			fs = u
		}
		config.Vars = append(config.Vars, "FS", fs)
	}
	for _, v := range vars {
		name, value, ok := strings.Cut(v, "=")
		if !ok || !awkVarName.MatchString(name) {
			c.errorf("fatal: '%s' is not a legal variable name", name)
			return 2
		}
		if u, err := lexer.Unescape(value); err == nil {
			value = u
		}
		config.Vars = append(config.Vars, name, value)
	}

	// Check the program as the user wrote it, for messages with their
	// positions.
	if _, err := parser.ParseProgram(src, nil); err != nil {
		return c.awkParseError(src, err)
	}

	in := &awkInput{c: c}
	argv := []string{"awk"}
	for _, a := range args {
		argv = append(argv, a)
		if m := awkAssign.FindStringSubmatch(a); m != nil {
			config.Args = append(config.Args, a)
			continue
		}
		if a == "" {
			continue
		}
		config.Args = append(config.Args, awkFilenameVar+"="+strings.ReplaceAll(a, `\`, `\\`), "-")
		in.files = append(in.files, a)
	}
	if len(in.files) == 0 {
		// Stdin after any assignments, named "-" as gawk does.
		config.Args = append(config.Args, awkFilenameVar+"=-", "-")
		in.files = []string{"-"}
	}
	funcs := map[string]any{awkSkipFunc: in.skip}
	prog, err := parser.ParseProgram(awkRewrite(src, argv), &parser.ParserConfig{Funcs: funcs})
	if err != nil {
		// The rewrite broke a program that parsed: run it as written.
		prog, err = parser.ParseProgram(src, nil)
		if err != nil {
			return c.awkParseError(src, err)
		}
	}
	config.Funcs = funcs
	w := c.out()
	config.Stdin = in
	config.Output = w
	config.Error = c.stderr
	vm, err := interp.New(prog)
	if err != nil {
		return c.awkParseError(src, err)
	}
	status, err := vm.ExecuteContext(c.ctx, config)
	in.close()
	if ferr := w.Flush(); ferr != nil && err == nil {
		return c.writeFailed(ferr)
	}
	if c.stopped() {
		return 1
	}
	if in.err != nil {
		c.errorf("fatal: cannot open file '%s' for reading: %s", in.errName, errText(in.err))
		return 2
	}
	if err != nil {
		c.errorf("fatal: %s", awkErrText(err))
		return 2
	}
	return status
}

var (
	awkVarName = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)
	awkAssign  = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*=`)
)

// The names the rewritten program uses for the shell's own purposes.
const (
	awkFilenameVar = "__codeport_FILENAME"
	awkArgvVar     = "__codeport_ARGV"
	awkArgcVar     = "__codeport_ARGC"
	awkSkipFunc    = "__codeport_nextfile"
)

// awkParseError prints a GoAWK parse error the way gawk does: the line, a
// caret under the column, the message, and status 1.
func (c *call) awkParseError(src []byte, err error) int {
	var pe *parser.ParseError
	if !errors.As(err, &pe) {
		c.errorf("%s", err)
		return 1
	}
	lines := strings.Split(string(src), "\n")
	line := ""
	if n := pe.Position.Line; n >= 1 && n <= len(lines) {
		line = lines[n-1]
	}
	col := min(max(pe.Position.Column-1, 0), len(line))
	pad := strings.Map(func(r rune) rune {
		if r == '\t' {
			return r
		}
		return ' '
	}, line[:col])
	c.errorf("cmd. line:%d: %s", pe.Position.Line, line)
	c.errorf("cmd. line:%d: %s^ %s", pe.Position.Line, pad, pe.Message)
	return 1
}

// awkErrText rewords GoAWK's refusals of what the shell disables.
func awkErrText(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "NoExec"):
		return "running commands (system(), | pipes) is not supported in this sandbox; use the shell around awk instead"
	case strings.Contains(msg, "NoFileWrites"):
		return "writing to files from awk (print > file) is not supported in this sandbox; redirect awk's output in the shell instead"
	case strings.Contains(msg, "NoFileReads"):
		return "reading files with getline < file is not supported in this sandbox; give the file as an operand instead"
	}
	return msg
}

// awkEnviron is ENVIRON: the shell's exported variables, not the process's.
func awkEnviron(c *call) []string {
	list := []string{}
	for _, kv := range exportedEnv(c.env) {
		name, value, _ := strings.Cut(kv, "=")
		list = append(list, name, value)
	}
	return list
}

// awkRewrite makes the program use the shell's FILENAME, ARGV and ARGC, and
// tell awkInput about nextfile. It works on GoAWK's tokens (reading a "/"
// where an operand may start as a regular expression, as the parser does),
// so names inside strings and regular expressions stay as they are.
func awkRewrite(src []byte, argv []string) []byte {
	type edit struct {
		off, end int
		with     string
	}
	var edits []edit
	lineStart := []int{0}
	for i, b := range src {
		if b == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	offset := func(p lexer.Position) int {
		if p.Line < 1 || p.Line > len(lineStart) {
			return -1
		}
		return lineStart[p.Line-1] + p.Column - 1
	}
	lx := lexer.NewLexer(src)
	prev := lexer.NEWLINE
	usesArgv := false
	for n := 0; n < 1<<20; n++ {
		pos, tok, val := lx.Scan()
		if tok == lexer.EOF || tok == lexer.ILLEGAL {
			break
		}
		if (tok == lexer.DIV || tok == lexer.DIV_ASSIGN) && !awkEndsOperand(prev) {
			_, tok, _ = lx.ScanRegex()
			if tok != lexer.REGEX {
				break
			}
			prev = tok
			continue
		}
		off := offset(pos)
		if off < 0 || off > len(src) {
			break
		}
		switch {
		case tok == lexer.NAME && (val == "FILENAME" || val == "ARGV" || val == "ARGC"):
			if val != "FILENAME" {
				usesArgv = true
			}
			if off+len(val) <= len(src) && string(src[off:off+len(val)]) == val {
				edits = append(edits, edit{off, off + len(val), "__codeport_" + val})
			}
		case tok == lexer.NEXTFILE:
			if off+8 <= len(src) && string(src[off:off+8]) == "nextfile" {
				edits = append(edits, edit{off, off + 8, "{ " + awkSkipFunc + "(); nextfile }"})
			}
		}
		prev = tok
	}
	var b strings.Builder
	if usesArgv {
		// On the first line, so that positions after it stay right.
		fmt.Fprintf(&b, "BEGIN { %s = %d; ", awkArgcVar, len(argv))
		for i, a := range argv {
			fmt.Fprintf(&b, "%s[%d] = %s; ", awkArgvVar, i, awkQuote(a))
		}
		b.WriteString("} ")
	}
	last := 0
	for _, e := range edits {
		b.Write(src[last:e.off])
		b.WriteString(e.with)
		last = e.end
	}
	b.Write(src[last:])
	return []byte(b.String())
}

// awkEndsOperand reports whether a "/" after tok is division.
func awkEndsOperand(tok lexer.Token) bool {
	switch tok {
	case lexer.NAME, lexer.NUMBER, lexer.STRING, lexer.REGEX, lexer.RPAREN,
		lexer.RBRACKET, lexer.INCR, lexer.DECR, lexer.DOLLAR, lexer.F_LENGTH:
		return true
	}
	return false
}

// awkQuote is s as an awk string literal.
func awkQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case '\n':
			b.WriteString(`\n`)
		default:
			if ch < ' ' || ch == 0x7f {
				b.WriteString("\\" + strconv.FormatInt(int64(ch), 8))
			} else {
				b.WriteByte(ch)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// awkInput is the program's stdin: the input files one after the other,
// with io.EOF at the end of each (see cmdAwk). An operand that cannot be
// opened ends the input; cmdAwk then reports it.
type awkInput struct {
	c        *call
	files    []string
	next     int // index of the next file to open
	cur      io.Reader
	done     func()
	skipRest bool // nextfile: drop the rest of cur at the next read
	ended    bool // cur ended: the next read reports io.EOF
	err      error
	errName  string
}

func (in *awkInput) Read(p []byte) (int, error) {
	if in.err != nil {
		return 0, in.err
	}
	if in.skipRest {
		in.skipRest = false
		in.close()
	}
	if in.ended {
		in.ended = false
		return 0, io.EOF
	}
	if in.cur == nil {
		if in.next >= len(in.files) {
			return 0, io.EOF
		}
		name := in.files[in.next]
		in.next++
		if name != "-" {
			if fi, err := in.c.stat(name); err == nil && fi.IsDir() {
				in.c.errorf("warning: command line argument '%s' is a directory: skipped", name)
				return 0, io.EOF
			}
		}
		r, done, err := in.c.openInput(name)
		if err != nil {
			in.err, in.errName = err, name
			return 0, err
		}
		in.cur, in.done = r, done
	}
	n, err := in.cur.Read(p)
	if errors.Is(err, io.EOF) {
		in.close()
		if n > 0 {
			in.ended = true
			return n, nil
		}
		return 0, io.EOF
	}
	if err != nil && in.c.stopped() {
		return n, err
	}
	if err != nil {
		in.err, in.errName = err, in.files[in.next-1]
	}
	return n, err
}

// skip is what the rewritten nextfile calls.
func (in *awkInput) skip() {
	if in.cur != nil {
		in.skipRest = true
	}
	in.ended = false
}

func (in *awkInput) close() {
	if in.done != nil {
		in.done()
	}
	in.cur, in.done = nil, nil
}
