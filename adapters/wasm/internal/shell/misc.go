package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// builtinOnly are the commands of the table that exist only as shell
// builtins, never as files in $PATH.
var builtinOnly = map[string]bool{"cd": true, "command": true, "type": true}

// run runs the command c names, after dispatch set up its streams.
func (c *call) run() int {
	if c.name == tooManyTestArgs {
		fmt.Fprintf(c.stderr, "bash: %s: too many arguments\n", c.args[0])
		return 2
	}
	if strings.Contains(c.name, "/") {
		return c.runFile()
	}
	cmd, ok := commands[c.name]
	if !ok {
		fmt.Fprintf(c.stderr, "bash: %s: command not found\n", c.name)
		return 127
	}
	return cmd(c)
}

// available reports whether name is a command of the table that can run
// here.
func (c *call) available(name string) bool {
	_, ok := commands[name]
	if (name == "python" || name == "python3") && c.sh.opts.Python == nil {
		return false
	}
	return ok
}

func cmdEcho(c *call) int {
	c.name = "bash: echo"
	args := c.args
	newline, escapes := true, false
	for len(args) > 0 && isEchoOption(args[0]) {
		for _, f := range args[0][1:] {
			switch f {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	w := c.out()
	for i, a := range args {
		if i > 0 {
			w.WriteByte(' ')
		}
		if !escapes {
			w.WriteString(a)
			continue
		}
		s, stop := echoEscapes(a)
		w.WriteString(s)
		if stop {
			return c.flush(w, 0)
		}
	}
	if newline {
		w.WriteByte('\n')
	}
	return c.flush(w, 0)
}

func isEchoOption(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	return strings.Trim(a[1:], "neE") == ""
}

// echoEscapes expands the backslash escapes of echo -e. stop is set by \c,
// which ends the output.
func echoEscapes(s string) (out string, stop bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '\\':
			b.WriteByte(s[i])
		case i+1 < len(s) && s[i+1] == 'c':
			return b.String(), true
		default:
			i += printfEscape(&b, s[i+1:], true)
		}
	}
	return b.String(), false
}

func cmdPrintf(c *call) int {
	c.name = "bash: printf"
	args := c.args
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "-v" {
		c.errorf("-v is not supported here; use var=$(printf ...)")
		return 2
	}
	if len(args) == 0 {
		c.errorf("usage: printf [-v var] format [arguments]")
		return 2
	}
	format, args := args[0], args[1:]
	w := c.out()
	status := 0
	for !c.stopped() {
		s, n, errs, stop := printfOnce(format, args)
		for _, e := range errs {
			c.errorf("%s", e)
			status = 1
		}
		if _, err := w.WriteString(s); err != nil {
			return c.writeFailed(err)
		}
		args = args[n:]
		if stop || n == 0 || len(args) == 0 {
			break
		}
	}
	return c.flush(w, status)
}

func cmdPwd(c *call) int {
	c.name = "bash: pwd"
	for _, a := range c.args {
		if a != "-L" && a != "-P" {
			c.errorf("%s: invalid option", a)
			return 2
		}
	}
	if _, err := io.WriteString(c.stdout, c.dir+"\n"); err != nil {
		return c.writeFailed(err)
	}
	return 0
}

// cmdCd runs only for a cd the call handler found to be refused: it
// explains why. (cd itself is the interpreter's builtin.)
func cmdCd(c *call) int {
	_, msg := c.sh.cdTarget(c.ctx, c.dir, c.env, c.args)
	if msg == "" {
		msg = "cannot change directory here"
	}
	fmt.Fprintf(c.stderr, "bash: cd: %s\n", msg)
	return 1
}

// kind describes what a command name is: "keyword", "builtin", "file" or
// "" (not found).
func (c *call) kind(name string) string {
	switch {
	case syntax.IsKeyword(name):
		return "keyword"
	case interp.IsBuiltin(name):
		return "builtin"
	case c.available(name):
		return "file"
	}
	return ""
}

func cmdType(c *call) int {
	c.name = "bash: type"
	mode := ""
	args := c.args
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		for _, f := range args[0][1:] {
			switch f {
			case 't', 'p', 'P':
				mode = string(f)
			case 'a', 'f':
			default:
				c.errorf("-%c: invalid option", f)
				return 2
			}
		}
		args = args[1:]
	}
	status := 0
	for _, name := range args {
		k := c.kind(name)
		switch {
		case k == "":
			if mode == "" {
				c.errorf("%s: not found", name)
			}
			status = 1
		case mode == "t":
			fmt.Fprintln(c.stdout, k)
		case mode == "p" || mode == "P":
			if k == "file" {
				fmt.Fprintf(c.stdout, "/usr/bin/%s\n", name)
			} else if mode == "P" {
				status = 1
			}
		case k == "keyword":
			fmt.Fprintf(c.stdout, "%s is a shell keyword\n", name)
		case k == "builtin":
			fmt.Fprintf(c.stdout, "%s is a shell builtin\n", name)
		default:
			fmt.Fprintf(c.stdout, "%s is /usr/bin/%s\n", name, name)
		}
	}
	return status
}

// cmdCommandV is "command -v" and "command -V" (the call handler diverts
// only those; command itself is the interpreter's builtin).
func cmdCommandV(c *call) int {
	if len(c.args) == 0 {
		return 0
	}
	verbose := c.args[0] == "-V"
	status := 0
	for _, name := range c.args[1:] {
		k := c.kind(name)
		switch {
		case k == "":
			if verbose {
				fmt.Fprintf(c.stderr, "bash: command: %s: not found\n", name)
			}
			status = 1
		case verbose:
			c.args = []string{name}
			cmdType(c)
		case k == "file":
			fmt.Fprintf(c.stdout, "/usr/bin/%s\n", name)
		default:
			fmt.Fprintln(c.stdout, name)
		}
	}
	return status
}

func cmdWhich(c *call) int {
	status := 0
	for _, name := range c.args {
		if strings.HasPrefix(name, "-") {
			continue
		}
		if strings.Contains(name, "/") {
			if t, err := c.target(name); err == nil && t.dev == "" {
				if info, err := c.sh.fs.stat(c.ctx, t.rel); err == nil && info.Mode().IsRegular() && info.Mode()&0o100 != 0 {
					fmt.Fprintln(c.stdout, name)
					continue
				}
			}
			status = 1
			continue
		}
		if !c.available(name) || builtinOnly[name] {
			status = 1
			continue
		}
		fmt.Fprintf(c.stdout, "/usr/bin/%s\n", name)
	}
	return status
}

func cmdEnv(c *call) int {
	args := c.args
	clear := false
	var unset, set []string
loop:
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-i" || a == "-" || a == "--ignore-environment":
			clear = true
		case a == "-u" && len(args) > 1:
			unset = append(unset, args[1])
			args = args[1:]
		case a == "--":
			args = args[1:]
			break loop
		case strings.HasPrefix(a, "-"):
			c.errorf("invalid option -- '%s'", strings.TrimLeft(a, "-"))
			return 125
		case strings.Contains(a, "="):
			set = append(set, a)
		default:
			break loop
		}
		args = args[1:]
	}
	for len(args) > 0 && strings.Contains(args[0], "=") {
		set = append(set, args[0])
		args = args[1:]
	}
	var list []string
	if !clear {
		list = exportedEnv(c.env)
	}
	list = slices.DeleteFunc(list, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(unset, name)
	})
	list = append(list, set...)
	env := expand.ListEnviron(list...) // later pairs win, the list comes out sorted
	if len(args) == 0 {
		w := c.out()
		for _, kv := range exportedEnv(env) {
			w.WriteString(kv + "\n")
		}
		return c.flush(w, 0)
	}
	sub := *c
	sub.name, sub.args, sub.env = args[0], args[1:], env
	if _, ok := commands[sub.name]; !ok && !strings.Contains(sub.name, "/") {
		c.errorf("'%s': No such file or directory", sub.name)
		return 127
	}
	// "env env env ... cmd" recurses once per word.
	if c.sh.guard.tooDeep() {
		c.sh.refuse(c.name)
		return 1
	}
	return sub.run()
}

func cmdSleep(c *call) int {
	if len(c.args) == 0 {
		c.errorf("missing operand")
		return 1
	}
	var total time.Duration
	for _, a := range c.args {
		d, ok := parseSleep(a)
		if !ok {
			c.errorf("invalid time interval '%s'", a)
			return 1
		}
		total += d
		if total < 0 || d == math.MaxInt64 {
			total = math.MaxInt64
		}
	}
	t := time.NewTimer(total)
	defer t.Stop()
	select {
	case <-t.C:
		return 0
	case <-c.ctx.Done():
		return 1
	}
}

func parseSleep(s string) (time.Duration, bool) {
	if s == "inf" || s == "infinity" {
		return math.MaxInt64, true
	}
	unit := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		s, unit = s[:len(s)-1], time.Minute
	case strings.HasSuffix(s, "h"):
		s, unit = s[:len(s)-1], time.Hour
	case strings.HasSuffix(s, "d"):
		s, unit = s[:len(s)-1], 24*time.Hour
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsNaN(f) {
		return 0, false
	}
	if f*float64(unit) >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	return time.Duration(f * float64(unit)), true
}

func cmdPython(c *call) int {
	py := c.sh.opts.Python
	if py == nil {
		fmt.Fprintf(c.stderr, "%s: not available\n", c.name)
		return 127
	}
	argv := append([]string{c.name}, c.args...)
	// The program runs while the shell waits for it, so its input is
	// read first, whole (a pipeline of two python commands cannot
	// deadlock on it).
	stdin, err := c.readAll(c.stdin)
	if err != nil {
		if c.stopped() {
			return 1
		}
		fmt.Fprintf(c.stderr, "%s: standard input: %s\n", c.name, errText(err))
		return 1
	}
	ctx := context.WithValue(c.ctx, invocationKey{}, Invocation{Dir: c.dir, Env: exportedEnv(c.env)})
	code, err := py(ctx, argv, stdin, c.stdout, c.stderr)
	if err != nil {
		if c.ctx.Err() != nil {
			return 1
		}
		fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err)
		if code == 0 {
			code = 1
		}
	}
	return min(max(code, 0), 255)
}

func cmdBash(c *call) int {
	var params []string // shell options for interp.Params
	command := false
	args := c.args
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			args = args[1:]
			break
		}
		if a == "-" || len(a) < 2 || a[0] != '-' && a[0] != '+' {
			break
		}
		if strings.HasPrefix(a, "--") {
			args = args[1:] // --norc, --noprofile, --login, ...
			continue
		}
		if a[1] == 'o' && len(a) == 2 {
			if len(args) < 2 {
				fmt.Fprintf(c.stderr, "%s: %s: option requires an argument\n", c.name, a)
				return 2
			}
			params = append(params, a, args[1])
			args = args[2:]
			continue
		}
		for _, f := range a[1:] {
			switch f {
			case 'c':
				command = true
			case 'e', 'u', 'x', 'f', 'a', 'n':
				params = append(params, string(a[0])+string(f))
			case 'l', 'i', 's', 'v':
			default:
				fmt.Fprintf(c.stderr, "%s: -%c: invalid option\n", c.name, f)
				return 2
			}
		}
		args = args[1:]
	}
	switch {
	case command:
		if len(args) == 0 {
			fmt.Fprintf(c.stderr, "%s: -c: option requires an argument\n", c.name)
			return 2
		}
		src, name, rest := args[0], c.name, []string(nil)
		if len(args) > 1 {
			name, rest = args[1], args[2:]
		}
		return c.runShell(src, name, params, rest)
	case len(args) > 0 && args[0] != "-":
		r, done, err := c.openInput(args[0])
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: %s: %s\n", c.name, args[0], errText(err))
			return 127
		}
		src, err := c.readAll(r)
		done()
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: %s: %s\n", c.name, args[0], errText(err))
			return 126
		}
		return c.runShell(string(src), args[0], params, args[1:])
	}
	src, err := c.readAll(c.stdin)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: reading the script: %s\n", c.name, errText(err))
		return 2
	}
	return c.runShell(string(src), c.name, params, nil)
}

// runShell runs src in a new interpreter: a child shell, which starts with
// the current directory and the exported variables.
func (c *call) runShell(src, name string, opts, params []string) int {
	file, code, nested := c.sh.parse(src, name, c.stderr)
	if nested {
		// As deep as a function call could go: the whole run ends.
		c.sh.refuse(c.name)
		return 1
	}
	if file == nil {
		return code
	}
	r, err := c.sh.newRunner(c.name, c.dir, exportedEnv(c.env), c.rawIn, c.stdout, c.stderr)
	if err != nil {
		fmt.Fprintf(c.stderr, "bash: %v\n", err)
		return 1
	}
	if err := interp.Params(append(slices.Clone(opts), append([]string{"--"}, params...)...)...)(r); err != nil {
		fmt.Fprintf(c.stderr, "bash: %v\n", err)
		return 2
	}
	code, _ = c.sh.runFile(c.ctx, r, file, c.stderr)
	return code
}

// runFile runs a command named by a path (./script.sh): a shell script, or
// a Python one by its #! line. It must be executable, as in bash.
func (c *call) runFile() int {
	t, err := c.target(c.name)
	if err == nil && t.dev != "" {
		err = fs.ErrPermission
	}
	var info fs.FileInfo
	if err == nil {
		info, err = c.sh.fs.stat(c.ctx, t.rel)
	}
	switch {
	case err != nil:
		fmt.Fprintf(c.stderr, "bash: %s: %s\n", c.name, errText(err))
		if errors.Is(err, fs.ErrNotExist) {
			return 127
		}
		return 126
	case info.IsDir():
		fmt.Fprintf(c.stderr, "bash: %s: Is a directory\n", c.name)
		return 126
	case info.Mode()&0o100 == 0:
		fmt.Fprintf(c.stderr, "bash: %s: Permission denied\n", c.name)
		return 126
	}
	f, err := c.sh.fs.open(c.ctx, t.rel)
	if err != nil {
		fmt.Fprintf(c.stderr, "bash: %s: %s\n", c.name, errText(err))
		return 126
	}
	src, err := c.readAll(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(c.stderr, "bash: %s: %s\n", c.name, errText(err))
		return 126
	}
	first, _, _ := strings.Cut(string(src[:min(len(src), 512)]), "\n")
	prog := ""
	if line, ok := strings.CutPrefix(first, "#!"); ok {
		words := strings.Fields(line)
		if len(words) > 0 {
			prog = path.Base(words[0])
			if prog == "env" && len(words) > 1 {
				prog = path.Base(words[1])
			}
		}
	}
	switch {
	case prog == "" || prog == "sh" || prog == "bash" || prog == "dash":
		if !utf8.Valid(src[:min(len(src), 512)]) || strings.IndexByte(first, 0) >= 0 {
			fmt.Fprintf(c.stderr, "bash: %s: cannot execute binary file\n", c.name)
			return 126
		}
		return c.runShell(string(src), c.name, nil, c.args)
	case prog == "python" || strings.HasPrefix(prog, "python3"):
		sub := *c
		sub.name, sub.args = "python3", append([]string{c.name}, c.args...)
		return cmdPython(&sub)
	}
	fmt.Fprintf(c.stderr, "bash: %s: %s: bad interpreter: No such file or directory\n", c.name, strings.TrimSpace(strings.TrimPrefix(first, "#!")))
	return 126
}

func cmdSeq(c *call) int {
	sep, width := "\n", false
	userFormat, hasFormat := "", false
	var nums []string
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-s" && i+1 < len(args):
			i++
			sep = args[i]
		case strings.HasPrefix(a, "-s") && len(a) > 2 && !isNumber(a):
			sep = a[2:]
		case a == "-w" || a == "--equal-width":
			width = true
		case (a == "-f" || a == "--format") && i+1 < len(args):
			i++
			userFormat, hasFormat = args[i], true
		case strings.HasPrefix(a, "-f") && len(a) > 2:
			userFormat, hasFormat = a[2:], true
		case strings.HasPrefix(a, "--format="):
			userFormat, hasFormat = a[len("--format="):], true
		case strings.HasPrefix(a, "--separator="):
			sep = a[len("--separator="):]
		case a == "--separator" && i+1 < len(args):
			i++
			sep = args[i]
		case a == "--":
		default:
			if !isNumber(a) {
				c.errorf("invalid floating point argument: '%s'", a)
				return 1
			}
			nums = append(nums, a)
		}
	}
	if len(nums) == 0 || len(nums) > 3 {
		c.errorf("usage: seq [-s SEP] [-w] [FIRST [INCREMENT]] LAST")
		return 1
	}
	first, incr, last := "1", "1", nums[len(nums)-1]
	if len(nums) > 1 {
		first = nums[0]
	}
	if len(nums) == 3 {
		incr = nums[1]
	}
	decimals := 0
	for _, n := range []string{first, incr} {
		if i := strings.IndexByte(n, '.'); i >= 0 {
			decimals = max(decimals, len(n)-i-1)
		}
	}
	f, _ := strconv.ParseFloat(first, 64)
	step, _ := strconv.ParseFloat(incr, 64)
	end, _ := strconv.ParseFloat(last, 64)
	if step == 0 {
		c.errorf("invalid Zero increment value: '%s'", incr)
		return 1
	}
	format := func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
	if hasFormat {
		if width {
			c.errorf("format string may not be specified when printing equal width strings")
			return 1
		}
		goFormat, err := seqFormat(userFormat)
		if err != nil {
			c.errorf("%s", err)
			return 1
		}
		format = func(v float64) string { return fmt.Sprintf(goFormat, v) }
	}
	pad := 0
	if width {
		pad = max(len(format(f)), len(format(end)))
	}
	w := c.out()
	for i := 0; ; i++ {
		v := f + float64(i)*step
		if step > 0 && v > end+1e-9 || step < 0 && v < end-1e-9 {
			break
		}
		if i%1024 == 1023 && c.ctx.Err() != nil {
			return 1
		}
		if i > 0 {
			w.WriteString(sep)
		}
		s := format(v)
		if pad > 0 && len(s) < pad {
			neg := strings.HasPrefix(s, "-")
			s = strings.TrimPrefix(s, "-")
			s = strings.Repeat("0", pad-len(s)-btoi(neg)) + s
			if neg {
				s = "-" + s
			}
		}
		if _, err := w.WriteString(s); err != nil {
			return c.writeFailed(err)
		}
	}
	if f <= end && step > 0 || f >= end && step < 0 {
		w.WriteString("\n")
	}
	return c.flush(w, 0)
}

// seqFormat turns the printf format of seq -f, which must hold exactly one
// floating-point directive (%e, %f, %g, %E, %F, %G with flags, width and
// precision) and any number of %%, into a Go format. C's %g without a
// precision has 6 digits, Go's as many as needed.
func seqFormat(f string) (string, error) {
	var b strings.Builder
	directives := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			b.WriteString("%%")
			i++
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0'", f[j]) >= 0 {
			j++
		}
		flags := strings.ReplaceAll(f[i+1:j], "'", "")
		k := j
		for k < len(f) && f[k] >= '0' && f[k] <= '9' {
			k++
		}
		widthStr := f[j:k]
		prec := ""
		if k < len(f) && f[k] == '.' {
			p := k + 1
			for p < len(f) && f[p] >= '0' && f[p] <= '9' {
				p++
			}
			prec = "." + f[k+1:p]
			if prec == "." {
				prec = ".0"
			}
			k = p
		}
		for k < len(f) && strings.IndexByte("hlLqjzt", f[k]) >= 0 {
			k++ // length modifiers: a long double is a double here
		}
		if k >= len(f) {
			return "", fmt.Errorf("format '%s' ends in %%", f)
		}
		verb := f[k]
		switch verb {
		case 'e', 'f', 'g', 'E', 'F', 'G':
		default:
			return "", fmt.Errorf("format '%s' has unknown %%%c directive", f, verb)
		}
		if directives++; directives > 1 {
			return "", fmt.Errorf("format '%s' has too many %% directives", f)
		}
		if (verb == 'g' || verb == 'G') && prec == "" {
			prec = ".6"
		}
		if verb == 'F' {
			verb = 'f'
		}
		b.WriteString("%" + flags + widthStr + prec + string(verb))
		i = k
	}
	if directives == 0 {
		return "", fmt.Errorf("format '%s' has no %% directive", f)
	}
	return b.String(), nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && !strings.ContainsAny(s, "xXpPnN_")
}

// basename prints NAME without its directory (and SUFFIX); -a takes
// several names, -s SUFFIX (which implies -a) strips it from each, -z ends
// the lines with NUL.
func cmdBasename(c *call) int {
	o, args, ok := c.getopt(c.args, "az", "s", map[string]byte{"multiple": 'a', "suffix": 's', "zero": 'z'})
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errorf("missing operand")
		return 1
	}
	suffix := o.last('s', "")
	multiple := o.has('a') || len(o.vals['s']) > 0
	if !multiple {
		if len(args) > 2 {
			c.errorf("extra operand '%s'", args[2])
			return 1
		}
		if len(args) == 2 {
			suffix = args[1]
		}
		args = args[:1]
	}
	end := "\n"
	if o.has('z') {
		end = "\x00"
	}
	w := c.out()
	for _, a := range args {
		name := strings.TrimRight(a, "/")
		if name == "" && a != "" {
			name = "/"
		} else {
			name = path.Base(name)
			if name == "." && a == "" {
				name = ""
			}
		}
		if suffix != "" && name != suffix {
			name = strings.TrimSuffix(name, suffix)
		}
		w.WriteString(name + end)
	}
	return c.flush(w, 0)
}

func cmdDirname(c *call) int {
	args := c.args
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		c.errorf("missing operand")
		return 1
	}
	w := bufio.NewWriter(c.stdout)
	for _, a := range args {
		d := a
		if strings.Trim(d, "/") == "" && d != "" {
			d = "/"
		} else {
			d = path.Dir(strings.TrimRight(d, "/"))
		}
		w.WriteString(d + "\n")
	}
	return c.flush(w, 0)
}
